"""Shell-edit detection and the interface-change relay: what they cost, against same-run baselines.

    python bench/interfaces.py [--n 30] [--files 5000]

1. Hook latency. Every sample runs the installed ``colony-tasks hook EVENT`` as a new process,
   interleaved with bench/baseline_hook.py (stdin JSON + one WAL insert) and the Edit hooks,
   on a generated repository of ``--files`` source files where another session holds 20 files.
   Shell PreToolUse notes those files' state; PostToolUse compares (its note written by an
   untimed PreToolUse just before). Measured on a store without and with the repository's
   dependency graph (the hooks never read it: the figures should match).
2. The indexer on the same repository, through the store (``interfaces.index_repo``): a full build
   from nothing, and the incremental pass after one signature change (load the graph rows,
   re-read the edited file, write its rows, address the notice).

Results go to bench/results/interfaces.json.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import _stats  # noqa: E402
from depgraph import generate  # noqa: E402

from colony_tasks.depgraph import interface_changes as interfaces  # noqa: E402
from colony_tasks.domain import sessions, shell_edits  # noqa: E402
from colony_tasks.store import Store  # noqa: E402
from colony_tasks.usecases import actions, events  # noqa: E402
from hooks import BASELINE, EXE, git_repo, seed  # noqa: E402

HELD = 20


def make_repo(root: Path, n_files: int) -> Path:
    repo = git_repo(root)  # a git work tree with src/app.py
    generate(repo, n_files)
    return repo


def held_files(repo: Path) -> list[str]:
    folder = repo / "src" / "app" / "pkg0"
    return sorted(f"src/app/pkg0/{p.name}" for p in folder.glob("m*.py"))[:HELD]


def prepare(home: Path, repo: Path, *, graph: bool) -> None:
    seed(home, repo, 1000)
    store = Store(home / "colony.db")
    actions.claim(store, "bench-codex", held_files(repo))
    if graph:
        interfaces.index_repo(store, str(repo))
    store.close()


def payload(repo: Path, event: str, tool: str, command_or_path: str, use_id: str) -> bytes:
    base = {
        "session_id": "bench-claude",
        "cwd": str(repo),
        "transcript_path": "/tmp/.claude/projects/b/bench-claude.jsonl",
        "hook_event_name": event,
        "tool_name": tool,
        "tool_use_id": use_id,
    }
    if tool == "Bash":
        base["tool_input"] = {"command": command_or_path, "description": "bench"}
    else:
        base["tool_input"] = {"file_path": command_or_path, "old_string": "a", "new_string": "b"}
    if event == "PostToolUse":
        base["tool_response"] = {"stdout": "", "stderr": "", "interrupted": False}
    return json.dumps(base).encode()


def hook_call(event: str, data: Callable[[str], bytes], home: Path):
    """One hook process per call; ``data(use_id)`` makes its payload. Each round passes a new
    tool-use id (pairing a PreToolUse with its PostToolUse, as the agent does): a hook seeing
    byte-identical input twice within a minute takes it for a duplicate install and stops
    early, which would time that shortcut instead."""
    env = {**os.environ, "COLONY_TASKS_HOME": str(home)}
    args = [str(EXE), "hook", event, "--agent", "claude"]

    def call(use_id: str) -> None:
        result = subprocess.run(args, input=data(use_id), capture_output=True, env=env)
        if result.returncode != 0 or result.stderr:
            raise SystemExit(f"{event} failed: {result.stderr[-300:]!r}")

    return call


def hook_latency(root: Path, repo: Path, n: int) -> list[_stats.Stat]:
    homes = {"no graph": root / "home-plain", "graph": root / "home-graph"}
    for label, home in homes.items():
        home.mkdir()
        _stats.log(f"seeding the store ({label})")
        prepare(home, repo, graph=label == "graph")
    target = str(repo / "src" / "app.py")
    command = "sed -i 's/x = 1/x = 1/' src/app.py && pytest -q tests/"
    held = repo / held_files(repo)[0]
    cases: dict[str, tuple] = {
        "baseline": (lambda use_id: _baseline(homes["no graph"], repo), None),
        "PreToolUse Edit": (
            hook_call(
                "pre-tool-use",
                lambda u: payload(repo, "PreToolUse", "Edit", target, f"e{u}"),
                homes["no graph"],
            ),
            None,
        ),
    }
    for label, home in homes.items():
        tag = f"b{len(cases)}-"

        def pre(u: str, tag: str = tag) -> bytes:
            return payload(repo, "PreToolUse", "Bash", command, tag + u)

        def post(u: str, tag: str = tag) -> bytes:
            return payload(repo, "PostToolUse", "Bash", command, tag + u)

        # The PreToolUse timed on its own and the one noting files for the timed PostToolUse
        # are different tool calls (ids "x…" and "n…"), as in a session.
        cases[f"PreToolUse Bash ({label})"] = (
            hook_call("pre-tool-use", lambda u, pre=pre: pre("x" + u), home),
            None,
        )
        cases[f"PostToolUse Bash, nothing changed ({label})"] = (
            hook_call("post-tool-use", lambda u, post=post: post("n" + u), home),
            hook_call("pre-tool-use", lambda u, pre=pre: pre("n" + u), home),
        )
    home = homes["no graph"]

    def pre_fmt(u: str) -> bytes:
        return payload(repo, "PreToolUse", "Bash", "sh fmt.sh", f"c{u}")

    def post_fmt(u: str) -> bytes:
        return payload(repo, "PostToolUse", "Bash", "sh fmt.sh", f"c{u}")

    note = hook_call("pre-tool-use", pre_fmt, home)

    def note_then_touch(use_id: str) -> None:
        note(use_id)
        held.write_text(held.read_text() + "#\n")  # the command changed a held file

    cases["PostToolUse Bash, a held file changed (no graph)"] = (
        hook_call("post-tool-use", post_fmt, home),
        note_then_touch,
    )
    cases["PostToolUse Edit"] = (
        hook_call(
            "post-tool-use", lambda u: payload(repo, "PostToolUse", "Edit", target, f"p{u}"), home
        ),
        None,
    )
    names = list(cases)
    for name in names:  # warm up: bytecode, page cache
        fn, setup = cases[name]
        if setup:
            setup("warm")
        fn("warm")
    samples: dict[str, list[float]] = {name: [] for name in names}
    _stats.log(f"timing {n} interleaved rounds of {len(names)} candidates")
    for i in range(n):
        shift = i % len(names)
        for name in names[shift:] + names[:shift]:
            fn, setup = cases[name]
            if setup:
                setup(str(i))
            start = time.perf_counter()
            fn(str(i))
            samples[name].append(time.perf_counter() - start)
    base = _stats.stat("baseline (stdin JSON + 1 WAL insert)", samples["baseline"])
    out = [base]
    for name in names[1:]:
        out.append(_stats.compare(_stats.stat(name, samples[name]), base, "baseline"))
    return out


def in_process(root: Path, repo: Path, n: int) -> list[_stats.Stat]:
    """The detection's own work inside a hook, without process start-up: noting the held
    files before the command, comparing after (nothing changed)."""
    home = root / "home-plain"
    os.environ["COLONY_TASKS_HOME"] = str(home)
    store = Store(home / "colony.db")
    me = store.get_session("bench-claude")
    command = "sed -i 's/a/a/' src/app.py && pytest -q"
    ids = iter(range(10**9))
    use_ids = [f"ip{next(ids)}"]

    def fresh() -> None:  # every tool call has its own id, so its own new note file
        use_ids[0] = f"ip{next(ids)}"

    lane = store.get_lane(me.lane_id)
    cwd = str(repo)
    watched = len(shell_edits._watched(store, me, lane))

    def note_it() -> None:
        shell_edits.note_before(store, me, lane, cwd, command, use_ids[0])

    note = _stats.time_calls(note_it, n, setup=fresh)
    both = _stats.time_calls(
        lambda: shell_edits.changed_by(store, me, lane, cwd, command, use_ids[0]),
        n,
        setup=lambda: (fresh(), note_it()),
    )
    noop = _stats.time_calls(lambda: store.get_lane(me.lane_id), n)
    store.close()
    return [
        _stats.stat("one lane lookup (for scale)", noop),
        _stats.stat(f"note before the command ({watched} watched + named files)", note),
        _stats.stat("compare after the command (nothing changed)", both),
    ]


def _baseline(home: Path, repo: Path) -> None:
    data = payload(repo, "UserPromptSubmit", "Bash", "x", "u")
    env = {**os.environ, "COLONY_TASKS_HOME": str(home)}
    subprocess.run(
        [sys.executable, str(BASELINE)], input=data, capture_output=True, env=env, check=True
    )


def indexer(root: Path, repo: Path, rounds: int) -> list[_stats.Stat]:
    builds = []
    for i in range(rounds):
        db = root / f"index-{i}.db"
        store = Store(db)
        sessions.register(store, "a", agent="codex", cwd=str(repo))
        start = time.perf_counter()
        interfaces.index_repo(store, str(repo))
        builds.append(time.perf_counter() - start)
        if i < rounds - 1:
            store.close()
            db.unlink()
    _stats.log("full builds done; timing incremental passes")
    sessions.register(store, "b", agent="claude", cwd=str(repo))
    hub = repo / "src" / "app" / "pkg0" / "m0.py"
    importers = store.conn.execute(
        "SELECT src FROM dep_edges WHERE dst = ? LIMIT 1", ("src/app/pkg0/m0.py",)
    ).fetchall()
    if importers:
        actions.claim(store, "b", [importers[0][0]])
    original = hub.read_text()
    timed: dict[str, list[float]] = {"cold": [], "warm": []}
    notices = {"cold": 0, "warm": 0}
    cache: interfaces.Cache = {}
    interfaces.index_repo(store, str(repo), cache=cache)  # the worker's graph in memory
    try:
        passes = max(5, rounds * 2)
        for i in range(2 * passes):
            mode = "cold" if i < passes else "warm"  # warm passes in a row: the cache holds
            hub.write_text(original + f"\n\ndef added_{i}(x, y={i}):\n    return x\n")
            events.after_tool(
                store,
                events.Event("a", "codex", str(repo)),
                events.ToolUse("apply_patch", "edit", (str(hub),)),
            )
            start = time.perf_counter()
            done = interfaces.index_repo(store, str(repo), cache=cache if mode == "warm" else None)
            timed[mode].append(time.perf_counter() - start)
            notices[mode] += len(done.notices)
    finally:
        hub.write_text(original)
        store.close()
    return [
        _stats.stat(f"index_repo full build ({_count(repo)} files, store)", builds),
        _stats.stat(
            f"one signature change, graph loaded from the store ({notices['cold']} notices)",
            timed["cold"],
        ),
        _stats.stat(
            f"one signature change, worker's graph in memory ({notices['warm']} notices)",
            timed["warm"],
        ),
    ]


def _count(repo: Path) -> int:
    return sum(
        1
        for p in repo.rglob("*")
        if p.suffix in (".py", ".ts", ".tsx") and "node_modules" not in p.parts
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=30)
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--builds", type=int, default=3)
    args = parser.parse_args()
    if not EXE.exists():
        raise SystemExit(f"{EXE} not found: run `make install` first")
    compileall.compile_dir(str(HERE.parent / "colony_tasks"), quiet=1)
    info = _stats.machine_info()
    print(_stats.machine_line(info))
    root = Path(tempfile.mkdtemp(prefix="colony-bench-relay-"))
    try:
        _stats.log(f"generating {args.files} source files")
        repo = make_repo(root, args.files)
        (repo / "fmt.sh").write_text("true\n")
        hooks_ = hook_latency(root, repo, args.n)
        print(_stats.format_table(hooks_, title=f"hook wall time per process, {HELD} held files"))
        inner = in_process(root, repo, args.n * 10)
        print(_stats.format_table(inner, title="shell-edit detection in process"))
        index_ = indexer(root, repo, args.builds)
        print(_stats.format_table(index_, title="indexer through the store"))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    _stats.write_json(
        HERE / "results" / "interfaces.json",
        {
            "machine": info,
            "n": args.n,
            "files": args.files,
            "hooks": [s.to_dict() for s in hooks_],
            "in_process": [s.to_dict() for s in inner],
            "indexer": [s.to_dict() for s in index_],
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
