"""Who is calling: the session a tool call acts as.

An explicit ``session_id`` (a session id or handle) wins. Without one, the caller is the session
whose hooks run under the same agent process as this server: the hooks record ``agent_pid`` on
the session, and this server's ancestors include that process. It is resolved on every call,
because the agent may /clear and continue in the same process under a new session id. When
neither works, the call fails with the exact argument to pass; it never guesses a session.
"""

from __future__ import annotations

from colony_tasks import sessions
from colony_tasks.errors import NotFound
from colony_tasks.models import Session
from colony_tasks.procs import ancestors
from colony_tasks.store import Store

PASS_HANDLE = (
    'pass session_id="<your handle>" (e.g. session_id="claude-3f2a") — your handle is in the'
    ' colony-tasks SessionStart briefing ("you are <handle> on ...").'
)


def named(store: Store, session_id: str) -> Session:
    """The session with this id or handle, or :class:`NotFound` saying what to pass."""
    ref = session_id.strip()
    found = (store.get_session(ref) or store.get_session_by_handle(ref)) if ref else None
    if found is None:
        raise NotFound(f"Session {ref!r} does not exist; {PASS_HANDLE}")
    return found


def of_process(store: Store) -> Session | None:
    """The active session whose hooks ran under one of this server's ancestor processes."""
    return sessions.session_for_process(store, ancestors())


def caller(store: Store, session_id: str | None) -> Session:
    """The session this call acts as; :class:`NotFound` with the next step when unknown."""
    if session_id is not None:
        return named(store, session_id)
    found = of_process(store)
    if found is None:
        raise NotFound(
            "Cannot tell which colony-tasks session is calling: no active session was started"
            f" under this agent's process; {PASS_HANDLE}"
        )
    return found


def maybe_caller(store: Store, session_id: str | None) -> Session | None:
    """Like :func:`caller` for tools that can work without one: None when undetermined."""
    if session_id is not None:
        return named(store, session_id)
    return of_process(store)
