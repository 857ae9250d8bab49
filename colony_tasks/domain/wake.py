"""Waking an idle session: what wakes it, delivered exactly once, and its sender told.

Everything else is delivered on the recipient's own next hook. A few items should not wait for
a session that has finished its turn and idles until its human types again:

- a question or handoff addressed to the session (by handle or by agent kind),
- a chain turn passed to it,
- an interface-change notice for its files,
- a post marked urgent (to its lane, or to it).

Never ordinary chatter: broadcast notes, decisions and answers wait for the next turn.

Two levers reach an idle session. Claude Code runs a background Stop handler
(``colony-tasks hook wait``) that holds a wait in the relay and wakes the session when such an
item arrives (:func:`claim`, called by the relay). The agents of :data:`STOP_GATED` (Codex,
Gemini CLI, Qwen Code, Copilot CLI) run their Stop hooks only synchronously, but a Stop hook's
answer can keep the turn going: their Stop is gated instead (:func:`stop_gate`): with an
*urgent* item pending the session does not stop, and the item becomes its next prompt, at most
:data:`MAX_STOP_BLOCKS` stops in a row.

Either way the items are claimed with the same mark the hooks' mid-turn delivery uses
(``recipients.state``, in one transaction), so a wake and the next hook never both deliver one.
The mark records how (``via``): the sender is told once, in its next hook, that its item woke
its recipient (:func:`sender_news`); at posting time it is told whether its recipient idles
and is being woken or will see it at its next turn (:func:`recipient_status`). A recipient
that ended first is today's undeliverable rule: the sender is told to re-address it to the lane.

Waking is bounded. A recipient is woken (or kept from stopping) at most
:data:`PER_MINUTE` times a minute, and by one sender's items at most :data:`PER_SENDER_PER_MINUTE`
times (settings ``wake.per_minute``, ``wake.per_sender_per_minute``; :func:`may_wake`). An item
over the limit is never dropped: only its wake is withheld, and it is delivered at the
recipient's next turn, or by a later wake once the minute has passed. Every item that wakes
counts toward the loop guard whatever its kind (:func:`colony_tasks.domain.messages.check_loop_guard`),
and the prompt a woken turn starts with is not a human's (:func:`woken_turn`): it resets nothing.
Who may wake whom at all is :mod:`colony_tasks.domain.scope` (lanes of repositories one works in).

Waking is on by default; ``settings.json`` turns it off for the user (``{"wake": {"enabled":
false}}``) or for some repositories (``{"wake": {"off_repos": ["~/src/shop", ...]}}``: a work
tree's folder, its repository's name or identity).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any

from ..base import settings
from ..base.kinds import AgentKind, ObsKind
from ..base.models import Observation, Record, Session
from ..store import Store
from . import delivery

#: Kinds that wake their recipient when addressed to it (a handle or an agent kind).
DIRECTED = (ObsKind.QUESTION, ObsKind.HANDOFF, ObsKind.TURN)
#: Kinds that wake every recipient (they are only ever addressed to the sessions they concern).
ALWAYS = (ObsKind.INTERFACE,)
#: The agents whose Stop hook can keep the session working (Codex's Stop, Gemini CLI's
#: AfterAgent, Qwen Code's Stop, Copilot CLI's agentStop: the answer's reason becomes the next
#: prompt): their stops are gated (:func:`stop_gate`).
STOP_GATED = (AgentKind.CODEX, AgentKind.GEMINI, AgentKind.QWEN, AgentKind.COPILOT)
#: How many stops in a row the stop gate holds back before it lets the session stop.
MAX_STOP_BLOCKS = 3
#: Default wake budgets: wakes of one recipient, and by one sender's items, per :data:`WINDOW`.
PER_MINUTE = 4
PER_SENDER_PER_MINUTE = 2
WINDOW = 60.0
VIA_WAKE = "wake"
VIA_STOP = "stop"
PREFIX = "colony-tasks"


def enabled(store: Store, session: Session) -> bool:
    """Whether ``session`` may be woken: the user's setting, then its repository's."""
    wanted = settings.load().get("wake", {})
    if wanted.get("enabled") is False:
        return False
    off = wanted.get("off_repos")
    if not isinstance(off, list) or not off or session.lane_id is None:
        return True
    lane = store.get_lane(session.lane_id)
    if lane is None:
        return True
    names = {lane.root, lane.repo_id, lane.repo_name}
    for entry in off:
        if (
            isinstance(entry, str)
            and entry
            and (entry in names or os.path.realpath(os.path.expanduser(entry)) == lane.root)
        ):
            return False
    return True


def budgets() -> tuple[int, int]:
    """(wakes per minute of one recipient, of one recipient by one sender's items): the
    settings ``wake.per_minute`` and ``wake.per_sender_per_minute`` (whole numbers, 0: never),
    else the defaults."""
    wanted = settings.load().get("wake", {})
    found = [wanted.get("per_minute"), wanted.get("per_sender_per_minute")]
    defaults = (PER_MINUTE, PER_SENDER_PER_MINUTE)
    chosen = [v if type(v) is int and v >= 0 else d for v, d in zip(found, defaults, strict=True)]
    return chosen[0], chosen[1]


def may_wake(store: Store, session_id: str, items: Sequence[Observation]) -> bool:
    """Whether waking ``session_id`` for ``items`` now keeps within its budgets: it was woken
    fewer than ``per_minute`` times in the last minute, and one of the items comes from a
    sender whose items woke it fewer than ``per_sender_per_minute`` times (the others ride
    along: they would be delivered at its next turn anyway). An item from a human wakes it
    whatever the budgets (they bound agents waking agents, the loop the guard stops)."""
    senders = {o.session_id for o in items}
    if any(_from_human(store, sender) for sender in senders):
        return True  # the budgets bound agents waking agents; a human's word always wakes
    per_recipient, per_sender = budgets()
    since = store.now() - WINDOW
    if store.wakes_since(session_id, since) >= per_recipient:
        return False
    return any(
        sender is None or store.wakes_since(session_id, since, sender=sender) < per_sender
        for sender in senders
    )


def _from_human(store: Store, sender: str | None) -> bool:
    """Whether ``sender`` is a human's session (the CLI or the viewer, never inside an agent's
    process tree: :mod:`colony_tasks.domain.authority`)."""
    if sender is None:
        return False
    session = store.get_session(sender)
    return session is not None and session.agent == AgentKind.HUMAN


def woken_turn(store: Store, session: Session | None) -> bool:
    """Whether the session's event now (a prompt) is its first since it was woken or kept
    from stopping: the prompt its woken turn starts with, colony-tasks' own words, not its
    human's. ``session`` as read before the event refreshes it (None: not known yet)."""
    return session is not None and store.woken_after(session.id, session.last_seen_at)


def pending(store: Store, session_id: str) -> list[Observation]:
    """The undelivered items that would wake this session, oldest first (nothing claimed)."""
    return store.pending_wake(session_id, DIRECTED, ALWAYS)


def ready(store: Store, session_ids: Iterable[str]) -> dict[str, bool]:
    """For many waiting sessions in one query: ``{session_id: ended}`` for each that ended or
    has an item that wakes it within its budgets (:func:`may_wake`). The relay asks this for
    all its waiters at once; only sessions with such an item cost a query more."""
    found = store.sessions_to_wake(list(session_ids), DIRECTED, ALWAYS)
    return {
        sid: ended
        for sid, ended in found.items()
        if ended or may_wake(store, sid, pending(store, sid))
    }


def claim(
    store: Store, session_id: str, *, via: str = VIA_WAKE, urgent_only: bool = False
) -> list[Observation]:
    """Take the items that wake this session, marked delivered (``via``) in one transaction:
    whoever claims first — this, or the session's own next hook — delivers, never both.
    ``urgent_only``: only urgent items (the stop gate). Nothing when the session's wake
    budgets are spent (:func:`may_wake`): the items wait for its next turn."""

    def found() -> list[Observation]:
        items = pending(store, session_id)
        return [o for o in items if o.urgent] if urgent_only else items

    if not found():  # a read first: most stops have nothing, and take no write lock
        return []
    with store.transaction():
        session = store.get_session(session_id)
        if session is None or session.ended_at is not None:
            return []
        items = found()
        if not items or not may_wake(store, session_id, items):
            return []
        store.mark_delivered(session_id, [o.id for o in items], via=via)
        delivery.after_directed(store, session, items)
    return items


def hold(store: Store, session_id: str, held: bool) -> None:
    """The relay holds (or no longer holds) a wake wait for this session: senders are told
    it idles and is woken at once."""
    store.set_wake_since(session_id, store.now() if held else None)


class Gate(Record):
    """What the Stop gate decided: ``items`` (urgent, now delivered) keep the session
    working — they become its next prompt — and ``last`` says this is the last hold in a row;
    ``unread`` urgent items wait for its next prompt because its stop was held back
    :data:`MAX_STOP_BLOCKS` times already (its human is told). Empty: let it stop."""

    items: tuple[Observation, ...] = ()
    last: bool = False
    unread: int = 0


def stop_gate(store: Store, me: Session, active: bool) -> Gate:
    """The Stop of an agent of :data:`STOP_GATED`: keep the session working with its urgent items (which become its next
    prompt and count as delivered), or let it stop.

    ``active``: this stop follows one the gate held back (the agent's ``stop_hook_active``). After
    :data:`MAX_STOP_BLOCKS` in a row the session stops; what is left waits for its next prompt,
    and the human is told so. Non-urgent items never hold a stop."""
    if me.agent not in STOP_GATED:
        return Gate()
    blocks = store.stop_blocks(me.id) if active else 0
    if blocks >= MAX_STOP_BLOCKS:
        store.set_stop_blocks(me.id, 0)
        return Gate(unread=len([o for o in pending(store, me.id) if o.urgent]))
    if not enabled(store, me):
        return Gate()
    items = claim(store, me.id, via=VIA_STOP, urgent_only=True)
    if not items:
        if blocks:
            store.set_stop_blocks(me.id, 0)
        return Gate()
    store.set_stop_blocks(me.id, blocks + 1)
    return Gate(tuple(items), last=blocks + 1 >= MAX_STOP_BLOCKS)


def woken(store: Store, me: Session, *, untold: bool | None = None) -> tuple[dict[str, Any], ...]:
    """Once per item: which of this session's items woke their idle recipient or kept it from
    stopping (``observation_id``, ``kind``, ``via``, ``recipient_handle``; shown in its next
    hook, next to the undeliverable notice). ``untold``: whether any is not told yet, when
    the caller already asked (``store.inbox``)."""
    if not (store.inbox(me.id, directed=False).woken if untold is None else untold):
        return ()
    return tuple(store.woken_for_sender(me.id))


def recipient_status(store: Store, obs: Observation | None, recipient: dict[str, Any]) -> str:
    """For the sender, per recipient of ``obs``: ``woke`` / ``kept from stopping`` (it was
    delivered so), ``delivered``, ``waking`` (it idles with a wake wait held: it is woken
    now; ``next turn (wake limit reached)`` when its wake budgets are spent), ``before it
    stops`` (an urgent item to an agent of :data:`STOP_GATED`), ``next turn`` (it sees it at its
    next hook), or ``ended: re-address it to the lane``."""
    state = recipient.get("state")
    if state == "delivered":
        via = recipient.get("via")
        if via == VIA_WAKE:
            return "woke"
        return "kept from stopping" if via == VIA_STOP else "delivered"
    if state in ("undeliverable", "undeliverable-reported"):
        return "ended: re-address it to the lane"
    if obs is None or not wakes(obs):
        return "next turn"
    if recipient.get("wake_since") is not None:
        held = not may_wake(store, str(recipient.get("session_id")), [obs])
        return "next turn (wake limit reached)" if held else "waking"
    if recipient.get("agent") in STOP_GATED and obs.urgent:
        return "next hook, or before it stops"
    return "next turn"


def annotate(
    store: Store, obs_id: int, recipients: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The recipient rows of a posted item, each with ``wake``: its :func:`recipient_status`."""
    obs = store.get_observation(obs_id)
    return [{**r, "wake": recipient_status(store, obs, r)} for r in recipients]


def wakes(obs: Observation) -> bool:
    """Whether ``obs`` wakes its recipients (the rule of this module, for one item)."""
    return obs.urgent or obs.kind in ALWAYS or (obs.to is not None and obs.kind in DIRECTED)
