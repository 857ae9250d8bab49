"""What each agent CLI was seen to do, one capability cell per call of :func:`record`.

A test that measures a capability records it; ``COLONY_TASKS_CAPABILITIES_OUT`` names the file
the cells are appended to (one JSON object per line), from which the capability table is
generated. Unset, recording does nothing.
"""

from __future__ import annotations

import json
import os
from typing import Any


def record(client: str, version: str, capability: str, value: Any) -> None:
    """Append ``{"client", "version", "capability", "value"}`` to the capabilities file."""
    target = os.environ.get("COLONY_TASKS_CAPABILITIES_OUT")
    if not target:
        return
    line = {"client": client, "version": version, "capability": capability, "value": value}
    with open(target, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(line) + "\n")
