"""Who may act as whom: a session acts only as itself.

The rule, for every front end:

- **Humans** (the CLI, the viewer) act as the name they give: ``human:<name>``, one session per
  name (:func:`colony_tasks.domain.sessions.human_session`). They never act as an agent session.
- **Agents** reach the core through the MCP server, which tells its caller by process
  ancestry: the hooks record the agent's pid on its session (the relay takes it from the
  kernel, not from the hook), and the server's ancestors include that process. The session
  id the agent put in the server's environment (Claude Code's ``CLAUDE_CODE_SESSION_ID``)
  only chooses among the sessions of an ancestor (after ``/clear`` one agent process has had
  two): it counts only while it names a live agent session whose recorded agent process is
  one of the server's ancestors. An environment is the starter's to write — an agent can
  start its own ``colony-tasks mcp`` with any session's id — so it never proves anything
  alone. :func:`agent_caller` applies the rule:

  1. The caller is detected: with no ``session_id`` it acts as itself; an explicit
     ``session_id`` must name one of the detected agent process's own live sessions (after
     ``/clear`` one process has had two), otherwise it is refused.
  2. The caller cannot be detected (no process table on this platform, or the agent's hooks
     did not record it): an explicit ``session_id`` is accepted only with the session's key,
     ``<handle>:<key>``. The key is derived from a secret of the session's machine, stored
     only as a hash (:mod:`colony_tasks.base.keys`), and shown only in that session's own
     SessionStart briefing — another agent, or another member of a team store, never sees it. Without the
     key the call is refused and nothing is guessed.
  3. Never as a human (agent kind ``human``, ids ``human:*``), whatever was passed: an agent
     cannot reset the loop guard or speak for the developer. Chain coordination follows: the
     core's chain rules compare the coordinator with *this* session, so an agent cannot act
     as a coordinator it is not.

The key guards against a confused or misbehaving agent, not against another program of the
same user, which can read the 0600 database anyway. Standard library only.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..base import keys
from ..base.errors import NotAllowed, NotFound
from ..base.kinds import AgentKind
from ..base.models import Session
from ..store import Store
from . import sessions

KEY_SEPARATOR = ":"
PASS_HANDLE = (
    "leave session_id out, or pass session_id exactly as your colony-tasks SessionStart briefing"
    ' gives it ("Your session_id, if a colony tool asks for one: <handle>:<key>").'
)


def credential(store: Store, session: Session) -> str | None:
    """``<handle>:<key>``, what the session passes as ``session_id`` when it cannot be told
    apart by its process (None for humans, who have no key)."""
    if store.session_key_hash(session.id) is None:
        return None
    return f"{session.handle}{KEY_SEPARATOR}{keys.key_for(session.id)}"


def is_human(session: Session) -> bool:
    return session.agent == AgentKind.HUMAN or session.id.startswith("human:")


def _split(ref: str) -> tuple[str, str | None]:
    """(session reference, key) from ``handle:key``; a reference with no key as it is."""
    name, sep, key = ref.rpartition(KEY_SEPARATOR)
    if sep and name and key:
        return name, key
    return ref, None


def _named(store: Store, ref: str) -> tuple[Session, str | None]:
    ref = ref.strip()
    if not ref:
        raise NotFound(f"An empty session_id names no session; {PASS_HANDLE}")
    found = sessions.lookup(store, ref)
    if found is not None:
        return found, None
    name, key = _split(ref)
    found = sessions.lookup(store, name) if key else None
    if found is None:
        raise NotFound(f"Session {name!r} does not exist; {PASS_HANDLE}")
    return found, key


def detected(store: Store, pids: Sequence[int], env_session: str | None = None) -> Session | None:
    """The live session whose hooks ran under the nearest of ``pids`` (the caller's
    ancestors), or None; the one the agent's environment names (``env_session``) when it is
    a live agent session of one of those processes on this machine (see the module
    docstring: an environment alone proves nothing)."""
    if not pids:
        return None
    if env_session:
        named = store.get_session(env_session)
        if (
            named is not None
            and named.ended_at is None
            and not is_human(named)
            and named.agent_pid in pids
            and named.machine in ("", sessions.identity()[1])
        ):
            return named
    return sessions.session_for_process(store, list(pids))


def agent_caller(
    store: Store, session_id: str | None, pids: Sequence[int], env_session: str | None = None
) -> Session:
    """The session an agent's call acts as, by the rule above; :class:`NotAllowed` or
    :class:`NotFound` with the next step otherwise."""
    caller = detected(store, pids, env_session)
    if session_id is None:
        if caller is None:
            raise NotFound(
                "Cannot tell which colony-tasks session is calling: no live session was started"
                f" under this agent's process; {PASS_HANDLE}"
            )
        return caller
    target, key = _named(store, session_id)
    if is_human(target):
        raise NotAllowed(
            f"Session {target.handle} is a human's; an agent cannot act as a human."
            + (f" You are {caller.handle}: leave session_id out." if caller else "")
        )
    if caller is not None:
        siblings = store.sessions_for_pid(int(caller.agent_pid or 0), caller.machine)
        own = {s.id for s in siblings} | {caller.id}
        if target.id in own:
            return target
        raise NotAllowed(
            f"You are {caller.handle}; session_id {session_id.split(KEY_SEPARATOR)[0]!r} is"
            f" {target.handle}, another session. A session acts only as itself: leave"
            " session_id out."
        )
    if key is None or not keys.matches(key, store.session_key_hash(target.id)):
        raise NotAllowed(
            f"Cannot confirm that this call comes from {target.handle}: its agent process was"
            f" not detected, so session_id must carry the session's key: {PASS_HANDLE}"
        )
    return target


def maybe_agent_caller(
    store: Store, session_id: str | None, pids: Sequence[int], env_session: str | None = None
) -> Session | None:
    """Like :func:`agent_caller` for reads that work without a session: None when no
    session_id was passed and none was detected."""
    if session_id is None:
        return detected(store, pids, env_session)
    return agent_caller(store, session_id, pids, env_session)
