"""``colony-tasks guard pre-commit``: what the opt-in git pre-commit hook runs."""

from __future__ import annotations

import os
import subprocess
import sys

import click

from .app import cli
from .output import CONTEXT_SETTINGS


def _staged() -> list[str]:
    out = subprocess.run(
        ["git", "diff", "--cached", "--name-only", "-z", "--no-renames"],
        capture_output=True,
        timeout=30,
        check=True,
    ).stdout
    return [p for p in out.decode("utf-8", errors="replace").split("\0") if p]


@cli.command(context_settings=CONTEXT_SETTINGS)
@click.argument("hook", type=click.Choice(["pre-commit"]))
def guard(hook: str) -> None:
    """Warn (or, with git_guard.mode = block, refuse) when a commit touches files another
    live agent session of this repository's lane holds. Installed per repository by
    `colony-tasks install --git-guard`; fails open (any error lets the commit through)."""
    from ..base import backend, paths, procs
    from ..store import open_default
    from ..usecases import commit_guard as gitguard

    try:
        if not backend.store_url() and not os.path.exists(paths.db_path()):
            return  # no store yet: no agent ever worked here
        staged = _staged()
        store = open_default()
        try:
            verdict = gitguard.check_commit(store, os.getcwd(), staged, procs.ancestors())
        finally:
            store.close()
    except Exception as error:  # noqa: BLE001 - the guard fails open, always
        click.echo(f"colony-tasks guard: skipped ({type(error).__name__}).", err=True)
        return
    if verdict.message:
        click.echo(verdict.message, err=True)
    if verdict.block:
        sys.exit(1)
