"""Interface changes reach the sessions they affect: real git repositories, the installed console
script as hook processes and as ``colony-tasks index`` (what the MCP server's worker runs)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from colony_tasks.depgraph import interface_changes as interfaces
from colony_tasks.domain import sessions
from colony_tasks.store import Store
from tests.support.contracts import check_claude, check_codex, context_of
from tests.support.gitutil import git
from tests.support.hookrun import EXE, claude, codex, run_hook

PY_API = "def get_user(user_id):\n    return {'id': user_id}\n"
PY_API_NEW = "def get_user(user_id, *, org):\n    return {'id': user_id, 'org': org}\n"
PY_API_BODY = "def get_user(user_id):\n    return {'id': user_id, 'seen': True}\n"
TS_API = "export function getUser(userId: string): string {\n  return userId;\n}\n"
TS_API_NEW = "export function getUser(userId: string, org: string): string {\n  return userId;\n}\n"
TS_API_BODY = "export function getUser(userId: string): string {\n  return userId.trim();\n}\n"

LANGS = {
    "python": {
        "api": "src/api.py",
        "viewer": ("src/viewer.py", "from src.api import get_user\n\nprint(get_user(1))\n"),
        "other": ("src/other.py", "VALUE = 1\n"),
        "old": PY_API,
        "new": PY_API_NEW,
        "body": PY_API_BODY,
        "change": "get_user(user_id) → get_user(user_id, *, org)",
    },
    "typescript": {
        "api": "src/api.ts",
        "viewer": (
            "src/viewer.ts",
            "import { getUser } from './api';\nconsole.log(getUser('x'));\n",
        ),
        "other": ("src/other.ts", "export const VALUE = 1;\n"),
        "old": TS_API,
        "new": TS_API_NEW,
        "body": TS_API_BODY,
        "change": "getUser(userId: string, org: string)",
    },
}


def hook(event: str, home: Path, payload: dict) -> str:
    result = run_hook(event, payload, home)
    assert result.returncode == 0 and result.stderr == "", result.stderr
    check = check_codex if "turn_id" in payload else check_claude
    return context_of(check(event, result.stdout))


def index(home: Path, repo: Path) -> list[dict]:
    result = subprocess.run(
        [str(EXE), "index", "--repo", str(repo), "--json"],
        capture_output=True,
        text=True,
        env={**os.environ, "COLONY_TASKS_HOME": str(home)},
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def claude_edit(home: Path, sid: str, repo: Path, rel: str, text: str) -> None:
    (repo / rel).write_text(text)
    fields = {
        "tool_name": "Edit",
        "tool_input": {"file_path": str(repo / rel), "old_string": "a", "new_string": "b"},
        "tool_use_id": f"e-{sid}-{rel}",
    }
    hook("post-tool-use", home, claude("post-tool-use", sid, repo, tool_response={}, **fields))


def codex_patch(home: Path, sid: str, repo: Path, rel: str, text: str) -> None:
    (repo / rel).write_text(text)
    body = f"*** Begin Patch\n*** Update File: {rel}\n@@\n-a\n+b\n*** End Patch\n"
    fields = {"tool_name": "apply_patch", "tool_input": {"command": body}, "tool_use_id": "p"}
    hook("post-tool-use", home, codex("post-tool-use", sid, repo, tool_response="", **fields))


def prompt(home: Path, sid: str, repo: Path) -> str:
    return hook("user-prompt-submit", home, claude("user-prompt-submit", sid, repo, prompt="go on"))


@pytest.fixture(params=sorted(LANGS))
def lang(request) -> dict:
    return LANGS[request.param]


@pytest.fixture
def project(repo: Path, lang: dict) -> Path:
    (repo / "src").mkdir()
    (repo / lang["api"]).write_text(lang["old"])
    for rel, text in (lang["viewer"], lang["other"]):
        (repo / rel).write_text(text)
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "project")
    return repo


def start_three(home: Path, repo: Path) -> str:
    """A (Codex) will change the API; B (Claude) works on the viewer; C (Claude) elsewhere."""
    hook("session-start", home, codex("session-start", "cx-a", repo, source="startup"))
    for sid in ("cl-b", "cl-c"):
        hook("session-start", home, claude("session-start", sid, repo, source="startup"))
    store = Store(home / "colony.db")
    try:
        return store.get_session("cx-a").handle
    finally:
        store.close()


def test_a_signature_change_reaches_the_importers_session_once(
    home: Path, project: Path, lang: dict
):
    author = start_three(home, project)
    assert index(home, project)[0]["built"]
    claude_edit(home, "cl-b", project, *lang["viewer"])
    claude_edit(home, "cl-c", project, *lang["other"])
    codex_patch(home, "cx-a", project, lang["api"], lang["new"])

    [done] = index(home, project)

    assert len(done["notices"]) == 1
    said = prompt(home, "cl-b", project)
    viewer = lang["viewer"][0]
    line = next(x for x in said.splitlines() if lang["api"] in x)
    assert line.startswith(f"{lang['api']} changed ")
    assert lang["change"] in line
    assert f"({author}, just now); you import it in {viewer}" in line
    assert said.count(f"{lang['api']} changed") == 1
    assert lang["api"] not in prompt(home, "cl-b", project)  # once, not again
    assert lang["api"] not in prompt(home, "cl-c", project)  # C imports nothing of it
    assert lang["api"] not in prompt(home, "cx-a", project)  # nor is the author told


def test_a_body_only_change_relays_nothing(home: Path, project: Path, lang: dict):
    start_three(home, project)
    index(home, project)
    claude_edit(home, "cl-b", project, *lang["viewer"])
    prompt(home, "cl-b", project)
    codex_patch(home, "cx-a", project, lang["api"], lang["body"])

    [done] = index(home, project)

    assert done["edits"] == 2 and done["notices"] == []  # B's and A's
    assert lang["api"] not in prompt(home, "cl-b", project)


def test_the_change_arrives_mid_turn_after_a_tool_call_and_is_not_repeated(
    home: Path, project: Path, lang: dict
):
    start_three(home, project)
    index(home, project)
    claude_edit(home, "cl-b", project, *lang["viewer"])
    codex_patch(home, "cx-a", project, lang["api"], lang["new"])
    index(home, project)

    fields = {"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "ls"}
    hook("pre-tool-use", home, claude("pre-tool-use", "cl-b", project, **fields))
    now = hook(
        "post-tool-use",
        home,
        claude("post-tool-use", "cl-b", project, tool_response={"stdout": ""}, **fields),
    )

    assert f"{lang['api']} changed" in now and "you import it in" in now
    assert lang["api"] not in prompt(home, "cl-b", project)


def test_a_signature_changed_through_the_shell_is_relayed_too(home: Path, project: Path, lang):
    if lang["api"].endswith(".ts"):
        pytest.skip("one language is enough: the shell path only records the edit")
    start_three(home, project)
    index(home, project)
    claude_edit(home, "cl-b", project, *lang["viewer"])
    command = "sed -i 's/def get_user(user_id):/def get_user(user_id, *, org):/' src/api.py"
    fields = {"tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": "s"}
    hook("pre-tool-use", home, codex("pre-tool-use", "cx-a", project, **fields))
    subprocess.run(["sh", "-c", command], cwd=project, check=True)
    hook("post-tool-use", home, codex("post-tool-use", "cx-a", project, tool_response="", **fields))

    [done] = index(home, project)

    assert len(done["notices"]) == 1
    assert lang["change"] in prompt(home, "cl-b", project)


# -- the indexer in process: races, recipients, bad input -----------------------------------


def _session(store: Store, sid: str, repo: Path, agent: str = "claude"):
    return sessions.register(store, sid, agent=agent, cwd=str(repo)).session


def _edit(store: Store, sid: str, repo: Path, rel: str, text: str) -> None:
    from colony_tasks.usecases import events

    (repo / rel).write_text(text)
    event = events.Event(sid, "claude", str(repo))
    events.after_tool(store, event, events.ToolUse("Edit", "edit", (str(repo / rel),)))


def test_two_indexers_applying_the_same_edits_announce_the_change_once(
    store: Store, project: Path, lang: dict
):
    for sid in ("a", "b"):
        _session(store, sid, project)
    interfaces.index_repo(store, str(project))
    _edit(store, "b", project, *lang["viewer"])
    _edit(store, "a", project, lang["api"], lang["new"])
    second = Store(store.path)
    try:
        state = store.graph.repo(interfaces.repo_key(str(project)))
        first = interfaces.index_repo(store, str(project))
        # The second indexer read the same starting point before the first one wrote.
        late = interfaces._apply_edits(second, interfaces.repo_key(str(project)), state, {})
    finally:
        second.close()

    assert len(first.notices) == 1 and late.lost_race and late.notices == []
    assert (
        store.count_observations()
        and len(
            store.conn.execute("SELECT id FROM observations WHERE kind = 'interface'").fetchall()
        )
        == 1
    )


def test_an_ended_session_and_one_that_only_holds_other_files_are_not_addressed(
    store: Store, project: Path, lang: dict
):
    for sid in ("a", "b", "c", "d"):
        _session(store, sid, project)
    interfaces.index_repo(store, str(project))
    _edit(store, "b", project, *lang["viewer"])
    _edit(store, "d", project, *lang["viewer"])
    _edit(store, "c", project, *lang["other"])
    sessions.end_session(store, store.get_session("d"))
    _edit(store, "a", project, lang["api"], lang["new"])

    [notice] = interfaces.index_repo(store, str(project)).notices

    assert [r["session_id"] for r in store.recipients(notice)] == ["b"]


def test_a_glob_claim_over_the_importer_counts_as_working_on_it(
    store: Store, project: Path, lang: dict
):
    from colony_tasks.usecases import actions

    for sid in ("a", "b"):
        _session(store, sid, project)
    actions.claim(store, "b", ["src/view*"])
    interfaces.index_repo(store, str(project))
    _edit(store, "a", project, lang["api"], lang["new"])

    [notice] = interfaces.index_repo(store, str(project)).notices

    assert [r["session_id"] for r in store.recipients(notice)] == ["b"]


def test_bad_files_never_break_the_indexer_and_are_counted(store: Store, project: Path):
    (project / "src" / "broken.py").write_text("def f(:\n")
    (project / "src" / "blob.py").write_bytes(b"\x00\x01binary")
    (project / "src" / "huge.ts").write_text("// x\n" * 400_000)
    (project / "src" / "loop").symlink_to(project / "src")
    (project / ".gitignore").write_text("gen/\n")
    (project / "gen").mkdir()
    (project / "gen" / "out.py").write_text("import os\n")
    _session(store, "a", project)

    built = interfaces.index_repo(store, str(project))

    assert built.built
    files = {r[0] for r in store.graph.rows(interfaces.repo_key(str(project)))[0]}
    assert "gen/out.py" not in files and "src/blob.py" not in files
    assert built.skipped.get("binary") == 1 and built.skipped.get("too_large") == 1
    assert built.skipped.get("unparseable") == 1
    [overview] = store.graph.overview()
    assert overview["skipped"] == built.skipped


def test_the_mcp_servers_index_worker_builds_the_graph_and_relays_on_its_own(
    tmp_path: Path, project: Path, lang: dict
):
    import time

    from colony_tasks.mcp_server import background

    db = Store(tmp_path / "worker.db")
    for sid in ("a", "b"):
        _session(db, sid, project)
    worker = background.IndexWorker(db.path, interval=0.05).start()

    def wait_for(what: str, condition) -> None:
        deadline = time.monotonic() + 60
        while not condition():
            assert worker.thread.is_alive(), "the index worker died"
            assert time.monotonic() < deadline, f"timed out waiting for {what}"
            worker.stop_event.wait(0.05)

    try:
        wait_for("the first build", lambda: db.graph.repo(interfaces.repo_key(str(project))))
        _edit(db, "b", project, *lang["viewer"])
        _edit(db, "a", project, lang["api"], lang["new"])
        interface = "SELECT id FROM observations WHERE kind = 'interface'"
        wait_for("the notice", lambda: db.conn.execute(interface).fetchall())
    finally:
        worker.stop()
        db.close()


def test_indexers_taking_turns_never_relay_from_a_stale_cached_graph(
    store: Store, project: Path, lang: dict
):
    for sid in ("a", "b"):
        _session(store, sid, project)
    first: interfaces.Cache = {}
    second: interfaces.Cache = {}
    interfaces.index_repo(store, str(project), cache=first)
    _edit(store, "b", project, *lang["viewer"])
    _edit(store, "a", project, lang["api"], lang["new"])
    assert len(interfaces.index_repo(store, str(project), cache=second).notices) == 1
    # Back to the old signature: the first indexer's cached graph still has it, so it must
    # reload (the second one wrote since) to see that this is a change at all.
    _edit(store, "a", project, lang["api"], lang["old"])

    [notice] = interfaces.index_repo(store, str(project), cache=first).notices

    [item] = store.get_observations([notice])
    assert item.meta["changes"] and "→" in item.meta["changes"][0]


def test_the_worker_indexes_git_work_trees_only_never_a_plain_folder(
    store: Store, project: Path, tmp_path: Path
):
    plain = tmp_path / "home-folder"
    plain.mkdir()
    (plain / "notes.py").write_text("x = 1\n")
    _session(store, "in-repo", project)
    _session(store, "in-home", plain)

    done = interfaces.index_live(store)

    assert [d.repo for d in done] == [interfaces.repo_key(str(project))]
    assert store.graph.repo(interfaces.repo_key(str(plain))) is None


def test_index_command_says_what_it_built_and_relayed(home: Path, project: Path):
    from click.testing import CliRunner

    from colony_tasks.cli import cli

    result = CliRunner().invoke(cli, ["index", "--repo", str(project)])

    assert result.exit_code == 0, result.output
    assert (
        "built;" in result.output and "files indexed, 0 interface changes relayed" in result.output
    )


def test_the_interface_change_is_an_item_of_the_thread_in_the_viewer(
    store: Store, project: Path, lang: dict
):
    from starlette.testclient import TestClient

    from colony_tasks.viewer import create_app

    for sid in ("a", "b"):
        _session(store, sid, project)
    interfaces.index_repo(store, str(project))
    _edit(store, "b", project, *lang["viewer"])
    _edit(store, "a", project, lang["api"], lang["new"])
    [notice] = interfaces.index_repo(store, str(project)).notices
    [item] = store.get_observations([notice])

    token = "relay-token-0123456789"
    with TestClient(create_app(store, token, human_name="alice", cwd=str(project))) as client:
        page = client.get(f"/tasks/{item.task_id}?token={token}")

    assert page.status_code == 200
    assert "interface change" in page.text and f"{lang['api']} changed" in page.text
