"""Plain records the store returns. Standard library only (the hook path imports them)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Lane:
    id: int
    repo_id: str
    root: str
    repo_name: str
    branch: str


@dataclass(frozen=True)
class Session:
    id: str
    handle: str
    agent: str
    cwd: str
    lane_id: int | None
    agent_pid: int | None
    started_at: float
    last_seen_at: float
    ended_at: float | None

    @property
    def active(self) -> bool:
        return self.ended_at is None


@dataclass(frozen=True)
class Task:
    id: int
    title: str
    mode: str
    status: str
    lane_id: int | None
    created_by: str | None
    created_at: float
    closed_at: float | None


@dataclass(frozen=True)
class Observation:
    id: int
    session_id: str | None
    task_id: int | None
    kind: str
    text: str
    meta: dict[str, Any] = field(default_factory=dict)
    created_at: float = 0.0
    to: str | None = None
    in_reply_to: int | None = None
    urgent: bool = False
    status: str | None = None
    handle: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def load_meta(raw: str | None) -> dict[str, Any]:
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
