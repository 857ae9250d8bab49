"""What agents do, recorded as observations of their lane task: prompts, edits, commands.

An event's context — its session, lane, lane task and folder — is resolved once
(:class:`Here`, :func:`here_of`) and passed on; :func:`record` and :func:`record_here_edit`
write the observation. The use cases of :mod:`.events` record through here, and so do tests,
fixtures and benchmarks that set up what a session did without a hook (:func:`record_prompt`,
:func:`record_command`, :func:`record_edit`). Standard library only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..base.models import Lane, Record, Session
from ..domain import claims as claims_mod
from ..store import Store

PROMPT_CHARS = 4000  # what is recorded of a prompt, and of a command
COMMAND_CHARS = 600


class Here(Record):
    """An event's context, resolved once: the session (registered or refreshed), its lane
    (None outside any repository's lane), the lane task's id and the folder the agent's paths
    are relative to."""

    session: Session
    lane: Lane | None
    task_id: int | None
    cwd: str


def here_of(store: Store, session: Session, cwd: str | None = None) -> Here:
    """The context of an act of ``session``: its lane and lane task, in ``cwd`` (its own
    folder when not given)."""
    lane, task_id = store.lane_and_task(session.lane_id) if session.lane_id else (None, None)
    return Here(session, lane, task_id, cwd or session.cwd)


def record(
    store: Store,
    here: Here,
    kind: str,
    text: str,
    *,
    meta: dict[str, Any] | None = None,
    paths: Sequence[str] = (),
    max_chars: int = COMMAND_CHARS,
) -> int:
    return store.add_observation(
        kind,
        text,
        session_id=here.session.id,
        task_id=here.task_id,
        meta=meta,
        paths=paths,
        repo_id=here.lane.repo_id if here.lane is not None and paths else None,
        max_chars=max_chars,
    )


def record_here_edit(
    store: Store, here: Here, rel_paths: Sequence[str], tool: str, meta: dict[str, Any]
) -> int:
    """One ``edit`` observation listing the touched repo-relative paths."""
    by = f", subagent {meta['subagent']}" if meta.get("subagent") else ""
    text = f"{', '.join(rel_paths)} ({tool}{by})"
    return record(store, here, "edit", text, meta={"tool": tool, **meta}, paths=rel_paths)


def repo_paths_here(here: Here, paths: Sequence[str]) -> list[str]:
    """Repo-relative forms of ``paths`` (relative to the event's folder); paths outside the
    repository are dropped."""
    if here.lane is None:
        return []
    return claims_mod.relative_paths(paths, lane=here.lane, cwd=here.cwd)


# What a session did, recorded outside a hook (tests, fixtures, benchmarks): the same records.


def record_prompt(store: Store, session: Session, prompt: str) -> int:
    here = here_of(store, session)
    return record(store, here, "prompt", prompt, max_chars=PROMPT_CHARS)


def record_command(
    store: Store,
    session: Session,
    command: str,
    *,
    tool: str = "Bash",
    meta: dict[str, Any] | None = None,
) -> int:
    here = here_of(store, session)
    return record(store, here, "command", command, meta={"tool": tool, **(meta or {})})


def record_edit(
    store: Store,
    session: Session,
    rel_paths: Sequence[str],
    *,
    tool: str,
    meta: dict[str, Any] | None = None,
) -> int:
    return record_here_edit(store, here_of(store, session), rel_paths, tool, meta or {})
