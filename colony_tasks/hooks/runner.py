"""``colony-tasks hook EVENT [--agent claude|codex]``: read one JSON payload, act, reply.

Fails open: whatever goes wrong (bad input, missing or locked database, read-only home, a bug)
the hook exits 0 with nothing on stdout and appends one line to the hook log. It never exits 2,
which would block the user's prompt.
"""

from __future__ import annotations

import json
import signal
import sys

from .. import backend, paths
from ..redact import utf8_safe
from ..store import open_default
from .handlers import EVENT_NAMES, HANDLERS
from .payload import detect_agent, tool_use

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_STDIN = 16 * 1024 * 1024
LARGE_PAYLOAD = 1024 * 1024
DEADLINE_SECONDS = 8
USAGE = "usage: colony-tasks hook EVENT [--agent claude|codex]"


class Deadline(Exception):
    pass


def _on_alarm(signum: int, frame: Any) -> None:
    raise Deadline(f"hook exceeded {DEADLINE_SECONDS}s")


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
    if event in ("stop", "session-end") or not (context or deny):
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


def _edits(payload: dict[str, Any]) -> bool:
    tool = tool_use(payload)
    return tool.action == "edit" and bool(tool.paths)


def handle(event: str, agent: str | None, raw: bytes) -> dict[str, Any] | None:
    handler = HANDLERS.get(event)
    if handler is None:
        raise ValueError(f"unknown hook event {event!r}; {USAGE}")
    payload = json.loads(raw.decode("utf-8", errors="replace")) if raw.strip() else None
    if not isinstance(payload, dict):
        raise ValueError(f"{event}: stdin is not a JSON object")
    payload = utf8_safe_value(payload)
    kind = agent if agent in ("claude", "codex") else detect_agent(payload, event)
    url = backend.store_url()
    if url:
        # Team mode: no driver in this process; the local relay applies the event. Imported
        # here: the socket client would cost every SQLite-mode hook ~2.5 ms.
        from ..relay import client as relay_client

        if event == "pre-tool-use" and not _edits(payload):
            return None  # nothing to check, nothing to record (as in the handler)
        reply = relay_client.handle(url, event, kind, payload) or {}
        return render(event, reply.get("context"), reply.get("deny"))
    store = open_default()
    try:
        result = handler(store, payload, kind)
    finally:
        store.close()
    return render(event, result.context, result.deny)


def run(args: list[str]) -> int:
    """Entry point; always returns 0."""
    event, agent = parse_args(args)
    output: dict[str, Any] | None = None
    try:
        if hasattr(signal, "SIGALRM"):
            signal.signal(signal.SIGALRM, _on_alarm)
            signal.alarm(DEADLINE_SECONDS)
        raw = sys.stdin.buffer.read(MAX_STDIN + 1) if sys.stdin else b""
        if len(raw) > MAX_STDIN:
            raise ValueError(f"{event}: payload larger than {MAX_STDIN} bytes ignored")
        if len(raw) > LARGE_PAYLOAD:
            paths.log(f"hook {event}: large payload ({len(raw)} bytes)")
        output = handle(event, agent, raw)
    except BaseException as error:  # noqa: BLE001 - hooks fail open, always
        paths.log(
            f"hook {event or '?'} failed: {type(error).__name__}: {backend.redact_url(str(error))}"
        )
        output = None
    finally:
        if hasattr(signal, "SIGALRM"):
            signal.alarm(0)
    if output is not None:
        try:
            sys.stdout.write(json.dumps(output, ensure_ascii=False))
            sys.stdout.flush()
        except BaseException as error:  # noqa: BLE001
            paths.log(f"hook {event} could not write output: {error}")
    return 0
