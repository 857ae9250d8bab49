"""Whole-process wall time of every hook event against a same-run baseline, warm and cold.

    python bench/hooks.py [--n 40] [--sizes 1000,1000000]

Each sample runs the installed ``colony-tasks hook EVENT`` as a new process with a realistic
payload, exactly as Claude Code does (a fresh prompt or tool-use id every time, so no sample
is taken for a repeat of the one before); the baseline is bench/baseline_hook.py (stdin JSON + one
WAL insert) and the floor is ``python -I -S -c pass`` (an interpreter that does nothing).
Candidates run interleaved so machine noise hits them alike. The store is seeded with 1k and
with 1M observations in the lane task to show whether a hook grows with history. Besides one
event of each kind, two edits of a file covered by another session's *glob* claim and
SessionEnd of a session holding claims are timed.

- **warm**: the relay is running (the usual case): the hook is a client of it.
- **cold**: no relay answers: the hook applies the event itself on a copy of the same store
  and starts a relay (which finds the copy's relay lock held by this benchmark and exits).

Each hook process's own CPU time (user + system) is recorded beside its wall time. Results go
to bench/results/hooks.json; bench/check.py turns them into the latency gate.
"""

from __future__ import annotations

import argparse
import compileall
import fcntl
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import _stats  # noqa: E402

from colony_tasks.domain import sessions  # noqa: E402
from colony_tasks.store import Store  # noqa: E402
from colony_tasks.usecases import actions  # noqa: E402

EXE = Path(sys.executable).parent / "colony-tasks"
BASELINE = HERE / "baseline_hook.py"
# Every event is gated (bench/check.py): each runs on every agent prompt or tool call.
GATED = (
    "session-start",
    "user-prompt-submit",
    "pre-tool-use",
    "post-tool-use",
    "pre-tool-use (glob claim)",
    "post-tool-use (glob claim)",
    "pre-tool-use (read)",
    "pre-tool-use (read, held)",
    "post-tool-use-failure",
    "subagent-start",
    "stop",
    "session-end",
)
COLD = " (cold)"
FLOOR = "floor (python -I -S -c pass)"
WORDS = "retry backoff auth middleware viewer schema migration cache index token parser".split()


def git_repo(root: Path) -> Path:
    repo = root / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "app.py").write_text("x = 1\n")
    (repo / "docs").mkdir()
    (repo / "docs" / "guide.md").write_text("a\n")
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@b",
        "GIT_COMMITTER_NAME": "b",
        "GIT_COMMITTER_EMAIL": "b@b",
    }
    for args in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "init"]):
        subprocess.run(
            ["git", "-c", "init.defaultBranch=main", *args], cwd=repo, env=env, check=True
        )
    return repo


def seed(home: Path, repo: Path, size: int) -> None:
    """Two sessions on the lane task, ``size`` observations of mixed traffic, a few claims."""
    store = Store(home / "colony.db")
    me = sessions.register(store, "bench-claude", agent="claude", cwd=str(repo))
    sessions.register(store, "bench-codex", agent="codex", cwd=str(repo))
    kinds = ["prompt", "edit", "command", "note", "decision", "question"]
    rows = []
    now = time.time() - 3600
    for i in range(size):
        kind = kinds[i % len(kinds)]
        text = f"{kind} {WORDS[i % len(WORDS)]} {WORDS[(i * 7) % len(WORDS)]} item {i}"
        sid = "bench-codex" if i % 2 else "bench-claude"
        rows.append((sid, me.task.id, kind, text, "{}", now + i * 0.01))
    with store.transaction():
        store.conn.executemany(
            "INSERT INTO observations(session_id, task_id, kind, text, meta, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            rows,
        )
        store.conn.executemany(
            "INSERT INTO observation_paths(observation_id, repo_id, path)"
            " SELECT id, ?, 'src/file' || (id % 500) || '.py' FROM observations WHERE kind = 'edit'",
            [(me.lane.repo_id,)],
        )
    actions.claim(store, "bench-codex", ["src/other.py", "docs/**"])
    for sid in ("bench-claude", "bench-codex"):
        store.set_cursor(me.task.id, sid, store.max_observation_id(me.task.id))
    store.close()


def payloads(repo: Path) -> dict[str, dict]:
    target = str(repo / "src" / "app.py")
    base = {
        "session_id": "bench-claude",
        "cwd": str(repo),
        "transcript_path": "/tmp/.claude/projects/b/bench-claude.jsonl",
    }
    edit = {"file_path": target, "old_string": "x = 1", "new_string": "x = 2"}
    guide = str(repo / "docs" / "guide.md")  # covered by bench-codex's docs/** claim
    glob_edit = {"file_path": guide, "old_string": "a", "new_string": "b"}
    return {
        "session-start": {**base, "hook_event_name": "SessionStart", "source": "startup"},
        "user-prompt-submit": {
            **base,
            "hook_event_name": "UserPromptSubmit",
            "prompt": "add retry with backoff to the parser cache",
        },
        "pre-tool-use": {
            **base,
            "hook_event_name": "PreToolUse",
            "tool_name": "Edit",
            "tool_input": edit,
            "tool_use_id": "t",
        },
        "post-tool-use": {
            **base,
            "hook_event_name": "PostToolUse",
            "tool_name": "Edit",
            "tool_input": edit,
            "tool_response": {"filePath": target},
            "tool_use_id": "t",
        },
        "pre-tool-use (glob claim)": {
            **base,
            "hook_event_name": "PreToolUse",
            "tool_name": "Edit",
            "tool_input": glob_edit,
            "tool_use_id": "g",
        },
        "post-tool-use (glob claim)": {
            **base,
            "hook_event_name": "PostToolUse",
            "tool_name": "Edit",
            "tool_input": glob_edit,
            "tool_response": {"filePath": guide},
            "tool_use_id": "g",
        },
        # A Read of a file nobody else holds (nearly every Read): the cheapest path.
        "pre-tool-use (read)": {
            **base,
            "hook_event_name": "PreToolUse",
            "tool_name": "Read",
            "tool_input": {"file_path": target},
            "tool_use_id": "r",
        },
        # A Read of a file another session claims, after the one line was said.
        "pre-tool-use (read, held)": {
            **base,
            "hook_event_name": "PreToolUse",
            "tool_name": "Read",
            "tool_input": {"file_path": guide},
            "tool_use_id": "h",
        },
        "post-tool-use-failure": {
            **base,
            "hook_event_name": "PostToolUseFailure",
            "tool_name": "Bash",
            "tool_input": {"command": "sed -i s/x/y/ src/app.py && false"},
            "tool_use_id": "f",
            "error": "Exit code 1",
            "is_interrupt": False,
        },
        "subagent-start": {
            **base,
            "hook_event_name": "SubagentStart",
            "agent_id": "a9f3c2d1e0",
            "agent_type": "Explore",
        },
        "stop": {**base, "hook_event_name": "Stop", "stop_hook_active": False},
    }


def fresh(name: str, payload: dict, ids) -> Callable[[], bytes]:
    """Each sample's payload, as the agent would send it: a new ``prompt_id`` or
    ``tool_use_id`` every time (a hook seeing byte-identical input twice within a minute takes
    it for a duplicate install and stops early, which would time the shortcut instead), and
    SessionStart for a new session each time."""

    def make() -> bytes:
        i = next(ids)
        if name == "session-start":
            return json.dumps({**payload, "session_id": f"bench-start-{i}"}).encode()
        if name == "user-prompt-submit":
            return json.dumps({**payload, "prompt_id": f"bench-prompt-{i}"}).encode()
        if name == "subagent-start":
            return json.dumps({**payload, "agent_id": f"bench-agent-{i}"}).encode()
        if "tool_use_id" in payload:
            return json.dumps({**payload, "tool_use_id": f"{payload['tool_use_id']}-{i}"}).encode()
        return json.dumps(payload).encode()

    return make


def event_of(name: str) -> str:
    """The hook event a candidate runs (``pre-tool-use (glob claim)`` runs pre-tool-use)."""
    return name.split(" (")[0]


CPU: dict[str, list[float]] = {}
BUDGETS: dict[int, dict] = {}


def runner(
    name: str, args: list[str], data: bytes | Callable[[], bytes], env: dict[str, str]
) -> Callable[[], None]:
    """One candidate: runs the process and records its CPU time (user + system) in CPU."""

    def call() -> None:
        payload = data() if callable(data) else data
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        # In a folder of no checkout, as agents run hooks (`python -m` puts it on the path).
        result = subprocess.run(args, input=payload, capture_output=True, env=env, cwd="/")
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if result.returncode != 0:
            raise SystemExit(f"{args} exited {result.returncode}: {result.stderr[-500:]!r}")
        used = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        CPU.setdefault(name, []).append(used)

    return call


def measure(size: int, n: int) -> list[_stats.Stat]:
    root = Path(tempfile.mkdtemp(prefix=f"colony-bench-hooks-{size}-"))
    home = root / "home"
    home.mkdir(
        mode=0o700
    )  # the data folder as the hooks make it (a relay is refused in a shared one)
    repo = git_repo(root)
    _stats.log(f"seeding {size} observations")
    seed(home, repo, size)
    # The cold candidates run on a copy of the same store whose relay lock this process holds:
    # no relay ever answers there, as for the first hook after a relay exited.
    cold_home = root / "cold-home"
    cold_home.mkdir(mode=0o700)
    for suffix in ("", "-wal", "-shm"):
        if (home / f"colony.db{suffix}").exists():
            shutil.copy2(home / f"colony.db{suffix}", cold_home / f"colony.db{suffix}")
    lock = open(cold_home / "relay-local.lock", "w")  # noqa: SIM115 - held for the whole run
    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    env = {**os.environ, "COLONY_TASKS_HOME": str(home)}
    cold_env = {**os.environ, "COLONY_TASKS_HOME": str(cold_home)}
    prompt = json.dumps(payloads(repo)["user-prompt-submit"]).encode()
    fns = {
        "baseline": runner("baseline", [sys.executable, str(BASELINE)], prompt, env),
        FLOOR: runner(FLOOR, [sys.executable, "-I", "-S", "-c", "pass"], b"", env),
    }
    ids = iter(range(10**9))
    for name, payload in payloads(repo).items():
        args = [str(EXE), "hook", event_of(name), "--agent", "claude"]
        fns[name] = runner(name, args, fresh(name, payload, ids), env)
        fns[name + COLD] = runner(name + COLD, args, fresh(name, payload, ids), cold_env)
    stores = [Store(home / "colony.db"), Store(cold_home / "colony.db")]
    counter = iter(range(10**9))
    ending: list[deque[str]] = [deque(), deque()]

    def prepare_end() -> None:  # a live session holding two claims, for SessionEnd to end
        for store, queue in zip(stores, ending, strict=True):
            sid = f"bench-ending-{next(counter)}"
            sessions.register(store, sid, agent="claude", cwd=str(repo))
            actions.claim(store, sid, ["src/ending.py", "tests/**"])
            queue.append(sid)

    def end_payload(queue: deque[str]) -> Callable[[], bytes]:
        def make() -> bytes:
            sid = queue.popleft()
            return json.dumps(
                {"session_id": sid, "cwd": str(repo), "hook_event_name": "SessionEnd"}
            ).encode()

        return make

    end_args = [str(EXE), "hook", "session-end", "--agent", "claude"]
    fns["session-end"] = runner("session-end", end_args, end_payload(ending[0]), env)
    fns["session-end" + COLD] = runner(
        "session-end" + COLD, end_args, end_payload(ending[1]), cold_env
    )

    def between() -> None:  # a new message from the other agent for each prompt to deliver
        for store in stores:
            actions.post(store, "bench-codex", f"progress note {next(counter)}")
            # The sessions SessionStart began leave again, as agents do: the lane keeps its two
            # bench sessions instead of gaining a live participant (and a briefing line) a round.
            for row in store.conn.execute(
                "SELECT id FROM sessions WHERE id LIKE 'bench-start-%' AND ended_at IS NULL"
            ).fetchall():
                sessions.end_session(store, store.get_session(row[0]))
        prepare_end()

    warmup = 2
    for _ in range(warmup + 1):
        prepare_end()
    _stats.log(f"timing {n} interleaved rounds at {size}")
    CPU.clear()
    samples = _stats.time_interleaved(fns, n, warmup=warmup, between=between)
    for store in stores:
        store.close()
    BUDGETS[size] = client_budget(env, repo)
    stop_relay(env)
    lock.close()
    base = _stats.stat(f"baseline (stdin JSON + 1 WAL insert) @{size}", samples["baseline"])
    out = [base]
    for name in [FLOOR, *payloads(repo), "session-end"]:
        for variant in ("", COLD) if name != FLOOR else ("",):
            key = name + variant
            cpu = statistics.median(CPU[key][warmup:]) * 1000
            row = _stats.stat(f"{key} @{size}", samples[key], note=f"cpu {cpu:.1f} ms")
            out.append(_stats.compare(row, base, "baseline"))
    return out


def relay_status(env: dict[str, str]) -> dict:
    from colony_tasks.relay import wire

    path = str(Path(env["COLONY_TASKS_HOME"]) / f"relay-{wire.LOCAL_KEY}.sock")
    return wire.ask(path, {"v": wire.VERSION, "op": "ping"}, 5.0) or {}


def client_budget(env: dict[str, str], repo: Path) -> dict:
    """What one warm hook client loads (``-X importtime``: every module it imports, the
    interpreter's own startup included), and the relay's mean work per event so far."""
    payload = {**payloads(repo)["user-prompt-submit"], "prompt_id": "budget-probe"}
    done = subprocess.run(
        [sys.executable, "-X", "importtime", str(EXE), "hook", "user-prompt-submit"],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=env,
        check=True,
    )
    modules = [
        line.split("|")[-1].strip()
        for line in done.stderr.decode().splitlines()
        if line.startswith("import time:") and "|" in line and "imported package" not in line
    ]
    status = relay_status(env)
    return {
        "client_modules": len(modules),
        "client_colony_modules": sorted(m.strip() for m in modules if "colony_tasks" in m),
        "relay_events": status.get("served"),
        "relay_work_us_per_event": round(
            1e6 * status.get("work_seconds", 0) / max(status.get("served") or 1, 1), 1
        ),
        "relay_rss_kb": status.get("rss_kb"),
    }


def stop_relay(env: dict[str, str]) -> None:
    """End the relay the warm candidates started (it would exit when idle anyway)."""
    pid_file = Path(env["COLONY_TASKS_HOME"]) / "relay-local.pid"
    try:
        os.kill(int(pid_file.read_text()), 15)
    except (OSError, ValueError):
        pass


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=40)
    parser.add_argument("--sizes", default="1000,1000000")
    args = parser.parse_args()
    if not EXE.exists():
        raise SystemExit(f"{EXE} not found: run `make install` first")
    # Installed packages carry bytecode; an editable checkout under PYTHONDONTWRITEBYTECODE would
    # otherwise recompile every module in every hook process.
    compileall.compile_dir(str(HERE.parent / "colony_tasks"), quiet=1)
    info = _stats.machine_info()
    print(_stats.machine_line(info))
    results: list[_stats.Stat] = []
    sizes = [int(s) for s in args.sizes.split(",")]
    for size in sizes:
        results.extend(measure(size, args.n))
    growth = []
    if len(sizes) > 1:
        small, large = sizes[0], sizes[-1]
        by_name = {s.name: s for s in results}
        names = ["baseline (stdin JSON + 1 WAL insert)", *payloads(Path("/x")), "session-end"]
        for event in names:
            a, b = by_name[f"{event} @{small}"], by_name[f"{event} @{large}"]
            growth.append(
                _stats.compare(
                    _stats.Stat(
                        f"{event}: @{large} vs @{small}",
                        b.n,
                        b.p50_ms,
                        b.p90_ms,
                        b.min_ms,
                        b.max_ms,
                        b.mean_ms,
                    ),
                    a,
                    f"@{small}",
                )
            )
    print(_stats.format_table(results + growth, title="hook wall time per process"))
    for size, budget in BUDGETS.items():
        print(f"@{size}: {json.dumps(budget)}")
    _stats.write_json(
        HERE / "results" / "hooks.json",
        {
            "machine": info,
            "n": args.n,
            "sizes": sizes,
            "gated": list(GATED),
            "results": [s.to_dict() for s in results],
            "growth": [s.to_dict() for s in growth],
            "budgets": BUDGETS,
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
