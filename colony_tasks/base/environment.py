"""What went wrong with this machine's setup, in one sentence with the next step.

A command fails for two kinds of reasons: the core refused it (a named
:class:`~colony_tasks.base.errors.ColonyError`, rendered by each front end), or the environment
cannot support it — the database file is damaged, ``COLONY_TASKS_HOME`` is a file, the team
store is away, the ``[team]`` extra is not installed. :func:`explain` turns the second kind
into the sentence a user can act on, for every front end and for ``doctor``; an error it does
not recognise is a bug and keeps its traceback.
"""

from __future__ import annotations

import os
import sqlite3

from . import backend, paths
from .errors import StoreUnavailable

#: How to get the PostgreSQL driver: reinstall with the extra from the checkout or wheel
#: (colony-tasks is not on a package index).
TEAM_EXTRA_STEP = (
    "install the [team] extra: from the colony-tasks checkout run"
    " `pipx install --force '.[team]'` (or `uv tool install --force '.[team]'`,"
    " or `pip install '.[team]'` in its virtualenv)"
)


def damaged_database(path: str, error: BaseException) -> str:
    """The sentence for a store file SQLite cannot read (shared with ``doctor``)."""
    return (
        f"{path} cannot be opened as a SQLite database ({error}). Hooks keep failing open and"
        " log it; move the file aside (it is kept for inspection) and a new one is created on"
        " the next event."
    )


def home_is_a_file(folder: str) -> str:
    return (
        f"COLONY_TASKS_HOME is {folder}, which is a file, not a folder: point it at a folder"
        " (created if missing) or unset it to use ~/.colony-tasks."
    )


def missing_driver() -> str:
    return f"The team store needs the PostgreSQL driver pg8000, which is not installed: {TEAM_EXTRA_STEP}."


def explain(error: BaseException) -> str | None:
    """One line with the next step for an error the environment caused, or None (a bug)."""
    folder = paths.home()
    broken_home = os.path.exists(folder) and not os.path.isdir(folder)
    if isinstance(error, OSError | sqlite3.Error) and broken_home:
        return home_is_a_file(folder)
    if isinstance(error, ModuleNotFoundError) and (error.name or "").split(".")[0] == "pg8000":
        return missing_driver()
    if isinstance(error, StoreUnavailable):
        return (
            f"{str(error).rstrip('.')}. Start the server or fix the URL"
            " (COLONY_TASKS_DATABASE_URL or settings.json's store.url). Hooks keep working:"
            " events wait in this machine's outbox until the store is reachable."
        )
    if isinstance(error, sqlite3.OperationalError) and "locked" in str(error):
        return (
            f"{paths.db_path()} stayed locked by another process ({error}): try again,"
            " and see `colony-tasks sessions` for what is writing."
        )
    if isinstance(error, sqlite3.DatabaseError) and backend.store_url() is None:
        return damaged_database(paths.db_path(), error)
    if isinstance(error, PermissionError):
        return (
            f"{error.filename or folder} cannot be used ({error.strerror}): give your user"
            " access to it, or point COLONY_TASKS_HOME at a folder of your own."
        )
    return None
