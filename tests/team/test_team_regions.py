"""Team mode: the collision forecast between two machines on one PostgreSQL store, through the
installed hooks and each machine's relay. Each machine has its own clone, its own base of the
file (one has committed more on top), and hears of the other's change only where git will
conflict."""

from __future__ import annotations

from pathlib import Path

import pytest

from colony_tasks.store import open_store
from tests.support.gitutil import git
from tests.support.hookrun import claude, codex
from tests.support.teamutil import Machine, context, make_machines

pytestmark = pytest.mark.postgres

LINES = "".join(f"line {i}\n" for i in range(1, 21))


@pytest.fixture
def machines(tmp_path: Path, pg_url: str):
    found = make_machines(tmp_path, pg_url)
    yield found
    for machine in found:
        machine.stop_relay()


def update(rel: str, old: str, new: str) -> dict[str, str]:
    body = f"*** Begin Patch\n*** Update File: {rel}\n@@\n-{old}\n+{new}\n*** End Patch\n"
    return {"command": body}


def patch_on(machine: Machine, sid: str, old: str, new: str) -> str:
    """Codex on ``machine`` patches one line of core.py: what its PreToolUse said."""
    tool_input = update("core.py", old, new)
    pre = codex("pre-tool-use", sid, machine.clone, tool_name="apply_patch", tool_input=tool_input)
    said = context(machine.hook("pre-tool-use", pre, "codex"))
    path = machine.clone / "core.py"
    path.write_text(path.read_text().replace(old + "\n", new + "\n", 1))
    post = codex(
        "post-tool-use", sid, machine.clone, tool_name="apply_patch", tool_input=tool_input
    )
    post["tool_use_id"] = pre["tool_use_id"]
    post["tool_response"] = {"output": "Success."}
    assert machine.hook("post-tool-use", post, "codex").returncode == 0
    return said


def test_two_machines_hear_of_each_other_only_where_git_will_conflict(
    machines: list[Machine], pg_url: str
):
    laptop, runner = machines
    (laptop.clone / "core.py").write_text(LINES)
    git(laptop.clone, "add", "core.py")
    git(laptop.clone, "commit", "-q", "-m", "core")
    git(laptop.clone, "push", "-q", "origin", "feature/search")
    git(runner.clone, "pull", "-q", "origin", "feature/search")
    # The laptop commits two lines on top that the runner has not pulled: two bases.
    (laptop.clone / "core.py").write_text("new 1\nnew 2\n" + LINES)
    git(laptop.clone, "commit", "-q", "-am", "top")
    for machine, sid, make, agent in (
        (laptop, "alice", claude, "claude"),
        (runner, "bob", codex, "codex"),
    ):
        started = machine.hook("session-start", make("session-start", sid, machine.clone), agent)
        assert started.returncode == 0
    edit = {"file_path": str(laptop.clone / "core.py"), "old_string": "line 5\n"}
    edit["new_string"] = "line five\n"
    pre = claude("pre-tool-use", "alice", laptop.clone, tool_name="Edit", tool_input=edit)
    assert context(laptop.hook("pre-tool-use", pre)) == ""
    path = laptop.clone / "core.py"
    path.write_text(path.read_text().replace("line 5\n", "line five\n"))
    post = claude("post-tool-use", "alice", laptop.clone, tool_name="Edit", tool_input=edit)
    post["tool_use_id"] = pre["tool_use_id"]
    assert laptop.hook("post-tool-use", post).returncode == 0
    store = open_store(pg_url)
    try:
        alice = store.get_session("alice")
        assert alice is not None
    finally:
        store.close()
    # One untouched line between (line 6): git merges it, the runner hears nothing ...
    assert patch_on(runner, "bob", "line 7", "line seven") == ""
    # ... line 4 touches line 5 (by content, not by number): named, with who runs it.
    said = patch_on(runner, "bob", "line 4", "line four")
    assert f"{alice.handle} (alice@laptop)" in said and "core.py L4" in said
