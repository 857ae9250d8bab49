"""``colony-tasks mcp``: the stdio MCP server for Claude Code and Codex."""

from __future__ import annotations

import click

from ..store import open_default
from .app import cli
from .output import CONTEXT_SETTINGS


@cli.command("mcp", context_settings=CONTEXT_SETTINGS)
@click.option(
    "--log-level",
    type=click.Choice(["DEBUG", "INFO", "WARNING", "ERROR"], case_sensitive=False),
    default="WARNING",
    show_default=True,
    help="What the server logs to stderr.",
)
def mcp_command(log_level: str) -> None:
    """Run the MCP server on stdio (stdout is the protocol; logs go to stderr).

    Register it with the agent, e.g. `claude mcp add colony-tasks -- colony-tasks mcp`.
    """
    # Imported here, not at the top: the MCP SDK takes ~0.5 s to import, and every other
    # command must stay fast.
    from colony_tasks.mcp_server.server import serve

    # Open the store once before serving: a broken environment (a damaged file, the team
    # store away) then fails here as one line (see ColonyGroup) instead of a logged traceback.
    open_default().close()
    serve(log_level=log_level.upper())  # type: ignore[arg-type]  # click.Choice checked it
