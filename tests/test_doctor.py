from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from colony_tasks import actions, doctor, paths
from colony_tasks.cli import cli
from colony_tasks.store import Store, open_default
from tests.helpers import join


def run_doctor(*args: str):
    result = CliRunner().invoke(cli, ["doctor", "--json", *args])
    return result.exit_code, json.loads(result.output)


def by_name(report: dict) -> dict[str, dict]:
    return {c["check"]: c for c in report["checks"]}


def test_healthy_store_passes_every_check(home: Path, repo: Path):
    store = open_default()
    join(store, "a", "claude", repo)
    actions.post(store, "a", "hello")
    store.close()
    code, report = run_doctor()
    assert code == 0 and report["ok"], report
    assert by_name(report)["integrity"]["detail"] == "ok"


def test_doctor_detects_and_fix_repairs_a_stale_index_expired_claims_and_silent_sessions(
    home: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
):
    store = open_default()
    join(store, "a", "claude", repo)
    for i in range(5):
        store.add_observation("note", f"note {i}", session_id="a")
    actions.claim(store, "a", ["x.py"], ttl_minutes=1)
    store.conn.execute("DELETE FROM observations_fts_docsize WHERE id = 2")  # damage the index
    store.conn.execute("UPDATE claims SET expires_at = 0")
    store.conn.execute("UPDATE sessions SET last_seen_at = 0")
    store.close()
    code, report = run_doctor()
    checks = by_name(report)
    assert code == 1 and not checks["fts"]["ok"] and checks["fts"]["fixable"]
    assert not checks["claims"]["ok"] and not checks["sessions"]["ok"]
    code, fixed = run_doctor("--fix")
    assert code == 0, fixed
    assert any("Rebuilt the search index" in r for r in fixed["repairs"])
    assert any("Released 1 expired claims" in r for r in fixed["repairs"])
    assert any("Ended 1 sessions" in r for r in fixed["repairs"])
    store = open_default()
    assert store.count_observations() >= 5  # nothing deleted
    store.close()


def test_corrupted_database_is_reported_clearly(home: Path):
    home.mkdir(parents=True, exist_ok=True)
    Path(paths.db_path()).write_bytes(b"this is not a database" * 200)
    code, report = run_doctor()
    assert code == 1
    (failure,) = report["checks"]
    assert (
        failure["check"] == "database"
        and "cannot be opened as a SQLite database" in failure["detail"]
    )


def test_vectors_of_another_model_and_hook_errors_are_reported(home: Path, repo: Path):
    store = open_default()
    obs = store.add_observation("note", "x")
    store.store_vectors("old-model", "me", [(obs, 2, "h", b"\x00" * 8)])
    store.close()
    paths.log("hook user-prompt-submit failed: OperationalError: database is locked")
    _, report = run_doctor()
    checks = by_name(report)
    assert not checks["vectors"]["ok"] and "old-model: 1" in checks["vectors"]["detail"]
    assert not checks["hook log"]["ok"] and "database is locked" in checks["hook log"]["detail"]


def test_missing_database_is_explained(home: Path):
    code, report = run_doctor()
    assert code == 1 and "does not exist yet" in report["checks"][0]["detail"]


def test_diagnose_in_process_matches_the_cli(store: Store):
    names = [c["check"] for c in doctor.diagnose(store)]
    assert names == [
        "schema",
        "integrity",
        "fts",
        "wal",
        "sessions",
        "claims",
        "work",
        "vectors",
        "hook log",
    ]
