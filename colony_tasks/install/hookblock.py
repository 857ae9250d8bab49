"""The hook block both agents share: which events, and how ours are merged in and taken out.

Claude Code and Codex use the same nesting (``hooks`` → event → matcher groups → handlers), so
one merge works for both. Our handlers are recognised by the executable's basename
``colony-tasks`` followed by ``hook`` (exec form ``args[0]`` or the second word of a shell
command), so a reinstall from another venv replaces the old entry instead of adding a second one.
"""

from __future__ import annotations

import copy
import shlex
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from ..base import agent_events
from ..base.agent_events import AGENT_EVENTS, EDIT_TOOLS, WAITING_NOTIFICATIONS
from .files import ShapeProblem
from .locate import EXECUTABLE

Group = dict[str, Any]
Block = dict[str, Group]


@dataclass(frozen=True)
class HookEvent:
    """How one lifecycle event is installed: our name (``slug``, the hook command's argument),
    per-agent matcher and timeout (s). Which agents have it, and under which name, is the
    event's row in :data:`colony_tasks.base.agent_events.EVENTS`."""

    slug: str
    claude_matcher: str | None
    codex_matcher: str | None
    timeout: int

    @property
    def name(self) -> str:
        return AGENT_EVENTS[self.slug]

    @property
    def agents(self) -> tuple[str, ...]:
        return agent_events.EVENTS[self.slug].agents


def events_for(agent: str) -> tuple[HookEvent, ...]:
    """The events installed for ``agent``."""
    return tuple(e for e in EVENTS if agent in e.agents)


CLAUDE_EDIT_TOOLS = "|".join(EDIT_TOOLS)
# Our MCP tools, also when a plugin provides the server (mcp__plugin_<plugin>_<server>__...).
OUR_MCP_TOOLS = "mcp__(?:plugin_[A-Za-z0-9_-]*_)?colony-tasks__.+"

EVENTS: tuple[HookEvent, ...] = (
    # No SessionStart matcher: every source (startup, resume, clear, compact, fork) counts.
    HookEvent("session-start", None, None, 10),
    # 10 s: above the store's 5 s busy timeout, so a briefly locked database still answers.
    HookEvent("user-prompt-submit", None, None, 10),
    # Before edits, and before shell commands: the hook notes the state of the files that
    # matter so the PostToolUse can tell which ones the command changed (shell_edits.py).
    # And before Claude's Read: one line when another session holds the file.
    HookEvent(
        "pre-tool-use",
        f"{CLAUDE_EDIT_TOOLS}|Bash|Read",
        "^(apply_patch|Bash)$",
        10,
    ),
    # After edits and shell commands, and after our own MCP tools (answering a question
    # through MCP must deliver what is addressed to the session mid-turn, like any tool call).
    HookEvent(
        "post-tool-use",
        f"^({CLAUDE_EDIT_TOOLS}|Bash|{OUR_MCP_TOOLS})$",
        f"^(apply_patch|Bash|{OUR_MCP_TOOLS})$",
        10,
    ),
    # Claude Code fires PostToolUseFailure instead of PostToolUse when a tool fails (a shell
    # command that exits non-zero may still have edited files); Codex fires PostToolUse.
    HookEvent("post-tool-use-failure", "^Bash$", None, 10),
    # A subagent (Claude's Task/Agent tool, Codex's spawned agents) gets a brief of its own.
    HookEvent("subagent-start", None, None, 10),
    HookEvent("stop", None, None, 10),
    # Claude Code: a turn cut off by the model API (rate limit, overloaded, ...), and the
    # session waiting on its human (idle or permission prompt); nothing reaches the model.
    HookEvent("stop-failure", None, None, 10),
    HookEvent("notification", f"^({'|'.join(WAITING_NOTIFICATIONS)})$", None, 10),
    # Claude allows SessionEnd hooks 1.5 s unless a settings file asks for more; Codex caps at 3.
    HookEvent("session-end", None, None, 3),
)


# Claude Code's background Stop handler (colony_tasks.hooks.wait): it waits, in the background,
# for an item that wakes the idle session, and exits 2 with it (asyncRewake wakes the session).
# Its timeout outlasts the wait itself (23 h), which then ends quietly; the next Stop starts
# another. Codex skips async handlers (its Stop gate is the synchronous Stop hook).
WAIT_EVENT = "Stop"
WAIT_SLUG = "wait"
WAIT_TIMEOUT = 24 * 3600
WAIT_FIELDS: dict[str, Any] = {"async": True, "asyncRewake": True}


def group(matcher: str | None, handler: dict[str, Any], *more: dict[str, Any]) -> Group:
    """A matcher group holding our handlers (no ``matcher`` key when it matches everything)."""
    result: Group = {} if matcher is None else {"matcher": matcher}
    result["hooks"] = [handler, *more]
    return result


def _is_our_executable(word: str) -> bool:
    name = PurePosixPath(word.replace("\\", "/")).name
    return name in (EXECUTABLE, EXECUTABLE + ".exe")


def is_our_handler(handler: Any) -> bool:
    """True for a command handler that runs ``.../colony-tasks hook ...`` in either form."""
    if not isinstance(handler, dict):
        return False
    command = handler.get("command")
    if not isinstance(command, str):
        return False
    args = handler.get("args")
    if isinstance(args, list):
        return _is_our_executable(command) and bool(args) and args[0] == "hook"
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    return len(words) >= 2 and _is_our_executable(words[0]) and words[1] == "hook"


def _hooks_object(data: dict[str, Any], create: bool) -> dict[str, Any] | None:
    hooks = data.get("hooks")
    if hooks is None and create:
        hooks = data["hooks"] = {}
    if hooks is not None and not isinstance(hooks, dict):
        raise ShapeProblem("hooks", "an object mapping event names to matcher groups", hooks)
    return hooks


def _strip_ours(groups: list[Any]) -> tuple[list[Any], bool]:
    """``groups`` without our handlers, dropping groups that only held ours."""
    kept: list[Any] = []
    removed = False
    for item in groups:
        handlers = item.get("hooks") if isinstance(item, dict) else None
        if not isinstance(handlers, list) or not any(is_our_handler(h) for h in handlers):
            kept.append(item)
            continue
        removed = True
        others = [h for h in handlers if not is_our_handler(h)]
        if others:
            kept.append({**item, "hooks": others})
    return kept, removed


def _our_places(groups: list[Any]) -> list[tuple[dict[str, Any], int]]:
    places: list[tuple[dict[str, Any], int]] = []
    for item in groups:
        handlers = item.get("hooks") if isinstance(item, dict) else None
        if isinstance(handlers, list):
            places.extend((item, i) for i, h in enumerate(handlers) if is_our_handler(h))
    return places


def install_block(data: dict[str, Any], block: Block) -> None:
    """Merge ``block`` (event → our group) into the settings object ``data``, in place.

    An existing handler of ours under the same matcher is updated where it stands; otherwise
    old copies are removed and our group is appended to the event's list. Our handlers under
    events that are not in ``block`` (left by an older version) are removed.
    """
    hooks = _hooks_object(data, create=True)
    assert hooks is not None
    for event in [e for e in hooks if e not in block]:
        _remove_from_event(hooks, event)
    for event, wanted in block.items():
        groups = hooks.get(event)
        if groups is None:
            hooks[event] = [copy.deepcopy(wanted)]
            continue
        if not isinstance(groups, list):
            raise ShapeProblem(f"hooks.{event}", "a list of matcher groups", groups)
        places = _our_places(groups)
        single = len(wanted["hooks"]) == 1
        if single and len(places) == 1 and places[0][0].get("matcher") == wanted.get("matcher"):
            item, index = places[0]
            if item["hooks"][index] != wanted["hooks"][0]:
                item["hooks"][index] = copy.deepcopy(wanted["hooks"][0])
            continue
        if not single and [item for item, _ in places] == [places[0][0]] * len(places):
            item = places[0][0]
            if item["hooks"] == wanted["hooks"] and item.get("matcher") == wanted.get("matcher"):
                continue  # already ours, as wanted
        kept, _ = _strip_ours(groups)
        hooks[event] = [*kept, copy.deepcopy(wanted)]


def _remove_from_event(hooks: dict[str, Any], event: str) -> bool:
    groups = hooks[event]
    if not isinstance(groups, list):
        return False
    kept, removed = _strip_ours(groups)
    if removed:
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    return removed


def uninstall_block(data: dict[str, Any]) -> None:
    """Remove every handler of ours, and the groups, event lists and ``hooks`` object that
    became empty because of it (containers that were already empty are left alone)."""
    hooks = _hooks_object(data, create=False)
    if not hooks:
        return
    removed = False
    for event in list(hooks):
        removed = _remove_from_event(hooks, event) or removed
    if removed and not hooks:
        del data["hooks"]
