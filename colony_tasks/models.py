"""Plain records the store and the core return.

Records are immutable tuples with named fields, like namedtuples, but made without
``collections.namedtuple``, which compiles generated source for every class: the hook path
imports some twenty record classes in a new process on every agent event, and making them as
namedtuples cost each hook ~8 M instructions (``dataclasses`` would cost more: ~12 ms to
import). Every record has ``to_dict()``, ``_fields``, ``_replace()`` and ``_asdict()``.
Standard library only.
"""

from __future__ import annotations

import json
from operator import itemgetter

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class _Record(tuple):
    """The behaviour every record shares; subclasses come from :func:`record`."""

    __slots__ = ()
    _fields: tuple[str, ...] = ()
    _field_defaults: dict[str, Any] = {}

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        fields = cls._fields
        if len(args) > len(fields):
            raise TypeError(f"{cls.__name__} takes {len(fields)} fields, got {len(args)}")
        if len(args) == len(fields) and not kwargs:
            return tuple.__new__(cls, args)
        values = list(args)
        for name in fields[len(args) :]:
            if name in kwargs:
                values.append(kwargs.pop(name))
            elif name in cls._field_defaults:
                values.append(cls._field_defaults[name])
            else:
                raise TypeError(f"{cls.__name__} is missing the field {name!r}")
        if kwargs:
            raise TypeError(f"{cls.__name__} has no field(s) {', '.join(kwargs)}")
        return tuple.__new__(cls, values)

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in zip(self._fields, self, strict=True))
        return f"{type(self).__name__}({inner})"

    def __getnewargs__(self) -> tuple[Any, ...]:
        return tuple(self)

    def _replace(self, **changes: Any) -> Any:
        return type(self)(**{**self._asdict(), **changes})

    def _asdict(self) -> dict[str, Any]:
        return dict(zip(self._fields, self, strict=True))

    def to_dict(self) -> dict[str, Any]:
        return {key: plain(value) for key, value in zip(self._fields, self, strict=True)}


def record(name: str, fields: str, defaults: tuple = ()) -> Any:
    """A record base class with these space-separated ``fields``; the last ``len(defaults)``
    fields are optional.

    The type checker cannot see fields made at run time, so record classes carry
    ``# type: ignore[misc]`` on their base and declare their fields' types as annotations
    (``typing.NamedTuple`` would say it once, but importing typing costs every hook ~4 ms).
    """
    names = tuple(fields.split())
    namespace: dict[str, Any] = {
        "__slots__": (),
        "_fields": names,
        "_field_defaults": dict(zip(names[len(names) - len(defaults) :], defaults, strict=True)),
    }
    for index, field in enumerate(names):
        namespace[field] = property(itemgetter(index))
    return type(name, (_Record,), namespace)


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
        "id handle agent cwd lane_id agent_pid started_at last_seen_at ended_at machine developer"
        " waiting waiting_since",
        defaults=("", "", "", None),
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
    waiting: str
    waiting_since: float | None

    @property
    def active(self) -> bool:
        return self.ended_at is None

    @property
    def who(self) -> str:
        """``alice@laptop`` (developer and machine), or '' when neither is known."""
        return who_of(self.developer, self.machine)


def who_of(developer: str | None, machine: str | None) -> str:
    """``alice@laptop``: who runs a session and where, or '' when neither is known. Every
    front end shows a session (its posts, its claims) by this one string."""
    if developer and machine:
        return f"{developer}@{machine}"
    return developer or machine or ""


def who_for(who: str, me: Session | None) -> str:
    """``who`` when it is someone else or another machine than ``me`` (team mode), else '':
    on one machine it would only cost tokens."""
    return who if who and (me is None or who != me.who) else ""


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


class WorkItem(
    record(  # type: ignore[misc]
        "WorkItem",
        "id task_id title description files state owner owner_handle reason summary created_by"
        " created_at taken_at finished_at depends_on owner_seen_at owner_ended_at owner_waiting",
        defaults=((), None, None, ""),
    )
):
    """One piece of a task's plan: the files it owns, the items it waits on, its owner."""

    __slots__ = ()
    id: int
    task_id: int
    title: str
    description: str
    files: list[str]
    state: str
    owner: str | None
    owner_handle: str | None
    reason: str | None
    summary: str | None
    created_by: str | None
    created_at: float
    taken_at: float | None
    finished_at: float | None
    depends_on: tuple[int, ...]
    owner_seen_at: float | None
    owner_ended_at: float | None
    owner_waiting: str


def load_meta(raw: str | None) -> dict[str, Any]:
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
