"""``colony-tasks hook EVENT [--agent claude|codex]``: read one JSON payload, act, reply.

Fails open: whatever goes wrong (bad input, missing or locked database, read-only home, a bug)
the hook exits 0 with nothing on stdout and appends one line to the hook log. It never exits 2,
which would block the user's prompt.
"""

from __future__ import annotations

# `_signal` is the C module under `signal`, which wraps its constants in three enums at
# import: ~3 M instructions on every hook for a timer set and cleared once.
import _signal
import json
import sys

from .. import backend, events, paths
from ..redact import utf8_safe
from ..store import open_local
from .handlers import EVENT_NAMES, HANDLERS, acts, detect_agent, fingerprinted

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_STDIN = 16 * 1024 * 1024
LARGE_PAYLOAD = 1024 * 1024
DEADLINE_SECONDS = 8
# SessionEnd has the smallest budget of all: Claude's plugin hooks share 1.5 s (3 s when
# installed in settings), Codex gives 1 s. An agent that kills the hook mid-way loses the
# log line too; so it waits on a locked store only briefly and gives up on its own, well
# inside the budget. A session it could not end stays open until `doctor --fix` (or the
# next run's reaping) ends it as silent; its claims expire at their TTL meanwhile.
SESSION_END_DEADLINE_SECONDS = 0.7
SESSION_END_BUSY_MS = 250
USAGE = "usage: colony-tasks hook EVENT [--agent claude|codex]"


class Deadline(Exception):
    pass


def _on_alarm(signum: int, frame: Any) -> None:
    raise Deadline("hook exceeded its deadline")


def deadline_for(event: str) -> float:
    return SESSION_END_DEADLINE_SECONDS if event == "session-end" else DEADLINE_SECONDS


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


def render(event: str, context: str | None, deny: str | None) -> dict[str, Any] | None:
    """The JSON both agents accept: only hookEventName, additionalContext, and a deny."""
    if event in ("stop", "stop-failure", "notification", "session-end") or not (context or deny):
        return None
    specific: dict[str, Any] = {"hookEventName": EVENT_NAMES[event]}
    if deny and event == "pre-tool-use":
        specific["permissionDecision"] = "deny"
        specific["permissionDecisionReason"] = deny
    elif context:
        specific["additionalContext"] = context
    return {"hookSpecificOutput": specific}


def utf8_safe_value(value: Any) -> Any:
    """Replace lone surrogates in every string (Node's JSON.stringify emits them for a broken
    emoji), so a prompt or edit is recorded instead of failing the hook."""
    if isinstance(value, str):
        return utf8_safe(value)
    if isinstance(value, dict):
        return {utf8_safe(str(k)): utf8_safe_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [utf8_safe_value(v) for v in value]
    return value


def handle(
    event: str, agent: str | None, raw: bytes, *, exiting: bool = False
) -> dict[str, Any] | None:
    """Act on one payload. ``exiting``: the process ends right after (``os._exit``), so the
    store is left for the exit to drop instead of closed: closing the last connection to a
    SQLite database checkpoints its WAL into the database file, a write and an fsync on every
    hook for what a later commit's automatic checkpoint does for many hooks at once. Every
    transaction has committed by then; nothing is lost."""
    handler = HANDLERS.get(event)
    if handler is None:
        raise ValueError(f"unknown hook event {event!r}; {USAGE}")
    payload = json.loads(raw.decode("utf-8", errors="replace")) if raw.strip() else None
    if not isinstance(payload, dict):
        raise ValueError(f"{event}: stdin is not a JSON object")
    payload = utf8_safe_value(payload)
    kind = agent if agent in ("claude", "codex") else detect_agent(payload, event)
    if not acts(event, payload):
        return None
    url = backend.store_url()
    if url:
        # Team mode: no driver in this process; the local relay applies the event. Imported
        # here: the socket client would cost every SQLite-mode hook ~2.5 ms.
        from ..team import client as relay_client

        reply = relay_client.handle(url, event, kind, payload) or {}
        return render(event, reply.get("context"), reply.get("deny"))
    if event == "session-end":
        store = open_local(busy_timeout_ms=SESSION_END_BUSY_MS)
    else:
        store = open_local()
    try:
        if fingerprinted(event, payload) and not events.first_time(store, event, raw):
            return None  # the same hook installed twice: the first one acts
        result = handler(store, payload, kind)
    finally:
        if not exiting:
            store.close()
    return render(event, result.context, result.deny)


def run(args: list[str], *, exiting: bool = False) -> int:
    """Entry point; always returns 0. ``exiting``: see :func:`handle`."""
    event, agent = parse_args(args)
    output: dict[str, Any] | None = None
    try:
        if hasattr(_signal, "setitimer"):
            _signal.signal(_signal.SIGALRM, _on_alarm)
            _signal.setitimer(_signal.ITIMER_REAL, deadline_for(event))
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
    finally:
        if hasattr(_signal, "setitimer"):
            _signal.setitimer(_signal.ITIMER_REAL, 0)
    if output is not None:
        try:
            sys.stdout.write(json.dumps(output, ensure_ascii=False))
            sys.stdout.flush()
        except BaseException as error:  # noqa: BLE001
            paths.log(f"hook {event} could not write output: {error}")
    return 0
