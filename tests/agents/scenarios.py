"""Two real CLIs on one lane, Claude Code and another client: the scenarios their tests share.

Each scenario runs both sessions to their end against scripted model servers and hands back
the runs and the servers (whose recorded requests are what each model saw); the tests assert.
A client is described by :class:`Client`: its scripted server, how its model edits a line, and
the names of its shell and ``ask_question`` tools.

- :func:`other_edits_after_claude`: Claude changes ``prices.py`` line 1 and stays in its turn;
  the client then changes the same line.
- :func:`claude_edits_after_other`: the same, the other way round.
- :func:`question_from_claude` / :func:`question_to_claude`: one session waits in a tool call
  while the other asks it :data:`QUESTION` through our MCP server.

:func:`chars_per_turn` is the capability table's measure of what colony-tasks costs a model,
taken on one scenario for every client: the edit that meets Claude's change.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .gemini_server import GeminiServer
from .model_server import (
    ChatCompletionsServer,
    MessagesServer,
    ResponsesServer,
    ScriptedServer,
    Step,
    call,
    patch,
    say,
)
from .sandbox import Run, Sandbox

QUESTION = "Which port does the billing API listen on?"


@dataclass(frozen=True)
class Client:
    """A client beside Claude Code: ``edit(path, old, new)`` is its model's call that changes
    ``old`` to ``new`` in ``path`` (a file at the repository root), ``edit_tool`` that tool's
    name as the timeline shows it."""

    agent: str
    label: str
    server: type[ScriptedServer]
    edit: Callable[[Path, str, str], Step]
    edit_tool: str
    shell_tool: str = ""
    ask_tool: str = ""
    prepare: Callable[[Path], list[Step]] = lambda path: []  # steps before its edit


def _codex_patch(path: Path, old: str, new: str) -> Step:
    return patch(
        f"*** Begin Patch\n*** Update File: {path.name}\n@@\n-{old}\n+{new}\n*** End Patch\n"
    )


CODEX = Client("codex", "Codex", ResponsesServer, _codex_patch, "apply_patch")
COPILOT = Client(
    "copilot",
    "Copilot",
    ChatCompletionsServer,
    lambda path, old, new: call("edit", path=str(path), old_str=old, new_str=new),
    "edit",
    shell_tool="bash",
    ask_tool="colony-tasks-ask_question",
)
OPENCODE = Client(
    "opencode",
    "OpenCode",
    ChatCompletionsServer,
    lambda path, old, new: call("edit", filePath=str(path), oldString=old, newString=new),
    "edit",
    shell_tool="bash",
    ask_tool="colony-tasks_ask_question",
)

GEMINI = Client(
    "gemini",
    "Gemini CLI",
    GeminiServer,
    lambda path, old, new: call(
        "replace", file_path=path.name, old_string=old, new_string=new, instruction="edit"
    ),
    "replace",
    shell_tool="run_shell_command",
    ask_tool="mcp_colony-tasks_ask_question",
)
QWEN = Client(
    "qwen",
    "Qwen Code",
    ChatCompletionsServer,
    lambda path, old, new: call("edit", file_path=str(path), old_string=old, new_string=new),
    "edit",
    shell_tool="run_shell_command",
    ask_tool="mcp__colony-tasks__ask_question",
    prepare=lambda path: [call("read_file", file_path=str(path))],  # edit refuses unread files
)

# A colony-tasks text in a request: from our name as our texts start ("colony-tasks: ",
# "colony-tasks (re-brief...", "colony-tasks — chain...", not a tool or server name) to a blank
# line, an XML closing tag the client wraps it in, or the end of the string it is in.
_COLONY_TEXT = re.compile(
    r"(?<![\w-])colony-tasks(?=:| \(| —).*?(?=\n\s*\n|\s*</[\w:.-]+>|\Z)", re.S
)


def _strings(body: Any) -> list[str]:
    if isinstance(body, str):
        return [body]
    if isinstance(body, dict):
        return [s for key, value in body.items() if key != "tools" for s in _strings(value)]
    if isinstance(body, list):
        return [s for value in body for s in _strings(value)]
    return []


def chars_per_turn(requests: list[dict[str, Any]]) -> int:
    """Characters of colony-tasks context a session's model received per model turn: each
    colony-tasks text counted in the request that first carried it (a request resends the
    history), summed over ``requests`` (the session's main-loop requests) and divided by their
    number."""
    seen: set[str] = set()
    total = 0
    for body in requests:
        strings = _strings(body)
        for text in strings:
            if text not in seen:
                total += sum(len(m.group(0)) for m in _COLONY_TEXT.finditer(text))
        seen.update(strings)
    return round(total / len(requests)) if requests else 0


@dataclass
class Pair:
    """Both sessions, ended, and their model servers. ``held`` is the handle of the session
    that edited first, read while it was held live."""

    claude: Run
    other: Run
    claude_model: ScriptedServer
    other_model: ScriptedServer
    held: str = ""


def warning(file: str, line: str, handle: str) -> str:
    """The collision warning about ``handle``'s change to ``file`` at ``line``."""
    return (
        f"colony-tasks: {file} {line} meets {handle}'s change (main): git will conflict;"
        f' ask_question(to="{handle}") first.'
    )


def _start(sandbox: Sandbox, client: Client, model: ScriptedServer, prompt: str) -> Run:
    runner: Callable[[ScriptedServer, str], Run] = getattr(sandbox, client.agent)
    return runner(model, prompt)


def _lane(sandbox: Sandbox, client: Client, name: str, text: str) -> Path:
    target = sandbox.write(name, text)
    sandbox.commit()
    sandbox.install("claude")
    sandbox.install(client.agent)
    return target


def _claude_edit(target: Path, old: str, new: str) -> Step:
    return call("Edit", file_path=str(target), old_string=old, new_string=new)


def other_edits_after_claude(sandbox: Sandbox, client: Client) -> Pair:
    """Claude sets TAX 0.19 -> 0.2 and is held; the client sets 0.2 -> 0.21 and ends."""
    target = _lane(sandbox, client, "prices.py", "TAX = 0.19\n")
    release_claude = threading.Event()
    claude_model = MessagesServer(
        [
            _claude_edit(target, "TAX = 0.19", "TAX = 0.2"),
            say("Tax updated.", gate=release_claude),
        ]
    )
    other_model = client.server(
        [*client.prepare(target), client.edit(target, "TAX = 0.2", "TAX = 0.21"), say("Edited.")]
    )
    with claude_model, other_model:
        claude = sandbox.claude(claude_model, "Set the tax rate to 0.2")
        claude_model.script[1].wait_reached("Claude's request after its Edit")
        held = sandbox.session("claude")["handle"]
        other = _start(sandbox, client, other_model, "Set the tax rate to 0.21").finish()
        release_claude.set()
        claude.finish()
    return Pair(claude, other, claude_model, other_model, held)


def claude_edits_after_other(sandbox: Sandbox, client: Client) -> Pair:
    """The client sets TAX 0.19 -> 0.2 and is held; Claude sets 0.2 -> 0.21 and ends."""
    target = _lane(sandbox, client, "prices.py", "TAX = 0.19\n")
    release_other = threading.Event()
    other_model = client.server(
        [
            client.edit(target, "TAX = 0.19", "TAX = 0.2"),
            say("Edited.", gate=release_other),
        ]
    )
    claude_model = MessagesServer(
        [_claude_edit(target, "TAX = 0.2", "TAX = 0.21"), say("Tax updated.")]
    )
    with claude_model, other_model:
        other = _start(sandbox, client, other_model, "Set the tax rate to 0.2")
        other_model.script[1].wait_reached(f"{client.label}'s request after its edit")
        held = sandbox.session(client.agent)["handle"]
        claude = sandbox.claude(claude_model, "Set the tax rate to 0.21").finish()
        release_other.set()
        other.finish()
    return Pair(claude, other, claude_model, other_model, held)


def _wait(tool: str, gate: threading.Event) -> Step:
    return Step(tool=tool, args={"command": "true", "description": "Wait"}, gate=gate)


def _ask(sandbox: Sandbox, tool: str, to: str) -> Step:
    return Step(tool=tool, args=lambda: {"question": QUESTION, "to": sandbox.session(to)["handle"]})


def question_from_claude(sandbox: Sandbox, client: Client) -> Pair:
    """The client waits in a shell call; meanwhile Claude asks it :data:`QUESTION`."""
    _lane(sandbox, client, "api.py", "PORT = None\n")
    go = threading.Event()
    other_model = client.server([_wait(client.shell_tool, go), say("Done.")])
    claude_model = MessagesServer(
        [_ask(sandbox, "mcp__colony-tasks__ask_question", client.agent), say("Asked.")]
    )
    with claude_model, other_model:
        other = _start(sandbox, client, other_model, "Help the others on this branch")
        other_model.script[0].wait_reached(f"{client.label}'s first request")
        claude = sandbox.claude(claude_model, "Ask about the billing port").finish()
        go.set()
        other.finish()
    return Pair(claude, other, claude_model, other_model)


def question_to_claude(sandbox: Sandbox, client: Client) -> Pair:
    """Claude waits in a Bash call; meanwhile the client asks it :data:`QUESTION`."""
    _lane(sandbox, client, "api.py", "PORT = None\n")
    go = threading.Event()
    claude_model = MessagesServer([_wait("Bash", go), say("Done.")])
    other_model = client.server([_ask(sandbox, client.ask_tool, "claude"), say("Asked.")])
    with claude_model, other_model:
        claude = sandbox.claude(claude_model, "Help the others on this branch")
        claude_model.script[0].wait_reached("Claude's first request")
        other = _start(sandbox, client, other_model, "Ask about the billing port").finish()
        go.set()
        claude.finish()
    return Pair(claude, other, claude_model, other_model)
