"""A helper process for the concurrency suite: posts thread messages through the core.

Reads one JSON document from stdin (the barrier: everything is imported before it is read),
``{"posts": [{"author", "text", "kind", "to", "urgent"}, ...]}``, posts each, and prints one
JSON line per post: ``{"id": ..., "text": ...}`` or ``{"refused": "<core sentence>"}``.
"""

from __future__ import annotations

import json
import sys

from colony_tasks.base.errors import ColonyError
from colony_tasks.store import open_default
from colony_tasks.usecases import actions


def main() -> None:
    job = json.loads(sys.stdin.read())
    store = open_default()
    try:
        for item in job["posts"]:
            try:
                posted = actions.post(
                    store,
                    item["author"],
                    item["text"],
                    kind=item.get("kind", "note"),
                    to=item.get("to"),
                    urgent=bool(item.get("urgent")),
                )
            except ColonyError as refused:
                print(json.dumps({"refused": str(refused)}), flush=True)
            else:
                print(json.dumps({"id": posted.id, "text": item["text"]}), flush=True)
    finally:
        store.close()


if __name__ == "__main__":
    main()
