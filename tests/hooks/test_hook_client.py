"""The hook client stays small: what it loads, and which way the layers import.

The hook path's cost is measured, not pinned here: ``bench/check.py`` gates the warm and cold
hook's latency against the stdlib baseline hook and the client's module budget. These tests
hold the contracts that are not a matter of degree: no heavy package anywhere on the hook path,
the relay package below the hook front end, and a client that reaches its relay loading none
of the core.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from colony_tasks.domain import sessions
from colony_tasks.store import open_default
from colony_tasks.usecases import actions
from tests.support.hookrun import claude

HEAVY = [
    "click",
    "pydantic",
    "numpy",
    "mcp",
    "pathspec",
    "tomlkit",
    "torch",
    "sentence_transformers",
    "tree_sitter",
    "tree_sitter_typescript",
    "tree_sitter_javascript",
]


def loaded_after(modules: list[str]) -> set[str]:
    code = (
        "import sys, json\n"
        + "".join(f"import {m}\n" for m in modules)
        + "print(json.dumps(sorted(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(json.loads(out.stdout))


def tops(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


def test_the_core_a_hook_may_apply_in_process_imports_no_heavy_package():
    loaded = loaded_after(
        [
            "colony_tasks.relay.apply",
            "colony_tasks.store",
            "colony_tasks.base.lanes",
            "colony_tasks.search",
            "colony_tasks.base.redact",
            "colony_tasks.render.lines",
        ]
    )
    assert not tops(loaded) & set(HEAVY)


def test_the_relay_package_never_imports_the_hook_front_end():
    loaded = loaded_after(
        ["colony_tasks.relay.server", "colony_tasks.relay.team", "colony_tasks.relay.apply"]
    )
    assert not {m for m in loaded if m.startswith("colony_tasks.hooks")}
    assert "colony_tasks.cli" not in loaded and "colony_tasks.mcp_server" not in loaded


HOOK_RUN = """
import io, json, sys
from colony_tasks.hooks import runner
sys.stdin = io.TextIOWrapper(io.BytesIO(sys.argv[2].encode()))
runner.run([sys.argv[1]])
sys.stderr.write(json.dumps(sorted(sys.modules)))
"""


def run_client(event: str, payload: dict, env: dict[str, str] | None = None) -> tuple[str, set]:
    out = subprocess.run(
        [sys.executable, "-c", HOOK_RUN, event, json.dumps(payload)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **(env or {})},
    )
    return out.stdout, set(json.loads(out.stderr))


def test_a_client_answered_by_its_relay_loads_none_of_the_core(home: Path, repo: Path):
    run_client("session-start", claude("session-start", "s", repo))  # starts the relay
    # The relay may still be starting: the first hooks after it apply their events themselves.
    for _ in range(200):
        stdout, loaded = run_client(
            "user-prompt-submit", claude("user-prompt-submit", "s", repo, prompt="hi")
        )
        if "colony_tasks.usecases.events" not in loaded:
            break
    assert "colony_tasks.usecases.events" not in loaded and "colony_tasks.store" not in loaded
    assert not tops(loaded) & set(HEAVY)
    assert "colony_tasks.relay.wire" in loaded  # it did reach the relay


def test_an_edit_of_a_glob_claimed_file_is_warned_without_importing_pathspec(home, repo):
    """Applied in the hook's own process (no relay): the glob rule stays stdlib."""
    store = open_default()
    try:
        sessions.register(store, "holder", agent="codex", cwd=str(repo))
        actions.claim(store, "holder", ["docs/**"])
    finally:
        store.close()
    target = str(repo / "docs" / "guide.md")
    for event in ("pre-tool-use", "post-tool-use"):
        payload = {
            "session_id": "editor",
            "cwd": str(repo),
            "transcript_path": "/x/.claude/p.jsonl",
            "tool_name": "Write",
            "tool_use_id": f"t-{event}",
            "tool_input": {"file_path": target, "content": "x"},
        }
        stdout, loaded = run_client(event, payload, {"COLONY_TASKS_RELAY": "off"})
        warning = json.loads(stdout)["hookSpecificOutput"]["additionalContext"]
        assert "docs/guide.md is held by codex-" in warning
        assert "colony_tasks.usecases.events" in loaded  # applied here, not by a relay
        assert not tops(loaded) & set(HEAVY)
