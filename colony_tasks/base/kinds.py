"""The typed vocabularies of the core: agent kinds, task modes and statuses, observation kinds,
item statuses and delivery states. Defined once here; every module, filter and front end uses
these names (a front end that needs a ``Literal`` for its schema is tested against them).

Each vocabulary is an :class:`enum.StrEnum`, to the type checker and at run time alike: a stray
string where a status is expected is a type error, members have ``.name`` and ``.value``, a
vocabulary iterates over its members and validates by value (``TaskStatus("done")``; an
unknown value raises ``ValueError``). Members are ``str`` instances, so SQLite, JSON and
comparisons see plain strings. A membership test of a plain string goes through the value
tuples below (``status in TASK_STATUSES``): on Python 3.11 ``"done" in TaskStatus`` raises
``TypeError``. Standard library only (``enum`` is loaded by ``re`` anyway).
"""

from __future__ import annotations

from enum import StrEnum


class AgentKind(StrEnum):
    CLAUDE = "claude"
    CODEX = "codex"
    GEMINI = "gemini"
    QWEN = "qwen"
    COPILOT = "copilot"
    OPENCODE = "opencode"
    HUMAN = "human"


class TaskMode(StrEnum):
    LANE = "lane"  # the one open task of a lane (repository + branch)
    TASK = "task"  # created explicitly
    CHAIN = "chain"  # turn-taking: one coordinator, one turn holder


class TaskStatus(StrEnum):
    OPEN = "open"
    DONE = "done"  # closed (a chain closed by its coordinator, a finished task)


class ObsKind(StrEnum):
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


class ItemStatus(StrEnum):
    """The state of an item that waits on someone."""

    PENDING = "pending"  # a question or handoff nobody has acted on
    ANSWERED = "answered"
    ACCEPTED = "accepted"
    WITHDRAWN = "withdrawn"
    OPEN = "open"  # a blocker
    RESOLVED = "resolved"


class WorkState(StrEnum):
    """The state of a work item of a task's plan."""

    OPEN = "open"  # not taken; ready once every dependency is done (or dropped)
    TAKEN = "taken"  # owned by one session, its files claimed
    DONE = "done"
    BLOCKED = "blocked"  # stuck, with a reason; taking it again unblocks it
    DROPPED = "dropped"  # will not be done; no longer holds up its dependents


class DeliveryState(StrEnum):
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


class Presence(StrEnum):
    """How a session is doing (the rule: :func:`colony_tasks.domain.presence.of`)."""

    ONLINE = "online"
    IDLE = "idle"
    WAITING = "waiting"
    CUT_OFF = "cut-off"
    ENDED = "ended"
