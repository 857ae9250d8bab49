"""Round trips per team-mode event, and the statements behind them (issue 35).

    python bench/team_round_trips.py [--sql] [--batch 10]

Starts a throwaway PostgreSQL server (tests/support/pgserver.py) and a zero-delay counting proxy
in front of it (bench/team_wan.py's :class:`DelayProxy`), and applies, in this process and as the
team relay does, one event of each kind a session sends: SessionStart, UserPromptSubmit,
PreToolUse and PostToolUse of an edit, SessionEnd. For each kind it prints the client→server
chunks through the proxy (each a round trip: the driver waits for the answer before it writes
again) and the statements the store ran, with the ones repeated verbatim (same text, same
parameters) within the event flagged. ``--batch N``: then N prompts applied as the relay
applies a batch of spooled rows (:func:`colony_tasks.relay.apply.apply_batch`), round trips per
prompt. The statement log is a subclass of the store's connection made here, not in the product.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from team_wan import DelayProxy, edit_input, make_team  # noqa: E402

from colony_tasks.hooks.payload import request  # noqa: E402
from colony_tasks.relay import apply as apply_mod  # noqa: E402
from colony_tasks.store import open_store  # noqa: E402
from colony_tasks.store.pg import Connection, PgStore  # noqa: E402
from tests.support.hookrun import claude  # noqa: E402
from tests.support.pgserver import PASSWORD, USER, PgServer, pg_bin  # noqa: E402

KINDS = ("session-start", "user-prompt-submit", "pre-tool-use", "post-tool-use", "session-end")


class LoggingConnection(Connection):
    """The store's connection, remembering every statement it sends (and its parameters)."""

    def __init__(self, raw: Any, id_tables: frozenset[str]) -> None:
        super().__init__(raw)
        self.id_tables = id_tables
        self.log: list[tuple[str, tuple[Any, ...]]] = []

    def execute(self, sql: str, params: Any = ()) -> Any:
        self.log.append((" ".join(sql.split()), tuple(params) if params else ()))
        return super().execute(sql, params)

    def execute_simple(self, sql: str) -> None:
        self.log.append((" ".join(sql.split()), ()))
        super().execute_simple(sql)


def wire(event: str, payload: dict[str, Any]) -> dict[str, Any]:
    req = request(event, "claude", payload, json.dumps(payload).encode()).to_wire()
    req["pid"] = None
    return req


def apply_as_relay(store: PgStore, reqs: list[dict[str, Any]]) -> None:
    apply_mod.apply_batch(store, reqs)


def session_payloads(machine: Any, sid: str) -> dict[str, dict[str, Any]]:
    """One event of each kind, in a session's order, the tool events an edit of core.py."""
    clone = machine.clone
    tool_input = edit_input(machine, "line 9\n", "line nine\n")
    pre = claude("pre-tool-use", sid, clone, tool_name="Edit", tool_input=tool_input)
    post = claude("post-tool-use", sid, clone, tool_name="Edit", tool_input=tool_input)
    post["tool_use_id"] = pre["tool_use_id"]
    return {
        "session-start": claude("session-start", sid, clone, source="startup"),
        "user-prompt-submit": claude("user-prompt-submit", sid, clone, prompt="alone"),
        "pre-tool-use": pre,
        "post-tool-use": post,
        "session-end": claude("session-end", sid, clone, reason="exit"),
    }


def measure(
    proxy: DelayProxy, conn: LoggingConnection, action: Any
) -> tuple[int, list[tuple[str, tuple[Any, ...]]]]:
    conn.log.clear()
    before = proxy.up_chunks
    action()
    return proxy.up_chunks - before, list(conn.log)


def report(kind: str, trips: int, log: list[tuple[str, tuple[Any, ...]]], show_sql: bool) -> None:
    seen = collections.Counter(log)
    repeats = sum(n - 1 for n in seen.values() if n > 1)
    print(f"{kind}: {trips} round trips, {len(log)} statements, {repeats} repeated verbatim")
    if show_sql:
        for sql, params in log:
            mark = "  [repeat]" if seen[(sql, params)] > 1 else ""
            print(f"    {sql[:150]}{' ...' if len(sql) > 150 else ''}{mark}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sql", action="store_true", help="print each event's statements")
    parser.add_argument("--batch", type=int, default=10)
    args = parser.parse_args()
    bindir = pg_bin()
    if bindir is None:
        raise SystemExit("PostgreSQL binaries not found: run `make postgres` first")
    root = Path(tempfile.mkdtemp(prefix="colony-bench-rt-"))
    os.environ.pop("COLONY_TASKS_DATABASE_URL", None)
    server = PgServer(bindir)
    server.start()
    proxy = DelayProxy(server.port, 0.0)
    try:
        direct = server.create_database("rt")
        open_store(direct).close()
        proxy.start()
        url = f"postgresql://{USER}:{PASSWORD}@127.0.0.1:{proxy.port}/rt"
        machine = make_team(root, url, 1)[0]
        os.environ.update(machine.env)
        os.environ["COLONY_TASKS_HOME"] = str(machine.home)
        machine.home.mkdir(parents=True, exist_ok=True)
        store = PgStore(url)
        conn = LoggingConnection(store.conn.raw, store.conn.id_tables)  # type: ignore[attr-defined]
        store.conn = conn  # type: ignore[assignment]
        clone = machine.clone
        figures: dict[str, dict[str, int]] = {}
        # The relay's connection lives long: its statements are prepared by then (warm).
        for label in ("cold", "warm"):
            print(f"-- a session's events, {label} connection")
            figures[label] = {}
            for kind, payload in session_payloads(machine, f"agent-{label}").items():
                req = wire(kind, payload)
                trips, log = measure(proxy, conn, lambda req=req: apply_as_relay(store, [req]))
                figures[label][kind] = trips
                report(kind, trips, log, args.sql and label == "warm")
        if args.batch > 1:
            start = claude("session-start", "agent-b", clone, source="startup")
            apply_as_relay(store, [wire("session-start", start)])
            reqs = [
                wire(
                    "user-prompt-submit",
                    claude("user-prompt-submit", "agent-b", clone, prompt=f"p{i}"),
                )
                for i in range(args.batch)
            ]
            trips, log = measure(proxy, conn, lambda: apply_as_relay(store, reqs))
            figures["batch"] = {f"prompt_in_batch_of_{args.batch}": round(trips / args.batch, 1)}
            print(
                f"{args.batch} prompts applied as one batch: {trips / args.batch:.1f} round trips each"
            )
        print(json.dumps(figures))
        store.close()
    finally:
        proxy.stop()
        server.destroy()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
