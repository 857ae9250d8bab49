"""Commands over the thread protocol: post, claims."""

from __future__ import annotations

import os

import click

from ..base.kinds import POSTABLE_KINDS
from ..base.models import Session
from ..base.text import ago
from ..domain import claims as claims_mod
from ..store import Store
from ..usecases import actions
from .app import cli
from .output import CONTEXT_SETTINGS, emit, json_option, table, with_store


@cli.command(context_settings=CONTEXT_SETTINGS)
@click.argument("task_id", type=int)
@click.argument("text")
@click.option(
    "--kind",
    default="note",
    show_default=True,
    type=click.Choice([k.value for k in POSTABLE_KINDS]),
)
@click.option(
    "--to", default=None, help="A handle, session id, agent kind (claude/codex/human) or any."
)
@click.option(
    "--reply-to", "in_reply_to", type=int, default=None, help="The message this replies to."
)
@click.option("--urgent", is_flag=True, help="Deliver mid-turn instead of at the next prompt.")
@click.option(
    "--as", "as_name", default=None, help="Your name in the thread (default: your login)."
)
@json_option
@with_store
def post(
    store: Store,
    task_id: int,
    text: str,
    kind: str,
    to: str | None,
    in_reply_to: int | None,
    urgent: bool,
    as_name: str | None,
    as_json: bool,
) -> None:
    """Post TEXT to task TASK_ID as a human participant."""
    me = None

    def act(human: Session) -> actions.Outcome:
        nonlocal me
        me = human
        return actions.post(
            store,
            human,
            text,
            kind=kind,
            task_id=task_id,
            to=to,
            in_reply_to=in_reply_to,
            urgent=urgent,
        )

    posted = actions.as_human(store, as_name, os.getcwd(), act)
    assert me is not None

    def render() -> str:
        if posted.message:
            return posted.message
        who = (
            ", ".join(
                f"{r['handle']} ({r['state']}{', ' + r['wake'] if r.get('wake') else ''})"
                for r in posted.recipients
            )
            or "nobody else yet"
        )
        return (
            f"Posted {posted.kind} #{posted.id} to task {posted.task_id} as {me.handle};"
            f" recipients: {who}."
        )

    emit(as_json, posted, render)


@cli.command(context_settings=CONTEXT_SETTINGS)
@click.argument("item_id", type=int)
@click.option("--as", "as_name", default=None, help="Your name (default: your login).")
@json_option
@with_store
def withdraw(store: Store, item_id: int, as_name: str | None, as_json: bool) -> None:
    """Withdraw your own pending question or handoff ITEM_ID."""
    done = actions.as_human(
        store, as_name, os.getcwd(), lambda me: actions.withdraw(store, me, item_id)
    )
    emit(as_json, done, lambda: f"Withdrew #{item_id} (message #{done.id}).")


@cli.command(context_settings=CONTEXT_SETTINGS)
@click.argument("blocker_id", type=int)
@click.argument("note", required=False)
@click.option("--as", "as_name", default=None, help="Your name (default: your login).")
@json_option
@with_store
def resolve(
    store: Store, blocker_id: int, note: str | None, as_name: str | None, as_json: bool
) -> None:
    """Mark the open blocker BLOCKER_ID resolved, with an optional NOTE."""
    done = actions.as_human(
        store,
        as_name,
        os.getcwd(),
        lambda me: actions.resolve_blocker(store, me, blocker_id, note),
    )
    emit(as_json, done, lambda: f"Resolved blocker #{blocker_id} (message #{done.id}).")


@cli.command(context_settings=CONTEXT_SETTINGS)
@json_option
@with_store
def claims(store: Store, as_json: bool) -> None:
    """List claims: live, stale (holder quiet >30m) and expired-but-unreleased."""
    found = claims_mod.list_live(store)

    def render() -> str:
        if not found:
            return "No claims. Agents claim files with the claim_file tool or by editing them."
        now = store.now()
        rows = [
            [
                c["pattern"],
                c["holder"],
                c["who"] or "-",
                c["branch"] or "-",
                c["state"],
                ago(c["since"], now),
                f"{max(0, round((c['expires_at'] - now) / 60))}m",
            ]
            for c in found
        ]
        shown = table(rows, ["PATH", "HOLDER", "WHO", "BRANCH", "STATE", "SINCE", "EXPIRES IN"])
        return shown + (f"\n{more}" if more else "")

    more = ""
    if len(found) >= claims_mod.LIST_LIMIT:
        total = claims_mod.count_unreleased(store)
        if total > len(found):
            more = f"Showing {len(found):,} of {total:,} claims (ordered by repository and path)."
    emit(as_json, found, render)
    if more and as_json:
        click.echo(more, err=True)
