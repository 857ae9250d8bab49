"""End-to-end speed of one ``colony-tasks search`` process: figures, not tests.

What a person (or an agent's shell) pays per search is a whole process: the interpreter, the
CLI's imports, numpy and the embedder, the on-disk index, the query. This runs the installed
console script (the ``colony-tasks`` beside this interpreter) as a subprocess against a copy of
the 100k-observation database of ``bench/store.py`` (cached in ``/tmp/colony-bench-cache``)
with static vectors for every observation, and reports p50/p90 of, interleaved round-robin:

- ``--version``: the interpreter and the CLI's imports, nothing else (baseline);
- ``search --no-semantic``: a keyword-only search (baseline);
- ``search`` (hybrid, warm relay): answered by the relay's warm index (the default when a
  relay runs: hooks and the first search start one);
- ``search`` (hybrid, no relay): ``COLONY_TASKS_RELAY=off``, keywords fused with the static
  embedder over the on-disk int8 index in the search's own process;

with each process's peak RSS (and the relay's resident memory), and the index's bytes per
vector (so per million vectors).
The on-disk index is built by one untimed search first, as the first search after
``colony-tasks embed`` does. ``--before DIR`` adds the hybrid search run from another source
tree (e.g. ``git archive <commit> | tar -x -C DIR``, put first on ``PYTHONPATH``) to the same
interleaved rounds, as a same-run baseline for a change.

Run ``python bench/cli_search.py`` (``--n 21`` samples per command, ``--size 100000``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _stats import (
    Stat,
    compare,
    format_table,
    log,
    machine_info,
    machine_line,
    percentile,
    stat,
    write_json,
)
from store import CACHE_DIR, cached_database, human

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "cli_search.json"
QUERY = "retry the upload when the token expires"


def console_script() -> str:
    """The ``colony-tasks`` installed beside this interpreter (falls back to PATH)."""
    beside = Path(sys.executable).with_name("colony-tasks")
    found = str(beside) if beside.exists() else shutil.which("colony-tasks")
    if not found:
        raise SystemExit("colony-tasks is not installed for this interpreter: pip install -e .")
    return found


def wait_for_relay(home: str) -> dict:
    """The relay's status once it answers (a search started it)."""
    sys.path.insert(0, str(HERE.parent))
    from colony_tasks.relay import wire

    path = str(Path(home) / f"relay-{wire.LOCAL_KEY}.sock")
    for _ in range(1000):
        try:
            reply = wire.ask(path, {"v": wire.VERSION, "op": "ping"}, 1.0)
        except wire.NoRelay:
            reply = None
        if reply:
            return reply
        time.sleep(0.01)
    raise SystemExit("no relay started")


def run_once(argv: list[str], env: dict[str, str]) -> tuple[float, int]:
    """Seconds of wall time and peak RSS (KiB) of one process; raises if it fails."""
    started = time.perf_counter()
    child = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    error = child.stderr.read().decode() if child.stderr else ""
    if child.returncode != 0:
        raise RuntimeError(f"{argv[1:]} exited {child.returncode}: {error.strip()}")
    return seconds, int(usage.ru_maxrss)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=21, help="samples per command")
    parser.add_argument("--size", type=int, default=100_000, help="observations")
    parser.add_argument("--cache-dir", type=Path, default=CACHE_DIR)
    parser.add_argument("--json", type=Path, default=RESULTS, help="where to write the results")
    parser.add_argument(
        "--before", type=Path, help="also time the hybrid search with this source tree first"
    )
    args = parser.parse_args(argv)

    info = machine_info()
    log("colony-tasks search as a subprocess")
    log(f"machine: {machine_line(info)}")
    script = console_script()
    db, _ = cached_database(args.size, args.cache_dir, rebuild=False)
    with tempfile.TemporaryDirectory(prefix="colony-cli-search-") as home:
        shutil.copyfile(db, Path(home) / "colony.db")
        env = {**os.environ, "COLONY_TASKS_HOME": home}
        env.pop("COLONY_TASKS_DATABASE_URL", None)
        started = time.perf_counter()
        subprocess.run([script, "embed"], env=env, check=True, capture_output=True)
        log(f"  embedded {args.size:,} observations in {time.perf_counter() - started:.1f}s")
        alone = {**env, "COLONY_TASKS_RELAY": "off"}
        run_once([script, "search", QUERY], alone)  # builds the on-disk index, untimed
        run_once([script, "search", QUERY], env)  # starts the relay, untimed
        wait_for_relay(home)
        run_once([script, "search", QUERY], env)  # the relay loads its index, untimed
        commands = {
            "--version": [script, "--version"],
            "search --no-semantic": [script, "search", QUERY, "--no-semantic"],
            "search (hybrid)": [script, "search", QUERY],
            "search (hybrid, no relay)": [script, "search", QUERY],
        }
        envs = {name: env for name in commands}
        envs["search (hybrid, no relay)"] = alone
        if args.before:
            commands["search (hybrid, before)"] = commands["search (hybrid)"]
            path = os.pathsep.join(filter(None, [str(args.before), env.get("PYTHONPATH")]))
            envs["search (hybrid, before)"] = {**env, "PYTHONPATH": path}
        times: dict[str, list[float]] = {name: [] for name in commands}
        rss: dict[str, list[int]] = {name: [] for name in commands}
        names = list(commands)
        for i in range(args.n):
            shift = i % len(names)
            for name in names[shift:] + names[:shift]:
                seconds, peak = run_once(commands[name], envs[name])
                times[name].append(seconds)
                rss[name].append(peak)
        relay = wait_for_relay(home)
        index_dir = Path(home) / "colony.db-vectors"
        index_bytes = sum(p.stat().st_size for p in index_dir.glob("*") if p.suffix != ".lock")
    size = human(args.size)
    stats: dict[str, Stat] = {
        name: stat(f"{name} @{size}", samples) for name, samples in times.items()
    }
    compare(stats["search (hybrid)"], stats["search (hybrid, no relay)"], "vs no relay")
    compare(stats["search (hybrid, no relay)"], stats["--version"], "vs --version")
    compare(stats["search --no-semantic"], stats["--version"], "vs --version")
    if "search (hybrid, before)" in stats:
        compare(stats["search (hybrid)"], stats["search (hybrid, before)"], "vs before")
    log("")
    log(format_table(stats.values(), title="one process per command, interleaved"))
    per_vector = index_bytes / args.size
    log("")
    for name, peaks in rss.items():
        log(f"  peak RSS {name}: p50 {percentile(peaks, 50) / 1024:.0f} MiB")
    log(f"  relay RSS after the searches: {(relay.get('rss_kb') or 0) / 1024:.0f} MiB")
    log(
        f"  on-disk index: {index_bytes / 2**20:.1f} MiB for {args.size:,} vectors,"
        f" {per_vector:.0f} bytes each: {per_vector * 1e6 / 2**20:,.0f} MiB per 1M vectors"
        " (mapped, not read: pages a scan touches count once in the page cache)"
    )
    write_json(
        args.json,
        {
            "benchmark": "cli_search",
            "machine": info,
            "size": args.size,
            "query": QUERY,
            "stats": {name: s.to_dict() for name, s in stats.items()},
            "peak_rss_kib_p50": {name: percentile(v, 50) for name, v in rss.items()},
            "index_bytes_per_vector": per_vector,
            "relay_rss_kib": relay.get("rss_kb"),
        },
    )
    log(f"results written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
