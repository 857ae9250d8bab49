"""Who is calling: the session a tool call acts as, by the core's rule
(:mod:`colony_tasks.domain.identity`) applied to this server's process ancestry and the
session id the agent put in its environment (Claude Code's ``CLAUDE_CODE_SESSION_ID``), which
counts only for a session whose agent process is one of those ancestors.

The ancestry is read once (it does not change while the server lives; off Linux it costs a
``ps`` call per step); the session is resolved on every call, because the agent may /clear
and continue in the same process under a new session id.
"""

from __future__ import annotations

import os

from colony_tasks.base import procs
from colony_tasks.base.models import Session
from colony_tasks.domain import identity
from colony_tasks.store import Store

_ANCESTRY: list[list[int]] = []
SESSION_ENV = "CLAUDE_CODE_SESSION_ID"


def ancestry() -> list[int]:
    if not _ANCESTRY:
        _ANCESTRY.append(procs.ancestors())
    return _ANCESTRY[0]


def caller(store: Store, session_id: str | None) -> Session:
    """The session this call acts as; NotFound/NotAllowed with the next step otherwise."""
    return identity.agent_caller(store, session_id, ancestry(), env_session())


def maybe_caller(store: Store, session_id: str | None) -> Session | None:
    """Like :func:`caller` for tools that can work without one: None when undetermined."""
    return identity.maybe_agent_caller(store, session_id, ancestry(), env_session())


def env_session() -> str | None:
    """The session id the agent that started this server gave it, if any (a hint among the
    sessions of its ancestors, never a proof: whoever starts the server writes it)."""
    return os.environ.get(SESSION_ENV) or None
