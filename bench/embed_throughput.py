"""Throughput of the embedding backends: load time, texts per second and memory.

Each backend runs in a fresh process, so the load figure includes importing its packages.
Texts are short, observation-like sentences built from a fixed seed. Figures, not tests.

Also the latency of one query (a single short text) in the warm process, p50 and p90.

Run ``python bench/embed_throughput.py`` (default ``minilm`` and ``static``; ``--backend
minilm-torch`` needs the ``[minilm]`` extra; ``--n`` sets the number of texts, default 10,000).
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from pathlib import Path

SUBJECTS = (
    "the retry policy|the viewer css|test_store|the sqlite lock|the cli refactor|the hook".split(
        "|"
    )
)
VERBS = "fixed|broke|reviewed|claimed|decided on|profiled|renamed|documented|reverted".split("|")
DETAILS = (
    "after the rebase|with exponential backoff|because WAL mode was off|for python 3.12"
    "|in the session handoff|before the release|so the benchmark is faster|per the review"
).split("|")


QUERIES = 200


def sample_texts(n: int, seed: int = 0) -> list[str]:
    """``n`` short observation-like texts, the same for a given seed."""
    rng = random.Random(seed)
    return [
        f"{rng.choice(VERBS)} {rng.choice(SUBJECTS)} {rng.choice(DETAILS)} #{rng.randrange(10_000)}"
        for _ in range(n)
    ]


def memory_mb() -> dict[str, float]:
    """Current and peak resident set size of this process, in MB (Linux /proc)."""
    fields = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0]) / 1024
    return {"rss_mb": round(fields.get("VmRSS", 0.0), 1), "peak_mb": round(fields["VmHWM"], 1)}


def measure(backend: str, n: int, repeat: int) -> dict[str, object]:
    """Load ``backend`` and embed ``n`` texts ``repeat`` times; runs in the child process."""
    texts = sample_texts(n)
    before = memory_mb()
    started = time.perf_counter()
    from colony_tasks.search.embeddings import get_embedder

    embedder = get_embedder(backend)
    loaded = time.perf_counter()
    after_load = memory_mb()
    assert embedder is not None, "the 'none' backend has nothing to measure"
    rates = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        vectors = embedder.embed(texts)
        rates.append(n / (time.perf_counter() - t0))
    assert vectors.shape == (n, embedder.dim)
    # A query in a warm process: one short text at a time, after the batches above.
    latencies = []
    for query in sample_texts(QUERIES, seed=1):
        t0 = time.perf_counter()
        embedder.embed([query])
        latencies.append(1000 * (time.perf_counter() - t0))
    latencies.sort()
    return {
        "backend": backend,
        "model_id": embedder.model_id,
        "dim": embedder.dim,
        "texts": n,
        "load_s": round(loaded - started, 3),
        "texts_per_s_best": round(max(rates)),
        "texts_per_s_median": round(sorted(rates)[len(rates) // 2]),
        "query_ms_p50": round(latencies[len(latencies) // 2], 2),
        "query_ms_p90": round(latencies[int(len(latencies) * 0.9)], 2),
        "rss_start_mb": before["rss_mb"],
        "rss_after_load_mb": after_load["rss_mb"],
        **memory_mb(),
    }


def main() -> None:
    """Run each requested backend in a child process and print one JSON line per backend."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", action="append", choices=("minilm", "static", "minilm-torch"))
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    backends = args.backend or ["minilm", "static"]
    if args.child:
        print(json.dumps(measure(backends[0], args.n, args.repeat)))
        return
    for backend in backends:
        command = [sys.executable, __file__, "--child", "--backend", backend]
        command += ["--n", str(args.n), "--repeat", str(args.repeat)]
        out = subprocess.run(command, capture_output=True, text=True, check=True)
        print(out.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    main()
