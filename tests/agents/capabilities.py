"""What a real-agent test observed a client do, for the capability table in the docs.

``record(client, version, capability, value)`` appends one JSON line to the file named by
``COLONY_TASKS_CAPABILITIES_OUT`` (nothing when it is unset): a test records a cell only after
it asserted what the cell says. ``python -m colony_tasks.install.capabilities --from FILE``
merges the lines into the table (:mod:`colony_tasks.install.capabilities`, which also names
the capabilities).
"""

from __future__ import annotations

import json
import os

from colony_tasks.install.capabilities import CAPABILITIES

OUT = "COLONY_TASKS_CAPABILITIES_OUT"


def record(client: str, version: str, capability: str, value: str | int) -> None:
    """Note that ``client`` at ``version`` showed ``capability`` as ``value`` (a count, such
    as characters per turn, is written as its digits)."""
    value = str(value)
    if capability not in CAPABILITIES:
        raise ValueError(f"unknown capability {capability!r}; one of {', '.join(CAPABILITIES)}")
    path = os.environ.get(OUT)
    if not path:
        return
    line = {"client": client, "version": version, "capability": capability, "value": value}
    with open(path, "a", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\n")
