"""Whose work overlaps whose, per repository, before anyone merges (``colony-tasks conflicts``
and the viewer's Conflicts page).

Every two live sessions that changed one file (on any branch, in any worktree or clone of the
repository) make a pair. Where their changes meet is decided by the forecast's own rule, run
from each side (:func:`colony_tasks.domain.regions.compare`): each side's lines in its own
current numbering, with the enclosing function or class where the language is known. A pair
whose changes do not meet is listed too, as "same file, no overlap", with each side's changed
lines, so a human sees why nobody was warned. Reads only.
"""

from __future__ import annotations

from typing import Any

from ..base import enclosing
from ..base.models import Record, Session, who_of
from ..store import Store
from . import regions

MAX_PAIRS = 100  # per repository: the pairs weighed (each costs two diffs of the file)


class Span(Record):
    """Lines of one side, 1-based and inclusive, and what encloses the first ('' unknown)."""

    first: int
    last: int
    symbol: str = ""


class Side(Record):
    """One session of a pair: who, on which branch, in which worktree, and its lines."""

    handle: str
    session_id: str
    agent: str
    branch: str
    root: str
    who: str
    spans: tuple[Span, ...]


class Pair(Record):
    """Two sessions' changes of one file: ``meets`` when git will conflict on them."""

    path: str
    meets: bool
    sides: tuple[Side, Side]


class RepoMap(Record):
    """A repository's pairs, those that meet first; ``more``: pairs past :data:`MAX_PAIRS`."""

    repo_id: str
    repo_name: str
    pairs: tuple[Pair, ...]
    more: int = 0

    @property
    def overlapping(self) -> int:
        return sum(p.meets for p in self.pairs)


def repositories(store: Store, repo: str | None = None) -> list[RepoMap]:
    """Every repository where two live sessions changed one file (only ``repo``, a name or an
    id, when given), those with overlaps first."""
    lanes = store.overview.lanes()
    names: dict[str, str] = {}
    for lane in lanes.values():
        names.setdefault(lane.repo_id, lane.repo_name)
    roots = {lane_id: lane.root for lane_id, lane in lanes.items()}
    found = []
    for repo_id, name in names.items():
        if repo is not None and repo not in (repo_id, name):
            continue
        mapped = _repository(store, repo_id, name, roots)
        if mapped.pairs:
            found.append(mapped)
    return sorted(found, key=lambda r: (-r.overlapping, r.repo_name, r.repo_id))


def _repository(store: Store, repo_id: str, name: str, roots: dict[int, str]) -> RepoMap:
    by_path: dict[str, list[dict[str, Any]]] = {}
    for row in store.repo_regions(repo_id):
        by_path.setdefault(row["path"], []).append(row)
    sessions: dict[str, Session | None] = {}
    pairs: list[Pair] = []
    more = 0
    for path, rows in by_path.items():
        for i, a in enumerate(rows):
            for b in rows[i + 1 :]:
                if len(pairs) >= MAX_PAIRS:
                    more += 1
                    continue
                pair = _pair(store, sessions, path, (a, b), roots)
                if pair is not None:
                    pairs.append(pair)
    pairs.sort(key=lambda p: (not p.meets, p.path))
    return RepoMap(repo_id, name, tuple(pairs), more)


def _pair(
    store: Store,
    sessions: dict[str, Session | None],
    path: str,
    rows: tuple[dict[str, Any], dict[str, Any]],
    roots: dict[int, str],
) -> Pair | None:
    sides = []
    meets = True
    for me, other in (rows, rows[::-1]):
        sid = me["session_id"]
        if sid not in sessions:
            sessions[sid] = store.get_session(sid)
        session = sessions[sid]
        if session is None:
            return None
        after = _text_after(me)
        found = regions.compare(session, path, (me["base"], me["base_hash"], after), set(), [other])
        spans = tuple(Span(o.first, o.last, o.symbol) for o in found)
        meets = meets and bool(spans)
        sides.append((me, spans, after))
    if not meets:
        sides = [(me, _changed_spans(path, me, after), after) for me, _, after in sides]
    first, second = (_side(me, spans, roots) for me, spans, _ in sides)
    return Pair(path, meets, (first, second))


def _side(row: dict[str, Any], spans: tuple[Span, ...], roots: dict[int, str]) -> Side:
    return Side(
        row["handle"],
        row["session_id"],
        row["agent"],
        row["branch"] or "",
        roots.get(row["lane_id"], "") if row["lane_id"] is not None else "",
        who_of(row["developer"], row["machine"]),
        spans,
    )


def _text_after(row: dict[str, Any]) -> str:
    """The file as the session last left it: its base with its changes applied."""
    base = regions.lines_of(row["base"]) or []
    out: list[str] = []
    pos = 0
    for start, end, text in sorted(row["changes"], key=lambda c: (c[0], c[1])):
        out += base[pos:start]
        out += regions.lines_of(text) or []
        pos = end
    return "".join(line + "\n" for line in out + base[pos:])


def _changed_spans(path: str, row: dict[str, Any], after: str) -> tuple[Span, ...]:
    """Every change of the session, in its current numbering."""
    lines = regions.lines_of(after) or []
    symbol_at = enclosing.finder(path, lines)
    spans = []
    delta = 0
    for start, end, text in sorted(row["changes"], key=lambda c: (c[0], c[1])):
        count = len(regions.lines_of(text) or [])
        first = start + delta + 1
        spans.append(Span(first, max(first, start + delta + count), symbol_at(first)))
        delta += count - (end - start)
    return tuple(spans)
