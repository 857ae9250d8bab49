"""Plain records the store and the core return.

A record is an immutable tuple with named fields, declared like a dataclass::

    class Lane(Record):
        id: int
        repo_id: str
        ...
        branch: str = "main"  # a default makes the field optional

:class:`Record` is marked with :func:`typing.dataclass_transform` (PEP 681), so the type
checker reads the fields from the annotations exactly as the run time does: it checks every
constructor call (``Lane(1)`` is an error) and every attribute (``result.contxt`` is an
error). At run time the record's metaclass turns the annotated fields, in order, into the
tuple's positions (read-only properties) and ``_fields``; records have no ``__dict__``.
Every record has ``to_dict()``, ``_fields``, ``_replace()`` and ``_asdict()``, and compares,
hashes, pickles and unpacks as a tuple. Standard library only.

Why not ``typing.NamedTuple``: a NamedTuple cannot share a base with methods (``to_dict``),
and it compiles generated source per class: 25 seven-field records cost ~5.9 ms to import as
NamedTuples, ~3.6 ms with this base (``typing`` included), measured in a fresh process.
"""

from __future__ import annotations

import json
from operator import itemgetter
from typing import Any, ClassVar, Self, dataclass_transform

from .text import one_line


def _is_class_var(annotation: Any) -> bool:
    text = annotation if isinstance(annotation, str) else repr(annotation)
    return text.startswith(("ClassVar", "typing.ClassVar"))


class _RecordType(type):
    """The metaclass of :class:`Record`: makes a record class's annotated attributes its
    fields (the base record's fields first), and gives it empty ``__slots__``."""

    def __new__(
        mcls, name: str, bases: tuple[type, ...], namespace: dict[str, Any], **kwargs: Any
    ) -> _RecordType:
        namespace.setdefault("__slots__", ())
        fields: list[str] = []
        defaults: dict[str, Any] = {}
        for base in bases:
            for field in getattr(base, "_fields", ()):
                if field not in fields:
                    fields.append(field)
            defaults.update(getattr(base, "_field_defaults", {}))
        own = [
            key
            for key, annotation in namespace.get("__annotations__", {}).items()
            if not _is_class_var(annotation)
        ]
        for field in own:
            if field in fields:
                raise TypeError(f"{name} declares the field {field!r} of its base again")
            fields.append(field)
            if field in namespace:
                defaults[field] = namespace.pop(field)
            elif defaults:
                raise TypeError(f"{name}: the field {field!r} without a default follows one with")
        for index, field in enumerate(fields):
            if field in own:
                namespace[field] = property(itemgetter(index), doc=f"Field {index}: {field}.")
        if not fields and any(isinstance(base, _RecordType) for base in bases):
            # e.g. fields annotated where the class body keeps no ``__annotations__``
            raise TypeError(f"{name} declares no fields")
        namespace["_fields"] = tuple(fields)
        namespace["_field_defaults"] = defaults
        return super().__new__(mcls, name, bases, namespace, **kwargs)


@dataclass_transform(frozen_default=True, kw_only_default=False)
class Record(tuple, metaclass=_RecordType):
    """The base of every record (see the module docstring)."""

    _fields: ClassVar[tuple[str, ...]]
    _field_defaults: ClassVar[dict[str, Any]]

    def __new__(cls, *args: Any, **kwargs: Any) -> Self:
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

    def _replace(self, **changes: Any) -> Self:
        return type(self)(**{**self._asdict(), **changes})

    def _asdict(self) -> dict[str, Any]:
        return dict(zip(self._fields, self, strict=True))

    def to_dict(self) -> dict[str, Any]:
        return {key: plain(value) for key, value in zip(self._fields, self, strict=True)}


def plain(value: Any) -> Any:
    """Records, lists and dicts of records as JSON-ready values."""
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    return value


class Lane(Record):
    id: int
    repo_id: str
    root: str
    repo_name: str
    branch: str


class Session(Record):
    id: str
    handle: str
    agent: str
    cwd: str
    lane_id: int | None
    agent_pid: int | None
    started_at: float
    last_seen_at: float
    ended_at: float | None
    machine: str = ""
    developer: str = ""
    waiting: str = ""
    waiting_since: float | None = None

    @property
    def active(self) -> bool:
        return self.ended_at is None

    @property
    def who(self) -> str:
        """``alice@laptop`` (developer and machine), or '' when neither is known."""
        return who_of(self.developer, self.machine)


def who_of(developer: str | None, machine: str | None) -> str:
    """``alice@laptop``: who runs a session and where, or '' when neither is known. Every
    front end shows a session (its posts, its claims) by this one string, on one line and
    fenced (:func:`colony_tasks.base.text.one_line`): a peer's machine chooses both names."""
    developer, machine = one_line(developer), one_line(machine)
    if developer and machine:
        return f"{developer}@{machine}"
    return developer or machine


def who_for(who: str, me: Session | None) -> str:
    """``who`` when it is someone else or another machine than ``me`` (team mode), else '':
    on one machine it would only cost tokens."""
    return who if who and (me is None or who != me.who) else ""


class Task(Record):
    id: int
    title: str
    mode: str
    status: str
    lane_id: int | None
    created_by: str | None
    created_at: float
    closed_at: float | None
    coordinator: str | None = None
    turn_holder: str | None = None
    turn_seq: int = 0

    @property
    def is_chain(self) -> bool:
        return self.mode == "chain"


class Observation(Record):
    id: int
    session_id: str | None
    task_id: int | None
    kind: str
    text: str
    meta: dict[str, Any] = {}  # never mutated: records are values
    created_at: float = 0.0
    to: str | None = None
    in_reply_to: int | None = None
    urgent: bool = False
    status: str | None = None
    handle: str | None = None
    turn: int | None = None


class WorkItem(Record):
    """One piece of a task's plan: the files it owns, the items it waits on, its owner."""

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
    depends_on: tuple[int, ...] = ()
    owner_seen_at: float | None = None
    owner_ended_at: float | None = None
    owner_waiting: str = ""


def load_meta(raw: str | None) -> dict[str, Any]:
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
