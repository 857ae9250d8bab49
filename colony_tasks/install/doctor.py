"""Health checks of the store and the hook log, and the safe repairs ``doctor --fix`` applies.

Repairs never delete observations: they rebuild the FTS index, checkpoint the WAL, release
expired claims and end sessions that have been silent for more than a day.
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path
from typing import Any

from ..base import backend, environment, paths
from ..base.errors import ColonyError, NotAllowed
from ..base.text import ago
from ..domain import sessions, work
from ..relay import held
from ..store import Store, open_store, wal
from ..store.pg_schema import LATEST as PG_LATEST
from ..store.pg_schema import TABLES as PG_TABLES
from ..store.schema import LATEST
from . import capabilities, status
from .files import InstallError
from .locate import repo_root

SILENT_SESSION = 24 * 3600
WAL_WARN_BYTES = 64 * 1024 * 1024
LOG_WINDOW = 24 * 3600


def check(name: str, ok: bool, detail: str, *, fixable: bool = False) -> dict[str, Any]:
    return {"check": name, "ok": ok, "detail": detail, "fixable": fixable and not ok}


def hook_log_errors(since: float) -> list[str]:
    """Failure lines of this store's hook log (and its own fallback) newer than ``since``."""
    found = []
    for path in (paths.log_path(), paths.fallback_log_path()):
        for line in paths.read_log(path):
            try:
                stamp = time.mktime(time.strptime(line[:19], "%Y-%m-%dT%H:%M:%S"))
            except ValueError:
                continue
            if stamp >= since and " failed" in line:
                found.append(line.rstrip())
    return found


def archive_hook_log() -> int:
    """Move the hook log (and this store's fallback log) aside to ``<log>.1``; returns how
    many failures of the last day it held. The log stays readable there."""
    count = len(hook_log_errors(time.time() - LOG_WINDOW))
    for path in (paths.log_path(), paths.fallback_log_path()):
        try:
            os.replace(path, path + ".1")
        except OSError:
            pass
    return count


def open_for_doctor(path: str) -> tuple[Store | None, dict[str, Any] | None]:
    """The store, or a failed check that says clearly why it cannot be opened."""
    folder = os.path.dirname(path)
    if os.path.exists(folder) and not os.path.isdir(folder):
        return None, check("database", False, environment.home_is_a_file(folder))
    if not os.path.exists(path):
        return None, check(
            "database",
            False,
            f"{path} does not exist yet; hooks create it on the first agent event.",
        )
    wal.preserve(path)  # before the open's replay could drop what a damaged log holds
    try:
        return Store(path), None
    except sqlite3.DatabaseError as error:
        return None, check("database", False, environment.damaged_database(path, error))


def open_team_for_doctor(url: str) -> tuple[Store | None, dict[str, Any] | None]:
    """The team store, or a failed check that says why it cannot be reached (no password)."""
    try:
        return open_store(url), None
    except ColonyError as error:  # the URL names something colony-tasks cannot use
        return None, check("team store", False, backend.redact_url(str(error)))
    except Exception as error:  # noqa: BLE001 - any failure to reach it is the finding
        explained = environment.explain(error)
        return None, check(
            "team store",
            False,
            backend.redact_url(explained)
            if explained
            else f"{backend.redact_url(str(error))}. Hooks keep working: events wait in this"
            " machine's outbox and are delivered when the store is reachable.",
        )


def _integrity(store: Store) -> list[str]:
    try:
        return store.admin.integrity_check()
    except sqlite3.DatabaseError as error:
        return [str(error)]


def diagnose(store: Store) -> list[dict[str, Any]]:
    """Every check; a check that cannot even run on a damaged file fails with the reason."""
    checks = []
    for name, run in CHECKS:
        try:
            checks.append(run(store))
        except sqlite3.DatabaseError as error:
            checks.append(check(name, False, f"could not check: {error}"))
    return checks


def _schema(store: Store) -> dict[str, Any]:
    version = store.schema_version()
    latest = PG_LATEST if store.backend == "postgresql" else LATEST
    detail = f"version {version} (latest {latest})"
    if store.backend == "postgresql":
        detail += f" on {store.path}"  # the URL, password redacted
    return check("schema", version == latest, detail)


def missing_tables(store: Store) -> list[str]:
    """Tables the current schema has that this database lacks (a version that says it is
    current over tables that were dropped or never created)."""
    if store.backend == "postgresql":
        return sorted(PG_TABLES - set(store.admin.table_names()))
    blank = Store(":memory:")
    try:
        expected = set(blank.admin.table_names())
    finally:
        blank.close()
    return sorted(expected - set(store.admin.table_names()))


def _tables(store: Store) -> dict[str, Any]:
    missing = missing_tables(store)
    detail = "all present" if not missing else f"missing: {', '.join(missing)}. " + MISSING_STEP
    return check("tables", not missing, detail)


MISSING_STEP = (
    "The schema version says these exist, so migrations will not recreate them: move"
    " colony.db aside (it is kept for inspection) and a new one is created on the next event."
)


def _integrity_check(store: Store) -> dict[str, Any]:
    integrity = _integrity(store)
    detail = "; ".join(integrity[:5])
    if integrity != ["ok"]:
        detail += (
            ". The file is damaged: copy colony.db aside for inspection; hooks keep failing"
            " open until it is replaced (a new one is created on the next event)"
        )
    return check("integrity", integrity == ["ok"], detail)


def _fts(store: Store) -> dict[str, Any]:
    observations, indexed = store.count_observations(), store.admin.fts_indexed_count()
    consistent = indexed == observations and store.admin.fts_consistent()
    return check(
        "fts", consistent, f"{indexed} indexed of {observations} observations", fixable=True
    )


def _wal(store: Store) -> dict[str, Any]:
    """The WAL's size, and what a damaged log lost (recorded by the open that found it: a
    relay's start, this doctor's, or any open whose replay dropped committed frames)."""
    size = store.admin.wal_bytes()
    detail = f"{size / 1e6:.1f} MB"
    losses = [wal.loss_sentence(r) for r in wal.damage_records()]
    if losses:
        detail += ". " + "; ".join(losses) + ". `doctor --fix` marks the recorded losses seen"
    return check("wal", size < WAL_WARN_BYTES and not losses, detail, fixable=True)


def _held(store: Store) -> dict[str, Any]:
    """Events the store could not take (disk full, read-only) and still waiting to be
    recorded (a relay or the next hook delivers them), and any that keep failing."""
    found = held.counts()
    detail = f"{found['held']} waiting, {found['stuck']} failing"
    if found["held"]:
        detail += ": the store could not take them; they are recorded once it can be written"
    return check("held events", found["held"] == 0 and found["stuck"] == 0, detail)


def _sessions(store: Store) -> dict[str, Any]:
    silent = store.stale_open_sessions(store.now() - SILENT_SESSION)
    active = len(store.list_sessions(active_only=True, limit=100_000))
    return check(
        "sessions",
        not silent,
        f"{active} not ended, {len(silent)} of them silent for over a day",
        fixable=True,
    )


def _claims(store: Store) -> dict[str, Any]:
    expired = store.admin.expired_unreleased_claims()
    return check("claims", expired == 0, f"{expired} expired but not released", fixable=True)


def _work(store: Store) -> dict[str, Any]:
    """Taken work items whose owner ended or has been quiet past the stale threshold."""
    now = store.now()
    stale = store.stale_work(now - work.STALE_AFTER)
    detail = f"{len(stale)} taken items with an ended or quiet owner"
    if stale:
        named = "; ".join(
            f"#{i.id} {i.title[:40]} (task {i.task_id}, {work.stale_note(i, now)})"
            for i in stale[:5]
        )
        detail += (
            f": {named}. Reassign with `colony-tasks plan reassign ITEM --to HANDLE`"
            " (omit --to to reopen it)"
        )
    return check("work", not stale, detail)


def _vectors(store: Store) -> dict[str, Any]:
    """The embedding state and its next step. Vectors of a superseded model while the new
    one is being made are an upgrade under way, not a failure; only vectors of a model nothing
    here makes or replaces (a setting changed by hand) fail, with the way out."""
    from ..search.semantic import embedding_state  # numpy: doctor is a CLI process, never a hook

    state = embedding_state(store)
    model, missing = state["model"], state["missing"]
    parts = [f"{model or 'none'}: {state['vectors']} vectors"]
    if model and missing:
        parts.append(
            f"{missing} observations to embed (the MCP server's worker does it in the"
            " background; now: `colony-tasks embed` or `colony-tasks doctor --fix`)"
        )
    if state["superseded"]:
        old = ", ".join(f"{m}: {n}" for m, n in state["superseded"].items())
        parts.append(f"upgrading from {old}, dropped once every observation is re-embedded")
    if state["others"]:
        other = ", ".join(f"{m}: {n}" for m, n in state["others"].items())
        parts.append(
            f"unused vectors of {other} (another search.embedder setting; they stay until"
            " that model is configured again)"
        )
    return check("vectors", not state["others"], "; ".join(parts), fixable=bool(missing))


def _registration(store: Store) -> dict[str, Any]:
    """Whether the agents can run the hooks here (see :mod:`colony_tasks.install.status`)."""
    try:
        root: Path | None = repo_root()
    except InstallError:
        root = None
    problems, notes = status.report(root)
    found = status.where(root) + [p for ps in status.client_files(root).values() for p in ps]
    if problems:
        detail = " ".join(problems)
    else:
        home = str(Path.home())
        named = ", ".join(str(p).replace(home, "~", 1) for p in found)
        detail = f"registered in {named}."
    result = check("hooks", not problems, detail)
    rows = capabilities.rows_for(status.installed_agents(root))
    result["notes"] = notes + [f"what works in {row}" for row in rows]
    return result


def _hook_log(store: Store) -> dict[str, Any]:
    errors = hook_log_errors(time.time() - LOG_WINDOW)
    if not errors:
        return check("hook log", True, f"no failures in the last day ({paths.log_path()})")
    return check(
        "hook log",
        False,
        f"{len(errors)} failures in the last day in {paths.log_path()}; last: {errors[-1]}."
        " Once dealt with, `colony-tasks doctor --fix` archives them (to hooks.log.1).",
        fixable=True,
    )


def _dependency_graph(store: Store) -> dict[str, Any]:
    """Indexed work trees and what their indexer skipped (never a failure: bad input is
    skipped by design, and counted so a surprising number can be looked into)."""
    repos = store.graph.overview()
    if not repos:
        return check(
            "dependency graph", True, "not built yet (the MCP server or `colony-tasks index`)"
        )
    parts = []
    for r in repos:
        skipped = ", ".join(f"{k} {v}" for k, v in r["skipped"].items()) or "nothing"
        parts.append(
            f"{r['repo']}: {r['files']} files, {r['edges']} imports, skipped {skipped},"
            f" updated {ago(r['built_at'])}"
        )
    return check("dependency graph", True, "; ".join(parts))


CHECKS = (
    ("schema", _schema),
    ("tables", _tables),
    ("integrity", _integrity_check),
    ("fts", _fts),
    ("wal", _wal),
    ("held events", _held),
    ("sessions", _sessions),
    ("claims", _claims),
    ("work", _work),
    ("vectors", _vectors),
    ("hook log", _hook_log),
    ("hooks", _registration),
    ("dependency graph", _dependency_graph),
)


def _embed_repair(store: Store) -> list[str]:
    """Embed what lacks a vector of the configured model and drop superseded vectors."""
    from ..search import semantic  # numpy and the model: only when there is something to embed
    from ..search.embeddings import EmbedderUnavailable

    state = semantic.embedding_state(store)
    if not state["model"] or not (state["missing"] or state["superseded"]):
        return []
    try:
        embedder = semantic.configured_embedder()
    except EmbedderUnavailable as error:
        return [f"Skipped embedding: {error}"]
    if embedder is None:
        return []
    before = store.vectors.counts()
    done = semantic.backfill(store, embedder)
    dropped = sum(n for m, n in before.items() if m in state["superseded"]) - sum(
        n for m, n in store.vectors.counts().items() if m in state["superseded"]
    )
    out = [f"Embedded {done} observations with {embedder.model_id}."] if done else []
    if dropped:
        out.append(f"Dropped {dropped} vectors of superseded models.")
    return out


def repair(store: Store) -> list[str]:
    """Apply the safe repairs; returns one sentence per repair done (or why none was)."""
    integrity = _integrity(store)
    if integrity != ["ok"]:
        return [
            "Skipped the repairs: the database fails its integrity check"
            f" ({'; '.join(integrity[:2])}). Copy colony.db aside for inspection; hooks keep"
            " failing open until it is replaced (a new one is created on the next event)."
        ]
    missing = missing_tables(store)
    if missing:
        return [f"Skipped the repairs: tables missing ({', '.join(missing)}). {MISSING_STEP}"]
    done = []
    if (
        store.admin.fts_indexed_count() != store.count_observations()
        or not store.admin.fts_consistent()
    ):
        store.rebuild_fts()
        done.append(f"Rebuilt the search index ({store.admin.fts_indexed_count()} observations).")
    released = store.release_expired_claims()
    if released:
        done.append(f"Released {released} expired claims.")
    silent, others = [], 0
    for session in store.stale_open_sessions(store.now() - SILENT_SESSION):
        try:
            sessions.end_session(store, session)
        except NotAllowed:  # another member's, on a team store: its owner's or the admin's
            others += 1
        else:
            silent.append(session)
    if silent:
        done.append(
            f"Ended {len(silent)} sessions silent for more than a day: "
            + ", ".join(s.handle for s in silent[:10])
        )
    if others:
        done.append(
            f"Left {others} silent sessions of other team members (their owner or the"
            " admin ends them)."
        )
    done.extend(_embed_repair(store))
    archived = archive_hook_log()
    if archived:
        done.append(f"Archived {archived} hook failures to {paths.log_path()}.1.")
    seen = wal.acknowledge()
    if seen:
        done.append(f"Marked {seen} recorded WAL losses seen (the copies stay).")
    busy, frames, copied = store.admin.checkpoint()
    done.append(f"Checkpointed the WAL ({copied} of {frames} frames{', busy' if busy else ''}).")
    return done
