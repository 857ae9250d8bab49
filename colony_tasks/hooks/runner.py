"""``colony-tasks hook EVENT [--agent claude|codex|gemini|qwen]``: read one payload, have it applied, reply.

The hook is a small client. It turns the agent's payload into the core's plain event values
(:mod:`.payload`) and has them applied through its transport (:mod:`.transport`: this user's
relay, this process when no relay answers, or in team mode the outbox the relay applies),
which answers with what the agent should see; :mod:`.replies` renders that as the JSON the
agent accepts. ``COLONY_TASKS_RELAY=off`` makes every hook apply its event itself.

Fails open: whatever goes wrong (bad input, missing or locked database, read-only home, a bug)
the hook exits 0 with nothing on stdout and appends one line to the hook log. It never exits 2,
which would block the user's prompt.
"""

from __future__ import annotations

import json
import os
import sys

from ..base import backend, paths
from ..base.agent_events import AGENTS
from . import dialects
from . import transport as transports
from .payload import EVENT_NAMES, detect_agent, loads, request, text
from .replies import render

# The hook client imports no `typing` (~1.5 ms of every hook): see TYPE_CHECKING in docs/relay.md.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .transport import Transport

MAX_STDIN = 16 * 1024 * 1024
LARGE_PAYLOAD = 1024 * 1024
USAGE = f"usage: colony-tasks hook EVENT [--agent {'|'.join(AGENTS)}]"


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


def unnamed(raw: bytes) -> tuple[str, str]:
    """The event of a Claude-dialect payload run without arguments: Copilot CLI runs the
    exec-form hooks of ``.claude/settings.json`` as the bare ``command``, dropping ``args``."""
    payload = loads(raw.decode("utf-8", errors="replace")) if raw.strip() else None
    name = payload.get("hook_event_name") if isinstance(payload, dict) else None
    slugs = {claude: slug for slug, claude in EVENT_NAMES.items()}
    if not isinstance(name, str) or name not in slugs:
        raise ValueError(f"no hook event named and none in the payload; {USAGE}")
    return slugs[name], "claude"


def handle(
    event: str, agent: str | None, raw: bytes, *, transport: Transport | None = None
) -> dict[str, Any] | None:
    """Act on one payload; the agent's JSON output, or None. ``transport``: how the event is
    applied (:func:`colony_tasks.hooks.transport.choose` when not given)."""
    if event not in EVENT_NAMES:
        raise ValueError(f"unknown hook event {event!r}; {USAGE}")
    payload = loads(raw.decode("utf-8", errors="replace")) if raw.strip() else None
    if not isinstance(payload, dict):
        raise ValueError(f"{event}: stdin is not a JSON object")
    kind = agent if agent in AGENTS else detect_agent(payload, event)
    adapted = dialects.adapt(kind, payload, os.environ)
    if adapted is None:
        return None  # a copy of an event another hook of ours receives (hooks.dialects)
    kind, payload = adapted
    send = transport if transport is not None else transports.choose()
    reply = send(request(event, kind, payload, raw))
    return render(event, reply, kind, text(payload, "session_id"))


def run(args: list[str], *, exiting: bool = False) -> int:
    """Entry point; always returns 0. ``exiting``: the process ends right after
    (``os._exit``), so a store this process opens is left for the exit to drop."""
    event, agent = parse_args(args)
    output: dict[str, Any] | None = None
    try:
        raw = sys.stdin.buffer.read(MAX_STDIN + 1) if sys.stdin else b""
        if len(raw) > MAX_STDIN:
            raise ValueError(f"{event}: payload larger than {MAX_STDIN} bytes ignored")
        if len(raw) > LARGE_PAYLOAD:
            paths.log(f"hook {event}: large payload ({len(raw)} bytes)")
        if not event:
            event, agent = unnamed(raw)
        output = handle(event, agent, raw, transport=transports.choose(keep_store_open=exiting))
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
