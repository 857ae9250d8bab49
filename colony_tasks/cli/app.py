"""The ``colony-tasks`` click group and its error translation."""

from __future__ import annotations

import importlib

import click

from .. import __version__
from ..base import environment
from ..base.errors import ColonyError, describe
from .output import CONTEXT_SETTINGS, STEP_WORDING

# Which module registers each command: a command's module is imported when it is run (or all
# of them for --help), so `colony-tasks search` does not pay for the installer, the doctor,
# the viewer and the rest (tests/cli/test_cli.py keeps this table equal to what the modules
# register).
COMMANDS = {
    "chain": "chain_cmds",
    "status": "core_cmds",
    "sessions": "core_cmds",
    "tasks": "core_cmds",
    "doctor": "doctor_cmd",
    "index": "index_cmd",
    "install": "install_cmds",
    "uninstall": "install_cmds",
    "mcp": "mcp_cmd",
    "plan": "plan_cmds",
    "search": "search_cmds",
    "embed": "search_cmds",
    "guard": "guard_cmd",
    "migrate": "team_cmds",
    "relay": "team_cmds",
    "post": "thread_cmds",
    "withdraw": "thread_cmds",
    "resolve": "thread_cmds",
    "claims": "thread_cmds",
    "conflicts": "conflicts_cmd",
    "viewer": "viewer_cmd",
}


class ColonyGroup(click.Group):
    """Loads each command's module when the command is asked for, and turns the core's named
    errors and a broken environment (:mod:`colony_tasks.base.environment`) into one-line CLI
    errors with the next step (no tracebacks)."""

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module = COMMANDS.get(cmd_name)
        if module is not None and cmd_name not in self.commands:
            importlib.import_module(f"{__package__}.{module}")
        return super().get_command(ctx, cmd_name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        for module in sorted(set(COMMANDS.values())):
            importlib.import_module(f"{__package__}.{module}")
        return super().list_commands(ctx)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except ColonyError as error:
            raise click.ClickException(describe(error, STEP_WORDING)) from None
        except click.ClickException:
            raise
        except Exception as error:
            # The environment, not the command, failed (a damaged database, an unreachable
            # team store, ...): one line with the next step. Anything else is a bug: re-raised.
            message = environment.explain(error)
            if message is None:
                raise
            raise click.ClickException(message) from None


@click.group(cls=ColonyGroup, context_settings=CONTEXT_SETTINGS)
@click.version_option(__version__, "--version", prog_name="colony-tasks")
def cli() -> None:
    """A shared task thread per repository+branch for Claude Code and Codex sessions.

    Data lives under COLONY_TASKS_HOME (default ~/.colony-tasks).
    """
