"""Team mode over a slow network (issue 35): throughput and cross-machine warning latency.

    python bench/team_wan.py [--delay-ms 10] [--machines 4] [--prompts 20] [--rounds 1]
                             [--lanes 1] [--warnings 10]

Starts a throwaway PostgreSQL server (tests/support/pgserver.py: Debian's binaries, loopback, a
temp folder) and, in this process, a TCP proxy in front of it that delivers every chunk
``--delay-ms`` after it arrives, in each direction (10 ms one way is a 20 ms round trip). Each
configuration — loopback (delay 0) and the delay, with 1 machine and ``--machines`` — gets a new
database and new "machines": each its own data folder (HOME), relay and outbox, a clone of one
bare origin on one branch, all reaching the store through the proxy. Measured per configuration:

* events applied per second, whole team: every machine fires ``--prompts`` UserPromptSubmit
  hooks through the installed console script as fast as they return; the store's prompt count
  is polled (directly, not through the proxy) until all are applied or ``--timeout`` passes;
* the cross-machine warning (two or more machines), ``--warnings`` times with the team quiet
  and as many times while the others fire prompts without pause (A from a second session of
  its own): machine A edits a line through PreToolUse and PostToolUse, machine B tries a
  PreToolUse of an edit touching that line every 50 ms until its output names A (capped at
  60 s); p50 and p99 of each;
* hooks: p50 and p99 of the prompts' hooks, against a SQLite-mode machine's (the same prompts
  through the same console script, no team store) measured in the same round;
* with ``--lanes K`` (K > 1), the ``--machines`` configurations run once more with the machines
  spread over K branches of the origin (round robin): events of different lanes do not wait for
  each other's lock (throughput only);
* round trips per event kind (1 machine, quiet, its relay warm): client→server chunks through
  the proxy while one SessionStart of a new session, one prompt, one PreToolUse and one
  PostToolUse of an edit and one SessionEnd are applied alone, against the chunks of an idle
  window as long (bench/team_round_trips.py lists the statements behind them).

Prints a table and writes bench/results/team_wan.json. Medians over ``--rounds``; nothing is
asserted.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import _stats  # noqa: E402

from colony_tasks.store import open_store  # noqa: E402
from tests.support.delayproxy import DelayProxy  # noqa: E402
from tests.support.gitutil import git  # noqa: E402
from tests.support.hookrun import EXE, claude  # noqa: E402
from tests.support.pgserver import PASSWORD, USER, PgServer, pg_bin  # noqa: E402
from tests.support.teamutil import Machine, context  # noqa: E402

LINES = "".join(f"line {i}\n" for i in range(1, 41))
HOSTED = "git@git.example.com:team/repo.git"
WARN_CAP = 60.0
PROBE_EVERY = 0.05


# -- machines ----------------------------------------------------------------------------


def make_team(root: Path, url: str, count: int, lanes: int = 1) -> list[Machine]:
    """``count`` machines, each a clone of one bare origin (the same hosted remote, mapped to
    the origin by insteadOf) with its own HOME and developer, on ``feature/wan`` — or, with
    ``lanes`` > 1, on one of that many branches of it (round robin)."""
    seed = root / "seed"
    seed.mkdir(parents=True)
    git(seed, "init", "-q")
    (seed / "core.py").write_text(LINES)
    git(seed, "add", "core.py")
    git(seed, "commit", "-q", "-m", "init")
    git(seed, "checkout", "-q", "-b", "feature/wan")
    origin = root / "origin.git"
    git(root, "clone", "-q", "--bare", str(seed), str(origin))
    team = []
    for i in range(count):
        base = root / f"m{i}"
        base.mkdir()
        clone = base / "repo"
        git(base, "clone", "-q", "-b", "feature/wan", str(origin), str(clone))
        git(clone, "remote", "set-url", "origin", HOSTED)
        git(clone, "config", f"url.{origin}.insteadOf", HOSTED)
        if lanes > 1 and i % lanes:
            git(clone, "checkout", "-q", "-b", f"feature/wan-{i % lanes}")
        team.append(Machine(f"box{i}", base / "home", clone, url, f"dev{i}"))
    return team


def query(direct: str, sql: str) -> list[tuple[Any, ...]]:
    """The rows of ``sql`` on the database of ``direct`` (as its owner, not through the proxy)."""
    import pg8000.dbapi

    port, database = direct.rsplit(":", 1)[1].split("/")
    conn = pg8000.dbapi.connect(
        user=USER, password=PASSWORD, host="127.0.0.1", port=int(port), database=database
    )
    try:
        cursor = conn.cursor()
        cursor.execute(sql)
        return [tuple(r) for r in cursor.fetchall()]
    finally:
        conn.close()


def count_prompts(direct: str) -> int:
    return int(query(direct, "SELECT count(*) FROM observations WHERE kind = 'prompt'")[0][0])


def wait_count(counter: Callable[[], int], want: int, timeout: float) -> tuple[float, int]:
    """Seconds until ``counter()`` reaches ``want`` (or ``timeout``) and the last count."""
    start = time.monotonic()
    seen = counter()
    while seen < want and time.monotonic() - start < timeout:
        time.sleep(0.05)
        seen = counter()
    return time.monotonic() - start, seen


def fire_prompts(machine: Machine, sid: str, n: int, tag: str) -> list[float]:
    took = []
    for i in range(n):
        payload = claude("user-prompt-submit", sid, machine.clone, prompt=f"{tag} prompt {i}")
        start = time.perf_counter()
        machine.hook("user-prompt-submit", payload)
        took.append(time.perf_counter() - start)
    return took


def edit_input(machine: Machine, old: str, new: str) -> dict[str, str]:
    return {"file_path": str(machine.clone / "core.py"), "old_string": old, "new_string": new}


def edit(machine: Machine, sid: str, old: str, new: str) -> None:
    """A Claude Edit of core.py on ``machine``: PreToolUse, the change, PostToolUse."""
    tool_input = edit_input(machine, old, new)
    pre = claude("pre-tool-use", sid, machine.clone, tool_name="Edit", tool_input=tool_input)
    machine.hook("pre-tool-use", pre)
    path = machine.clone / "core.py"
    path.write_text(path.read_text().replace(old, new, 1))
    post = claude("post-tool-use", sid, machine.clone, tool_name="Edit", tool_input=tool_input)
    post["tool_use_id"] = pre["tool_use_id"]
    machine.hook("post-tool-use", post)


def probe_until_warned(b: Machine, sid: str, a: Machine, line: str) -> float | None:
    """Seconds until B's PreToolUse of an edit of ``line`` names A's developer and machine,
    trying every 50 ms; None when not within the cap."""
    name = f"({a.developer}@{a.name})"
    tool_input = edit_input(b, line, line.upper())
    start = time.monotonic()
    while time.monotonic() - start < WARN_CAP:
        pre = claude("pre-tool-use", sid, b.clone, tool_name="Edit", tool_input=tool_input)
        if name in context(b.hook("pre-tool-use", pre)):
            return time.monotonic() - start
        time.sleep(PROBE_EVERY)
    return None


# -- one configuration -------------------------------------------------------------------


def run_config(
    server: PgServer,
    root: Path,
    label: str,
    delay: float,
    machines: int,
    args: Any,
    lanes: int = 1,
) -> dict[str, Any]:
    direct = server.create_database(label.replace(" ", "_").replace(",", ""))
    open_store(direct).close()  # migrated by the owner, not timed
    proxy = DelayProxy(server.port, delay)
    proxy.start()
    url = f"postgresql://{USER}:{PASSWORD}@127.0.0.1:{proxy.port}/{direct.rsplit('/', 1)[1]}"
    team = make_team(root / label.replace(" ", "-").replace(",", ""), url, machines, lanes)
    sids = [f"agent-{i}" for i in range(machines)]
    out: dict[str, Any] = {
        "label": label,
        "delay_ms": delay * 1000,
        "machines": machines,
        "lanes": lanes,
    }
    try:
        for m, sid in zip(team, sids, strict=True):
            m.hook("session-start", claude("session-start", sid, m.clone, source="startup"))
        _stats.log(f"{label}: {machines} x {args.prompts} prompts")
        want = machines * args.prompts
        start = time.monotonic()
        with ThreadPoolExecutor(machines) as pool:
            futures = [
                pool.submit(fire_prompts, m, sid, args.prompts, "load")
                for m, sid in zip(team, sids, strict=True)
            ]
            fired = [f.result() for f in futures]
        fired_at = time.monotonic() - start
        waited, applied = wait_count(lambda: count_prompts(direct), want, args.timeout)
        elapsed = fired_at + waited
        hook_ms = sorted(t * 1000 for row in fired for t in row)
        out.update(
            events=want,
            applied=applied,
            seconds=elapsed,
            events_per_s=applied / elapsed,
            complete=applied >= want,
            hooks_returned_s=fired_at,
            hook_p50_ms=statistics.median(hook_ms),
            hook_p99_ms=_stats.percentile(hook_ms, 99),
        )
        _stats.log(f"  {applied}/{want} applied in {elapsed:.1f} s: {applied / elapsed:.2f}/s")
        if machines == 1:
            out["round_trips"] = round_trips(proxy, team[0], sids[0], direct)
        elif lanes == 1:
            out.update(warnings(team, sids, args))
        out["connections"] = proxy.connections
    finally:
        for m in team:
            m.stop_relay()
        proxy.stop()
    return out


def warnings(team: list[Machine], sids: list[str], args: Any) -> dict[str, Any]:
    """``--warnings`` samples quiet (lines 1..n), then as many while every machine but B fires
    prompts without pause (lines 21..20+n; A's load from a second session of its own)."""
    a, b = team[0], team[1]
    n = min(args.warnings, 20)

    def sample(k: int) -> float | None:
        edit(a, sids[0], f"line {k}\n", f"line {k} changed\n")
        return probe_until_warned(b, sids[1], a, f"line {k}\n")

    quiet = [sample(k) for k in range(1, n + 1)]
    _stats.log(f"  warned (quiet): {', '.join(fmt_warn(v) for v in quiet)}")
    busy = f"{sids[0]}-busy"
    a.hook("session-start", claude("session-start", busy, a.clone, source="startup"))
    load = [(a, busy)] + [(m, s) for m, s in zip(team, sids, strict=True) if m not in (a, b)]
    stop = threading.Event()

    def fire(m: Machine, sid: str) -> None:
        i = 0
        while not stop.is_set():
            fire_prompts(m, sid, 1, f"busy {i}")
            i += 1

    with ThreadPoolExecutor(len(load)) as pool:
        for m, s in load:
            pool.submit(fire, m, s)
        try:
            loaded = [sample(k) for k in range(21, 21 + n)]
        finally:
            stop.set()
    _stats.log(f"  warned (under load): {', '.join(fmt_warn(v) for v in loaded)}")
    return {
        "warn_quiet": quiet,
        "warn_loaded": loaded,
        **{f"warn_quiet_{k}": v for k, v in spread(quiet).items()},
        **{f"warn_loaded_{k}": v for k, v in spread(loaded).items()},
    }


def spread(samples: list[float | None]) -> dict[str, float | None]:
    """p50 and p99 (nearest rank) of warning delays, a sample not warned within the cap
    counting as infinite (None when the p50 or p99 is one)."""
    values = sorted(v if v is not None else float("inf") for v in samples)
    # nearest rank: an interpolation between a time and "never" means nothing
    found = {
        "p50": values[(len(values) - 1) // 2],
        "p99": values[math.ceil(0.99 * len(values)) - 1],
    }
    return {k: (None if v == float("inf") else v) for k, v in found.items()}


def sqlite_hooks(root: Path, args: Any) -> dict[str, Any]:
    """The same prompts through a SQLite-mode machine (no team store): its hooks' p50, p99."""
    (m,) = make_team(root, "", 1)
    m.hook("session-start", claude("session-start", "solo", m.clone, source="startup"))
    try:
        took = sorted(t * 1000 for t in fire_prompts(m, "solo", args.prompts, "solo"))
    finally:
        env = {**os.environ, "COLONY_TASKS_HOME": str(m.home), **m.env}
        subprocess.run([str(EXE), "relay", "stop"], env=env, capture_output=True, timeout=30)
    return {"hook_p50_ms": statistics.median(took), "hook_p99_ms": _stats.percentile(took, 99)}


def session_events(m: Machine, sid: str) -> dict[str, dict[str, Any]]:
    """One hook payload of each kind, in a session's order; the tool events edit core.py."""
    tool_input = edit_input(m, "line 9\n", "line nine\n")
    pre = claude("pre-tool-use", sid, m.clone, tool_name="Edit", tool_input=tool_input)
    post = claude("post-tool-use", sid, m.clone, tool_name="Edit", tool_input=tool_input)
    post["tool_use_id"] = pre["tool_use_id"]
    return {
        "session-start": claude("session-start", sid, m.clone, source="startup"),
        "user-prompt-submit": claude("user-prompt-submit", sid, m.clone, prompt="alone"),
        "pre-tool-use": pre,
        "post-tool-use": post,
        "session-end": claude("session-end", sid, m.clone, reason="exit"),
    }


def round_trips(proxy: DelayProxy, m: Machine, sid: str, direct: str) -> dict[str, Any]:
    """Client→server chunks through the proxy while one event of each kind is applied alone,
    each window 2.5 s after the hook returns, next to an idle window as long."""
    window = 2.5

    def chunks(action: Callable[[], None]) -> int:
        time.sleep(0.5)
        before = proxy.up_chunks
        action()
        time.sleep(window)
        return proxy.up_chunks - before

    have = count_prompts(direct)
    # A session of every kind first: the relay has prepared their statements, as a relay
    # that has served a while has.
    for kind, payload in session_events(m, f"{sid}-warm-up").items():
        m.hook(kind, payload)
    wait_count(lambda: count_prompts(direct), have + 1, 30)
    time.sleep(window)  # its SessionEnd applied too
    payloads = session_events(m, f"{sid}-alone")
    found: dict[str, Any] = {"idle": chunks(lambda: None)}
    for kind, payload in payloads.items():
        found[kind] = chunks(lambda kind=kind, payload=payload: m.hook(kind, payload))
    found["prompt_applied"] = count_prompts(direct) == have + 2
    _stats.log(f"  client->server chunks per event: {found}")
    return found


# -- report ------------------------------------------------------------------------------


def fmt_warn(value: float | None) -> str:
    return f"not within {WARN_CAP:.0f} s" if value is None else f"{value:.2f} s"


def median_of(rows: list[dict[str, Any]], key: str) -> Any:
    values = [r.get(key) for r in rows]
    if any(v is None for v in values):
        return (
            None
            if all(v is None for v in values)
            else statistics.median([v if v is not None else float("inf") for v in values])
        )
    return statistics.median(values)


def summarise(runs: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    table = []

    def shape(row: dict[str, Any]) -> tuple[int, int]:
        return row["machines"], row.get("lanes", 1)

    loop_rate = {
        shape(r[0]): median_of(r, "events_per_s") for r in runs.values() if not r[0]["delay_ms"]
    }
    for label, rows in runs.items():
        rate = median_of(rows, "events_per_s")
        row = {
            "label": label,
            "events_per_s": rate,
            "ratio_to_loopback": rate / loop_rate[shape(rows[0])]
            if shape(rows[0]) in loop_rate
            else None,
            "all_applied": all(r["complete"] for r in rows),
            "hook_p50_ms": median_of(rows, "hook_p50_ms"),
            "hook_p99_ms": median_of(rows, "hook_p99_ms"),
            **{
                key: median_of(rows, key) if key in rows[0] else "—"
                for key in (
                    "warn_quiet_p50",
                    "warn_quiet_p99",
                    "warn_loaded_p50",
                    "warn_loaded_p99",
                )
            },
        }
        table.append(row)
    return table


def print_table(table: list[dict[str, Any]], sqlite: dict[str, float]) -> None:
    def warn(p50: Any, p99: Any) -> str:
        if p50 == "—":
            return p50
        return " / ".join(
            fmt_warn(None if v is None or v == float("inf") else v) for v in (p50, p99)
        )

    print(
        f"SQLite-mode hooks, same run: p50 {sqlite['hook_p50_ms']:.0f} ms,"
        f" p99 {sqlite['hook_p99_ms']:.0f} ms\n"
    )
    print(
        "| configuration | events applied/s, whole team | × loopback | hook p50 / p99 (× SQLite) |"
        " B warned of A's edit, quiet: p50 / p99 | B warned, the others busy: p50 / p99 |"
    )
    print("|---|---|---|---|---|---|")
    for r in table:
        flag = "" if r["all_applied"] else " (timed out)"
        ratio = "—" if r["ratio_to_loopback"] is None else f"{r['ratio_to_loopback']:.2f}"
        hooks = (
            f"{r['hook_p50_ms']:.0f} / {r['hook_p99_ms']:.0f} ms"
            f" ({r['hook_p50_ms'] / sqlite['hook_p50_ms']:.2f} /"
            f" {r['hook_p99_ms'] / sqlite['hook_p99_ms']:.2f})"
        )
        print(
            f"| {r['label']} | {r['events_per_s']:.2f}{flag} | {ratio} | {hooks} |"
            f" {warn(r['warn_quiet_p50'], r['warn_quiet_p99'])} |"
            f" {warn(r['warn_loaded_p50'], r['warn_loaded_p99'])} |"
        )


def print_round_trips(runs: dict[str, list[dict[str, Any]]]) -> None:
    rows = [(label, r) for label, rs in runs.items() for r in rs[:1] if "round_trips" in r]
    if not rows:
        return
    kinds = [k for k in rows[0][1]["round_trips"] if k not in ("idle", "prompt_applied")]
    print("\nRound trips per event (client→server chunks, 1 machine, relay warm):\n")
    print("| configuration | " + " | ".join(kinds) + " | idle |")
    print("|---" * (len(kinds) + 2) + "|")
    for label, r in rows:
        found = r["round_trips"]
        print(f"| {label} | " + " | ".join(str(found[k]) for k in kinds) + f" | {found['idle']} |")


def throwaway_server(prefix: str) -> tuple[Path, PgServer]:
    """A temp folder and a started PostgreSQL server of Debian's binaries for a team benchmark
    (the machine's line printed first; this process's own store setting dropped)."""
    bindir = pg_bin()
    if bindir is None:
        raise SystemExit("PostgreSQL binaries not found: run `make postgres` first")
    print(_stats.machine_line(_stats.machine_info()))
    root = Path(tempfile.mkdtemp(prefix=prefix))
    os.environ.pop("COLONY_TASKS_DATABASE_URL", None)
    server = PgServer(bindir)
    server.start()
    return root, server


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delay-ms", type=float, default=10.0)
    parser.add_argument("--machines", type=int, default=4)
    parser.add_argument("--prompts", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--only", choices=("loopback", "delay"), default=None)
    parser.add_argument("--lanes", type=int, default=1, help="also spread the machines over K")
    parser.add_argument("--warnings", type=int, default=10, help="samples of each (at most 20)")
    args = parser.parse_args()
    root, server = throwaway_server("colony-bench-wan-")
    delays = {"loopback": 0.0, "delay": args.delay_ms / 1000}
    if args.only:
        delays = {args.only: delays[args.only]}
    runs: dict[str, list[dict[str, Any]]] = {}
    solo: list[dict[str, Any]] = []
    try:
        for r in range(args.rounds):  # interleaved: each round runs every configuration
            solo.append(sqlite_hooks(root / f"r{r}-sqlite", args))
            for kind, delay in delays.items():
                shapes = [(m, 1) for m in sorted({1, args.machines})]
                if args.lanes > 1 and args.machines > 1:
                    shapes.append((args.machines, min(args.lanes, args.machines)))
                for machines, lanes in shapes:
                    rtt = "loopback" if not delay else f"{delay * 2000:.0f} ms round trip"
                    label = f"{rtt}, {machines} machine{'s' if machines > 1 else ''}"
                    if lanes > 1:
                        label += f" on {lanes} branches"
                    tag = f"r{r}-{kind}-{machines}-{lanes}"
                    result = run_config(server, root, tag, delay, machines, args, lanes)
                    runs.setdefault(label, []).append(result)
    finally:
        server.destroy()
    table = summarise(runs)
    sqlite = {key: median_of(solo, key) for key in ("hook_p50_ms", "hook_p99_ms")}
    print_table(table, sqlite)
    print_round_trips(runs)
    _stats.write_json(
        HERE / "results" / "team_wan.json",
        {"args": vars(args), "sqlite_hooks": sqlite, "table": table, "runs": runs},
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
