from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from colony_tasks import __version__
from colony_tasks.cli import cli
from colony_tasks.domain import claims as claims_mod
from colony_tasks.store import open_default
from colony_tasks.usecases import actions
from tests.support.helpers import join


@pytest.fixture
def run(home: Path, repo: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(repo)
    runner = CliRunner()

    def invoke(*args: str):
        return runner.invoke(cli, list(args), catch_exceptions=False)

    return invoke


@pytest.fixture
def lane(home: Path, repo: Path):
    store = open_default()
    a = join(store, "sess-a", "claude", repo)
    b = join(store, "sess-b", "codex", repo)
    actions.post(store, "sess-a", "Starting on the retry policy")
    actions.ask(store, "sess-b", "Which backoff?", to=a.session.handle)
    actions.claim(store, "sess-a", ["src/retry.py"])
    actions.report_blocker(store, "sess-b", "staging is down")
    store.close()
    return a, b


def test_version_and_short_help(run):
    assert __version__ in run("--version").output
    assert "Usage" in run("-h").output
    assert "Usage" in run("tasks", "-h").output


def test_status_reports_store_and_counts(run, lane, home: Path):
    data = json.loads(run("status", "--json").output)
    assert data["database"] == str(home / "colony.db")
    assert data["schema_version"] >= 2 and data["sessions"] == 2


def test_tasks_list_and_show_with_open_items(run, lane):
    a, b = lane
    listing = run("tasks")
    assert "proj@main" in listing.output
    shown = run("tasks", "show", str(a.task.id)).output
    assert "Pending questions:" in shown and "Which backoff?" in shown
    assert "Open blockers:" in shown and "staging is down" in shown
    assert "src/retry.py" in shown and a.session.handle in shown
    data = json.loads(run("tasks", "show", str(a.task.id), "--json").output)
    assert [q["text"] for q in data["questions"]] == ["Which backoff?"]
    assert [c["pattern"] for c in data["claims"]] == ["src/retry.py"]


def test_sessions_and_claims_listings(run, lane):
    a, _ = lane
    assert a.session.handle in run("sessions").output
    claims = json.loads(run("claims", "--json").output)
    assert [(c["pattern"], c["holder"], c["state"]) for c in claims] == [
        ("src/retry.py", a.session.handle, "live")
    ]


def test_search_finds_and_filters(run, lane):
    a, _ = lane
    out = json.loads(run("search", "retry policy", "--json").output)
    assert out[0]["kind"] == "note"
    assert run("search", 'NEAR("', "--task", str(a.task.id)).exit_code == 0


def test_human_posts_and_answers_through_the_same_rules(run, lane):
    a, b = lane
    result = run(
        "post", str(a.task.id), "Please use jitter", "--to", b.session.handle, "--as", "alice"
    )
    assert result.exit_code == 0 and "as alice" in result.output
    store = open_default()
    assert [o.text for o in actions.updates_since(store, "sess-b").items][-1] == "Please use jitter"
    q = actions.ask(store, "sess-a", "Ship it?", to="human")
    store.close()
    answered = run(
        "post", str(a.task.id), "yes", "--kind", "answer", "--reply-to", str(q.id), "--as", "alice"
    )
    assert answered.exit_code == 0, answered.output


def test_user_errors_are_sentences_without_tracebacks(run, lane):
    result = run("tasks", "show", "404")
    assert result.exit_code != 0
    assert "Task 404 does not exist. List tasks with `colony-tasks tasks`." in result.output
    assert "Traceback" not in result.output
    a, _ = lane
    bad = run("post", str(a.task.id), "hi", "--to", "ghost")
    assert bad.exit_code != 0 and "Session 'ghost' does not exist" in bad.output


REGISTERED = """
import importlib, json, pkgutil, sys
import colony_tasks.cli as package
from colony_tasks.cli.app import cli
found = {}
for info in pkgutil.iter_modules(package.__path__):
    before = set(cli.commands)
    importlib.import_module(f"colony_tasks.cli.{info.name}")
    for name in set(cli.commands) - before:
        found[name] = info.name
print(json.dumps(found))
"""


def test_the_lazy_command_table_names_the_module_that_registers_each_command():
    from colony_tasks.cli.app import COMMANDS

    out = subprocess.run(
        [sys.executable, "-c", REGISTERED], capture_output=True, text=True, check=True
    )
    assert json.loads(out.stdout) == COMMANDS


def test_a_command_loads_its_own_module_only(home: Path):
    code = (
        "import sys; from colony_tasks.cli import cli\n"
        "try:\n    cli.main(['status'], standalone_mode=False)\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('colony_tasks.cli.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = out.stdout.strip().splitlines()[-1]
    assert "colony_tasks.cli.core_cmds" in loaded
    for other in ("install_cmds", "doctor_cmd", "viewer_cmd", "chain_cmds", "search_cmds"):
        assert f"colony_tasks.cli.{other}" not in loaded


def test_the_claims_listing_says_when_it_shows_part_of_them(run, lane):
    from tests.support.helpers import fill

    store = open_default()
    fill(store, "sess-b", claims_mod.LIST_LIMIT + 500)
    store.close()
    out = run("claims").output
    assert f"Showing {claims_mod.LIST_LIMIT:,} of {claims_mod.LIST_LIMIT + 501:,} claims" in out
    assert "Showing" not in run("sessions").output


@pytest.mark.parametrize(
    "argv",
    [
        ("resolve", "999"),
        ("withdraw", "999"),
        ("post", "999", "hello"),
        ("chain", "say", "999", "hello"),
        ("plan", "done", "999", "finished"),
    ],
)
def test_a_refused_command_leaves_no_participant_behind(run, lane, argv):
    result = CliRunner().invoke(cli, [*argv, "--as", "typo-name"])
    assert result.exit_code == 1 and "Error:" in result.output
    store = open_default()
    try:
        handles = [s.handle for s in store.list_sessions(limit=100)]
    finally:
        store.close()
    assert "typo-name" not in handles
    assert "typo-name" in run("post", "1", "now for real", "--as", "typo-name").output


def test_resolve_on_a_question_says_what_the_number_is(run, lane):
    a, _ = lane
    shown = json.loads(run("tasks", "show", str(a.task.id), "--json").output)
    question = shown["questions"][0]["id"]
    result = CliRunner().invoke(cli, ["resolve", str(question)])
    assert result.exit_code == 1
    assert result.output.strip() == (
        f"Error: #{question} is a question, not a blocker (task {a.task.id})."
        f" See who is on task {a.task.id} with `colony-tasks tasks show {a.task.id}`."
    )
    note = json.loads(run("post", str(a.task.id), "just a note", "--json").output)["id"]
    withdrawn = CliRunner().invoke(cli, ["withdraw", str(note)])
    assert f"#{note} is a note, not a question or handoff" in withdrawn.output
