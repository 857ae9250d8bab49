"""What a real-agent test observed a client do, for the capability table in the docs.

``record(client, version, capability, value)`` appends one JSON line to the file named by
``COLONY_TASKS_CAPABILITIES_OUT`` (nothing when it is unset): a test records a cell only after
it asserted what the cell says. ``python -m colony_tasks.install.capabilities --from FILE``
merges the lines into the table (:mod:`colony_tasks.install.capabilities`, which also names
the capabilities).

``transcript(client, version, label, seen)`` appends what a client's model was shown (the lines
colony-tasks put there) to the file named by ``COLONY_TASKS_TRANSCRIPTS_OUT``: the transcripts
of each client seeing another agent's claim, for a closing note or a bug report.
"""

from __future__ import annotations

import json
import os

from colony_tasks.install.capabilities import CAPABILITIES

OUT = "COLONY_TASKS_CAPABILITIES_OUT"
TRANSCRIPTS = "COLONY_TASKS_TRANSCRIPTS_OUT"


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


def transcript(client: str, version: str, label: str, seen: str, *marks: str) -> None:
    """Note the lines of what ``client``'s model was shown at ``label`` that colony-tasks put
    there (they name colony-tasks, or one of ``marks``: a session's handle)."""
    path = os.environ.get(TRANSCRIPTS)
    if not path:
        return
    keys = ("colony-tasks", *marks)
    lines = [line for line in seen.splitlines() if any(key in line for key in keys)]
    entry = {"client": client, "version": version, "label": label, "lines": lines}
    with open(path, "a", encoding="utf-8") as out:
        out.write(json.dumps(entry, ensure_ascii=False) + "\n")
