"""The hook block the agents share: which events, and how ours are merged in and taken out.

Claude Code, Codex, Gemini CLI and Qwen Code use the same nesting (``hooks`` → event → matcher groups → handlers), so
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
from ..base.agent_events import AGENT_EVENTS
from .files import ShapeProblem, child_object
from .locate import EXECUTABLE

Group = dict[str, Any]
Block = dict[str, Group]


@dataclass(frozen=True)
class HookEvent:
    """How one lifecycle event is installed: our name (``slug``, the hook command's argument),
    per-agent matcher and timeout (s), the agents that have it and its name there — all read
    from the event's row in :data:`colony_tasks.base.agent_events.EVENTS`."""

    slug: str
    claude_matcher: str | None
    codex_matcher: str | None
    timeout: int
    agents: tuple[str, ...]

    @property
    def name(self) -> str:
        return AGENT_EVENTS[self.slug]

    def name_for(self, agent: str) -> str:
        """The agent's name for the event (Gemini CLI's differ)."""
        return agent_events.event_name(self.slug, agent)

    def matcher_for(self, agent: str) -> str | None:
        return agent_events.EVENTS[self.slug].matchers.get(agent)


def events_for(agent: str) -> tuple[HookEvent, ...]:
    """The events installed for ``agent``."""
    return tuple(e for e in EVENTS if agent in e.agents)


EVENTS: tuple[HookEvent, ...] = tuple(
    HookEvent(slug, row.matchers.get("claude"), row.matchers.get("codex"), row.timeout, row.agents)
    for slug, row in agent_events.EVENTS.items()
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
    return child_object(data, "hooks", "an object mapping event names to matcher groups", create)


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
