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


def record(name: str, fields: str, defaults: tuple = ()) -> Any:
    """A namedtuple base class whose ``to_dict()`` converts nested records too.

    The type checker cannot see a namedtuple made at run time, so record classes carry
    ``# type: ignore[misc]`` on their base and declare their fields' types as annotations
    (``typing.NamedTuple`` would say it once, but importing typing costs every hook ~4 ms).
    """
    base: Any = namedtuple(name, fields, defaults=defaults)  # type: ignore[misc]  # noqa: PYI024

    def to_dict(self: Any) -> dict[str, Any]:
        return {key: plain(value) for key, value in zip(self._fields, self, strict=True)}

    base.to_dict = to_dict  # type: ignore[attr-defined]
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


class Lane(record("Lane", "id repo_id root repo_name branch")):  # type: ignore[misc]
    __slots__ = ()
    id: int
    repo_id: str
    root: str
    repo_name: str
    branch: str


class Session(
    record(  # type: ignore[misc]
        "Session",
        "id handle agent cwd lane_id agent_pid started_at last_seen_at ended_at machine developer",
        defaults=("", ""),
    )
):
    __slots__ = ()
    id: str
    handle: str
    agent: str
    cwd: str
    lane_id: int | None
    agent_pid: int | None
    started_at: float
    last_seen_at: float
    ended_at: float | None
    machine: str
    developer: str

    @property
    def active(self) -> bool:
        return self.ended_at is None

    @property
    def who(self) -> str:
        """``alice@laptop`` (developer and machine), or '' when neither is known."""
        if self.developer and self.machine:
            return f"{self.developer}@{self.machine}"
        return self.developer or self.machine


class Task(
    record(  # type: ignore[misc]
        "Task",
        "id title mode status lane_id created_by created_at closed_at coordinator turn_holder"
        " turn_seq",
        defaults=(None, None, 0),
    )
):
    __slots__ = ()
    id: int
    title: str
    mode: str
    status: str
    lane_id: int | None
    created_by: str | None
    created_at: float
    closed_at: float | None
    coordinator: str | None
    turn_holder: str | None
    turn_seq: int

    @property
    def is_chain(self) -> bool:
        return self.mode == "chain"


class Observation(
    record(  # type: ignore[misc]
        "Observation",
        "id session_id task_id kind text meta created_at to in_reply_to urgent status handle turn",
        defaults=({}, 0.0, None, None, False, None, None, None),
    )
):
    __slots__ = ()
    id: int
    session_id: str | None
    task_id: int | None
    kind: str
    text: str
    meta: dict[str, Any]
    created_at: float
    to: str | None
    in_reply_to: int | None
    urgent: bool
    status: str | None
    handle: str | None
    turn: int | None


def load_meta(raw: str | None) -> dict[str, Any]:
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
