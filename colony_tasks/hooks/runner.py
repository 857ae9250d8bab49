"""``colony-tasks hook EVENT [--agent claude|codex]``: read one payload, have it applied, reply.

The hook is a small client. It turns the agent's payload into the core's plain event values
(:mod:`.payload`) and sends them to this user's relay (:mod:`colony_tasks.relay`), which
applies them and answers with what the agent should see; this module renders that as the JSON
both agents accept. When no relay answers in time the hook applies the event itself
(:func:`colony_tasks.relay.apply.apply_here`) and, if none was running, starts one for the
next hook; in team mode it spools the event for the relay instead (:mod:`colony_tasks.hooks.spool`).
``COLONY_TASKS_RELAY=off`` makes every hook apply its event itself.

Fails open: whatever goes wrong (bad input, missing or locked database, read-only home, a bug)
the hook exits 0 with nothing on stdout and appends one line to the hook log. It never exits 2,
which would block the user's prompt.
"""

from __future__ import annotations

import json
import os
import sys

from ..base import backend, paths
from ..relay import wire
from .payload import EVENT_NAMES, detect_agent, loads, request

# The hook client imports no `typing` (~1.5 ms of every hook): see TYPE_CHECKING in docs/relay.md.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_STDIN = 16 * 1024 * 1024
LARGE_PAYLOAD = 1024 * 1024
#: How long a hook may take in all (it applies its event itself past the relay's wait).
DEADLINE_SECONDS = 8.0
#: How long a hook waits for its relay's reply before applying the event itself (the relay's
#: own work for an event is a few milliseconds; a busy store can make it wait).
RELAY_WAIT = float(os.environ.get("COLONY_TASKS_RELAY_WAIT", "3"))
# SessionEnd has the smallest budget of all: Claude's plugin hooks share 1.5 s (3 s when
# installed in settings), Codex gives 1 s. An agent that kills the hook mid-way loses the
# log line too; so it waits on its relay and then on a locked store only briefly and gives up
# on its own, well inside the budget. A session it could not end stays open until `doctor
# --fix` (or the next run's reaping) ends it as silent; its claims expire at their TTL.
SESSION_END_RELAY_WAIT = 0.3
SESSION_END_DEADLINE_SECONDS = 0.5
SESSION_END_BUSY_MS = 250
USAGE = "usage: colony-tasks hook EVENT [--agent claude|codex]"


class Deadline(Exception):
    pass


def _on_alarm(signum: int, frame: Any) -> None:
    raise Deadline("hook exceeded its deadline")


def parse_args(args: list[str]) -> tuple[str, str | None]:
    event, agent = "", None
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        if arg == "--agent" and rest:
            agent = rest.pop(0)
        elif arg.startswith("--agent="):
            agent = arg.split("=", 1)[1]
        elif not event:
            event = arg
    return event, agent


def render(event: str, reply: dict[str, Any] | None) -> dict[str, Any] | None:
    """The JSON both agents accept: only hookEventName, additionalContext, a deny, and at
    Stop a block (Codex's stop gate: the reason becomes the session's next prompt) or a
    ``systemMessage`` for the human (why it stopped with urgent items unread)."""
    if event == "stop" and reply and reply.get("block"):
        return {"decision": "block", "reason": str(reply["block"])}
    if event == "stop" and reply and reply.get("context"):
        return {"systemMessage": str(reply["context"])}  # shown to the human, not the model
    context = reply.get("context") if reply else None
    deny = reply.get("deny") if reply else None
    if event in ("stop", "stop-failure", "notification", "session-end") or not (context or deny):
        return None
    specific: dict[str, Any] = {"hookEventName": EVENT_NAMES[event]}
    if deny and event == "pre-tool-use":
        specific["permissionDecision"] = "deny"
        specific["permissionDecisionReason"] = deny
    elif context:
        specific["additionalContext"] = context
    return {"hookSpecificOutput": specific}


def apply_in_process(event: str, req: dict[str, Any], *, exiting: bool) -> dict[str, Any]:
    """Apply the event in this process, within the hook's deadline (a timer that interrupts
    a store wait or a bug's loop; the event's transaction then rolls back)."""
    import signal  # only here: a hook that reaches its relay never needs a timer

    from ..relay.apply import apply_here

    session_end = event == "session-end"
    timer = hasattr(signal, "setitimer")
    if timer:
        signal.signal(signal.SIGALRM, _on_alarm)
        limit = SESSION_END_DEADLINE_SECONDS if session_end else DEADLINE_SECONDS
        signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        return apply_here(
            req, busy_timeout_ms=SESSION_END_BUSY_MS if session_end else None, close=not exiting
        )
    finally:
        if timer:
            signal.setitimer(signal.ITIMER_REAL, 0)


def deliver(event: str, req: dict[str, Any], *, exiting: bool) -> dict[str, Any] | None:
    """Have the event applied: by the relay, else here (or spooled, in team mode)."""
    url = backend.store_url()
    if url:
        # Team mode: no database driver in this process; the relay applies the spooled event.
        from . import spool as team_client

        return team_client.handle(url, req)
    start = False
    if wire.enabled():
        wait = SESSION_END_RELAY_WAIT if event == "session-end" else RELAY_WAIT
        try:
            reply = wire.ask(wire.socket_path(wire.LOCAL_KEY), req, wait)
        except wire.NoRelay:
            reply, start = None, True
        if reply is not None and not reply.get("retire"):
            return reply if "error" not in reply else None  # the relay logged why
    try:
        return apply_in_process(event, req, exiting=exiting)
    finally:
        if start:
            # For the next hook; started once this one's work is done, so that the relay's
            # start does not compete with it for the machine.
            wire.spawn()


def handle(
    event: str, agent: str | None, raw: bytes, *, exiting: bool = False
) -> dict[str, Any] | None:
    """Act on one payload; the agent's JSON output, or None. ``exiting``: the process ends
    right after (``os._exit``), so an in-process store is left for the exit to drop."""
    if event not in EVENT_NAMES:
        raise ValueError(f"unknown hook event {event!r}; {USAGE}")
    payload = loads(raw.decode("utf-8", errors="replace")) if raw.strip() else None
    if not isinstance(payload, dict):
        raise ValueError(f"{event}: stdin is not a JSON object")
    kind = agent if agent in ("claude", "codex") else detect_agent(payload, event)
    return render(event, deliver(event, request(event, kind, payload, raw), exiting=exiting))


def run(args: list[str], *, exiting: bool = False) -> int:
    """Entry point; always returns 0. ``exiting``: see :func:`handle`."""
    event, agent = parse_args(args)
    output: dict[str, Any] | None = None
    try:
        raw = sys.stdin.buffer.read(MAX_STDIN + 1) if sys.stdin else b""
        if len(raw) > MAX_STDIN:
            raise ValueError(f"{event}: payload larger than {MAX_STDIN} bytes ignored")
        if len(raw) > LARGE_PAYLOAD:
            paths.log(f"hook {event}: large payload ({len(raw)} bytes)")
        output = handle(event, agent, raw, exiting=exiting)
    except BaseException as error:  # noqa: BLE001 - hooks fail open, always
        paths.log(
            f"hook {event or '?'} failed: {type(error).__name__}: {backend.redact_url(str(error))}"
        )
        output = None
    if output is not None:
        try:
            sys.stdout.write(json.dumps(output, ensure_ascii=False))
            sys.stdout.flush()
        except BaseException as error:  # noqa: BLE001
            paths.log(f"hook {event} could not write output: {error}")
    return 0
