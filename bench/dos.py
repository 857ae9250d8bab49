"""Denial of service at the sizes of issue 23: for each event, the hook's time, how long the
store's write lock was held while it ran, and whether the event was kept, for this tree and
(same run) an earlier commit.

The lock held is measured from outside: while the hook runs, another connection takes the
write lock (``BEGIN IMMEDIATE``) and gives it back, again and again; its longest wait is the
longest stretch the hook held the lock (to about a millisecond).

1. PostToolUse of an Edit whose path meets another session's glob claim ``*?*?*?*?*?*?*?*?e``
   (the regex of that glob backtracks on a path without an 'e').
2. PreToolUse of ``ls /*/*/*/*/*/*/*`` (wildcards above the last part of a word).
3. SessionEnd of a session holding 80,000 claims.
4. claim_file of 200 paths at 100,000 live claims held by the claimer, and at 20,000 globs
   held by another session (in process: what an MCP ``claim_file`` does).
5. PostToolUse of a Codex apply_patch naming 20,000 files (each held by another session).
6. PostToolUse of an Edit whose payload holds 50,000 nested objects beside the edit.

Run ``python bench/dos.py [--baseline COMMIT]`` (default c7e5fd0, the commit before issue 23).
Each hook is the real console entry (``python -m colony_tasks hook …``) with the source tree on
PYTHONPATH; a hook that runs past 60 s is stopped and reported as such.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
LIMIT = 60.0


HELD: list[float] = []  # the lock held during the last run() given a store to watch


class LockWatch:
    """Takes and gives back the store's write lock in a loop; ``held`` is its longest wait."""

    def __init__(self, db: str) -> None:
        import threading

        self.db, self.held, self.done = db, 0.0, threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        import sqlite3

        conn = sqlite3.connect(self.db, timeout=LIMIT, isolation_level=None)
        while not self.done.is_set():
            start = time.perf_counter()
            try:
                conn.execute("BEGIN IMMEDIATE")
                conn.execute("ROLLBACK")
            except sqlite3.OperationalError:
                pass
            self.held = max(self.held, time.perf_counter() - start)
            time.sleep(0.001)
        conn.close()

    def __enter__(self) -> LockWatch:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        self.thread.join()


def run(
    src: Path,
    home: Path,
    args: list[str],
    stdin: dict | None = None,
    code: str = "",
    raw: bytes | None = None,
    watch: str | None = None,
) -> tuple[float, str]:
    """Run the hook (or ``code``); with ``watch`` (a database), HELD[0] is the lock held."""
    env = {**os.environ, "COLONY_TASKS_HOME": str(home), "PYTHONPATH": str(src)}
    cmd = [sys.executable, "-c", code] if code else [sys.executable, "-m", "colony_tasks", *args]
    data = raw if raw is not None else json.dumps(stdin or {}).encode()
    import contextlib

    watcher = LockWatch(watch) if watch else contextlib.nullcontext()
    start = time.perf_counter()
    try:
        with watcher:
            out = subprocess.run(
                cmd,
                input=data,
                capture_output=True,
                env=env,
                timeout=LIMIT,
                cwd=src,  # `python -m` puts the working folder first on sys.path: the tree
            )
        text = out.stdout.decode()[-300:] + out.stderr.decode()[-300:]
    except subprocess.TimeoutExpired:
        return LIMIT, "stopped at 60 s"
    finally:
        if isinstance(watcher, LockWatch):
            HELD[:] = [watcher.held]
    return time.perf_counter() - start, text


SETUP = r"""
import json, sys, sqlite3
from pathlib import Path
sys.path.insert(0, {root!r})
from tests.support.gitutil import make_repo
from tests.support.helpers import join
from colony_tasks.store import Store
home = Path({home!r}); repo = make_repo(home.parent / "proj")
store = Store(home / "colony.db")
for sid, agent in (("a", "claude"), ("b", "codex")):
    join(store, sid, agent, repo)
print(json.dumps({{"repo": str(repo)}}))
"""

FILL = r"""
import sys, time
sys.path.insert(0, {root!r})
from colony_tasks.store import Store
store = Store({db!r})
lane = store.get_lane(store.get_session({holder!r}).lane_id)
task = store.conn.execute("SELECT id FROM tasks LIMIT 1").fetchone()[0]
now = store.now()
regex = {regex!r}
rows = [({holder!r}, task, lane.repo_id, lane.id, {pattern!r}.format(i=i), {glob}, regex, "", now, now, now + 3600)
        for i in range({n})]
with store.transaction():
    store.conn.executemany("INSERT INTO claims(session_id, task_id, repo_id, lane_id, pattern,"
        " is_glob, regex, note, created_at, renewed_at, expires_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)", rows)
"""

CLAIM = r"""
import sys, time
sys.path.insert(0, {src!r})
from colony_tasks.store import Store
from colony_tasks.domain import claims
store = Store({db!r})
paths = ["src/m%d/g%d.py" % (i, i) for i in range(200)]
t = time.perf_counter(); claims.claim(store, store.get_session("b"), paths, announce=False)
print("took %.3f" % (time.perf_counter() - t))
"""


def scenario(src: Path, name: str) -> tuple[float, str]:
    tmp = Path(tempfile.mkdtemp(prefix="dos-"))
    home = tmp / "home"
    home.mkdir()
    _, out = run(ROOT, home, [], code=SETUP.format(root=str(ROOT), home=str(home)))
    repo = json.loads(out.strip().splitlines()[0])["repo"] if out.strip().startswith("{") else ""
    db = str(home / "colony.db")
    claude = lambda event, sid, **f: {  # noqa: E731
        "session_id": sid,
        "cwd": repo,
        "hook_event_name": event,
        "transcript_path": f"/t/{sid}.jsonl",
        **f,
    }
    if name == "edit vs *?*?…e glob":
        import pathspec

        regex = pathspec.GitIgnoreSpec.from_lines(["*?*?*?*?*?*?*?*?e"]).patterns[0].regex.pattern
        run(
            ROOT,
            home,
            [],
            code=FILL.format(
                root=str(ROOT),
                db=db,
                holder="a",
                regex=regex,
                pattern="*?*?*?*?*?*?*?*?e",
                glob=1,
                n=1,
            ),
        )
        rel = "src/" + "ae" * 40 + ".py"  # holds an "e": the prefilter lets the regex run
        (Path(repo) / "src").mkdir(exist_ok=True)
        (Path(repo) / rel).write_text("x = 1\n")
        fields = {
            "tool_name": "Edit",
            "tool_use_id": "e1",
            "tool_input": {
                "file_path": str(Path(repo) / rel),
                "old_string": "0",
                "new_string": "1",
            },
        }
        took, _ = run(
            src,
            home,
            ["hook", "post-tool-use"],
            claude("PostToolUse", "b", tool_response={}, **fields),
            watch=db,
        )
        kept = _count(db, "SELECT COUNT(*) FROM observations WHERE session_id='b' AND kind='edit'")
        return took, f"edit recorded: {kept}"
    if name == "PreToolUse ls /*/*/*/*/*/*/*":
        fields = {
            "tool_name": "Bash",
            "tool_use_id": "l1",
            "tool_input": {"command": "ls /*/*/*/*/*/*/*"},
        }
        took, _ = run(
            src, home, ["hook", "pre-tool-use"], claude("PreToolUse", "b", **fields), watch=db
        )
        notes = list((home / "shell").glob("*.json")) if (home / "shell").exists() else []
        return took, f"note written: {len(notes)}"
    if name == "SessionEnd holding 80k claims":
        run(
            ROOT,
            home,
            [],
            code=FILL.format(
                root=str(ROOT),
                db=db,
                holder="a",
                regex=None,
                pattern="src/m{i}/f.py",
                glob=0,
                n=80_000,
            ),
        )
        took, _ = run(
            src, home, ["hook", "session-end"], claude("SessionEnd", "a", reason="exit"), watch=db
        )
        live = _count(
            db, "SELECT COUNT(*) FROM claims WHERE session_id='a' AND released_at IS NULL"
        )
        return took, f"claims still live: {live}"
    if name.startswith("claim_file"):
        glob = "globs" in name
        import pathspec

        regex = pathspec.GitIgnoreSpec.from_lines(["src/m*/x*.py"]).patterns[0].regex.pattern
        run(
            ROOT,
            home,
            [],
            code=FILL.format(
                root=str(ROOT),
                db=db,
                holder="a" if glob else "b",
                regex=regex if glob else None,
                pattern="src/m{i}/x*.py" if glob else "src/m{i}/f.py",
                glob=int(glob),
                n=20_000 if glob else 100_000,
            ),
        )
        took, out = run(src, home, [], code=CLAIM.format(src=str(src), db=db), watch=db)
        inner = [line for line in out.splitlines() if line.startswith("took")]
        return (float(inner[0].split()[1]) if inner else took), "granted" if inner else out[-120:]
    if name == "apply_patch naming 20,000 files":
        run(
            ROOT,
            home,
            [],
            code=FILL.format(
                root=str(ROOT),
                db=db,
                holder="a",
                regex=None,
                pattern="src/f{i}.py",
                glob=0,
                n=20_000,
            ),
        )
        body = "*** Begin Patch\n" + "".join(
            f"*** Update File: src/f{i}.py\n@@\n-old\n+new\n" for i in range(20_000)
        )
        payload = {
            "session_id": "b",
            "cwd": repo,
            "hook_event_name": "PostToolUse",
            "transcript_path": None,
            "turn_id": "t1",
            "model": "gpt-5.5-codex",
            "tool_name": "apply_patch",
            "tool_use_id": "p1",
            "tool_input": {"command": body + "*** End Patch\n"},
            "tool_response": "ok",
        }
        took, out = run(src, home, ["hook", "post-tool-use", "--agent", "codex"], payload, watch=db)
        kept = _count(db, "SELECT COUNT(*) FROM observations WHERE session_id='b' AND kind='edit'")
        return took, f"edit recorded: {kept}"
    if name == "Edit beside 50k nested objects":
        fields = {
            "tool_name": "Edit",
            "tool_use_id": "n1",
            "tool_input": {"file_path": str(Path(repo) / "src/app.py"), "junk": 0},
        }
        text = json.dumps(claude("PostToolUse", "b", tool_response={}, **fields))
        nested = '{"a": ' * 50_000 + "1" + "}" * 50_000
        raw = text.replace('"junk": 0', f'"junk": {nested}').encode()
        took, _ = run(src, home, ["hook", "post-tool-use", "--agent", "claude"], raw=raw, watch=db)
        kept = _count(db, "SELECT COUNT(*) FROM observations WHERE session_id='b' AND kind='edit'")
        return took, f"edit recorded: {kept}"
    raise ValueError(name)


def _count(db: str, sql: str) -> int:
    import sqlite3

    with sqlite3.connect(db) as conn:
        return int(conn.execute(sql).fetchone()[0])


SCENARIOS = [
    "edit vs *?*?…e glob",
    "PreToolUse ls /*/*/*/*/*/*/*",
    "SessionEnd holding 80k claims",
    "claim_file 200 paths, 100k own claims",
    "claim_file 200 paths, 20k globs of another",
    "apply_patch naming 20,000 files",
    "Edit beside 50k nested objects",
]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline", default="c7e5fd0")
    parser.add_argument("--only", nargs="*", choices=SCENARIOS, help="these rows only")
    args = parser.parse_args()
    old = Path(tempfile.mkdtemp(prefix="dos-base-")) / "tree"
    subprocess.run(
        ["git", "worktree", "add", "--detach", str(old), args.baseline],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    try:
        print(f"| event | this tree: hook, lock held, kept | {args.baseline}: the same |")
        print("|---|---|---|")
        for name in args.only or SCENARIOS:
            row = []
            for tree in (ROOT, old):
                HELD[:] = []
                took, kept = scenario(tree, name)
                held = f"{HELD[0]:.3f} s" if HELD else "?"
                row.append(f"{took:.3f} s, {held}, {kept}")
            print(f"| {name} | {row[0]} | {row[1]} |", flush=True)
    finally:
        subprocess.run(
            ["git", "worktree", "remove", "--force", str(old)], cwd=ROOT, capture_output=True
        )


if __name__ == "__main__":
    main()
