"""The collision forecast on real feature pairs: CooperBench's dev pairs replayed through the
installed hooks (``../shared/cooperbench/replay.py``, beside the repository) for each layout
and mode, printing precision, recall and the characters shown per edit.

    python bench/regions.py [--n 218] [--bin .venv/bin/colony-tasks] [--run worktrees:warn ...]
                            [--keep DIR]

``--keep`` writes each run's per-pair rows as ``DIR/<layout>-<mode>.json`` for a look at misses.

Goals (issue 34): recall >= 0.98 and precision >= 0.95 in warn mode (worktrees, clones);
block-mode denials precision >= 0.95 at recall >= 0.90; <= 60 characters shown per edit.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "cooperbench"
RUNS = ("worktrees:warn", "clones:warn", "worktrees:block", "clones:block")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=218, help="pairs per run (218: all dev pairs)")
    parser.add_argument("--bin", default=str(REPO / ".venv" / "bin" / "colony-tasks"))
    parser.add_argument("--run", action="append", choices=RUNS, help="layout:mode (default: all)")
    parser.add_argument("--keep", type=Path, help="folder for each run's per-pair rows")
    args = parser.parse_args()
    replay = SHARED / "replay.py"
    if not replay.exists():
        print(f"skipped: {replay} is absent (the shared CooperBench fixture sits beside the repo)")
        return 0
    print("layout     mode   pairs  precision  recall  denied-prec  denied-rec  chars/edit")
    for run in args.run or RUNS:
        layout, mode = run.split(":")
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "run.json"
            command = [sys.executable, str(replay), "--bin", args.bin, "--n", str(args.n)]
            command += ["--layout", layout, "--mode", mode, "--json", str(out)]
            subprocess.run(command, check=True, capture_output=True, cwd=SHARED)
            res = json.loads(out.read_text())
        if args.keep:
            args.keep.mkdir(parents=True, exist_ok=True)
            (args.keep / f"{layout}-{mode}.json").write_text(json.dumps(res, indent=1))
        f, d = res["flagged"], res["denied"]
        print(
            f"{layout:<10} {mode:<6} {res['pairs']:>5}  {f['precision']:>9}  {f['recall']:>6}"
            f"  {d['precision']:>11}  {d['recall']:>10}  {res['chars_shown_per_edit']:>10}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
