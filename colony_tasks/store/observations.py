"""SQL for observations, their touched paths and full-text search."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from ..base.models import Observation, load_meta
from ..base.redact import redact, redact_value
from ..base.text import MAX_TEXT_CHARS
from .base import StoreBase

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterable, Sequence

# Keyword search ranks the newest rows first (see ``fts_search``): bench/search.py measures
# two common words at 1M observations.
FTS_WINDOW = 50_000
OBS_COLUMNS = (
    "o.id, o.session_id, o.task_id, o.kind, o.text, o.meta, o.created_at, o.to_target,"
    " o.in_reply_to, o.urgent, o.status, s.handle, o.turn"
)
OBS_FROM = "observations o LEFT JOIN sessions s ON s.id = o.session_id"
QUOTED_TERM = re.compile(r'"((?:[^"]|"")+)"(\*?)')
WORD = re.compile(r"\w+", re.UNICODE)
SNIPPET_TOKENS = 16


def match_terms(match: str) -> list[tuple[str, bool]]:
    """(lowercased term, is prefix) of each quoted term of an escaped FTS5 expression."""
    return [(t.replace('""', '"').lower(), star == "*") for t, star in QUOTED_TERM.findall(match)]


def snippet(text: str, terms: list[tuple[str, bool]]) -> str:
    """Like FTS5 ``snippet(..., '[', ']', '…', 16)``: the words around the first match.

    Computed in Python for the few rows a windowed search returns; asking FTS5 for snippets of
    chosen rowids costs more than ranking them.
    """

    def hit(word: str) -> bool:
        low = word.lower()
        return any(low.startswith(t) if prefix else low == t for t, prefix in terms)

    words = list(WORD.finditer(text))
    first = next((n for n, w in enumerate(words) if hit(w.group())), 0)
    start = max(0, min(first - SNIPPET_TOKENS // 4, len(words) - SNIPPET_TOKENS))
    chosen = words[start : start + SNIPPET_TOKENS]
    if not chosen:
        return text
    out, cursor = [], chosen[0].start()
    for w in chosen:
        out.append(text[cursor : w.start()])
        out.append(f"[{w.group()}]" if hit(w.group()) else w.group())
        cursor = w.end()
    body = "".join(out)
    prefix = "…" if start > 0 else text[: chosen[0].start()]
    suffix = "…" if start + SNIPPET_TOKENS < len(words) else text[cursor:]
    return prefix + body + suffix


MAX_META_CHARS = MAX_TEXT_CHARS  # each string inside an observation's meta


def row_to_observation(row: sqlite3.Row) -> Observation:
    return Observation(
        id=row["id"],
        session_id=row["session_id"],
        task_id=row["task_id"],
        kind=row["kind"],
        text=row["text"],
        meta=load_meta(row["meta"]),
        created_at=row["created_at"],
        to=row["to_target"],
        in_reply_to=row["in_reply_to"],
        urgent=bool(row["urgent"]),
        status=row["status"],
        handle=row["handle"],
        turn=row["turn"],
    )


def search_filters(
    where: list[str],
    params: list[Any],
    task_id: int | None,
    kinds: Sequence[str] | None,
    session_id: str | None,
    since: float | None,
    until: float | None,
) -> None:
    """Append a search's optional filters (over ``observations o`` joined to ``sessions s``) to
    ``where`` and ``params``; shared by the SQLite and PostgreSQL full-text searches."""
    if task_id is not None:
        where.append("o.task_id = ?")
        params.append(task_id)
    if kinds:
        where.append(f"o.kind IN ({','.join('?' * len(kinds))})")
        params.extend(kinds)
    if session_id is not None:
        where.append("(o.session_id = ? OR s.handle = ?)")
        params.extend([session_id, session_id])
    if since is not None:
        where.append("o.created_at >= ?")
        params.append(since)
    if until is not None:
        where.append("o.created_at <= ?")
        params.append(until)


class ObservationsMixin(StoreBase):
    def add_observation(
        self,
        kind: str,
        text: str,
        *,
        session_id: str | None = None,
        task_id: int | None = None,
        meta: dict[str, Any] | None = None,
        to: str | None = None,
        in_reply_to: int | None = None,
        urgent: bool = False,
        status: str | None = None,
        paths: Iterable[str] = (),
        repo_id: str | None = None,
        turn: int | None = None,
        max_chars: int | None = None,
    ) -> int:
        """Insert one observation (text, meta and paths redacted) and its touched paths.

        ``max_chars`` caps the text before it is redacted (:func:`redact` drops a word cut in
        half, so no half secret survives the cut), which bounds the work whatever the input.
        Redaction runs before the write lock is taken.
        """
        clean_text = redact(text, max_chars)
        clean_meta = redact_value(meta, MAX_META_CHARS) if meta else {}
        clean_paths = [redact(p) for p in dict.fromkeys(paths) if p]
        with self.transaction():
            if task_id is not None:
                self.lock_task(task_id)
            cursor = self._run(
                "INSERT INTO observations(session_id, task_id, kind, text, meta, created_at,"
                " to_target, in_reply_to, urgent, status, turn)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    session_id,
                    task_id,
                    kind,
                    clean_text,
                    json.dumps(clean_meta, ensure_ascii=False, separators=(",", ":")),
                    self.now(),
                    to,
                    in_reply_to,
                    int(bool(urgent)),
                    status,
                    turn,
                ),
            )
            obs_id = int(cursor.lastrowid or 0)
            if repo_id:
                rows = [(obs_id, redact(repo_id), p) for p in dict.fromkeys(clean_paths)]
                if rows:
                    self.conn.executemany(
                        "INSERT OR IGNORE INTO observation_paths(observation_id, repo_id, path)"
                        " VALUES (?, ?, ?)",
                        rows,
                    )
        return obs_id

    def get_observations(self, ids: Sequence[int]) -> list[Observation]:
        ids = [int(i) for i in ids][:500]
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        rows = self._all(f"SELECT {OBS_COLUMNS} FROM {OBS_FROM} WHERE o.id IN ({marks})", ids)
        by_id = {row["id"]: row_to_observation(row) for row in rows}
        return [by_id[i] for i in ids if i in by_id]

    def get_observation(self, obs_id: int) -> Observation | None:
        found = self.get_observations([obs_id])
        return found[0] if found else None

    def timeline(
        self,
        task_id: int,
        *,
        limit: int = 50,
        before_id: int | None = None,
        kinds: Sequence[str] | None = None,
    ) -> list[Observation]:
        """The task's observations, oldest first (the newest ``limit`` before ``before_id``)."""
        where = ["o.task_id = ?"]
        params: list[Any] = [task_id]
        if before_id is not None:
            where.append("o.id < ?")
            params.append(before_id)
        if kinds:
            where.append(f"o.kind IN ({','.join('?' * len(kinds))})")
            params.extend(kinds)
        rows = self._all(
            f"SELECT {OBS_COLUMNS} FROM {OBS_FROM} WHERE {' AND '.join(where)}"
            " ORDER BY o.id DESC LIMIT ?",
            (*params, limit),
        )
        return [row_to_observation(r) for r in reversed(rows)]

    def observations_after(
        self, task_id: int, after_id: int, *, kinds: Sequence[str], limit: int = 1000
    ) -> list[Observation]:
        marks = ",".join("?" * len(kinds))
        rows = self._all(
            f"SELECT {OBS_COLUMNS} FROM {OBS_FROM} WHERE o.task_id = ? AND o.id > ?"
            f" AND o.kind IN ({marks}) ORDER BY o.id LIMIT ?",
            (task_id, after_id, *kinds, limit),
        )
        return [row_to_observation(r) for r in rows]

    def max_observation_id(self, task_id: int | None = None) -> int:
        if task_id is None:
            row = self._one("SELECT MAX(id) FROM observations")
        else:
            row = self._one("SELECT MAX(id) FROM observations WHERE task_id = ?", (task_id,))
        return int(row[0] or 0) if row else 0

    def count_observations(self, task_id: int | None = None) -> int:
        if task_id is None:
            row = self._one("SELECT COUNT(*) FROM observations")
        else:
            row = self._one("SELECT COUNT(*) FROM observations WHERE task_id = ?", (task_id,))
        return int(row[0]) if row else 0

    def set_observation_status(
        self, obs_id: int, status: str, *, resolved_by: str | None = None
    ) -> None:
        self._run(
            "UPDATE observations SET status = ?, resolved_by = ?, resolved_at = ? WHERE id = ?",
            (status, resolved_by, self.now() if resolved_by else None, obs_id),
        )

    def resolution(self, obs_id: int) -> tuple[str | None, str | None]:
        row = self._one("SELECT status, resolved_by FROM observations WHERE id = ?", (obs_id,))
        return (row["status"], row["resolved_by"]) if row else (None, None)

    # -- paths -----------------------------------------------------------------------------

    def touched_paths(self, session_id: str, repo_id: str, since: float) -> set[str]:
        rows = self._all(
            "SELECT DISTINCT p.path FROM observations o"
            " JOIN observation_paths p ON p.observation_id = o.id"
            # `+p.repo_id` keeps SQLite from driving the join by the repository's whole path
            # index: starting from this session's own observations stays cheap as history grows.
            " WHERE o.session_id = ? AND +p.repo_id = ? AND o.created_at >= ?",
            (session_id, repo_id, since),
        )
        return {r[0] for r in rows}

    def recent_edits(
        self, repo_id: str, paths: Sequence[str], since: float, *, exclude_session: str
    ) -> list[dict[str, Any]]:
        if not paths:
            return []
        marks = ",".join("?" * len(paths))
        rows = self._all(
            f"SELECT p.path, o.id, o.session_id, s.handle, s.developer, s.machine, o.created_at,"
            f" l.branch"
            f" FROM observation_paths p JOIN observations o ON o.id = p.observation_id"
            f" LEFT JOIN sessions s ON s.id = o.session_id"
            f" LEFT JOIN lanes l ON l.id = s.lane_id"
            # `+o.kind` keeps the planner on the path index instead of scanning every edit.
            f" WHERE p.repo_id = ? AND p.path IN ({marks}) AND +o.kind = 'edit'"
            f" AND o.created_at >= ? AND o.session_id != ? AND s.ended_at IS NULL"
            f" ORDER BY o.id DESC",
            (repo_id, *paths, since, exclude_session),
        )
        return [dict(r) for r in rows]

    def observation_paths(self, obs_ids: Sequence[int]) -> dict[int, list[str]]:
        if not obs_ids:
            return {}
        marks = ",".join("?" * len(obs_ids))
        found: dict[int, list[str]] = {}
        for row in self._all(
            f"SELECT observation_id, path FROM observation_paths WHERE observation_id IN ({marks})",
            list(obs_ids),
        ):
            found.setdefault(row[0], []).append(row[1])
        return found

    # -- full-text search ------------------------------------------------------------------

    def fts_search(
        self,
        match: str,
        *,
        limit: int = 20,
        task_id: int | None = None,
        kinds: Sequence[str] | None = None,
        session_id: str | None = None,
        since: float | None = None,
        until: float | None = None,
        window: int | None = FTS_WINDOW,
    ) -> list[tuple[Observation, float, str]]:
        """Run an already-escaped FTS5 ``match`` expression; (observation, bm25, snippet).

        bm25 is computed for every matching row, which for two common words in a big store is
        most of the table. So the newest ``window`` rows are ranked first (FTS5 seeks to a rowid
        range in each term's doclist): when they hold ``limit`` matches, those are the answer,
        best bm25 first, ties to the newer. Otherwise (a selective query, or matches that are
        mostly older) the whole index is ranked, which is cheap exactly because few rows match.
        ``window=None`` always ranks everything.
        """
        where = ["observations_fts MATCH ?"]
        params: list[Any] = [match]
        search_filters(where, params, task_id, kinds, session_id, since, until)
        full = (
            f"SELECT {OBS_COLUMNS}, bm25(observations_fts) AS score,"
            " snippet(observations_fts, 0, '[', ']', '…', 16) AS snippet"
            " FROM observations_fts JOIN observations o ON o.id = observations_fts.rowid"
            " LEFT JOIN sessions s ON s.id = o.session_id"
            " WHERE {where} ORDER BY score, o.id DESC LIMIT ?"
        )
        if window is not None:
            start = self.max_observation_id() - window  # observation ids are the FTS rowids
            if start > 0:
                recent = self._ranked_recent(where, params, start, limit, match)
                if recent is not None:
                    return recent
        rows = self._all(full.format(where=" AND ".join(where)), (*params, limit))
        return [(row_to_observation(r), float(r["score"]), r["snippet"]) for r in rows]

    def _ranked_recent(
        self, where: list[str], params: list[Any], start: int, limit: int, match: str
    ) -> list[tuple[Observation, float, str]] | None:
        """The best ``limit`` matches among rows after ``start``, or None if there are fewer.

        Ranks on the FTS table alone (joining observations only when a filter needs it), then
        builds rows and snippets for the winners only: with common words the window holds
        tens of thousands of matches, and a snippet for each is what costs, not bm25.
        Snippets here come from :func:`snippet` (FTS5's own, per chosen rowid, costs more).
        """
        joins = (
            " JOIN observations o ON o.id = observations_fts.rowid"
            " LEFT JOIN sessions s ON s.id = o.session_id"
            if len(where) > 1
            else ""
        )
        ranked = self._all(
            "SELECT observations_fts.rowid, bm25(observations_fts) AS score"
            f" FROM observations_fts{joins}"
            f" WHERE {' AND '.join(where)} AND observations_fts.rowid > ?"
            " ORDER BY score, observations_fts.rowid DESC LIMIT ?",
            (*params, start, limit),
        )
        if len(ranked) < limit:
            return None
        ids = [int(r[0]) for r in ranked]
        rows = self._all(
            f"SELECT {OBS_COLUMNS} FROM {OBS_FROM} WHERE o.id IN ({','.join('?' * len(ids))})",
            ids,
        )
        by_id = {int(r["id"]): r for r in rows}
        terms = match_terms(match)
        return [
            (row_to_observation(by_id[i]), float(score), snippet(by_id[i]["text"], terms))
            for i, score in ((int(r[0]), r[1]) for r in ranked)
            if i in by_id
        ]

    def fts_row_count(self) -> int:
        row = self._one("SELECT COUNT(*) FROM observations_fts")
        return int(row[0]) if row else 0

    def rebuild_fts(self) -> None:
        with self.transaction():
            self._run("INSERT INTO observations_fts(observations_fts) VALUES ('rebuild')")

    # -- open items ------------------------------------------------------------------------

    def open_items(
        self,
        *,
        kinds: Sequence[str],
        statuses: Sequence[str],
        task_ids: Sequence[int] | None = None,
        exclude_author: str | None = None,
        to_any_of: Sequence[str] | None = None,
        limit: int = 200,
    ) -> list[Observation]:
        """Items waiting on someone: pending questions/handoffs, open blockers."""
        where = [
            f"o.kind IN ({','.join('?' * len(kinds))})",
            f"o.status IN ({','.join('?' * len(statuses))})",
        ]
        params: list[Any] = [*kinds, *statuses]
        if task_ids is not None:
            if not task_ids:
                return []
            where.append(f"o.task_id IN ({','.join('?' * len(task_ids))})")
            params.extend(task_ids)
        if exclude_author is not None:
            where.append("(o.session_id IS NULL OR o.session_id != ?)")
            params.append(exclude_author)
        if to_any_of is not None:
            where.append(
                f"(o.to_target IS NULL OR o.to_target IN ({','.join('?' * len(to_any_of))}))"
            )
            params.extend(to_any_of)
        rows = self._all(
            f"SELECT {OBS_COLUMNS} FROM {OBS_FROM} WHERE {' AND '.join(where)} ORDER BY o.id LIMIT ?",
            (*params, limit),
        )
        return [row_to_observation(r) for r in rows]
