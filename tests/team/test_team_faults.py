"""Team mode under faults and load: the server away, the relay killed, many writers at once."""

from __future__ import annotations

import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from colony_tasks.base import backend
from colony_tasks.hooks import runner
from colony_tasks.relay.outbox import Outbox
from colony_tasks.relay.team import TeamRelay
from colony_tasks.store import open_store
from colony_tasks.usecases import actions
from tests.support.hookrun import EXE, claude, codex
from tests.support.secret_corpus import CORPUS
from tests.support.teamutil import Machine, context, make_machines, spool, wait_for

pytestmark = pytest.mark.postgres


@pytest.fixture
def machines(tmp_path: Path, pg_url: str):
    found = make_machines(tmp_path, pg_url)
    yield found
    for machine in found:
        machine.stop_relay()


def prompts(url: str, session_id: str) -> list[str]:
    store = open_store(url)
    try:
        rows = store._all(
            "SELECT text FROM observations WHERE session_id = ? AND kind = 'prompt' ORDER BY id",
            (session_id,),
        )
        return [r[0] for r in rows]
    finally:
        store.close()


def pending(machine: Machine) -> int:
    with sqlite3.connect(machine.outbox()) as conn:
        return conn.execute("SELECT COUNT(*) FROM outbox WHERE stuck = 0").fetchone()[0]


def say(machine: Machine, sid: str, text: str):
    return machine.hook(
        "user-prompt-submit", claude("user-prompt-submit", sid, machine.clone, prompt=text)
    )


def test_events_spool_while_the_server_is_away_and_arrive_once_in_order(
    machines: list[Machine], pg_url: str, pg_server
):
    laptop = machines[0]
    assert laptop.hook("session-start", claude("session-start", "s1", laptop.clone)).returncode == 0
    assert say(laptop, "s1", "before 1").returncode == 0
    pg_server.stop()
    try:
        runs = [say(laptop, "s1", f"while away {i}") for i in range(8)]
        assert all(r.returncode == 0 for r in runs)
        told = [context(r) for r in runs]
        # Told once that the store is away, then nothing more.
        assert "team store is unreachable" in told[0]
        assert all(t == "" for t in told[1:])
        assert pending(laptop) == 8
    finally:
        pg_server.start()
    wait_for(lambda: pending(laptop) == 0, timeout=60)
    back = say(laptop, "s1", "after")
    assert "reachable again" in context(back)
    assert "reachable again" not in context(say(laptop, "s1", "after 2"))
    expected = ["before 1", *(f"while away {i}" for i in range(8)), "after", "after 2"]
    assert prompts(pg_url, "s1") == expected


BACKLOG = 600


def test_a_relay_killed_mid_flush_loses_nothing_and_applies_nothing_twice(
    machines: list[Machine], pg_url: str
):
    laptop = machines[0]
    assert laptop.hook("session-start", claude("session-start", "s1", laptop.clone)).returncode == 0
    laptop.stop_relay()
    # Spool a backlog as hooks do (Outbox.put) while no relay runs.
    box = Outbox(str(laptop.outbox()))
    for i in range(BACKLOG):
        payload = claude("user-prompt-submit", "s1", laptop.clone, prompt=f"backlog {i}")
        # The session's agent is this test process (it ran the SessionStart hook).
        spool(box, f"k{i}", "user-prompt-submit", "claude", payload, pid=os.getpid())
    box.close()
    # A relay starts (as a hook would start it) and flushes the backlog; kill -9 it part-way.
    relay = subprocess.Popen(
        [sys.executable, "-m", "colony_tasks.relay"],
        env={**os.environ, "COLONY_TASKS_HOME": str(laptop.home), **laptop.env},
    )
    # Polled on the local outbox (~1 ms), so the kill lands early in the flush.
    wait_for(lambda: pending(laptop) < BACKLOG, timeout=60, step=0.002)
    relay.kill()
    relay.wait(30)
    left = pending(laptop)
    assert 0 < left < BACKLOG  # the kill landed mid-flush
    # Another hook starts a new relay, which finishes the job.
    say(laptop, "s1", "after the kill")
    wait_for(lambda: pending(laptop) == 0, timeout=60)
    seen = prompts(pg_url, "s1")
    backlog = [t for t in seen if t.startswith("backlog")]
    assert backlog == [f"backlog {i}" for i in range(BACKLOG)]
    assert seen[-1] == "after the kill" and len(seen) == BACKLOG + 1


def test_an_event_committed_before_a_crash_is_not_applied_again(
    machines: list[Machine], pg_url: str, monkeypatch: pytest.MonkeyPatch
):
    laptop = machines[0]
    monkeypatch.setenv("COLONY_TASKS_HOME", str(laptop.home))
    relay = TeamRelay(pg_url)
    payload = claude("user-prompt-submit", "s1", laptop.clone, prompt="only once")
    spooled = spool(relay.outbox, "row-1", "user-prompt-submit", "claude", payload)
    relay.flush()
    assert prompts(pg_url, "s1") == ["only once"]
    # The relay died after committing but before forgetting the row: it is still spooled.
    relay.outbox.put("row-1-again", "user-prompt-submit", "claude", spooled, session_id="s1")
    relay.flush()
    assert prompts(pg_url, "s1") == ["only once"] and relay.outbox.counts()["pending"] == 0
    relay.store.close()
    relay.outbox.close()


HOOK_WORKER = """
import json, os, subprocess, sys
exe, home, clone, sid, count = sys.argv[1:6]
env = dict(os.environ, COLONY_TASKS_HOME=home)
start = {"session_id": sid, "cwd": clone, "hook_event_name": "SessionStart"}
run = subprocess.run([exe, "hook", "session-start", "--agent", "claude"],
                     input=json.dumps(start).encode(), env=env, capture_output=True)
codes = [run.returncode]  # this process is the session's agent, as Claude Code is
sys.stdin.read()  # the barrier
for i in range(int(count)):
    payload = {"session_id": sid, "cwd": clone, "hook_event_name": "UserPromptSubmit",
               "prompt": f"{sid} prompt {i}"}
    run = subprocess.run([exe, "hook", "user-prompt-submit", "--agent", "claude"],
                         input=json.dumps(payload).encode(), env=env, capture_output=True)
    codes.append(run.returncode)
print(json.dumps(codes))
"""


async def _mcp_poster(machine: Machine, sid: str, question_id: int, results: dict) -> None:
    params = StdioServerParameters(
        command=str(EXE),
        args=["mcp"],
        env={"COLONY_TASKS_HOME": str(machine.home), **machine.env},
        cwd=str(machine.clone),
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        answered = await client.call_tool(
            "answer_question",
            {"question_id": question_id, "answer": f"{sid} takes it", "session_id": sid},
        )
        posted = []
        for i in range(10):
            result = await client.call_tool(
                "task_post", {"content": f"{sid} note {i}", "session_id": sid}
            )
            assert not result.is_error, result.content[0].text
            posted.append(result.structured_content["id"])
        results[sid] = (answered.structured_content, posted)


def test_two_machines_of_hooks_and_mcp_servers_write_at_once_without_loss_or_duplicates(
    machines: list[Machine], pg_url: str
):
    laptop, runner = machines
    sids = {m.name: [f"{m.name}-{i}" for i in range(8)] for m in machines}
    asker = "laptop-asker"
    assert (
        laptop.hook("session-start", claude("session-start", asker, laptop.clone)).returncode == 0
    )
    store = open_store(pg_url)
    try:
        question = actions.ask(store, asker, "Broadcast: who takes the release notes?")
    finally:
        store.close()
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", HOOK_WORKER, str(EXE), str(m.home), str(m.clone), sid, "5"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env={**os.environ, **m.env},
            text=True,
        )
        for m in machines
        for sid in sids[m.name]
    ]
    posters = {"laptop-mcp": laptop, "runner-mcp": runner}
    results: dict = {}

    async def mcp_both() -> None:
        async with anyio.create_task_group() as group:
            for sid, machine in posters.items():
                group.start_soon(_mcp_poster, machine, sid, question.id, results)

    for sid, machine in posters.items():
        run = machine.hook("session-start", claude("session-start", sid, machine.clone))
        assert run.returncode == 0
    for worker in workers:
        worker.stdin.write("go\n")
        worker.stdin.close()
    anyio.run(mcp_both)
    codes = [json.loads(w.stdout.read()) for w in workers]
    for worker in workers:
        worker.wait(timeout=300)
    assert all(code == 0 for run in codes for code in run)
    for machine in machines:
        wait_for(lambda m=machine: pending(m) == 0, timeout=120)

    store = open_store(pg_url)
    try:
        texts = [r[0] for r in store._all("SELECT text FROM observations WHERE kind = 'prompt'")]
        expected = {f"{sid} prompt {i}" for m in machines for sid in sids[m.name] for i in range(5)}
        assert sorted(texts) == sorted(expected)  # none lost, none twice
        notes = [r[0] for r in store._all("SELECT text FROM observations WHERE kind = 'note'")]
        for sid in posters:
            assert sorted(t for t in notes if t.startswith(sid + " note")) == sorted(
                f"{sid} note {i}" for i in range(10)
            )
        answers = store.timeline(question.task_id, kinds=["answer"])
        assert len(answers) == 1  # exactly one winner of the broadcast question
        oks = sorted(bool(r[0]["ok"]) for r in results.values())
        assert oks == [False, True]
    finally:
        store.close()
    assert backend.store_key(pg_url)


def _postgres_pids(pg_server) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                cmdline = handle.read()
            with open(f"/proc/{entry}/stat") as handle:
                name = handle.read().split("(", 1)[1].split(")", 1)[0]
        except OSError:
            continue
        if name == "postgres" and (pg_server.data.encode() in cmdline or b"postgres:" in cmdline):
            found.append(int(entry))
    return found


def test_a_hung_server_does_not_hold_hooks_and_loses_nothing(
    machines: list[Machine], pg_url: str, pg_server
):
    laptop = machines[0]
    assert laptop.hook("session-start", claude("session-start", "s1", laptop.clone)).returncode == 0
    assert say(laptop, "s1", "before").returncode == 0
    frozen = _postgres_pids(pg_server)
    assert frozen
    for pid in frozen:
        os.kill(pid, signal.SIGSTOP)  # the server accepts nothing and answers nothing
    try:
        runs = [say(laptop, "s1", f"while hung {i}") for i in range(4)]  # each ≤ the reply wait
        assert all(r.returncode == 0 for r in runs)
        assert pending(laptop) >= 1
    finally:
        for pid in frozen:
            os.kill(pid, signal.SIGCONT)
    wait_for(lambda: pending(laptop) == 0, timeout=90)
    assert say(laptop, "s1", "after").returncode == 0
    assert prompts(pg_url, "s1") == ["before", *(f"while hung {i}" for i in range(4)), "after"]


# -- nothing unredacted waits on disk --------------------------------------------------------


def secret_hooks(clone: Path) -> list[tuple[str, str, dict]]:
    """Every corpus text through one hook channel each (round robin): a prompt, shell commands
    of both agents with the text in their output too, a Write's content, an Edit, a patch and
    a Stop's last message. (event, agent, payload)."""
    channels = []
    for n, (_, text) in enumerate(CORPUS):
        target = str(clone / "src" / f"f{n}.py")
        body = f"*** Begin Patch\n*** Update File: src/f{n}.py\n@@\n-x\n+{text}\n*** End Patch\n"
        options = [
            (
                "user-prompt-submit",
                "claude",
                claude("user-prompt-submit", "cl", clone, prompt=text),
            ),
            (
                "post-tool-use",
                "claude",
                claude(
                    "post-tool-use",
                    "cl",
                    clone,
                    tool_name="Bash",
                    tool_input={"command": text},
                    tool_response={"stdout": text, "stderr": "", "interrupted": False},
                ),
            ),
            (
                "post-tool-use",
                "codex",
                codex(
                    "post-tool-use",
                    "cx",
                    clone,
                    tool_name="exec_command",
                    tool_input={"cmd": text},
                    tool_response=text,
                ),
            ),
            (
                "pre-tool-use",
                "claude",
                claude(
                    "pre-tool-use",
                    "cl",
                    clone,
                    tool_name="Write",
                    tool_input={"file_path": target, "content": text},
                ),
            ),
            (
                "post-tool-use",
                "claude",
                claude(
                    "post-tool-use",
                    "cl",
                    clone,
                    tool_name="Edit",
                    tool_input={"file_path": target, "old_string": "x", "new_string": text},
                    tool_response={"filePath": target, "newString": text},
                ),
            ),
            (
                "post-tool-use",
                "codex",
                codex(
                    "post-tool-use",
                    "cx",
                    clone,
                    tool_name="apply_patch",
                    tool_input={"command": body},
                ),
            ),
            ("stop", "claude", claude("stop", "cl", clone, last_assistant_message=text)),
        ]
        channels.append(options[n % len(options)])
    return channels


def raw_bytes(*folders: Path) -> bytes:
    """Every byte of every file under ``folders`` (the outbox, its WAL and shm, the logs)."""
    found = b""
    for folder in folders:
        if folder.exists():
            found += b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())
    return found


def in_process(event: str, agent: str, payload: dict) -> None:
    saved = sys.stdin, sys.stdout
    sys.stdin = io.TextIOWrapper(io.BytesIO(json.dumps(payload).encode()))
    sys.stdout = io.StringIO()
    try:
        assert runner.run([event, "--agent", agent]) == 0
    finally:
        sys.stdin, sys.stdout = saved


def recorded(store) -> list[tuple[str, str, str | None]]:
    """Each session's observations in order (a relay serves its sessions in turn: the
    sessions' rows interleave differently from the order they were spooled in)."""
    rows = store._all("SELECT kind, text, session_id FROM observations ORDER BY session_id, id")
    return [tuple(r) for r in rows]


def test_hooks_spool_no_secret_while_the_server_is_away_and_deliver_everything_redacted(
    machines: list[Machine], pg_url: str, pg_server, tmp_path: Path, monkeypatch
):
    laptop = machines[0]
    (laptop.clone / "src").mkdir()
    starts = [
        ("session-start", "claude", claude("session-start", "cl", laptop.clone)),
        ("session-start", "codex", codex("session-start", "cx", laptop.clone)),
    ]
    for event, agent, payload in starts:
        assert laptop.hook(event, payload, agent=agent).returncode == 0
    hooks = secret_hooks(laptop.clone)
    pg_server.stop()
    try:
        runs = [laptop.hook(event, payload, agent=agent) for event, agent, payload in hooks]
        assert all((r.returncode, r.stderr) == (0, "") for r in runs)
        assert pending(laptop) == len(hooks)  # all spooled, none applied yet
        # The outbox (database, WAL, shm), the hook and relay log, the fallback logs: the
        # corpus is nowhere on this machine's disk.
        data = raw_bytes(laptop.home, laptop.home.parent / f"colony-tasks-{os.getuid()}")
        assert b'"prompt":' in data  # the bytes read are the spooled events
        assert [s for s, _ in CORPUS if s.encode() in data] == []
    finally:
        pg_server.start()
    wait_for(lambda: pending(laptop) == 0, timeout=120)
    with sqlite3.connect(laptop.outbox()) as conn:
        assert conn.execute("SELECT COUNT(*) FROM outbox").fetchone()[0] == 0  # none stuck

    # Everything arrived, and exactly as a SQLite-mode machine records the same hooks.
    store = open_store(pg_url)
    try:
        team = recorded(store)
    finally:
        store.close()
    assert [s for s, _ in CORPUS if any(s in text for _, text, _ in team)] == []
    monkeypatch.delenv("COLONY_TASKS_DATABASE_URL", raising=False)
    monkeypatch.setenv("COLONY_TASKS_HOME", str(tmp_path / "sqlite-home"))
    for event, agent, payload in starts + hooks:
        in_process(event, agent, payload)
    local = open_store(str(tmp_path / "sqlite-home" / "colony.db"))
    try:
        assert team == recorded(local)
    finally:
        local.close()
    kinds = {kind for kind, _, _ in team}
    assert kinds == {"prompt", "command", "edit"}
