"""The typed vocabularies of the core: agent kinds, task modes and statuses, observation kinds,
item statuses and delivery states. Defined once here; every module, filter and front end uses
these names (a front end that needs a ``Literal`` for its schema is tested against them).

To the type checker each vocabulary is a ``StrEnum``, so a stray string where a status is
expected is an error. At run time it is :class:`Vocabulary`: a ``str`` subclass whose members
are its instances, iterable, with ``.value`` and validation by value, like a ``StrEnum`` —
without the enum machinery, whose six classes cost every hook process ~5 M instructions.
Members are plain strings to SQLite, JSON and comparisons. Standard library only.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from enum import StrEnum as Vocabulary
else:

    class _VocabularyType(type):
        """Makes every upper-case class attribute a member (an instance of the class)."""

        def __init__(cls, name, bases, namespace):
            super().__init__(name, bases, namespace)
            members = {}
            for key, value in namespace.items():
                if key.isupper() and isinstance(value, str):
                    member = str.__new__(cls, value)
                    type.__setattr__(cls, key, member)
                    members[value] = member
            cls._members = members

        def __iter__(cls) -> Iterator:
            return iter(cls._members.values())

        def __len__(cls) -> int:
            return len(cls._members)

        def __contains__(cls, value) -> bool:
            return value in cls._members

    class Vocabulary(str, metaclass=_VocabularyType):
        """A closed set of string values (see the module docstring)."""

        __slots__ = ()

        def __new__(cls, value):
            try:
                return cls._members[value]
            except KeyError:
                raise ValueError(f"{value!r} is not a valid {cls.__name__}") from None

        @property
        def value(self) -> str:
            return str.__str__(self)

        def __repr__(self) -> str:
            return f"{type(self).__name__}({str.__repr__(self)})"


class AgentKind(Vocabulary):
    CLAUDE = "claude"
    CODEX = "codex"
    HUMAN = "human"


class TaskMode(Vocabulary):
    LANE = "lane"  # the one open task of a lane (repository + branch)
    TASK = "task"  # created explicitly
    CHAIN = "chain"  # turn-taking: one coordinator, one turn holder


class TaskStatus(Vocabulary):
    OPEN = "open"
    DONE = "done"  # closed (a chain closed by its coordinator, a finished task)


class ObsKind(Vocabulary):
    # what agents do
    PROMPT = "prompt"
    EDIT = "edit"
    COMMAND = "command"
    # thread messages
    NOTE = "note"
    QUESTION = "question"
    ANSWER = "answer"
    HANDOFF = "handoff"
    ACCEPT = "accept"
    DECISION = "decision"
    BLOCKER = "blocker"
    # thread events
    CLAIM = "claim"
    RELEASE = "release"
    WITHDRAW = "withdraw"
    TURN = "turn"  # a chain turn passed, taken, started or closed
    GUARD = "guard"  # the loop guard refused an agent request
    WORK = "work"  # a plan changed: items planned, taken, finished, ready, reassigned
    INTERFACE = "interface"  # a module's public surface changed (to its importers' sessions)


class ItemStatus(Vocabulary):
    """The state of an item that waits on someone."""

    PENDING = "pending"  # a question or handoff nobody has acted on
    ANSWERED = "answered"
    ACCEPTED = "accepted"
    WITHDRAWN = "withdrawn"
    OPEN = "open"  # a blocker
    RESOLVED = "resolved"


class WorkState(Vocabulary):
    """The state of a work item of a task's plan."""

    OPEN = "open"  # not taken; ready once every dependency is done (or dropped)
    TAKEN = "taken"  # owned by one session, its files claimed
    DONE = "done"
    BLOCKED = "blocked"  # stuck, with a reason; taking it again unblocks it
    DROPPED = "dropped"  # will not be done; no longer holds up its dependents


class DeliveryState(Vocabulary):
    """Whether a directed message has reached one recipient's context."""

    PENDING = "pending"
    DELIVERED = "delivered"
    UNDELIVERABLE = "undeliverable"  # the recipient ended first
    REPORTED = "undeliverable-reported"  # ... and the sender was told


# Plain-string tuples: for membership tests, CLI choices and SQL parameters.
AGENT_KINDS: tuple[str, ...] = tuple(k.value for k in AgentKind)
TASK_STATUSES: tuple[str, ...] = tuple(s.value for s in TaskStatus)
WORK_STATES: tuple[str, ...] = tuple(s.value for s in WorkState)
# How an owner (or a human) finishes an item.
FINISH_STATES: tuple[str, ...] = tuple(
    s.value for s in (WorkState.DONE, WorkState.BLOCKED, WorkState.DROPPED)
)
MESSAGE_KINDS: tuple[ObsKind, ...] = (
    ObsKind.NOTE,
    ObsKind.QUESTION,
    ObsKind.ANSWER,
    ObsKind.HANDOFF,
    ObsKind.ACCEPT,
    ObsKind.DECISION,
    ObsKind.BLOCKER,
)
THREAD_KINDS: tuple[ObsKind, ...] = (
    *MESSAGE_KINDS,
    ObsKind.CLAIM,
    ObsKind.RELEASE,
    ObsKind.WITHDRAW,
    ObsKind.TURN,
    ObsKind.GUARD,
    ObsKind.WORK,
    ObsKind.INTERFACE,
)
# What a participant may post directly; answers route to answering a question.
POSTABLE_KINDS: tuple[ObsKind, ...] = (
    ObsKind.NOTE,
    ObsKind.QUESTION,
    ObsKind.ANSWER,
    ObsKind.DECISION,
    ObsKind.BLOCKER,
)
