"""The modules the hook path uses import no third-party package."""

from __future__ import annotations

import json
import subprocess
import sys

from colony_tasks import actions, sessions
from colony_tasks.store import open_default

HEAVY = [
    "click",
    "pydantic",
    "numpy",
    "mcp",
    "pathspec",
    "tomlkit",
    "model2vec",
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


def test_core_modules_import_only_the_standard_library():
    loaded = loaded_after(
        [
            "colony_tasks.store",
            "colony_tasks.lanes",
            "colony_tasks.sessions",
            "colony_tasks.search",
            "colony_tasks.redact",
            "colony_tasks.render",
        ]
    )
    assert not {m.split(".")[0] for m in loaded} & set(HEAVY)


def test_core_event_modules_import_only_the_standard_library():
    loaded = loaded_after(["colony_tasks.hooks.runner", "colony_tasks.hooks.handlers"])
    assert not {m.split(".")[0] for m in loaded} & set(HEAVY)
    assert "colony_tasks.depgraph" not in loaded and "colony_tasks.semantic" not in loaded


HOOK_RUN = """
import io, json, sys
from colony_tasks.hooks import runner
sys.stdin = io.TextIOWrapper(io.BytesIO(sys.argv[2].encode()))
runner.run([sys.argv[1]])
sys.stderr.write(json.dumps(sorted(sys.modules)))
"""


def test_an_edit_of_a_glob_claimed_file_is_warned_without_importing_pathspec(home, repo):
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
            "tool_input": {"file_path": target, "content": "x"},
        }
        out = subprocess.run(
            [sys.executable, "-c", HOOK_RUN, event, json.dumps(payload)],
            capture_output=True,
            text=True,
            check=True,
        )
        warning = json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
        assert "docs/guide.md is held by codex-" in warning
        assert "pathspec" not in json.loads(out.stderr)


# Loaded only where they are needed; each would cost every hook process 0.5-3 M instructions.
NOT_ON_EDIT_PATH = [
    "signal",  # the runner uses the C module `_signal`
    "shlex",  # shell commands only
    "colony_tasks.shell_edits",
    "colony_tasks.identity",  # a session's first briefing only
    "colony_tasks.store.vectors",
    "colony_tasks.store.depgraph",
    "colony_tasks.store.maintenance",
    "colony_tasks.store.overview",
]


def test_prompt_and_edit_hooks_load_only_what_they_use(home, repo):
    base = {"session_id": "lean", "cwd": str(repo), "transcript_path": "/x/.claude/p.jsonl"}
    edit = {"tool_name": "Edit", "tool_input": {"file_path": str(repo / "src" / "app.py")}}
    for event, extra in (
        ("session-start", {"source": "startup"}),
        ("user-prompt-submit", {"prompt": "add retries", "prompt_id": "p1"}),
        ("pre-tool-use", {**edit, "tool_use_id": "t1"}),
        ("post-tool-use", {**edit, "tool_use_id": "t1", "tool_response": {}}),
        ("stop", {}),
    ):
        out = subprocess.run(
            [sys.executable, "-c", HOOK_RUN, event, json.dumps({**base, **extra})],
            capture_output=True,
            text=True,
            check=True,
        )
        loaded = set(json.loads(out.stderr))
        assert "colony_tasks.events" in loaded, event  # the hook did run
        expected_absent = set(NOT_ON_EDIT_PATH)
        if event == "session-start":
            expected_absent.discard("colony_tasks.identity")
        if event not in ("session-start", "user-prompt-submit"):  # nothing to show
            expected_absent |= {"colony_tasks.briefing", "colony_tasks.render"}
        assert not loaded & expected_absent, event


def test_a_shell_command_loads_the_shell_modules_it_needs(home, repo):
    payload = {
        "session_id": "lean",
        "cwd": str(repo),
        "transcript_path": "/x/.claude/p.jsonl",
        "tool_name": "Bash",
        "tool_input": {"command": "echo hi > out.txt"},
        "tool_use_id": "b1",
    }
    out = subprocess.run(
        [sys.executable, "-c", HOOK_RUN, "pre-tool-use", json.dumps(payload)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert {"shlex", "colony_tasks.shell_edits"} <= set(json.loads(out.stderr))
