"""Claims: advisory holds on repo-relative paths or gitignore-style globs, with a TTL.

A claim never blocks by itself; it makes collisions visible before and after they happen.
:func:`conflicts` reports, per path, other active sessions' live claims that match it and, as
softer evidence, their edits of the path in the last 30 minutes. Claims in the same repository
on another branch come back marked ``other_lane`` (a merge-risk notice, not a collision).
Standard library only; glob matching is in :mod:`colony_tasks.base.globs`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ..base import lanes
from ..base.errors import InvalidInput, NotFound
from ..base.globs import glob_regex, is_glob, matches
from ..base.kinds import ObsKind, TaskStatus
from ..base.models import Lane, Record, Session, who_for, who_of
from ..base.redact import redact
from ..base.text import MAX_TEXT_CHARS
from ..store import Store
from . import presence
from .tasks import task_for

DEFAULT_TTL_MINUTES = 60
MAX_NOTE_CHARS = MAX_TEXT_CHARS  # a claim note: the limit of any text an agent writes
AUTO_TTL_MINUTES = 20
AUTO_NOTE = "auto: edited"
STALE_AFTER = presence.QUIET_AFTER
RECENT_EDITS = 30 * 60
MAX_PATH = 4096
# Characters that change how a path displays without showing: C0/C1 controls, bidirectional
# overrides, embeddings and isolates, zero-width characters and the byte-order mark.
_UNSHOWN = frozenset(
    [chr(c) for c in (*range(0x20), *range(0x7F, 0xA0))]
    + list("\u061c\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e")
    + list("\u2060\u2066\u2067\u2068\u2069\ufeff")
)


class Holder(Record):
    """Another session's live claim that matches a path; ``who`` is its developer@machine
    when that is someone else or another machine (:func:`colony_tasks.base.models.who_for`)."""

    claim_id: int
    pattern: str
    handle: str
    session_id: str
    agent: str
    since: float
    expires_at: float
    stale: bool
    other_lane: bool
    branch: str
    note: str = ""
    who: str = ""
    auto: bool = False

    @property
    def live(self) -> bool:
        """Whether this is a real collision: the one rule of a live holder of a path — a
        claim of the same lane, by a session that is not stale (quiet, or cut off)."""
        return not self.other_lane and not self.stale


class RecentEdit(Record):
    """Another session's edit of a path in the last 30 minutes (``who`` as for :class:`Holder`)."""

    observation_id: int
    handle: str
    session_id: str
    at: float
    other_lane: bool
    who: str = ""


class PathConflict(Record):
    """What another session holds or recently did on one path."""

    path: str
    claims: list[Holder]
    recent_edits: list[RecentEdit]

    @property
    def live(self) -> list[Holder]:
        """Same-lane claims by holders who are not stale: real collisions."""
        return [h for h in self.claims if h.live]


class ClaimResult(Record):
    """Claims are always granted; conflicts come back beside the grant."""

    granted: list[dict[str, Any]]
    conflicts: list[PathConflict]


# -- paths ----------------------------------------------------------------------------------


def session_lane(store: Store, session: Session) -> Lane:
    lane = store.get_lane(session.lane_id) if session.lane_id else None
    if lane is None:
        raise NotFound(f"Session {session.handle} has no lane; start it in a repository folder.")
    return lane


def normalize(path: str, *, lane: Lane, cwd: str | None = None) -> str:
    """A repo-relative POSIX path (or glob) for ``path``; rejects paths outside the repository.

    Relative paths are taken from ``cwd`` (default: the lane root). A path inside another
    linked worktree or clone of the same repository is made relative to that working tree.
    """
    if not isinstance(path, str) or not path.strip():
        raise InvalidInput("A path must be a non-empty string.")
    if "\x00" in path:
        raise InvalidInput("A path must not contain NUL bytes.")
    if not _UNSHOWN.isdisjoint(path):
        raise InvalidInput(
            "A path must not contain control, bidirectional or zero-width characters"
            " (they make a path display as another one)."
        )
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput("A path must be valid UTF-8 text.") from None
    if len(path) > MAX_PATH:
        raise InvalidInput(f"A path must be at most {MAX_PATH} characters long.")
    raw = path.strip().replace("\\", "/")
    base = cwd or lane.root
    absolute = raw if os.path.isabs(raw) else os.path.join(base, raw)
    resolved = os.path.realpath(absolute)
    root = os.path.realpath(lane.root)
    relative = _within(resolved, root)
    if relative is None and lane.repo_id != root:
        # Another linked worktree of the same repository?
        probe = resolved
        while probe and not os.path.isdir(probe):
            parent = os.path.dirname(probe)
            if parent == probe:
                break
            probe = parent
        other = lanes.resolve(probe)
        if other.repo_id == lane.repo_id:
            relative = _within(resolved, os.path.realpath(other.root))
    if relative is None:
        raise InvalidInput(
            f"Path {path!r} is outside the repository {lane.root}; claim paths inside it."
        )
    if relative in ("", "."):
        return "**"
    relative = redact(relative)  # a path is stored text too (the store redacts it again: a no-op)
    if relative == ".git" or relative.startswith(".git/"):
        raise InvalidInput(f"Path {path!r} is inside .git; claim working-tree files instead.")
    return relative


def relative_paths(paths: Iterable[str], *, lane: Lane, cwd: str | None = None) -> list[str]:
    """Repo-relative forms of ``paths`` (relative to ``cwd``), once each; paths outside the
    repository are dropped."""
    found = []
    for path in paths:
        try:
            found.append(normalize(path, lane=lane, cwd=cwd))
        except InvalidInput:
            continue
    return list(dict.fromkeys(found))


def _within(path: str, root: str) -> str | None:
    if path == root:
        return ""
    prefix = root.rstrip("/") + "/"
    if path.startswith(prefix):
        return path[len(prefix) :]
    return None


# -- operations -----------------------------------------------------------------------------


def quiet(row: dict[str, Any], now: float) -> bool:
    """A holder is stale when quiet past :data:`STALE_AFTER` or cut off (:mod:`.presence`)."""
    return presence.quiet(row["last_seen_at"], row.get("waiting"), now)


def _holder(row: dict[str, Any], me: Session, now: float) -> Holder:
    return Holder(
        claim_id=row["id"],
        pattern=row["pattern"],
        handle=row["handle"],
        session_id=row["session_id"],
        agent=row["agent"],
        since=row["created_at"],
        expires_at=row["expires_at"],
        stale=quiet(row, now),
        other_lane=row["lane_id"] != me.lane_id,
        branch=row["branch"],
        note=row["note"] or "",
        who=who_for(who_of(row["developer"], row["machine"]), me),
        auto=row["auto"],
    )


def _candidate_index(
    candidates: list[dict[str, Any]],
) -> Callable[[str], list[dict[str, Any]]]:
    """A function giving, for a path, the claims among ``candidates`` that may cover it: literal
    claims on the path or a folder above it, globs whose literal folder prefix is a folder of
    the path, and globs without one. A path is then matched against a few claims, not against
    every glob of the repository."""
    literal: dict[str, list[dict[str, Any]]] = {}
    by_folder: dict[str, list[dict[str, Any]]] = {}
    for c in candidates:
        pattern = c["pattern"]
        if not is_glob(pattern):
            literal.setdefault(pattern.rstrip("/"), []).append(c)
            continue
        body = pattern.lstrip("/")
        anchored = pattern.startswith("/") or "/" in body.rstrip("/")
        head = body[: min((body.index(ch) for ch in "*?[" if ch in body), default=len(body))]
        folder = head[: head.rfind("/") + 1] if anchored and "\\" not in head else ""
        by_folder.setdefault(folder, []).append(c)

    def for_path(path: str) -> list[dict[str, Any]]:
        if is_glob(path):
            return candidates
        parts = path.split("/")
        out = list(by_folder.get("", ()))
        for i in range(1, len(parts) + 1):
            above = "/".join(parts[:i])
            out += literal.get(above, ())
            if i < len(parts):
                out += by_folder.get(above + "/", ())
        return out

    return for_path


def conflicts_for(
    store: Store, session: Session, rel_paths: Sequence[str], lane: Lane
) -> list[PathConflict]:
    """Conflicts for already-normalized paths (only paths that have any)."""
    return _conflicts(store, session, rel_paths, lane, declared_only=False)


def declared_conflicts(
    store: Store, session: Session, rel_paths: Sequence[str], lane: Lane
) -> tuple[PathConflict, ...]:
    """What an edit of already-normalized paths is weighed against besides its regions: the
    claims other sessions asked for (``claim_file``, a plan item's files, a handoff), whole
    files or globs as declared. The claims edits made (``auto``) and recent edits are not:
    what an edit changed is weighed by its regions (:mod:`.regions`)."""
    return tuple(_conflicts(store, session, rel_paths, lane, declared_only=True))


def _conflicts(
    store: Store, session: Session, rel_paths: Sequence[str], lane: Lane, *, declared_only: bool
) -> list[PathConflict]:
    if not rel_paths:
        return []
    now = store.now()
    candidates = store.live_claims_matching(
        lane.repo_id, rel_paths, exclude_session=session.id, declared_only=declared_only
    )
    literal = [p for p in rel_paths if not is_glob(p)]
    edits = (
        []
        if declared_only
        else store.recent_edits(
            lane.repo_id, literal, now - RECENT_EDITS, exclude_session=session.id
        )
    )
    for_path = _candidate_index(candidates)
    edits_by_path: dict[str, list[dict[str, Any]]] = {}
    for edit in edits:
        edits_by_path.setdefault(edit["path"], []).append(edit)
    found = []
    for path in rel_paths:
        holders = [
            _holder(c, session, now)
            for c in for_path(path)
            if matches(c["pattern"], path, c["regex"])
        ]
        recent = []
        seen: set[str] = set()
        for edit in edits_by_path.get(path, ()):
            if edit["session_id"] not in seen:
                seen.add(edit["session_id"])
                recent.append(
                    RecentEdit(
                        observation_id=edit["id"],
                        handle=edit["handle"],
                        session_id=edit["session_id"],
                        at=edit["created_at"],
                        other_lane=(edit["branch"] or "") != lane.branch,
                        who=who_for(who_of(edit["developer"], edit["machine"]), session),
                    )
                )
        if holders or recent:
            found.append(PathConflict(path=path, claims=holders, recent_edits=recent))
    return found


def live_holders(
    store: Store, session: Session, rel_paths: Sequence[str], lane: Lane
) -> dict[str, list[dict[str, Any]]]:
    """For each of the (normalized) paths, the claim rows of other sessions that hold it live
    (:attr:`Holder.live`), oldest first. Reads only: nothing is written."""
    now = store.now()
    rows = store.live_claims_matching(lane.repo_id, rel_paths, exclude_session=session.id)
    for_path = _candidate_index(rows)
    return {
        path: [
            row
            for row in for_path(path)
            if matches(row["pattern"], path, row["regex"]) and _holder(row, session, now).live
        ]
        for path in rel_paths
    }


def conflicts(
    store: Store, session: Session, paths: Iterable[str], *, cwd: str | None = None
) -> list[PathConflict]:
    """For each path, other active sessions' live claims matching it and their recent edits."""
    lane = session_lane(store, session)
    rel = [normalize(p, lane=lane, cwd=cwd or session.cwd) for p in paths]
    return conflicts_for(store, session, list(dict.fromkeys(rel)), lane)


def grant(
    store: Store,
    session: Session,
    rel_paths: Sequence[str],
    lane: Lane,
    *,
    task_id: int | None,
    ttl_minutes: float = DEFAULT_TTL_MINUTES,
    note: str = "",
) -> list[dict[str, Any]]:
    """Create or renew claims on normalized paths (inside the caller's transaction); the
    claims as shown."""
    with store.transaction():
        ids = _granted(store, session, rel_paths, lane, task_id, float(ttl_minutes) * 60, note)
        return [_public(c) for c in store.get_claims(ids)]


def claim_edited(
    store: Store, session: Session, rel_paths: Sequence[str], lane: Lane, task_id: int | None
) -> None:
    """An edit claims the files it wrote, for :data:`AUTO_TTL_MINUTES` (renewed by every
    edit): an automatic claim, which tells others who is working where but warns nobody
    (what an edit changed is weighed by its regions)."""
    with store.transaction():
        _granted(store, session, rel_paths, lane, task_id, AUTO_TTL_MINUTES * 60, AUTO_NOTE, True)


def _granted(
    store: Store,
    session: Session,
    rel_paths: Sequence[str],
    lane: Lane,
    task_id: int | None,
    ttl: float,
    note: str,
    auto: bool = False,
) -> list[int]:
    ids = []
    for pattern in dict.fromkeys(rel_paths):
        existing = store.live_claim(session.id, lane.repo_id, pattern)
        if existing:
            store.renew_claim(existing["id"], ttl, note or None, auto)
            ids.append(existing["id"])
        else:
            ids.append(
                store.insert_claim(
                    session.id,
                    task_id,
                    lane.repo_id,
                    lane.id,
                    pattern,
                    glob_regex(pattern),
                    note,
                    ttl,
                    auto,
                )
            )
    return ids


def _public(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": row["id"],
        "pattern": row["pattern"],
        "holder": row["handle"],
        "who": who_of(row["developer"], row["machine"]),
        "session_id": row["session_id"],
        "branch": row["branch"],
        "note": row["note"],
        "since": row["created_at"],
        "expires_at": row["expires_at"],
    }


def validate_ttl(ttl_minutes: float) -> float:
    try:
        ttl = float(ttl_minutes)
    except (TypeError, ValueError):
        raise InvalidInput("ttl_minutes must be a number of minutes.") from None
    if not 1 <= ttl <= 7 * 24 * 60:
        raise InvalidInput("ttl_minutes must be between 1 and 10080 (one week).")
    return ttl


LIST_LIMIT = 1000  # claims a listing shows (count_unreleased says how many there are)


def count_unreleased(store: Store, *, repo_id: str | None = None) -> int:
    return store.count_unreleased_claims(repo_id=repo_id)


def list_live(store: Store, *, repo_id: str | None = None) -> list[dict[str, Any]]:
    now = store.now()
    rows = store.list_claims(repo_id=repo_id, include_expired=True, limit=LIST_LIMIT)
    out = []
    for row in rows:
        item = _public(row)
        item["repo_id"] = row["repo_id"]
        item["state"] = (
            "expired" if row["expires_at"] <= now else "stale" if quiet(row, now) else "live"
        )
        out.append(item)
    return out


# -- actions: an explicit claim is announced in the thread and obeys its write gate ---------
#
# On a chain the gate is the turn rule (colony_tasks.domain.chains). A hook that applies its own
# event never makes an explicit claim, so chains and messages load only for one (~0.3 ms of a
# cold hook otherwise).


def claim(
    store: Store,
    session: Session,
    paths: Sequence[str],
    *,
    ttl_minutes: float = DEFAULT_TTL_MINUTES,
    note: str = "",
    task_id: int | None = None,
    cwd: str | None = None,
    announce: bool = True,
) -> ClaimResult:
    """Claim paths or globs (advisory: always granted, conflicts returned beside the grant)."""
    from .chains import check_writable  # see the note above

    if isinstance(paths, str) or not paths:
        raise InvalidInput("Pass a non-empty list of paths or globs to claim.")
    ttl = validate_ttl(ttl_minutes)
    if note and len(note) > MAX_NOTE_CHARS:
        raise InvalidInput(
            f"The claim note is {len(note)} characters; the limit is {MAX_NOTE_CHARS}."
            " Say why in a sentence and put details in a file."
        )
    lane = session_lane(store, session)
    rel = list(dict.fromkeys(normalize(p, lane=lane, cwd=cwd or session.cwd) for p in paths))
    with store.transaction():
        task = task_for(store, session, task_id)
        check_writable(store, task, session)
        store.add_participant(task.id, session.id)
        found = conflicts_for(store, session, rel, lane)
        granted = grant(
            store, session, rel, lane, task_id=task.id, ttl_minutes=ttl, note=(note or "").strip()
        )
        if announce:
            text = f"claimed {', '.join(rel)} for {round(ttl)}m" + (
                f": {note.strip()}" if note and note.strip() else ""
            )
            store.add_observation(
                ObsKind.CLAIM,
                text,
                session_id=session.id,
                task_id=task.id,
                meta={"paths": rel, "ttl_minutes": ttl},
                paths=rel,
                repo_id=lane.repo_id,
            )
    return ClaimResult(granted, found)


def release(
    store: Store,
    session: Session,
    paths: Sequence[str] | None = None,
    *,
    task_id: int | None = None,
    announce: bool = True,
) -> list[dict[str, Any]]:
    """Release the caller's claims on ``paths`` (all of them when None)."""
    patterns = None
    lane = session_lane(store, session) if session.lane_id else None
    if paths is not None:
        if lane is None:
            return []
        patterns = [normalize(p, lane=lane, cwd=session.cwd) for p in paths]
    with store.transaction():
        released = store.release_claims(session.id, patterns=patterns)
        if released and announce:
            task = store.get_task(released[0]["task_id"]) if released[0]["task_id"] else None
            if task is not None and task.status == TaskStatus.OPEN:
                names = [r["pattern"] for r in released]
                store.add_observation(
                    ObsKind.RELEASE,
                    f"released {', '.join(names)}",
                    session_id=session.id,
                    task_id=task.id,
                    meta={"paths": names},
                )
    return [{"id": r["id"], "pattern": r["pattern"]} for r in released]
