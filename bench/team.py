"""Team mode's hook cost and throughput against SQLite mode, in one run.

    python bench/team.py [--n 40] [--events 20]

Starts a throwaway PostgreSQL server (tests/support/pgserver.py: Debian's binaries, loopback, a temp
folder) and times the installed ``colony-tasks hook EVENT`` process per event:

* SQLite mode vs team mode (relay running, PostgreSQL up), interleaved: goal team ≤ 1.5×;
* team mode with the server stopped (events spool locally) vs SQLite mode: goal ≤ 1.5×;
* throughput: 16 concurrent hook processes each sending ``--events`` prompts, events/s on
  PostgreSQL (through the relay) and on SQLite.

Results go to bench/results/team.json. Medians and same-run ratios only.
"""

from __future__ import annotations

import argparse
import json
import os
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
from hooks import fresh, git_repo, payloads  # noqa: E402
from tests.support.pgserver import PgServer, pg_bin  # noqa: E402

EXE = Path(sys.executable).parent / "colony-tasks"
EVENTS = ("user-prompt-submit", "pre-tool-use", "post-tool-use")


def hook(event: str, payload: dict, env: dict[str, str]) -> None:
    result = subprocess.run(
        [str(EXE), "hook", event, "--agent", "claude"],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=env,
    )
    if result.returncode != 0:
        raise SystemExit(f"hook {event} exited {result.returncode}")


def prepare(address: str, repo: Path) -> None:
    store = open_store(address)
    sessions.register(store, "bench-claude", agent="claude", cwd=str(repo))
    sessions.register(store, "bench-codex", agent="codex", cwd=str(repo))
    store.close()


def throughput(env: dict[str, str], repo: Path, events: int, workers: int = 16) -> float:
    def one(worker: int) -> None:
        for i in range(events):
            payload = {
                "session_id": f"tp-{worker}",
                "cwd": str(repo),
                "hook_event_name": "UserPromptSubmit",
                "prompt": f"worker {worker} prompt {i}",
            }
            hook("user-prompt-submit", payload, env)

    start = time.perf_counter()
    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(one, range(workers)))
    return workers * events / (time.perf_counter() - start)


def stop_relay(home: Path, url: str) -> None:
    pid_file = home / f"relay-{backend.store_key(url)}.pid"
    try:
        pid = int(pid_file.read_text())
    except (OSError, ValueError):
        return
    os.kill(pid, 15)
    deadline = time.monotonic() + 10
    while pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.02)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=40)
    parser.add_argument("--events", type=int, default=20)
    args = parser.parse_args()
    bindir = pg_bin()
    if bindir is None:
        raise SystemExit("PostgreSQL binaries not found: run `make postgres` first")
    print(_stats.machine_line(_stats.machine_info()))
    root = Path(tempfile.mkdtemp(prefix="colony-bench-team-"))
    server = PgServer(bindir)
    server.start()
    try:
        url = server.create_database("bench")
        repo = git_repo(root)
        homes = {"sqlite": root / "home-sqlite", "team": root / "home-team"}
        for home in homes.values():
            home.mkdir()
        envs = {
            "sqlite": {**os.environ, "COLONY_TASKS_HOME": str(homes["sqlite"])},
            "team": {
                **os.environ,
                "COLONY_TASKS_HOME": str(homes["team"]),
                "COLONY_TASKS_DATABASE_URL": url,
            },
        }
        envs["sqlite"].pop("COLONY_TASKS_DATABASE_URL", None)
        prepare(str(homes["sqlite"] / "colony.db"), repo)
        prepare(url, repo)
        hook("session-start", payloads(repo)["session-start"], envs["team"])  # starts the relay
        ids = iter(range(10**9))
        makers = {event: fresh(event, payloads(repo)[event], ids) for event in EVENTS}
        fns = {  # every sample a new prompt or tool-use id, as the agent sends them
            f"{mode} {event}": (lambda e=event, m=mode: hook(e, json.loads(makers[e]()), envs[m]))
            for event in EVENTS
            for mode in ("sqlite", "team")
        }
        _stats.log(f"timing {args.n} interleaved rounds, PostgreSQL up")
        up = _stats.time_interleaved(fns, args.n, warmup=3)
        results = []
        for event in EVENTS:
            base = _stats.stat(f"sqlite {event}", up[f"sqlite {event}"])
            results.append(base)
            results.append(
                _stats.compare(_stats.stat(f"team {event}", up[f"team {event}"]), base, "sqlite")
            )
        _stats.log("timing with PostgreSQL stopped (events spool)")
        server.stop()
        down_fns = {
            "sqlite user-prompt-submit": fns["sqlite user-prompt-submit"],
            "team user-prompt-submit, server stopped": fns["team user-prompt-submit"],
        }
        down = _stats.time_interleaved(down_fns, args.n, warmup=3)
        server.start()
        base = _stats.stat("sqlite user-prompt-submit (2nd run)", down["sqlite user-prompt-submit"])
        results.append(base)
        results.append(
            _stats.compare(
                _stats.stat(
                    "team user-prompt-submit, server stopped",
                    down["team user-prompt-submit, server stopped"],
                ),
                base,
                "sqlite",
            )
        )
        print(_stats.format_table(results, title="hook process wall time"))
        _stats.log(f"throughput: 16 processes x {args.events} prompts each")
        rates = {
            "sqlite": throughput(envs["sqlite"], repo, args.events),
            "team": throughput(envs["team"], repo, args.events),
        }
        print(
            f"throughput, 16 concurrent hook processes: SQLite {rates['sqlite']:.0f} events/s,"
            f" PostgreSQL via relay {rates['team']:.0f} events/s"
            f" ({rates['team'] / rates['sqlite']:.2f}x)"
        )
        _stats.write_json(
            HERE / "results" / "team.json",
            {"hooks": [s.to_dict() for s in results], "throughput": rates},
        )
        stop_relay(homes["team"], url)
    finally:
        server.destroy()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
