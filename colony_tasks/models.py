"""Plain records the store returns.

Records are namedtuple classes, not dataclasses: the hook path imports this module in a new
process on every agent event, and ``dataclasses`` alone costs ~12 ms to import on the target
machine. Every record has ``to_dict()``. Standard library only.
"""

from __future__ import annotations

import json
from collections import namedtuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def record(name: str, fields: str, defaults: tuple = ()):
    """A namedtuple base class whose ``to_dict()`` converts nested records too."""
    base = namedtuple(name, fields, defaults=defaults)  # noqa: PYI024

    def to_dict(self) -> dict[str, Any]:
        return {key: plain(value) for key, value in zip(self._fields, self, strict=True)}

    base.to_dict = to_dict
    return base


def plain(value: Any) -> Any:
    """Records, lists and dicts of records as JSON-ready values."""
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    return value


class Lane(record("Lane", "id repo_id root repo_name branch")):
    __slots__ = ()


class Session(
    record(
        "Session",
        "id handle agent cwd lane_id agent_pid started_at last_seen_at ended_at",
    )
):
    __slots__ = ()

    @property
    def active(self) -> bool:
        return self.ended_at is None


class Task(
    record(
        "Task",
        "id title mode status lane_id created_by created_at closed_at coordinator turn_holder"
        " turn_seq",
        defaults=(None, None, 0),
    )
):
    __slots__ = ()

    @property
    def is_chain(self) -> bool:
        return self.mode == "chain"


class Observation(
    record(
        "Observation",
        "id session_id task_id kind text meta created_at to in_reply_to urgent status handle turn",
        defaults=({}, 0.0, None, None, False, None, None, None),
    )
):
    __slots__ = ()


def load_meta(raw: str | None) -> dict[str, Any]:
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
