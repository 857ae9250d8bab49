"""A helper process for the plan concurrency test: takes work through the core.

Reads one JSON document from stdin (the barrier: everything is imported before it is read),
``{"session": id, "task_id": n}``, calls ``take_work`` once and prints one JSON line:
``{"item": id}`` or ``{"item": null}`` when nothing was ready.
"""

from __future__ import annotations

import json
import sys

from colony_tasks.store import open_default
from colony_tasks.usecases import actions


def main() -> None:
    job = json.loads(sys.stdin.read())
    store = open_default()
    try:
        taken = actions.take_work(store, job["session"], task_id=job["task_id"])
        print(json.dumps({"item": taken.item.id if taken.item else None}), flush=True)
    finally:
        store.close()


if __name__ == "__main__":
    main()
