"""The relay that serves every hook: exactly once, fail open, versions, only the same user.

Hooks here are the installed console script (or ``python -m colony_tasks`` on a copy of the
package, for the upgrade) run as real processes; the relay is the real resident process they
start.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from colony_tasks.relay import wire
from tests.support import ROOT as CHECKOUT
from tests.support.hookrun import EXE, claude, relay_status, run_hook

ROOT = CHECKOUT


def prompts(home: Path) -> list[str]:
    db = sqlite3.connect(home / "colony.db")
    try:
        rows = db.execute("SELECT text FROM observations WHERE kind = 'prompt' ORDER BY id")
        return [r[0] for r in rows]
    finally:
        db.close()


def log_lines(home: Path, name: str = "hooks.log") -> list[str]:
    path = home / name
    return path.read_text().splitlines() if path.exists() else []


def test_the_first_hook_starts_a_relay_and_later_hooks_are_served_by_it(home: Path, repo: Path):
    first = run_hook("session-start", claude("session-start", "s", repo), home)
    assert "you are claude-" in first.stdout  # applied by the first hook itself
    status = relay_status(home)
    assert status["version"] == wire.VERSION and status["backend"] == "sqlite"
    served = status["served"]
    reply = run_hook(
        "user-prompt-submit", claude("user-prompt-submit", "s", repo, prompt="hi"), home
    )
    assert reply.returncode == 0
    assert relay_status(home)["served"] == served + 1
    assert prompts(home) == ["hi"]
    socket_file = home / "relay-local.sock"
    assert oct(socket_file.stat().st_mode & 0o777) == "0o600"
    assert oct(home.stat().st_mode & 0o777) == "0o700"


def test_a_relay_that_is_asked_to_stop_leaves_no_socket_and_the_next_hook_starts_another(
    home: Path, repo: Path
):
    run_hook("session-start", claude("session-start", "s", repo), home)
    first = relay_status(home)["pid"]
    os.kill(first, signal.SIGKILL)  # a stale socket stays behind
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(first, 0)
        except OSError:
            break
        time.sleep(0.01)
    assert (home / "relay-local.sock").exists()
    hook = run_hook("user-prompt-submit", claude("user-prompt-submit", "s", repo, prompt="a"), home)
    assert hook.returncode == 0
    second = relay_status(home)["pid"]
    assert second != first
    assert prompts(home) == ["a"]  # applied once, by the hook itself, while the relay started


def test_an_event_applied_by_a_relay_that_died_before_answering_is_not_applied_again(
    home: Path, repo: Path
):
    """The idempotency key decides: the client's fallback finds it claimed."""
    from colony_tasks.hooks.payload import request
    from colony_tasks.relay.apply import apply_here

    run_hook("session-start", claude("session-start", "s", repo), home)
    payload = claude("user-prompt-submit", "s", repo, prompt="once")
    req = request("user-prompt-submit", "claude", payload, json.dumps(payload).encode()).to_wire()
    req["pid"] = os.getpid()  # the session's agent: its SessionStart hook was our child
    path = wire.socket_path(wire.LOCAL_KEY)
    relay_status(home)
    reply = wire.ask(path, {"v": wire.VERSION, **req}, 5.0)
    assert reply is not None and "error" not in reply  # the relay applied it
    apply_here(req)  # ... and the client, not having seen the answer, applies it itself
    apply_here(req)
    assert prompts(home) == ["once"]


def test_cli_search_is_answered_by_the_relays_warm_index_with_the_same_hits(home: Path, repo: Path):
    from colony_tasks.domain import sessions
    from colony_tasks.store import open_default
    from colony_tasks.usecases import actions

    store = open_default()
    try:
        me = sessions.register(store, "s", agent="claude", cwd=str(repo)).session
        for text in ("retry the webhook with backoff", "the parser drops tabs", "webhook auth"):
            actions.post(store, me, text)
    finally:
        store.close()

    def search() -> list:
        done = subprocess.run(
            [str(EXE), "search", "webhook", "--json"],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "COLONY_TASKS_HOME": str(home)},
        )
        return json.loads(done.stdout)

    first = search()  # no relay yet: searched in its own process, and a relay started
    assert relay_status(home)["searches"] == 0
    second = search()
    assert relay_status(home)["searches"] == 1
    assert second == first and len(first) == 2  # both webhook posts, the same way


# -- kill -9 under load ----------------------------------------------------------------------


AGENTS = 8
EVENTS_EACH = 20


@pytest.mark.stress
def test_relay_killed_at_random_points_under_8_agents_loses_and_doubles_nothing(
    home: Path, repo: Path
):
    sessions = [f"agent-{i}" for i in range(AGENTS)]
    for sid in sessions:
        assert run_hook("session-start", claude("session-start", sid, repo), home).returncode == 0
    results: list[tuple[str, int, str]] = []
    lock = threading.Lock()
    done = threading.Event()

    def agent(sid: str) -> None:
        for j in range(EVENTS_EACH):
            if j % 2:
                event = "user-prompt-submit"
                payload = claude(event, sid, repo, prompt=f"{sid} prompt {j}")
            else:
                event = "post-tool-use"
                target = str(repo / f"{sid}-{j}.py")
                payload = claude(
                    event, sid, repo, tool_name="Write", tool_input={"file_path": target}
                )
            hook = run_hook(event, payload, home, timeout=60)
            with lock:
                results.append((sid, hook.returncode, hook.stderr))

    kills = 0

    def killer() -> None:
        nonlocal kills
        rng = random.Random(7)
        while not done.is_set():
            time.sleep(rng.uniform(0.05, 0.3))
            try:
                os.kill(int((home / "relay-local.pid").read_text()), signal.SIGKILL)
                kills += 1
            except (OSError, ValueError):
                pass

    threads = [threading.Thread(target=agent, args=(sid,)) for sid in sessions]
    chaos = threading.Thread(target=killer)
    chaos.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    done.set()
    chaos.join()
    assert kills >= 3
    assert [r for r in results if r[1] != 0] == []
    assert len(results) == AGENTS * EVENTS_EACH
    want = sorted(f"{sid} prompt {j}" for sid in sessions for j in range(1, EVENTS_EACH, 2))
    assert sorted(prompts(home)) == want  # none lost, none doubled
    db = sqlite3.connect(home / "colony.db")
    edits = db.execute(
        "SELECT p.path, COUNT(*) FROM observations o JOIN observation_paths p"
        " ON p.observation_id = o.id WHERE o.kind = 'edit' GROUP BY p.path"
    ).fetchall()
    db.close()
    assert len(edits) == AGENTS * EVENTS_EACH // 2
    assert {count for _, count in edits} == {1}


# -- versions --------------------------------------------------------------------------------


def test_an_upgrade_while_an_agent_keeps_working_serves_nothing_with_the_old_code(
    tmp_path: Path, home: Path, repo: Path
):
    """The package is replaced under a running relay (as ``pip install -U`` does): every event
    sent after that is applied by the new code — by the hook itself, or by a relay of the new
    version — and every event exactly once."""
    site = tmp_path / "site"
    shutil.copytree(
        ROOT / "colony_tasks", site / "colony_tasks", ignore=shutil.ignore_patterns("__pycache__")
    )
    env = {**os.environ, "PYTHONPATH": str(site), "COLONY_TASKS_HOME": str(home)}

    def hook(event: str, payload: dict) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "colony_tasks", "hook", event, "--agent", "claude"],
            input=json.dumps(payload).encode(),
            capture_output=True,
            env=env,
            timeout=60,
            cwd=tmp_path,  # `python -m` puts the working folder first: not the checkout's
        )

    assert hook("session-start", claude("session-start", "s", repo)).returncode == 0
    old = relay_status(home)
    for i in range(5):
        hook("user-prompt-submit", claude("user-prompt-submit", "s", repo, prompt=f"before {i}"))
    # The upgrade: a new version whose prompts are recorded with a mark the old code lacks.
    init = site / "colony_tasks" / "__init__.py"
    init.write_text(init.read_text().replace(wire.VERSION, wire.VERSION + ".post1"))
    events = site / "colony_tasks" / "usecases" / "events.py"
    source = events.read_text()
    recorded = 'records.record(store, here, "prompt", text,'
    assert recorded in source
    events.write_text(
        source.replace(recorded, 'records.record(store, here, "prompt", "v2 " + text,')
    )
    for i in range(10):
        done = hook(
            "user-prompt-submit", claude("user-prompt-submit", "s", repo, prompt=f"after {i}")
        )
        assert done.returncode == 0 and done.stderr == b""
    seen = prompts(home)
    assert seen == [f"before {i}" for i in range(5)] + [f"v2 after {i}" for i in range(10)]
    new = relay_status(home)
    assert new["pid"] != old["pid"] and new["version"] == wire.VERSION + ".post1"
    retired = f"relay {old['pid']} ({wire.VERSION}) retires"
    assert any(retired in line for line in log_lines(home, "relay.log"))
    assert log_lines(home) == []  # a retirement is no failure


def test_a_repository_with_a_colony_tasks_folder_of_its_own_does_not_become_the_relay(
    home: Path, repo: Path
):
    """Hooks run in the agent's working folder; the relay they start must not import code
    from it."""
    planted = repo / "colony_tasks" / "relay"
    planted.mkdir(parents=True)
    (repo / "colony_tasks" / "__init__.py").write_text("")
    (planted / "__init__.py").write_text("")
    marker = repo / "pwned"
    (planted / "__main__.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    subprocess.run(
        [str(EXE), "hook", "session-start"],
        input=json.dumps(claude("session-start", "s", repo)).encode(),
        cwd=repo,
        check=True,
        env={**os.environ, "COLONY_TASKS_HOME": str(home)},
    )
    assert relay_status(home)["version"] == wire.VERSION
    assert not marker.exists()


# -- only the same user ----------------------------------------------------------------------


SYSTEM_PYTHON = "/usr/bin/python3"


def _another_user() -> int:
    """A uid to run our hook client as, or a skip saying why there is none here."""
    import pwd

    if os.geteuid() != 0:
        pytest.skip("running a client as another user needs root")
    try:
        uid = pwd.getpwnam("nobody").pw_uid
    except KeyError:
        pytest.skip("no 'nobody' user on this machine to act as another user")
    # The hook client is standard library only: the system's Python runs it from the
    # checkout (the project's virtualenv may live where other users cannot go).
    probe = subprocess.run(
        [SYSTEM_PYTHON, "-c", "import colony_tasks.hooks.runner"],
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        user=uid,
        cwd="/",
    )
    if probe.returncode != 0:
        pytest.skip(f"user nobody cannot run the client from {ROOT} with {SYSTEM_PYTHON}")
    return uid


#: A client of the relay without the hook client's checks: sends one event, prints the reply.
RAW_CLIENT = """
import json, socket, sys
sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
sock.connect(sys.argv[1])
request = {"op": "event", "event": "user-prompt-submit", "agent": "claude", "v": sys.argv[3]}
request.update(session="s", fields={"prompt": json.loads(sys.argv[2])["prompt"]})
try:
    sock.sendall(json.dumps(request).encode() + b"\\n")
    sys.stdout.write(sock.recv(65536).decode())
except (BrokenPipeError, ConnectionResetError):  # refused: closed unread
    pass
"""


def test_another_users_hook_is_refused_by_the_relay_and_falls_back(
    repo: Path, monkeypatch: pytest.MonkeyPatch
):
    uid = _another_user()
    # A short path other users can traverse (the test's tmp_path is private to root).
    top = Path(tempfile.mkdtemp(prefix="ct-peer-", dir="/tmp"))
    try:
        top.chmod(0o755)
        home = top / "home"
        monkeypatch.setenv("COLONY_TASKS_HOME", str(home))  # this process asks the relay too
        env = {**os.environ, "COLONY_TASKS_HOME": str(home), "TMPDIR": str(top)}
        start = claude("session-start", "s", repo)
        subprocess.run(
            [str(EXE), "hook", "session-start"],
            input=json.dumps(start).encode(),
            env=env,
            check=True,
        )
        relay_status(home)
        payload = json.dumps(claude("user-prompt-submit", "s", repo, prompt="from nobody"))

        def as_nobody() -> subprocess.CompletedProcess:
            return subprocess.run(
                [SYSTEM_PYTHON, "-m", "colony_tasks", "hook", "user-prompt-submit"],
                input=payload.encode(),
                capture_output=True,
                env={
                    "PYTHONPATH": str(ROOT),
                    "PATH": "/usr/bin:/bin",
                    "COLONY_TASKS_HOME": str(home),
                    "TMPDIR": str(top),
                },
                user=uid,
                cwd="/",
                timeout=30,
            )

        # 1. As installed: the 0700 data folder keeps another user from the socket at all.
        refused = as_nobody()
        assert (refused.returncode, refused.stdout, refused.stderr) == (0, b"", b"")
        # 2. A folder opened up by mistake: the other user's client sees a listener of
        # another uid and sends it nothing (it applies its event itself, in its own store).
        home.chmod(0o755)
        (home / "relay-local.sock").chmod(0o666)
        refused = as_nobody()
        assert (refused.returncode, refused.stdout, refused.stderr) == (0, b"", b"")
        # 3. A client that skips that check: the relay itself checks the peer's uid.
        sock = str(home / "relay-local.sock")
        raw = subprocess.run(
            [SYSTEM_PYTHON, "-c", RAW_CLIENT, sock, payload, wire.VERSION],
            capture_output=True,
            env={"PATH": "/usr/bin:/bin"},
            user=uid,
            cwd="/",
            timeout=30,
        )
        assert raw.returncode == 0 and raw.stdout == b"", raw.stderr
        assert any(f"refused a client of uid {uid}" in line for line in log_lines(home))
        assert prompts(home) == []  # nothing was applied for the other user
        assert relay_status(home)["served"] == 0  # the SessionStart applied itself
    finally:
        from tests.conftest import stop_relays

        stop_relays(top)
        shutil.rmtree(top, ignore_errors=True)


def test_relay_status_and_stop_and_doctor_in_sqlite_mode(home: Path, repo: Path):
    env = {**os.environ, "COLONY_TASKS_HOME": str(home)}

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(EXE), *args], capture_output=True, text=True, env=env)

    assert "not running" in cli("relay").stdout
    run_hook("session-start", claude("session-start", "s", repo), home)
    pid = relay_status(home)["pid"]
    shown = json.loads(cli("relay", "status", "--json").stdout)
    assert shown["relay_pid"] == pid and shown["relay_version"] == wire.VERSION
    assert f"relay: pid {pid}" in cli("doctor").stdout
    stopped = cli("relay", "stop")
    assert stopped.returncode == 0 and "stopped" in stopped.stdout
    assert not (home / "relay-local.sock").exists()
    assert "not running" in cli("relay").stdout
