"""End to end: the installed console script run as a subprocess with real hook payloads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from colony_tasks.store import Store
from tests.support.contracts import SCHEMAS, check_claude, check_codex, context_of
from tests.support.hookrun import EXE, claude, codex, patch, run_hook


def cc(event: str, home: Path, payload: dict, **kw) -> str:
    result = run_hook(event, payload, home, **kw)
    assert result.returncode == 0 and result.stderr == "", result.stderr
    return context_of(check_claude(event, result.stdout))


def cx(event: str, home: Path, payload: dict, **kw) -> str:
    result = run_hook(event, payload, home, **kw)
    assert result.returncode == 0 and result.stderr == "", result.stderr
    return context_of(check_codex(event, result.stdout))


def test_console_script_is_installed():
    assert EXE.exists()


def test_claude_and_codex_sessions_coordinate_through_hooks(home: Path, repo: Path):
    src = repo / "src"
    src.mkdir()
    target = src / "api.py"
    target.write_text("".join(f"line {i}\n" for i in range(1, 11)))

    # Both sessions join the same lane task.
    alone = cc(
        "session-start",
        home,
        claude("session-start", "cl-1", repo, source="startup"),
        agent="claude",
    )
    assert "Nobody else is here yet" in alone and "proj@main" in alone
    brief = cx("session-start", home, codex("session-start", "cx-1", src, source="startup"))
    assert "claude-" in brief and "Others:" in brief
    store = Store(home / "colony.db")
    (claude_s, codex_s) = store.get_session("cl-1"), store.get_session("cx-1")
    assert claude_s.agent == "claude" and codex_s.agent == "codex"
    assert {t.id for t in store.tasks_of_session("cl-1")} == {
        t.id for t in store.tasks_of_session("cx-1")
    }

    # Claude edits line 5 of api.py: recorded and auto-claimed; nothing to say yet.
    edit = {"file_path": str(target), "old_string": "line 5\n", "new_string": "line five\n"}
    assert (
        cc(
            "pre-tool-use",
            home,
            claude(
                "pre-tool-use", "cl-1", repo, tool_name="Edit", tool_input=edit, tool_use_id="t1"
            ),
        )
        == ""
    )
    target.write_text(target.read_text().replace("line 5\n", "line five\n"))
    assert (
        cc(
            "post-tool-use",
            home,
            claude(
                "post-tool-use",
                "cl-1",
                repo,
                tool_name="Edit",
                tool_input=edit,
                tool_response={"filePath": str(target)},
                tool_use_id="t1",
            ),
        )
        == ""
    )
    assert [c["pattern"] for c in store.list_claims(session_id="cl-1")] == ["src/api.py"]

    # Codex is warned before its patch of the same line (git will conflict), and only once.
    body = {
        "command": "*** Begin Patch\n*** Update File: api.py\n@@\n-line five\n+line V\n"
        "*** End Patch\n"
    }
    before = cx(
        "pre-tool-use",
        home,
        codex(
            "pre-tool-use", "cx-1", src, tool_name="apply_patch", tool_input=body, tool_use_id="p1"
        ),
    )
    assert before == (
        f"colony-tasks: api.py L5 meets {claude_s.handle}'s change (main): git will conflict; "
        f'ask_question(to="{claude_s.handle}") first.'
    )
    target.write_text(target.read_text().replace("line five\n", "line V\n"))
    after = cx(
        "post-tool-use",
        home,
        codex(
            "post-tool-use",
            "cx-1",
            src,
            tool_name="apply_patch",
            tool_input=body,
            tool_response="Success",
            tool_use_id="p1",
        ),
    )
    assert after == ""

    # Claude's next prompt delivers Codex's edit once; the prompt after that prints nothing.
    delta = cc(
        "user-prompt-submit", home, claude("user-prompt-submit", "cl-1", repo, prompt="keep going")
    )
    assert "since your last turn" in delta and codex_s.handle in delta and "src/api.py" in delta
    assert (
        cc(
            "user-prompt-submit",
            home,
            claude("user-prompt-submit", "cl-1", repo, prompt="and again"),
        )
        == ""
    )
    assert [
        o.text for o in store.timeline(store.tasks_of_session("cl-1")[0].id, kinds=["prompt"])
    ] == ["keep going", "and again"]

    # Stop refreshes; session-end releases the claims.
    assert (
        cx(
            "stop",
            home,
            codex("stop", "cx-1", src, stop_hook_active=False, last_assistant_message="done"),
        )
        == ""
    )
    cc_end = run_hook(
        "session-end", claude("session-end", "cl-1", repo, reason="prompt_input_exit"), home
    )
    assert cc_end.returncode == 0 and cc_end.stdout == ""
    assert store.list_claims(session_id="cl-1") == []
    assert store.get_session("cl-1").ended_at is not None
    cx_end = run_hook("session-end", codex("session-end", "cx-1", src), home)
    assert cx_end.returncode == 0 and cx_end.stdout == ""
    store.close()


def test_directed_question_is_delivered_mid_turn_after_a_tool_call(home: Path, repo: Path):
    from colony_tasks.usecases import actions

    cc("session-start", home, claude("session-start", "cl-1", repo, source="startup"))
    cx("session-start", home, codex("session-start", "cx-1", repo, source="startup"))
    store = Store(home / "colony.db")
    handle = store.get_session("cl-1").handle
    q = actions.ask(store, "cx-1", "Is the schema frozen?", to=handle)
    store.close()
    mid = cc(
        "post-tool-use",
        home,
        claude(
            "post-tool-use",
            "cl-1",
            repo,
            tool_name="Bash",
            tool_input={"command": "ls"},
            tool_response={"stdout": ""},
            tool_use_id="b1",
        ),
    )
    assert "Is the schema frozen?" in mid and f"answer_question(question_id={q.id}" in mid
    # Not repeated at the next prompt.
    assert "Is the schema frozen?" not in cc(
        "user-prompt-submit", home, claude("user-prompt-submit", "cl-1", repo, prompt="go")
    )


def test_agent_is_recognised_from_the_payload_without_flag(home: Path, repo: Path):
    run_hook("session-start", codex("session-start", "cx-9", repo, source="startup"), home)
    run_hook("user-prompt-submit", codex("user-prompt-submit", "cx-8", repo, prompt="hi"), home)
    run_hook("session-start", claude("session-start", "cl-9", repo, source="startup"), home)
    store = Store(home / "colony.db")
    assert store.get_session("cx-9").agent == "codex"
    assert store.get_session("cx-8").agent == "codex"
    assert store.get_session("cl-9").agent == "claude"


def test_session_start_is_idempotent_across_sources(home: Path, repo: Path):
    for source in ("startup", "resume", "clear", "compact"):
        cc("session-start", home, claude("session-start", "cl-1", repo, source=source))
    store = Store(home / "colony.db")
    assert store.counts()["sessions"] == 1 and store.counts()["tasks"] == 1


def test_block_mode_denies_an_edit_of_a_live_claim(home: Path, repo: Path):
    home.mkdir(parents=True, exist_ok=True)
    (home / "settings.json").write_text(json.dumps({"claims": {"mode": "block"}}))
    cc("session-start", home, claude("session-start", "cl-1", repo, source="startup"))
    cc("session-start", home, claude("session-start", "cl-2", repo, source="startup"))
    edit = {"file_path": str(repo / "x.py"), "content": "x"}
    cc(
        "post-tool-use",
        home,
        claude(
            "post-tool-use",
            "cl-1",
            repo,
            tool_name="Write",
            tool_input=edit,
            tool_response={},
            tool_use_id="w",
        ),
    )
    result = run_hook(
        "pre-tool-use",
        claude("pre-tool-use", "cl-2", repo, tool_name="Write", tool_input=edit, tool_use_id="w2"),
        home,
    )
    data = check_claude("pre-tool-use", result.stdout)
    assert data["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "claims.mode is block" in data["hookSpecificOutput"]["permissionDecisionReason"]
    assert result.returncode == 0


def test_codex_payload_fixtures_match_its_input_schemas():
    import jsonschema

    from tests.support.contracts import schema

    repo = Path("/tmp/x")
    jsonschema.Draft7Validator(schema("codex/post-tool-use.command.input.schema.json")).validate(
        codex(
            "post-tool-use",
            "s",
            repo,
            tool_name="apply_patch",
            tool_input={"command": patch("*** Add File: a")},
            tool_response="ok",
            tool_use_id="u",
        )
    )
    jsonschema.Draft7Validator(
        schema("codex/user-prompt-submit.command.input.schema.json")
    ).validate(codex("user-prompt-submit", "s", repo, prompt="hi"))


@pytest.mark.skipif(not SCHEMAS.exists(), reason="../shared/schemas not present (a user's clone)")
def test_schemas_folder_is_found_in_dev_and_ci():
    assert (SCHEMAS / "codex").is_dir()
