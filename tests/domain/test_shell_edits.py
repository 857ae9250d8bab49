"""Edits made through the shell are seen and treated like an Edit: real git repositories, the
installed console script as the hook process, the command run for real between its hooks."""

from __future__ import annotations

import subprocess
from pathlib import Path

from colony_tasks.domain import shell_edits
from colony_tasks.store import Store
from tests.support.contracts import check_claude, check_codex, context_of
from tests.support.hookrun import claude, codex, run_hook


def hook(event: str, home: Path, payload: dict) -> str:
    result = run_hook(event, payload, home)
    assert result.returncode == 0 and result.stderr == "", result.stderr
    check = check_codex if "turn_id" in payload or payload.get("model") else check_claude
    return context_of(check(event, result.stdout))


def shell(home: Path, make, sid: str, cwd: Path, command: str, use_id: str = "b1") -> str:
    """PreToolUse, the command itself, PostToolUse: what the agent's shell tool does."""
    fields = {"tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": use_id}
    assert hook("pre-tool-use", home, make("pre-tool-use", sid, cwd, **fields)) == ""
    subprocess.run(["sh", "-c", command], cwd=cwd, check=True, capture_output=True)
    response = {"stdout": "", "stderr": "", "interrupted": False} if make is claude else ""
    return hook(
        "post-tool-use", home, make("post-tool-use", sid, cwd, tool_response=response, **fields)
    )


def edit(home: Path, sid: str, repo: Path, rel: str) -> None:
    """Session ``sid`` edits line 1 of ``rel`` with Claude's Edit tool (recorded, auto-claimed
    and kept as its change of that line)."""
    target = repo / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("VALUE = 0\n")
    fields = {
        "tool_name": "Edit",
        "tool_input": {"file_path": str(target), "old_string": "0", "new_string": "1"},
        "tool_use_id": f"e-{sid}",
    }
    hook("pre-tool-use", home, claude("pre-tool-use", sid, repo, **fields))
    target.write_text("VALUE = 1\n")
    hook("post-tool-use", home, claude("post-tool-use", sid, repo, tool_response={}, **fields))


def meets(holder: str) -> str:
    """The warning that a change of line 1 of api.py meets ``holder``'s (on branch main)."""
    return (
        f"colony-tasks: api.py L1 meets {holder}'s change (main): git will conflict;"
        f' ask_question(to="{holder}") first.'
    )


def start(home: Path, make, sid: str, repo: Path) -> str:
    hook("session-start", home, make("session-start", sid, repo, source="startup"))
    store = Store(home / "colony.db")
    try:
        return store.get_session(sid).handle
    finally:
        store.close()


def edits_of(home: Path, sid: str) -> list[list[str]]:
    store = Store(home / "colony.db")
    try:
        rows = store.conn.execute(
            "SELECT id FROM observations WHERE session_id = ? AND kind = 'edit' ORDER BY id", (sid,)
        ).fetchall()
        by_obs = store.observation_paths([r[0] for r in rows])
        return [sorted(by_obs.get(r[0], [])) for r in rows]
    finally:
        store.close()


def held_by(home: Path, sid: str) -> set[str]:
    store = Store(home / "colony.db")
    try:
        return {c["pattern"] for c in store.list_claims(session_id=sid)}
    finally:
        store.close()


def test_sed_through_claudes_bash_on_a_held_file_warns_naming_the_holder(home: Path, repo: Path):
    holder = start(home, claude, "cl-a", repo)
    start(home, claude, "cl-b", repo)
    edit(home, "cl-a", repo, "src/api.py")

    said = shell(home, claude, "cl-b", repo, "sed -i 's/1/2/' src/api.py")

    assert said == meets(holder)
    assert edits_of(home, "cl-b") == [["src/api.py"]]
    assert "src/api.py" in held_by(home, "cl-b")  # auto-claimed, as an Edit would be
    assert (repo / "src/api.py").read_text() == "VALUE = 2\n"


def test_sed_through_codexs_shell_tool_on_a_held_file_warns_naming_the_holder(
    home: Path, repo: Path
):
    holder = start(home, claude, "cl-a", repo)
    start(home, codex, "cx-b", repo)
    edit(home, "cl-a", repo, "src/api.py")

    said = shell(home, codex, "cx-b", repo / "src", "sed -i 's/1/2/' api.py")

    assert said == meets(holder)
    assert edits_of(home, "cx-b") == [["src/api.py"]]


def test_a_file_created_by_a_redirect_is_recorded_and_claimed(home: Path, repo: Path):
    start(home, claude, "cl-b", repo)
    (repo / "src").mkdir()

    said = shell(home, claude, "cl-b", repo, "echo x > src/new.py")

    assert said == ""  # nobody else holds it: nothing to say
    assert edits_of(home, "cl-b") == [["src/new.py"]]
    assert "src/new.py" in held_by(home, "cl-b")


def test_a_held_file_changed_by_a_script_that_does_not_name_it_is_seen(home: Path, repo: Path):
    holder = start(home, claude, "cl-a", repo)
    start(home, claude, "cl-b", repo)
    edit(home, "cl-a", repo, "src/api.py")
    (repo / "fmt.sh").write_text("printf 'VALUE = 3\\n' > src/api.py\n")

    said = shell(home, claude, "cl-b", repo, "sh fmt.sh")

    assert said == meets(holder)
    assert edits_of(home, "cl-b") == [["src/api.py"]]


def test_a_read_only_command_records_no_edit_and_warns_nobody(home: Path, repo: Path):
    start(home, claude, "cl-a", repo)
    start(home, claude, "cl-b", repo)
    edit(home, "cl-a", repo, "src/api.py")

    said = shell(home, claude, "cl-b", repo, "cat src/api.py > /dev/null && git status")

    assert said == ""
    assert edits_of(home, "cl-b") == []


def test_the_holders_own_edit_during_a_command_is_not_blamed_on_the_command(home: Path, repo: Path):
    start(home, claude, "cl-a", repo)
    start(home, claude, "cl-b", repo)
    edit(home, "cl-a", repo, "src/api.py")
    fields = {"tool_name": "Bash", "tool_input": {"command": "make test"}, "tool_use_id": "b9"}
    hook("pre-tool-use", home, claude("pre-tool-use", "cl-b", repo, **fields))
    edit(home, "cl-a", repo, "src/api.py")  # the holder edits (and records it) while B's tests run

    said = hook(
        "post-tool-use", home, claude("post-tool-use", "cl-b", repo, tool_response={}, **fields)
    )

    assert said == "" and edits_of(home, "cl-b") == []


def test_without_a_pre_tool_note_a_named_file_written_during_the_call_counts(
    home: Path, repo: Path
):
    holder = start(home, codex, "cx-a", repo)
    start(home, codex, "cx-b", repo)
    (repo / "src").mkdir()
    (repo / "src/api.py").write_text("VALUE = 1\n")
    patch = (
        "*** Begin Patch\n*** Update File: src/api.py\n@@\n-VALUE = 0\n+VALUE = 1\n*** End Patch\n"
    )
    hook(
        "post-tool-use",
        home,
        codex(
            "post-tool-use",
            "cx-a",
            repo,
            tool_name="apply_patch",
            tool_input={"command": patch},
            tool_use_id="p",
            tool_response="",
        ),
    )
    command = "sed -i 's/1/2/' src/api.py"
    subprocess.run(["sh", "-c", command], cwd=repo, check=True)
    fields = {"tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": "no-pre"}

    said = hook(
        "post-tool-use", home, codex("post-tool-use", "cx-b", repo, tool_response="", **fields)
    )

    assert said == meets(holder)
    assert edits_of(home, "cx-b") == [["src/api.py"]]


def test_named_paths_reads_redirects_cd_prefixes_and_one_folder_globs(tmp_path: Path):
    (tmp_path / "src").mkdir()
    for name in ("a.py", "b.py", "c.txt"):
        (tmp_path / "src" / name).write_text("")
    base = str(tmp_path)

    def names(command: str) -> set[str]:
        return {str(Path(p).relative_to(tmp_path)) for p in shell_edits.named_paths(command, base)}

    assert names("echo x > src/new.py") == {"src/new.py"}
    assert names("echo x>>out.log 2>&1") == {"out.log"}
    assert names("sed -i 's/a/b/' src/*.py") == {"src/a.py", "src/b.py"}
    assert names("cd src && mv a.py d.py") == {"src/a.py", "src/d.py"}
    assert names("git checkout -- README.md") == {"README.md"}
    assert names("cat x | tee -a notes.md > /dev/null") == {"notes.md"}
    assert names("FOO=1 python -c 'print(1)'") == set()
    assert names("echo 'unbalanced > x.py") == set()  # never raises
    assert (
        len(shell_edits.named_paths("touch " + " ".join(f"f{i}.py" for i in range(999)), base))
        == shell_edits.MAX_NAMED
    )


def test_a_note_whose_post_tool_use_never_came_does_not_break_the_next_call(home: Path, repo: Path):
    start(home, claude, "cl-b", repo)
    fields = {"tool_name": "Bash", "tool_input": {"command": "false"}, "tool_use_id": "f1"}
    hook("pre-tool-use", home, claude("pre-tool-use", "cl-b", repo, **fields))
    (home / "shell" / "garbage.json").write_text("{not json")

    assert shell(home, claude, "cl-b", repo, "echo y > y.txt", use_id="f2") == ""
    assert edits_of(home, "cl-b") == [["y.txt"]]


def test_a_failed_commands_edit_is_found_at_the_sessions_next_shell_command(home: Path, repo: Path):
    holder = start(home, claude, "cl-a", repo)
    start(home, claude, "cl-b", repo)
    edit(home, "cl-a", repo, "src/api.py")
    command = "sed -i 's/1/2/' src/api.py && false"
    fields = {"tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": "fails"}
    hook("pre-tool-use", home, claude("pre-tool-use", "cl-b", repo, **fields))
    subprocess.run(["sh", "-c", command], cwd=repo)  # exits 1: Claude sends no PostToolUse

    said = shell(home, claude, "cl-b", repo, "ls", use_id="next")

    assert said == meets(holder)
    assert edits_of(home, "cl-b") == [["src/api.py"]]


def test_a_word_holding_a_secret_names_no_path_and_never_reaches_the_note(home: Path, repo: Path):
    start(home, claude, "cl-s", repo)
    secret = "Zx9-Sup3r/Secret"
    command = (
        f"curl -o out.bin https://deploy:{secret}@artifacts.example/x.tgz"
        f" && openssl enc -in a.txt -pass pass:{secret}.key && false"
    )
    fields = {"tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": "leak"}
    hook("pre-tool-use", home, claude("pre-tool-use", "cl-s", repo, **fields))
    notes = list((home / "shell").glob("*.json"))
    assert notes, "the PreToolUse note was written"
    stored = b"".join(p.read_bytes() for p in notes)
    assert b"Sup3r" not in stored
    assert b"out.bin" in stored and b"a.txt" in stored  # ordinary paths are still watched


def test_wildcards_above_the_last_part_expand_nothing_and_one_folder_is_bounded(tmp_path: Path):
    for i in range(3):
        (tmp_path / f"d{i}").mkdir()
        (tmp_path / f"d{i}" / "x.py").write_text("")
    for i in range(shell_edits.MAX_NAMED + 50):
        (tmp_path / f"f{i}.txt").write_text("")
    base = str(tmp_path)
    assert shell_edits.named_paths("ls */*.py /*/*/*/*/*/*/*", base) == []
    assert len(shell_edits.named_paths("cat *.txt", base)) == shell_edits.MAX_NAMED
