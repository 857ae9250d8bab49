"""``colony-tasks chain``: turn-taking threads, driven by a human at the CLI."""

from __future__ import annotations

import os

import click

from .. import chains
from .. import sessions as sessions_mod
from ..render import item_line
from ..store import Store
from ..timefmt import iso
from .app import cli
from .output import CONTEXT_SETTINGS, emit, json_option, with_store

AS_OPTION = click.option(
    "--as", "as_name", default=None, help="Your name in the chain (default: your login)."
)


def _me(store: Store, as_name: str | None):
    return sessions_mod.human_session(store, as_name, os.getcwd())


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
    task = chains.create(store, _me(store, as_name), name)
    emit(as_json, task, lambda: f"Created chain {task.id} “{task.title}”; you hold the turn.")


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
    posted = chains.add(store, _me(store, as_name), chain_id, participant, prompt)
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
    posted = chains.pass_turn(store, _me(store, as_name), chain_id, to, prompt)
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
    posted = chains.say(store, _me(store, as_name), chain_id, content)
    emit(as_json, posted, lambda: f"Posted #{posted.id} to chain {chain_id}.")


@chain.command("close", context_settings=CONTEXT_SETTINGS)
@click.argument("chain_id", type=int)
@AS_OPTION
@json_option
@with_store
def chain_close(store: Store, chain_id: int, as_name: str | None, as_json: bool) -> None:
    """Complete the chain: no more posts; the history stays readable."""
    task = chains.close(store, _me(store, as_name), chain_id)
    emit(as_json, task, lambda: f"Chain {task.id} is {task.status}.")


@chain.command("show", context_settings=CONTEXT_SETTINGS)
@click.argument("chain_id", type=int)
@json_option
@with_store
def chain_show(store: Store, chain_id: int, as_json: bool) -> None:
    """The chain's full history with turn numbers, and whose turn it is."""
    task = chains.get_chain(store, chain_id)
    items = chains.history(store, chain_id)
    holder = store.get_session(task.turn_holder) if task.turn_holder else None
    coordinator = store.get_session(task.coordinator) if task.coordinator else None
    data = {"chain": task, "coordinator": coordinator, "turn_holder": holder, "history": items}

    def render() -> str:
        lines = [
            f"Chain {task.id}: {task.title} [{task.status}]",
            f"Coordinator: {coordinator.handle if coordinator else '?'}; turn holder: "
            f"{holder.handle if holder and task.status == 'open' else '—'}",
            "",
        ]
        for obs in items:
            bar = "━━ " if obs.kind == "turn" else "   "
            lines.append(f"{iso(obs.created_at)} {bar}[turn {obs.turn}] {item_line(obs)}")
        return "\n".join(lines)

    emit(as_json, data, render)
