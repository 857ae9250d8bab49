"""Where an agent may write: the lanes of the repositories it works in.

Every item an agent stores in a task may wake that task's sessions (an urgent note, a question
or handoff addressed to one, a chain turn). So an agent posts, asks, answers and hands off —
whatever goes through :func:`colony_tasks.domain.messages.insert_message` — only in:

- a lane task of a repository it works in, on any branch: its own lane's repository, or one
  whose lane tasks hold its work as its hooks recorded it (prompts, edits, commands);
- a task with no lane (a chain, a task created on purpose): its participants chose it, and a
  chain's coordinator adds only sessions of repositories it works in (:func:`check_addable`);
- a task where a human addressed it (reassigned it a work item, gave it a turn, asked it):
  a human's explicit join.

Another repository's ``task_id`` is refused with :class:`NotAllowed`, which says why. Humans
(the CLI, the viewer) write anywhere. Standard library only.
"""

from __future__ import annotations

from ..base.errors import NotAllowed
from ..base.kinds import AgentKind
from ..base.models import Session, Task
from ..store import Store


def repos_of(store: Store, session: Session) -> set[str]:
    """The repositories ``session`` works in: its lane's and those it recorded work in."""
    lane = store.get_lane(session.lane_id) if session.lane_id else None
    return ({lane.repo_id} if lane is not None else set()) | store.worked_repos(session.id)


def check_task(store: Store, task: Task, session: Session) -> None:
    """Refuse unless ``session`` may write to ``task`` (the rule of this module)."""
    if session.agent == AgentKind.HUMAN or task.lane_id is None:
        return
    lane = store.get_lane(task.lane_id)
    if lane is None:
        return
    own = store.get_lane(session.lane_id) if session.lane_id else None
    if own is not None and own.repo_id == lane.repo_id:
        return  # the common case: one query, nothing scanned
    if lane.repo_id in repos_of(store, session):
        return
    if store.addressed_by_human(task.id, session.handle):
        return
    where = f" (it works in {own.repo_name})" if own is not None else ""
    raise NotAllowed(
        f"Task {task.id} is the lane {lane.repo_name}@{lane.branch} of another repository than"
        f" {session.handle}'s{where}: a session posts, asks and hands off only in lanes of"
        " repositories it works in, so that it cannot wake sessions of other projects. Post"
        " to your own lane (leave task_id out); a human can add you to that task by"
        " addressing you there.",
        "list_tasks",
    )


def check_addable(store: Store, coordinator: Session, target: Session) -> None:
    """An agent coordinator adds to its chain only sessions of a repository it works in (a
    human coordinator adds anyone)."""
    if coordinator.agent == AgentKind.HUMAN or target.agent == AgentKind.HUMAN:
        return
    theirs = repos_of(store, target)
    if not theirs or theirs & repos_of(store, coordinator):
        return
    raise NotAllowed(
        f"{target.handle} works in another repository than {coordinator.handle}: an agent adds"
        " to its chain only sessions of repositories it works in, so that it cannot wake"
        " sessions of other projects. A human can add it (`colony-tasks chain add`)."
    )
