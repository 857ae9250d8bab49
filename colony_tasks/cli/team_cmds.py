"""The store's commands: ``migrate`` and ``relay`` (status, stop)."""

from __future__ import annotations

import click

from ..base import backend, environment, paths
from ..base.errors import ColonyError
from ..relay import status as relay_status
from ..store import Store
from ..store import open_store as open_store_at
from .app import cli
from .output import CONTEXT_SETTINGS, emit, json_option


@cli.command(context_settings=CONTEXT_SETTINGS)
@json_option
def migrate(as_json: bool) -> None:
    """Apply pending schema migrations to the configured store (SQLite or the team's
    PostgreSQL). Every front end also migrates on first use; this does it on purpose."""
    url = backend.store_url()
    address = url or paths.db_path()
    if not url:
        paths.ensure_home()
    try:
        store: Store = open_store_at(address, migrate=False) if url else open_store_at(address)
    except Exception as error:  # noqa: BLE001 - the message is redacted below
        explained = None if isinstance(error, ColonyError) else environment.explain(error)
        raise click.ClickException(backend.redact_url(explained or str(error))) from None
    try:
        applied = store.migrate()
        version = store.schema_version()
    finally:
        store.close()
    where = backend.redact_url(address)
    emit(
        as_json,
        {"store": where, "backend": store.backend, "applied": applied, "version": version},
        lambda: (
            f"{where}: applied {', '.join(map(str, applied)) or 'nothing'};"
            f" schema version {version}."
        ),
    )


@cli.group(context_settings=CONTEXT_SETTINGS, invoke_without_command=True)
@click.pass_context
def relay(ctx: click.Context) -> None:
    """This user's relay, which serves every hook (shows its status by default)."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(status)


@relay.command(context_settings=CONTEXT_SETTINGS)
@json_option
def status(as_json: bool) -> None:
    """The relay process and, in team mode, its outbox (pending and stuck events)."""
    info = relay_status.status(backend.store_url())
    lines = [f"store: {info['store']}", f"relay: {relay_status.relay_detail(info)}"]
    if "outbox" in info:
        lines.append(f"outbox: {info['pending']} pending, {info['stuck']} stuck ({info['outbox']})")
    emit(as_json, info, lambda: "\n".join(lines))


@relay.command(context_settings=CONTEXT_SETTINGS)
def stop() -> None:
    """Stop the relay (hooks start it again on the next agent event; nothing is lost)."""
    if not relay_status.stop(backend.store_url()):
        raise click.ClickException("The relay did not exit within 5 seconds.")
    click.echo("The relay is stopped.")
