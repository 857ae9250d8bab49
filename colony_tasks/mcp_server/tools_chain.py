"""Tools for chains: one speaker at a time, the coordinator passes the turn.

Every rule (who may post, add, pass or close; turn numbering; the loop guard) is in
:mod:`colony_tasks.domain.chains`; these tools only translate arguments and results.
"""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import Context
from pydantic import BaseModel, Field

from colony_tasks.usecases import actions

from . import identity
from . import models as m
from .toolkit import SessionId, store, tool

ChainId = Annotated[int, Field(ge=1)]
Text = Annotated[str, Field(min_length=1)]


class Chain(BaseModel):
    chain_id: int
    title: str
    status: str
    coordinator: str
    turn_holder: str | None = None


@tool()
def chain_create(ctx: Context, name: Text, session_id: SessionId = None) -> Chain:
    """Start a turn-taking chain that you coordinate; you hold the first turn."""
    db = store(ctx)
    return Chain(**actions.chain_create(db, identity.caller(db, session_id), name).to_dict())


@tool()
def chain_pass(
    ctx: Context,
    chain_id: ChainId,
    to: Annotated[str, Field(min_length=1, description="Handle or session id.")],
    prompt: Text,
    session_id: SessionId = None,
) -> m.Posted:
    """Coordinator: give the turn (adding the session if new) with a prompt and the history."""
    db = store(ctx)
    me = identity.caller(db, session_id)
    return m.posted(actions.chain_pass(db, me, chain_id, to, prompt))


@tool()
def chain_say(
    ctx: Context, chain_id: ChainId, content: Text, session_id: SessionId = None
) -> m.Posted:
    """Post to a chain while you hold the turn; the turn then returns to the coordinator."""
    db = store(ctx)
    me = identity.caller(db, session_id)
    return m.posted(actions.chain_say(db, me, chain_id, content))


@tool()
def chain_close(ctx: Context, chain_id: ChainId, session_id: SessionId = None) -> Chain:
    """Coordinator: complete the chain; its history stays readable."""
    db = store(ctx)
    return Chain(**actions.chain_close(db, identity.caller(db, session_id), chain_id).to_dict())


TOOLS = (chain_create, chain_pass, chain_say, chain_close)
