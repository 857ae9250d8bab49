"""The lifecycle beyond the six events, end to end through the installed console script:
re-briefs after compaction and /clear, subagent briefs and attribution, failed shell
commands."""

from __future__ import annotations

from pathlib import Path

from colony_tasks import actions
from colony_tasks.briefing import REBRIEF_CHARS, SUBAGENT_CHARS
from colony_tasks.store import Store
from tests.contracts import check_claude, check_codex, context_of
from tests.hookrun import claude, codex, run_hook


def cc(event: str, home: Path, payload: dict) -> str:
    result = run_hook(event, payload, home, agent="claude")
    assert result.returncode == 0 and result.stderr == "", result.stderr
    return context_of(check_claude(event, result.stdout))


def cx(event: str, home: Path, payload: dict) -> str:
    result = run_hook(event, payload, home, agent="codex")
    assert result.returncode == 0 and result.stderr == "", result.stderr
    return context_of(check_codex(event, result.stdout))


def edit(home: Path, sid: str, repo: Path, path: Path, *, subagent: dict | None = None) -> str:
    tool_input = {"file_path": str(path), "content": "x = 1\n"}
    extra = subagent or {}
    cc(
        "pre-tool-use",
        home,
        claude(
            "pre-tool-use",
            sid,
            repo,
            tool_name="Write",
            tool_input=tool_input,
            tool_use_id=f"w-{sid}-{path.name}",
            **extra,
        ),
    )
    path.write_text("x = 1\n")
    return cc(
        "post-tool-use",
        home,
        claude(
            "post-tool-use",
            sid,
            repo,
            tool_name="Write",
            tool_input=tool_input,
            tool_response={"filePath": str(path)},
            tool_use_id=f"w-{sid}-{path.name}",
            **extra,
        ),
    )


def test_compaction_rebriefs_with_the_state_and_what_is_new_since_last_told(home: Path, repo: Path):
    cc("session-start", home, claude("session-start", "cl-1", repo, source="startup"))
    cx("session-start", home, codex("session-start", "cx-1", repo, source="startup"))
    edit(home, "cl-1", repo, repo / "mine.py")
    store = Store(home / "colony.db")
    me, other = store.get_session("cl-1"), store.get_session("cx-1")
    actions.claim(store, "cx-1", ["api.py"], note="reshaping the API")
    asked = actions.ask(store, "cx-1", "Shall I rename get_user?", to=me.handle)
    # Told at the prompt: the question is delivered, and the cursor passes it.
    told = cc("user-prompt-submit", home, claude("user-prompt-submit", "cl-1", repo, prompt="go"))
    assert "Shall I rename get_user?" in told
    later = actions.record_decision(store, "cx-1", "The API keeps snake_case names.")
    store.close()

    rebrief = cc("session-start", home, claude("session-start", "cl-1", repo, source="compact"))

    assert rebrief.startswith("colony-tasks (re-brief")
    assert len(rebrief) <= REBRIEF_CHARS
    assert f"you are {me.handle}" in rebrief
    assert "You hold: mine.py." in rebrief  # its own claims, which it no longer remembers
    assert f"{other.handle} holds api.py" in rebrief  # others' claims
    # Still waiting on it, although it was told before: it is state, not news.
    assert f"answer_question(question_id={asked.id}" in rebrief
    # What is new since it was last told, once.
    assert "New since you were last told:" in rebrief and "snake_case" in rebrief
    assert f"#{later.id}" in rebrief
    again = cc("user-prompt-submit", home, claude("user-prompt-submit", "cl-1", repo, prompt="x"))
    assert "snake_case" not in again


def test_a_codex_clear_rebriefs_and_a_startup_briefs_as_before(home: Path, repo: Path):
    first = cx("session-start", home, codex("session-start", "cx-1", repo, source="startup"))
    assert "Nobody else is here yet" in first
    cleared = cx("session-start", home, codex("session-start", "cx-1", repo, source="clear"))
    assert cleared.startswith("colony-tasks (re-brief") and "Nothing new" in cleared
    resumed = cx("session-start", home, codex("session-start", "cx-1", repo, source="resume"))
    assert not resumed.startswith("colony-tasks (re-brief")


def test_a_session_first_seen_at_compaction_gets_the_full_briefing(home: Path, repo: Path):
    brief = cc("session-start", home, claude("session-start", "cl-new", repo, source="compact"))
    assert "Nobody else is here yet" in brief and "re-brief" not in brief


def test_rebrief_stays_within_its_budget_when_much_is_new(home: Path, repo: Path):
    cc("session-start", home, claude("session-start", "cl-1", repo, source="startup"))
    cx("session-start", home, codex("session-start", "cx-1", repo, source="startup"))
    store = Store(home / "colony.db")
    actions.claim(store, "cx-1", [f"pkg/mod{i}.py" for i in range(10)])
    for i in range(30):
        actions.record_decision(store, "cx-1", f"Decision {i}: " + "words " * 40)
    store.close()
    rebrief = cc("session-start", home, claude("session-start", "cl-1", repo, source="compact"))
    assert len(rebrief) <= REBRIEF_CHARS
    assert "Decision 0:" in rebrief
    assert "… more: task_timeline(task_id=" in rebrief
    assert rebrief.endswith("search.")  # the tools line closes it


def test_subagent_gets_a_short_brief_naming_others_claims(home: Path, repo: Path):
    cc("session-start", home, claude("session-start", "cl-1", repo, source="startup"))
    cx("session-start", home, codex("session-start", "cx-1", repo, source="startup"))
    store = Store(home / "colony.db")
    me, other = store.get_session("cl-1"), store.get_session("cx-1")
    actions.claim(store, "cx-1", ["api.py", "db/*.sql"])
    store.close()
    payload = claude("subagent-start", "cl-1", repo, agent_id="a9f3c2d1e0", agent_type="Explore")
    brief = cc("subagent-start", home, payload)
    assert len(brief) <= SUBAGENT_CHARS
    assert f"subagent (Explore) of {me.handle}" in brief
    assert f"{other.handle} holds api.py, db/*.sql." in brief
    assert "Do not edit files others hold" in brief
    # Codex's spawned agent: same brief, a valid Codex output.
    cx("session-start", home, codex("session-start", "cx-2", repo, source="startup"))
    spawned = cx(
        "subagent-start",
        home,
        codex("subagent-start", "cx-2", repo, agent_id="019a", agent_type="worker"),
    )
    assert "subagent (worker) of codex-" in spawned and "api.py" in spawned


def test_subagent_brief_with_nothing_held_is_one_line(home: Path, repo: Path):
    cc("session-start", home, claude("session-start", "cl-1", repo, source="startup"))
    payload = claude("subagent-start", "cl-1", repo, agent_id="a1", agent_type="general-purpose")
    brief = cc("subagent-start", home, payload)
    assert "\n" not in brief and "No files are held by others." in brief


def test_a_subagents_edit_is_its_parents_and_names_the_subagent(home: Path, repo: Path):
    cc("session-start", home, claude("session-start", "cl-1", repo, source="startup"))
    cc("session-start", home, claude("session-start", "cl-2", repo, source="startup"))
    edit(home, "cl-2", repo, repo / "shared.py")
    inside = {"agent_id": "a9f3c2d1e0b7", "agent_type": "Explore"}
    warning = edit(home, "cl-1", repo, repo / "shared.py", subagent=inside)
    assert "You just edited a file another session is working on" in warning
    store = Store(home / "colony.db")
    assert store.get_session("a9f3c2d1e0b7") is None  # no session of its own
    held = {c["pattern"] for c in store.list_claims(session_id="cl-1")}
    assert held == {"shared.py"}
    task = store.tasks_of_session("cl-1")[0].id
    edits = [o for o in store.timeline(task, kinds=["edit"]) if o.session_id == "cl-1"]
    assert [o.meta.get("subagent") for o in edits] == ["Explore a9f3c2d1"]
    assert "subagent Explore a9f3c2d1" in edits[0].text


def test_a_failed_shell_command_that_edited_a_claimed_file_warns(home: Path, repo: Path):
    target = repo / "api.py"
    target.write_text("a = 1\n")
    cc("session-start", home, claude("session-start", "cl-1", repo, source="startup"))
    cc("session-start", home, claude("session-start", "cl-2", repo, source="startup"))
    store = Store(home / "colony.db")
    holder = store.get_session("cl-1").handle
    actions.claim(store, "cl-1", ["api.py"])
    store.close()
    command = "sed -i s/a/b/ api.py && exit 1"
    bash = {"command": command}
    cc(
        "pre-tool-use",
        home,
        claude("pre-tool-use", "cl-2", repo, tool_name="Bash", tool_input=bash, tool_use_id="f1"),
    )
    target.write_text("b = 1\n")  # what the command did before failing
    failure = claude(
        "post-tool-use-failure",
        "cl-2",
        repo,
        tool_name="Bash",
        tool_input=bash,
        tool_use_id="f1",
        error="Exit code 1",
        is_interrupt=False,
    )
    warning = cc("post-tool-use-failure", home, failure)
    assert "You just edited a file another session is working on" in warning
    assert f"api.py is held by {holder}" in warning
    store = Store(home / "colony.db")
    task = store.tasks_of_session("cl-2")[0].id
    ran = [o for o in store.timeline(task, kinds=["command"]) if o.session_id == "cl-2"]
    assert ran[0].text == command and ran[0].meta.get("failed") is True
    assert {c["pattern"] for c in store.list_claims(session_id="cl-2")} == {"api.py"}


def test_a_failed_edit_tool_records_nothing(home: Path, repo: Path):
    cc("session-start", home, claude("session-start", "cl-1", repo, source="startup"))
    tool_input = {"file_path": str(repo / "x.py"), "old_string": "nope", "new_string": "y"}
    payload = claude(
        "post-tool-use-failure",
        "cl-1",
        repo,
        tool_name="Edit",
        tool_input=tool_input,
        error="String not found",
    )
    assert cc("post-tool-use-failure", home, payload) == ""
    store = Store(home / "colony.db")
    assert store.list_claims(session_id="cl-1") == []
