"""Benchmark of the dependency graph indexer (``colony_tasks.depgraph``): figures, not tests.

Generates a repository of mixed Python and TypeScript (default 5,000 source files, realistic
import fan-out with a few heavily imported hub modules, a ``.gitignore``'d ``node_modules``),
then measures, reporting p50 and p90 (the machine may be shared and noisy):

1. the same-run baseline: walk the tree and read every source file's bytes, nothing else;
2. a full ``build`` from nothing, and a rescan ``build(previous=graph)`` with nothing changed
   (stat only) — the three interleaved so noise hits them alike;
3. ``update`` after one edit: a signature change, a body-only change, and a new file appearing
   (which re-resolves every file's imports);
4. per-file parse cost for Python (``ast``) and TS (tree-sitter), and the import cost of the
   package (tree-sitter grammars included) in a fresh process.

The graph through the store (its rows written and loaded back by the indexer) is measured by
``bench/interfaces.py``.

Run ``python bench/depgraph.py`` (``--quick`` for fewer samples, ``--files N`` for another
size). Results are also written to ``bench/results/depgraph.json``.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import os
import random
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
    print_stat,
    stat,
    time_calls,
    time_interleaved,
    write_json,
)

from colony_tasks.depgraph import build, parse_source, update
from colony_tasks.depgraph.walk import LANGS, VENDORED_DIRS

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "depgraph.json"
MODULES_PER_PACKAGE = 50


# -- the generated repository -----------------------------------------------------------------


@functools.cache
def _zipf(n: int) -> list[float]:
    return list(itertools.accumulate(1.0 / (k + 1) for k in range(n)))


def _pick(rng: random.Random, n: int) -> int:
    """A module index, Zipf-distributed: a few hubs are imported by many files."""
    return rng.choices(range(n), cum_weights=_zipf(n))[0]


def _python_module(rng: random.Random, pkg: int, mod: int, n_pkgs: int) -> str:
    lines = ["import json", "import os", "from typing import Any", ""]
    for _ in range(rng.randint(3, 8)):
        other_pkg = _pick(rng, n_pkgs) if rng.random() < 0.6 else pkg
        other = _pick(rng, MODULES_PER_PACKAGE)
        if other_pkg == pkg and other == mod:
            continue
        style = rng.random()
        if other_pkg == pkg and style < 0.4:
            lines.append(f"from .m{other} import f{other}_0")
        elif style < 0.7:
            lines.append(f"from app.pkg{other_pkg} import m{other}")
        else:
            lines.append(f"import app.pkg{other_pkg}.m{other}")
    lines.append("")
    for i in range(rng.randint(4, 10)):
        args = ", ".join(f"a{j}" for j in range(rng.randint(0, 4)))
        lines += [
            f"def f{mod}_{i}({args}) -> dict[str, Any]:",
            f'    """Compute thing {i} of module {mod}."""',
            "    result = {}",
            "    for key in range(10):",
            "        result[str(key)] = json.dumps({'k': key, 'cwd': os.getcwd()})",
            "    return result",
            "",
        ]
    lines += [f"class Model{mod}:", "    def __init__(self, name: str) -> None:"]
    lines += ["        self.name = name", ""]
    for i in range(rng.randint(2, 6)):
        lines += [
            f"    def method_{i}(self, value: int = {i}) -> int:",
            "        return value * 2",
            "",
        ]
    return "\n".join(lines) + "\n"


def _ts_module(rng: random.Random, feat: int, mod: int, n_feats: int) -> str:
    lines = ["import { useState } from 'react';", "import type { Config } from '@types/config';"]
    for _ in range(rng.randint(3, 8)):
        other_feat = _pick(rng, n_feats) if rng.random() < 0.6 else feat
        other = _pick(rng, MODULES_PER_PACKAGE)
        if other_feat == feat and other == mod:
            continue
        style = rng.random()
        if other_feat == feat:
            lines.append(f"import {{ f{other}_0 }} from './m{other}';")
        elif style < 0.3:
            lines.append(f"import * as feat{other_feat} from '../feat{other_feat}';")
        elif style < 0.6:
            lines.append(
                f"export {{ f{other}_0 as g{other} }} from '../feat{other_feat}/m{other}.js';"
            )
        else:
            lines.append(f"import {{ f{other}_0 }} from '../feat{other_feat}/m{other}';")
    lines.append("")
    for i in range(rng.randint(4, 10)):
        params = ", ".join(f"a{j}: number" for j in range(rng.randint(0, 4)))
        lines += [
            f"export function f{mod}_{i}({params}): Record<string, number> {{",
            "  const result: Record<string, number> = {};",
            "  for (let key = 0; key < 10; key++) {",
            "    result[String(key)] = key * 2;",
            "  }",
            "  return result;",
            "}",
            "",
        ]
    lines += [
        f"export interface Props{mod} {{ name: string; size?: number }}",
        f"export class Model{mod} {{",
        "  constructor(private name: string) {}",
        "  render(props: Config): string { return this.name + String(props); }",
        "}",
        "",
    ]
    return "\n".join(lines) + "\n"


def generate(root: Path, n_files: int, seed: int = 7) -> dict[str, int]:
    """A repository of ``n_files`` source files (half Python, half TS) plus ignored noise."""
    rng = random.Random(seed)
    n_py = n_files // 2
    n_ts = n_files - n_py
    n_pkgs = -(-n_py // (MODULES_PER_PACKAGE + 1))
    n_feats = -(-n_ts // (MODULES_PER_PACKAGE + 1))
    (root / ".gitignore").write_text("node_modules/\n*.log\n/web/dist/\n")
    (root / "pyproject.toml").write_text("[project]\nname = 'app'\n")
    (root / "web").mkdir(parents=True)
    (root / "web" / "tsconfig.json").write_text('{"compilerOptions": {"strict": true}}\n')
    for i in range(n_py):
        pkg, slot = divmod(i, MODULES_PER_PACKAGE + 1)
        folder = root / "src" / "app" / f"pkg{pkg}"
        if slot == 0:
            folder.mkdir(parents=True)
            (folder / "__init__.py").write_text("from .m0 import f0_0\n__all__ = ['f0_0']\n")
        else:
            mod = slot - 1
            (folder / f"m{mod}.py").write_text(_python_module(rng, pkg, mod, n_pkgs))
    for i in range(n_ts):
        feat, slot = divmod(i, MODULES_PER_PACKAGE + 1)
        folder = root / "web" / "src" / f"feat{feat}"
        if slot == 0:
            folder.mkdir(parents=True)
            exports = "".join(f"export * from './m{m}';\n" for m in range(5))
            (folder / "index.ts").write_text(exports)
        else:
            mod = slot - 1
            ext = ".tsx" if mod % 5 == 0 else ".ts"
            (folder / f"m{mod}{ext}").write_text(_ts_module(rng, feat, mod, n_feats))
    noise = root / "web" / "node_modules" / "react"
    noise.mkdir(parents=True)
    for i in range(200):
        (noise / f"f{i}.js").write_text("module.exports = function () { return 1 };\n" * 20)
    return {"source_files": n_files, "python_packages": n_pkgs, "ts_features": n_feats}


# -- measurements -----------------------------------------------------------------------------


def read_everything(root: str) -> int:
    """The baseline: walk (pruning vendored folders) and read every source file's bytes."""
    total = 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in VENDORED_DIRS]
        for name in files:
            if os.path.splitext(name)[1] in LANGS:
                with open(os.path.join(folder, name), "rb") as f:
                    total += len(f.read())
    return total


def import_cost(n: int) -> list[Stat]:
    """Fresh-process wall time of importing the package, against an empty interpreter."""
    cmd = [sys.executable, "-c"]
    samples = time_interleaved(
        {
            "python -c pass": lambda: subprocess.run([*cmd, "pass"], check=True),
            "import colony_tasks.depgraph": lambda: subprocess.run(
                [*cmd, "import colony_tasks.depgraph"], check=True
            ),
        },
        n,
        warmup=1,
    )
    base = stat("process: python -c pass", samples["python -c pass"])
    pkg = stat("process: import colony_tasks.depgraph", samples["import colony_tasks.depgraph"])
    pkg.note = f"+{pkg.p50_ms - base.p50_ms:.1f} ms over an empty interpreter"
    return [base, pkg]


def parse_costs(graph_root: str, files: list[str]) -> list[Stat]:
    """Per-file parse (imports + surface) for a sample of each language."""
    out = []
    for label, exts in (("python (ast)", (".py",)), ("ts/tsx (tree-sitter)", (".ts", ".tsx"))):
        chosen = [f for f in files if f.endswith(exts)][:300]
        blobs = [(f, Path(graph_root, f).read_bytes()) for f in chosen]
        samples = []
        for path, data in blobs:
            start = time.perf_counter()
            parse_source(path, data)
            samples.append(time.perf_counter() - start)
        size = sum(len(d) for _, d in blobs) / max(1, len(blobs))
        out.append(stat(f"parse one file: {label}", samples, note=f"avg {size / 1024:.1f} KiB"))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=5000, help="source files to generate")
    parser.add_argument("--quick", action="store_true", help="fewer samples (a fast check)")
    parser.add_argument("--json", type=Path, default=RESULTS, help="where to write the results")
    args = parser.parse_args()
    rounds, edits = (3, 10) if args.quick else (7, 30)

    info = machine_info()
    log(machine_line(info))
    with tempfile.TemporaryDirectory(prefix="depgraph-bench-") as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        shape = generate(root, args.files)
        log(f"generated {shape}")
        graph = build(str(root))
        edges = sum(len(r.imports) for r in graph.files.values())
        log(f"graph: {len(graph.files)} files, {edges} edges, skipped {graph.skipped}")

        log("full build, rescan and baseline (interleaved)")
        samples = time_interleaved(
            {
                "baseline": lambda: read_everything(str(root)),
                "build": lambda: build(str(root)),
                "rescan": lambda: build(str(root), previous=graph),
            },
            rounds,
            warmup=1,
        )
        baseline = stat("baseline: walk + read all bytes", samples["baseline"])
        stats = [baseline]
        for key, name in (("build", "full build"), ("rescan", "rescan, nothing changed")):
            stats.append(compare(stat(name, samples[key]), baseline, "baseline"))
        for s in stats:
            print_stat(s)

        log("update after one edit")
        target = next(p for p in sorted(graph.files) if p.endswith("pkg0/m0.py"))
        original = (root / target).read_text()
        signature = original.replace("def f0_0(", "def f0_0(extra, ", 1)
        body = original.replace("result = {}", "result = {'edited': 1}", 1)
        importers = len(graph.importers(target))
        for label, edited in (("signature change", signature), ("body-only change", body)):
            versions = [edited, original]
            state = {"i": 0}

            def edit(versions=versions, state=state) -> None:
                state["i"] += 1
                (root / target).write_text(versions[state["i"] % 2])

            times = time_calls(lambda: update(graph, [target]), edits, setup=edit)
            s = compare(stat(f"update: {label}", times), baseline, "baseline")
            s.note = f"{target}, imported by {importers} files"
            stats.append(s)
            print_stat(s)
        new_file = root / "src" / "app" / "pkg0" / "fresh.py"

        def toggle() -> None:
            if new_file.exists():
                new_file.unlink()
            else:
                new_file.write_text("from app.pkg0 import m1\n\ndef fresh(x):\n    return x\n")

        times = time_calls(lambda: update(graph, [str(new_file)]), edits, setup=toggle)
        s = compare(stat("update: file added/removed", times), baseline, "baseline")
        s.note = "re-resolves the files whose imports could name it"
        stats.append(s)
        print_stat(s)

        log("parse costs, import cost")
        for s in parse_costs(str(root), sorted(graph.files)):
            stats.append(s)
            print_stat(s)
        for s in import_cost(5 if args.quick else 15):
            stats.append(s)
            print_stat(s)

    print()
    print(format_table(stats, title=f"depgraph, {shape['source_files']} source files"))
    for s in stats:
        if s.note:
            print(f"  {s.name}: {s.note}")
    write_json(
        args.json,
        {"machine": info, "shape": shape, "edges": edges, "skipped": graph.skipped, "stats": stats},
    )


if __name__ == "__main__":
    main()
