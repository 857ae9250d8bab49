"""The baseline hook: standard library only, reads the stdin JSON and does one WAL insert.

bench/hooks.py times every colony-tasks hook against this script in the same run.
"""

import json
import os
import sqlite3
import sys
import time

payload = json.loads(sys.stdin.buffer.read() or b"{}")
conn = sqlite3.connect(
    os.path.join(os.environ["COLONY_TASKS_HOME"], "baseline.db"), timeout=5, isolation_level=None
)
conn.execute("PRAGMA journal_mode=WAL")
conn.execute("PRAGMA synchronous=NORMAL")
conn.execute(
    "CREATE TABLE IF NOT EXISTS events (id INTEGER PRIMARY KEY, session TEXT, body TEXT, at REAL)"
)
conn.execute(
    "INSERT INTO events(session, body, at) VALUES (?, ?, ?)",
    (payload.get("session_id"), json.dumps(payload), time.time()),
)
conn.close()
