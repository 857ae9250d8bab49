"""A soak of team mode over a slow network (issue 35): nothing lost, nothing doubled, one
connection per machine, relay memory flat.

    python bench/team_soak.py [--machines 4] [--agents 3] [--minutes 3] [--delay-ms 10]
                              [--lanes 1] [--pace 1.0] [--seed 7] [--faults]

A throwaway PostgreSQL server (Debian's binaries, as the team tests start one) behind an
in-process TCP proxy that delivers every chunk ``--delay-ms`` after it arrives, each way (10 ms
is a 20 ms round trip); ``--machines`` machines (own HOME, relay and outbox, clones of one
origin, over ``--lanes`` branches of it, round robin), each running ``--agents`` simulated
agents for ``--minutes``. An agent is a session that, until the time is up, picks its next act
at random (seeded): a prompt, an edit of core.py (PreToolUse, the change, PostToolUse), a shell
command (PreToolUse and PostToolUse of Bash), a Stop — every hook through the installed console
script — or, as its human, a post to the lane's thread (``colony-tasks post``, which takes the
store's whole lock: every event in flight is waited for), then thinks for about ``--pace``
seconds (0.5 to 1.5 times it; 0: as fast as the hooks return). Every prompt, command and post
carries a unique tag.

Measured: events fired and applied, per second; each tagged prompt and command found in the
store exactly once (doubled: stored twice; pending: still in an outbox when the drain stopped
making progress; lost: neither stored nor pending; a post the CLI failed to make is counted
apart); the server's connections (sampled every 5 s: the most seen, against the machines and
the CLI posts running at that moment);
each relay's resident memory (first and last sample after a warm-up minute, and the most);
the server's CPU time per event (its processes' user+system time over the run). Prints the
figures and writes bench/results/team_soak.json. Nothing is asserted.

``--faults`` adds, under that load: the server restarted (at a quarter of the time), the
proxy cutting every connection mid-whatever (at 45%), one machine's relay killed with SIGKILL
(at 65%), and a member's connection holding an agent's session row locked in a statement that
sleeps a minute (at 80%; the server's statement timeout ends it). The counts of lost and
doubled events are the ones that matter then.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import _stats  # noqa: E402
from team_wan import edit_input, make_team, query, throwaway_server  # noqa: E402

from colony_tasks.store import open_store  # noqa: E402
from tests.support.delayproxy import DelayProxy  # noqa: E402
from tests.support.hookrun import EXE, claude  # noqa: E402
from tests.support.pgserver import PASSWORD, USER  # noqa: E402
from tests.support.teamutil import Machine  # noqa: E402

SAMPLE_EVERY = 5.0
STALLED = 60.0  # the drain stops once the store has taken nothing more for this long


def pending(machine: Machine) -> tuple[int, set[str]]:
    """Rows still waiting in the machine's outbox (not yet applied), and the tags they hold."""
    import re
    import sqlite3

    path = machine.outbox()
    if not path.exists():
        return 0, set()
    conn = sqlite3.connect(path)
    try:
        rows = [str(r[0]) for r in conn.execute("SELECT payload FROM outbox")]
    finally:
        conn.close()
    return len(rows), {t for r in rows for t in re.findall(r"soak-m\d+a\d+-[pch]\d+", r)}


def rss_kb(pid: int | None) -> int | None:
    if pid is None:
        return None
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def postgres_cpu_seconds() -> float:
    """User+system time of every process named postgres (this run's server is the only one)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        if name != "postgres":
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / ticks


class Agent:
    """One simulated agent: a session on a machine, firing hooks until ``deadline``."""

    def __init__(
        self, machine: Machine, sid: str, line: int, rng: random.Random, pace: float
    ) -> None:
        self.machine, self.sid, self.line, self.rng, self.pace = machine, sid, line, rng, pace
        self.tags: list[str] = []
        self.events = 0
        self.hook_ms: list[float] = []
        self.posts_failed: list[str] = []
        self.task: int | None = None

    def post(self, direct: str, tag: str) -> None:
        """The agent's human posts ``tag`` to the lane's thread through the CLI."""
        if self.task is None:
            rows = query(
                direct,
                "SELECT t.id FROM sessions s JOIN tasks t ON t.lane_id = s.lane_id"
                f" AND t.mode = 'lane' AND t.status = 'open' WHERE s.id = '{self.sid}'",
            )
            if not rows:
                return  # its session start is not applied yet: no post this time
            self.task = int(rows[0][0])
        self.tags.append(tag)
        env = {**os.environ, "COLONY_TASKS_HOME": str(self.machine.home), **self.machine.env}
        done = subprocess.run(
            [str(EXE), "post", str(self.task), tag], env=env, capture_output=True, timeout=120
        )
        if done.returncode:
            self.posts_failed.append(tag)

    def hook(self, event: str, payload: dict[str, Any]) -> None:
        start = time.perf_counter()
        self.machine.hook(event, payload)
        self.hook_ms.append((time.perf_counter() - start) * 1000)
        self.events += 1

    def run(self, deadline: float, direct: str) -> None:
        m, sid = self.machine, self.sid
        self.hook("session-start", claude("session-start", sid, m.clone, source="startup"))
        n = 0
        while time.monotonic() < deadline:
            n += 1
            act = self.rng.choices(("prompt", "edit", "shell", "stop", "post"), (3, 4, 2, 1, 1))[0]
            if act == "post":
                self.post(direct, f"soak-{sid}-h{n}")
            elif act == "prompt":
                tag = f"soak-{sid}-p{n}"
                self.tags.append(tag)
                self.hook(
                    "user-prompt-submit", claude("user-prompt-submit", sid, m.clone, prompt=tag)
                )
            elif act == "edit":
                old = f"line {self.line}\n"
                new = f"line {self.line} v{n}\n"
                tool_input = edit_input(m, old, new)
                pre = claude("pre-tool-use", sid, m.clone, tool_name="Edit", tool_input=tool_input)
                self.hook("pre-tool-use", pre)
                path = m.clone / "core.py"
                text = path.read_text()
                current = next(
                    (ln for ln in text.splitlines(True) if ln.startswith(f"line {self.line}")),
                    old,
                )
                path.write_text(text.replace(current, new, 1))
                post = claude(
                    "post-tool-use", sid, m.clone, tool_name="Edit", tool_input=tool_input
                )
                post["tool_use_id"] = pre["tool_use_id"]
                self.hook("post-tool-use", post)
            elif act == "shell":
                tag = f"soak-{sid}-c{n}"
                self.tags.append(tag)
                tool_input = {"command": f"echo {tag}"}
                pre = claude("pre-tool-use", sid, m.clone, tool_name="Bash", tool_input=tool_input)
                self.hook("pre-tool-use", pre)
                post = claude(
                    "post-tool-use", sid, m.clone, tool_name="Bash", tool_input=tool_input
                )
                post["tool_use_id"] = pre["tool_use_id"]
                self.hook("post-tool-use", post)
            else:
                self.hook("stop", claude("stop", sid, m.clone))
            if self.pace:
                think = self.pace * self.rng.uniform(0.5, 1.5)
                time.sleep(max(min(think, deadline - time.monotonic()), 0.0))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--machines", type=int, default=4)
    parser.add_argument("--agents", type=int, default=3, help="per machine")
    parser.add_argument("--minutes", type=float, default=3.0)
    parser.add_argument("--delay-ms", type=float, default=10.0)
    parser.add_argument("--lanes", type=int, default=1)
    parser.add_argument("--pace", type=float, default=1.0, help="seconds between acts")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--faults", action="store_true", help="restart, cut, kill, lock")
    args = parser.parse_args()
    root, server = throwaway_server("colony-bench-soak-")
    proxy = DelayProxy(server.port, args.delay_ms / 1000)
    out: dict[str, Any] = {"args": vars(args)}
    try:
        direct = server.create_database("soak")
        open_store(direct).close()  # migrated by the owner
        proxy.start()
        url = f"postgresql://{USER}:{PASSWORD}@127.0.0.1:{proxy.port}/soak"
        team = make_team(root, url, args.machines, args.lanes)
        rng = random.Random(args.seed)
        agents = [
            Agent(
                m,
                f"m{i}a{j}",
                2 + (i * args.agents + j) % 38,
                random.Random(rng.random()),
                args.pace,
            )
            for i, m in enumerate(team)
            for j in range(args.agents)
        ]
        samples: list[dict[str, Any]] = []
        stop = threading.Event()

        def sample() -> None:
            while not stop.wait(SAMPLE_EVERY):
                try:
                    conns = query(
                        direct,
                        "SELECT count(*) FROM pg_stat_activity"
                        " WHERE application_name = 'colony-tasks'",
                    )[0][0]
                except Exception:  # noqa: BLE001 - the server is restarting (--faults)
                    continue
                samples.append(
                    {
                        "t": time.monotonic(),
                        "connections": int(conns),
                        "rss_kb": [rss_kb(m.relay_pid()) for m in team],
                    }
                )

        sampler = threading.Thread(target=sample, daemon=True)
        faults: list[dict[str, Any]] = []

        def inject(start: float) -> None:
            total = args.minutes * 60
            schedule = [
                (0.25, "server restarted"),
                (0.45, "connections cut"),
                (0.65, "relay killed"),
            ]
            schedule.append((0.80, "session row locked"))
            for share, name in schedule:
                wait = start + share * total - time.monotonic()
                if stop.wait(max(wait, 0)):
                    return
                at = time.monotonic() - start
                if name == "server restarted":
                    server.stop("fast")
                    server.start()
                elif name == "connections cut":
                    name += f" ({proxy.cut()})"
                elif name == "relay killed":
                    team[1 % len(team)].stop_relay(signal.SIGKILL)
                else:
                    threading.Thread(target=hold_row, args=(agents[0].sid,), daemon=True).start()
                faults.append({"at_s": round(at, 1), "fault": name})
                _stats.log(f"  fault at {at:.0f} s: {name}")

        def hold_row(sid: str) -> None:
            try:
                query(
                    direct,
                    f"SELECT pg_sleep(60) FROM sessions WHERE id = '{sid}' FOR UPDATE",
                )
            except Exception as error:  # noqa: BLE001 - ended by the statement timeout
                faults.append({"fault": "row lock ended", "by": type(error).__name__})

        cpu0 = postgres_cpu_seconds()
        start = time.monotonic()
        deadline = start + args.minutes * 60
        sampler.start()
        injector = threading.Thread(target=inject, args=(start,), daemon=True)
        if args.faults:
            injector.start()
        _stats.log(f"soak: {len(agents)} agents on {len(team)} machines for {args.minutes} min")
        with ThreadPoolExecutor(len(agents)) as pool:
            for future in [pool.submit(a.run, deadline, direct) for a in agents]:
                future.result()
        fired_for = time.monotonic() - start
        fired = sum(a.events for a in agents)
        tags = [t for a in agents for t in a.tags]
        _stats.log(f"  fired {fired} events in {fired_for:.0f} s; waiting for the outboxes")

        def stored() -> Counter[str]:
            rows = query(
                direct,
                "SELECT text FROM observations WHERE kind IN ('prompt', 'command', 'note')"
                " AND text LIKE '%soak-%'",
            )
            return Counter(str(r[0]).removeprefix("echo ") for r in rows)

        found = stored()
        progress_at, have = time.monotonic(), sum(found.values())
        while sum(found[t] > 0 for t in tags) < len(tags):
            if time.monotonic() - progress_at > STALLED:
                break
            time.sleep(1.0)
            found = stored()
            if sum(found.values()) > have:
                progress_at, have = time.monotonic(), sum(found.values())
        applied_for = time.monotonic() - start
        waits = [pending(m) for m in team]
        waiting = sum(n for n, _ in waits)
        spooled = set().union(*(held for _, held in waits))
        stop.set()
        sampler.join()
        if args.faults:
            injector.join()
        cpu = postgres_cpu_seconds() - cpu0
        failed = {t for a in agents for t in a.posts_failed}
        tags = [t for t in tags if t not in failed]
        missing = sum(found[t] == 0 for t in tags)
        doubled = sum(found[t] > 1 for t in tags)
        warm = [s for s in samples if s["t"] - start >= 60] or samples
        rss = [[s["rss_kb"][i] for s in warm if s["rss_kb"][i]] for i in range(len(team))]
        hook_ms = sorted(ms for a in agents for ms in a.hook_ms)
        out.update(
            events_fired=fired,
            fired_seconds=fired_for,
            applied_seconds=applied_for,
            events_per_s=fired / applied_for,
            tagged=len(tags),
            posts=sum(t.rsplit("-", 1)[1].startswith("h") for t in tags),
            posts_failed=len(failed),
            missing=missing,
            outbox_rows_pending=waiting,
            lost=sum(found[t] == 0 and t not in spooled for t in tags),
            doubled=doubled,
            max_connections=max((s["connections"] for s in samples), default=None),
            machines=len(team),
            relay_rss_kb=[
                {"first": r[0], "last": r[-1], "max": max(r)} if r else None for r in rss
            ],
            server_cpu_ms_per_event=cpu * 1000 / max(fired, 1),
            hook_p50_ms=_stats.percentile(hook_ms, 50),
            hook_p99_ms=_stats.percentile(hook_ms, 99),
            proxy_connections=proxy.connections,
            faults=faults,
        )
    finally:
        for m in locals().get("team", []):
            m.stop_relay()
        proxy.stop()
        server.destroy()
    for key in (
        "events_fired",
        "fired_seconds",
        "applied_seconds",
        "events_per_s",
        "tagged",
        "posts",
        "posts_failed",
        "missing",
        "outbox_rows_pending",
        "lost",
        "doubled",
        "machines",
        "max_connections",
        "relay_rss_kb",
        "server_cpu_ms_per_event",
        "hook_p50_ms",
        "hook_p99_ms",
        "proxy_connections",
        "faults",
    ):
        value = out.get(key)
        print(f"{key}: {round(value, 2) if isinstance(value, float) else value}")
    _stats.write_json(HERE / "results" / "team_soak.json", out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
