"""The hook gate: latency against the same-run baseline, and the warm client's budget.

    python bench/check.py [bench/results/hooks.json]

Run by ``make bench`` after bench/hooks.py, never by the unit tests (timing is noisy). Fails when

- a gated hook's p50, warm (its relay running), exceeds :data:`WARM_LIMIT` x the baseline
  hook's (stdin JSON + one WAL insert) in the same run;
- a gated hook's p50, cold (no relay: it applies the event itself), exceeds :data:`COLD_LIMIT` x;
- the warm client imports more than :data:`MAX_CLIENT_MODULES` modules (every module, the
  interpreter's startup included: a deterministic count), or any of colony-tasks beyond the
  client's own (:data:`CLIENT_MODULES`) — the core belongs in the relay;
- the relay's mean work per event exceeds :data:`MAX_RELAY_WORK_US` microseconds.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

WARM_LIMIT = 0.7
COLD_LIMIT = 1.5
MAX_CLIENT_MODULES = 90
CLIENT_MODULES = {
    "colony_tasks",
    "colony_tasks.entry",
    "colony_tasks.hooks",
    "colony_tasks.hooks.runner",
    "colony_tasks.hooks.payload",
    "colony_tasks.hooks.transport",
    "colony_tasks.hooks.dialects",  # the Copilot/OpenCode payload adapters (stdlib, no store)
    "colony_tasks.hooks.replies",  # each client's reply shape (stdlib, no store)
    "colony_tasks.base",
    "colony_tasks.base.agent_events",
    "colony_tasks.base.text",
    "colony_tasks.relay",
    "colony_tasks.relay.wire",
    "colony_tasks.base.backend",
    "colony_tasks.base.settings",
    "colony_tasks.base.paths",
    "colony_tasks.base.procs",
}
MAX_RELAY_WORK_US = 5000


def main() -> int:
    path = (
        Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent / "results" / "hooks.json"
    )
    data = json.loads(path.read_text())
    failures = []
    for row in data["results"]:
        name = row["name"].rsplit(" @", 1)[0]
        cold = name.endswith(" (cold)")
        event = name.removesuffix(" (cold)")
        if event not in data["gated"]:
            continue
        limit = COLD_LIMIT if cold else WARM_LIMIT
        verdict = "ok" if row["ratio"] <= limit else "TOO SLOW"
        print(
            f"{row['name']:48s} p50 {row['p50_ms']:6.1f} ms  {row['ratio']:.2f}x baseline"
            f" (limit {limit}x)  {verdict}"
        )
        if row["ratio"] > limit:
            failures.append(row["name"])
    for size, budget in data.get("budgets", {}).items():
        extra = set(budget["client_colony_modules"]) - CLIENT_MODULES
        print(
            f"@{size}: warm client imports {budget['client_modules']} modules"
            f" (limit {MAX_CLIENT_MODULES}); relay work {budget['relay_work_us_per_event']} us"
            f" per event (limit {MAX_RELAY_WORK_US})"
        )
        if budget["client_modules"] > MAX_CLIENT_MODULES:
            failures.append(f"client modules @{size}")
        if extra:
            failures.append(f"client imports the core @{size}: {sorted(extra)}")
        if budget["relay_work_us_per_event"] > MAX_RELAY_WORK_US:
            failures.append(f"relay work per event @{size}")
    if failures:
        print(f"hook gate failed: {', '.join(failures)}")
        return 1
    print(
        f"hook gate passed: warm within {WARM_LIMIT}x, cold within {COLD_LIMIT}x the baseline p50;"
        " the client's budget held"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
