"""One output convention for every command: human-readable text, or ``--json``; either way
fenced, so no text another party wrote can act on the terminal (a clipboard write, a link, a
cleared screen) or start a line of its own (:mod:`colony_tasks.base.text`)."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

import click

from ..base.models import plain
from ..base.text import escape_unsafe, fence, one_line
from ..store import Store, open_default

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"]}

# How the CLI words the core's next steps (colony_tasks.base.errors.STEPS): as commands.
STEP_WORDING = {
    "list_tasks": "List tasks with `colony-tasks tasks`.",
    "list_sessions": "List sessions with `colony-tasks sessions`.",
    "show_task": "See who is on task {task_id} with `colony-tasks tasks show {task_id}`.",
    "withdraw": "To take it back: `colony-tasks withdraw {item_id}`.",
    "chain_add": "Add it with `colony-tasks chain add {chain_id} {who} PROMPT`.",
    "chain_create": "Create one with `colony-tasks chain create NAME`.",
    "embed": "Run `colony-tasks embed` first.",
    "plan_show": "See the plan with `colony-tasks plan show`.",
    "take_next": "Take the next ready item with `colony-tasks plan take`.",
}


def json_option(func: Callable) -> Callable:
    """Adds ``--json``; the command receives ``as_json``."""
    return click.option("--json", "as_json", is_flag=True, help="Print JSON for machines.")(func)


def json_text(data: Any) -> str:
    """``data`` as indented JSON, fenced the JSON way (:func:`.escape_unsafe`): a machine
    reads the exact data, a terminal receives no control or invisible character."""
    return escape_unsafe(json.dumps(plain(data), ensure_ascii=False, indent=2))


def emit(as_json: bool, data: Any, render: Callable[[], str]) -> None:
    """Print ``data`` as JSON, or the text ``render()`` returns, fenced."""
    if as_json:
        click.echo(json_text(data))
    else:
        text = fence(render())
        if text:
            click.echo(text)


def with_store(func: Callable) -> Callable:
    """Opens the default store for the command and closes it afterwards."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        store: Store = open_default()
        try:
            return func(store, *args, **kwargs)
        finally:
            store.close()

    return wrapper


def table(rows: list[list[str]], headers: list[str]) -> str:
    if not rows:
        return ""
    rows = [[one_line(cell) for cell in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    for row in rows:
        lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
    return "\n".join(lines)
