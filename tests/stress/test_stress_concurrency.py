"""Concurrency: hook processes released at the same instant against one store.

Each round starts 16 hook processes (every event, four sessions, Claude and Codex payloads)
plus two helper processes posting thread messages through the core, waits until every one of
them is blocked reading its stdin, then writes all the stdins at once. Every payload carries a
unique marker (prompt text, edited path, command), so what the processes were asked to record
can be counted against what is stored; every ``#<id>`` line a hook injects is collected per
session, so delivery can be checked: no item twice, every item by others exactly once.
"""

from __future__ import annotations

import json
import random
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest

from colony_tasks.base.kinds import THREAD_KINDS
from colony_tasks.store import Store
from tests.support.contracts import check_claude, check_codex, context_of
from tests.support.hookrun import claude, codex, patch, run_hook
from tests.support.stress_util import (
    Done,
    Job,
    delivered_ids,
    hook_job,
    log_text,
    python_job,
    run_together,
    scaled,
)

pytestmark = pytest.mark.stress

PROCESSES = 16
ROUNDS = scaled(20, minimum=2)
POSTERS = 2
POSTS_EACH = 2
SESSIONS = [("cl-0", "claude"), ("cl-1", "claude"), ("cx-2", "codex"), ("cx-3", "codex")]
EVENTS = [
    ("user-prompt-submit", 4),
    ("post-tool-use:edit", 3),
    ("post-tool-use:shell", 2),
    ("pre-tool-use", 2),
    ("session-start", 1),
    ("stop", 1),
    ("session-end", 1),
]


class Run:
    """What the test asked the processes to do, and what they answered."""

    def __init__(self, repo: Path, home: Path) -> None:
        self.repo = repo
        self.home = home
        self.prompts: list[str] = []
        self.prompt_of: dict[str, str] = {}  # marker -> session id
        self.gated: Counter[str] = Counter()  # stops the gate held back, per session
        self.commands: list[str] = []
        self.edits: list[tuple[str, str]] = []  # (session id, repo-relative path)
        self.posted: dict[int, str] = {}
        self.refused: list[str] = []
        self.delivered: dict[str, list[int]] = defaultdict(list)
        self.mid_turn = 0
        self.processes = 0
        self.at_barrier = 0

    def payload(self, sid: str, agent: str, event: str, marker: str) -> dict[str, Any]:
        build = claude if agent == "claude" else codex
        name, _, variant = event.partition(":")
        if name == "user-prompt-submit":
            self.prompts.append(marker)
            self.prompt_of[marker] = sid
            return build(name, sid, self.repo, prompt=f"please do {marker} now")
        if name == "pre-tool-use":
            target = str(self.repo / "src" / f"{marker}.py")
            tool = {"tool_name": "Edit", "tool_input": {"file_path": target}}
            if agent == "codex":
                body = patch(f"*** Update File: {target}")
                tool = {"tool_name": "apply_patch", "tool_input": {"command": body}}
            return build(name, sid, self.repo, tool_use_id=marker, **tool)
        if name == "post-tool-use" and variant == "edit":
            rel = f"src/{marker}.py"
            self.edits.append((sid, rel))
            if agent == "claude":
                tool = {"tool_name": "Write", "tool_input": {"file_path": str(self.repo / rel)}}
            else:
                body = patch(f"*** Update File: {rel}")
                tool = {"tool_name": "apply_patch", "tool_input": {"command": body}}
            return build(name, sid, self.repo, tool_use_id=marker, tool_response={}, **tool)
        if name == "post-tool-use":
            self.commands.append(marker)
            command = f"echo {marker}"
            if agent == "claude":
                tool = {"tool_name": "Bash", "tool_input": {"command": command}}
            else:
                tool = {
                    "tool_name": "exec_command",
                    "tool_input": {"cmd": ["bash", "-lc", command]},
                }
            return build(name, sid, self.repo, tool_use_id=marker, tool_response="ok", **tool)
        if name == "session-start":
            return build(name, sid, self.repo, source="resume")
        if name == "stop":
            return build(name, sid, self.repo, stop_hook_active=False)
        return build(name, sid, self.repo, reason="other")

    def collect(self, done: Done) -> None:
        """Check one finished process and record what it reported."""
        job = done.job
        assert (done.returncode, done.stderr) == (0, ""), (job.tag, done.stderr)
        if job.tag[0] == "poster":
            for line in done.stdout.splitlines():
                answer = json.loads(line)
                if "id" in answer:
                    self.posted[answer["id"]] = answer["text"]
                else:
                    self.refused.append(answer["refused"])
            return
        _, sid, agent, variant = job.tag
        event = variant.partition(":")[0]
        check = check_claude if agent == "claude" else check_codex
        data = check(event, done.stdout)
        if event == "stop" and data and data.get("decision") == "block":
            # Codex's stop gate: urgent items delivered as the session's next prompt.
            self.delivered[sid].extend(delivered_ids(data["reason"]))
            self.gated[sid] += 1
            return
        context = context_of(data)
        if event in ("user-prompt-submit", "post-tool-use"):
            got = delivered_ids(context)
            self.delivered[sid].extend(got)
            self.mid_turn += len(got) if event == "post-tool-use" else 0


def round_jobs(run: Run, rng: random.Random, handles: dict[str, str], number: int) -> list[Job]:
    names = [e for e, _ in EVENTS]
    weights = [w for _, w in EVENTS]
    jobs = []
    for k in range(PROCESSES):
        sid, agent = SESSIONS[k % len(SESSIONS)]
        event = rng.choices(names, weights)[0]
        marker = f"m{number:03d}x{k:02d}q{rng.randrange(10**6):06d}"
        payload = run.payload(sid, agent, event, marker)
        jobs.append(
            hook_job(event.partition(":")[0], payload, run.home, ("hook", sid, agent, event))
        )
    for p in range(POSTERS):
        posts = []
        for i in range(POSTS_EACH):
            author = rng.choice(SESSIONS)[0]
            to = rng.choice([None, "any", "claude", "codex", *(h for s, h in handles.items())])
            if to == handles[author]:
                to = None
            posts.append(
                {
                    "author": author,
                    "text": f"post r{number} p{p} i{i} {rng.randrange(10**6)}",
                    "kind": rng.choice(["note", "note", "question", "decision", "blocker"]),
                    "to": to,
                    "urgent": rng.random() < 0.3,
                }
            )
        jobs.append(python_job("stress_poster.py", {"posts": posts}, run.home, ("poster", p)))
    return jobs


def drain(run: Run, sid: str, agent: str) -> None:
    """User prompts until the session has nothing left to be told."""
    build = claude if agent == "claude" else codex
    check = check_claude if agent == "claude" else check_codex
    for i in range(100):
        marker = f"drain-{sid}-{i}"
        run.prompts.append(marker)
        run.prompt_of[marker] = sid
        result = run_hook(
            "user-prompt-submit",
            build("user-prompt-submit", sid, run.repo, prompt=marker),
            run.home,
        )
        assert (result.returncode, result.stderr) == (0, "")
        context = context_of(check("user-prompt-submit", result.stdout))
        got = delivered_ids(context)
        run.delivered[sid].extend(got)
        if not got and "task_updates_since(" not in context:
            return
    raise AssertionError(f"{sid} was still being given items after 100 prompts")


def test_simultaneous_hooks_lose_nothing_and_deliver_each_item_once(
    home: Path, repo: Path, tmp_path: Path
):
    run = Run(repo, home)
    for sid, agent in SESSIONS:
        build = claude if agent == "claude" else codex
        result = run_hook(
            "session-start", build("session-start", sid, repo, source="startup"), home
        )
        assert (result.returncode, result.stderr) == (0, "")
    with Store(home / "colony.db") as store:
        handles = {sid: store.get_session(sid).handle for sid, _ in SESSIONS}
        task_id = store.open_lane_task(store.get_session("cl-0").lane_id).id
        start = {sid: store.get_cursor(task_id, sid) or 0 for sid, _ in SESSIONS}

    rng = random.Random(20260501)
    for number in range(ROUNDS):
        jobs = round_jobs(run, rng, handles, number)
        results, waiting = run_together(jobs)
        run.processes += len(jobs)
        run.at_barrier += len(jobs) if waiting is None else waiting  # None: cannot tell
        for done in results:
            run.collect(done)
    for sid, agent in SESSIONS:
        drain(run, sid, agent)

    assert log_text(home, tmp_path) == ""
    assert run.at_barrier == run.processes  # every process was released at the barrier
    with Store(home / "colony.db") as store:
        assert store.admin.integrity_check() == ["ok"] and store.admin.fts_consistent()
        rows = store.conn.execute(
            "SELECT id, session_id, task_id, kind, text FROM observations"
        ).fetchall()
        paths = store.conn.execute(
            "SELECT p.path, o.session_id FROM observation_paths p"
            " JOIN observations o ON o.id = p.observation_id WHERE o.kind = 'edit'"
        ).fetchall()
        claims = {
            (r[0], r[1]) for r in store.conn.execute("SELECT session_id, pattern FROM claims")
        }

    # Zero lost rows: every marker stored exactly once, every reported post stored as posted.
    stored_prompts = Counter(
        text.split()[2] if text.startswith("please do ") else text
        for _, _, _, kind, text in rows
        if kind == "prompt"
    )
    # A session's first prompt after the gate held its stop is its woken turn's, colony-tasks'
    # own words (the reason becomes Codex's next prompt): not recorded (wake.woken_turn). Here
    # the next prompt is a marker, so one marker per held stop may be missing; no other.
    missing = Counter(run.prompt_of[m] for m in run.prompts if stored_prompts[m] == 0)
    for marker in run.prompts:
        assert stored_prompts[marker] <= 1, marker
    for sid, lost in missing.items():
        assert lost <= run.gated[sid], (sid, lost, run.gated[sid])
    commands = Counter(text.split()[-1] for _, _, _, kind, text in rows if kind == "command")
    for marker in run.commands:
        assert commands[marker] == 1, marker
    edits = Counter((sid, path) for path, sid in paths)
    for sid, rel in run.edits:
        assert edits[(sid, rel)] == 1, rel
        assert (sid, rel) in claims, rel
    by_id = {r[0]: r for r in rows}
    for obs_id, text in run.posted.items():
        assert by_id[obs_id][4] == text

    # Delivery: nothing twice, and everything by others exactly once after the drain.
    thread_items = [r for r in rows if r[2] == task_id and r[3] in THREAD_KINDS]
    assert {r[0] for r in thread_items} >= set(run.posted)
    for sid, _ in SESSIONS:
        got = run.delivered[sid]
        assert len(got) == len(set(got)), (sid, [i for i, n in Counter(got).items() if n > 1])
        expected = {r[0] for r in thread_items if r[1] != sid and r[0] > start[sid]}
        assert set(got) == expected, sid
    print(
        f"{ROUNDS} rounds, {run.processes} processes ({ROUNDS * PROCESSES} hooks), "
        f"{len(run.prompts)} prompts, {len(run.edits)} edits, {len(run.commands)} commands, "
        f"{len(run.posted)} posts ({len(run.refused)} refused), "
        f"{sum(len(v) for v in run.delivered.values())} deliveries ({run.mid_turn} mid-turn)"
    )


def test_the_news_of_whom_ones_items_woke_is_not_counted_as_a_delivery():
    from colony_tasks.domain import wake
    from colony_tasks.render import briefing

    news = briefing.woke(
        [{"observation_id": 23, "kind": "note", "via": wake.VIA_WAKE, "recipient_handle": "cx-1"}]
    )
    assert news is not None
    context = f"colony-tasks — for you now:\n#5 note from cl-0: hello\n\n{news}"
    assert delivered_ids(context) == [5]
