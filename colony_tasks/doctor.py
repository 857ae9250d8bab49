"""Health checks of the store and the hook log, and the safe repairs ``doctor --fix`` applies.

Repairs never delete observations: they rebuild the FTS index, checkpoint the WAL, release
expired claims and end sessions that have been silent for more than a day.
"""

from __future__ import annotations

import os
import sqlite3
import time
from typing import Any

from . import paths, settings, thread
from .embeddings import MODEL_IDS
from .store import Store
from .store.schema import LATEST

SILENT_SESSION = 24 * 3600
WAL_WARN_BYTES = 64 * 1024 * 1024
LOG_WINDOW = 24 * 3600


def check(name: str, ok: bool, detail: str, *, fixable: bool = False) -> dict[str, Any]:
    return {"check": name, "ok": ok, "detail": detail, "fixable": fixable and not ok}


def hook_log_errors(since: float) -> list[str]:
    """Failure lines of the hook log (and its fallback) newer than ``since``."""
    found = []
    for path in (paths.log_path(), paths.fallback_log_path()):
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                lines = handle.readlines()
        except OSError:
            continue
        for line in lines:
            try:
                stamp = time.mktime(time.strptime(line[:19], "%Y-%m-%dT%H:%M:%S"))
            except ValueError:
                continue
            if stamp >= since and " failed" in line:
                found.append(line.rstrip())
    return found


def open_for_doctor(path: str) -> tuple[Store | None, dict[str, Any] | None]:
    """The store, or a failed check that says clearly why it cannot be opened."""
    if not os.path.exists(path):
        return None, check(
            "database",
            False,
            f"{path} does not exist yet; hooks create it on the first agent event.",
        )
    try:
        return Store(path), None
    except sqlite3.DatabaseError as error:
        return None, check(
            "database",
            False,
            f"{path} cannot be opened as a SQLite database ({error}). Hooks keep failing open "
            "and log it; move the file aside (it is kept for inspection) and a new one is "
            "created on the next event.",
        )


def diagnose(store: Store) -> list[dict[str, Any]]:
    now = store.now()
    checks = []
    version = store.schema_version()
    checks.append(check("schema", version == LATEST, f"version {version} (latest {LATEST})"))
    try:
        integrity = store.integrity_check()
    except sqlite3.DatabaseError as error:
        integrity = [str(error)]
    checks.append(check("integrity", integrity == ["ok"], "; ".join(integrity[:5])))
    observations, indexed = store.count_observations(), store.fts_indexed_count()
    consistent = indexed == observations and store.fts_consistent()
    checks.append(
        check("fts", consistent, f"{indexed} indexed of {observations} observations", fixable=True)
    )
    wal = store.wal_bytes()
    checks.append(check("wal", wal < WAL_WARN_BYTES, f"{wal / 1e6:.1f} MB", fixable=True))
    silent = store.stale_open_sessions(now - SILENT_SESSION)
    active = len(store.list_sessions(active_only=True, limit=100_000))
    checks.append(
        check(
            "sessions",
            not silent,
            f"{active} not ended, {len(silent)} of them silent for over a day",
            fixable=True,
        )
    )
    expired = store.expired_unreleased_claims()
    checks.append(
        check("claims", expired == 0, f"{expired} expired but not released", fixable=True)
    )
    configured = MODEL_IDS.get(settings.get("search", "embedder") or "static")
    counts = store.vector_counts()
    stale_models = {m: n for m, n in counts.items() if m != configured}
    detail = ", ".join(f"{m}: {n}" for m, n in counts.items()) or "none"
    checks.append(
        check("vectors", not stale_models, f"{detail} (configured: {configured or 'none'})")
    )
    errors = hook_log_errors(time.time() - LOG_WINDOW)
    checks.append(
        check(
            "hook log",
            not errors,
            f"{len(errors)} failures in the last day" + (f"; last: {errors[-1]}" if errors else ""),
        )
    )
    return checks


def repair(store: Store) -> list[str]:
    """Apply the safe repairs; returns one sentence per repair done."""
    done = []
    if store.fts_indexed_count() != store.count_observations() or not store.fts_consistent():
        store.rebuild_fts()
        done.append(f"Rebuilt the search index ({store.fts_indexed_count()} observations).")
    released = store.release_expired_claims()
    if released:
        done.append(f"Released {released} expired claims.")
    silent = store.stale_open_sessions(store.now() - SILENT_SESSION)
    for session in silent:
        thread.end_session(store, session)
    if silent:
        done.append(
            f"Ended {len(silent)} sessions silent for more than a day: "
            + ", ".join(s.handle for s in silent[:10])
        )
    busy, frames, copied = store.checkpoint()
    done.append(f"Checkpointed the WAL ({copied} of {frames} frames{', busy' if busy else ''}).")
    return done
