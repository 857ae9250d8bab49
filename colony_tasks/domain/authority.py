"""Who holds a human's powers, and who may resolve a blocker: one rule for every front end.

A human's powers — posting as the developer (which also resets the loop guard), finishing,
dropping or reassigning another session's work item, the rights a chain gives its human
coordinator — belong to sessions of kind ``human``. The MCP server never resolves a caller to
one (:mod:`colony_tasks.domain.identity`), no hook payload can create or adopt one
(:func:`colony_tasks.domain.sessions.check_not_human`), and the CLI and the viewer obtain one only
through :func:`human`, which refuses in a process that runs inside an agent's process tree:

- an ancestor's command is an agent's (:data:`AGENT_COMMANDS`), or
- the environment carries a variable the agents set for the commands they run
  (:data:`AGENT_ENVIRONMENT`; it survives a process that detaches from the tree).

The CLI first looks for a live agent session whose recorded process (the hooks record it) is
an ancestor, and acts as that session whatever ``--as`` says (:func:`cli_actor`); otherwise,
inside an agent's tree, it refuses to act, as the viewer refuses its writes. The whole ancestry is
read (up to :data:`DEPTH` processes): nesting shells does not hide the agent.

Blockers: the session that reported one, the session it waits on, the task's coordinator or
a human may resolve it (:func:`check_resolve_blocker`); no other agent.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from ..base import procs
from ..base.errors import NotAllowed
from ..base.kinds import AgentKind
from ..base.models import Observation, Record, Session, Task
from ..store import Store
from . import identity, sessions

# The command names of the agents' own processes (Claude Code, Codex and Codex's sandbox,
# Copilot CLI, OpenCode).
AGENT_COMMANDS = frozenset({"claude", "codex", "codex-linux-sandbox", "copilot", "opencode"})
# Variables the agents put in the environment of the commands their shell tool runs.
# (Gemini CLI and Qwen Code run as ``node``: their shell tools set GEMINI_CLI=1, QWEN_CODE=1.)
AGENT_ENVIRONMENT = (
    "CLAUDECODE",
    "CODEX_SANDBOX",
    "CODEX_SANDBOX_NETWORK_DISABLED",
    "COPILOT_CLI",
    "OPENCODE",
    "GEMINI_CLI",
    "QWEN_CODE",
)
DEPTH = 64
OWN_TERMINAL = "run it from your own terminal, outside the agent"


class AgentTree(Record):
    """Why this process counts as inside an agent's tree: the agent's pid (None when only the
    environment says so), its name, and how it was found."""

    pid: int | None
    name: str
    how: str


def agent_tree(
    store: Store | None = None,
    chain: Sequence[tuple[int, str]] | None = None,
    environ: Mapping[str, str] | None = None,
) -> AgentTree | None:
    """The agent whose process tree this process runs in, or None (see the module's rule).
    ``chain``: this process's ancestors with their command names (read when not given)."""
    chain = procs.ancestry(DEPTH) if chain is None else chain
    if store is not None and chain:
        session = identity.detected(store, [pid for pid, _ in chain])
        if session is not None:
            return AgentTree(session.agent_pid, session.handle, "session")
    for pid, name in chain:
        if name.lower() in AGENT_COMMANDS:
            return AgentTree(pid, name, "process")
    environ = os.environ if environ is None else environ
    for variable in AGENT_ENVIRONMENT:
        if environ.get(variable):
            return AgentTree(None, variable, "environment")
    return None


def cli_actor(store: Store, name: str | None, cwd: str) -> Session:
    """The session a CLI command acts as: inside an agent's process tree, that agent's session
    whatever ``--as`` names (refused when the agent has no live session); a human's session
    otherwise."""
    chain = procs.ancestry(DEPTH)
    agent = identity.detected(store, [pid for pid, _ in chain]) if chain else None
    if agent is not None:
        return agent
    return human(store, name, cwd, chain)


def human(
    store: Store, name: str | None, cwd: str, chain: Sequence[tuple[int, str]] | None = None
) -> Session:
    """The session a human at the CLI or in the viewer acts as (one per name); refused in a
    process inside an agent's tree: an agent never gets a human's powers this way."""
    tree = agent_tree(None, chain)  # (a live session's process: the CLI acted as it already)
    if tree is not None:
        found = {
            "process": f"the agent process {tree.name!r} (pid {tree.pid})",
            "environment": f"the agent's environment ({tree.name} is set)",
        }[tree.how]
        raise NotAllowed(
            f"This runs inside an agent's process tree ({found}), so it cannot act as a human"
            f" (post as the developer, reset the loop guard, reassign or finish others' work)."
            f" An agent acts through its colony MCP tools as its own session; a human: {OWN_TERMINAL}."
        )
    return sessions.human_session(store, name, cwd)


def is_human(session: Session) -> bool:
    return session.agent == AgentKind.HUMAN


def check_resolve_blocker(
    store: Store, session: Session, blocker: Observation, task: Task | None
) -> None:
    """Refuse unless ``session`` may resolve ``blocker``: its reporter, the session it waits on,
    the task's coordinator, or a human."""
    waits_on = str((blocker.meta or {}).get("waiting_on") or "").strip().lstrip("@")
    coordinator = task.coordinator if task is not None else None
    if (
        is_human(session)
        or session.id == blocker.session_id
        or session.id == coordinator
        or (waits_on and waits_on in (session.handle, session.id))
    ):
        return
    reporter = store.get_session(blocker.session_id) if blocker.session_id else None
    who = [reporter.handle if reporter is not None else "its reporter"]
    if waits_on:
        who.append(f"{waits_on} (whom it waits on)")
    if coordinator:
        lead = store.get_session(coordinator)
        who.append(f"{lead.handle if lead is not None else coordinator} (the coordinator)")
    raise NotAllowed(
        f"Blocker #{blocker.id} is not {session.handle}'s to resolve: only {', '.join(who)}"
        f" or a human can resolve it. Post to the thread instead."
    )
