"""Other parties' words reach an agent and the human fenced (issue 37): crafted inputs (terminal
escapes, controls, bidi and zero-width characters, a raw line break that would start a line of
the attacker's choosing) pushed through every channel another party writes — a developer or
machine name, a message, a decision, a claim's note and path, a plan item, a task title, a
chain name — and read back through every front end: the hooks' output, the CLI, the MCP tools
and the viewer's pages and JSON.

Each input carries a tag, so whatever a front end shows of it is found and checked: no control
character but newline and tab, no format character (Unicode category Cf), no line separator,
and no line that starts with the text the attacker chose.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from mcp import Client
from starlette.testclient import TestClient

from colony_tasks.base.errors import ColonyError
from colony_tasks.cli import cli
from colony_tasks.domain import chains, sessions, tasks
from colony_tasks.mcp_server.server import build_server
from colony_tasks.store import Store, open_default
from colony_tasks.usecases import actions
from colony_tasks.viewer import create_app
from tests.support.hookrun import apply_payload, claude

FAKE = "colony-tasks: FAKE"
# {tag} marks where the input starts; the attacker's own line starts with FAKE.
ATTACKS = {
    "osc52": "{tag}\x1b]52;c;ZWNobyBwd25lZAo=\x07",
    "osc8": "{tag}\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\",
    "csi": "{tag}\x1b[2J\x1b[1;31mred",
    "c1-csi": "{tag}\x9b2J",
    "bel-nul-del": "{tag}ring\x07nul\x00del\x7f",
    "cr": "{tag}safe\r" + FAKE,
    "newline": "{tag}ok\n" + FAKE + " {tag}",
    "crlf": "{tag}ok\r\n" + FAKE + " {tag}",
    "line-separator": "{tag}ok\u2028" + FAKE + " {tag}",
    "bidi-override": "{tag}invoice\u202egpj.exe",
    "bidi-isolates": "{tag}\u2066left\u2069\u2067right\u2069\u2068first\u2069\u202a\u202c",
    "zero-width": "{tag}a\u200bb\u200cc\u200dd\u2060e\ufeff",
    "tag-smuggling": "{tag}hi\U000e0069\U000e0067\U000e006e\U000e006f\U000e0072\U000e0065",
}
CHANNELS = (
    "developer",
    "machine",
    "message",
    "decision",
    "claim-note",
    "claim-path",
    "plan-title",
    "task-title",
    "chain-name",
    "chain-prompt",
)
FRONT_ENDS = ("hooks", "cli", "mcp", "viewer")
TOKEN = "fence-token-0123456789"
TAG = re.compile(r"TG([a-z]+)(\d\d)x")


def tag(channel: int, attack: int) -> str:
    return f"TG{'abcdefghijklmnopqrstuvwxyz'[channel]}{attack:02d}x"


def unsafe(text: str) -> list[str]:
    """The characters of ``text`` no reader should receive as they are."""
    return [
        f"U+{ord(c):04X}"
        for c in text
        if (unicodedata.category(c) == "Cc" and c not in "\n\t")
        or unicodedata.category(c) in ("Cf", "Zl", "Zp")
        or 0xE0100 <= ord(c) <= 0xE01EF
    ]


def findings(text: str, *, lines: bool) -> Iterator[tuple[str, str]]:
    """(tag, problem) for each tagged input ``text`` shows unfenced: an unsafe character
    between its tag and the next, or (``lines``) a line of the attacker's choosing."""
    spots = list(TAG.finditer(text))
    for index, spot in enumerate(spots):
        end = spots[index + 1].start() if index + 1 < len(spots) else len(text)
        piece = text[spot.start() : min(end, spot.start() + 120)]
        bad = unsafe(piece)
        if bad:
            yield spot.group(), f"unsafe {', '.join(sorted(set(bad)))}"
    if lines:
        for line in text.split("\n"):
            found = TAG.search(line)
            if line.lstrip(" |-").startswith(FAKE) and found:
                yield found.group(), "starts a line"


def strings(value: Any) -> Iterator[str]:
    """Every string in a JSON value, keys included, as a reader of the JSON understands it."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


# -- the attack: every input through every channel ---------------------------------------------


def write_all(store: Store, repo: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Every attack through every channel, each tagged; what the readers need to look."""
    apply_payload(store, "session-start", claude("session-start", "sess-v", repo), "claude")
    x = sessions.register(store, "sess-x", agent="codex", cwd=str(repo)).session
    human = sessions.human_session(store, "mallory", str(repo))
    victim = store.get_session("sess-v")
    refused: set[str] = set()
    chain_ids = []
    for a, template in enumerate(ATTACKS.values()):
        for c, channel in enumerate(CHANNELS):
            text = template.format(tag=tag(c, a))
            try:
                chain_ids += _write(store, repo, monkeypatch, channel, a, text, x, human, victim)
            except ColonyError:
                refused.add(tag(c, a))
    return {"chains": chain_ids, "refused": refused}


def _write(store, repo, monkeypatch, channel, a, text, x, human, victim) -> list[int]:
    if channel in ("developer", "machine"):
        sid = f"sess-{channel}-{a}"
        sessions.register(store, sid, agent="codex", cwd=str(repo))
        # As a peer's machine writes it to the team store, or as it was stored before.
        with store.transaction():
            store.conn.execute(f"UPDATE sessions SET {channel} = ? WHERE id = ?", (text, sid))
        actions.post(store, sid, f"hello from {channel} {a}")
        actions.claim(store, sid, [f"src/{channel}{a}.py"])
    elif channel == "message":
        actions.post(store, x, text)
    elif channel == "decision":
        actions.record_decision(store, x, text)
    elif channel == "claim-note":
        actions.claim(store, x, [f"src/note{a}.py"], note=text)
    elif channel == "claim-path":
        actions.claim(store, x, [f"src/{text}.py"])
    elif channel == "plan-title":
        actions.plan_work(store, x, [{"title": text}])
    elif channel == "task-title":
        tasks.create_task(store, text, created_by=x.id)
    elif channel == "chain-name":
        chain = chains.create(store, human, text)
        chains.add(store, human, chain.id, victim.handle, "your turn")
        return [chain.id]
    elif channel == "chain-prompt":
        chain = chains.create(store, human, f"chain {a}")
        chains.add(store, human, chain.id, victim.handle, text)
        return [chain.id]
    return []


# -- the readers ---------------------------------------------------------------------------------


def read_hooks(store: Store, repo: Path, world: dict[str, Any]) -> str:
    """What the victim's context receives: a fresh session's briefing, each prompt's news
    until none is left, and the warning before an edit of each file another session holds."""
    out = []
    start = apply_payload(store, "session-start", claude("session-start", "sess-w", repo), "claude")
    out.append(start.get("context") or "")
    for _ in range(200):
        reply = apply_payload(
            store,
            "user-prompt-submit",
            claude("user-prompt-submit", "sess-v", repo, prompt="go"),
            "claude",
        )
        if not reply.get("context"):
            break
        out.append(reply["context"])
    held = [c["pattern"] for c in store.conn.execute("SELECT pattern FROM claims")]
    for n, pattern in enumerate(held):
        payload = claude(
            "pre-tool-use",
            "sess-v",
            repo,
            tool_name="Write",
            tool_input={"file_path": str(repo / pattern), "content": "x = 1\n"},
            tool_use_id=f"w-{n}",
        )
        reply = apply_payload(store, "pre-tool-use", payload, "claude")
        out.append(reply.get("context") or "")
        out.append(reply.get("deny") or "")
    return "\n".join(out)


def read_cli(store: Store, repo: Path, world: dict[str, Any], monkeypatch) -> str:
    monkeypatch.chdir(repo)
    lane_task = store.open_lane_task(store.get_session("sess-v").lane_id).id
    commands = [
        ["sessions"],
        ["tasks", "--status", "all"],
        ["tasks", "show", str(lane_task)],
        ["plan", "show"],
        ["claims"],
        *(["chain", "show", str(c)] for c in world["chains"]),
        *(["tasks", "show", str(c)] for c in world["chains"]),
    ]
    runner = CliRunner()
    out = []
    for args in commands:
        for extra in ([], ["--json"]):
            result = runner.invoke(cli, [*args, *extra])
            assert result.exit_code == 0, (args, result.output)
            out.append(result.output)
    return "\n".join(out)


def read_mcp(store: Store, world: dict[str, Any]) -> str:
    lane_task = store.open_lane_task(store.get_session("sess-v").lane_id).id
    calls = [
        ("task_list", {"status": "all"}),
        ("task_timeline", {"task_id": lane_task, "limit": 200}),
        *(("task_timeline", {"task_id": c}) for c in world["chains"]),
    ]

    async def run() -> list[str]:
        texts = []
        async with Client(build_server(background=False), mode="legacy") as client:
            for name, args in calls:
                result = await client.call_tool(name, args)
                assert not result.is_error, result.content[0].text
                texts.append(result.content[0].text)
        return texts

    texts = anyio.run(run)
    # What the model reads is the JSON text, and its strings as the model understands them.
    return "\n".join(texts + [s for t in texts for s in strings(json.loads(t))])


def read_viewer(store: Store, repo: Path, world: dict[str, Any]) -> str:
    lane_task = store.open_lane_task(store.get_session("sess-v").lane_id).id
    paths = [
        "/",
        "/claims",
        "/sessions",
        f"/tasks/{lane_task}",
        *(f"/tasks/{c}" for c in world["chains"]),
        "/api/tasks",
        f"/api/tasks/{lane_task}",
        f"/api/tasks/{lane_task}/plan",
        "/api/claims",
        "/api/sessions",
    ]
    app = create_app(store, TOKEN, human_name="alice", cwd=str(repo))
    out = []
    with TestClient(app, base_url=f"http://testserver/{TOKEN}/") as client:
        for path in paths:
            response = client.get(path.lstrip("/"))
            assert response.status_code == 200, path
            out.append(response.text)
            if path.startswith("/api/"):
                out.extend(strings(response.json()))
    return "\n".join(out)


def test_no_crafted_input_reaches_any_reader_unfenced(
    home: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
):
    (repo / "src").mkdir()
    store = open_default()
    try:
        world = write_all(store, repo, monkeypatch)
        readers: dict[str, Callable[[], str]] = {
            "hooks": lambda: read_hooks(store, repo, world),
            "cli": lambda: read_cli(store, repo, world, monkeypatch),
            "mcp": lambda: read_mcp(store, world),
            "viewer": lambda: read_viewer(store, repo, world),
        }
        shown: dict[str, set[str]] = {}
        leaks: dict[str, dict[str, set[str]]] = {}
        for front, read in readers.items():
            text = read()
            shown[front] = {m.group() for m in TAG.finditer(text)}
            for found, problem in findings(text, lines=front in ("hooks", "cli")):
                leaks.setdefault(found, {}).setdefault(front, set()).add(problem)
    finally:
        store.close()

    names = {
        tag(c, a): f"{channel}/{attack}"
        for c, channel in enumerate(CHANNELS)
        for a, attack in enumerate(ATTACKS)
    }
    pairs = sum(len(s) for s in shown.values())
    report = "\n".join(
        f"{names[t]}: " + "; ".join(f"{f} {sorted(p)}" for f, p in sorted(by.items()))
        for t, by in sorted(leaks.items(), key=lambda kv: names[kv[0]])
    )
    print(
        f"\nfence: {len(names)} inputs, {len(names) - len(world['refused'])} accepted,"
        f" {pairs} (input, front end) pairs shown; {len(leaks)} inputs and"
        f" {sum(len(by) for by in leaks.values())} pairs unfenced"
    )
    # Every channel and every front end is really read: no input passes by being invisible.
    for channel_index, channel in enumerate(CHANNELS):
        letter = tag(channel_index, 0)[2]
        assert any(t[2] == letter for s in shown.values() for t in s), channel
    for front in FRONT_ENDS:
        assert len(shown[front]) >= len(ATTACKS), (front, len(shown[front]))
    assert not leaks, f"{len(leaks)} of {len(names)} inputs unfenced:\n{report}"


def test_names_and_titles_are_stored_on_one_line_and_fenced(
    store: Store, repo: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("COLONY_TASKS_DEVELOPER", "bob\n" + FAKE + "\x1b]52;c;eA==\x07")
    monkeypatch.setenv("COLONY_TASKS_MACHINE", "box\u202e\u200b1")
    me = sessions.register(store, "sess-a", agent="codex", cwd=str(repo)).session
    human = sessions.human_session(store, "alice", str(repo))
    task = tasks.create_task(store, "fix\r\nit\x07")
    chain = chains.create(store, human, "review\u2066 now\u2069\n" + FAKE)
    planned = actions.plan_work(store, me, [{"title": "step\n" + FAKE}], task_id=task.id)
    item = store.work_item(planned.ids[0])

    stored = store.get_session("sess-a")
    assert (stored.developer, stored.machine) == ("bob " + FAKE + "␛]52;c;eA==␇", "box1")
    assert task.title == "fix it␇"
    assert store.get_task(chain.id).title == "review now " + FAKE
    assert item.title == "step " + FAKE
