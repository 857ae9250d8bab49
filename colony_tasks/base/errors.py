"""Small named exceptions raised by the core.

Each message is a sentence of facts that names the object. Where there is a next step, the
error carries it as a *step*: an action name and its arguments (``("withdraw", {"item_id":
12})``), not as wording, because the wording depends on where the caller is — the CLI names a
command, the MCP server a tool. Front ends render both with :func:`describe` and their own
table of wordings (``cli/output.py``, ``mcp_server/toolkit.py``); hooks only log.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# Every step the core names; each front end's wording table covers all of them (tested).
STEPS = (
    "list_tasks",
    "list_sessions",
    "show_task",
    "withdraw",
    "chain_add",
    "chain_create",
    "embed",
    "plan_show",
    "take_next",
)


class ColonyError(Exception):
    """Base class for every error the core raises on purpose."""

    def __init__(self, message: str, step: str | None = None, **args: Any) -> None:
        super().__init__(message)
        self.step = step
        self.step_args = args


class NotFound(ColonyError):
    """A task, session, message or claim that does not exist."""


class InvalidInput(ColonyError):
    """Arguments the core refuses (empty text, a path outside the repository, ...)."""


class Conflict(ColonyError):
    """The action lost a race or the object is not in a state that allows it."""


class NotAllowed(ColonyError):
    """The session may not do this (not the addressee, not the turn holder, ...)."""


class Misconfigured(ColonyError):
    """The configuration names something colony-tasks cannot use (a store URL of another
    database, a misspelt ``sslmode``); the message says what to change."""


class StoreUnavailable(Exception):
    """The team's PostgreSQL server cannot be reached (the message never holds the password).

    Not a :class:`ColonyError`: it is a passing condition of the network, which the relay
    retries, not a refusal of the core."""


class Contended(Exception):
    """A relayed event's team-store transaction lost a lock race: two machines' batches took
    the same tasks' locks in turn (the server undid one), or a task's lock stayed held past a
    statement's time (see :meth:`colony_tasks.store.base.StoreBase.transaction`). It is rolled
    back, and its caller runs it again under the whole store's lock. Not a
    :class:`ColonyError`: nothing was refused."""


class StoreBusy(StoreUnavailable):
    """The team store's write lock stayed held by another connection (a member's session
    that holds it open, or a long maintenance run) for longer than a caller waits; the
    message names the holder. Passing, like an unreachable server: try again."""


def describe(error: ColonyError, wording: Mapping[str, str]) -> str:
    """The error's sentence, then its next step in the caller's own terms."""
    text = str(error)
    if error.step and error.step in wording:
        text = f"{text} {wording[error.step].format(**error.step_args)}"
    return text
