"""How a session is doing — online, idle, waiting on its human, cut off, ended — one rule for
briefings, ``sessions``, claims, work items and the viewer (:func:`of`, :func:`quiet`).

A session that has not acted for :data:`QUIET_AFTER` is **idle**: its claims and taken work
items count as stale (shown so, not a collision, not denied in block mode, takeable with a
note). Before that it is **online**.

What a live session is doing when it is not acting: waiting on its human, or cut off.

A session says so through its agent's events (see :mod:`colony_tasks.usecases.events`): Claude Code's
``Notification`` with ``idle_prompt`` or ``permission_prompt`` means the agent asked its human
and waits (``waiting = "human"``); ``StopFailure`` means the model API refused it — a rate
limit, an overloaded API, a billing error — and it cannot act until its human resumes it
(``waiting = "cut-off:<error>"``). Any later event of the session clears the state.

The rule for a cut-off session's holdings, in one place:

- at once, its claims and taken work items count as **stale** (as if it had been quiet for
  :data:`QUIET_AFTER`): they are shown as stale, are not a collision,
  and are not denied in block mode;
- its claims **expire** :data:`CUT_OFF_GRACE` later (their expiry is brought forward when it is
  cut off); if it comes back first, the claims it still holds run to that time, and its next
  edits claim their files again;
- after the same grace period, anyone may **take** its taken work items
  (``take_work(item_id=N)``); the item moves to the taker with its files.
"""

from __future__ import annotations

from ..base.kinds import Presence
from ..base.redact import redact

# Quiet this long (seconds since its last event), a session is idle and what it holds is stale.
QUIET_AFTER = 30 * 60
HUMAN = "human"
CUT_OFF = "cut-off:"
CUT_OFF_GRACE = 10 * 60


def cut_off(error: str) -> str:
    """The ``waiting`` value of a session cut off by ``error`` (``rate_limit``, ...): its first
    40 characters, punctuation dropped. The error is redacted first, whole: a secret cut short
    or stripped of its punctuation is one the rules can no longer read."""
    word = "".join(ch for ch in redact(error or "error")[:40] if ch.isalnum() or ch in "_-.")
    return CUT_OFF + (word or "error")


def is_cut_off(waiting: str | None) -> bool:
    return bool(waiting) and str(waiting).startswith(CUT_OFF)


def takeable(waiting: str | None, since: float | None, now: float) -> bool:
    """Whether what a cut-off session holds may be taken: its grace period has passed."""
    return is_cut_off(waiting) and since is not None and now - since >= CUT_OFF_GRACE


def describe(waiting: str | None, since: float | None, now: float | None = None) -> str:
    """``waiting on its human (3m ago)`` / ``cut off: rate_limit (just now)``, '' when acting."""
    if not waiting:
        return ""
    from ..base.text import ago  # only where a session is shown: tool hooks skip its import

    when = f" ({ago(since, now)})" if since is not None else ""
    if waiting == HUMAN:
        return f"waiting on its human{when}"
    if is_cut_off(waiting):
        return f"cut off: {waiting[len(CUT_OFF) :]}{when}"
    return f"{waiting}{when}"


def quiet(last_seen_at: float | None, waiting: str | None, now: float) -> bool:
    """Whether what a live session holds is stale: quiet past :data:`QUIET_AFTER`, or cut off."""
    return last_seen_at is None or now - last_seen_at > QUIET_AFTER or is_cut_off(waiting)


def of(
    ended_at: float | None, waiting: str | None, last_seen_at: float | None, now: float
) -> Presence:
    """A session's presence (the fields of :class:`colony_tasks.base.models.Session`)."""
    if ended_at is not None:
        return Presence.ENDED
    if waiting == HUMAN:
        return Presence.WAITING
    if is_cut_off(waiting):
        return Presence.CUT_OFF
    return Presence.IDLE if quiet(last_seen_at, waiting, now) else Presence.ONLINE
