"""Benchmark of the colony store on the paths hooks and tools hit: figures and ratios, not tests.

Measures, reporting p50 and p90 side by side (the machine may be shared and noisy):

1. writing one observation through a fresh ``Store(path)`` (a hook is a new process each time),
   against a bare ``sqlite3`` connect + INSERT into a scratch WAL table;
2. a selective two-word ``search.keyword_search`` at two database sizes;
3. ``lanes.resolve`` for a nested folder of a real git repository and of a linked worktree,
   against ``git rev-parse`` in a subprocess;
4. ``actions.updates_since`` for a reader of a lane task holding most of the bulk observations,
   with a few new items before every call;
5. ``claims.conflicts`` for one path against 1,000 live claims of other sessions, warm and as
   the first call of a fresh process (pathspec import + glob compile).

Run ``python bench/store.py`` (``--quick`` for 10k/100k instead of 100k/1M and fewer samples,
``--rebuild`` to regenerate the cached databases in ``/tmp/colony-bench-cache``). Results are
also written to ``bench/results/store.json``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from _stats import (
    Stat,
    Timer,
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

from colony_tasks import search
from colony_tasks.base import lanes
from colony_tasks.domain import claims, sessions
from colony_tasks.store import Store
from colony_tasks.usecases import actions

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "store.json"
CACHE_DIR = Path("/tmp/colony-bench-cache")
SECTIONS = ("write", "fts", "lanes", "updates", "claims", "tasks")

# How task_list found a task's last activity before it probed the newest row by id: every row
# of the task was read (0.15 ms at 1k, 13 ms at 100k, 135 ms at 1M). Timed beside the new
# query in the same run.
OLD_LAST_ACTIVITY = (
    "SELECT t.id, COALESCE((SELECT MAX(o.created_at) FROM observations o"
    " WHERE o.task_id = t.id), t.created_at) AS last_activity FROM tasks t"
    " ORDER BY last_activity DESC LIMIT 50"
)

# -- generated agent traffic ------------------------------------------------------------------

GEN_VERSION = 2  # bump when the generator changes: cached databases are keyed by it
SEED = 20240601
BATCH = 50_000
VOCAB_SIZE = 8000
ZIPF_S = 1.15
N_BULK_SESSIONS = 40
BULK_REPO = "bench-repo"  # observation_paths.repo_id in the cache; working copies rewrite it
SPAN_SECONDS = 30 * 24 * 3600

HEAD_WORDS = """
test file error function config update fix add remove change check build run module class
method value result request response user session token cache query index table schema data
model field type name path import export return call handler client server api route endpoint
auth login password retry timeout limit queue worker job task thread lock process message
event hook plugin option flag setting default missing invalid failing flaky broken slow fast
parse format render output input stream buffer read write open close start stop load save
list dict string number count size length page offset cursor filter sort search match key
id hash version release branch commit merge rebase diff patch review comment doc readme
migration database store record row column insert delete select join transaction rollback
log logger debug warning info trace metric timer counter gauge latency throughput memory cpu
disk network socket http json yaml toml csv xml html css template view component state
props store action reducer effect context provider service container image deploy pipeline
job step stage target artifact package dependency version lockfile wheel venv environment
variable secret key certificate permission role policy scope claim lane handoff question
answer decision blocker note summary thread participant agent prompt edit command tool
output exit status code line stack frame exception panic assert mock fixture snapshot case
suite coverage lint format type annotation generic protocol interface abstract base mixin
helper util common shared core main entry cli argument parser subcommand help usage
""".split()

TAIL_ONSETS = (
    "b c d f g h j k l m n p r s t v w z br cr dr fl gr kl pl pr sk st tr qu sh th".split()
)
TAIL_NUCLEI = "a e i o u ai ea io ou".split()
TAIL_CODAS = ["", "", "", "n", "r", "l", "x", "m", "k", "st", "nd"]

VERBS = (
    "add fix rename refactor remove extract inline move split merge guard validate cache retry "
    "log document simplify optimize handle wrap replace tighten loosen expose hide cleanup"
).split()
KINDS = ("prompt", "edit", "command", "decision", "question", "note", "answer")
KIND_WEIGHTS = (12, 35, 33, 5, 5, 7, 3)
OPENERS = ("please", "can you", "now", "next", "let's", "why does", "make sure", "also")


def _vocabulary(rng: random.Random) -> list[str]:
    """A few thousand words, most frequent first: dev words, then invented identifiers."""
    head = list(dict.fromkeys(w for w in HEAD_WORDS if w not in search.STOPWORDS))
    words = list(head)
    seen = set(words)
    while len(words) < VOCAB_SIZE:
        syllables = rng.randint(2, 3)
        word = "".join(rng.choice(TAIL_ONSETS) + rng.choice(TAIL_NUCLEI) for _ in range(syllables))
        word += rng.choice(TAIL_CODAS)
        if word not in seen and word not in search.STOPWORDS:
            seen.add(word)
            words.append(word)
    return words


def _generate_batch(
    rng: random.Random,
    vocab: list[str],
    cum: list[float],
    modules: list[str],
    start_id: int,
    count: int,
    total: int,
    t0: float,
    df: Counter[str],
) -> tuple[list[tuple[Any, ...]], list[tuple[int, str, str]]]:
    """``count`` observation rows (explicit ids from ``start_id``) and their touched paths."""
    pool = rng.choices(vocab, cum_weights=cum, k=count * 18)
    kinds = rng.choices(KINDS, weights=KIND_WEIGHTS, k=count)
    rand, randint, choice = rng.random, rng.randint, rng.choice
    rows: list[tuple[Any, ...]] = []
    touched: list[tuple[int, str, str]] = []
    at = 0
    for j in range(count):
        oid = start_id + j
        kind = kinds[j]
        module = modules[int(rand() ** 2 * len(modules))]
        meta = "{}"
        status = None
        if kind == "edit":
            m = randint(2, 6)
            file, noun, *extra = pool[at : at + m]
            path = f"src/{module}/{file}.py"
            text = f"edited {path}: {choice(VERBS)} {noun}" + (
                " " + " ".join(extra) if extra else ""
            )
            touched.append((oid, BULK_REPO, path))
            meta = '{"tool":"Edit"}'
        elif kind == "command":
            m = 3
            w1, w2, w3 = pool[at : at + 3]
            shape = randint(0, 7)
            if shape == 0:
                text = f"pytest -q tests/test_{w1}.py -k {w2}"
            elif shape == 1:
                text = f"git diff src/{module}/{w1}.py"
            elif shape == 2:
                text = f"rg -n {w1} src/{module}"
            elif shape == 3:
                text = f"ruff check src/{module}/{w1}.py"
            elif shape == 4:
                text = f"python -m {module}.{w1} --{w2}"
            elif shape == 5:
                text = f'git commit -m "{choice(VERBS)} {w1} {w2} {w3}"'
            elif shape == 6:
                text = f"make {w1}"
            else:
                text = f"ls src/{module}"
            meta = '{"tool":"Bash"}'
        elif kind == "prompt":
            m = randint(6, 18)
            text = f"{choice(OPENERS)} " + " ".join(pool[at : at + m])
        elif kind == "decision":
            m = randint(6, 14)
            w = pool[at : at + m]
            text = (
                f"{choice(VERBS)} {w[0]} {w[1]} instead of {w[2]} in {module}\n"
                f"Rationale: {' '.join(w[3:])}"
            )
        elif kind == "question":
            m = randint(4, 10)
            w = pool[at : at + m]
            text = f"should {module} {choice(VERBS)} {w[0]} {w[1]} before {' '.join(w[2:])}?"
            status = "answered"
        elif kind == "answer":
            m = randint(4, 12)
            text = "yes, " + " ".join(pool[at : at + m])
        else:
            m = randint(5, 16)
            text = " ".join(pool[at : at + m])
        df.update(set(pool[at : at + m]))
        at += m
        session = f"bench-{int(rand() * N_BULK_SESSIONS):02d}"
        created = t0 + SPAN_SECONDS * (oid / total) + rand()
        rows.append((oid, session, None, kind, text, meta, created, status))
    return rows, touched


def _count_matches(conn: sqlite3.Connection, word: str) -> int:
    return int(
        conn.execute(
            "SELECT count(*) FROM observations_fts WHERE observations_fts MATCH ?", (f'"{word}"',)
        ).fetchone()[0]
    )


def build_database(path: Path, total: int) -> dict[str, Any]:
    """Generate ``total`` observations of agent traffic into a new store at ``path``."""
    rng = random.Random(SEED + total)
    vocab = _vocabulary(rng)
    cum = list(itertools.accumulate(1.0 / (rank**ZIPF_S) for rank in range(1, len(vocab) + 1)))
    modules = vocab[40:100]
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    store = Store(path)
    conn = store.conn
    conn.execute("PRAGMA synchronous = OFF")
    conn.execute("PRAGMA cache_size = -262144")
    t0 = time.time() - SPAN_SECONDS
    with store.transaction():
        conn.executemany(
            "INSERT INTO sessions(id, handle, agent, cwd, lane_id, agent_pid, started_at,"
            " last_seen_at, ended_at) VALUES (?, ?, ?, '', NULL, NULL, ?, ?, ?)",
            [
                (
                    f"bench-{k:02d}",
                    f"{'claude' if k % 3 else 'codex'}-b{k:02d}",
                    "claude" if k % 3 else "codex",
                    t0,
                    t0 + SPAN_SECONDS,
                    t0 + SPAN_SECONDS,
                )
                for k in range(N_BULK_SESSIONS)
            ],
        )
    df: Counter[str] = Counter()
    started = time.perf_counter()
    done = 0
    while done < total:
        count = min(BATCH, total - done)
        rows, touched = _generate_batch(rng, vocab, cum, modules, done + 1, count, total, t0, df)
        with store.transaction():
            conn.executemany(
                "INSERT INTO observations(id, session_id, task_id, kind, text, meta, created_at,"
                " status) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            conn.executemany(
                "INSERT OR IGNORE INTO observation_paths(observation_id, repo_id, path)"
                " VALUES (?, ?, ?)",
                touched,
            )
        done += count
        elapsed = time.perf_counter() - started
        eta = elapsed / done * (total - done)
        log(
            f"    {path.name}: {done:>9,}/{total:,} rows  {elapsed:5.1f}s"
            f"  ({done / elapsed:,.0f} rows/s, eta {eta:.0f}s)"
        )
    # Two rare words (each in ~10-100 rows) and two common ones, checked against FTS itself.
    rank = {w: i for i, w in enumerate(vocab)}
    fixed = set(modules) | set(VERBS)
    selective: list[tuple[str, int]] = []
    for low, high in ((15, 70), (10, 100), (5, 200)):  # widen only if the tail is too thin
        for word in sorted((w for w, n in df.items() if low <= n <= high), key=rank.__getitem__):
            if word in fixed or rank[word] < 200 or any(word == w for w, _ in selective):
                continue
            hits = _count_matches(conn, word)
            if 10 <= hits <= 100 or (low, high) == (5, 200):
                selective.append((word, hits))
            if len(selective) == 2:
                break
        if len(selective) == 2:
            break
    if len(selective) < 2:
        raise RuntimeError(f"no two selective words among {total:,} rows; change ZIPF_S")
    common = [(w, _count_matches(conn, w)) for w in vocab[1:3]]
    n_paths = conn.execute("SELECT count(*) FROM observation_paths").fetchone()[0]
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    return {
        "version": GEN_VERSION,
        "rows": total,
        "paths": n_paths,
        "selective": selective,
        "common": common,
        "build_seconds": round(time.perf_counter() - started, 1),
    }


def cached_database(total: int, cache_dir: Path, rebuild: bool) -> tuple[Path, dict[str, Any]]:
    """The generated database of ``total`` observations, built once per size and version."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    db = cache_dir / f"obs-{total}-v{GEN_VERSION}.db"
    sidecar = db.with_suffix(".json")
    if not rebuild and db.exists() and sidecar.exists():
        meta = json.loads(sidecar.read_text())
        log(f"  using cached {db} ({meta['rows']:,} rows)")
        return db, meta
    log(f"  generating {total:,} observations into {db} ...")
    building = db.with_name(db.name + ".building")
    meta = build_database(building, total)
    sidecar.unlink(missing_ok=True)
    os.replace(building, db)
    sidecar.write_text(json.dumps(meta, indent=2) + "\n")
    log(f"  built in {meta['build_seconds']}s; selective {meta['selective']}")
    return db, meta


def human(n: int) -> str:
    if n >= 1_000_000 and n % 1_000_000 == 0:
        return f"{n // 1_000_000}M"
    if n >= 1000 and n % 1000 == 0:
        return f"{n // 1000}k"
    return str(n)


# -- a real git repository with a linked worktree ---------------------------------------------

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "Bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}
NESTED = "src/pkg/sub/deep"
NESTED_FILE = f"{NESTED}/mod.py"


def git(cwd: Path, *args: str) -> str:
    result = subprocess.run(
        ["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", *args],
        cwd=cwd,
        env={**os.environ, **GIT_ENV},
        check=True,
        capture_output=True,
        text=True,
    )
    return result.stdout.strip()


def make_repo(workspace: Path) -> tuple[Path, Path]:
    """``proj`` (branch main, one commit) and its linked worktree ``proj-wt`` (branch feature)."""
    repo = workspace / "proj"
    (repo / NESTED).mkdir(parents=True)
    git(repo, "init", "-q")
    (repo / "README.md").write_text("bench\n")
    (repo / NESTED_FILE).write_text("x = 1\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "init")
    worktree = workspace / "proj-wt"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(worktree))
    return repo, worktree


# -- 1. one write through a fresh connection --------------------------------------------------


def bench_write(workspace: Path, n: int) -> list[Stat]:
    session_id = "bench-writer"
    counter = itertools.count()
    keepers = []

    def setup_store(path: Path, hold: bool) -> int:
        with Store(path) as store:
            task_id = store.insert_task("bench writes")
        if hold:
            keepers.append(_keeper(path))
        return task_id

    def setup_bare(path: Path, hold: bool) -> None:
        conn = sqlite3.connect(path, isolation_level=None)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute(
            "CREATE TABLE scratch (id INTEGER PRIMARY KEY, session_id TEXT, task_id INTEGER,"
            " kind TEXT NOT NULL, text TEXT NOT NULL, meta TEXT NOT NULL, created_at REAL NOT NULL)"
        )
        conn.close()
        if hold:
            keepers.append(_keeper(path))

    def store_write(path: Path, task_id: int):
        def run() -> None:
            store = Store(path)
            store.add_observation(
                "command",
                f"pytest -q tests/test_retry.py -k backoff_{next(counter)}",
                session_id=session_id,
                task_id=task_id,
                meta={"tool": "Bash"},
            )
            store.close()

        return run

    def bare_write(path: Path):
        def run() -> None:
            conn = sqlite3.connect(path, isolation_level=None)
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute(
                "INSERT INTO scratch(session_id, task_id, kind, text, meta, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (
                    session_id,
                    1,
                    "command",
                    f"pytest -q tests/test_retry.py -k backoff_{next(counter)}",
                    '{"tool":"Bash"}',
                    time.time(),
                ),
            )
            conn.close()

        return run

    fns = {}
    for hold, tag in ((True, "held"), (False, "sole")):
        store_db, bare_db = workspace / f"write-{tag}.db", workspace / f"bare-{tag}.db"
        task_id = setup_store(store_db, hold)
        setup_bare(bare_db, hold)
        fns[f"store-{tag}"] = store_write(store_db, task_id)
        fns[f"bare-{tag}"] = bare_write(bare_db)
    try:
        samples = time_interleaved(fns, n, warmup=5)
    finally:
        for conn in keepers:
            conn.close()
    out = []
    for tag, where in (("held", "db held open"), ("sole", "sole connection")):
        base = stat(
            f"write: bare sqlite3 connect+INSERT+close ({where})",
            samples[f"bare-{tag}"],
            note="sqlite3.connect, PRAGMA synchronous=NORMAL, one INSERT into a plain WAL table",
        )
        subject = stat(
            f"write: Store()+add_observation+close ({where})",
            samples[f"store-{tag}"],
            note="fresh Store(path) (up-to-date migration check), one redacted observation"
            " with its FTS row, close",
        )
        out += [compare(subject, base, "bare"), base]
    return out


def _keeper(path: Path) -> sqlite3.Connection:
    """Another connection holding the database open, as a running MCP server does."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("SELECT count(*) FROM sqlite_master").fetchall()
    return conn


# -- 2. full-text search ----------------------------------------------------------------------


def bench_fts(dbs: list[tuple[int, Path, dict[str, Any]]], n: int, n_common: int) -> list[Stat]:
    out: list[Stat] = []
    first: dict[str, Stat] = {}
    for total, db, meta in dbs:
        size = human(total)
        store = Store(db)
        try:
            for label, words, count in (
                ("selective", meta["selective"], n),
                ("common", meta["common"], n_common),
            ):
                query = " ".join(w for w, _ in words)
                hits = search.keyword_search(store, query)
                assert hits, f"no hits for {query!r} in {db}"
                samples = time_calls(
                    lambda q=query, s=store: search.keyword_search(s, q), count, warmup=2
                )
                rows = ", ".join(f"{w}: {c:,} rows" for w, c in words)
                result = stat(
                    f"fts {label} 2-word @{size}",
                    samples,
                    note=f"keyword_search({query!r}) over {total:,} observations ({rows});"
                    " warm connection, limit 20",
                )
                if label in first:
                    compare(result, first[label], f"vs @{human(dbs[0][0])}")
                else:
                    first[label] = result
                print_stat(result)
                out.append(result)
        finally:
            store.close()
    return out


# -- 3. lanes ---------------------------------------------------------------------------------


def bench_lanes(repo: Path, worktree: Path, n: int, n_git: int) -> list[Stat]:
    main_dir, wt_dir = str(repo / NESTED), str(worktree / NESTED)
    main_lane, wt_lane = lanes.resolve(main_dir), lanes.resolve(wt_dir)
    assert main_lane.branch == "main" and wt_lane.branch == "feature", (main_lane, wt_lane)
    assert main_lane.repo_id == wt_lane.repo_id, (main_lane, wt_lane)
    samples = time_interleaved(
        {"main": lambda: lanes.resolve(main_dir), "wt": lambda: lanes.resolve(wt_dir)},
        n,
        warmup=20,
    )

    def rev_parse() -> None:
        subprocess.run(
            ["git", "rev-parse", "--git-common-dir", "--show-toplevel", "--abbrev-ref", "HEAD"],
            cwd=wt_dir,
            check=True,
            capture_output=True,
        )

    git_stat = stat(
        "lanes baseline: git rev-parse subprocess",
        time_calls(rev_parse, n_git, warmup=2),
        note="what resolve avoids: one `git rev-parse` process from the nested worktree folder",
    )
    main_stat = stat(
        "lanes.resolve nested dir (main worktree)",
        samples["main"],
        note=f"4 levels below the root: {NESTED}",
    )
    wt_stat = stat(
        "lanes.resolve nested dir (linked worktree)",
        samples["wt"],
        note=".git is a file pointing at .git/worktrees/<name>, commondir followed",
    )
    return [compare(main_stat, git_stat, "git"), compare(wt_stat, git_stat, "git"), git_stat]


# -- 4 and 5: a lane task holding the bulk observations ---------------------------------------


def prepare_lane_db(
    source: Path, workspace: Path, repo: Path
) -> tuple[Store, dict[str, Any], dict[str, Any]]:
    """A working copy of ``source`` whose bulk observations belong to the lane task of ``repo``."""
    db = workspace / "thread.db"
    shutil.copyfile(source, db)
    store = Store(db)
    joined = [
        sessions.register(store, sid, agent=agent, cwd=str(repo), agent_pid=10_000 + i)
        for i, (sid, agent) in enumerate(
            (("bench-reader", "claude"), ("bench-writer-b", "codex"), ("bench-writer-c", "claude"))
        )
    ]
    lane, task = joined[0].lane, joined[0].task
    with store.transaction():
        moved = store.conn.execute(
            "UPDATE observations SET task_id = ? WHERE task_id IS NULL AND id % 10 != 0",
            (task.id,),
        ).rowcount
        store.conn.execute("UPDATE observation_paths SET repo_id = ?", (lane.repo_id,))
    info = {
        "db": str(db),
        "observations": store.count_observations(),
        "in_lane_task": store.count_observations(task.id),
        "moved": moved,
    }
    ctx = {
        "lane": lane,
        "task": task,
        "reader": joined[0].session,
        "b": joined[1].session,
        "c": joined[2].session,
        "root": str(repo),
    }
    return store, ctx, info


def bench_updates(
    store: Store, ctx: dict[str, Any], n: int, n_first: int
) -> tuple[list[Stat], dict[str, Any]]:
    lane, task = ctx["lane"], ctx["task"]
    reader, b, c = ctx["reader"], ctx["b"], ctx["c"]
    # The reader touched one file (an edit and a claim), so others' edits of it are relevant.
    actions.claim(store, reader.id, [NESTED_FILE], announce=False)
    store.add_observation(
        "edit",
        f"edited {NESTED_FILE}: add guard",
        session_id=reader.id,
        task_id=task.id,
        paths=[NESTED_FILE],
        repo_id=lane.repo_id,
    )
    # A session that just joined starts at cursor 0: its first call pages the backlog.
    firsts, first_items = [], []
    for k in range(n_first):
        fresh = sessions.register(
            store, f"bench-fresh-{k}", agent="claude", cwd=ctx["root"], agent_pid=20_000 + k
        ).session
        with Timer() as first:
            first_items.append(len(actions.updates_since(store, fresh.id).items))
        firsts.append(first.seconds)
    first_stat = stat(
        "updates_since first call (cursor 0)",
        firsts,
        note=f"a session that just joined: its first call pages the backlog ({first_items[0]:,}"
        " items delivered from at most 5000 rows)",
    )
    calls = 0
    top = store.max_observation_id(task.id)
    with Timer() as drain:
        page = None
        while (page is None or page.cursor < top) and calls < 10_000:
            page = actions.updates_since(store, reader.id)
            calls += 1
    counter = itertools.count()

    def post_a_few() -> None:
        i = next(counter)
        actions.post(store, b.id, f"pushed the retry change for batch {i}; tests pass")
        actions.ask(store, c.id, f"does batch {i} still need the migration guard?")
        store.add_observation(
            "edit",
            f"edited {NESTED_FILE}: tighten retry budget {i}",
            session_id=b.id,
            task_id=task.id,
            paths=[NESTED_FILE],
            repo_id=lane.repo_id,
        )

    delivered: list[int] = []

    def read() -> None:
        delivered.append(len(actions.updates_since(store, reader.id).items))

    samples = time_calls(read, n, setup=post_a_few)
    in_task = store.count_observations(task.id)
    steady = stat(
        f"updates_since, {human_round(in_task)} thread, ~3 new",
        samples,
        note=f"lane task holds {in_task:,} observations; before every call another session posts"
        " a note, a question and an edit of a file the reader touched",
    )
    details = {
        "first_call_items": first_items,
        "drain_note": "calls for the measured reader to catch up from cursor 0",
        "drain_calls": calls,
        "drain_seconds": round(drain.seconds, 3),
        "items_per_call": dict(Counter(delivered)),
    }
    return [steady, first_stat], details


def bench_tasks(store: Store, ctx: dict[str, Any], n: int) -> list[Stat]:
    """task_list (tasks with their last activity) over a lane task holding most of the rows."""
    in_task = store.count_observations(ctx["task"].id)
    samples = time_interleaved(
        {
            "new": lambda: actions.task_list(store, status="all"),
            "old": lambda: store.conn.execute(OLD_LAST_ACTIVITY).fetchall(),
        },
        n,
        warmup=3,
    )
    old = stat(f"old last-activity query, {human_round(in_task)} task", samples["old"])
    new = stat(
        f"task_list (status=all), {human_round(in_task)} task",
        samples["new"],
        note="the newest observation of each task found by id on observations_task",
    )
    return [old, compare(new, old, "old query")]


def human_round(n: int) -> str:
    return human(round(n, -3)) if n >= 1000 else str(n)


CLAIMED_PATH = "src/pkg42/mod3.py"  # a literal claim and the glob src/pkg42/** both cover it


def seed_claims(store: Store, ctx: dict[str, Any], repo: Path, total: int = 1000) -> int:
    """``total`` live claims by 20 other sessions: 90% literal paths, 10% ``src/pkgN/**`` globs."""
    lane, task = ctx["lane"], ctx["task"]
    holders = [
        sessions.register(
            store, f"bench-claimer-{k:02d}", agent="codex" if k % 2 else "claude", cwd=str(repo)
        ).session
        for k in range(20)
    ]
    globs = total // 10
    with store.transaction():
        for i in range(total):
            if i < total - globs:
                pattern, is_glob = f"src/pkg{i % 100}/mod{i // 100}.py", False
            else:
                pattern, is_glob = f"src/pkg{i - (total - globs)}/**", True
            store.insert_claim(
                holders[i % len(holders)].id,
                task.id,
                lane.repo_id,
                lane.id,
                pattern,
                is_glob,
                "bench",
                3600,
            )
    mine = ctx["reader"].id
    live = store.list_claims(repo_id=lane.repo_id, limit=100_000)
    return sum(1 for c in live if c["session_id"] != mine)


def bench_claims(
    store: Store, ctx: dict[str, Any], repo: Path, n: int, n_cold: int
) -> tuple[list[Stat], dict[str, Any]]:
    live = seed_claims(store, ctx, repo)
    reader = store.get_session(ctx["reader"].id)
    assert reader is not None
    found = claims.conflicts(store, reader, [CLAIMED_PATH])
    holders = len(found[0].claims) if found else 0
    assert holders >= 2, found
    warm = stat(
        "claims.conflicts 1 path vs 1000 claims (warm)",
        time_calls(lambda: claims.conflicts(store, reader, [CLAIMED_PATH]), n, warmup=2),
        note=f"{live} live claims of 20 other sessions (90% literal paths, 10% globs);"
        f" {holders} cover the path",
    )
    cold_first, cold_second, walls, preloaded = [], [], [], 0
    for _ in range(n_cold):
        with Timer() as wall:
            result = subprocess.run(
                [sys.executable, __file__, "_cold_conflicts", store.path, reader.id, CLAIMED_PATH],
                check=True,
                capture_output=True,
                text=True,
            )
        walls.append(wall.seconds)
        data = json.loads(result.stdout.strip().splitlines()[-1])
        assert data["holders"] == holders, data
        cold_first.append(data["first"])
        cold_second.append(data["second"])
        preloaded += bool(data["pathspec_preloaded"])
    cold = stat(
        "claims.conflicts first call (fresh process)",
        cold_first,
        note="one call timed inside a new interpreter after Store() opened: includes the"
        " pathspec import and compiling the ~100 glob patterns",
    )
    imports = []
    for _ in range(n_cold):
        result = subprocess.run(
            [sys.executable, __file__, "_cold_import"], check=True, capture_output=True, text=True
        )
        imports.append(float(result.stdout.strip().splitlines()[-1]))
    import_stat = stat(
        "  of which: import pathspec (fresh process)",
        imports,
        note="`import pathspec` alone, in a new interpreter that has imported what the"
        " first-call child has",
    )
    second = stat("claims.conflicts second call (fresh process)", cold_second)
    wall = stat("fresh process wall (python + imports + 2 calls)", walls)
    details = {
        "live_claims": live,
        "holders": holders,
        "cold_second_call": second.to_dict(),
        "cold_process_wall": wall.to_dict(),
        "pathspec_preloaded_in_child": preloaded,
    }
    return [warm, compare(cold, warm, "vs warm"), import_stat], details


def _cold_import_child() -> None:
    """Child process of :func:`bench_claims`: the pathspec import alone, same preloads."""
    assert "pathspec" not in sys.modules
    start = time.perf_counter()
    import pathspec  # noqa: F401

    print(time.perf_counter() - start)


def _cold_conflicts_child(db: str, session_id: str, path: str) -> None:
    """Child process of :func:`bench_claims`: time the first and second conflicts() call."""
    preloaded = "pathspec" in sys.modules
    store = Store(db)
    session = store.get_session(session_id)
    assert session is not None
    clock = time.perf_counter
    start = clock()
    found = claims.conflicts(store, session, [path])
    first = clock() - start
    start = clock()
    claims.conflicts(store, session, [path])
    second = clock() - start
    store.close()
    holders = len(found[0].claims) if found else 0
    print(
        json.dumps(
            {
                "first": first,
                "second": second,
                "holders": holders,
                "pathspec_preloaded": preloaded,
            }
        )
    )


# -- main -------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="10k/100k databases and fewer samples (a fast check)"
    )
    parser.add_argument(
        "--rebuild", action="store_true", help="regenerate the cached databases first"
    )
    parser.add_argument(
        "--only",
        default=",".join(SECTIONS),
        help=f"comma-separated sections to run (default: all of {','.join(SECTIONS)})",
    )
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
    n = {
        "write": 100 if quick else 300,
        "fts": 100 if quick else 300,
        "fts_common": 10 if quick else 20,
        "lanes": 500 if quick else 2000,
        "git": 20 if quick else 50,
        "updates": 100 if quick else 300,
        "claims": 100 if quick else 300,
        "tasks": 50 if quick else 200,
        "cold": 5 if quick else 15,
        "first": 3 if quick else 7,
    }
    info = machine_info()
    log(f"colony store benchmark ({'quick' if quick else 'full'})")
    log(f"machine: {machine_line(info)}")
    log(f"sizes: {', '.join(human(s) for s in sizes)}; cache: {args.cache_dir}")

    stats: list[Stat] = []
    details: dict[str, Any] = {}
    needs = set(args.only)
    dbs: list[tuple[int, Path, dict[str, Any]]] = []
    if needs & {"fts", "updates", "claims", "tasks"}:
        log("databases:")
        wanted = sizes if needs & {"fts", "tasks"} else sizes[:1]
        for total in wanted:
            db, meta = cached_database(total, args.cache_dir, args.rebuild)
            dbs.append((total, db, meta))
        details["databases"] = {human(t): m for t, _, m in dbs}

    workspace = Path(tempfile.mkdtemp(prefix="colony-bench-"))
    try:
        if "write" in needs:
            log(f"1. write one observation through a fresh connection (n={n['write']} each)")
            found = bench_write(workspace, n["write"])
            for s in found:
                print_stat(s)
            stats += found
        if "fts" in needs:
            log("2. selective 2-word keyword_search")
            stats += bench_fts(dbs, n["fts"], n["fts_common"])
        repo = worktree = None
        if needs & {"lanes", "updates", "claims", "tasks"}:
            repo, worktree = make_repo(workspace)
        if "lanes" in needs:
            log(f"3. lanes.resolve (n={n['lanes']})")
            found = bench_lanes(repo, worktree, n["lanes"], n["git"])
            for s in found:
                print_stat(s)
            stats += found
        if "tasks" in needs:
            total, db, _ = dbs[-1]
            log(f"6. task_list over a copy of the {human(total)} database (n={n['tasks']})")
            (workspace / "tasks").mkdir()
            store, ctx, _ = prepare_lane_db(db, workspace / "tasks", repo)
            try:
                found = bench_tasks(store, ctx, n["tasks"])
            finally:
                store.close()
            for s in found:
                print_stat(s)
            stats += found
        if needs & {"updates", "claims"}:
            total, db, _ = dbs[0]
            log(f"4/5. lane task over a copy of the {human(total)} database")
            store, ctx, lane_info = prepare_lane_db(db, workspace, repo)
            details["lane_db"] = lane_info
            try:
                if "updates" in needs:
                    log(f"4. updates_since (n={n['updates']})")
                    found, extra = bench_updates(store, ctx, n["updates"], n["first"])
                    for s in found:
                        print_stat(s)
                    stats += found
                    details["updates_since"] = extra
                if "claims" in needs:
                    log(f"5. claims.conflicts (n={n['claims']}, cold n={n['cold']})")
                    found, extra = bench_claims(store, ctx, repo, n["claims"], n["cold"])
                    for s in found:
                        print_stat(s)
                    stats += found
                    details["claims"] = extra
            finally:
                store.close()
    finally:
        shutil.rmtree(workspace, ignore_errors=True)

    info_end = machine_info()
    log("")
    log(f"machine: {machine_line(info)}")
    log(format_table(stats))
    log(f"(load at end: {' '.join(map(str, info_end.get('loadavg') or []))})")
    target = write_json(
        args.json,
        {
            "benchmark": "store",
            "mode": "quick" if quick else "full",
            "sizes": list(sizes),
            "machine": info,
            "loadavg_end": info_end.get("loadavg"),
            "results": [s.to_dict() for s in stats],
            "details": details,
        },
    )
    log(f"results written to {target}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "_cold_conflicts":
        _cold_conflicts_child(*sys.argv[2:5])
        sys.exit(0)
    if sys.argv[1:] == ["_cold_import"]:
        _cold_import_child()
        sys.exit(0)
    sys.exit(main())
