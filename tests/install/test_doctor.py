from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from colony_tasks.base import paths
from colony_tasks.cli import cli
from colony_tasks.install import doctor
from colony_tasks.install import run as run_install
from colony_tasks.store import Store, open_default
from colony_tasks.usecases import actions
from tests.support.helpers import join


@pytest.fixture(autouse=True)
def agents_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home whose agents have the hooks installed (user scope), not the real one."""
    home = tmp_path / "agents-home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    run_install("install", command="/opt/venv/bin/colony-tasks")
    return home


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
    store.vectors.save("old-model", "me", [(obs, 2, "h", b"\x00" * 8)])
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
        "tables",
        "integrity",
        "fts",
        "wal",
        "held events",
        "sessions",
        "claims",
        "work",
        "vectors",
        "hook log",
        "hooks",
        "dependency graph",
    ]


def test_fix_with_a_current_version_but_missing_tables_explains_instead_of_crashing(home: Path):
    store = open_default()
    store.conn.executescript("DROP TABLE claims; DROP TABLE observations;")
    store.close()
    for args in ((), ("--fix",)):
        result = CliRunner().invoke(cli, ["doctor", "--json", *args])
        assert result.exit_code == 1, result.output  # a report, not a traceback
        report = json.loads(result.output)
        tables = by_name(report)["tables"]
        assert (
            not tables["ok"] and "claims" in tables["detail"] and "observations" in tables["detail"]
        )
        assert "move colony.db aside" in tables["detail"]
    assert report["repairs"] and report["repairs"][0].startswith("Skipped the repairs: tables")


def test_hooks_registered_nowhere_or_switched_off_are_reported(
    agents_home: Path, home: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
):
    open_default().close()
    code, report = run_doctor()
    hooks = by_name(report)["hooks"]
    assert hooks["ok"] and any("open /hooks" in n for n in hooks["notes"])  # Codex trust

    config = agents_home / ".codex" / "config.toml"
    config.write_text(config.read_text() + "\n[features]\nhooks = false\n")
    code, report = run_doctor()
    assert code == 1 and "Codex hooks are switched off" in by_name(report)["hooks"]["detail"]

    run_install("uninstall")
    code, report = run_doctor()
    assert "No colony-tasks hooks are registered" in by_name(report)["hooks"]["detail"]


def test_codex_project_hooks_in_an_untrusted_project_are_reported(
    agents_home: Path, home: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
):
    run_install("uninstall")
    run_install("install", ["codex"], "project", command="/opt/venv/bin/colony-tasks", cwd=repo)
    monkeypatch.chdir(repo)
    open_default().close()
    code, report = run_doctor()
    assert code == 1 and "Codex does not trust" in by_name(report)["hooks"]["detail"]
    config = agents_home / ".codex" / "config.toml"
    trusted = f'\n[projects."{repo}"]\ntrust_level = "trusted"\n'
    config.write_text(config.read_text() + trusted)
    code, report = run_doctor()
    assert by_name(report)["hooks"]["ok"], report


def test_doctor_counts_what_the_indexer_skipped(home: Path, repo: Path):
    from colony_tasks.depgraph import interface_changes as interfaces
    from colony_tasks.domain import sessions

    (repo / "bad.py").write_text("def f(:\n")
    (repo / "blob.py").write_bytes(b"\x00binary")
    store = open_default()
    try:
        sessions.register(store, "s1", agent="claude", cwd=str(repo))
        interfaces.index_repo(store, str(repo))
    finally:
        store.close()

    code, report = run_doctor()

    graph = {c["check"]: c for c in report["checks"]}["dependency graph"]
    assert graph["ok"] and "binary 1" in graph["detail"] and "unparseable 1" in graph["detail"]


def _static_era_store(texts: list[str]) -> Store:
    """A store as the previous default left it: every observation has a static vector."""
    from colony_tasks.search import semantic
    from colony_tasks.search.embeddings import get_embedder

    store = open_default()
    for text in texts:
        store.add_observation("note", text)
    static = get_embedder("static")
    assert static is not None
    assert semantic.backfill(store, static) == len(texts)
    return store


UPGRADE_TEXTS = [f"note {i}: the retry policy of worker {i}" for i in range(12)]


def test_an_upgrade_is_a_state_with_a_next_step_not_a_failure(home: Path, repo: Path):
    from colony_tasks.search.embeddings import MODEL_IDS

    _static_era_store(UPGRADE_TEXTS).close()
    _, report = run_doctor()
    vectors = by_name(report)["vectors"]
    assert vectors["ok"], vectors
    assert f"{len(UPGRADE_TEXTS)} observations to embed" in vectors["detail"]
    assert "colony-tasks embed" in vectors["detail"]
    assert f"upgrading from {MODEL_IDS['static']}: {len(UPGRADE_TEXTS)}" in vectors["detail"]

    code, fixed = run_doctor("--fix")
    assert code == 0, fixed
    assert any(f"Embedded {len(UPGRADE_TEXTS)} observations" in r for r in fixed["repairs"])
    assert any(f"Dropped {len(UPGRADE_TEXTS)} vectors" in r for r in fixed["repairs"])
    store = open_default()
    assert store.vectors.counts() == {MODEL_IDS["minilm"]: len(UPGRADE_TEXTS)}
    _, report = run_doctor()
    assert by_name(report)["vectors"]["detail"] == f"{MODEL_IDS['minilm']}: 12 vectors"


def test_the_mcp_worker_re_embeds_an_upgraded_store_and_drops_the_old_vectors(
    home: Path, repo: Path
):
    from colony_tasks.mcp_server.background import EmbeddingWorker
    from colony_tasks.search import semantic
    from colony_tasks.search.embeddings import MODEL_IDS

    store = _static_era_store(UPGRADE_TEXTS)
    partial = semantic.backfill(store, semantic.configured_embedder(), limit=5)
    assert partial == 5  # half-way: the old vectors stay, search keeps using what exists
    assert store.vectors.counts()[MODEL_IDS["static"]] == len(UPGRADE_TEXTS)
    EmbeddingWorker(store.path).drain()
    assert store.vectors.counts() == {MODEL_IDS["minilm"]: len(UPGRADE_TEXTS)}


def test_a_user_who_chose_the_static_table_keeps_it(home: Path, repo: Path):
    from colony_tasks.base import settings
    from colony_tasks.mcp_server.background import EmbeddingWorker
    from colony_tasks.search.embeddings import MODEL_IDS

    settings_file = Path(paths.settings_path())
    settings_file.parent.mkdir(parents=True, exist_ok=True)
    settings_file.write_text(json.dumps({"search": {"embedder": "static"}}))
    assert settings.get("search", "embedder") == "static"
    store = _static_era_store(UPGRADE_TEXTS)
    EmbeddingWorker(store.path).drain()
    assert store.vectors.counts() == {MODEL_IDS["static"]: len(UPGRADE_TEXTS)}
    _, report = run_doctor()
    assert by_name(report)["vectors"]["ok"]


def test_hooks_check_names_where_and_puts_each_note_on_its_own_line(home: Path, repo: Path):
    open_default().close()
    result = CliRunner().invoke(cli, ["doctor"])
    lines = result.output.splitlines()
    hooks = next(i for i, line in enumerate(lines) if line.startswith("✓ hooks:"))
    assert lines[hooks] == "✓ hooks: registered in ~/.claude/settings.json, ~/.codex/hooks.json."
    assert lines[hooks + 1].startswith("  note: Codex runs a new or changed hook only after")
    assert "Note:" not in result.output


def test_an_untrusted_codex_project_the_user_scope_covers_is_a_note_not_a_failure(
    agents_home: Path, home: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
):
    run_install("install", ["codex"], "project", command="/opt/venv/bin/colony-tasks", cwd=repo)
    monkeypatch.chdir(repo)
    open_default().close()
    code, report = run_doctor()
    hooks = by_name(report)["hooks"]
    assert hooks["ok"], hooks
    assert any("user-scope hooks" in n and "Codex does not trust" in n for n in hooks["notes"])


def test_claude_workspace_trust_note_only_until_the_folder_is_trusted(
    agents_home: Path, home: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
):
    run_install("install", ["claude"], "project", command="/opt/venv/bin/colony-tasks", cwd=repo)
    monkeypatch.chdir(repo)
    open_default().close()
    notes = by_name(run_doctor()[1])["hooks"]["notes"]
    assert any("workspace trust" in n for n in notes)
    state_file = agents_home / ".claude.json"
    state = json.loads(state_file.read_text())
    state["projects"][str(repo)]["hasTrustDialogAccepted"] = True
    state_file.write_text(json.dumps(state))
    notes = by_name(run_doctor()[1])["hooks"]["notes"]
    assert not any("workspace trust" in n for n in notes)


def test_hook_log_failures_name_the_log_and_fix_archives_them(home: Path, repo: Path):
    open_default().close()
    paths.log("hook stop failed: OperationalError: disk I/O error")
    code, report = run_doctor()
    log = by_name(report)["hook log"]
    assert not log["ok"] and log["fixable"] and paths.log_path() in log["detail"]
    code, report = run_doctor("--fix")
    assert any("Archived 1 hook failures" in r for r in report["repairs"])
    assert by_name(report)["hook log"]["ok"]
    assert "disk I/O error" in Path(paths.log_path() + ".1").read_text()


def test_plugin_and_settings_file_install_together_are_reported_with_which_to_remove(
    agents_home: Path, home: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.chdir(repo)
    open_default().close()
    settings = agents_home / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    data["enabledPlugins"] = {"colony-tasks@colony-tasks": True, "other@x": True}
    settings.write_text(json.dumps(data))

    code, report = run_doctor()
    hooks = by_name(report)["hooks"]
    assert code == 1 and not hooks["ok"]
    assert "installed twice for Claude Code" in hooks["detail"]
    assert "`colony-tasks uninstall --agent claude` (--scope user)" in hooks["detail"]
    assert "`claude plugin uninstall colony-tasks@colony-tasks`" in hooks["detail"]
    again = CliRunner().invoke(cli, ["install", "--agent", "claude"])
    assert "Warning: colony-tasks is installed twice for Claude Code" in again.output

    data["enabledPlugins"]["colony-tasks@colony-tasks"] = False
    settings.write_text(json.dumps(data))
    assert by_name(run_doctor()[1])["hooks"]["ok"]


def test_codex_plugin_and_hooks_json_install_together_are_reported(
    agents_home: Path, home: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.chdir(repo)
    open_default().close()
    config = agents_home / ".codex" / "config.toml"
    config.write_text(
        config.read_text() + '\n[plugins."colony-tasks@colony-tasks"]\nenabled = true\n'
    )
    code, report = run_doctor()
    detail = by_name(report)["hooks"]["detail"]
    assert code == 1 and "installed twice for Codex" in detail
    assert "`codex plugin remove colony-tasks@colony-tasks`" in detail


@pytest.mark.parametrize(
    ("agent", "label", "removal"),
    [
        ("gemini", "Gemini CLI", "gemini extensions uninstall colony-tasks"),
        ("qwen", "Qwen Code", "qwen extensions uninstall colony-tasks"),
        ("copilot", "Copilot CLI", "copilot plugin uninstall colony-tasks"),
    ],
)
def test_a_client_route_and_its_hook_file_install_together_are_reported(
    agents_home: Path,
    home: Path,
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    agent: str,
    label: str,
    removal: str,
):
    """The extension/plugin route (as `gemini extensions link`, `qwen extensions install` and
    `copilot plugin install` leave it) beside `colony-tasks install --agent <client>`."""
    monkeypatch.chdir(repo)
    open_default().close()
    assert by_name(run_doctor()[1])["hooks"]["ok"]  # the route alone, or the file alone, is fine
    if agent == "copilot":
        settings = agents_home / ".copilot" / "settings.json"
        settings.parent.mkdir(parents=True, exist_ok=True)
        settings.write_text(json.dumps({"enabledPlugins": {"colony-tasks@colony-tasks": True}}))
    else:
        (agents_home / f".{agent}" / "extensions" / "colony-tasks").mkdir(parents=True)
    assert by_name(run_doctor()[1])["hooks"]["ok"]
    run_install("install", (agent,), command="/opt/venv/bin/colony-tasks")

    code, report = run_doctor()
    detail = by_name(report)["hooks"]["detail"]
    assert code == 1 and f"installed twice for {label}" in detail
    assert f"`colony-tasks uninstall --agent {agent}`" in detail and f"`{removal}`" in detail
    again = CliRunner().invoke(cli, ["install", "--agent", agent])
    assert f"Warning: colony-tasks is installed twice for {label}" in again.output
