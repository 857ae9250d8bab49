"""Sessions, lanes and tasks: who is working where, and on which shared objective."""

from __future__ import annotations

import os
import zlib
from typing import Any

try:
    import pwd  # built in (cheap); absent on Windows
except ImportError:  # pragma: no cover - Windows
    pwd = None  # type: ignore[assignment]

from ..base import backend, keys, lanes, procs, settings
from ..base.errors import Conflict, InvalidInput, NotAllowed, NotFound
from ..base.kinds import AGENT_KINDS, AgentKind, TaskMode
from ..base.models import Lane, Record, Session, Task
from ..base.text import one_line
from ..store import Store

HANDLE_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_.-")


def slug(text: str) -> str:
    """``text`` lower-cased with every run of other characters made one ``-``, trimmed.

    A loop rather than a regular expression: compiling one costs every hook ~1 M instructions.
    """
    out: list[str] = []
    in_run = False
    for ch in text.lower():
        if ch in HANDLE_CHARS:
            out.append(ch)
            in_run = False
        elif not in_run:
            out.append("-")
            in_run = True
    return "".join(out).strip("-")


class Joined(Record):
    """The result of :func:`register`: the session, its lane and lane task, what was new."""

    session: Session
    lane: Lane
    task: Task
    new_session: bool
    new_participant: bool


def agent_kind(agent: str | None) -> str:
    value = (agent or "").strip().lower()
    return value if value in AGENT_KINDS else (slug(value) or "agent")


def make_handle(store: Store, agent: str, session_id: str) -> str:
    """``claude-3f2a``; longer when the short form is taken by another session."""
    raw = session_id.encode("utf-8")
    digest = f"{zlib.crc32(raw):08x}{zlib.adler32(raw):08x}"
    for width in (4, 6, 8, 12, 16):
        handle = f"{agent}-{digest[:width]}"
        if _handle_free(store, handle, session_id):
            return handle
    raise Conflict(f"Could not find a free handle for session {session_id}.")


def _handle_free(store: Store, handle: str, session_id: str) -> bool:
    """Free for ``session_id``: no other session has this handle *or this id* (handles and
    ids are separate namespaces; see :func:`lookup`)."""
    return not store.handle_taken(handle, by_other_than=session_id)


def lookup(store: Store, ref: str) -> Session | None:
    """The session a reference names: a handle first, then a session id. An agent chooses
    its own session id, so an id equal to another session's handle never shadows it."""
    ref = (ref or "").strip()
    if not ref:
        return None
    return store.get_session_by_handle(ref) or store.get_session(ref)


def lane_for(store: Store, cwd: str) -> Lane:
    # One identity on every store (colony_tasks.base.lanes): clones of one origin, on this
    # machine or another, and linked worktrees are one repository.
    # A local store named such a repository by its common dir before: its lanes are adopted.
    info = lanes.resolve(cwd)
    legacy = info.local_id if store.backend == "sqlite" else ""
    return store.upsert_lane(info.repo_id, info.root, info.repo_name, info.branch, legacy_id=legacy)


def lane_task(store: Store, lane: Lane, created_by: str | None = None) -> Task:
    """The lane's open task, created on first use (title ``<repo-name>@<branch>``)."""
    task = store.open_lane_task(lane.id)
    if task is not None:
        return task
    title = f"{lane.repo_name}@{lane.branch}" if lane.branch else lane.repo_name
    with store.transaction():
        store.lock_lane(lane.id)
        task = store.open_lane_task(lane.id)
        if task is None:
            task_id = store.insert_task(
                title, mode=TaskMode.LANE, lane_id=lane.id, created_by=created_by
            )
            task = store.get_task(task_id)
    assert task is not None
    return task


# Agents' session ids are UUIDs or short names; a longer one is a payload error or an attack
# (a 1 MB id was stored and copied into every row the session wrote).
MAX_SESSION_ID = 256


def register(
    store: Store,
    session_id: str,
    *,
    agent: str,
    cwd: str,
    agent_pid: int | None = None,
    handle: str | None = None,
) -> Joined:
    """Register or refresh a session, resolve its lane and join the lane task (idempotent)."""
    session_id = (session_id or "").strip()
    if not session_id:
        raise InvalidInput("A session needs a non-empty session id.")
    if len(session_id) > MAX_SESSION_ID or not session_id.isprintable():
        raise InvalidInput(
            f"A session id is at most {MAX_SESSION_ID} printable characters"
            f" (this one is {len(session_id)} characters)."
        )
    kind = agent_kind(agent)
    lane = lane_for(store, cwd)
    with store.transaction():
        existing = store.get_session(session_id)
        if existing is not None:
            check_owner(existing, agent_pid)
        if existing is None:
            chosen = _free_handle(store, handle, session_id) if handle else None
            developer, machine = identity()
            store.insert_session(
                session_id,
                chosen or make_handle(store, kind, session_id),
                kind,
                cwd,
                lane.id,
                agent_pid,
                machine=machine,
                developer=developer,
            )
        else:
            store.refresh_session(
                session_id, cwd=cwd, lane_id=lane.id, agent_pid=agent_pid, reopen=True
            )
        if kind != AgentKind.HUMAN and (
            existing is None or store.session_key_hash(session_id) is None
        ):
            store.set_session_key_hash(session_id, keys.key_hash(keys.key_for(session_id)))
        task = lane_task(store, lane, created_by=session_id)
        new_participant = store.add_participant(task.id, session_id)
        session = store.get_session(session_id)
    assert session is not None
    return Joined(session, lane, task, existing is None, new_participant)


def _free_handle(store: Store, wanted: str, session_id: str) -> str:
    base = slug(wanted.strip()) or "human"
    candidate, n = base, 2
    while True:
        if _handle_free(store, candidate, session_id):
            return candidate
        candidate, n = f"{base}-{n}", n + 1


def human_session(store: Store, name: str | None, cwd: str) -> Session:
    """The CLI's human participant: one session per name, handle = the name."""
    name = (name or login_name() or "human").strip()
    joined = register(store, f"human:{name}", agent=AgentKind.HUMAN, cwd=cwd, handle=name)
    return joined.session


def login_name() -> str:
    """The user's login name, as ``getpass.getuser`` finds it (getpass itself would cost every
    hook process its imports: contextlib, warnings, termios)."""
    for key in ("LOGNAME", "USER", "LNAME", "USERNAME"):
        if os.environ.get(key):
            return os.environ[key]
    try:
        return pwd.getpwuid(os.getuid()).pw_name if pwd else ""
    except (KeyError, OSError):
        return ""


def identity() -> tuple[str, str]:
    """(developer, machine) recorded on new sessions: ``COLONY_TASKS_DEVELOPER`` /
    ``COLONY_TASKS_MACHINE``, else settings ``{"identity": {"developer": .., "machine": ..}}``,
    else the login name and the host name."""
    developer = os.environ.get(backend.ENV_DEVELOPER) or settings.get("identity", "developer")
    machine = os.environ.get(backend.ENV_MACHINE) or settings.get("identity", "machine")
    developer = str(developer or login_name() or os.getuid())
    machine = str(machine or os.uname().nodename.split(".")[0])
    return one_line(developer)[:64], one_line(machine)[:64]


def find_session(store: Store, ref: str | None) -> Session:
    """A session by id or handle, or :class:`NotFound` with the next step."""
    ref = (ref or "").strip()
    session = lookup(store, ref)
    if session is None:
        raise NotFound(f"Session {ref!r} does not exist.", "list_sessions")
    return session


def session_for_process(store: Store, pids: list[int]) -> Session | None:
    """The active session whose hooks ran under the nearest of ``pids`` (an ancestor chain).

    The MCP server passes its own ancestors: the agent that spawned it is the process the
    hooks recorded as ``agent_pid``. The most recently seen session of that process wins.
    """
    for pid in pids:
        found = store.sessions_for_pid(pid, identity()[1])
        if found:
            return found[0]
    return None


def check_owner(session: Session, agent_pid: int | None) -> None:
    """A hook may change a session only from the agent process that owns it: one recorded
    under another, still running, agent process is not ended, moved or re-owned by a payload
    that merely carries its id (:class:`NotAllowed`; hooks log it and carry on). A session
    whose process is gone may be resumed by a new one."""
    owner = session.agent_pid
    if owner and agent_pid and owner != agent_pid and procs.alive(owner):
        raise NotAllowed(
            f"Session {session.handle} belongs to agent process {owner}, which is still"
            f" running; a hook from process {agent_pid} may not change it."
        )


HUMAN_PREFIX = "human:"


def check_agent_event(session_id: str | None, agent: str, existing: Session | None) -> None:
    """An agent's hook event may not create, adopt or act as a human session: human identities
    are a namespace (``human:<name>``) only the CLI and the viewer register. A hook payload
    naming one is refused (:class:`NotAllowed`; hooks log it and carry on)."""
    named = (session_id or "").strip().lower().startswith(HUMAN_PREFIX)
    if (
        named
        or agent == AgentKind.HUMAN
        or (existing is not None and existing.agent == AgentKind.HUMAN)
    ):
        raise NotAllowed(
            f"Session id {session_id!r} is a human identity; an agent's hook may not use it."
        )


def end_session(store: Store, session: Session) -> dict[str, Any]:
    """Mark the session ended, release its claims, and mark its undelivered items."""
    with store.transaction():
        store.end_session(session.id)
        released = store.release_all_claims(session.id)
        undeliverable = store.mark_undeliverable(session.id)
    return {"released": released, "undeliverable": undeliverable}
