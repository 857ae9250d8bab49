"""What the hooks inject into an agent's context: small, delta-based, actionable.

:func:`render` turns an event's :class:`colony_tasks.usecases.events.Result` into that text; the
functions below render one part each, reading what else they show (others' claims, the plan,
authors) from the store, with the plan block in :mod:`.plan`, the warnings about held files in
:mod:`.conflicts` and how sessions are named in :mod:`.names`. Every block ends with the exact
next call. Standard library only.
"""

from __future__ import annotations

from ..base.kinds import MESSAGE_KINDS, ObsKind
from ..base.models import Observation, Session, who_for
from ..base.text import ago, clip, fence, one_line
from ..domain import claims as claims_mod
from ..domain import delivery, presence, wake
from ..domain.sessions import Joined
from ..store import Store
from .conflicts import conflict_warning, overlap_warning, read_note
from .lines import PREFIX, author_whos, item_line, named, who_part, with_who
from .plan import plan_lines

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..usecases.events import Result

TOOLS_LINE = (
    "Tools (MCP colony-tasks): claim_file, ask_question, answer_question, hand_off, "
    "accept_handoff, record_decision, report_blocker, task_updates_since, search."
)
MAX_ITEMS = delivery.NEWS_ITEMS
# A chain turn block: the history a session needs with its turn (chains.py owns the rules).
HISTORY_ITEMS = 40
HISTORY_CHARS = 400
CHAIN_KINDS = (*MESSAGE_KINDS, ObsKind.TURN, ObsKind.GUARD)
# The briefing's bounds: holders and patterns per holder in the claims line, waiting items.
MAX_HOLDERS = 5
MAX_PATTERNS = 4
MAX_WAITING = 5
BRIEF_ITEM_CHARS = 140
# An item's line in news and mid-turn deliveries: characters at most.
ITEM_CHARS = 200
# A re-brief after compaction or /clear, and a subagent's brief: their whole budget in
# characters (they replace what the model lost, so they stay smaller than a full briefing).
REBRIEF_CHARS = 1200
SUBAGENT_CHARS = 600
REBRIEF_LINE = 240
SHORT_TOOLS_LINE = "Tools (MCP colony-tasks): claim_file, ask_question, task_updates_since."
# An interface change line: changes listed and importing files named, at most.
MAX_INTERFACE_CHANGES = 3
MAX_INTERFACE_FILES = 3


def next_call(obs: Observation, me: Session) -> str:
    """The exact call that acts on an item addressed to ``me``, or ''."""
    if obs.kind == "question" and obs.status == "pending" and obs.session_id != me.id:
        return f' → answer_question(question_id={obs.id}, answer="...")'
    if obs.kind == "handoff" and obs.status == "pending" and obs.session_id != me.id:
        return f" → accept_handoff(handoff_id={obs.id})"
    return ""


def _line(
    obs: Observation,
    me: Session,
    now: float,
    store: Store | None = None,
    *,
    limit: int = ITEM_CHARS,
) -> str:
    if store is not None and obs.kind == "turn" and obs.to in (me.handle, me.id):
        return turn_block(store, me, obs)
    if obs.kind == "interface" and me.id in (obs.meta.get("importers") or {}):
        return interface_line(obs, me, now)
    line = item_line(obs, now=now, limit=limit)
    if obs.to and obs.to in (me.handle, me.id):
        line = line.replace(f" → {obs.to}", " → you", 1)
    if obs.kind == "edit":
        line += " (a file you touched)"
    return line + next_call(obs, me)


def interface_line(obs: Observation, me: Session, now: float) -> str:
    """``src/api.py changed get_user(user_id) → get_user(user_id, *, org) (codex-91bc, 2m ago);
    you import it in src/viewer.py`` — one line for a recipient of an interface change."""
    meta = obs.meta
    changes = [str(c) for c in meta.get("changes") or []]
    shown = "; ".join(changes[:MAX_INTERFACE_CHANGES])
    if len(changes) > MAX_INTERFACE_CHANGES:
        shown += f"; and {len(changes) - MAX_INTERFACE_CHANGES} more"
    path = meta.get("path") or "?"
    who = obs.handle or obs.session_id or "?"
    when = ago(meta.get("edited_at") or obs.created_at, now)
    uses = []
    for entry in (meta.get("importers") or {}).get(me.id, [])[:MAX_INTERFACE_FILES]:
        src, via = (entry + [None])[:2] if isinstance(entry, list) else (entry, None)
        uses.append(src if not via or via == path else f"{src} (through {via})")
    line = f"{path} changed {shown} ({who}, {when}); you import it in {', '.join(uses)}"
    return clip(line, 2 * ITEM_CHARS)


def briefing(store: Store, joined: Joined) -> str:
    """SessionStart: who is here, their claims, what waits on this session."""
    me, task = joined.session, joined.task
    head = f"{PREFIX}: you are {me.handle} on task #{task.id} {one_line(task.title)}."
    from ..domain import identity  # here: only a session's first briefing shows its credential

    cred = identity.credential(store, me)
    if cred:  # shown only here, in this session's own context (colony_tasks.domain.identity)
        head += f' Your session_id, if a colony tool asks for one: "{cred}".'
    state = state_lines(store, joined)
    if not state:
        return f"{head} Nobody else is here yet. {TOOLS_LINE}"
    return "\n".join([head, *state, TOOLS_LINE])


def state_lines(store: Store, joined: Joined) -> list[str]:
    """The lane's state as a session needs it: others and how recently active, their live
    claims, what waits on this session, open blockers and the plan; [] when there is no
    one else, nothing waiting and no plan."""
    me, task, lane = joined.session, joined.task, joined.lane
    now = store.now()
    others = [p for p in store.participants(task.id) if p.id != me.id and p.ended_at is None]
    pending = delivery.pending_for(store, me)
    blockers = store.open_items(kinds=("blocker",), statuses=("open",), task_ids=[task.id])
    planned = plan_lines(store, task, me, now)
    if not others and not pending and not blockers and not planned:
        return []
    lines = []
    if others:
        lines.append(
            "Others: "
            + ", ".join(
                f"{p.handle} ({p.agent}, {who_part(p, me)}"
                + (
                    presence.describe(p.waiting, p.waiting_since, now)
                    or f"active {ago(p.last_seen_at, now)}"
                )
                + ")"
                for p in others[:8]
            )
            + (f" and {len(others) - 8} more" if len(others) > 8 else "")
        )
    held = [
        c for c in claims_mod.list_live(store, repo_id=lane.repo_id) if c["session_id"] != me.id
    ]
    live = [c for c in held if c["state"] != "expired"]
    if live:
        by_holder: dict[str, list[str]] = {}
        for c in live:
            tag = "" if c["state"] == "live" else f" [{c['state']}]"
            branch = "" if c["branch"] == lane.branch else f" @{c['branch']}"
            holder = named(c["holder"], who_for(c["who"], me))
            by_holder.setdefault(holder, []).append(one_line(f"{c['pattern']}{branch}{tag}"))
        shown = list(by_holder.items())[:MAX_HOLDERS]
        more = len(by_holder) - len(shown)
        lines.append(
            "Claims: "
            + "; ".join(
                f"{h} holds {', '.join(p[:MAX_PATTERNS])}"
                + (f" (+{len(p) - MAX_PATTERNS})" if len(p) > MAX_PATTERNS else "")
                for h, p in shown
            )
            + (f"; and {more} more holders — see task_timeline()" if more else "")
        )
    if pending:
        lines.append("Waiting on you:")
        lines.extend(
            f"- {_line(o, me, now, limit=BRIEF_ITEM_CHARS)}" for o in pending[:MAX_WAITING]
        )
        if len(pending) > MAX_WAITING:
            lines.append(f"- … and {len(pending) - MAX_WAITING} more — task_updates_since()")
    if blockers:
        lines.append(
            "Open blockers: "
            + "; ".join(f"#{b.id} {b.handle}: {clip(b.text, 80)}" for b in blockers[:3])
        )
    lines.extend(planned)
    return lines


def fit(head: str, lines: Sequence[str], tail: str, budget: int, more: str) -> str:
    """``head``, as many of ``lines`` (in order, each clipped to :data:`REBRIEF_LINE`) as fit
    within ``budget`` characters together with ``tail``, and ``more`` in place of the rest."""
    out = [head]
    used = len(head) + 1 + len(tail)
    rest = [clip(line, REBRIEF_LINE) for line in lines]
    for index, line in enumerate(rest):
        reserve = len(more) + 1 if index < len(rest) - 1 else 0
        if used + len(line) + 1 + reserve > budget:
            out.append(more)
            break
        out.append(line)
        used += len(line) + 1
    if tail:
        out.append(tail)
    return "\n".join(out)[:budget]


def _own_claims(store: Store, me: Session, lane_repo: str) -> str | None:
    mine = [
        one_line(c["pattern"])
        for c in claims_mod.list_live(store, repo_id=lane_repo)
        if c["session_id"] == me.id and c["state"] != "expired"
    ]
    if not mine:
        return None
    shown = ", ".join(mine[:MAX_PATTERNS]) + (
        f" (+{len(mine) - MAX_PATTERNS})" if len(mine) > MAX_PATTERNS else ""
    )
    return f"You hold: {shown}."


def rebrief(store: Store, joined: Joined, groups: Sequence[delivery.Updates]) -> str:
    """SessionStart after compaction or /clear: the model lost its briefing and what it was
    told since. What it needs now (its own claims, what waits on it, others and their claims,
    the plan) and what is new since it was last told, within :data:`REBRIEF_CHARS`: news and
    what waits on it first, then the state, then the tools."""
    me, task, lane = joined.session, joined.task, joined.lane
    now = store.now()
    head = (
        f"{PREFIX} (re-brief: your context was reset): you are {me.handle}"
        f" on task #{task.id} {clip(task.title, 80)}."
    )
    from ..domain import identity

    cred = identity.credential(store, me)
    if cred:
        head += f' Your session_id for colony tools: "{cred}".'
    state = state_lines(store, joined)
    items = [o for u in groups for o in u.items]
    remaining = sum(u.remaining for u in groups)
    news: list[str] = []
    if items:
        whos = author_whos(store, me, items[:MAX_ITEMS])
        news.append("New since you were last told:")
        news.extend(with_who(_line(o, me, now, store), o, whos) for o in items[:MAX_ITEMS])
        if remaining:
            news.append(f"… and {remaining} more — task_updates_since(task_id={task.id})")
    own = _own_claims(store, me, lane.repo_id)
    lines = ([own] if own else []) + news + state
    if not lines:
        lines = ["Nothing new, nobody else here."]
    return fit(head, lines, TOOLS_LINE, REBRIEF_CHARS, f"… more: task_timeline(task_id={task.id})")


def subagent_brief(store: Store, parent: Session, agent_type: str) -> str:
    """SubagentStart: a few lines for a subagent of ``parent`` (it has no session or handle
    of its own): who holds which files in the lane, and to leave coordination to its parent.
    Within :data:`SUBAGENT_CHARS`."""
    lane = store.get_lane(parent.lane_id) if parent.lane_id else None
    head = (
        f"{PREFIX}: you are a subagent ({clip(agent_type, 40)}) of {parent.handle}; other agents "
        "share this repository."
    )
    lines: list[str] = []
    if lane is not None:
        held: dict[str, list[str]] = {}
        for c in claims_mod.list_live(store, repo_id=lane.repo_id):
            if c["session_id"] != parent.id and c["state"] == "live":
                held.setdefault(c["holder"], []).append(one_line(c["pattern"]))
        for holder, patterns in list(held.items())[:MAX_HOLDERS]:
            lines.append(f"{holder} holds {', '.join(patterns[:MAX_PATTERNS])}.")
        if held:
            lines.append("Do not edit files others hold; report them to your parent instead.")
    if not lines:
        return f"{head} No files are held by others."
    return fit(head, lines, "", SUBAGENT_CHARS, "… more held files: task_timeline().")


def delta(store: Store, me: Session, groups: Sequence[delivery.Updates]) -> str | None:
    """UserPromptSubmit: what is new since the last turn, or None when nothing is."""
    items = [(u.task_id, o) for u in groups for o in u.items]
    remaining = sum(u.remaining for u in groups)
    if not items:
        return None
    now = store.now()
    tasks = sorted({t for t, _ in items})
    head = f"{PREFIX} — since your last turn (task {', '.join(f'#{t}' for t in tasks)}):"
    shown = [o for _, o in items[:MAX_ITEMS]]
    whos = author_whos(store, me, shown)
    lines = [head, *(with_who(_line(o, me, now, store), o, whos) for o in shown)]
    extra = remaining + max(0, len(items) - MAX_ITEMS)
    if extra:
        first = tasks[0]
        lines.append(f"… and {extra} more — call task_updates_since(task_id={first})")
    return "\n".join(lines)


def mid_turn(store: Store, me: Session, items: Sequence[Observation]) -> str | None:
    """PostToolUse: items addressed to this session or urgent, delivered right away."""
    if not items:
        return None
    now = store.now()
    whos = author_whos(store, me, items[:MAX_ITEMS])
    body = [with_who(_line(o, me, now, store), o, whos) for o in items[:MAX_ITEMS]]
    # A chain turn block carries its own header; a second one would only cost tokens.
    only_turns = all(o.kind == "turn" and o.to in (me.handle, me.id) for o in items)
    lines = body if only_turns else [f"{PREFIX} — for you now:", *body]
    if len(items) > MAX_ITEMS:
        lines.append(f"… and {len(items) - MAX_ITEMS} more — call task_updates_since()")
    return "\n".join(lines)


def undeliverable(rows: Sequence[dict]) -> str | None:
    """Directed items this session sent that can no longer reach their recipient."""
    if not rows:
        return None
    lines = [f"{PREFIX}: not delivered (the recipient's session ended first):"]
    for row in rows[:MAX_ITEMS]:
        lines.append(
            f"#{row['observation_id']} {row['kind']} to {one_line(row['recipient_handle'])}: "
            f'{clip(row["text"], 120)} → re-address it, e.g. ask_question(to="any", ...)'
        )
    return "\n".join(lines)


def turn_block(store: Store, me: Session, turn: Observation) -> str:
    """The one block a session receives with its turn: the history it needs, then the prompt."""
    since = int(turn.meta.get("since") or 0)
    chain_id = int(turn.task_id or 0)
    items = [
        o
        for o in store.observations_after(chain_id, since, kinds=CHAIN_KINDS, limit=100_000)
        if o.id < turn.id
    ]
    task = store.get_task(chain_id)
    if task is None:
        return ""
    what = "the full history" if since == 0 else "what was said since you last spoke"
    title = clip(task.title, HISTORY_CHARS)
    lines = [f"colony-tasks — chain #{task.id} “{title}”: it is your turn ({what}):"]
    skipped = max(0, len(items) - HISTORY_ITEMS)
    if skipped:
        lines.append(f"… {skipped} earlier messages — task_timeline(task_id={task.id})")
    for obs in items[skipped:]:
        lines.append(f"  [turn {obs.turn}] {item_line(obs, limit=HISTORY_CHARS)}")
    sender = one_line(str(turn.meta.get("from") or turn.handle))
    lines.append(f"Prompt from {sender}: {clip(turn.text, 2000)}")
    lines.append(
        f'Reply with chain_say(chain_id={task.id}, content="..."); the turn then returns'
        " to the coordinator."
    )
    return "\n".join(lines)


# -- an event's result, rendered --

DENIED = "(claims.mode is block: this edit was denied.)"


def render(store: Store, result: Result) -> tuple[str | None, str | None]:
    """The text an event's result gives the agent, and the reason its tool call is denied
    (both None when there is nothing to say)."""
    me = result.session
    if me is None:
        return None, None
    if result.joined is not None:
        if result.rebrief:
            return fence(rebrief(store, result.joined, result.updates)), None
        return fence(briefing(store, result.joined)), None
    if result.subagent is not None:
        return fence(subagent_brief(store, me, result.subagent)), None
    now = store.now()
    warnings = (
        conflict_warning(result.conflicts, after=result.after, now=now),
        overlap_warning(result.overlaps),
    )
    warning = "\n".join(w for w in warnings if w) or None
    if result.deny and warning:
        return None, fence(f"{warning}\n{DENIED}")
    if result.gate is not None:
        notice = stop_notice(me, result.gate)
        return (fence(notice) if notice else None), None
    parts = [
        delta(store, me, result.updates),
        *(read_note(n.path, n.holder, n.decision, now) for n in result.read_notes),
        warning,
        mid_turn(store, me, result.delivered),
        woke(result.woken),
        undeliverable(result.undeliverable),
    ]
    text = "\n\n".join(p for p in parts if p)
    return fence(text) or None, None


def wake_text(store: Store, session_id: str, items: Sequence[Observation]) -> str:
    """What a woken session reads: the items as its mid-turn delivery shows them."""
    session = store.get_session(session_id)
    if session is None or not items:
        return ""
    return fence(mid_turn(store, session, items))


#: How a queued wake names each kind of item (see :func:`wake_note`).
WAKE_WORDS: dict[str, str] = {
    ObsKind.QUESTION: "asked you a question",
    ObsKind.HANDOFF: "handed you work",
    ObsKind.TURN: "passed you a chain turn",
    ObsKind.INTERFACE: "changed an interface you use",
}


def wake_note(items: Sequence[Observation]) -> str:
    """The short prompt a queued wake starts a Codex turn with: who sent what, never the
    items' text (it travels on a command line), and how to read them."""
    shown = items[:MAX_ITEMS]
    parts = [
        f"{one_line(o.handle or o.session_id or '?')} "
        f"{WAKE_WORDS.get(o.kind, 'sent you an urgent item')} (#{o.id})"
        for o in shown
    ]
    more = f" and {len(items) - len(shown)} more" if len(items) > len(shown) else ""
    ids = ", ".join(str(o.id) for o in shown)
    return (
        f"{PREFIX}: {'; '.join(parts)}{more} while you were idle — read it with"
        f" get_observations(ids=[{ids}]) or task_updates_since, then answer."
    )


def woke(rows: Sequence[dict]) -> str | None:
    """Which of the session's items reached an idle recipient (colony_tasks.domain.wake)."""
    if not rows:
        return None
    lines = [f"{PREFIX}: your items reached idle sessions:"]
    for row in rows[:8]:
        how = "woke" if row["via"] == wake.VIA_WAKE else "kept from stopping"
        lines.append(f"#{row['observation_id']} {row['kind']} {how} {row['recipient_handle']}")
    return "\n".join(lines)


def stop_reason(store: Store, result: Result) -> str | None:
    """A Stop held back (:func:`colony_tasks.domain.wake.stop_gate`): the urgent items, as the
    session's next prompt, and why."""
    gate, me = result.gate, result.session
    if gate is None or me is None or not gate.items:
        return None
    body = mid_turn(store, me, gate.items) or ""
    tail = (
        f"{PREFIX}: this is the last time your stop is held back ({wake.MAX_STOP_BLOCKS} in a"
        " row); further urgent items wait for your next prompt."
        if gate.last
        else f"{PREFIX}: an urgent item arrived as you were stopping; deal with it, then stop."
    )
    return fence(f"{body}\n\n{tail}")


def stop_notice(me: Session, gate: wake.Gate) -> str | None:
    """For the human (never the model): urgent items left unread after the stop gate's cap."""
    if not gate.unread:
        return None
    return (
        f"{PREFIX}: {gate.unread} urgent item(s) for {me.handle} wait for its next prompt:"
        f" its stop was already held back {wake.MAX_STOP_BLOCKS} times in a row."
    )
