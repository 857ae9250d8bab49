"""Hook throughput: 16 concurrent hook processes on one store, events per second.

    python bench/throughput.py [--events 20] [--rounds 3] [--before PATH] [--team]

Each of 16 workers runs ``colony-tasks hook user-prompt-submit`` (a new process per event, a
new prompt id each, as agents send them) ``--events`` times in a row; the figure is all
events over the wall time. Candidates alternate round by round (same run, same noise):

- ``relay``: this install, its relay running (the default path);
- ``in process``: this install with ``COLONY_TASKS_RELAY=off`` (every hook opens the store);
- ``before``: another install's console script (``--before``, e.g. the previous release in its
  own virtualenv), which applies every event in process — the figure the relay must beat.

``--team`` runs the same on a throwaway PostgreSQL server (Debian's binaries), where every
version goes through a relay. Results go to bench/results/throughput.json.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import _stats  # noqa: E402

from colony_tasks.base import backend  # noqa: E402
from colony_tasks.domain import sessions  # noqa: E402
from colony_tasks.store import open_store  # noqa: E402
from hooks import git_repo, stop_relay  # noqa: E402

EXE = Path(sys.executable).parent / "colony-tasks"
WORKERS = 16


def run(exe: str, env: dict[str, str], repo: Path, events: int, tag: str) -> float:
    """events/s for WORKERS concurrent workers sending ``events`` prompts each."""

    def one(worker: int) -> None:
        for i in range(events):
            payload = {
                "session_id": f"tp-{tag}-{worker}",
                "cwd": str(repo),
                "hook_event_name": "UserPromptSubmit",
                "prompt": f"worker {worker} prompt {i}",
                "prompt_id": f"{tag}-{worker}-{i}-{time.monotonic_ns()}",
            }
            done = subprocess.run(
                [exe, "hook", "user-prompt-submit", "--agent", "claude"],
                input=json.dumps(payload).encode(),
                capture_output=True,
                env=env,
                cwd=repo,  # as agents run hooks (and so no checkout is on `python -m`'s path)
            )
            if done.returncode != 0:
                raise SystemExit(f"{exe} exited {done.returncode}")

    start = time.perf_counter()
    with ThreadPoolExecutor(WORKERS) as pool:
        list(pool.map(one, range(WORKERS)))
    return WORKERS * events / (time.perf_counter() - start)


def prepare(address: str, repo: Path, tag: str) -> None:
    store = open_store(address)
    for worker in range(WORKERS):
        sessions.register(store, f"tp-{tag}-{worker}", agent="claude", cwd=str(repo))
    store.close()


def measure(
    candidates: dict[str, tuple[str, dict[str, str]]],
    repo: Path,
    events: int,
    rounds: int,
) -> dict[str, list[float]]:
    rates: dict[str, list[float]] = {name: [] for name in candidates}
    for r in range(rounds):
        order = list(candidates)
        order = order[r % len(order) :] + order[: r % len(order)]
        for name in order:
            exe, env = candidates[name]
            rates[name].append(run(exe, env, repo, events, f"{r}"))
            _stats.log(f"round {r} {name}: {rates[name][-1]:.0f} events/s")
    return rates


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--before", help="another install's colony-tasks console script")
    parser.add_argument("--team", action="store_true", help="on PostgreSQL (team mode)")
    args = parser.parse_args()
    # Installed packages carry bytecode; an editable checkout under PYTHONDONTWRITEBYTECODE would
    # otherwise recompile its modules in every hook process.
    compileall.compile_dir(str(HERE.parent / "colony_tasks"), quiet=1)
    print(_stats.machine_line(_stats.machine_info()))
    root = Path(tempfile.mkdtemp(prefix="colony-bench-throughput-"))
    repo = git_repo(root)
    server = None
    url = None
    if args.team:
        from tests.support.pgserver import PgServer, pg_bin

        bindir = pg_bin()
        if bindir is None:
            raise SystemExit("PostgreSQL binaries not found: run `make postgres` first")
        server = PgServer(bindir)
        server.start()
        url = server.create_database("bench")
    try:
        homes: dict[str, Path] = {}
        candidates: dict[str, tuple[str, dict[str, str]]] = {}
        names = ["relay", "in process"] if not args.team else ["relay"]
        if args.before:
            names.append("before")
        for name in names:
            home = root / f"home-{name.replace(' ', '-')}"
            home.mkdir()
            homes[name] = home
            env = {**os.environ, "COLONY_TASKS_HOME": str(home)}
            env.pop("COLONY_TASKS_DATABASE_URL", None)
            if url:
                env["COLONY_TASKS_DATABASE_URL"] = url
            if name == "in process":
                env["COLONY_TASKS_RELAY"] = "off"
            exe = args.before if name == "before" else str(EXE)
            candidates[name] = (str(exe), env)
        for r in range(args.rounds):
            prepare(url or str(homes["relay"] / "colony.db"), repo, f"{r}")
            for name in names:
                if not url and name != "relay":
                    prepare(str(homes[name] / "colony.db"), repo, f"{r}")
        rates = measure(candidates, repo, args.events, args.rounds)
        base = statistics.median(rates["before"]) if "before" in rates else None
        lines = []
        for name, values in rates.items():
            med = statistics.median(values)
            ratio = f"  {med / base:.2f}x before" if base else ""
            lines.append(f"{name:12s} median {med:6.0f} events/s  (rounds: {values}){ratio}")
        title = "PostgreSQL" if url else "SQLite"
        print(f"throughput, {WORKERS} concurrent hook processes, {title}:")
        print("\n".join(lines))
        _stats.write_json(
            HERE / "results" / f"throughput-{'team' if url else 'sqlite'}.json",
            {"workers": WORKERS, "events": args.events, "rates": rates},
        )
        for home in homes.values():
            if url:
                pid_file = home / f"relay-{backend.store_key(url)}.pid"
                try:
                    os.kill(int(pid_file.read_text()), 15)
                except (OSError, ValueError):
                    pass
            else:
                stop_relay({"COLONY_TASKS_HOME": str(home)})
    finally:
        if server is not None:
            server.destroy()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
