"""``colony-tasks guard pre-commit``: what the opt-in git pre-commit hook runs."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import TYPE_CHECKING

import click

from .app import cli
from .output import CONTEXT_SETTINGS

if TYPE_CHECKING:
    from ..usecases.commit_guard import Verdict


class _GitFailed(Exception):
    """git could not list the staged files (the cause is the error)."""


def _staged() -> list[str]:
    try:
        out = subprocess.run(
            ["git", "diff", "--cached", "--name-only", "-z", "--no-renames"],
            capture_output=True,
            timeout=30,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError) as error:
        raise _GitFailed(f"{type(error).__name__}: {error}") from error
    return [p for p in out.decode("utf-8", errors="replace").split("\0") if p]


@cli.command(context_settings=CONTEXT_SETTINGS)
@click.argument("hook", type=click.Choice(["pre-commit"]))
def guard(hook: str) -> None:
    """Warn (or, with git_guard.mode = block, refuse) when a commit touches files another
    live agent session of this repository's lane holds. Installed per repository by
    `colony-tasks install --git-guard`. When it cannot check (no store, a broken or locked
    store, an unreadable settings.json), warn mode lets the commit through and block mode
    stops it, saying why."""
    from ..usecases import commit_guard as gitguard

    try:
        block = gitguard.block_mode()
    except gitguard.CannotCheck as unknown:
        verdict = gitguard.cannot_check(str(unknown), block=True)
    else:
        try:
            verdict = _check(block)
        except Exception as error:  # noqa: BLE001 - the mode decides: through, or stopped
            if block:
                verdict = gitguard.cannot_check(_reason(error), block=True)
            else:
                cause = error.__cause__ if isinstance(error, _GitFailed) else error
                verdict = gitguard.cannot_check(type(cause).__name__, block=False)
    if verdict.message:
        click.echo(verdict.message, err=True)
    if verdict.block:
        sys.exit(1)


def _check(block: bool) -> Verdict:
    from ..base import backend, paths, procs
    from ..store import open_default
    from ..store.base import schema_version_at
    from ..usecases import commit_guard as gitguard

    if not backend.store_url():
        db = paths.db_path()
        if not os.path.exists(db):
            if block:
                raise gitguard.CannotCheck(f"there is no store at {db}")
            return gitguard.Verdict()  # no store yet: no agent ever worked here
        if block:  # before opening it, which would make a store of an empty or foreign file
            gitguard.check_schema(db, schema_version_at(db))
    staged = _staged()
    store = open_default()
    try:
        return gitguard.check_commit(store, os.getcwd(), staged, procs.ancestors(), block=block)
    finally:
        store.close()


def _reason(error: Exception) -> str:
    """What went wrong, in one line (block mode says it)."""
    from ..base import backend, paths
    from ..usecases import commit_guard as gitguard

    if isinstance(error, gitguard.CannotCheck):
        return str(error)
    if isinstance(error, _GitFailed):
        return f"git could not list the staged files ({error})"
    url = backend.store_url()
    where = f"the team store {backend.redact_url(url)}" if url else f"the store {paths.db_path()}"
    return f"{where} cannot be read ({type(error).__name__}: {error})"
