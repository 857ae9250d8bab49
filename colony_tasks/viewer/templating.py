"""Jinja2 for the viewer: autoescaping always on, a few display filters, one render helper.

Agents' text is untrusted input. Every template renders it through autoescaping; no template
marks user text ``|safe``, and no filter here returns markup built from it. Every value a
template prints is fenced first (:func:`colony_tasks.base.text.fence`): controls made visible,
bidi and invisible characters removed, so a name cannot reorder or hide what the page shows.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup
from starlette.responses import HTMLResponse

from ..base.text import ago, clip, fence, iso
from ..render.conflicts import spans_text
from ..render.lines import KIND_LABEL

TEMPLATES = Path(__file__).parent / "templates"
MARKED = re.compile(r"\[([^\[\]]*)\]")


def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=_fenced,
    )
    env.filters.update(
        ago=_ago, iso=iso, clip=clip, label=label, marked=marked, minutes=_minutes, spans=spans_text
    )
    return env


def _fenced(value: Any) -> Any:
    """A printed value, fenced; markup the templates built themselves is left as it is."""
    if isinstance(value, str) and not isinstance(value, Markup):
        return fence(value)
    return value


def _ago(then: float | None, now: float | None = None) -> str:
    return ago(then, now)


def _minutes(seconds: float) -> str:
    """``45m``, ``3h 5m``, ``2d 4h`` for a duration."""
    total = max(0, round(seconds / 60))
    days, rest = divmod(total, 24 * 60)
    hours, mins = divmod(rest, 60)
    if days:
        return f"{days}d {hours}h"
    return f"{hours}h {mins}m" if hours else f"{mins}m"


def label(kind: str) -> str:
    return KIND_LABEL.get(kind, kind).lower()


def marked(snippet: str) -> list[tuple[str, bool]]:
    """A search snippet as (text, is_match) pieces; the template escapes each piece."""
    pieces: list[tuple[str, bool]] = []
    position = 0
    for found in MARKED.finditer(snippet or ""):
        if found.start() > position:
            pieces.append((snippet[position : found.start()], False))
        pieces.append((found.group(1), True))
        position = found.end()
    if position < len(snippet or ""):
        pieces.append((snippet[position:], False))
    return pieces


def render_html(env: jinja2.Environment, name: str, context: dict[str, Any]) -> str:
    return env.get_template(name).render(context)


def respond(
    env: jinja2.Environment, name: str, context: dict[str, Any], status: int = 200
) -> HTMLResponse:
    return HTMLResponse(render_html(env, name, context), status_code=status)
