"""The actions a session takes on purpose: one function per use case, for every front end.

The MCP tools, the CLI and the viewer resolve *who* is acting (a :class:`Session`), call one
function here, and render what it returns; none of them routes, looks up handles or applies a
rule of its own. Each function delegates to the module that owns the concept (posts,
handoffs, claims, chains, delivery, tasks) and returns plain records with handles resolved.
The agent lifecycle events (what hooks call) are in :mod:`colony_tasks.usecases.events`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..base.errors import InvalidInput, NotFound
from ..base.kinds import ItemStatus, ObsKind, TaskStatus
from ..base.models import Observation, Record, Session, Task, WorkItem
from ..domain import chains, delivery, handoffs, planning, posts, tasks, wake, work
from ..domain import claims as claims_mod
from ..domain import sessions as sessions_mod
from ..domain.messages import Posted
from ..store import Store

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any, TypeVar

    T = TypeVar("T")

    from ..search import Hit, Searcher


class Outcome(Record):
    """What a post-like action stored: its id and kind, its author's handle, who it is for and
    whether it reached them. For an answer ``ok`` says whether it was the answer (False, with
    ``message``, when someone answered first and the text was kept as a note)."""

    id: int
    task_id: int | None
    kind: str
    author: str
    to: str | None = None
    recipients: Sequence[dict[str, Any]] = ()
    ok: bool | None = None
    message: str | None = None


def session_of(store: Store, ref: Session | str) -> Session:
    """Who is acting, resolved once, here at the edge: ``ref`` itself, or the session with that
    id or handle. The front ends pass the :class:`Session` they resolved; tests and scripts may
    pass an id or a handle. The domain takes only the :class:`Session`."""
    return ref if isinstance(ref, Session) else sessions_mod.find_session(store, ref)


def _outcome(store: Store, me: Session, posted: Posted) -> Outcome:
    recipients = wake.annotate(store, posted.id, posted.recipients)
    return Outcome(posted.id, posted.task_id, posted.kind, me.handle, posted.to, recipients)


def _stored(
    store: Store, me: Session, obs_id: int, ok: bool | None = None, message: str | None = None
) -> Outcome:
    obs = store.get_observation(obs_id)
    assert obs is not None
    recipients = wake.annotate(store, obs.id, store.recipients(obs.id))
    return Outcome(obs.id, obs.task_id, obs.kind, me.handle, obs.to, recipients, ok, message)


# -- thread ---------------------------------------------------------------------------------


def post(
    store: Store,
    me: Session | str,
    text: str,
    *,
    kind: str = ObsKind.NOTE,
    task_id: int | None = None,
    to: str | None = None,
    in_reply_to: int | None = None,
    urgent: bool = False,
) -> Outcome:
    """Post to a thread; ``kind="answer"`` with ``in_reply_to`` answers that question."""
    me = session_of(store, me)
    result = posts.post(
        store, me, text, task_id=task_id, kind=kind, to=to, in_reply_to=in_reply_to, urgent=urgent
    )
    if isinstance(result, posts.AnswerResult):
        return _stored(store, me, result.id, result.ok, result.message or None)
    return _outcome(store, me, result)


def ask(
    store: Store,
    me: Session | str,
    question: str,
    *,
    to: str | None = None,
    task_id: int | None = None,
    urgent: bool = False,
) -> Outcome:
    me = session_of(store, me)
    return _outcome(
        store, me, posts.ask(store, me, question, to=to, task_id=task_id, urgent=urgent)
    )


def answer(store: Store, me: Session | str, question_id: int, text: str) -> posts.AnswerResult:
    me = session_of(store, me)
    return posts.answer(store, me, question_id, text)


def withdraw(store: Store, me: Session | str, item_id: int) -> Outcome:
    """Withdraw your own pending question or handoff."""
    me = session_of(store, me)
    return _stored(store, me, posts.withdraw(store, me, item_id))


def hand_off(
    store: Store,
    me: Session | str,
    summary: str,
    *,
    to: str | None = None,
    files: Sequence[str] = (),
    task_id: int | None = None,
) -> Outcome:
    """Hand work off; only files you hold a claim on are handed over (``message`` names the
    rest)."""
    me = session_of(store, me)
    posted = handoffs.hand_off(store, me, summary, to=to, files=files, task_id=task_id)
    stored = store.get_observation(posted.id)
    skipped = stored.meta.get("skipped", []) if stored is not None else []
    note = handoffs.skipped_note(skipped)
    return _outcome(store, me, posted)._replace(ok=not skipped if files else None, message=note)


def accept_handoff(store: Store, me: Session | str, handoff_id: int) -> handoffs.Accepted:
    me = session_of(store, me)
    return handoffs.accept_handoff(store, me, handoff_id)


def record_decision(
    store: Store,
    me: Session | str,
    decision: str,
    *,
    rationale: str | None = None,
    task_id: int | None = None,
) -> Outcome:
    me = session_of(store, me)
    posted = posts.record_decision(store, me, decision, rationale=rationale, task_id=task_id)
    return _outcome(store, me, posted)


def report_blocker(
    store: Store,
    me: Session | str,
    blocker: str,
    *,
    waiting_on: str | None = None,
    task_id: int | None = None,
) -> Outcome:
    me = session_of(store, me)
    posted = posts.report_blocker(store, me, blocker, waiting_on=waiting_on, task_id=task_id)
    return _outcome(store, me, posted)


def resolve_blocker(
    store: Store, me: Session | str, blocker_id: int, note: str | None = None
) -> Outcome:
    me = session_of(store, me)
    return _outcome(store, me, posts.resolve_blocker(store, me, blocker_id, note))


# -- claims ---------------------------------------------------------------------------------


def claim(
    store: Store,
    me: Session | str,
    paths: Sequence[str],
    *,
    ttl_minutes: float = claims_mod.DEFAULT_TTL_MINUTES,
    note: str = "",
    task_id: int | None = None,
) -> claims_mod.ClaimResult:
    me = session_of(store, me)
    return claims_mod.claim(store, me, paths, ttl_minutes=ttl_minutes, note=note, task_id=task_id)


def release(
    store: Store, me: Session | str, paths: Sequence[str] | None = None
) -> list[dict[str, Any]]:
    me = session_of(store, me)
    return claims_mod.release(store, me, paths)


# -- chains ---------------------------------------------------------------------------------


def chain_create(store: Store, me: Session | str, name: str) -> chains.ChainView:
    me = session_of(store, me)
    return chains.view(store, chains.create(store, me, name))


def chain_add(
    store: Store, me: Session | str, chain_id: int, participant: str, prompt: str
) -> Outcome:
    """Coordinator: add a session and give it the turn (it receives the full history)."""
    me = session_of(store, me)
    return _outcome(store, me, chains.add(store, me, chain_id, participant, prompt))


def chain_pass(store: Store, me: Session | str, chain_id: int, to: str, prompt: str) -> Outcome:
    """Coordinator: give the turn, adding the session first when it is new to the chain."""
    me = session_of(store, me)
    return _outcome(store, me, chains.give_turn(store, me, chain_id, to, prompt))


def chain_say(store: Store, me: Session | str, chain_id: int, content: str) -> Outcome:
    """Post to a chain as the turn holder (the same rule as any post to it)."""
    me = session_of(store, me)
    chains.get_chain(store, chain_id)
    return post(store, me, content, task_id=chain_id)


def chain_close(store: Store, me: Session | str, chain_id: int) -> chains.ChainView:
    me = session_of(store, me)
    return chains.view(store, chains.close(store, me, chain_id))


def chain_show(store: Store, chain_id: int) -> tuple[chains.ChainView, list[Observation]]:
    """A chain (roles as handles) and its whole history with turn numbers."""
    chain = chains.get_chain(store, chain_id)
    return chains.view(store, chain), chains.history(store, chain_id)


# -- plans ----------------------------------------------------------------------------------


def plan_work(
    store: Store,
    me: Session | str,
    items: Sequence[dict[str, Any]],
    *,
    task_id: int | None = None,
) -> planning.Planned:
    """Add work items (``{title, files?, depends_on?, description?}``) to a task's plan."""
    me = session_of(store, me)
    return planning.plan(store, me, items, task_id=task_id)


def take_work(
    store: Store, me: Session | str, item_id: int | None = None, *, task_id: int | None = None
) -> work.Taken:
    """Take an item (default: the next ready one) and claim its files."""
    me = session_of(store, me)
    return work.take(store, me, item_id, task_id=task_id)


def finish_work(
    store: Store,
    me: Session | str,
    item_id: int,
    summary: str,
    *,
    state: str = "done",
    reason: str | None = None,
) -> work.Finished:
    me = session_of(store, me)
    return work.finish(store, me, item_id, summary, state=state, reason=reason)


def reassign_work(
    store: Store, me: Session | str, item_id: int, to: str | None, *, task_id: int | None = None
) -> WorkItem:
    """A human or the planner gives an item to another session (None: back to open); with
    ``task_id``, the item must be that task's."""
    me = session_of(store, me)
    return work.reassign(store, me, item_id, to, task_id=task_id)


def drop_work(
    store: Store,
    me: Session | str,
    item_id: int,
    reason: str | None = None,
    *,
    task_id: int | None = None,
) -> work.Finished:
    me = session_of(store, me)
    return work.drop(store, me, item_id, reason, task_id=task_id)


def plan_show(store: Store, task_id: int) -> work.Board:
    """A task's plan: items in order with owners, files, dependencies; ready and stale ids."""
    return work.board(store, task_id)


def lane_task_of(store: Store, cwd: str) -> Task:
    """The open lane task of the repository and branch at ``cwd`` (for a human's default)."""
    lane = sessions_mod.lane_for(store, cwd)
    task = store.open_lane_task(lane.id)
    if task is None:
        raise NotFound(
            f"The lane {lane.repo_name}@{lane.branch} has no open task yet; pass a task id.",
            "list_tasks",
        )
    return task


# -- reading --------------------------------------------------------------------------------


def updates_since(
    store: Store,
    me: Session | str,
    task_id: int | None = None,
    *,
    since_id: int | None = None,
    limit: int | None = None,
) -> delivery.Updates:
    me = session_of(store, me)
    return delivery.updates_since(store, me, task_id, since_id=since_id, limit=limit)


def timeline(
    store: Store,
    me: Session | None,
    task_id: int | None = None,
    *,
    limit: int = 30,
    before_id: int | None = None,
    around_id: int | None = None,
    kinds: Sequence[str] | None = None,
) -> tuple[Task, list[Observation]]:
    """A task's thread (default: the caller's lane task), oldest first. Reading never joins.

    ``around_id``: the items around that one (about half before, the rest after), where a
    search hit leads; ``before_id`` is then ignored.
    """
    if task_id is None:
        if me is None:
            raise InvalidInput("Pass task_id: without a session there is no lane task.")
        task = tasks.default_task(store, me)
    else:
        task = tasks.get_task(store, task_id)
    if around_id is not None:
        wanted = tuple(kinds) if kinds else tuple(ObsKind)
        before = store.timeline(task.id, limit=limit // 2 + 1, before_id=around_id + 1, kinds=kinds)
        after = store.observations_after(
            task.id, around_id, kinds=wanted, limit=limit - len(before)
        )
        return task, before + after
    return task, store.timeline(task.id, limit=limit, before_id=before_id, kinds=kinds)


def task_list(
    store: Store, *, status: str = TaskStatus.OPEN, limit: int = 50
) -> list[dict[str, Any]]:
    """Tasks with their lane and last activity; ``plan`` counts items per state (or None)."""
    rows = tasks.list_tasks(store, status=status, limit=limit)
    counts = store.work_counts([row["id"] for row in rows])
    for row in rows:
        row["plan"] = counts.get(row["id"])
    return rows


def show_task(store: Store, task_id: int) -> dict[str, Any]:
    """A task's open state: pending questions and handoffs, open blockers, decisions, claims,
    undelivered items; chain roles as handles."""
    task = tasks.get_task(store, task_id)
    lane = store.get_lane(task.lane_id) if task.lane_id else None
    return {
        "task": task,
        "lane": lane,
        "coordinator": tasks.handle_of(store, task.coordinator),
        "turn_holder": tasks.handle_of(store, task.turn_holder),
        "participants": store.participants(task.id),
        "questions": store.open_items(
            kinds=(ObsKind.QUESTION,), statuses=(ItemStatus.PENDING,), task_ids=[task.id]
        ),
        "handoffs": store.open_items(
            kinds=(ObsKind.HANDOFF,), statuses=(ItemStatus.PENDING,), task_ids=[task.id]
        ),
        "blockers": store.open_items(
            kinds=(ObsKind.BLOCKER,), statuses=(ItemStatus.OPEN,), task_ids=[task.id]
        ),
        "decisions": store.timeline(task.id, limit=10, kinds=(ObsKind.DECISION,)),
        "claims": claims_mod.list_live(store, repo_id=lane.repo_id) if lane else [],
        "undelivered": store.undelivered_in_task(task.id),
    }


def search(
    searcher: Searcher,
    query: str | Sequence[str],
    *,
    limit: int = 20,
    task_id: int | None = None,
    kinds: Sequence[str] | None = None,
    semantic: bool | None = None,
) -> list[Hit]:
    """Search everything recorded for one phrasing or several (fused by reciprocal rank);
    one searcher per process keeps its vector index warm."""
    from ..search import find

    queries = [query] if isinstance(query, str) else list(query)
    return find(
        searcher.store,
        queries,
        limit=limit,
        task_id=task_id,
        kinds=kinds,
        semantic=semantic,
        searcher=searcher,
    )


def human(store: Store, name: str | None, cwd: str) -> Session:
    """The session a human at the CLI or in the viewer acts as (one per name); refused inside
    an agent's process tree (:func:`colony_tasks.domain.authority.human`)."""
    from ..domain import authority

    return authority.human(store, name, cwd)


def cli_actor(store: Store, name: str | None, cwd: str) -> Session:
    """The session a CLI command acts as: inside an agent's process tree (an agent's shell
    tool ran it), that agent's session whatever ``--as`` names; a human's session otherwise
    (:func:`colony_tasks.domain.authority.cli_actor`)."""
    from ..domain import authority

    return authority.cli_actor(store, name, cwd)


def acting(store: Store, who: Callable[[], Session], act: Callable[[Session], T]) -> T:
    """``act(who())``: registering the actor and the action commit together, so an action the
    core refuses (a typo'd id, a chain turn not held) leaves no participant behind — a
    mistyped ``--as`` name is not a permanent member of the thread."""
    with store.transaction():
        return act(who())


def as_human(store: Store, name: str | None, cwd: str, act: Callable[[Session], T]) -> T:
    """``act(session)`` as the CLI's actor (:func:`cli_actor`: the human ``name``, or the agent
    whose shell ran the command), in one transaction with it (:func:`acting`)."""
    return acting(store, lambda: cli_actor(store, name, cwd), act)
