"""Hook payloads at the sizes of the denial-of-service table: a Codex apply_patch naming
20,000 files, and 50,000 nested objects beside a real Edit. Each is kept, and what the agent
is told stays bounded. (Times are measured in bench/dos.py, not asserted here.)"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from colony_tasks.hooks.payload import MAX_DEPTH, loads, shallow
from colony_tasks.relay.bounds import MAX_PATHS
from colony_tasks.store import open_default
from colony_tasks.usecases import actions
from tests.support.hookrun import claude, codex, patch, run_hook

FILES = 20_000
NESTED = 50_000


def edits(home: Path, session: str) -> list[tuple[str, str]]:
    with sqlite3.connect(home / "colony.db") as db:
        return db.execute(
            "SELECT text, meta FROM observations WHERE kind = 'edit' AND session_id = ?",
            (session,),
        ).fetchall()


def test_an_apply_patch_naming_20000_files_is_kept_and_its_warning_is_bounded(
    home: Path, repo: Path
):
    for event in (codex("session-start", "cx", repo), claude("session-start", "cl", repo)):
        assert run_hook("session-start", event, home).returncode == 0
    store = open_default()
    actions.claim(store, "cl", ["src/**/*.py"])  # every file of the patch is held by another
    store.close()
    body = patch(*[f"*** Update File: src/f{i}.py" for i in range(FILES)])
    outputs = []
    for event in ("pre-tool-use", "post-tool-use"):
        extra = {"tool_response": "ok"} if event == "post-tool-use" else {}
        payload = codex(
            event, "cx", repo, tool_name="apply_patch", tool_input={"command": body}, **extra
        )
        done = run_hook(event, payload, home, timeout=120)
        assert done.returncode == 0
        outputs.append(json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"])
    ((text, _),) = edits(home, "cx")
    assert text.startswith("src/f0.py, src/f1.py")
    for told in outputs:
        assert "src/f0.py is held by" in told
        # Checked and recorded with its first files only (the relay's bound), and it says so.
        assert f"… and {MAX_PATHS - 20} more" in told  # not 20,000 lines
        assert f"names {FILES:,} files; only the first {MAX_PATHS:,}" in told
        assert len(told) < 5_000


def test_50000_nested_objects_beside_a_real_edit_keep_the_edit(home: Path, repo: Path):
    assert run_hook("session-start", claude("session-start", "cl", repo), home).returncode == 0
    payload = claude(
        "post-tool-use",
        "cl",
        repo,
        tool_name="Edit",
        tool_input={
            "file_path": str(repo / "src" / "app.py"),
            "old_string": "a",
            "new_string": "b",
            "junk": 0,
        },
        tool_response={},
    )
    raw = json.dumps(payload).replace(
        '"junk": 0', '"junk": ' + '{"a": ' * NESTED + "1" + "}" * NESTED
    )
    with_list = raw.replace(
        '"tool_response": {}', '"tool_response": ' + "[" * NESTED + "]" * NESTED
    )
    for body in (raw, with_list):
        done = run_hook("post-tool-use", None, home, raw=body.encode(), agent="claude")
        assert done.returncode == 0
    kept = [text for text, _ in edits(home, "cl")]
    assert kept == ["src/app.py (Edit)", "src/app.py (Edit)"]  # both edits recorded


def test_a_payload_nested_past_the_limit_is_read_with_its_deep_values_dropped():
    levels = 5_000  # past the parser's recursion limit
    deep = '{"a": "x[{\\"]", "n": ' + '{"k": ' * levels + "1" + "}" * levels + ', "b": [1, [2]]}'
    found = loads(deep)
    assert found["a"] == 'x[{"]' and found["b"] == [1, [2]]  # brackets in strings do not count
    depth, value = 0, found["n"]
    while isinstance(value, dict):
        depth, value = depth + 1, value["k"]
    assert value is None and depth == MAX_DEPTH - 1  # cut at the limit, the rest read as null
    assert json.loads(shallow('{"a": [[[1]]], "b": 2}', 2)) == {"a": [None], "b": 2}
    assert loads('{"a": [1]}') == {"a": [1]}  # a shallow payload is parsed as it is
