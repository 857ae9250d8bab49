"""The agent lifecycle, one function per event: plain values in, a :class:`Result` out.

A front end (the relay, or a hook applying its event itself: :mod:`colony_tasks.relay.apply`)
turns the agent's payload into an :class:`Event` (and a :class:`ToolUse`), calls one function
here and renders the :class:`Result` (:func:`colony_tasks.render.briefing.render`). Everything else
is decided here, each in its own transactions: registering the session, recording prompts,
edits and commands, auto-claiming edited files, the edit policy (warn, or deny in block mode),
what is delivered when. An event's context — its session, lane, lane task and folder — is
resolved once (:class:`Here`) and passed on. The results are data (the briefing's subject,
conflicts, delivered items, undeliverable rows, read notes): what to say is the renderer's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..base import lanes, settings
from ..base.agent_events import EDIT, EVENTS, READ, SHELL, WAITING_NOTIFICATIONS
from ..base.errors import InvalidInput
from ..base.models import Observation, Record, Session
from ..domain import claims as claims_mod
from ..domain import delivery, presence, shell_edits, wake
from ..domain import regions as regions_mod
from ..domain import sessions as sessions_mod
from ..domain.claims import PathConflict
from ..domain.delivery import Updates
from ..domain.regions import Overlap
from ..domain.sessions import Joined
from ..store import Store
from . import records

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from ..base.agent_events import ToolAction


class Event(Record):
    """Who raised a lifecycle event: the agent's session id, its kind, its working folder and
    the agent process the hook runs under; ``subagent`` names the subagent inside that session
    that acted (``Explore a1b2c3``), '' for the session itself. A subagent's acts are its
    parent session's: it has no session of its own."""

    session_id: str
    agent: str
    cwd: str
    agent_pid: int | None = None
    subagent: str = ""


class ToolUse(Record):
    """A tool call in our terms: ``action`` is ``edit`` (``paths`` are the files it writes),
    ``read`` (``paths`` are the files it reads), ``shell`` (``command`` is what it runs) or
    ``other``; ``use_id`` pairs a PreToolUse with its PostToolUse; ``edits`` are what an edit
    says it will write, ``[kind, path, old, new]`` each (a PreToolUse's; see
    :func:`colony_tasks.domain.regions.edits_by_path`)."""

    name: str
    action: ToolAction
    paths: tuple[str, ...] = ()
    command: str = ""
    use_id: str = ""
    edits: tuple[tuple[str, ...], ...] = ()


class ReadNote(Record):
    """A file another live session of the lane holds, read by this one: the holder's claim
    row and the latest decision naming the file (None when none does)."""

    path: str
    holder: dict[str, Any]
    decision: Observation | None


class Result(Record):
    """What an event produced, as data; :func:`colony_tasks.render.briefing.render` turns it into
    the text the agent is given (or the reason a tool call is denied). An empty result says
    nothing.

    ``joined`` is the subject of a briefing (a session start), a re-brief when ``rebrief``
    (with ``updates``, what is new since it was last told); ``subagent`` the type of a
    starting subagent of ``session``; ``updates`` a prompt's news; ``conflicts`` others'
    declared claims of the files an edit touches and ``overlaps`` where the edit meets other
    sessions' changes as git will (:mod:`colony_tasks.domain.regions`; ``after``: the edit
    was made; ``deny``: block mode refuses it); ``delivered`` what was addressed to the session mid-turn;
    ``undeliverable`` what it sent that can no longer reach its recipient, ``woken`` which of
    its items woke an idle recipient or kept it from stopping (each told once); ``gate`` what
    the Stop gate decided (:func:`colony_tasks.domain.wake.stop_gate`)."""

    session: Session | None = None
    joined: Joined | None = None
    rebrief: bool = False
    subagent: str | None = None
    updates: tuple[Updates, ...] = ()
    conflicts: tuple[PathConflict, ...] = ()
    overlaps: tuple[Overlap, ...] = ()
    after: bool = False
    deny: bool = False
    read_notes: tuple[ReadNote, ...] = ()
    delivered: tuple[Observation, ...] = ()
    undeliverable: tuple[dict[str, Any], ...] = ()
    woken: tuple[dict[str, Any], ...] = ()
    gate: wake.Gate | None = None


NOTHING = Result()
# An event sent again within this window is the same event (see
# colony_tasks.relay.wire.event_key): a hook installed twice, or a client whose relay died.
DUPLICATE_WINDOW_SECONDS = 60
# The quiet events never give the agent text (colony_tasks.base.agent_events marks them).
QUIET = frozenset(slug for slug, row in EVENTS.items() if row.quiet)
# The events whose second run would record or inject something twice (those that speak): they
# are applied exactly once (colony_tasks.relay.apply). The quiet ones are idempotent (a
# refresh, a state, an end), so they skip the idempotency key and its write.
DEDUPED = frozenset(EVENTS) - QUIET
# SessionStart sources after which the model has lost what it was told (compaction, /clear):
# a session the lane already knows is re-briefed (:func:`session_start`).
REBRIEF_SOURCES = frozenset({"compact", "clear"})


def _session(store: Store, event: Event) -> Session:
    """The event's session, registered on first sight (hooks installed mid-session), moved
    when its folder changed, reopened after an end — only by the agent process that owns it
    (:func:`colony_tasks.domain.sessions.check_owner`)."""
    return _settle(store, event, _stored(store, event))


def _stored(store: Store, event: Event) -> Session | None:
    """The event's session as the store has it (None when new or unnamed)."""
    return store.get_session(event.session_id) if event.session_id else None


def _settle(store: Store, event: Event, session: Session | None) -> Session:
    """:func:`_session` for the event's session as the store has it (:func:`_stored`)."""
    sessions_mod.check_agent_event(event.session_id, event.agent, session)
    if session is not None:
        sessions_mod.check_owner(session, event.agent_pid)
    if session is None or (event.cwd and event.cwd != session.cwd) or session.ended_at is not None:
        return sessions_mod.register(
            store,
            event.session_id,
            agent=event.agent,
            cwd=event.cwd or ".",
            agent_pid=event.agent_pid,
        ).session
    store.refresh_session(event.session_id, agent_pid=event.agent_pid)
    return session


def _here(store: Store, event: Event) -> records.Here:
    """The event's context, its session registered or refreshed (:func:`_session`)."""
    return records.here_of(store, _session(store, event), event.cwd)


def _inbox(store: Store, me: Session, *, directed: bool) -> dict[str, Any]:
    """What the session's hook tells besides the event's own: with ``directed``, the items
    addressed to it (delivered now); its undeliverable items and the items of its that woke
    someone (each told once) — asked in one read."""
    inbox = store.inbox(me.id, directed=directed)
    found: dict[str, Any] = {
        "undeliverable": tuple(store.undelivered_for_sender(me.id)) if inbox.undeliverable else (),
        "woken": wake.woken(store, me, untold=inbox.woken),
    }
    if directed:
        found["delivered"] = tuple(delivery.deliver_directed(store, me, pending=inbox.directed))
    return found


def session_start(store: Store, event: Event, source: str = "startup") -> Result:
    """Register (or refresh) the session, join its lane task, and brief it. A session new to
    the task is not sent the task's history again as news at its first prompt.

    After compaction or /clear (``source`` ``compact`` / ``clear``) a session already on its
    task has lost its briefing and whatever it was told since: it is re-briefed with the
    state it needs now and what is new since it was last told (the cursor then advances, as
    at a prompt)."""
    existing = store.get_session(event.session_id) if event.session_id else None
    sessions_mod.check_agent_event(event.session_id, event.agent, existing)
    with store.transaction():  # joined and marked briefed at once: one commit, not two
        joined = sessions_mod.register(
            store,
            event.session_id,
            agent=event.agent,
            cwd=event.cwd or ".",
            agent_pid=event.agent_pid,
        )
        if joined.new_participant:
            delivery.mark_briefed(store, joined.session, joined.task.id)
    me = joined.session
    if source in REBRIEF_SOURCES and not joined.new_participant:
        return Result(me, joined, rebrief=True, updates=delivery.news(store, me))
    return Result(me, joined)


def subagent_start(store: Store, event: Event, agent_type: str = "") -> Result:
    """A subagent starts inside the event's session (its parent): refresh the parent and give
    the subagent a short brief of its own (others' claims, its parent's handle, what to do
    before editing a held file). The subagent has no session: what it does is recorded as
    its parent's, naming it."""
    return Result(_session(store, event), subagent=agent_type or "subagent")


def prompt(store: Store, event: Event, text: str) -> Result:
    """Deliver what is new since the session's last turn and record the prompt. The prompt a
    woken turn starts with (its first event since a wake) is colony-tasks' own delivery, not
    its human's: it is not recorded, so it resets no loop guard (:func:`wake.woken_turn`).
    A subagent's prompt (Copilot CLI sends its task so) is its parent's word to it, not the
    human's: nothing is recorded, and the parent's news wait for the parent's next turn (the
    subagent had its brief at its start)."""
    if event.subagent:
        return Result(_session(store, event))
    stored = _stored(store, event)
    woken = wake.woken_turn(store, stored)
    here = records.here_of(store, _settle(store, event, stored), event.cwd)
    me = here.session
    # Told first, recorded last: the prompt is the event's one item, and on a team store the
    # lane's task is locked from its first item to the commit (other machines' items wait).
    told = Result(me, updates=delivery.news(store, me), **_inbox(store, me, directed=False))
    if text.strip() and not woken:
        records.record(store, here, "prompt", text, max_chars=records.PROMPT_CHARS)
    return told


def checks_before(tool: ToolUse) -> bool:
    """Whether :func:`before_tool` has anything to do for this tool (an edit with paths, a
    shell command); hooks ask first, so other tools never open the store."""
    return (tool.action == SHELL and bool(tool.command.strip())) or (
        tool.action in (EDIT, READ) and bool(tool.paths)
    )


def fingerprinted(event: str, tool: ToolUse | None = None) -> bool:
    """Whether the event is applied exactly once (its idempotency key claimed, see
    :mod:`colony_tasks.relay.apply`): a read is not (it is the most frequent hook and says a
    thing once per file anyway)."""
    return event in DEDUPED and not (tool is not None and tool.action == READ)


def before_tool(store: Store, event: Event, tool: ToolUse) -> Result:
    """Before an edit: where it meets other live sessions' changes of its files on any branch
    (:func:`colony_tasks.domain.regions.before_edit`; each overlap told once) and others'
    declared claims of them (a claim, a plan item, a handoff: the whole file); denied instead
    when the user chose ``claims.mode = block`` and an overlap or a live claim is in the way. Before a read: who
    holds the file (:func:`_before_read`). Before a shell command: note the state of the
    files it could change (see :mod:`colony_tasks.domain.shell_edits`), so the PostToolUse can tell
    which ones it did."""
    if not checks_before(tool):
        return NOTHING
    if tool.action == READ:
        return _before_read(store, event, tool)
    here = _here(store, event)
    if tool.action == SHELL:
        if here.lane is not None:
            shell_edits.note_before(
                store, here.session, here.lane, here.cwd, tool.command, tool.use_id
            )
        return NOTHING
    rel = records.repo_paths_here(here, tool.paths)
    if not rel or here.lane is None:
        return NOTHING
    found = claims_mod.declared_conflicts(store, here.session, rel, here.lane)
    # git is asked before the transaction: nothing slow runs while it holds the team's lock.
    root, edits = _root(here), _edits(here, tool, rel)
    forked = regions_mod.fork_bases(root, edits, here.lane)
    with store.transaction():
        forecast = regions_mod.before_edit(store, here.session, here.lane, root, edits, forked)
    deny = settings.get("claims", "mode") == "block" and (
        any(c.live for c in found) or bool(forecast.overlaps)
    )
    overlaps = forecast.overlaps if deny else forecast.fresh
    if not found and not overlaps:
        return NOTHING
    return Result(here.session, conflicts=found, overlaps=overlaps, deny=deny)


def _root(here: records.Here) -> str:
    """The session's working tree: a lane's clones (one origin, one branch) have one each."""
    return lanes.resolve(here.session.cwd).root


def _edits(
    here: records.Here, tool: ToolUse, rel: Sequence[str]
) -> dict[str, list[tuple[str, str, str]] | None]:
    """The tool's edits per repo-relative path; a path it names without saying what it
    writes is still an edit (its base is taken; its region is known after it)."""

    def rel_of(path: str) -> str | None:
        found = records.repo_paths_here(here, [path]) if path else []
        return found[0] if found else None

    edits = regions_mod.edits_by_path(tool.edits, rel_of)
    for path in rel:
        edits.setdefault(path, [])
    return edits


def _before_read(store: Store, event: Event, tool: ToolUse) -> Result:
    """Before a read: once per session and file, when another live session of the lane holds
    the file — who holds it and the latest decision that names it. Reads of files nobody else
    holds (nearly all) cost a few reads of the store and write nothing (the session is not
    refreshed)."""
    me = store.get_session(event.session_id) if event.session_id else None
    if me is None or not me.lane_id:
        return NOTHING
    sessions_mod.check_owner(me, event.agent_pid)  # its read notes are its own
    here = records.here_of(store, me, event.cwd)
    rel = records.repo_paths_here(here, tool.paths)
    if not rel or here.lane is None:
        return NOTHING
    notes = []
    for path, held in claims_mod.live_holders(store, me, rel, here.lane).items():
        if held and store.first_read_note(me.id, path):
            notes.append(ReadNote(path, held[0], _decision_naming(store, here.task_id, path)))
    return Result(me, read_notes=tuple(notes)) if notes else NOTHING


def _decision_naming(store: Store, task_id: int | None, path: str) -> Observation | None:
    """The latest decision of the lane task whose text names ``path`` (or its file name)."""
    if task_id is None:
        return None
    name = path.rsplit("/", 1)[-1]
    for obs in reversed(store.timeline(task_id, kinds=["decision"], limit=50)):
        if path in obs.text or name in obs.text:
            return obs
    return None


def after_tool(store: Store, event: Event, tool: ToolUse, *, failed: bool = False) -> Result:
    """After a tool: record the edit (auto-claiming its files) or the command, the collision
    it made (others' live claims of the files it wrote), and deliver what is addressed to the
    session or urgent.

    ``failed``: the tool failed (Claude Code's PostToolUseFailure: a shell command that exited
    non-zero, an edit that did not apply). What a failed shell command changed on disk is
    recorded and warned about like any other command's; the command is recorded as failed."""
    here = _here(store, event)
    me = here.session
    # What it is told is read first, and its items are written last (see prompt).
    inbox = _inbox(store, me, directed=True)
    extra = _meta(event, failed)
    conflicts: tuple[PathConflict, ...] = ()
    overlaps: tuple[Overlap, ...] = ()
    if tool.action == EDIT and not failed:  # a failed Edit/Write changed nothing
        conflicts, overlaps = _after_edit(store, here, tool, extra)
    elif tool.action == SHELL and tool.command.strip():
        records.record(store, here, "command", tool.command, meta={"tool": tool.name, **extra})
        changed = (
            shell_edits.changed_by(
                store, here.session, here.lane, here.cwd, tool.command, tool.use_id
            )
            if here.lane is not None
            else []
        )
        if changed:
            conflicts, overlaps = _after_edit(
                store, here, tool._replace(paths=tuple(changed)), extra
            )
    return Result(me, conflicts=conflicts, overlaps=overlaps, after=True, **inbox)


def _meta(event: Event, failed: bool = False) -> dict[str, Any]:
    """What an observation notes about who acted and how: the subagent, a failed tool."""
    extra: dict[str, Any] = {}
    if event.subagent:
        extra["subagent"] = event.subagent
    if failed:
        extra["failed"] = True
    return extra


def _after_edit(
    store: Store, here: records.Here, tool: ToolUse, extra: dict[str, Any]
) -> tuple[tuple[PathConflict, ...], tuple[Overlap, ...]]:
    """Record the edit of ``tool.paths``, claim them and keep the session's regions of them;
    the live declared claims it went into, and the overlaps with others' changes it made
    that the session was not told of before it."""
    rel = records.repo_paths_here(here, tool.paths)
    if not rel or here.lane is None:
        return (), ()
    root = _root(here)
    forked = regions_mod.fork_bases(root, rel, here.lane)  # git before the transaction
    with store.transaction():
        found = claims_mod.declared_conflicts(store, here.session, rel, here.lane)
        claims_mod.claim_edited(store, here.session, rel, here.lane, here.task_id)
        forecast = regions_mod.after_edit(store, here.session, here.lane, root, rel, forked)
        records.record_here_edit(store, here, rel, tool.name, extra)
    return tuple(c for c in found if c.live), forecast.fresh


def stop(store: Store, event: Event, active: bool = False) -> Result:
    """The agent finished a turn: the session is still alive. A session whose Stop can keep
    it working (Codex, Gemini CLI, Qwen Code, Copilot CLI) with urgent items pending is kept
    working (:func:`colony_tasks.domain.wake.stop_gate`; ``active``: this stop follows one that
    was held back); Claude Code is woken by its background wait instead."""
    me = _session(store, event)
    if event.agent not in wake.STOP_GATED or event.subagent:
        return NOTHING
    gate = wake.stop_gate(store, me, active)
    return Result(me, gate=gate) if gate.items or gate.unread else NOTHING


def stop_failure(store: Store, event: Event, error: str = "") -> Result:
    """The agent's turn ended on a model API error (Claude Code's StopFailure: ``rate_limit``,
    ``overloaded``, ``billing_error``, ...): the session cannot act until its human resumes it.
    The lane sees it at once (a note in the lane task, and the session shown as cut off);
    its claims and taken items become stale now and takeable after
    :data:`colony_tasks.domain.presence.CUT_OFF_GRACE` (the rule is in :mod:`colony_tasks.domain.presence`).
    A subagent's failure is not its session's: nothing happens."""
    if event.subagent:
        return NOTHING
    here = _here(store, event)
    me = here.session
    state = presence.cut_off(error)
    grace = presence.CUT_OFF_GRACE
    with store.transaction():
        store.set_waiting(me.id, state)
        store.cap_claims(me.id, store.now() + grace)
        records.record(
            store,
            here,
            "note",
            f"{me.handle} was cut off ({state[len(presence.CUT_OFF) :]}) and cannot act until"
            f" its human resumes it. Its claims are stale now and expire in {grace // 60}m;"
            " its taken work items can then be taken with take_work(item_id=...).",
            meta={"event": "cut-off", "error": state[len(presence.CUT_OFF) :]},
        )
    return NOTHING


def waits_on_human(kind: str) -> bool:
    """Whether a notification of this type means the session waits on its human; hooks ask
    first, so other notifications never open the store."""
    return kind in WAITING_NOTIFICATIONS


def notification(store: Store, event: Event, kind: str) -> Result:
    """The agent notified its human (Claude Code's Notification): on an idle or permission
    prompt the session is shown as waiting on its human until its next event."""
    if not waits_on_human(kind):
        return NOTHING
    me = _session(store, event)
    store.set_waiting(me.id, presence.HUMAN)
    return NOTHING


def session_end(store: Store, event: Event) -> Result:
    """End the session and release its claims — unless it belongs to another live agent
    process (a payload that merely carries its id ends nothing)."""
    session = store.get_session(event.session_id) if event.session_id else None
    if session is not None:
        sessions_mod.check_agent_event(event.session_id, event.agent, session)
        sessions_mod.check_owner(session, event.agent_pid)
        sessions_mod.end_session(store, session)
    return NOTHING


#: Each agent event's use case (:data:`colony_tasks.base.agent_events.EVENTS` has one row per
#: event), called with the event's values, its tool call (tool events) and its fields.
USE_CASES: dict[str, Callable[[Store, Event, ToolUse | None, dict[str, Any]], Result]] = {
    "session-start": lambda store, e, tool, f: session_start(store, e, str(f["source"])),
    "user-prompt-submit": lambda store, e, tool, f: prompt(store, e, str(f["prompt"])),
    "pre-tool-use": lambda store, e, tool, f: before_tool(store, e, _tool(tool)),
    "post-tool-use": lambda store, e, tool, f: after_tool(store, e, _tool(tool)),
    "post-tool-use-failure": lambda store, e, tool, f: after_tool(
        store, e, _tool(tool), failed=True
    ),
    "subagent-start": lambda store, e, tool, f: subagent_start(store, e, str(f["agent_type"])),
    "stop": lambda store, e, tool, f: stop(store, e, f["active"] is True),
    "stop-failure": lambda store, e, tool, f: stop_failure(store, e, str(f["error"])),
    "notification": lambda store, e, tool, f: notification(store, e, str(f["notification_type"])),
    "session-end": lambda store, e, tool, f: session_end(store, e),
}


def _tool(tool: ToolUse | None) -> ToolUse:
    if tool is None:
        raise InvalidInput("a tool event needs its tool call")
    return tool
