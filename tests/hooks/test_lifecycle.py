"""The lifecycle beyond the six events, end to end through the installed console script:
re-briefs after compaction and /clear, subagent briefs and attribution, failed shell
commands."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from colony_tasks.base.errors import Conflict
from colony_tasks.cli import cli
from colony_tasks.domain.presence import CUT_OFF_GRACE
from colony_tasks.render.briefing import REBRIEF_CHARS, SUBAGENT_CHARS
from colony_tasks.store import Store
from colony_tasks.usecases import actions
from colony_tasks.viewer.data import sessions_view
from tests.support.contracts import check_claude, check_codex, context_of
from tests.support.hookrun import claude, codex, run_hook


def cc(event: str, home: Path, payload: dict) -> str:
    result = run_hook(event, payload, home, agent="claude")
    assert result.returncode == 0 and result.stderr == "", result.stderr
    return context_of(check_claude(event, result.stdout))


def cx(event: str, home: Path, payload: dict) -> str:
    result = run_hook(event, payload, home, agent="codex")
    assert result.returncode == 0 and result.stderr == "", result.stderr
    return context_of(check_codex(event, result.stdout))


def edit(
    home: Path,
    sid: str,
    repo: Path,
    path: Path,
    *,
    subagent: dict | None = None,
    content: str = "x = 1\n",
) -> str:
    """A Write through both hooks: what they said, before and after it."""
    tool_input = {"file_path": str(path), "content": content}
    extra = subagent or {}
    before = cc(
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
    path.write_text(content)
    after = cc(
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
    return "\n".join(x for x in (before, after) if x)


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
    warning = edit(home, "cl-1", repo, repo / "shared.py", subagent=inside, content="x = 2\n")
    store = Store(home / "colony.db")
    other = store.get_session("cl-2").handle
    assert warning.startswith(f"colony-tasks: shared.py L1 meets {other}'s change (main)")
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


def test_a_session_cut_off_by_a_rate_limit_is_seen_at_once_and_its_holdings_free_up(
    home: Path, repo: Path
):
    cc("session-start", home, claude("session-start", "cl-1", repo, source="startup"))
    cc("session-start", home, claude("session-start", "cl-2", repo, source="startup"))
    store = Store(home / "colony.db")
    cut = store.get_session("cl-1")
    planned = actions.plan_work(store, "cl-1", [{"title": "schema", "files": ["db.sql"]}])
    actions.take_work(store, "cl-1", planned.ids[0])
    actions.claim(store, "cl-1", ["api.py"])
    store.close()

    failure = claude("stop-failure", "cl-1", repo, error="rate_limit", error_details="429")
    result = run_hook("stop-failure", failure, home, agent="claude")
    assert result.returncode == 0 and result.stdout == "" and result.stderr == ""

    # The lane sees it at once: in the other session's next turn and its briefing.
    news = cc("user-prompt-submit", home, claude("user-prompt-submit", "cl-2", repo, prompt="go"))
    assert f"{cut.handle} was cut off (rate_limit)" in news
    brief = cc("session-start", home, claude("session-start", "cl-2", repo, source="resume"))
    assert f"{cut.handle} (claude, cut off: rate_limit (just now))" in brief
    assert "api.py [stale]" in brief
    # Its claims no longer count as a collision: editing api.py says it is stale.
    warning = edit(home, "cl-2", repo, repo / "api.py")
    assert f"api.py is held by {cut.handle} (stale" in warning  # said before the edit
    assert "You just edited" not in warning  # a stale holder is no live collision after it
    store = Store(home / "colony.db")
    with pytest.raises(Conflict):  # within the grace period it stays its
        actions.take_work(store, "cl-2", planned.ids[0])
    cut_claims = store.list_claims(session_id="cl-1", include_expired=True)
    assert cut_claims and all(c["expires_at"] <= store.now() + CUT_OFF_GRACE for c in cut_claims)
    store.close()
    # After the grace period its item can be taken, with its files.
    later = Store(home / "colony.db", clock=lambda: time.time() + CUT_OFF_GRACE + 1)
    taken = actions.take_work(later, "cl-2", planned.ids[0])
    assert taken.item.owner == "cl-2"
    assert "db.sql" in {c["pattern"] for c in later.list_claims(session_id="cl-2")}
    assert later.list_claims(session_id="cl-1") == []  # expired


def test_a_cut_off_session_that_comes_back_is_active_again(home: Path, repo: Path):
    cc("session-start", home, claude("session-start", "cl-1", repo, source="startup"))
    run_hook("stop-failure", claude("stop-failure", "cl-1", repo, error="overloaded"), home)
    store = Store(home / "colony.db")
    assert store.get_session("cl-1").waiting == "cut-off:overloaded"
    cc("user-prompt-submit", home, claude("user-prompt-submit", "cl-1", repo, prompt="again"))
    assert store.get_session("cl-1").waiting == ""


def test_a_session_waiting_on_its_human_shows_so_until_it_acts(home: Path, repo: Path):
    cc("session-start", home, claude("session-start", "cl-1", repo, source="startup"))
    cc("session-start", home, claude("session-start", "cl-2", repo, source="startup"))
    store = Store(home / "colony.db")
    handle = store.get_session("cl-1").handle
    for kind in ("auth_success", "permission_prompt"):
        note = claude(
            "notification",
            "cl-1",
            repo,
            message="Claude needs your permission",
            notification_type=kind,
        )
        result = run_hook("notification", note, home, agent="claude")
        assert result.returncode == 0 and result.stdout == "" and result.stderr == ""
        expected = "human" if kind == "permission_prompt" else ""
        assert store.get_session("cl-1").waiting == expected
    brief = cc("session-start", home, claude("session-start", "cl-2", repo, source="resume"))
    assert f"{handle} (claude, waiting on its human (just now))" in brief
    listed = CliRunner().invoke(cli, ["sessions"], env={"COLONY_TASKS_HOME": str(home)})
    assert listed.exit_code == 0 and "waiting on its human" in listed.output
    row = [s for s in sessions_view(store)["sessions"] if s["id"] == "cl-1"][0]
    assert row["presence"] == "waiting" and row["waiting"].startswith("waiting on its human")
    # Its next event (the permission granted, the tool ran) clears it.
    cc(
        "post-tool-use",
        home,
        claude(
            "post-tool-use",
            "cl-1",
            repo,
            tool_name="Bash",
            tool_input={"command": "ls"},
            tool_response={"stdout": ""},
        ),
    )
    assert store.get_session("cl-1").waiting == ""


def read(home: Path, sid: str, repo: Path, path: Path) -> str:
    payload = claude(
        "pre-tool-use", sid, repo, tool_name="Read", tool_input={"file_path": str(path)}
    )
    return cc("pre-tool-use", home, payload)


def test_reading_a_held_file_says_who_holds_it_once(home: Path, repo: Path):
    cc("session-start", home, claude("session-start", "cl-1", repo, source="startup"))
    cc("session-start", home, claude("session-start", "cl-2", repo, source="startup"))
    store = Store(home / "colony.db")
    holder = store.get_session("cl-1").handle
    actions.claim(store, "cl-1", ["src/api.py"], note="reshaping")
    decided = actions.record_decision(store, "cl-1", "api.py keeps get_user(user_id) as is.")
    actions.record_decision(store, "cl-1", "Unrelated: tabs are banned.")
    store.close()
    (repo / "src").mkdir()

    line = read(home, "cl-2", repo, repo / "src" / "api.py")

    assert "\n" not in line
    assert line.startswith(f"colony-tasks: src/api.py is held by {holder} (claimed since")
    assert f'latest decision naming it: #{decided.id} "api.py keeps get_user' in line
    assert f'ask_question(to="{holder}"' in line
    # Once per session and file; nothing for the holder itself or for a file nobody holds.
    assert read(home, "cl-2", repo, repo / "src" / "api.py") == ""
    assert read(home, "cl-1", repo, repo / "src" / "api.py") == ""
    assert read(home, "cl-2", repo, repo / "README.md") == ""


def test_reading_a_file_nobody_holds_writes_nothing(home: Path, repo: Path):
    cc("session-start", home, claude("session-start", "cl-1", repo, source="startup"))
    store = Store(home / "colony.db")
    seen = store.get_session("cl-1").last_seen_at
    fingerprints = store._one("SELECT COUNT(*) FROM hook_events")[0]
    assert read(home, "cl-1", repo, repo / "free.py") == ""
    # No fingerprint, no note, no refresh: the read wrote nothing.
    assert store._one("SELECT COUNT(*) FROM hook_events")[0] == fingerprints
    assert store._one("SELECT COUNT(*) FROM read_notes")[0] == 0
    assert store.get_session("cl-1").last_seen_at == seen
