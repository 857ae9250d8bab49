"""What each agent shows the model: the core's reply to an event rendered in the agent's JSON.

One adapter per agent, all in the same shape ``(event, reply) -> JSON or None``; the core's
reply is the same for every agent (``context``, ``deny``, at Stop ``block``):

- Claude Code and Codex read ``hookSpecificOutput`` (``additionalContext``, at PreToolUse a
  ``permissionDecision``), at Stop ``decision: block`` (Codex's stop gate) or a
  ``systemMessage`` for the human.
- Qwen Code reads Claude Code's form, but 0.24.4 drops a PreToolUse's ``additionalContext``
  when the tool is allowed (it keeps only the decision).
- Gemini CLI reads ``hookSpecificOutput.additionalContext`` at SessionStart, BeforeAgent and
  AfterTool, says a deny as ``{"decision": "deny", "reason": ...}`` and ignores a BeforeTool's
  context.
- Copilot CLI reads the same fields flat, at the top level (it ignores ``hookSpecificOutput``
  but on preToolUse); our OpenCode plugin reads what Copilot reads, and itself keeps a
  before-tool context for the tool's result.

What an agent would drop before a tool (a warning before an edit, a note before a read) is
carried to the session's next after-tool reply instead (:func:`carry`): the model reads it
with the tool's result, after the edit rather than before it. A deny is said before the tool
by every agent. Standard library only (the hook client).
"""

from __future__ import annotations

import os

from ..base import paths
from ..base.agent_events import COPILOT, EVENTS, GEMINI, OPENCODE, QWEN, event_name

# The hook client imports no `typing` (~1.5 ms of every hook): see TYPE_CHECKING in docs/relay.md.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: The agents that show the model nothing a hook says before a tool runs (unless it denies).
NO_CONTEXT_BEFORE_TOOL = (GEMINI, QWEN)
#: The events whose replies may carry what was held back before a tool.
AFTER_TOOL = ("post-tool-use", "post-tool-use-failure")
CARRY_FOLDER = "carry"
MAX_CARRIED = 64 * 1024


def claude(
    event: str, reply: dict[str, Any] | None, agent: str = "claude"
) -> dict[str, Any] | None:
    """The JSON Claude Code and Codex accept (and Qwen Code): only hookEventName,
    additionalContext, a deny, and at Stop a block (Codex's stop gate: the reason becomes the
    session's next prompt) or a ``systemMessage`` for the human (why it stopped with urgent
    items unread)."""
    if event == "stop" and reply and reply.get("block"):
        return {"decision": "block", "reason": str(reply["block"])}
    if event == "stop" and reply and reply.get("context"):
        return {"systemMessage": str(reply["context"])}  # shown to the human, not the model
    context = reply.get("context") if reply else None
    deny = reply.get("deny") if reply else None
    if EVENTS[event].quiet or not (context or deny):
        return None
    specific: dict[str, Any] = {"hookEventName": event_name(event, agent)}
    if deny and event == "pre-tool-use":
        specific["permissionDecision"] = "deny"
        specific["permissionDecisionReason"] = deny
    elif context:
        specific["additionalContext"] = context
    return {"hookSpecificOutput": specific}


def gemini(event: str, reply: dict[str, Any] | None, agent: str = GEMINI) -> dict[str, Any] | None:
    """The JSON Gemini CLI accepts: a deny as ``decision``/``reason`` (before a tool: the tool
    does not run and the model reads the reason; after a turn, AfterAgent: the reason is the
    next prompt, like Codex's stop gate), context in ``hookSpecificOutput``, a
    ``systemMessage`` for the human."""
    if event == "stop" and reply and reply.get("block"):
        return {"decision": "deny", "reason": str(reply["block"])}
    if event == "stop" and reply and reply.get("context"):
        return {"systemMessage": str(reply["context"])}
    context = reply.get("context") if reply else None
    deny = reply.get("deny") if reply else None
    if EVENTS[event].quiet or not (context or deny):
        return None
    if deny and event == "pre-tool-use":
        return {"decision": "deny", "reason": str(deny)}
    return {
        "hookSpecificOutput": {
            "hookEventName": event_name(event, agent),
            "additionalContext": context,
        }
    }


def flat(event: str, reply: dict[str, Any] | None, agent: str = COPILOT) -> dict[str, Any] | None:
    """The JSON Copilot CLI (and our OpenCode plugin) accepts: Claude Code's fields at the top
    level (``additionalContext``, ``permissionDecision``), the Stop forms as Claude's."""
    rendered = claude(event, reply, agent)
    if rendered is None or "hookSpecificOutput" not in rendered:
        return rendered
    specific = dict(rendered["hookSpecificOutput"])
    specific.pop("hookEventName", None)
    return specific or None


ADAPTERS = {GEMINI: gemini, COPILOT: flat, OPENCODE: flat}


def render(
    event: str, reply: dict[str, Any] | None, agent: str, session: str = ""
) -> dict[str, Any] | None:
    """The agent's JSON for the core's ``reply`` to ``event``. For an agent that drops context
    before a tool, such context is kept for ``session``'s next after-tool reply, and an
    after-tool reply says what was kept first."""
    if agent in NO_CONTEXT_BEFORE_TOOL and session:
        said = reply or {}
        if event == "pre-tool-use" and said.get("context") and not said.get("deny"):
            carry(session, str(said["context"]))
            return None
        if event in AFTER_TOOL:
            held = carried(session)
            if held:
                now = reply.get("context") if reply else None
                reply = {**(reply or {}), "context": f"{held}\n\n{now}" if now else held}
    adapter = ADAPTERS.get(agent, claude)
    return adapter(event, reply, agent)


def _carry_path(session: str) -> str:
    import hashlib  # only for a session that carries: OpenSSL costs every hook ~2.5 ms

    digest = hashlib.sha256(session.encode("utf-8", "surrogateescape")).hexdigest()[:24]
    return os.path.join(paths.home(), CARRY_FOLDER, digest)


def carry(session: str, context: str) -> None:
    """Keep ``context`` (said before a tool) for the session's next after-tool reply. A
    session's tool calls follow each other, so a file per session is enough; it stays in
    this user's private data folder, never in the repository."""
    path = _carry_path(session)
    folder = os.path.dirname(path)
    paths.ensure_home()
    paths.private_dir(folder)
    fd = paths.open_private(path, os.O_CREAT | os.O_WRONLY | os.O_APPEND)
    try:
        if os.fstat(fd).st_size < MAX_CARRIED:
            os.write(fd, (context.rstrip("\n") + "\n\0").encode("utf-8", "replace"))
    finally:
        os.close(fd)


def carried(session: str) -> str:
    """What was kept for the session (each piece once, in order), and forget it."""
    path = _carry_path(session)
    taken = f"{path}.{os.getpid()}"
    try:
        os.rename(path, taken)  # atomic: a concurrent carry starts a new file
    except OSError:
        return ""
    try:
        fd = paths.open_private(taken, os.O_RDONLY)
        with os.fdopen(fd, "rb") as handle:
            raw = handle.read(MAX_CARRIED * 2)
    except OSError:
        return ""
    finally:
        try:
            os.unlink(taken)
        except OSError:
            pass
    pieces = [p.strip("\n") for p in raw.decode("utf-8", "replace").split("\0")]
    return "\n".join(dict.fromkeys(p for p in pieces if p))
