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

Anything that goes wrong (no store yet, a store that cannot be opened, git missing) lets the
commit through: the front end fails open.
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

MAX_FILES = 10
BYPASS = "git commit --no-verify"


class Verdict(Record):
    """What the guard says: ``message`` to print (None: nothing), ``block`` the commit."""

    block: bool = False
    message: str | None = None


def check_commit(
    store: Store, cwd: str, staged: Sequence[str], pids: Sequence[int] = ()
) -> Verdict:
    """The guard's verdict on a commit of the repository-relative ``staged`` paths made in
    ``cwd`` by the process whose ancestors are ``pids``."""
    info = lanes.resolve(cwd, by_remote=store.backend != "sqlite")
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
    block = settings.get("git_guard", "mode") == "block"
    lines.append(
        f"Ask the holder first (colony-tasks post, or ask_question), or commit anyway: {BYPASS}"
    )
    if block:
        lines.append("The commit was stopped (git_guard.mode is block in settings.json).")
    return Verdict(block, "\n".join(lines))
