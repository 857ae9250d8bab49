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

import os

from ..base import settings
from ..base.agent_events import AGENT_EVENTS
from ..base.errors import InvalidInput
from ..base.globs import is_glob, matches
from ..base.models import Lane, Observation, Record, Session
from ..domain import claims as claims_mod
from ..domain import delivery, presence, shell_edits, wake
from ..domain import sessions as sessions_mod
from ..domain.claims import PathConflict
from ..domain.delivery import Updates
from ..domain.sessions import Joined
from ..store import Store

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any


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
    ``other``; ``use_id`` pairs a PreToolUse with its PostToolUse."""

    name: str
    action: str
    paths: tuple[str, ...] = ()
    command: str = ""
    use_id: str = ""


class Here(Record):
    """An event's context, resolved once: the session (registered or refreshed), its lane
    (None outside any repository's lane), the lane task's id and the folder the agent's paths
    are relative to."""

    session: Session
    lane: Lane | None
    task_id: int | None
    cwd: str


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
    claims and edits of the files an edit touches (``after``: the edit was made; ``deny``:
    block mode refuses it); ``delivered`` what was addressed to the session mid-turn;
    ``undeliverable`` what it sent that can no longer reach its recipient, ``woken`` which of
    its items woke an idle recipient or kept it from stopping (each told once); ``gate`` what
    Codex's Stop gate decided (:func:`colony_tasks.domain.wake.stop_gate`)."""

    session: Session | None = None
    joined: Joined | None = None
    rebrief: bool = False
    subagent: str | None = None
    updates: tuple[Updates, ...] = ()
    conflicts: tuple[PathConflict, ...] = ()
    after: bool = False
    deny: bool = False
    read_notes: tuple[ReadNote, ...] = ()
    delivered: tuple[Observation, ...] = ()
    undeliverable: tuple[dict[str, Any], ...] = ()
    woken: tuple[dict[str, Any], ...] = ()
    gate: wake.Gate | None = None


NOTHING = Result()
PROMPT_CHARS = 4000  # what is recorded of a prompt, and of a command
COMMAND_CHARS = 600
# An event sent again within this window is the same event (see
# colony_tasks.relay.wire.event_key): a hook installed twice, or a client whose relay died.
DUPLICATE_WINDOW_SECONDS = 60
# Every agent event (colony_tasks.base.agent_events), one use case each below. The quiet ones never
# give the agent text.
EVENTS = tuple(AGENT_EVENTS)
QUIET = frozenset({"stop", "stop-failure", "notification", "session-end"})
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
    session = store.get_session(event.session_id) if event.session_id else None
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


def here_of(store: Store, session: Session, cwd: str | None = None) -> Here:
    """The context of an act of ``session``: its lane and lane task, in ``cwd`` (its own
    folder when not given)."""
    lane = store.get_lane(session.lane_id) if session.lane_id else None
    task = store.open_lane_task(lane.id) if lane is not None else None
    return Here(session, lane, task.id if task else None, cwd or session.cwd)


def _here(store: Store, event: Event) -> Here:
    """The event's context, its session registered or refreshed (:func:`_session`)."""
    return here_of(store, _session(store, event), event.cwd)


def _undeliverable(store: Store, me: Session) -> tuple[dict[str, Any], ...]:
    if not store.has_undeliverable(me.id):
        return ()
    return tuple(store.undelivered_for_sender(me.id))


def _news(store: Store, me: Session) -> tuple[Updates, ...]:
    """What is new for ``me`` in each of its tasks since it was last told (advances its
    cursors)."""
    return tuple(
        delivery.updates_since(store, me, task.id, limit=delivery.NEWS_ITEMS)
        for task in store.tasks_of_session(me.id)
    )


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
        return Result(me, joined, rebrief=True, updates=_news(store, me))
    return Result(me, joined)


def subagent_start(store: Store, event: Event, agent_type: str = "") -> Result:
    """A subagent starts inside the event's session (its parent): refresh the parent and give
    the subagent a short brief of its own (others' claims, its parent's handle, what to do
    before editing a held file). The subagent has no session: what it does is recorded as
    its parent's, naming it."""
    return Result(_session(store, event), subagent=agent_type or "subagent")


def prompt(store: Store, event: Event, text: str) -> Result:
    """Record the prompt and deliver what is new since the session's last turn."""
    here = _here(store, event)
    me = here.session
    if text.strip():
        _record(store, here, "prompt", text, max_chars=PROMPT_CHARS)
    return Result(
        me,
        updates=_news(store, me),
        undeliverable=_undeliverable(store, me),
        woken=wake.woken(store, me),
    )


def checks_before(tool: ToolUse) -> bool:
    """Whether :func:`before_tool` has anything to do for this tool (an edit with paths, a
    shell command); hooks ask first, so other tools never open the store."""
    return (tool.action == "shell" and bool(tool.command.strip())) or (
        tool.action in ("edit", "read") and bool(tool.paths)
    )


def fingerprinted(event: str, tool: ToolUse | None = None) -> bool:
    """Whether the event is applied exactly once (its idempotency key claimed, see
    :mod:`colony_tasks.relay.apply`): a read is not (it is the most frequent hook and says a
    thing once per file anyway)."""
    return event in DEDUPED and not (tool is not None and tool.action == "read")


def before_tool(store: Store, event: Event, tool: ToolUse) -> Result:
    """Before an edit: others' live claims and recent edits of its files; denied instead when
    the user chose ``claims.mode = block`` and a live claim is in the way. Before a read: who
    holds the file (:func:`_before_read`). Before a shell command: note the state of the
    files it could change (see :mod:`colony_tasks.domain.shell_edits`), so the PostToolUse can tell
    which ones it did."""
    if not checks_before(tool):
        return NOTHING
    if tool.action == "read":
        return _before_read(store, event, tool)
    here = _here(store, event)
    if tool.action == "shell":
        _note_shell_files(store, here, tool)
        return NOTHING
    rel = repo_paths_here(here, tool.paths)
    if not rel or here.lane is None:
        return NOTHING
    found = tuple(claims_mod.conflicts_for(store, here.session, rel, here.lane))
    if not found:
        return NOTHING
    deny = any(c.live for c in found) and settings.get("claims", "mode") == "block"
    return Result(here.session, conflicts=found, deny=deny)


def _before_read(store: Store, event: Event, tool: ToolUse) -> Result:
    """Before a read: once per session and file, when another live session of the lane holds
    the file — who holds it and the latest decision that names it. Reads of files nobody else
    holds (nearly all) cost a few reads of the store and write nothing (the session is not
    refreshed)."""
    me = store.get_session(event.session_id) if event.session_id else None
    if me is None or not me.lane_id:
        return NOTHING
    here = here_of(store, me, event.cwd)
    rel = repo_paths_here(here, tool.paths)
    if not rel or here.lane is None:
        return NOTHING
    now = store.now()
    rows = store.live_claims_matching(here.lane.repo_id, rel, exclude_session=me.id)
    notes = []
    for path in rel:
        held = [
            r
            for r in rows
            if r["lane_id"] == here.lane.id
            and matches(r["pattern"], path, r["regex"])
            and not claims_mod.quiet(r, now)
        ]
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
    extra = _meta(event, failed)
    conflicts: tuple[PathConflict, ...] = ()
    if tool.action == "edit" and not failed:  # a failed Edit/Write changed nothing
        conflicts = _after_edit(store, here, tool, extra)
    elif tool.action == "shell" and tool.command.strip():
        _record(store, here, "command", tool.command, meta={"tool": tool.name, **extra})
        changed = _shell_changed(store, here, tool)
        if changed:
            conflicts = _after_edit(store, here, tool._replace(paths=tuple(changed)), extra)
    return Result(
        me,
        conflicts=conflicts,
        after=True,
        delivered=tuple(delivery.deliver_directed(store, me)),
        undeliverable=_undeliverable(store, me),
        woken=wake.woken(store, me),
    )


def _meta(event: Event, failed: bool = False) -> dict[str, Any]:
    """What an observation notes about who acted and how: the subagent, a failed tool."""
    extra: dict[str, Any] = {}
    if event.subagent:
        extra["subagent"] = event.subagent
    if failed:
        extra["failed"] = True
    return extra


def _after_edit(
    store: Store, here: Here, tool: ToolUse, extra: dict[str, Any]
) -> tuple[PathConflict, ...]:
    """Record the edit of ``tool.paths`` and claim them; the live collisions it made."""
    rel = repo_paths_here(here, tool.paths)
    if not rel or here.lane is None:
        return ()
    with store.transaction():
        found = claims_mod.conflicts_for(store, here.session, rel, here.lane)
        _record_edit(store, here, rel, tool.name, extra)
        claims_mod.grant(
            store,
            here.session,
            rel,
            here.lane,
            task_id=here.task_id,
            ttl_minutes=claims_mod.AUTO_TTL_MINUTES,
            note=claims_mod.AUTO_NOTE,
            auto=True,
        )
    return tuple(c for c in found if c.live)


def _watched(store: Store, here: Here) -> list[str]:
    """The files a shell command could change that matter to the lane: literal paths claimed
    by any live session of the repository (others' and its own) and the files the session
    edited lately. Absolute, under the lane's root; at most ``MAX_WATCHED``."""
    if here.lane is None:
        return []
    repo_id = here.lane.repo_id
    rel = [c["pattern"] for c in store.list_claims(repo_id=repo_id)]
    since = store.now() - delivery.TOUCHED_WINDOW
    rel += sorted(store.touched_paths(here.session.id, repo_id, since))
    root = here.lane.root
    out = [os.path.join(root, p) for p in dict.fromkeys(rel) if p and not is_glob(p)]
    return out[: shell_edits.MAX_WATCHED]


def _note_shell_files(store: Store, here: Here, tool: ToolUse) -> None:
    if here.lane is None:
        return
    at = store.now()
    files = _watched(store, here) + shell_edits.named_paths(tool.command, here.cwd)
    shell_edits.save_note(here.session.id, tool.use_id, shell_edits.snapshot(files), at=at)


def _shell_changed(store: Store, here: Here, tool: ToolUse) -> list[str]:
    """The files the shell command changed (absolute), like the paths of an Edit. A file
    another session recorded an edit of while the command ran is theirs, not this command's."""
    lane, me = here.lane, here.session
    if lane is None:
        return []
    named = shell_edits.named_paths(tool.command, here.cwd)
    note = shell_edits.take_note(me.id, tool.use_id)
    if note is not None:
        since, before = note
        found = shell_edits.changed(before, named, since)
    else:
        since = store.now() - shell_edits.UNNOTED_WINDOW
        found = shell_edits.recently_written(named, since)
    for at, earlier in shell_edits.take_unfinished(me.id, tool.use_id):
        since = min(since, at)
        found += shell_edits.changed(earlier, [], at)
    by_rel: dict[str, str] = {}
    for path in found:
        if _inside(path, lane.root):
            for rel in repo_paths_here(here, [path]):
                by_rel.setdefault(rel, path)
    if not by_rel:
        return []
    # Another session's edit recorded after the file was last written is the one that wrote
    # it (a hook records an edit after making it), not this command.
    edits = store.recent_edits(lane.repo_id, list(by_rel), since, exclude_session=me.id)
    last_theirs: dict[str, float] = {}
    for e in edits:
        last_theirs[e["path"]] = max(last_theirs.get(e["path"], 0.0), e["created_at"])
    out = []
    for rel, path in by_rel.items():
        state = shell_edits.stat(path)
        written = state[0] / 1e9 if state else store.now()
        if last_theirs.get(rel, -1.0) < written:
            out.append(path)
    return out


def _inside(path: str, root: str) -> bool:
    real = os.path.realpath(path)
    top = os.path.realpath(root)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def stop(store: Store, event: Event, active: bool = False) -> Result:
    """The agent finished a turn: the session is still alive. A Codex session with urgent
    items pending is kept working (:func:`colony_tasks.domain.wake.stop_gate`; ``active``: this stop
    follows one that was held back); Claude Code is woken by its background wait instead."""
    me = _session(store, event)
    if event.agent != "codex" or event.subagent:
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
        _record(
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
    return kind in presence.WAITING_NOTIFICATIONS


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


# -- recording what agents do (prompts, edits, commands) as observations of their lane task --


def _record(
    store: Store,
    here: Here,
    kind: str,
    text: str,
    *,
    meta: dict[str, Any] | None = None,
    paths: Sequence[str] = (),
    max_chars: int = COMMAND_CHARS,
) -> int:
    return store.add_observation(
        kind,
        text,
        session_id=here.session.id,
        task_id=here.task_id,
        meta=meta,
        paths=paths,
        repo_id=here.lane.repo_id if here.lane is not None and paths else None,
        max_chars=max_chars,
    )


def _record_edit(
    store: Store, here: Here, rel_paths: Sequence[str], tool: str, meta: dict[str, Any]
) -> int:
    """One ``edit`` observation listing the touched repo-relative paths."""
    by = f", subagent {meta['subagent']}" if meta.get("subagent") else ""
    text = f"{', '.join(rel_paths)} ({tool}{by})"
    return _record(store, here, "edit", text, meta={"tool": tool, **meta}, paths=rel_paths)


def repo_paths_here(here: Here, paths: Sequence[str]) -> list[str]:
    """Repo-relative forms of ``paths`` (relative to the event's folder); paths outside the
    repository are dropped."""
    if here.lane is None:
        return []
    found = []
    for path in paths:
        try:
            found.append(claims_mod.normalize(path, lane=here.lane, cwd=here.cwd))
        except InvalidInput:
            continue
    return list(dict.fromkeys(found))


# What a session did, recorded outside a hook (tests, fixtures, benchmarks): the same records.


def lane_task_id(store: Store, session: Session) -> int | None:
    return here_of(store, session).task_id


def record_prompt(store: Store, session: Session, prompt: str) -> int:
    here = here_of(store, session)
    return _record(store, here, "prompt", prompt, max_chars=PROMPT_CHARS)


def record_command(
    store: Store,
    session: Session,
    command: str,
    *,
    tool: str = "Bash",
    meta: dict[str, Any] | None = None,
) -> int:
    here = here_of(store, session)
    return _record(store, here, "command", command, meta={"tool": tool, **(meta or {})})


def record_edit(
    store: Store,
    session: Session,
    rel_paths: Sequence[str],
    *,
    tool: str,
    meta: dict[str, Any] | None = None,
) -> int:
    return _record_edit(store, here_of(store, session), rel_paths, tool, meta or {})


def repo_paths(store: Store, session: Session, paths: Sequence[str], cwd: str | None) -> list[str]:
    return repo_paths_here(here_of(store, session, cwd), paths)
