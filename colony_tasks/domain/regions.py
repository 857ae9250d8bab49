"""Regions: what each session changed in each file, as ranges of base lines, and the forecast
of the conflicts git will find when the work is merged.

A session's *base* of a file is its content where the session's branch forked from the branch
it will merge into (:mod:`colony_tasks.base.gitbase`: the blob at the merge base of its
``HEAD`` and the default branch; on the default branch itself, ``HEAD``'s blob), so its
regions hold what its branch already committed, until merged, and what shell commands
changed. Without git (a detached or unborn ``HEAD``, a file git does not track) the base is
the file's content before the session's first edit of it. Its *changes* are where git's
merge places the differences between that base and the file now
(:func:`colony_tasks.base.linediff.segments`): base lines ``[bs, be)`` replaced by new lines,
kept in the store (:mod:`colony_tasks.store.regions`). Two sessions' changes of one file meet
the way git's merge (xdiff's ``xdl_do_merge``) decides: ``[s1, e1)`` and ``[s2, e2)`` conflict
when ``s1 <= e2 and s2 <= e1`` — overlapping, or touching with no untouched base line between —
taken transitively over both sides, unless both sides turn the cluster into identical text.
That is the whole rule: no distance is tuned.

Before an edit, its region comes from the tool's input (:func:`project`: an Edit's old/new
strings, a patch's chunks, a whole-file write) applied to the file as it is; after it, from
what is on disk. Two sessions on different bases (one pulled) are compared through a diff of
the two bases: a change maps to the other base line for line where the bases agree and widens
to the part that differs. Without git, a region whose base is unknown (a file first changed
by a shell command, or edited before the hooks were installed) stands for the whole file.
Standard library only.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from ..base import gitbase, linediff
from ..base.models import Lane, Record, Session, who_for, who_of
from ..base.redact import redact
from ..store import Store

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

Change = tuple[int, int, str]  # base lines [bs, be) replaced by these lines (each ending "\n")
WHOLE_FILE = "*"  # the base_hash of a region whose base is unknown: it covers the file
MAX_FILE_BYTES = 4 * 1024 * 1024  # a larger file (a data dump) is not diffed: no region
MAX_TOLD = 200  # the overlaps a region remembers having told (the oldest are forgotten)


class Overlap(Record):
    """Another live session's change that the edit meets, as git will see it: its handle and
    branch, the lines in this session's current numbering (1-based, inclusive) and what
    encloses the first of them where the language is known (``def retry``; else '')."""

    path: str
    handle: str
    session_id: str
    branch: str
    first: int
    last: int
    key: str
    who: str = ""
    symbol: str = ""


class Forecast(Record):
    """What an edit meets: every overlap, and those the session has not yet been told."""

    overlaps: tuple[Overlap, ...] = ()
    fresh: tuple[Overlap, ...] = ()


NONE = Forecast()


# -- text -------------------------------------------------------------------------------


def lines_of(text: str | None) -> list[str] | None:
    if text is None:
        return None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _text_of(raw: bytes) -> str:
    """A file's bytes as :func:`read` gives its text: universal newlines, redacted."""
    text = raw.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")
    return redact(text)


def fork_bases(root: str, rels: Iterable[str], lane: Lane) -> dict[str, tuple[str | None, str]]:
    """The session's bases of the files from git (text, hash); a file without one (no git, a
    detached or unborn ``HEAD``, a git call that failed) is left out."""
    if not lane.branch:
        return {}
    found = gitbase.current().bases(root, list(rels), _text_of)
    return {rel: (base.text, digest(base.text)) for rel, base in found.items()}


def read(root: str, rel: str) -> str | None:
    """The file's text (redacted, as it would be stored), None when it does not exist or
    is too large or not text."""
    path = os.path.join(root, rel)
    try:
        if os.path.getsize(path) > MAX_FILE_BYTES:
            return None
        with open(path, encoding="utf-8", errors="surrogateescape") as handle:
            text = handle.read()
    except (OSError, ValueError):
        return None
    return redact(text.encode("utf-8", "surrogateescape").decode("utf-8", "replace"))


def digest(text: str | None) -> str:
    import hashlib  # here: only edits need it, and every cold hook would pay ~2.5 ms (OpenSSL)

    return "" if text is None else hashlib.sha1(text.encode("utf-8", "replace")).hexdigest()


def changes_of(base: list[str], cur: list[str]) -> list[Change]:
    return [(bs, be, _joined(cur[cs:ce])) for bs, be, cs, ce in linediff.segments(base, cur)]


def _joined(lines: Sequence[str]) -> str:
    return "".join(line + "\n" for line in lines)


# -- what an edit will write (from the tool's input) --------------------------------------


def project(text: str | None, edits: Sequence[tuple[str, str, str]]) -> str | None:
    """The file's text after ``edits`` (``(kind, old, new)`` for this file, in order): kind
    ``replace`` / ``replace_all`` (an Edit's strings), ``write`` (the whole content),
    ``chunk`` (a patch chunk: old and new lines, located as apply_patch seeks them),
    ``delete``. None when an edit cannot be located (the tool will fail, or the forecast is
    left to the edit's PostToolUse)."""
    for kind, old, new in edits:
        old, new = redact(old), redact(new)
        if kind == "write":
            text = new
        elif kind == "delete":
            text = ""
        elif text is None:
            if kind == "chunk" and not old:
                text = new  # an added file
                continue
            return None
        elif kind in ("replace", "replace_all"):
            if not old or old not in text:
                return None
            text = text.replace(old, new) if kind == "replace_all" else text.replace(old, new, 1)
        elif kind == "chunk":
            text = _apply_chunk(text, old, new)
            if text is None:
                return None
        else:
            return None
    return text


def _apply_chunk(text: str, old: str, new: str) -> str | None:
    lines = lines_of(text) or []
    want, put = lines_of(old + "\n") or [], lines_of(new + "\n") or []
    if not want:
        return "\n".join(lines + put) + "\n"
    for norm in (lambda s: s, str.rstrip, str.strip):
        target = [norm(x) for x in want]
        for i in range(len(lines) - len(want) + 1):
            if (
                norm(lines[i]) == target[0]
                and [norm(x) for x in lines[i : i + len(want)]] == target
            ):
                lines[i : i + len(want)] = put
                return "\n".join(lines) + "\n"
    return None


def patch_edits(body: str) -> dict[str, list[tuple[str, str, str]]]:
    """A Codex ``apply_patch`` body as edits per path (as named in the patch): each ``@@``
    chunk of an Update File, an Add File's content, a Delete File."""
    out: dict[str, list[tuple[str, str, str]]] = {}
    path, kind = None, ""
    old: list[str] = []
    new: list[str] = []

    def flush() -> None:
        if path is None:
            return
        if kind == "delete":
            out.setdefault(path, []).append(("delete", "", ""))
        elif kind == "add":
            out.setdefault(path, []).append(("write", "", "\n".join(new) + "\n" if new else ""))
        elif old or new:
            out.setdefault(path, []).append(("chunk", "\n".join(old), "\n".join(new)))

    for line in body.split("\n"):
        if line.startswith(("*** Begin Patch", "*** End Patch", "*** Move to: ", "*** End of")):
            continue
        if line.startswith(("*** Add File: ", "*** Update File: ", "*** Delete File: ")):
            flush()
            old, new = [], []
            kind = {"A": "add", "U": "update", "D": "delete"}[line[4]]
            path = line.split(": ", 1)[1].strip()
            continue
        if line.startswith("@@"):
            if kind == "update":
                flush()
                old, new = [], []
            continue
        if path is None:
            continue
        tag, body_line = line[:1], line[1:]
        if tag in (" ", "-") and kind == "update":
            old.append(body_line)
        if tag in (" ", "+"):
            new.append(body_line)
    flush()
    return out


# -- the rule ------------------------------------------------------------------------------


def _map(between: Sequence[linediff.Segment], pos: int, end: bool) -> int:
    """A boundary of one base in another (``between``: the diff of the two): shifted where
    they agree, widened to a part that differs."""
    delta = 0
    for i1, i2, j1, j2 in between:
        if pos < i1 or (pos == i1 and (not end or i1 < i2)):
            return pos + delta
        if pos < i2 or pos == i1:
            return j2 if end else j1
        delta = j2 - i2
    return pos + delta


def _side_text(base: list[str], changes: Iterable[Change], start: int, end: int) -> list[str]:
    out: list[str] = []
    pos = start
    for s, e, text in sorted(changes, key=lambda c: (c[0], c[1])):
        out += base[pos:s]
        out += lines_of(text) or []
        pos = e
    return out + base[pos:end]


def meeting(
    base: list[str], mine: Sequence[Change], theirs: Sequence[Change], only: set[Change]
) -> list[tuple[int, int, tuple[Change, ...]]]:
    """The clusters where ``mine`` (those of it in ``only``) meets ``theirs`` as git's merge
    would conflict: ``(start, end, their changes)`` in base lines."""
    items = sorted([(*c, 0) for c in mine] + [(*c, 1) for c in theirs])
    clusters: list[list[Any]] = []
    for s, e, text, side in items:
        if clusters and s <= clusters[-1][1]:
            clusters[-1][1] = max(clusters[-1][1], e)
            clusters[-1][2].append((s, e, text, side))
        else:
            clusters.append([s, e, [(s, e, text, side)]])
    found = []
    for start, end, members in clusters:
        a = [(s, e, t) for s, e, t, side in members if side == 0]
        b = [(s, e, t) for s, e, t, side in members if side == 1]
        if not a or not b or not any(c in only for c in a):
            continue
        if _side_text(base, a, start, end) != _side_text(base, b, start, end):
            found.append((start, end, tuple(b)))
    return found


def _theirs_on_my_base(
    mine_base: list[str] | None, mine_hash: str, row: dict[str, Any]
) -> list[Change] | None:
    """Their changes in my base's lines; None when they cover the whole file."""
    if row["base_hash"] == WHOLE_FILE or (row["base"] is None) != (mine_base is None):
        return None
    if mine_base is None or row["base_hash"] == mine_hash:
        return list(row["changes"])
    between = linediff.segments(lines_of(row["base"]) or [], mine_base)
    return [(_map(between, s, False), _map(between, e, True), t) for s, e, t in row["changes"]]


def _current_line(segments: Sequence[linediff.Segment], pos: int) -> int:
    """Base line ``pos`` in the current numbering of the file ``segments`` changed."""
    delta = 0
    for bs, be, cs, ce in segments:
        if pos < bs:
            return pos + delta
        if pos < be or pos == bs:
            return cs
        delta = ce - be
    return pos + delta


def compare(
    me: Session,
    rel: str,
    mine: tuple[str | None, str, str | None],
    before: set[Change],
    others: Sequence[dict[str, Any]],
) -> list[Overlap]:
    """Where my changes — those of ``mine`` (base text, base hash, text after) not in
    ``before`` — meet other sessions' regions of the file."""
    base_text, base_hash, after_text = mine
    base, after = lines_of(base_text), lines_of(after_text) or []
    whole = base_hash == WHOLE_FILE
    segs: list[linediff.Segment] = []
    if whole or base is None:
        changes = [(0, len(base or []), after_text or "")]
    else:
        segs = linediff.segments(base, after)
        changes = [(bs, be, _joined(after[cs:ce])) for bs, be, cs, ce in segs]
    only = set(changes) - before
    if not only:
        return []
    found = []
    from ..base import enclosing  # ast and its patterns: only once an edit meets another

    symbol_at = enclosing.finder(rel, after)
    for row in others:
        theirs = None if whole else _theirs_on_my_base(base, base_hash, row)
        if theirs is not None:
            hits = meeting(base or [], changes, theirs, only)
        elif base is None and row["base"] is None and row["changes"][0][2] == (after_text or ""):
            hits = []  # both created the file, with the same content: git merges it
        else:
            hits = [(0, len(base or after), tuple(row["changes"]))]
        for start, end, their in hits:
            first = _current_line(segs, start) + 1
            last = max(first, _current_line(segs, end))
            found.append(
                Overlap(
                    rel,
                    row["handle"],
                    row["session_id"],
                    row["branch"] or "",
                    first,
                    last,
                    digest(f"{row['session_id']}\0{rel}\0{their!r}")[:16],
                    who_for(who_of(row["developer"], row["machine"]), me),
                    symbol_at(first),
                )
            )
    return found


# -- the forecast: before an edit (from its input), after it (from the disk) ---------------


def edits_by_path(
    edits: Iterable[Sequence[str]], rel_of: Callable[[str], str | None]
) -> dict[str, list[tuple[str, str, str]] | None]:
    """The tool's edits (``[kind, path, old, new]`` as a hook sends them) per repo-relative
    path (``rel_of``; None drops a path outside the repository); None for a file the edit
    rewrites in a way no text says (a notebook cell): the whole file."""
    out: dict[str, list[tuple[str, str, str]] | None] = {}
    for item in edits:
        kind, path, old, new = (list(item) + ["", "", "", ""])[:4]
        named = patch_edits(new) if kind == "patch" else {path: [(kind, old, new)]}
        for name, items in named.items():
            rel = rel_of(name)
            if rel is None:
                continue
            if kind == "whole":
                out[rel] = None
            elif rel not in out or out[rel] is not None:
                out.setdefault(rel, []).extend(items)  # type: ignore[union-attr]
    return out


def _told(
    row: dict[str, Any] | None, overlaps: Sequence[Overlap]
) -> tuple[list[str], list[Overlap]]:
    told = list(row["told"]) if row else []
    fresh = [o for o in overlaps if o.key not in told]
    told += list(dict.fromkeys(o.key for o in fresh))
    return told[-MAX_TOLD:], fresh


def before_edit(
    store: Store,
    me: Session,
    lane: Lane,
    root: str,
    edits: dict[str, list[tuple[str, str, str]] | None],
    forked: dict[str, tuple[str | None, str]] | None = None,
) -> Forecast:
    """Before an edit: what it will change of each file (in the working tree at ``root``:
    clones of one lane have one each), compared with other live sessions' regions of the
    file on every branch of the repository. The session's base of a file is where its branch
    forked (:func:`fork_bases`, given as ``forked`` by a caller that asks git before its
    transaction), else its content here, at the first edit."""
    every: list[Overlap] = []
    fresh: list[Overlap] = []
    forked = fork_bases(root, edits, lane) if forked is None else forked
    for rel, items in edits.items():
        row, others = store.file_regions(me.id, lane.repo_id, rel)
        disk = read(root, rel)
        base, base_hash = _base_of(forked.get(rel), row, disk)
        found: list[Overlap] = []
        if others:
            now = _changes(base, base_hash, disk)
            weighed, after = base_hash, disk
            if items is None:  # what it writes is not said: it stands for the whole file
                weighed = WHOLE_FILE
            else:
                after = project(disk, items)
            if after is not None:
                found = compare(me, rel, (base, weighed, after), set(now), others)
        told, new = _told(row, found)
        moved = row is not None and row["base_hash"] != base_hash
        if row is None or new or moved:
            store.save_region(
                me.id,
                lane.repo_id,
                lane.id,
                rel,
                base=base,
                base_hash=base_hash,
                changes=_changes(base, base_hash, disk) if moved else row["changes"] if row else [],
                told=told,
            )
        every += found
        fresh += new
    return Forecast(tuple(every), tuple(fresh))


def _base_of(
    found: tuple[str | None, str] | None, row: dict[str, Any] | None, disk: str | None
) -> tuple[str | None, str]:
    """The session's base of the file: where its branch forked, else the one it kept, else
    the file as it is now."""
    if found is not None:
        return found
    if row is not None:
        return row["base"], row["base_hash"]
    return disk, digest(disk)


def _changes(base: str | None, base_hash: str, text: str | None) -> list[Change]:
    if base_hash == WHOLE_FILE:
        return [(0, len(lines_of(base) or []), text or "")]
    if base is None:
        return [(0, 0, text)] if text else []
    return changes_of(lines_of(base) or [], lines_of(text) or [])


def after_edit(
    store: Store,
    me: Session,
    lane: Lane,
    root: str,
    rels: Sequence[str],
    forked: dict[str, tuple[str | None, str]] | None = None,
) -> Forecast:
    """After an edit (or a shell command that changed files): the session's regions of the
    files from what is on disk, and where what it really wrote meets other sessions'. A
    file first changed without a before (a shell command) is weighed against where its
    branch forked (``forked``, as in :func:`before_edit`); without git it stands for the whole
    file."""
    every: list[Overlap] = []
    fresh: list[Overlap] = []
    forked = fork_bases(root, rels, lane) if forked is None else forked
    for rel in rels:
        row, others = store.file_regions(me.id, lane.repo_id, rel)
        disk = read(root, rel)
        before: set[Change] = set(row["changes"]) if row else set()
        found_base = forked.get(rel)
        if found_base is not None:
            base, base_hash = found_base
        elif row is None:
            base, base_hash = disk, WHOLE_FILE
        else:
            base, base_hash = row["base"], row["base_hash"]
        changes = _changes(base, base_hash, disk)
        found = compare(me, rel, (base, base_hash, disk), before, others) if others else []
        told, new = _told(row, found)
        moved = row is not None and row["base_hash"] != base_hash
        if row is None or new or moved or set(changes) != before:
            store.save_region(
                me.id,
                lane.repo_id,
                lane.id,
                rel,
                base=base,
                base_hash=base_hash,
                changes=changes,
                told=told,
            )
        every += found
        fresh += new
    return Forecast(tuple(every), tuple(fresh))
