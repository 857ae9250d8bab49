"""The hook latency gate: fail when a gated hook's p50 exceeds 1.2x the same-run baseline.

    python bench/check.py [bench/results/hooks.json]

Run by ``make bench`` after bench/hooks.py, never by the unit tests (timing is noisy).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

LIMIT = 1.2


def main() -> int:
    path = (
        Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent / "results" / "hooks.json"
    )
    data = json.loads(path.read_text())
    failures = []
    for row in data["results"]:
        event = row["name"].rsplit(" @", 1)[0]
        if event not in data["gated"]:
            continue
        verdict = "ok" if row["ratio"] <= LIMIT else "TOO SLOW"
        print(
            f"{row['name']:42s} p50 {row['p50_ms']:6.1f} ms  {row['ratio']:.2f}x baseline  {verdict}"
        )
        if row["ratio"] > LIMIT:
            failures.append(row["name"])
    if failures:
        print(f"latency gate failed (limit {LIMIT}x): {', '.join(failures)}")
        return 1
    print(f"latency gate passed: every gated hook within {LIMIT}x the baseline p50")
    return 0


if __name__ == "__main__":
    sys.exit(main())
