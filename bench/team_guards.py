"""What the member guards of PostgreSQL migration 16 cost a member's writes, in one run.

    python bench/team_guards.py [--n 200]

Starts a throwaway PostgreSQL server, runs the README's role setup, and makes two databases
migrated by the admin: one as shipped (guards on) and one whose guards the admin then drops.
As the member ``alice_laptop`` it times, interleaved between the two, a thread post (an
observation, its recipients, the author's participation) and a claim, each one use case in one
transaction. Prints medians and the guarded/unguarded ratio; nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from colony_tasks.domain import sessions  # noqa: E402
from colony_tasks.store import open_store  # noqa: E402
from colony_tasks.usecases import actions  # noqa: E402
from tests.support.gitutil import make_repo  # noqa: E402
from tests.support.pgserver import PgServer, pg_bin, psql  # noqa: E402

README = HERE.parent / "README.md"
UNGUARD = """
DO $$
DECLARE t text;
BEGIN
    FOR t IN SELECT DISTINCT event_object_table FROM information_schema.triggers
        WHERE trigger_name LIKE 'colony_guard%' LOOP
        EXECUTE format('DROP TRIGGER colony_guard ON %I', t);
        EXECUTE format('DROP TRIGGER colony_guard_truncate ON %I', t);
    END LOOP;
END $$;
ALTER TABLE session_keys DISABLE ROW LEVEL SECURITY;
"""


def setup_sql(database: str) -> str:
    block = re.search(r"Recommended server setup.*?```sql\n(.*?)```", README.read_text(), re.S)
    assert block, "the README lost its server setup block"
    sql = block.group(1).replace("PASSWORD '...'", "PASSWORD 'pw'")
    return sql.replace("colony_team", database)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=200)
    args = parser.parse_args()
    bindir = pg_bin()
    if bindir is None:
        sys.exit("PostgreSQL binaries are not installed (run `make postgres`)")
    server = PgServer(bindir)
    server.start()
    tmp = tempfile.mkdtemp(prefix="bench-guards-")
    os.environ["COLONY_TASKS_HOME"] = os.path.join(tmp, "home")
    try:
        first = setup_sql("guarded")
        done = psql(server, first)
        assert done.returncode == 0, done.stderr
        second = "\n".join(
            line
            for line in setup_sql("unguarded").splitlines()
            if not line.startswith("CREATE ROLE")  # the roles exist already
        )
        done = psql(server, second)
        assert done.returncode == 0, done.stderr
        url = "postgresql://{}:pw@127.0.0.1:" + str(server.port) + "/{}"
        for db in ("guarded", "unguarded"):
            open_store(url.format("colony_admin", db)).close()
        done = psql(server, UNGUARD, database="unguarded")
        assert done.returncode == 0, done.stderr
        repo = make_repo(Path(tmp) / "shop")
        stores = {db: open_store(url.format("alice_laptop", db)) for db in ("guarded", "unguarded")}
        me = {
            db: sessions.register(store, "s", agent="claude", cwd=str(repo)).session
            for db, store in stores.items()
        }
        times: dict[tuple[str, str], list[float]] = {}
        for i in range(args.n):
            for db, store in stores.items():
                for op, run in (
                    ("post", lambda s=store, m=me[db], i=i: actions.post(s, m, f"note {i}")),
                    ("claim", lambda s=store, m=me[db], i=i: actions.claim(s, m, [f"src/f{i}.py"])),
                ):
                    start = time.perf_counter()
                    run()
                    times.setdefault((db, op), []).append(time.perf_counter() - start)
        for op in ("post", "claim"):
            guarded = statistics.median(times[("guarded", op)]) * 1000
            unguarded = statistics.median(times[("unguarded", op)]) * 1000
            print(
                f"{op:6s} as a member: guarded p50 {guarded:.2f} ms, unguarded p50"
                f" {unguarded:.2f} ms, ratio {guarded / unguarded:.2f} (n={args.n})"
            )
        for store in stores.values():
            store.close()
    finally:
        server.destroy()


if __name__ == "__main__":
    main()
