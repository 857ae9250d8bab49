"""``colony-tasks viewer``: the local web dashboard."""

from __future__ import annotations

import os

import click

from ..store import open_default
from .app import cli
from .output import CONTEXT_SETTINGS


@cli.command("viewer", context_settings=CONTEXT_SETTINGS)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port", default=37777, show_default=True, type=click.IntRange(0, 65535), help="0: any."
)
@click.option("--open", "open_browser", is_flag=True, help="Open the dashboard in a browser.")
@click.option(
    "--as", "as_name", default=None, help="Your name when you post (default: your login)."
)
def viewer_command(host: str, port: int, open_browser: bool, as_name: str | None) -> None:
    """Serve the web dashboard: lanes, threads, chains, claims, sessions, search.

    Listens on loopback by default. The printed URL carries a token that is new on every run;
    every page and request needs it, reads included (the pages live under /<token>/: no
    cookie, which a browser sends to every port of 127.0.0.1).
    """
    # Imported here, not at the top: Starlette, uvicorn and Jinja2 cost ~0.3 s to import, and
    # every other command must stay fast.
    from ..viewer import create_app
    from ..viewer import server as server_mod
    from ..viewer.security import new_token

    try:
        sock = server_mod.bind(host, port)
    except OSError as error:
        raise click.ClickException(
            f"Cannot listen on {host}:{port} ({error.strerror or error}); pass another --port."
        ) from None
    token = new_token()
    url = server_mod.url_for(sock, token)
    store = open_default()
    try:
        app = create_app(
            store,
            token,
            human_name=as_name,
            cwd=os.getcwd(),
            allowed_hosts=server_mod.allowed_hosts(host),
        )
        server_mod.warn_if_exposed(host)
        click.echo(f"colony-tasks viewer: {url}")
        click.echo("Open that address: every page, reads included, needs its token (new each run).")
        click.echo("Press Ctrl+C to stop.")
        server_mod.serve(app, sock, url, open_browser=open_browser)
    finally:
        store.close()
        sock.close()
