"""The agent lifecycle, one function per event: plain values in, a :class:`Result` out.

Hooks parse the agent's payload into an :class:`Event` (and a :class:`ToolUse`), call one
function here and render the result; everything else — registering the session, recording
prompts, edits and commands, auto-claiming edited files, the edit policy (warn, or deny in
block mode), what is delivered when — is decided here, each in its own transactions.
Standard library only: every hook process imports this module. :mod:`.briefing` (with
rendering and time formatting behind it) is imported where there is something to show: most
tool hooks have nothing to say, and skip its import (~2 M instructions).
"""

from __future__ import annotations

import os

from . import claims as claims_mod
from . import delivery, presence, settings, wake
from . import sessions as sessions_mod
from .errors import InvalidInput
from .globs import is_glob, matches
from .models import Lane, Record, Session
from .store import Store

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


class Result(Record):
    """Text to inject into the agent's context, a reason to deny a tool call, or (at Stop) a
    reason to keep the session working (:func:`colony_tasks.wake.stop_gate`); at Stop,
    ``context`` is a notice for the human (it never reaches the model)."""

    context: str | None = None
    deny: str | None = None
    block: str | None = None


NOTHING = Result()
PROMPT_CHARS = 4000  # what is recorded of a prompt, and of a command
COMMAND_CHARS = 600
# An event sent again within this window is the same event (see
# colony_tasks.relay.wire.event_key): a hook installed twice, or a client whose relay died.
DUPLICATE_WINDOW_SECONDS = 60
# Every agent event, one use case each below. The quiet ones never give the agent text.
EVENTS = (
    "session-start",
    "user-prompt-submit",
    "pre-tool-use",
    "post-tool-use",
    "post-tool-use-failure",
    "subagent-start",
    "stop",
    "stop-failure",
    "notification",
    "session-end",
)
QUIET = frozenset({"stop", "stop-failure", "notification", "session-end"})
# The events whose second run would record or inject something twice (those that speak): they
# are applied exactly once (colony_tasks.relay.apply). The quiet ones are idempotent (a
# refresh, a state, an end), so they skip the idempotency key and its write.
DEDUPED = frozenset(EVENTS) - QUIET
# SessionStart sources after which the model has lost what it was told (compaction, /clear):
# a session the lane already knows is re-briefed (:func:`session_start`).
REBRIEF_SOURCES = frozenset({"compact", "clear"})


def _joined(parts: Sequence[str | None]) -> Result:
    text = "\n\n".join(p for p in parts if p)
    return Result(context=text or None)


def _session(store: Store, event: Event) -> Session:
    """The event's session, registered on first sight (hooks installed mid-session), moved
    when its folder changed, reopened after an end — only by the agent process that owns it
    (:func:`colony_tasks.sessions.check_owner`)."""
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


def _undeliverable(store: Store, me: Session) -> str | None:
    """What became of this session's directed items: woke an idle recipient (once each), or
    could not reach one that ended."""
    woke = wake.sender_news(store, me)
    if not store.has_undeliverable(me.id):
        return woke
    from . import briefing

    return _joined([woke, briefing.undeliverable(store.undelivered_for_sender(me.id))]).context


def session_start(store: Store, event: Event, source: str = "startup") -> Result:
    """Register (or refresh) the session, join its lane task, and brief it. A session new to
    the task is not sent the task's history again as news at its first prompt.

    After compaction or /clear (``source`` ``compact`` / ``clear``) a session already on its
    task has lost its briefing and whatever it was told since: it is re-briefed with the
    state it needs now and what is new since it was last told (the cursor then advances, as
    at a prompt), within :data:`colony_tasks.briefing.REBRIEF_CHARS`."""
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
    from . import briefing

    if source in REBRIEF_SOURCES and not joined.new_participant:
        me = joined.session
        groups = [
            delivery.updates_since(store, me, task.id, limit=briefing.MAX_ITEMS)
            for task in store.tasks_of_session(me.id)
        ]
        return Result(context=briefing.rebrief(store, joined, groups))
    return Result(context=briefing.briefing(store, joined))


def subagent_start(store: Store, event: Event, agent_type: str = "") -> Result:
    """A subagent starts inside the event's session (its parent): refresh the parent and give
    the subagent a short brief of its own (others' claims, its parent's handle, what to do
    before editing a held file), within :data:`colony_tasks.briefing.SUBAGENT_CHARS`. The
    subagent has no session: what it does is recorded as its parent's, naming it."""
    me = _session(store, event)
    from . import briefing

    return Result(context=briefing.subagent_brief(store, me, agent_type or "subagent"))


def prompt(store: Store, event: Event, text: str) -> Result:
    """Record the prompt and deliver what is new since the session's last turn."""
    from . import briefing

    me = _session(store, event)
    if text.strip():
        record_prompt(store, me, text)
    groups = [
        delivery.updates_since(store, me, task.id, limit=briefing.MAX_ITEMS)
        for task in store.tasks_of_session(me.id)
    ]
    return _joined([briefing.delta(store, me, groups), _undeliverable(store, me)])


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
    """Before an edit: warn about others' live claims and recent edits of its files; deny it
    instead when the user chose ``claims.mode = block`` and a live claim is in the way.
    Before a shell command: note the state of the files it could change (see
    :mod:`colony_tasks.shell_edits`), so the PostToolUse can tell which ones it did."""
    if not checks_before(tool):
        return NOTHING
    if tool.action == "shell":
        _note_shell_files(store, _session(store, event), tool, event.cwd)
        return NOTHING
    if tool.action == "read":
        return _before_read(store, event, tool)
    me = _session(store, event)
    rel = repo_paths(store, me, tool.paths, event.cwd)
    lane = store.get_lane(me.lane_id) if me.lane_id else None
    if not rel or lane is None:
        return NOTHING
    found = claims_mod.conflicts_for(store, me, rel, lane)
    if not found:
        return NOTHING
    from . import briefing

    warning = briefing.conflict_warning(found, after=False, now=store.now())
    if warning and any(c.live for c in found) and settings.get("claims", "mode") == "block":
        return Result(deny=warning + "\n(claims.mode is block: this edit was denied.)")
    return Result(context=warning)


def _before_read(store: Store, event: Event, tool: ToolUse) -> Result:
    """Before a read: one line, once per session and file, when another live session of the
    lane holds the file — who holds it and the latest decision that names it. Reads of files
    nobody else holds (nearly all) cost three reads of the store and write nothing."""
    me = store.get_session(event.session_id) if event.session_id else None
    lane = store.get_lane(me.lane_id) if me is not None and me.lane_id else None
    if me is None or lane is None:
        return NOTHING
    rel = repo_paths(store, me, tool.paths, event.cwd)
    if not rel:
        return NOTHING
    now = store.now()
    rows = store.live_claims_matching(lane.repo_id, rel, exclude_session=me.id)
    lines = []
    for path in rel:
        held = [
            r
            for r in rows
            if r["lane_id"] == lane.id
            and matches(r["pattern"], path, r["regex"])
            and not claims_mod.quiet(r, now)
        ]
        if held and store.first_read_note(me.id, path):
            from . import briefing

            decision = _decision_naming(store, me, path)
            lines.append(briefing.read_note(path, held[0], decision, now))
    return _joined(lines)


def _decision_naming(store: Store, me: Session, path: str) -> Any:
    """The latest decision of the session's lane task whose text names ``path`` (or its
    file name), or None."""
    task_id = lane_task_id(store, me)
    if task_id is None:
        return None
    name = path.rsplit("/", 1)[-1]
    for obs in reversed(store.timeline(task_id, kinds=["decision"], limit=50)):
        if path in obs.text or name in obs.text:
            return obs
    return None


def after_tool(store: Store, event: Event, tool: ToolUse, *, failed: bool = False) -> Result:
    """After a tool: record the edit (auto-claiming its files) or the command, warn at once
    about a collision, and deliver what is addressed to the session or urgent.

    ``failed``: the tool failed (Claude Code's PostToolUseFailure: a shell command that exited
    non-zero, an edit that did not apply). What a failed shell command changed on disk is
    recorded and warned about like any other command's; the command is recorded as failed."""
    me = _session(store, event)
    extra = _meta(event, failed)
    notes: list[str | None] = []
    if tool.action == "edit" and not failed:  # a failed Edit/Write changed nothing
        notes.append(_after_edit(store, me, tool, event.cwd, extra))
    elif tool.action == "shell" and tool.command.strip():
        record_command(store, me, tool.command, tool=tool.name, meta=extra)
        changed = _shell_changed(store, me, tool, event.cwd)
        if changed:
            notes.append(
                _after_edit(store, me, tool._replace(paths=tuple(changed)), event.cwd, extra)
            )
    delivered = delivery.deliver_directed(store, me)
    if delivered:
        from . import briefing

        notes.append(briefing.mid_turn(store, me, delivered))
    notes.append(_undeliverable(store, me))
    return _joined(notes)


def _meta(event: Event, failed: bool = False) -> dict[str, Any]:
    """What an observation notes about who acted and how: the subagent, a failed tool."""
    extra: dict[str, Any] = {}
    if event.subagent:
        extra["subagent"] = event.subagent
    if failed:
        extra["failed"] = True
    return extra


def _after_edit(
    store: Store,
    me: Session,
    tool: ToolUse,
    cwd: str | None,
    extra: dict[str, Any] | None = None,
) -> str | None:
    rel = repo_paths(store, me, tool.paths, cwd)
    lane = store.get_lane(me.lane_id) if me.lane_id else None
    if not rel or lane is None:
        return None
    with store.transaction():
        found = claims_mod.conflicts_for(store, me, rel, lane)
        record_edit(store, me, rel, tool=tool.name, meta=extra)
        claims_mod.grant(
            store,
            me,
            rel,
            lane,
            task_id=lane_task_id(store, me),
            ttl_minutes=claims_mod.AUTO_TTL_MINUTES,
            note=claims_mod.AUTO_NOTE,
        )
    live = [c for c in found if c.live]
    if not live:
        return None
    from . import briefing

    return briefing.conflict_warning(live, after=True, now=store.now())


def _watched(store: Store, me: Session, lane: Lane) -> list[str]:
    """The files a shell command of ``me`` could change that matter to the lane: literal paths
    claimed by any live session of the repository (others' and its own) and the files it
    edited lately. Absolute, under the lane's root; at most ``MAX_WATCHED``."""
    from . import shell_edits  # shell tools only: other events skip its import

    rel = [c["pattern"] for c in store.list_claims(repo_id=lane.repo_id)]
    rel += sorted(store.touched_paths(me.id, lane.repo_id, store.now() - delivery.TOUCHED_WINDOW))
    root = lane.root
    out = [os.path.join(root, p) for p in dict.fromkeys(rel) if p and not is_glob(p)]
    return out[: shell_edits.MAX_WATCHED]


def _note_shell_files(store: Store, me: Session, tool: ToolUse, cwd: str | None) -> None:
    from . import shell_edits  # shell tools only: other events skip its import

    lane = store.get_lane(me.lane_id) if me.lane_id else None
    if lane is None:
        return
    at = store.now()
    files = _watched(store, me, lane) + shell_edits.named_paths(tool.command, cwd or me.cwd)
    shell_edits.save_note(me.id, tool.use_id, shell_edits.snapshot(files), at=at)


def _shell_changed(store: Store, me: Session, tool: ToolUse, cwd: str | None) -> list[str]:
    """The files the shell command changed (absolute), like the paths of an Edit. A file
    another session recorded an edit of while the command ran is theirs, not this command's."""
    from . import shell_edits  # shell tools only: other events skip its import

    lane = store.get_lane(me.lane_id) if me.lane_id else None
    if lane is None:
        return []
    named = shell_edits.named_paths(tool.command, cwd or me.cwd)
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
            for rel in repo_paths(store, me, [path], cwd):
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
    items pending is kept working (:func:`colony_tasks.wake.stop_gate`; ``active``: this stop
    follows one that was held back); Claude Code is woken by its background wait instead."""
    me = _session(store, event)
    if event.agent != "codex" or event.subagent:
        return NOTHING
    gate = wake.stop_gate(store, me, active)
    return Result(context=gate.notice, block=gate.block)


def stop_failure(store: Store, event: Event, error: str = "") -> Result:
    """The agent's turn ended on a model API error (Claude Code's StopFailure: ``rate_limit``,
    ``overloaded``, ``billing_error``, ...): the session cannot act until its human resumes it.
    The lane sees it at once (a note in the lane task, and the session shown as cut off);
    its claims and taken items become stale now and takeable after
    :data:`colony_tasks.presence.CUT_OFF_GRACE` (the rule is in :mod:`colony_tasks.presence`).
    A subagent's failure is not its session's: nothing happens."""
    if event.subagent:
        return NOTHING
    me = _session(store, event)
    state = presence.cut_off(error)
    grace = presence.CUT_OFF_GRACE
    with store.transaction():
        store.set_waiting(me.id, state)
        store.cap_claims(me.id, store.now() + grace)
        store.add_observation(
            "note",
            f"{me.handle} was cut off ({state[len(presence.CUT_OFF) :]}) and cannot act until"
            f" its human resumes it. Its claims are stale now and expire in {grace // 60}m;"
            " its taken work items can then be taken with take_work(item_id=...).",
            session_id=me.id,
            task_id=lane_task_id(store, me),
            meta={"event": "cut-off", "error": state[len(presence.CUT_OFF) :]},
            max_chars=COMMAND_CHARS,
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


def lane_task_id(store: Store, session: Session) -> int | None:
    task = store.open_lane_task(session.lane_id) if session.lane_id else None
    return task.id if task else None


def record_prompt(store: Store, session: Session, prompt: str) -> int:
    return store.add_observation(
        "prompt",
        prompt,
        session_id=session.id,
        task_id=lane_task_id(store, session),
        max_chars=PROMPT_CHARS,
    )


def record_command(
    store: Store,
    session: Session,
    command: str,
    *,
    tool: str = "Bash",
    meta: dict[str, Any] | None = None,
) -> int:
    return store.add_observation(
        "command",
        command,
        session_id=session.id,
        task_id=lane_task_id(store, session),
        meta={"tool": tool, **(meta or {})},
        max_chars=COMMAND_CHARS,
    )


def repo_paths(store: Store, session: Session, paths: Sequence[str], cwd: str | None) -> list[str]:
    """Repo-relative forms of ``paths``; paths outside the repository are dropped."""
    lane = store.get_lane(session.lane_id) if session.lane_id else None
    if lane is None:
        return []
    found = []
    for path in paths:
        try:
            found.append(claims_mod.normalize(path, lane=lane, cwd=cwd or session.cwd))
        except InvalidInput:
            continue
    return list(dict.fromkeys(found))


def record_edit(
    store: Store,
    session: Session,
    rel_paths: Sequence[str],
    *,
    tool: str,
    meta: dict[str, Any] | None = None,
) -> int:
    """One ``edit`` observation listing the touched repo-relative paths."""
    lane = store.get_lane(session.lane_id) if session.lane_id else None
    by = f", subagent {meta['subagent']}" if meta and meta.get("subagent") else ""
    text = f"{', '.join(rel_paths)} ({tool}{by})"
    return store.add_observation(
        "edit",
        text,
        session_id=session.id,
        task_id=lane_task_id(store, session),
        meta={"tool": tool, **(meta or {})},
        paths=rel_paths,
        repo_id=lane.repo_id if lane else None,
        max_chars=COMMAND_CHARS,
    )
