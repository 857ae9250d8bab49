"""Recording what agents do (prompts, edits, commands) as observations of their lane task.

Standard library only: the hook path imports this module.
"""

from __future__ import annotations

from . import claims as claims_mod
from .errors import InvalidInput
from .models import Session
from .store import Store

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

PROMPT_CHARS = 4000
COMMAND_CHARS = 600


def lane_task_id(store: Store, session: Session) -> int | None:
    task = store.open_lane_task(session.lane_id) if session.lane_id else None
    return task.id if task else None


def record_prompt(store: Store, session: Session, prompt: str) -> int:
    return store.add_observation(
        "prompt",
        prompt,
        session_id=session.id,
        task_id=lane_task_id(store, session),
        max_chars=PROMPT_CHARS,
    )


def record_command(store: Store, session: Session, command: str, *, tool: str = "Bash") -> int:
    return store.add_observation(
        "command",
        command,
        session_id=session.id,
        task_id=lane_task_id(store, session),
        meta={"tool": tool},
        max_chars=COMMAND_CHARS,
    )


def repo_paths(store: Store, session: Session, paths: Sequence[str], cwd: str | None) -> list[str]:
    """Repo-relative forms of ``paths``; paths outside the repository are dropped."""
    lane = store.get_lane(session.lane_id) if session.lane_id else None
    if lane is None:
        return []
    found = []
    for path in paths:
        try:
            found.append(claims_mod.normalize(path, lane=lane, cwd=cwd or session.cwd))
        except InvalidInput:
            continue
    return list(dict.fromkeys(found))


def record_edit(
    store: Store,
    session: Session,
    rel_paths: Sequence[str],
    *,
    tool: str,
    meta: dict[str, Any] | None = None,
) -> int:
    """One ``edit`` observation listing the touched repo-relative paths."""
    lane = store.get_lane(session.lane_id) if session.lane_id else None
    text = f"{', '.join(rel_paths)} ({tool})"
    return store.add_observation(
        "edit",
        text,
        session_id=session.id,
        task_id=lane_task_id(store, session),
        meta={"tool": tool, **(meta or {})},
        paths=rel_paths,
        repo_id=lane.repo_id if lane else None,
        max_chars=COMMAND_CHARS,
    )
