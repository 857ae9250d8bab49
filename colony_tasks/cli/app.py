"""The ``colony-tasks`` click group and its error translation."""

from __future__ import annotations

import click

from .. import __version__
from ..errors import ColonyError, describe
from .output import CONTEXT_SETTINGS, STEP_WORDING


class ColonyGroup(click.Group):
    """Turns the core's named errors into one-sentence CLI errors (no tracebacks)."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except ColonyError as error:
            raise click.ClickException(describe(error, STEP_WORDING)) from None


@click.group(cls=ColonyGroup, context_settings=CONTEXT_SETTINGS)
@click.version_option(__version__, "--version", prog_name="colony-tasks")
def cli() -> None:
    """A shared task thread per repository+branch for Claude Code and Codex sessions.

    Data lives under COLONY_TASKS_HOME (default ~/.colony-tasks).
    """
