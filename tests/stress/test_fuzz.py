"""Fuzzing with hypothesis: hooks and MCP tools never crash on any input.

- Hooks: arbitrary JSON, payloads shaped like the agents' with wrong or hostile values, and
  bytes that are not JSON, to every event. Most examples run in-process through
  ``runner.run([event])`` with stdin and stdout swapped (the console script's own code path);
  a smaller batch goes through the real console script. Exit 0, nothing on stderr, and stdout
  empty or one JSON object that both agents accept.
- MCP: arguments generated from each tool's published input schema, plus wrong types, unknown
  keys and missing fields, through the in-memory client. Every call ends in a result or a tool
  error whose text is a sentence (never the SDK's "Error executing tool" for an unexpected
  exception), and the server keeps serving.
"""

from __future__ import annotations

import io
import json
import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.from_thread
import numpy  # noqa: F401 - imported up front: the server's embedding thread imports it lazily,
import pytest  # and hypothesis looks numpy up in sys.modules from this thread meanwhile
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from mcp import Client

from colony_tasks.domain import sessions
from colony_tasks.hooks import runner
from colony_tasks.mcp_server.server import build_server
from colony_tasks.store import Store, open_default
from tests.support.contracts import check_claude, check_codex
from tests.support.hookrun import claude, patch, run_hook
from tests.support.stress_util import scaled

pytestmark = pytest.mark.stress

EVENTS = ["session-start", "user-prompt-submit", "pre-tool-use", "post-tool-use", "stop"]
EVENTS.append("session-end")
HOOK_EXAMPLES = scaled(500, minimum=20)
SUBPROCESS_EXAMPLES = scaled(100, minimum=5)
TOOL_EXAMPLES = scaled(100, minimum=8)
SETTINGS = {
    "deadline": None,
    "database": None,
    "suppress_health_check": [HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
}

# -- strategies ----------------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner),
    max_leaves=12,
)
hostile_text = st.sampled_from(
    [
        "",
        " ",
        "\x00",
        "a\x00b",
        "../../etc/passwd",
        "/etc/passwd",
        "~",
        "x" * 5000,
        "é" * 300,
        "\ud800",
        "<private>hidden",
        "'; DROP TABLE observations; --",
        '"quoted" AND NOT OR NEAR(',
        "*",
        "**/*",
        "[",
        "\n\n",
    ]
)
text = st.text(max_size=60) | hostile_text


def paths_for(repo: Path) -> st.SearchStrategy[str]:
    fixed = [
        str(repo / "src" / "app.py"),
        "src/app.py",
        "./src/../src/app.py",
        "../outside.py",
        str(repo.parent / "elsewhere.py"),
        str(repo / ".git" / "config"),
        str(repo / "link-out" / "passwd"),
        str(repo),
        "/",
        "src/*.py",
        "a" * 300 + ".py",
        "/".join(["d"] * 1500),
    ]
    return st.sampled_from(fixed) | text


def payloads(repo: Path) -> st.SearchStrategy[Any]:
    """Hook payloads: the agents' field names with plausible, wrong or hostile values."""
    path = paths_for(repo)
    tool_input = st.fixed_dictionaries(
        {},
        optional={
            "file_path": path | json_values,
            "notebook_path": path,
            "path": path,
            "command": text | st.lists(text, max_size=4) | json_values,
            "cmd": st.lists(text, max_size=4) | text,
            "patch": st.lists(path, max_size=3).map(
                lambda names: patch(*(f"*** Update File: {n}" for n in names))
            )
            | text,
            "content": text,
        },
    )
    fields = {
        "hook_event_name": st.sampled_from(["SessionStart", "PostToolUse"]) | json_values,
        "transcript_path": st.none() | st.just("/h/.claude/p/x.jsonl") | text | json_values,
        "permission_mode": st.just("default") | json_values,
        "model": st.just("gpt-5") | json_values,
        "turn_id": st.just("turn-1") | json_values,
        "source": st.sampled_from(["startup", "resume", "clear"]) | json_values,
        "prompt": text | json_values,
        "tool_name": st.sampled_from(
            ["Edit", "Write", "MultiEdit", "NotebookEdit", "apply_patch", "Bash", "shell"]
            + ["exec_command", "Read", "mcp__colony__claim_file"]
        )
        | json_values,
        "tool_input": tool_input | json_values,
        "tool_response": json_values,
        "tool_use_id": text,
        "reason": text,
    }
    known_session = st.sampled_from(["fz-a", "fz-b", "fz-c"])
    known_cwd = st.sampled_from([str(repo), str(repo / "src"), str(repo / "link-out")])
    wild = st.fixed_dictionaries(
        {},
        optional={
            "session_id": known_session | text | json_values,
            "cwd": st.sampled_from(["/", "/tmp", "/nonexistent/x", "rel/dir", "~", "/proc/self"])
            | known_cwd
            | text
            | json_values,
            **fields,
        },
    )
    # Mostly a known session in the repository, so that handlers get past registration.
    plausible = st.fixed_dictionaries(
        {"session_id": known_session, "cwd": known_cwd}, optional=fields
    )
    return st.one_of(plausible, plausible, wild)


def stdin_bytes(repo: Path) -> st.SearchStrategy[bytes]:
    """What a hook may find on stdin: JSON payloads, other JSON, truncated JSON, any bytes."""
    encoded = payloads(repo).map(lambda p: json.dumps(p).encode("utf-8", "surrogatepass"))
    truncated = st.tuples(encoded, st.integers(0, 200)).map(lambda t: t[0][: t[1]])
    other = json_values.map(lambda v: json.dumps(v).encode())
    return st.one_of(encoded, encoded, other, truncated, st.binary(max_size=300))


agents = st.sampled_from([[], ["--agent", "claude"], ["--agent", "codex"], ["--agent", "x"]])


def check_output(event: str, stdout: str) -> None:
    """Empty, or exactly one JSON object both Claude Code and Codex accept for the event."""
    if stdout:
        assert event not in ("stop", "session-end"), stdout
        check_claude(event, stdout)
        check_codex(event, stdout)


@pytest.fixture
def fuzz_repo(repo: Path) -> Path:
    (repo / "src").mkdir()
    (repo / "link-out").symlink_to("/etc")
    return repo


# -- hooks ---------------------------------------------------------------------------------------


def log_lines(home: Path) -> int:
    log = home / "hooks.log"
    return log.read_bytes().count(b"\n") if log.exists() else 0


def run_in_process(args: list[str], raw: bytes) -> tuple[int, str, str]:
    saved = sys.stdin, sys.stdout, sys.stderr
    out, err = io.StringIO(), io.StringIO()
    sys.stdin = io.TextIOWrapper(io.BytesIO(raw))
    sys.stdout, sys.stderr = out, err
    try:
        code = runner.run(args)
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("event", EVENTS)
def test_any_stdin_to_any_hook_exits_0_with_valid_output(home: Path, fuzz_repo: Path, event: str):
    @settings(max_examples=HOOK_EXAMPLES, **SETTINGS)
    @given(raw=stdin_bytes(fuzz_repo), agent=agents)
    def check(raw: bytes, agent: list[str]) -> None:
        failed_before = log_lines(home)
        code, stdout, stderr = run_in_process([event, *agent], raw)
        note(f"stdout={stdout!r}")
        assert (code, stderr) == (0, "")
        check_output(event, stdout)
        counts["examples"] += 1
        counts["with output" if stdout else "silent"] += 1
        counts["failed open" if log_lines(home) > failed_before else "handled"] += 1

    counts: Counter[str] = Counter()
    check()
    print(f"{event}: {dict(counts)} in-process")
    assert counts["handled"] > counts["examples"] // 5  # the examples reach the handlers


def test_any_stdin_through_the_console_script_exits_0_with_valid_output(
    home: Path, fuzz_repo: Path
):
    @settings(max_examples=SUBPROCESS_EXAMPLES, **SETTINGS)
    @given(event=st.sampled_from(EVENTS), raw=stdin_bytes(fuzz_repo), agent=agents)
    def check(event: str, raw: bytes, agent: list[str]) -> None:
        result = run_hook(event, None, home, raw=raw, agent=agent[1] if agent else None)
        note(f"stdout={result.stdout!r}")
        assert (result.returncode, result.stderr) == (0, "")
        check_output(event, result.stdout)
        counts[event] += 1

    counts: Counter[str] = Counter()
    check()
    print(f"{sum(counts.values())} examples through the console script: {dict(counts)}")


# -- MCP tools -----------------------------------------------------------------------------------

# Two input classes used to crash tools with an unexpected exception (ids beyond 64 bits, lone
# surrogates); each has its own regression test below.
INT64 = 2**63 - 1
no_surrogates = st.characters(blacklist_categories=("Cs",))
safe_text = st.text(no_surrogates, max_size=60) | hostile_text.filter(lambda t: "\ud800" not in t)
safe_json = st.recursive(
    st.none() | st.booleans() | st.integers(-INT64, INT64) | st.floats() | safe_text,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(no_surrogates, max_size=12), inner)
    ),
    max_leaves=12,
)


def from_schema(schema: dict[str, Any], name: str, handles: list[str], repo: Path):
    """Values valid for a (tidied, pydantic-generated) JSON Schema, biased to reach the core."""
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    if kind == "string":
        if name in ("session_id", "to"):
            known = st.sampled_from(handles)
            return st.one_of(known, known, known, st.sampled_from(["any", "claude", "codex"]))
        if name in ("paths", "files"):
            return paths_for(repo).filter(lambda t: "\ud800" not in t)
        low = schema.get("minLength", 0)
        return st.text(no_surrogates, min_size=low, max_size=80) | safe_text.filter(
            lambda t: len(t) >= low
        )
    if kind == "integer":
        low, high = schema.get("minimum", -INT64), schema.get("maximum", INT64)
        return st.integers(low, min(high, 80)) | st.integers(low, high)
    if kind == "number":
        low, high = schema.get("minimum"), schema.get("maximum")
        return st.floats(low, high, allow_nan=False, allow_infinity=False)
    if kind == "boolean":
        return st.booleans()
    if kind == "array":
        items = from_schema(schema.get("items", {}), name, handles, repo)
        low, high = schema.get("minItems", 0), min(schema.get("maxItems", 5), 5)
        return st.lists(items, min_size=low, max_size=high)
    if kind == "object":
        props = schema.get("properties", {})
        required = set(schema.get("required", []))
        build = {k: from_schema(v, k, handles, repo) for k, v in props.items()}
        if "session_id" in build:  # act as a known session, so that calls reach the core
            required.add("session_id")
        return st.fixed_dictionaries(
            {k: v for k, v in build.items() if k in required},
            optional={k: v for k, v in build.items() if k not in required},
        )
    return safe_json


def wrong_arguments(schema: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Any JSON under the tool's own keys and unknown ones; required keys may be missing."""
    names = st.sampled_from([*schema.get("properties", {}), "unknown", ""])
    return st.dictionaries(names | st.text(no_surrogates, max_size=8), safe_json, max_size=6)


@contextmanager
def mcp_client(home: Path, repo: Path) -> Iterator[tuple[Any, Any, list[str]]]:
    """A blocking portal and an in-memory client, with three sessions on the lane."""
    store = open_default()
    handles = [
        sessions.register(store, sid, agent=agent, cwd=str(repo)).session.handle
        for sid, agent in (("fz-a", "claude"), ("fz-b", "codex"), ("fz-c", "claude"))
    ]
    store.close()
    with anyio.from_thread.start_blocking_portal() as portal:
        client = portal.wrap_async_context_manager(Client(build_server(), mode="legacy"))
        with client as connected:
            yield portal, connected, handles


def test_any_arguments_to_any_mcp_tool_give_a_result_or_a_tool_error(home: Path, fuzz_repo: Path):
    outcomes: Counter[str] = Counter()
    with mcp_client(home, fuzz_repo) as (portal, client, handles):
        tools = portal.call(client.list_tools).tools
        for tool in tools:
            schema = tool.input_schema
            valid = from_schema(schema, "", handles, fuzz_repo)
            arguments = st.one_of(valid, valid, wrong_arguments(schema))

            def call(name: str, args: dict[str, Any]) -> None:
                result = portal.call(client.call_tool, name, args)
                message = result.content[0].text if result.content else ""
                note(f"{name}({args!r}) -> {message[:300]!r}")
                if result.is_error:
                    assert message and not message.startswith("Error executing tool"), message
                    outcomes["tool error"] += 1
                else:
                    assert result.structured_content is not None
                    assert json.loads(message) == result.structured_content
                    outcomes["result"] += 1

            settings(max_examples=TOOL_EXAMPLES, **SETTINGS)(
                given(name=st.just(tool.name), args=arguments)(call)
            )()
        alive = portal.call(client.call_tool, "task_list", {"status": "all"})
        assert not alive.is_error and alive.structured_content["tasks"]
    print(f"{len(tools)} tools x {TOOL_EXAMPLES} examples: {dict(outcomes)}")


# -- what the fuzzing found ----------------------------------------------------------------------

BEYOND_INT64 = 2**63
HUGE_ID_CALLS = [
    ("task_post", {"content": "hi", "task_id": BEYOND_INT64}),
    ("task_post", {"content": "hi", "in_reply_to": BEYOND_INT64}),
    ("task_timeline", {"before_id": BEYOND_INT64}),
    ("task_updates_since", {"since_id": BEYOND_INT64}),
    ("answer_question", {"question_id": BEYOND_INT64, "answer": "x"}),
    ("accept_handoff", {"handoff_id": BEYOND_INT64}),
    ("claim_file", {"paths": ["a.py"], "task_id": BEYOND_INT64}),
    ("get_observations", {"ids": [BEYOND_INT64]}),
    ("get_observations", {"ids": [-(2**64)]}),
]
SURROGATE_CALLS = [
    ("claim_file", {"paths": ["src/\ud83d.py"]}),
    ("claim_file", {"paths": ["a.py"], "note": "half an emoji \ud83d"}),
    ("release_file", {"paths": ["\ud83d"]}),
    ("hand_off", {"summary": "take it", "files": ["\ud83d.py"]}),
    ("record_decision", {"decision": "d", "rationale": "\ud83d"}),
    ("report_blocker", {"blocker": "b", "waiting_on": "\ud83d"}),
]


async def call_once(name: str, args: dict[str, Any]) -> str:
    async with Client(build_server(), mode="legacy") as client:
        result = await client.call_tool(name, args)
    return result.content[0].text


def found(reason: str, calls: list[tuple[str, dict[str, Any]]]) -> list:
    """Regression cases for a bug found by fuzzing (``reason`` says what used to happen)."""
    return [pytest.param(n, a, id=f"{n}-{i}") for i, (n, a) in enumerate(calls)]


@pytest.mark.parametrize(
    ("name", "args"),
    found(
        "ids above SQLite's 64-bit range reach the store: OverflowError, reported as the SDK's"
        " bare 'Error executing tool <name>'; bound the id parameters with le=2**63-1",
        HUGE_ID_CALLS,
    )
    + found(
        "a lone surrogate (e.g. half an emoji, valid as a JSON \\u escape) in list[str] or"
        " optional str arguments reaches os.path/sqlite: UnicodeEncodeError, reported as the"
        " SDK's bare 'Error executing tool <name>'",
        SURROGATE_CALLS,
    ),
)
def test_hostile_arguments_get_a_tool_error_sentence(
    home: Path, fuzz_repo: Path, name: str, args: dict[str, Any]
):
    store = open_default()
    handle = sessions.register(store, "a", agent="claude", cwd=str(fuzz_repo)).session.handle
    store.close()
    message = anyio.run(call_once, name, {**args, "session_id": handle})
    assert not message.startswith("Error executing tool"), message


SURROGATE_PAYLOADS = {
    "prompt": ("user-prompt-submit", {"prompt": "fix the \ud83d icon"}),
    "command": ("post-tool-use", {"tool_name": "Bash", "tool_input": {"command": "echo \ud83d"}}),
    "edit": ("post-tool-use", {"tool_name": "Write", "tool_input": {"file_path": "a\ud83d.py"}}),
}


# Regression: a lone surrogate escape in a hook payload (a Node agent's JSON.stringify of half an
# emoji) made sqlite raise UnicodeEncodeError, so the prompt, command or edit was silently lost.
@pytest.mark.parametrize("what", list(SURROGATE_PAYLOADS))
def test_a_lone_surrogate_in_a_hook_payload_is_recorded_not_dropped(
    home: Path, repo: Path, what: str
):
    event, fields = SURROGATE_PAYLOADS[what]
    payload = claude(event, "s", repo, **fields)
    code, stdout, _ = run_in_process([event], json.dumps(payload).encode())
    assert code == 0
    assert not (home / "hooks.log").exists(), (home / "hooks.log").read_text()
    with Store(home / "colony.db") as store:
        kinds = [r[0] for r in store.conn.execute("SELECT kind FROM observations")]
    assert {"prompt": "prompt", "command": "command", "edit": "edit"}[what] in kinds
