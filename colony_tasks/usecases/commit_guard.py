"""The opt-in git pre-commit guard's rule: a commit that touches files another live session
of the lane holds.

``colony-tasks install --git-guard`` puts a small pre-commit hook in the repository's git
hooks folder (never in the work tree); it runs ``colony-tasks guard pre-commit``, which asks
:func:`check_commit`:

- no lane for this repository and branch (no agent ever worked here): nothing;
- no staged file held by another live session of the lane (a claim by the committing agent's
  own session, found by process ancestry, does not count; a stale or cut-off holder does not
  either): nothing;
- otherwise a warning naming each file, its holder and the bypass (``git commit
  --no-verify``); with ``git_guard.mode = block`` in settings.json the commit is stopped.

When the guard cannot check (no store, a store that cannot be opened or read, locked, of
another schema, an unreachable team store, git failing), warn mode lets the commit through
(one line: ``skipped``), while block mode stops it with one line that says what is wrong and
how to get past (:func:`cannot_check`): a broken store must not turn block mode off. A
settings.json that is not a JSON object stops the commit too: the mode cannot be read, so
block mode cannot be ruled out (:func:`block_mode`).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..base import lanes, settings
from ..base.globs import matches
from ..base.models import Record
from ..base.text import ago
from ..domain import claims as claims_mod
from ..domain import sessions
from ..store import Store
from ..store.base import LATEST

MAX_FILES = 10
BYPASS = "git commit --no-verify"


class Verdict(Record):
    """What the guard says: ``message`` to print (None: nothing), ``block`` the commit."""

    block: bool = False
    message: str | None = None


class CannotCheck(Exception):
    """The guard cannot check this commit; the message says why, in a few words."""


def block_mode() -> bool:
    """Whether ``git_guard.mode`` is block; raises :class:`CannotCheck` when settings.json
    exists but is not a JSON object (the mode is unknown)."""
    try:
        return settings.load_checked()["git_guard"].get("mode") == "block"
    except settings.Unreadable as error:
        raise CannotCheck(
            f"{error}, so the guard cannot tell whether it is in block mode"
        ) from None


def check_schema(path: str, version: int) -> None:
    """Block mode's check of the SQLite store at ``path`` before it is opened (opening
    migrates): raises :class:`CannotCheck` for a file without our schema (empty, another
    application's), which would otherwise become an empty store that holds nothing, or of a
    newer colony-tasks. An older schema is fine: opening brings it up to date."""
    if version == 0:
        raise CannotCheck(f"{path} is not a colony-tasks store (no schema)")
    if version > LATEST:
        raise CannotCheck(
            f"{path} was written by a newer colony-tasks (schema {version}, this one reads"
            f" up to {LATEST}): upgrade colony-tasks"
        )


def cannot_check(reason: str, *, block: bool) -> Verdict:
    """The verdict when the commit cannot be checked: warn mode lets it through with one
    line; block mode stops it, saying why and how to get past."""
    reason = " ".join(reason.split())[:300]
    if not block:
        return Verdict(False, f"colony-tasks guard: skipped ({reason}).")
    return Verdict(
        True,
        f"colony-tasks guard: the commit was stopped: {reason}. In block mode the guard stops"
        f" a commit it cannot check: fix that (`colony-tasks doctor` helps) or commit with"
        f" `{BYPASS}`.",
    )


def check_commit(
    store: Store, cwd: str, staged: Sequence[str], pids: Sequence[int] = (), *, block: bool
) -> Verdict:
    """The guard's verdict on a commit of the repository-relative ``staged`` paths made in
    ``cwd`` by the process whose ancestors are ``pids``; ``block``: stop it when it touches
    a file another session holds (:func:`block_mode`)."""
    info = lanes.resolve(cwd)
    if not info.is_git or not staged:
        return Verdict()
    lane = store.find_lane(info.repo_id, info.branch)
    if lane is None:
        return Verdict()
    me = sessions.session_for_process(store, list(pids)) if pids else None
    now = store.now()
    rows = store.live_claims_matching(
        lane.repo_id, list(staged), exclude_session=me.id if me else None
    )
    held: list[tuple[str, dict]] = []
    for path in staged:
        for row in rows:
            if (
                row["lane_id"] == lane.id
                and matches(row["pattern"], path, row["regex"])
                and not claims_mod.quiet(row, now)
            ):
                held.append((path, row))
                break
    if not held:
        return Verdict()
    lines = ["colony-tasks: this commit touches files another agent session holds:"]
    for path, row in held[:MAX_FILES]:
        lines.append(f"  {path} — held by {row['handle']} (since {ago(row['created_at'], now)})")
    if len(held) > MAX_FILES:
        lines.append(f"  … and {len(held) - MAX_FILES} more")
    lines.append(
        f"Ask the holder first (colony-tasks post, or ask_question), or commit anyway: {BYPASS}"
    )
    if block:
        lines.append("The commit was stopped (git_guard.mode is block in settings.json).")
    return Verdict(block, "\n".join(lines))
