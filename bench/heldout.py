"""The collision forecast on code it was never tuned on: the synthetic pairs of
``bench/heldout_pairs.py`` (synthetic edits on real TypeScript, Rust and Go files, git's
merge verdict as truth) replayed through the installed hooks the way
``../shared/cooperbench/replay.py`` replays the dev pairs (its sessions, layouts and scoring
are reused), printing precision and recall per language.

    python bench/heldout_pairs.py --lang ts DIR --lang rust DIR --lang go DIR --out pairs.json
    python bench/heldout.py pairs.json [--layout worktrees|clones] [--mode warn|block]
        [--bin .venv/bin/colony-tasks] [--keep rows.json]

Unlike the dev replay, the base is the whole real file, not rebuilt from the patches. Each
side's edits are its diff from the base in hunks with three lines of context, top to bottom,
each hunk's context widened until its old text is unique in the file as the session sees it
(an Edit whose old string is not unique fails; an agent adds context).
"""

from __future__ import annotations

import argparse
import difflib
import importlib.util
import json
import sys
import time
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[1]
REPLAY = REPO.parent / "shared" / "cooperbench" / "replay.py"


def load_replay(binary: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location("replay", REPLAY)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.CT = binary
    return module


def hunks(base: list[str], side: list[str]) -> list[tuple[int, list[str], list[str]]]:
    """The side's changes as ``(base_start 1-based, old lines, new lines)``, three lines of
    context, top to bottom."""
    out = []
    matcher = difflib.SequenceMatcher(None, base, side, autojunk=False)
    for group in matcher.get_grouped_opcodes(3):
        i1, i2 = group[0][1], group[-1][2]
        j1, j2 = group[0][3], group[-1][4]
        out.append((i1 + 1, base[i1:i2], side[j1:j2]))
    return out


def unique(lines: list[str], at: int, old: list[str], new: list[str]) -> tuple[int, list, list]:
    """Widen a hunk at ``at`` (0-based, in ``lines``) until its old block occurs once."""

    def count(block: list[str]) -> int:
        n = len(block)
        return sum(1 for i in range(len(lines) - n + 1) if lines[i : i + n] == block)

    while count(old) != 1 and (at > 0 or at + len(old) < len(lines)):
        if at > 0:
            at -= 1
            old, new = [lines[at], *old], [lines[at], *new]
        end = at + len(old)
        if end < len(lines):
            old, new = [*old, lines[end]], [*new, lines[end]]
    return at, old, new


def edit(agent, rel: str, start: int, old: list[str], new: list[str]) -> None:
    lines = (agent.clone / rel).read_text().split("\n")[:-1]
    offset = agent.offset.get(rel, 0)
    at, old, new = unique(lines, start - 1 + offset, old, new)
    agent.edit(rel, at + 1 - offset, old, new, False)


def replay_pair(replay: ModuleType, pair: dict, env: dict, root: Path, idx: int, layout: str):
    rel = f"src/{pair['name']}"
    base = pair["base"].split("\n")[:-1]
    d = root / f"pair{idx}"
    origin = f"https://github.com/heldout-replay/{pair['lang']}-{idx}.git"
    ca, cb = replay.make_clones(d, {rel: base}, origin, layout)
    a, b = replay.Agent("claude", ca, env), replay.Agent("codex", cb, env)
    a.start()
    b.start()
    ea = hunks(base, pair["a"].split("\n")[:-1])
    eb = hunks(base, pair["b"].split("\n")[:-1])
    for i in range(max(len(ea), len(eb))):
        if i < len(ea):
            edit(a, rel, *ea[i])
        if i < len(eb):
            edit(b, rel, *eb[i])
    a.end()
    b.end()
    flagged = any(b.handle and b.handle in t for _, _, t in a.outputs) or any(
        a.handle and a.handle in t for _, _, t in b.outputs
    )
    chars = sum(len(t) for ag in (a, b) for _, _, t in ag.outputs)
    replay.cleanup(d)
    return {
        "key": f"{pair['lang']}/{idx}/{pair['name']}",
        "lang": pair["lang"],
        "conflict": pair["has_conflict"],
        "flagged": flagged,
        "denied": bool(a.denied or b.denied),
        "edits": len(ea) + len(eb),
        "chars_shown": chars,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("pairs", type=Path)
    parser.add_argument("--layout", default="worktrees", choices=("worktrees", "clones"))
    parser.add_argument("--mode", default="warn", choices=("warn", "block"))
    parser.add_argument("--bin", default=str(REPO / ".venv" / "bin" / "colony-tasks"))
    parser.add_argument("--limit", type=int, help="only the first pairs of each language")
    parser.add_argument("--keep", type=Path, help="write the per-pair rows here")
    args = parser.parse_args()
    if not REPLAY.exists():
        print(f"skipped: {REPLAY} is absent (its sessions and scoring are reused)")
        return 0
    replay = load_replay(args.bin)
    pairs = json.loads(args.pairs.read_text())["pairs"]
    if args.limit:
        by_lang: dict[str, list[dict]] = {}
        for pair in pairs:
            by_lang.setdefault(pair["lang"], []).append(pair)
        pairs = [pair for group in by_lang.values() for pair in group[: args.limit]]
    home = replay.make_home()
    rows = []
    started = time.monotonic()
    try:
        env = replay.env_for(home)
        (home / "store").mkdir(exist_ok=True)
        if args.mode == "block":
            settings = {"claims": {"mode": "block"}}
            (home / "store" / "settings.json").write_text(json.dumps(settings))
        for i, pair in enumerate(pairs):
            rows.append(replay_pair(replay, pair, env, home / "pairs", i, args.layout))
        replay.subprocess.run([args.bin, "relay", "stop"], env=env, capture_output=True)
    finally:
        replay.cleanup(home)
    if args.keep:
        args.keep.write_text(json.dumps(rows, indent=1))
    print(f"{args.layout} {args.mode}: {len(rows)} pairs in {time.monotonic() - started:.0f}s")
    print("lang   pairs  conflicts  precision  recall  denied-prec  denied-rec  chars/edit")
    for lang in [*dict.fromkeys(r["lang"] for r in rows), "all"]:
        mine = [r for r in rows if lang in ("all", r["lang"])]
        f, d = replay.score(mine, "flagged"), replay.score(mine, "denied")
        chars = sum(r["chars_shown"] for r in mine) / max(1, sum(r["edits"] for r in mine))
        print(
            f"{lang:<5} {len(mine):>6} {sum(r['conflict'] for r in mine):>10}  {f['precision']:>9}"
            f"  {f['recall']:>6}  {d['precision']:>11}  {d['recall']:>10}  {chars:>10.1f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
