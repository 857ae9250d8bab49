"""Speed of keyword, semantic and hybrid search, embedding and backfill: figures, not tests.

Measures, reporting p50 and p90 side by side (the machine may be shared and noisy):

1. ``search.keyword_search`` (FTS5 bm25, limit 20) on the generated databases of
   ``bench/store.py`` (cached in ``/tmp/colony-bench-cache``) at 100k and 1M observations, for a
   query mix: two rare words, two common words, a five-word sentence, a prefix (``word*``); each
   beside a same-run baseline that ranks every match (``fts_search(window=None)``, the previous
   behaviour) instead of the newest rows first;
2. ``VectorIndex.top`` in a warm process over 100k and 1M random unit vectors of dimension 256
   held as int8 codes with scales, beside the previous float32 matrix product (same run);
3. ``VectorIndex.refresh``: loading 100k such vectors (and 1M in a full run) from the
   ``vectors`` table of a scratch store into a new index (rows bulk-inserted beforehand);
4. embedding throughput per backend in a fresh child process (``static``; ``minilm`` when it
   can load, here or in the interpreter given by ``--minilm-python``, else the reason);
5. ``semantic.backfill`` of a copy of the 100k database with the static embedder, then
   ``SearchEngine.search`` (hybrid, limit 20) p50 on it, and what one CLI command pays: a new
   ``Searcher`` mapping the on-disk index cache, beside a new engine that reads every vector
   out of SQLite (the previous behaviour).

Run ``python bench/search.py`` (``--quick`` for 10k/100k instead of 100k/1M and fewer samples;
``--only fts,topk,refresh,embed,backfill`` to pick sections). Results are also written to
``bench/results/search.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from _stats import (
    Stat,
    Timer,
    compare,
    fmt_ms,
    fmt_ratio,
    log,
    machine_info,
    machine_line,
    print_stat,
    stat,
    time_calls,
    write_json,
)
from store import CACHE_DIR, cached_database, human

from colony_tasks import search
from colony_tasks.search import semantic, vector_index
from colony_tasks.search.embeddings import EmbedderUnavailable, get_embedder
from colony_tasks.store import Store

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results" / "search.json"
SECTIONS = ("fts", "topk", "refresh", "embed", "backfill")
DIM = 256
TOP_K = 20
SEED = 20240611
RANDOM_MODEL = "bench-random-256"
# A five-word request as an agent would type it: words from the head of the generator's
# vocabulary, so every one of them matches many rows.
SENTENCE = "why does the retry handler fail on timeout when the cache is cold"


# -- 1. keyword search ------------------------------------------------------------------------


def fts_queries(meta: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(label, query, what it is) for one generated database."""
    rare = [w for w, _ in meta["selective"]]
    common = [w for w, _ in meta["common"]]
    counts = ", ".join(f"{w}: {c:,} rows" for w, c in meta["selective"] + meta["common"])
    return [
        ("rare 2-word", " ".join(rare), f"two selective words ({counts})"),
        ("common 2-word", " ".join(common), "two of the most frequent words"),
        ("sentence", SENTENCE, "a natural request: its non-stopwords OR-ed"),
        ("prefix", rare[0][:4] + "*", "a 4-letter prefix query of a rare word"),
    ]


def bench_fts(dbs: list[tuple[int, Path, dict[str, Any]]], n: int, n_slow: int) -> list[Stat]:
    out: list[Stat] = []
    first: dict[str, Stat] = {}
    for total, db, meta in dbs:
        store = Store(db)
        try:
            for label, query, what in fts_queries(meta):
                hits = search.keyword_search(store, query)
                assert hits, f"no hits for {query!r} in {db}"
                count = n if label in ("rare 2-word", "prefix") else n_slow
                match = search.fts_query(query)
                before = stat(
                    f"fts {label} @{human(total)} (before: rank all)",
                    time_calls(
                        lambda m=match, s=store: s.fts_search(m, limit=20, window=None),
                        count,
                        warmup=2,
                    ),
                    note="the same query ranking every match (no recent window)",
                )
                samples = time_calls(
                    lambda q=query, s=store: search.keyword_search(s, q), count, warmup=2
                )
                result = stat(
                    f"fts {label} @{human(total)}",
                    samples,
                    note=f"keyword_search({query!r}, limit 20): {what}; {total:,} observations,"
                    " warm connection; newest-rows window first",
                )
                compare(result, before, "vs rank all")
                if label not in first:
                    first[label] = result
                print_stat(before)
                print_stat(result)
                out += [before, result]
        finally:
            store.close()
    return out


# -- 2 and 3. the vector index ----------------------------------------------------------------


def random_unit(n: int, dim: int, seed: int) -> np.ndarray:
    """``n`` random unit float32 vectors, generated in chunks to bound the temporaries."""
    rng = np.random.default_rng(seed)
    out = np.empty((n, dim), dtype=np.float32)
    for start in range(0, n, 100_000):
        block = rng.standard_normal((min(100_000, n - start), dim), dtype=np.float32)
        block /= np.linalg.norm(block, axis=1, keepdims=True)
        out[start : start + len(block)] = block
    return out


def filled_index(n: int) -> tuple[semantic.VectorIndex, np.ndarray]:
    """A VectorIndex of ``n`` random vectors, set directly (what refresh would build), and the
    float32 matrix itself (what the index held before it was quantised: the baseline)."""
    index = semantic.VectorIndex(RANDOM_MODEL, DIM)
    matrix = random_unit(n, DIM, SEED + n)
    codes, scales = vector_index.quantize(matrix)
    index.segments = [(np.arange(1, n + 1, dtype=np.int64), scales, codes)]
    return index, matrix


def float32_top(matrix: np.ndarray, query: np.ndarray, k: int) -> list[int]:
    """The previous index's search: one float32 matrix-vector product and a partition."""
    scores = matrix @ query
    best = np.argpartition(-scores, k - 1)[:k]
    return best[np.argsort(-scores[best])].tolist()


def bench_topk(sizes: tuple[int, ...], n: dict[int, int]) -> list[Stat]:
    out: list[Stat] = []
    queries = random_unit(64, DIM, SEED)
    for size in sizes:
        index, matrix = filled_index(size)
        cycle = iter(range(10**9))

        def top(index: semantic.VectorIndex = index, cycle=cycle) -> None:
            index.top(queries[next(cycle) % len(queries)], TOP_K * vector_index.RESCORE)

        def old(matrix: np.ndarray = matrix, cycle=cycle) -> None:
            float32_top(matrix, queries[next(cycle) % len(queries)], TOP_K)

        baseline = stat(
            f"float32 top-{TOP_K} @{human(size)} (before)",
            time_calls(old, n[size], warmup=3),
            note=f"the previous index: {size:,} float32 vectors of dim {DIM} in one matrix"
            f" ({size * DIM * 4 / 2**20:,.0f} MiB)",
        )
        result = stat(
            f"semantic int8 top-{TOP_K * vector_index.RESCORE} @{human(size)}",
            time_calls(top, n[size], warmup=3),
            note=f"VectorIndex.top over {size:,} int8 codes + scales of dim {DIM}"
            f" ({size * (DIM + 12) / 2**20:,.0f} MiB), scored in chunks of"
            f" {vector_index.CHUNK_ROWS:,} rows; the {TOP_K * vector_index.RESCORE} candidates that"
            " SearchEngine re-scores exactly",
        )
        compare(result, baseline, "vs float32")
        print_stat(baseline)
        print_stat(result)
        out += [baseline, result]
        del index, matrix
    return out


def vectors_db(path: Path, n: int) -> None:
    """A scratch store whose ``vectors`` table holds ``n`` random vectors (bulk insert)."""
    store = Store(path)
    conn = store.conn
    conn.execute("PRAGMA synchronous = OFF")
    now = time.time()
    for start in range(0, n, 50_000):
        block = random_unit(min(50_000, n - start), DIM, SEED + start)
        rows = [
            (start + i + 1, RANDOM_MODEL, DIM, f"h{start + i}", semantic.to_blob(v), now)
            for i, v in enumerate(block)
        ]
        with store.transaction():
            conn.executemany(
                "INSERT INTO vectors(observation_id, model, dim, content_hash, vector,"
                " created_at) VALUES (?, ?, ?, ?, ?, ?)",
                rows,
            )
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()


def bench_refresh(workspace: Path, sizes: tuple[int, ...], n: dict[int, int]) -> list[Stat]:
    out: list[Stat] = []
    base: Stat | None = None
    for size in sizes:
        db = workspace / f"vectors-{size}.db"
        with Timer() as built:
            vectors_db(db, size)
        log(f"  {size:,} vectors bulk-inserted into {db.name} in {built.seconds:.1f}s")
        store = Store(db)
        loaded = []

        def load(store: Store = store, loaded: list[int] = loaded) -> None:
            index = semantic.VectorIndex(RANDOM_MODEL, DIM)
            loaded.append(index.refresh(store))

        samples = time_calls(load, n[size])
        assert set(loaded) == {size}, loaded
        result = stat(
            f"VectorIndex.refresh {human(size)} vectors",
            samples,
            note=f"a new index loading {size:,} dim-{DIM} vectors from the vectors table (pages"
            " of 50k, each quantised to int8); database just written, in the page cache, no disk cache",
        )
        warm = semantic.VectorIndex(RANDOM_MODEL, DIM)
        warm.refresh(store)
        idle = stat(
            f"  refresh with nothing new @{human(size)}",
            time_calls(lambda w=warm, s=store: w.refresh(s), n[size] * 10, warmup=1),
            note="the incremental refresh SearchEngine.search runs before every query, when no"
            " vector was added since the last one",
        )
        store.close()
        if base is None:
            base = result
        else:
            compare(result, base, f"vs {human(sizes[0])}")
        print_stat(result)
        print_stat(idle)
        out += [result, idle]
        db.unlink()
    return out


# -- 4. embedding throughput ------------------------------------------------------------------


def sample_texts(db: Path, n: int) -> list[str]:
    """``n`` observation texts of a generated database, spread over its ids."""
    conn = Store(db).conn
    total = conn.execute("SELECT max(id) FROM observations").fetchone()[0]
    step = max(1, total // n)
    rows = conn.execute(
        "SELECT text FROM observations WHERE id % ? = 0 ORDER BY id LIMIT ?", (step, n)
    ).fetchall()
    conn.close()
    return [r[0] for r in rows]


def _embed_child(backend: str, texts_file: str) -> None:
    """Child process: load ``backend``, embed the texts in backfill-sized batches, print JSON."""
    texts = json.loads(Path(texts_file).read_text())
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    started = time.perf_counter()
    try:
        embedder = get_embedder(backend)
    except EmbedderUnavailable as error:
        print(json.dumps({"unavailable": str(error)}))
        return
    except ImportError as error:
        print(json.dumps({"unavailable": f"{type(error).__name__}: {error}"}))
        return
    load = time.perf_counter() - started
    assert embedder is not None
    embedder.embed(texts[: semantic.BATCH])  # warm-up batch (first-call allocations)
    batches = []
    for start in range(0, len(texts), semantic.BATCH):
        chunk = texts[start : start + semantic.BATCH]
        t0 = time.perf_counter()
        embedder.embed(chunk)
        batches.append((len(chunk), time.perf_counter() - t0))
    print(json.dumps({"model": embedder.model_id, "load_s": load, "batches": batches}))


def run_embed_child(python: str, backend: str, texts_file: Path) -> dict[str, Any]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    result = subprocess.run(
        [python, str(Path(__file__).resolve()), "_embed_child", backend, str(texts_file)],
        capture_output=True,
        text=True,
        env=env,
    )
    lines = result.stdout.strip().splitlines()
    if result.returncode != 0 or not lines:
        tail = (result.stderr.strip().splitlines() or ["no output"])[-1]
        return {"unavailable": f"child failed with {python}: {tail}"}
    return json.loads(lines[-1])


def bench_embed(
    workspace: Path, db: Path, counts: dict[str, int], minilm_python: str | None
) -> tuple[list[Stat], dict[str, Any], dict[str, str]]:
    texts = sample_texts(db, max(counts.values()))
    mean_chars = sum(map(len, texts)) / len(texts)
    out: list[Stat] = []
    details: dict[str, Any] = {"mean_chars": round(mean_chars, 1)}
    rates: dict[str, str] = {}
    base: Stat | None = None
    for backend, count in counts.items():
        texts_file = workspace / f"texts-{backend}.json"
        texts_file.write_text(json.dumps(texts[:count]))
        data = run_embed_child(sys.executable, backend, texts_file)
        where = sys.executable
        if "unavailable" in data and backend == "minilm" and minilm_python:
            log(f"  minilm cannot load here ({data['unavailable']}); trying {minilm_python}")
            data = run_embed_child(minilm_python, backend, texts_file)
            where = minilm_python
        if "unavailable" in data:
            log(f"  skipping embedding throughput for {backend!r}: {data['unavailable']}")
            details[backend] = {"skipped": data["unavailable"]}
            continue
        sizes = [size for size, _ in data["batches"]]
        seconds = [s for _, s in data["batches"]]
        rate = sum(sizes) / sum(seconds)
        result = stat(
            f"embed {backend} (batch of {semantic.BATCH})",
            [s * semantic.BATCH / size for size, s in data["batches"]],
            note=f"{data['model']} in a fresh child process ({where}): {sum(sizes):,} generated"
            f" observation texts (mean {mean_chars:.0f} chars) in batches of {semantic.BATCH}"
            f" after one warm-up batch; {rate:,.0f} texts/s; model load {data['load_s']:.2f}s",
        )
        rates[result.name] = f"{rate:,.0f} texts/s"
        if base is None:
            base = result
        else:
            compare(result, base, f"vs {next(iter(counts))}")
        print_stat(result)
        log(f"    {rate:,.0f} texts/s, load {data['load_s']:.2f}s")
        details[backend] = {
            "model": data["model"],
            "texts": sum(sizes),
            "texts_per_s": round(rate, 1),
            "load_s": round(data["load_s"], 3),
            "python": where,
        }
        out.append(result)
    return out, details, rates


# -- 5. backfill and hybrid search ------------------------------------------------------------


def bench_backfill(
    workspace: Path, total: int, db: Path, meta: dict[str, Any], n: int, n_slow: int
) -> tuple[list[Stat], dict[str, Any], dict[str, str]]:
    copy = workspace / f"backfill-{total}.db"
    shutil.copyfile(db, copy)
    embedder = get_embedder("static")
    assert embedder is not None
    store = Store(copy)
    with Timer() as timer:
        done = semantic.backfill(store, embedder)
    assert done == total, (done, total)
    rate = done / timer.seconds
    backfill = stat(
        f"backfill {human(total)} obs (static)",
        [timer.seconds],
        note=f"semantic.backfill over a copy of the {total:,}-observation database: lease,"
        f" embed and store in batches of {semantic.BATCH}; {rate:,.0f} observations/s",
    )
    print_stat(backfill)
    log(f"    {rate:,.0f} observations/s")
    unique = store.conn.execute(
        "SELECT count(DISTINCT content_hash) FROM vectors WHERE model = ?", (embedder.model_id,)
    ).fetchone()[0]

    engine = semantic.SearchEngine(store, embedder)
    with Timer() as first:
        engine.search(SENTENCE)  # loads the index: VectorIndex.refresh of every vector
    out = [backfill]
    rates = {backfill.name: f"{rate:,.0f} obs/s"}
    fts_base: dict[str, Stat] = {}
    for label, query, _ in fts_queries(meta):
        count = n if label in ("rare 2-word", "prefix") else n_slow
        fts_base[label] = stat(
            f"fts {label} @{human(total)} (same db)",
            time_calls(lambda q=query: search.keyword_search(store, q), count, warmup=2),
        )
        hybrid = stat(
            f"hybrid {label} @{human(total)}",
            time_calls(lambda q=query: engine.search(q), count, warmup=2),
            note=f"SearchEngine.search({query!r}, limit 20) with the static embedder over"
            f" {total:,} observations and vectors: keyword_search(limit 20), embed the query,"
            " VectorIndex.exact_top (int8 scan, float32 re-score), weighted RRF, fetch missing rows;"
            " warm engine",
        )
        compare(hybrid, fts_base[label], "vs fts")
        print_stat(hybrid)
        out.append(hybrid)
    cli_before = stat(
        f"CLI hybrid @{human(total)} (before: load every vector)",
        time_calls(
            lambda: semantic.SearchEngine(store, embedder, cache=False).search(SENTENCE),
            max(3, n_slow // 4),
            warmup=1,
        ),
        note="a new engine per command reading every vector out of SQLite, then one search",
    )
    cli = stat(
        f"CLI hybrid @{human(total)}",
        time_calls(lambda: search.Searcher(store).search(SENTENCE), n_slow, warmup=1),
        note="a new Searcher per command (what one `colony-tasks search` runs): maps the"
        " on-disk int8 index cache, reads vectors newer than it, one hybrid search",
    )
    compare(cli, cli_before, "vs before")
    print_stat(cli_before)
    print_stat(cli)
    out += [cli_before, cli]
    store.close()
    details = {
        "backfill_seconds": round(timer.seconds, 2),
        "vectors": done,
        "distinct_texts": int(unique),
        "first_search_seconds_with_index_load": round(first.seconds, 3),
        "fts_same_db": {k: v.to_dict() for k, v in fts_base.items()},
    }
    return out, details, rates


# -- output -----------------------------------------------------------------------------------


def results_table(stats: list[Stat], rates: dict[str, str]) -> str:
    header = ("name", "n", "p50 ms", "p90 ms", "ratio", "rate")
    rows = [
        (s.name, str(s.n), fmt_ms(s.p50_ms), fmt_ms(s.p90_ms), fmt_ratio(s), rates.get(s.name, ""))
        for s in stats
    ]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    right = (False, True, True, True, False, True)

    def line(cells: tuple[str, ...]) -> str:
        parts = [
            c.rjust(w) if r else c.ljust(w) for c, w, r in zip(cells, widths, right, strict=True)
        ]
        return " | ".join(parts).rstrip()

    return "\n".join([line(header), "-+-".join("-" * w for w in widths), *map(line, rows)])


# -- main -------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="10k/100k sizes, fewer samples")
    parser.add_argument(
        "--only",
        default=",".join(SECTIONS),
        help=f"comma-separated sections (default: all of {','.join(SECTIONS)})",
    )
    parser.add_argument(
        "--minilm-python",
        help="an interpreter with the [minilm] extra, for minilm throughput when this one lacks it",
    )
    parser.add_argument("--rebuild", action="store_true", help="regenerate the cached databases")
    parser.add_argument("--cache-dir", type=Path, default=CACHE_DIR)
    parser.add_argument("--json", type=Path, default=RESULTS, help="where to write the results")
    args = parser.parse_args(argv)
    args.only = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = set(args.only) - set(SECTIONS)
    if unknown:
        parser.error(f"unknown section(s): {', '.join(sorted(unknown))}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    quick = args.quick
    sizes = (10_000, 100_000) if quick else (100_000, 1_000_000)
    small = sizes[0]
    n_fts, n_fts_slow = (50, 10) if quick else (200, 20)
    n_top = {sizes[0]: 100 if quick else 200, sizes[1]: 50 if quick else 50}
    refresh_sizes = (small,) if quick else (small, sizes[1])
    n_refresh = {small: 5, sizes[1]: 3}  # each sample is a whole load
    embed_counts = {"static": 5_000 if quick else 20_000, "minilm": 512 if quick else 2_048}
    needs = set(args.only)

    info = machine_info()
    log(f"colony search benchmark ({'quick' if quick else 'full'})")
    log(f"machine: {machine_line(info)}")
    log(f"sizes: {', '.join(human(s) for s in sizes)}; cache: {args.cache_dir}")

    stats: list[Stat] = []
    rates: dict[str, str] = {}
    details: dict[str, Any] = {}
    dbs: list[tuple[int, Path, dict[str, Any]]] = []
    if needs & {"fts", "embed", "backfill"}:
        log("databases:")
        for total in sizes if "fts" in needs else sizes[:1]:
            db, meta = cached_database(total, args.cache_dir, args.rebuild)
            dbs.append((total, db, meta))
        details["databases"] = {human(t): m for t, _, m in dbs}

    workspace = Path(tempfile.mkdtemp(prefix="colony-search-bench-"))
    try:
        if "fts" in needs:
            log(f"1. keyword_search (n={n_fts} for rare/prefix, {n_fts_slow} for the others)")
            stats += bench_fts(dbs, n_fts, n_fts_slow)
        if "topk" in needs:
            log(f"2. VectorIndex.top {TOP_K} over random vectors (n={n_top})")
            stats += bench_topk(sizes, n_top)
        if "refresh" in needs:
            log("3. VectorIndex.refresh from SQLite")
            stats += bench_refresh(workspace, refresh_sizes, n_refresh)
        if "embed" in needs:
            log(f"4. embedding throughput ({embed_counts})")
            found, extra, more = bench_embed(workspace, dbs[0][1], embed_counts, args.minilm_python)
            stats += found
            rates.update(more)
            details["embed"] = extra
        if "backfill" in needs:
            total, db, meta = dbs[0]
            log(f"5. backfill {human(total)} observations (static), then hybrid search")
            found, extra, more = bench_backfill(workspace, total, db, meta, n_fts, n_fts_slow)
            stats += found
            rates.update(more)
            details["backfill"] = extra
    finally:
        shutil.rmtree(workspace, ignore_errors=True)

    info_end = machine_info()
    log("")
    log(f"machine: {machine_line(info)}")
    log(results_table(stats, rates))
    log(f"(load at end: {' '.join(map(str, info_end.get('loadavg') or []))})")
    target = write_json(
        args.json,
        {
            "benchmark": "search",
            "mode": "quick" if quick else "full",
            "sizes": list(sizes),
            "machine": info,
            "loadavg_end": info_end.get("loadavg"),
            "results": [s.to_dict() for s in stats],
            "rates": rates,
            "details": details,
        },
    )
    log(f"results written to {target}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "_embed_child":
        _embed_child(sys.argv[2], sys.argv[3])
        sys.exit(0)
    sys.exit(main())
