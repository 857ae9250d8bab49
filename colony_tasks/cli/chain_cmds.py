"""``colony-tasks chain``: turn-taking threads, driven by a human at the CLI."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TypeVar

import click

from ..base.kinds import ObsKind
from ..base.models import Session
from ..base.text import iso, one_line
from ..render.lines import item_line
from ..store import Store
from ..usecases import actions
from .app import cli
from .output import CONTEXT_SETTINGS, emit, json_option, with_store

AS_OPTION = click.option(
    "--as", "as_name", default=None, help="Your name in the chain (default: your login)."
)

T = TypeVar("T")


def _as_me(store: Store, as_name: str | None, act: Callable[[Session], T]) -> T:
    """Run ``act`` as the human ``--as`` names; nothing stays behind when it is refused."""
    return actions.as_human(store, as_name, os.getcwd(), act)


@cli.group(invoke_without_command=True, context_settings=CONTEXT_SETTINGS)
@click.pass_context
def chain(ctx: click.Context) -> None:
    """Chains: one speaker at a time, a coordinator who passes the turn."""
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help())


@chain.command("create", context_settings=CONTEXT_SETTINGS)
@click.argument("name")
@AS_OPTION
@json_option
@with_store
def chain_create(store: Store, name: str, as_name: str | None, as_json: bool) -> None:
    """Create a chain that you coordinate (you hold the first turn)."""
    chain = _as_me(store, as_name, lambda me: actions.chain_create(store, me, name))
    emit(
        as_json,
        chain,
        lambda: f"Created chain {chain.chain_id} “{one_line(chain.title)}”; you hold the turn.",
    )


@chain.command("add", context_settings=CONTEXT_SETTINGS)
@click.argument("chain_id", type=int)
@click.argument("participant")
@click.argument("prompt")
@AS_OPTION
@json_option
@with_store
def chain_add(
    store: Store, chain_id: int, participant: str, prompt: str, as_name: str | None, as_json: bool
) -> None:
    """Add PARTICIPANT (a handle or session id) and give it the turn with PROMPT."""
    posted = _as_me(
        store, as_name, lambda me: actions.chain_add(store, me, chain_id, participant, prompt)
    )
    emit(
        as_json,
        posted,
        lambda: (
            f"Added {posted.to} to chain {chain_id} and gave it the turn (message #{posted.id})."
        ),
    )


@chain.command("pass", context_settings=CONTEXT_SETTINGS)
@click.argument("chain_id", type=int)
@click.argument("to")
@click.argument("prompt")
@AS_OPTION
@json_option
@with_store
def chain_pass(
    store: Store, chain_id: int, to: str, prompt: str, as_name: str | None, as_json: bool
) -> None:
    """Give the turn to TO with PROMPT."""
    posted = _as_me(store, as_name, lambda me: actions.chain_pass(store, me, chain_id, to, prompt))
    emit(as_json, posted, lambda: f"Passed the turn of chain {chain_id} to {posted.to or 'you'}.")


@chain.command("say", context_settings=CONTEXT_SETTINGS)
@click.argument("chain_id", type=int)
@click.argument("content")
@AS_OPTION
@json_option
@with_store
def chain_say(
    store: Store, chain_id: int, content: str, as_name: str | None, as_json: bool
) -> None:
    """Post CONTENT to the chain (only while you hold the turn)."""
    posted = _as_me(store, as_name, lambda me: actions.chain_say(store, me, chain_id, content))
    emit(as_json, posted, lambda: f"Posted #{posted.id} to chain {chain_id}.")


@chain.command("close", context_settings=CONTEXT_SETTINGS)
@click.argument("chain_id", type=int)
@AS_OPTION
@json_option
@with_store
def chain_close(store: Store, chain_id: int, as_name: str | None, as_json: bool) -> None:
    """Complete the chain: no more posts; the history stays readable."""
    chain = _as_me(store, as_name, lambda me: actions.chain_close(store, me, chain_id))
    emit(as_json, chain, lambda: f"Chain {chain.chain_id} is {chain.status}.")


@chain.command("show", context_settings=CONTEXT_SETTINGS)
@click.argument("chain_id", type=int)
@json_option
@with_store
def chain_show(store: Store, chain_id: int, as_json: bool) -> None:
    """The chain's full history with turn numbers, and whose turn it is."""
    chain, items = actions.chain_show(store, chain_id)
    data = {"chain": chain, "history": items}

    def render() -> str:
        lines = [
            f"Chain {chain.chain_id}: {one_line(chain.title)} [{chain.status}]",
            f"Coordinator: {one_line(chain.coordinator)};"
            f" turn holder: {one_line(chain.turn_holder) or '—'}",
            "",
        ]
        for obs in items:
            bar = "━━ " if obs.kind == ObsKind.TURN else "   "
            lines.append(f"{iso(obs.created_at)} {bar}[turn {obs.turn}] {item_line(obs)}")
        return "\n".join(lines)

    emit(as_json, data, render)
