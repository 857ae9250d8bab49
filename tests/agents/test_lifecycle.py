"""The lifecycle beyond the six events, with the real Claude Code CLI: a failed shell command
that edited a held file, a subagent's brief, a session cut off by a rate limit."""

from __future__ import annotations

import threading

import pytest

from colony_tasks.domain import sessions
from colony_tasks.store import Store
from colony_tasks.usecases import actions

from .capabilities import record
from .model_server import MessagesServer, Step, call, context, fail, say

pytestmark = [pytest.mark.agents]


def held_by_another(sandbox, path: str) -> str:
    """A Codex session that holds ``path``; its handle."""
    sandbox.data.mkdir(parents=True, exist_ok=True)
    store = Store(sandbox.data / "colony.db")
    other = sessions.register(store, "codex-holder", agent="codex", cwd=str(sandbox.repo))
    actions.claim(store, other.session, [path], note="repricing")
    store.close()
    return other.session.handle


def test_claude_failed_shell_command_on_a_held_file_is_warned(sandbox):
    sandbox.write("prices.py", "TAX = 0.19\n")
    sandbox.commit()
    sandbox.install("claude")
    holder = held_by_another(sandbox, "prices.py")
    # sed edits prices.py, then fails on the missing file: exit status 2.
    failing = "sed -i 's/0.19/0.25/' prices.py missing.txt"
    model = MessagesServer([call("Bash", command=failing, description="Raise tax"), say("Done.")])
    with model:
        sandbox.claude(model, "Raise the tax").finish()

    assert "TAX = 0.25" in (sandbox.repo / "prices.py").read_text()
    after = context(model.main_requests()[1])
    assert f"prices.py is held by {holder}" in after
    assert "You just edited a file another session is working on" in after
    record(
        "claude", sandbox.toolchain.version("claude"), "warn_after", "yes: with the tool's result"
    )


def test_claude_subagents_first_request_carries_its_brief(sandbox):
    sandbox.write("prices.py", "TAX = 0.19\n")
    sandbox.commit()
    sandbox.install("claude")
    holder = held_by_another(sandbox, "prices.py")
    model = MessagesServer(
        [
            call(
                "Agent",
                description="Check prices",
                prompt="Look at prices.py and report the tax rate.",
                subagent_type="general-purpose",
                run_in_background=False,
            ),
            say("The tax is 0.19."),  # the subagent's first (and last) request
            say("Done."),
        ]
    )
    with model:
        run = sandbox.claude(model, "Ask a subagent about the tax").finish()

    first = context(model.script[1].wait_reached("the subagent's first request"))
    assert "subagent (general-purpose) of claude-" in first, run.output[-2000:]
    assert f"{holder} holds prices.py." in first
    record("claude", sandbox.toolchain.version("claude"), "subagent_brief", "yes: SubagentStart")


def test_claude_cut_off_by_a_rate_limit_is_seen_by_its_lane(sandbox):
    sandbox.write("prices.py", "TAX = 0.19\n")
    sandbox.commit()
    sandbox.install("claude")
    sandbox.env["CLAUDE_CODE_MAX_RETRIES"] = "0"  # no backoff: the first 429 ends the turn
    model = MessagesServer([fail(429) for _ in range(4)])
    with model:
        run = sandbox.claude(model, "Raise the tax")
        try:
            run.finish()
        except AssertionError:
            pass  # claude -p exits non-zero when the API refuses it: that is the point
    # StopFailure fired (matcher and `error` = rate_limit); `claude -p` then exits, so its
    # SessionEnd ends the session — an interactive session would stay, shown as cut off.
    me = sandbox.session("claude")
    assert me["waiting"] == "cut-off:rate_limit", me
    store = Store(sandbox.data / "colony.db")
    task = store.tasks_of_session(me["id"], open_only=False)[0].id
    notes = [o.text for o in store.timeline(task, kinds=["note"])]
    assert notes == [
        f"{me['handle']} was cut off (rate_limit) and cannot act until its human resumes it."
        " Its claims are stale now and expire in 10m; its taken work items can then be taken"
        " with take_work(item_id=...)."
    ]


def test_claude_compaction_rebriefs_the_next_request(sandbox):
    sandbox.write("prices.py", "TAX = 0.19\n")
    sandbox.commit()
    sandbox.install("claude")
    first = MessagesServer([say("ok")])
    with first:
        sandbox.claude(first, "Look around").finish()
    holder = held_by_another(sandbox, "prices.py")
    store = Store(sandbox.data / "colony.db")
    actions.record_decision(store, "codex-holder", "Prices stay in cents from now on.")
    store.close()
    # `/compact` in print mode compacts the last session (its summary requests get "ok").
    compacting = MessagesServer([say("<summary>Looked around.</summary>") for _ in range(4)])
    with compacting:
        compacted = sandbox.claude(compacting, "/compact", "--continue").finish()
    assert "SessionStart:compact" in compacted.debug
    after = MessagesServer([say("Done.")])
    with after:
        sandbox.claude(after, "What now?", "--continue").finish()

    request = context(after.main_requests()[0])
    assert "colony-tasks (re-brief: your context was reset)" in request
    assert "New since you were last told:" in request
    assert "Prices stay in cents from now on." in request
    assert f"{holder} holds prices.py" in request
    rebrief = "yes: SessionStart source=compact"
    record("claude", sandbox.toolchain.version("claude"), "rebrief_compaction", rebrief)


def test_claudes_mcp_server_binds_to_its_session_from_the_environment(sandbox):
    sandbox.install("claude")
    release = threading.Event()
    model = MessagesServer(
        [
            Step(tool="mcp__colony-tasks__task_post", args={"content": "hello"}, gate=release),
            say("Done."),
        ]
    )
    with model:
        run = sandbox.claude(model, "Say hello to the lane")
        model.script[0].wait_reached("Claude's first request")
        # Make process ancestry ambiguous: a newer live session of the same agent process
        # (as after /clear), which the process tree alone would pick; CLAUDE_CODE_SESSION_ID
        # names the one Claude Code runs (it counts because its agent is the server's parent).
        me = sandbox.session("claude")
        store = Store(sandbox.data / "colony.db")
        mine = store.get_session(me["id"])
        assert mine is not None and mine.agent_pid
        sessions.register(
            store, "decoy-after-clear", agent="claude", cwd=mine.cwd, agent_pid=mine.agent_pid
        )
        store.close()
        release.set()
        run.finish()

    result = context(model.main_requests()[1])
    assert f'"author":"{me["handle"]}"' in result, result[-1500:]
