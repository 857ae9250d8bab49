"""`colony-tasks install` / `uninstall` and the committed plugin files."""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import tomlkit
from click.testing import CliRunner

from colony_tasks.cli import cli
from colony_tasks.install import InstallError, layout, locate, make_plan, run
from colony_tasks.install.hookblock import EVENTS, events_for, is_our_handler
from tests.support import ROOT

EXE = "/opt/venv-a/bin/colony-tasks"
OTHER_EXE = "/home/me/.local/pipx/venvs/colony-tasks/bin/colony-tasks"
REPO = ROOT
SCHEMAS = ROOT.parent / "shared" / "schemas"

USER_SETTINGS = {
    "model": "opus",
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "my-guard", "timeout": 7}]}
        ],
        "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}],
    },
}
USER_CLAUDE_STATE = {"numStartups": 4, "mcpServers": {"memory": {"command": "mem", "args": []}}}
USER_CODEX_HOOKS = {
    "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done", "timeout": 2}]}]}
}
USER_CODEX_CONFIG = """\
# My Codex setup.
model = "gpt-5"  # the default

[mcp_servers.docs]
command = "docs-server"   # keep this comment
args = ["--stdio"]

# UI
[tui]
notifications = true
"""


@dataclass
class Homes:
    """The temporary home and the files the installer may touch there."""

    home: Path
    claude_settings: Path
    claude_state: Path
    codex_hooks: Path
    codex_config: Path

    @property
    def all(self) -> list[Path]:
        return [self.claude_settings, self.claude_state, self.codex_hooks, self.codex_config]

    @property
    def codex_record(self) -> Path:
        """Who installed the Codex MCP server both scopes share."""
        return self.codex_config.parent / "colony-tasks.installs.json"


@pytest.fixture
def homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Homes:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.delenv("COLONY_TASKS_HOME", raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("colony_tasks.install.plan.find_executable", lambda: EXE)
    return Homes(
        home=home,
        claude_settings=home / ".claude" / "settings.json",
        claude_state=home / ".claude.json",
        codex_hooks=home / ".codex" / "hooks.json",
        codex_config=home / ".codex" / "config.toml",
    )


def write_json(path: Path, data: object, indent: int = 2) -> str:
    text = json.dumps(data, indent=indent) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return text


def seed_user_files(homes: Homes) -> dict[Path, bytes]:
    """Give the home a user's own hooks, MCP servers and a commented config.toml."""
    write_json(homes.claude_settings, USER_SETTINGS)
    write_json(homes.claude_state, USER_CLAUDE_STATE)
    write_json(homes.codex_hooks, USER_CODEX_HOOKS)
    homes.codex_config.write_text(USER_CODEX_CONFIG)
    return {path: path.read_bytes() for path in homes.all}


def snapshot(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def load(path: Path) -> dict:
    return json.loads(path.read_text())


def our_handlers(data: dict) -> list[tuple[str, dict]]:
    return [
        (event, handler)
        for event, groups in data.get("hooks", {}).items()
        for group in groups
        for handler in group["hooks"]
        if is_our_handler(handler)
    ]


def claude_events() -> list[str]:
    """The events of our Claude Code handlers, in order: Stop twice (its background wait)."""
    names = [e.name for e in EVENTS]
    return [*names[: names.index("Stop") + 1], "Stop", *names[names.index("Stop") + 1 :]]


def cli_run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


# --- schemas ------------------------------------------------------------------------------------


def validator(name: str):
    if not SCHEMAS.is_dir():
        pytest.skip("../shared/schemas not present (a user's clone has no ../shared)")
    from jsonschema import Draft7Validator

    schema = json.loads((SCHEMAS / name).read_text())
    Draft7Validator.check_schema(schema)
    return Draft7Validator(schema)


def assert_valid(name: str, data: dict) -> None:
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator(name).iter_errors(data)]
    assert errors == []


def test_installed_claude_settings_validate_against_the_settings_schema(homes: Homes) -> None:
    seed_user_files(homes)
    run("install", command=EXE)
    assert_valid("claude-code-settings.json", load(homes.claude_settings))


def test_installed_codex_hooks_validate_against_the_codex_hooks_schema(homes: Homes) -> None:
    seed_user_files(homes)
    run("install", command=EXE)
    data = load(homes.codex_hooks)
    assert_valid("codex-hooks.json", data)
    ends = [h for e, h in our_handlers(data) if e == "SessionEnd"]
    assert ends, "SessionEnd is not installed"
    assert all(isinstance(h["timeout"], int) and h["timeout"] <= 3 for h in ends)


def test_project_files_validate_against_their_schemas(tmp_path: Path, homes: Homes) -> None:
    (tmp_path / "proj" / ".git").mkdir(parents=True)
    run("install", scope="project", command=EXE, cwd=tmp_path / "proj")
    assert_valid("claude-code-settings.json", load(tmp_path / "proj/.claude/settings.json"))
    assert_valid("codex-hooks.json", load(tmp_path / "proj/.codex/hooks.json"))


def test_plugin_manifest_and_plugin_hooks_validate_against_their_schemas() -> None:
    assert_valid("claude-code-plugin-manifest.json", layout.plugin_manifest())
    assert_valid("claude-code-settings.json", layout.plugin_hooks())
    assert_valid("claude-code-settings.json", layout.settings_example())


# --- where files go -----------------------------------------------------------------------------


def test_user_scope_writes_hooks_and_mcp_servers_under_the_home(homes: Homes) -> None:
    plan = run("install", command=EXE)

    assert [c.path for c in plan.changes] == [*homes.all, homes.codex_record]
    assert {c.status for c in plan.changes} == {"created"}
    claude = load(homes.claude_settings)
    assert [e for e, _ in our_handlers(claude)] == claude_events()
    # Stop also runs the background wait that wakes an idle session (docs/wake.md).
    assert claude["hooks"]["Stop"][0]["hooks"][1] == {
        "type": "command",
        "command": EXE,
        "args": ["hook", "wait", "--agent", "claude"],
        "timeout": 24 * 3600,
        "async": True,
        "asyncRewake": True,
    }
    codex_events = [e for e, _ in our_handlers(load(homes.codex_hooks))]
    assert codex_events == [e.name for e in events_for("codex")]
    assert "PostToolUseFailure" not in codex_events and "SubagentStart" in codex_events
    start = claude["hooks"]["SessionStart"][0]["hooks"][0]
    assert start == {
        "type": "command",
        "command": EXE,
        "args": ["hook", "session-start", "--agent", "claude"],
        "timeout": 10,
    }
    assert (
        claude["hooks"]["PreToolUse"][0]["matcher"] == "Edit|Write|MultiEdit|NotebookEdit|Bash|Read"
    )
    assert load(homes.claude_state)["mcpServers"]["colony-tasks"] == {
        "command": EXE,
        "args": ["mcp"],
        "env": {"COLONY_TASKS_HOME": "${COLONY_TASKS_HOME:-}"},
    }
    codex = load(homes.codex_hooks)
    post = re.compile(codex["hooks"]["PostToolUse"][0]["matcher"])
    for tool in ("apply_patch", "Bash", "mcp__colony-tasks__answer_question"):
        assert post.search(tool), tool
    for tool in ("Read", "mcp__other__answer_question", "apply_patch_x"):
        assert not post.search(tool), tool
    assert codex["hooks"]["Stop"][0]["hooks"][0]["command"] == f"{EXE} hook stop --agent codex"
    server = tomlkit.parse(homes.codex_config.read_text())["mcp_servers"]["colony-tasks"]
    assert server.unwrap() == {"command": EXE, "args": ["mcp"], "env_vars": ["COLONY_TASKS_HOME"]}


def test_claude_config_dir_and_codex_home_move_the_user_files(
    tmp_path: Path, homes: Homes, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-work"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-work"))

    plan = run("install", command=EXE)

    assert [c.path for c in plan.changes] == [
        tmp_path / "claude-work/settings.json",
        tmp_path / "claude-work/.claude.json",
        tmp_path / "codex-work/hooks.json",
        tmp_path / "codex-work/config.toml",
        tmp_path / "codex-work/colony-tasks.installs.json",
    ]
    assert snapshot(homes.home) == {}


def test_project_scope_writes_under_the_repository_root_found_from_a_subfolder(
    tmp_path: Path, homes: Homes
) -> None:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "src" / "pkg").mkdir(parents=True)

    plan = run("install", scope="project", command=EXE, cwd=root / "src" / "pkg")

    assert [c.path for c in plan.changes] == [
        root / ".claude/settings.json",
        root / ".mcp.json",
        homes.claude_state,  # this machine's approval of the .mcp.json server
        root / ".codex/hooks.json",
        homes.codex_config,  # Codex reads MCP servers from the user config
        homes.codex_record,
    ]
    assert load(root / ".mcp.json") == {
        "mcpServers": {
            "colony-tasks": {
                "command": "colony-tasks",
                "args": ["mcp"],
                "env": {"COLONY_TASKS_HOME": "${COLONY_TASKS_HOME:-}"},
            }
        }
    }
    assert load(homes.claude_state) == {
        "projects": {str(root): {"enabledMcpjsonServers": ["colony-tasks"]}}
    }
    assert not homes.claude_settings.exists()


def test_project_files_name_the_command_on_path_never_this_machines_path(
    tmp_path: Path, homes: Homes
) -> None:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    run("install", scope="project", command=EXE, cwd=root)
    committed = [p for p in root.rglob("*") if p.is_file() and ".git" not in p.parts]
    assert len(committed) == 3
    for path in committed:
        assert EXE not in path.read_text() and str(tmp_path) not in path.read_text(), path
    claude = load(root / ".claude/settings.json")
    assert {h["command"] for _, h in our_handlers(claude)} == {"colony-tasks"}
    codex = load(root / ".codex/hooks.json")
    assert {h["command"].split()[0] for _, h in our_handlers(codex)} == {"colony-tasks"}
    # What only this machine needs names its absolute path, in user-level files.
    server = tomlkit.parse(homes.codex_config.read_text())["mcp_servers"]["colony-tasks"]
    assert server["command"] == EXE


def _codex_server(homes: Homes) -> dict | None:
    if not homes.codex_config.exists():
        return None
    return (
        tomlkit.parse(homes.codex_config.read_text())
        .unwrap()
        .get("mcp_servers", {})
        .get("colony-tasks")
    )


@pytest.mark.parametrize("first", ["user", "project"])
def test_each_scope_removes_only_what_it_added_in_either_order(
    tmp_path: Path, homes: Homes, first: str
) -> None:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    second = "project" if first == "user" else "user"
    run("install", scope=first, command=EXE, cwd=root)
    run("install", scope=second, command=EXE, cwd=root)
    assert _codex_server(homes) is not None

    run("uninstall", scope=first, cwd=root)
    assert _codex_server(homes) is not None, f"uninstalling {first} took {second}'s server"
    if second == "project":
        assert our_handlers(load(root / ".codex/hooks.json"))
        assert load(homes.claude_state)["projects"][str(root)]["enabledMcpjsonServers"] == [
            "colony-tasks"
        ]
    else:
        assert our_handlers(load(homes.codex_hooks)) and "mcpServers" in load(homes.claude_state)

    run("uninstall", scope=second, cwd=root)
    assert _codex_server(homes) is None
    assert not homes.codex_record.exists()
    assert not homes.claude_state.exists() and not (root / ".mcp.json").exists()


def test_uninstalling_a_scope_that_never_installed_leaves_the_shared_server(
    tmp_path: Path, homes: Homes
) -> None:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    run("install", scope="user", command=EXE)
    before = homes.codex_config.read_bytes()
    run("uninstall", scope="project", cwd=root)
    assert homes.codex_config.read_bytes() == before


def test_project_approval_keeps_the_users_other_approvals_and_projects(
    tmp_path: Path, homes: Homes
) -> None:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    state = {
        "numStartups": 4,
        "projects": {
            str(root): {"hasTrustDialogAccepted": True, "enabledMcpjsonServers": ["docs"]},
            "/elsewhere": {"enabledMcpjsonServers": ["x"]},
        },
    }
    original = write_json(homes.claude_state, state)
    run("install", scope="project", agents=["claude"], command=EXE, cwd=root)
    approved = load(homes.claude_state)["projects"][str(root)]["enabledMcpjsonServers"]
    assert approved == ["docs", "colony-tasks"]
    run("uninstall", scope="project", agents=["claude"], cwd=root)
    assert homes.claude_state.read_text() == original


def test_project_scope_outside_a_repository_is_a_clear_error(tmp_path: Path, homes: Homes) -> None:
    result = CliRunner().invoke(cli, ["install", "--scope", "project"])

    assert result.exit_code == 1
    assert "No git repository found at or above" in result.output
    assert "--scope user" in result.output
    assert snapshot(homes.home) == {}


def test_agent_option_limits_the_files_to_one_agent(homes: Homes) -> None:
    result = cli_run("install", "--agent", "codex")

    assert result.exit_code == 0
    assert homes.codex_hooks.exists() and homes.codex_config.exists()
    assert not homes.claude_settings.exists() and not homes.claude_state.exists()


# --- idempotence and restoration ----------------------------------------------------------------


def test_installing_twice_leaves_every_file_byte_identical(homes: Homes) -> None:
    seed_user_files(homes)
    run("install", command=EXE)
    first = snapshot(homes.home)

    plan = run("install", command=EXE)

    assert [c.status for c in plan.changes] == ["unchanged"] * 5
    assert snapshot(homes.home) == first


def test_uninstall_restores_user_hooks_servers_and_toml_comments_byte_for_byte(
    homes: Homes,
) -> None:
    originals = seed_user_files(homes)
    run("install", command=EXE)
    assert homes.codex_config.read_text().startswith(USER_CODEX_CONFIG)

    run("uninstall")

    assert {path: path.read_bytes() for path in homes.all} == originals


def test_uninstall_deletes_the_files_install_created(homes: Homes) -> None:
    run("install", command=EXE)

    plan = run("uninstall")

    assert [c.status for c in plan.changes] == ["removed"] * 5
    assert not any(path.exists() for path in [*homes.all, homes.codex_record])


def test_uninstall_without_install_changes_nothing(homes: Homes) -> None:
    originals = seed_user_files(homes)

    plan = run("uninstall")

    assert [c.status for c in plan.changes] == ["unchanged"] * 4 + ["absent"]
    assert {path: path.read_bytes() for path in homes.all} == originals
    assert not list(homes.home.rglob("*.bak"))


def test_user_handlers_keep_their_place_next_to_ours(homes: Homes) -> None:
    seed_user_files(homes)
    run("install", command=EXE)

    groups = load(homes.claude_settings)["hooks"]["PreToolUse"]

    assert groups[0] == USER_SETTINGS["hooks"]["PreToolUse"][0]
    assert is_our_handler(groups[1]["hooks"][0])
    assert load(homes.codex_hooks)["hooks"]["Stop"][0] == USER_CODEX_HOOKS["hooks"]["Stop"][0]
    assert load(homes.claude_state)["mcpServers"]["memory"] == {"command": "mem", "args": []}


def test_reinstall_from_another_venv_replaces_rather_than_duplicates(homes: Homes) -> None:
    seed_user_files(homes)
    run("install", command=OTHER_EXE)
    run("install", command=EXE)

    for path, agent in ((homes.claude_settings, "claude"), (homes.codex_hooks, "codex")):
        handlers = our_handlers(load(path))
        assert len(handlers) == len(events_for(agent)) + (agent == "claude")  # + the wait
        assert all(OTHER_EXE not in json.dumps(h) for _, h in handlers)
    assert (
        tomlkit.parse(homes.codex_config.read_text())["mcp_servers"]["colony-tasks"]["command"]
        == EXE
    )
    assert homes.codex_config.read_text().count("colony-tasks]") == 1


def test_handlers_of_other_tools_that_look_similar_are_left_alone() -> None:
    assert is_our_handler({"type": "command", "command": "colony-tasks", "args": ["hook", "stop"]})
    assert is_our_handler({"type": "command", "command": "'/a b/colony-tasks' hook stop"})
    assert not is_our_handler({"type": "command", "command": "colony-tasks-helper hook stop"})
    assert not is_our_handler({"type": "command", "command": "colony-tasks", "args": ["mcp"]})
    assert not is_our_handler({"type": "command", "command": "echo colony-tasks hook"})
    assert not is_our_handler({"type": "command", "command": "unterminated 'quote"})


def test_codex_command_quotes_a_path_with_spaces_and_still_recognises_it(homes: Homes) -> None:
    spaced = "/Users/me/My Tools/venv/bin/colony-tasks"
    run("install", agents=["codex"], command=spaced)
    run("install", agents=["codex"], command=spaced)

    handlers = our_handlers(load(homes.codex_hooks))

    assert handlers[0][1]["command"] == f"'{spaced}' hook session-start --agent codex"
    assert len(handlers) == len(events_for("codex"))


def test_our_handlers_under_events_we_no_longer_use_are_removed(homes: Homes) -> None:
    stale = {"type": "command", "command": OTHER_EXE, "args": ["hook", "teammate-idle"]}
    write_json(homes.claude_settings, {"hooks": {"TeammateIdle": [{"hooks": [stale]}]}})

    run("install", agents=["claude"], command=EXE)

    assert "TeammateIdle" not in load(homes.claude_settings)["hooks"]


def test_an_existing_mcp_entry_keeps_the_users_extra_keys(homes: Homes) -> None:
    server = {"command": OTHER_EXE, "args": ["mcp"], "env": {"COLONY_TASKS_HOME": "/data"}}
    write_json(homes.claude_state, {"mcpServers": {"colony-tasks": server}})
    homes.codex_config.parent.mkdir(parents=True)
    homes.codex_config.write_text(
        f'[mcp_servers.colony-tasks]\ncommand = "{OTHER_EXE}"\nstartup_timeout_sec = 20\n'
    )

    run("install", command=EXE)

    assert load(homes.claude_state)["mcpServers"]["colony-tasks"] == {**server, "command": EXE}
    assert homes.codex_config.read_text() == (
        f'[mcp_servers.colony-tasks]\ncommand = "{EXE}"\nstartup_timeout_sec = 20\nargs = ["mcp"]\n'
        'env_vars = ["COLONY_TASKS_HOME"]\n'
    )


def test_an_inline_mcp_servers_table_is_edited_in_place(homes: Homes) -> None:
    homes.codex_config.parent.mkdir(parents=True)
    original = 'mcp_servers = { docs = { command = "docs" } }\n'
    homes.codex_config.write_text(original)

    run("install", agents=["codex"], command=EXE)
    servers = tomlkit.parse(homes.codex_config.read_text()).unwrap()["mcp_servers"]
    assert servers == {
        "docs": {"command": "docs"},
        "colony-tasks": {"command": EXE, "args": ["mcp"], "env_vars": ["COLONY_TASKS_HOME"]},
    }

    run("uninstall", agents=["codex"])
    assert (
        tomlkit.parse(homes.codex_config.read_text()).unwrap() == tomlkit.parse(original).unwrap()
    )


def test_json_indent_of_the_users_file_is_kept(homes: Homes) -> None:
    original = write_json(homes.claude_settings, USER_SETTINGS, indent=4)

    run("install", agents=["claude"], command=EXE)
    assert '\n    "hooks": {\n        "PreToolUse"' in homes.claude_settings.read_text()

    run("uninstall", agents=["claude"])
    assert homes.claude_settings.read_text() == original


# --- safety: backups, modes, errors, dry run -----------------------------------------------------


def test_backups_hold_each_changed_files_previous_content(homes: Homes) -> None:
    originals = seed_user_files(homes)

    plan = run("install", command=EXE)

    for change in (c for c in plan.changes if c.path in originals):
        assert change.backup is not None
        assert change.backup.name.startswith(change.path.name + ".colony-tasks-")
        assert change.backup.is_relative_to(homes.home / ".colony-tasks" / "backups")
        assert change.backup.read_bytes() == originals[change.path]


def test_file_modes_are_kept_and_new_user_files_are_private(homes: Homes) -> None:
    write_json(homes.claude_settings, USER_SETTINGS)
    homes.claude_settings.chmod(0o640)

    run("install", command=EXE)

    assert stat.S_IMODE(homes.claude_settings.stat().st_mode) == 0o640
    assert stat.S_IMODE(homes.claude_state.stat().st_mode) == 0o600


def test_a_symlinked_settings_file_stays_a_symlink(tmp_path: Path, homes: Homes) -> None:
    target = tmp_path / "dotfiles" / "settings.json"
    write_json(target, USER_SETTINGS)
    homes.claude_settings.parent.mkdir(parents=True)
    homes.claude_settings.symlink_to(target)

    run("install", agents=["claude"], command=EXE)

    assert homes.claude_settings.is_symlink()
    assert our_handlers(load(target))


def test_malformed_settings_json_is_a_clear_error_and_nothing_is_written(homes: Homes) -> None:
    homes.claude_settings.parent.mkdir(parents=True)
    broken = '{\n  "model": "opus",\n}\n'
    homes.claude_settings.write_text(broken)

    result = CliRunner().invoke(cli, ["install"])

    assert result.exit_code == 1
    assert f"{homes.claude_settings} is not valid JSON (line 3" in result.output
    assert "Traceback" not in result.output
    assert homes.claude_settings.read_text() == broken
    assert snapshot(homes.home) == {".claude/settings.json": broken.encode()}


def test_a_hooks_value_of_the_wrong_type_is_reported_with_the_file_name(homes: Homes) -> None:
    write_json(homes.codex_hooks, {"hooks": {"Stop": "say done"}})

    with pytest.raises(InstallError, match=r"hooks\.json: `hooks\.Stop` should be a list"):
        run("install", command=EXE)


def test_malformed_config_toml_is_a_clear_error(homes: Homes) -> None:
    homes.codex_config.parent.mkdir(parents=True)
    homes.codex_config.write_text("model = \n")

    result = CliRunner().invoke(cli, ["install", "--agent", "codex"])

    assert result.exit_code == 1
    assert f"{homes.codex_config} is not valid TOML" in result.output
    assert homes.codex_config.read_text() == "model = \n"


def test_dry_run_prints_a_unified_diff_and_writes_nothing(homes: Homes) -> None:
    seed_user_files(homes)
    before = snapshot(homes.home)

    result = cli_run("install", "--dry-run")

    assert result.exit_code == 0
    assert f"--- {homes.claude_settings}\n+++ {homes.claude_settings}\n" in result.output
    assert "+[mcp_servers.colony-tasks]\n" in result.output
    assert result.output.rstrip().endswith("Dry run: nothing was written.")
    assert snapshot(homes.home) == before


def test_dry_run_of_a_new_file_diffs_against_dev_null(homes: Homes) -> None:
    result = cli_run("uninstall", "--dry-run")
    assert "Nothing to change" in result.output

    result = cli_run("install", "--dry-run", "--agent", "claude")
    assert f"--- /dev/null\n+++ {homes.claude_state}\n" in result.output
    assert snapshot(homes.home) == {}


def test_install_prints_each_file_its_status_and_backup(homes: Homes) -> None:
    seed_user_files(homes)

    result = cli_run("install")

    lines = result.output.splitlines()
    assert lines[0] == f"Hook command: {EXE}"
    assert lines[1].startswith(
        f"updated  {homes.claude_settings}  (backup: {homes.home}/.colony-tasks/backups/"
    )
    assert "Installed for Claude Code and Codex (user scope)." in result.output
    assert "/hooks" in result.output
    again = cli_run("install")
    assert "Already installed for Claude Code and Codex (user scope)" in again.output
    removed = cli_run("uninstall")
    assert "Removed colony-tasks from Claude Code and Codex (user scope)." in removed.output


def test_json_output_lists_files_with_status_and_diff(homes: Homes) -> None:
    result = cli_run("install", "--json", "--dry-run", "--agent", "codex")

    data = json.loads(result.output)
    assert data["dry_run"] is True and data["command"] == EXE
    assert [f["status"] for f in data["files"]] == ["created"] * 3
    assert data["files"][1]["diff"].startswith("--- /dev/null")


def test_planning_never_writes(homes: Homes) -> None:
    make_plan("install", command=EXE)
    assert snapshot(homes.home) == {}


# --- executable lookup --------------------------------------------------------------------------


def test_the_script_beside_the_interpreter_wins_without_resolving_symlinks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = tmp_path / "python-install" / "python3"
    real.parent.mkdir()
    real.write_text("")
    venv_bin = tmp_path / "venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "python").symlink_to(real)
    (venv_bin / "colony-tasks").write_text("#!/bin/sh\n")
    monkeypatch.setattr(sys, "executable", str(venv_bin / "python"))

    assert locate.find_executable() == str(venv_bin / "colony-tasks")


def test_the_script_on_path_is_used_when_none_is_beside_the_interpreter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "executable", str(tmp_path / "bare" / "python"))
    tools = tmp_path / "tools"
    tools.mkdir()
    script = tools / "colony-tasks"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", str(tools))

    assert locate.find_executable() == str(script)

    monkeypatch.setenv("PATH", os.devnull)
    with pytest.raises(InstallError, match="Cannot find the colony-tasks executable"):
        locate.find_executable()


# --- plugin layout ------------------------------------------------------------------------------


def test_committed_plugin_files_equal_the_generated_ones() -> None:
    stale = layout.drifted(REPO)
    assert stale == [], f"regenerate with `python -m colony_tasks.install.layout`: {stale}"


def test_plugin_files_run_the_launcher_for_both_agents() -> None:
    hooks = layout.plugin_hooks()
    handlers = our_handlers(hooks)
    assert [e for e, _ in handlers] == claude_events()
    for event, handler in handlers:
        slug = next(e.slug for e in EVENTS if e.name == event)
        if handler.get("asyncRewake"):  # the background wait (Codex skips async handlers)
            assert (event, handler.get("async")) == ("Stop", True)
            slug = "wait"
        # Shell form, as Codex needs; the launcher adds --agent.
        assert handler["command"] == f'"${{CLAUDE_PLUGIN_ROOT}}/bin/colony-tasks" hook {slug}'
    pre = hooks["hooks"]["PreToolUse"][0]["matcher"]
    assert re.fullmatch(pre, "Edit") and re.fullmatch(pre, "apply_patch")
    assert re.fullmatch(pre, "Read")  # a read of a held file is told once (docs/lifecycle.md)
    assert not re.fullmatch(pre, "Glob")
    post = hooks["hooks"]["PostToolUse"][0]["matcher"]
    assert re.fullmatch(post, "mcp__plugin_colony-tasks_colony-tasks__task_post")
    assert layout.plugin_mcp() == {
        "mcpServers": {
            "colony-tasks": {
                "command": "${CLAUDE_PLUGIN_ROOT}/bin/colony-tasks",
                "args": ["mcp"],
                "env": {"COLONY_TASKS_HOME": "${COLONY_TASKS_HOME:-}"},
            }
        }
    }
    # Codex expands no variables in a plugin's MCP file: the launcher runs from the plugin's
    # folder (a relative cwd), and the store's folder is forwarded as in config.toml.
    (codex_server,) = layout.codex_plugin_mcp()["mcpServers"].values()
    assert codex_server["cwd"] == "."
    assert codex_server["command"] == "sh" and codex_server["args"] == ["./bin/colony-tasks", "mcp"]
    assert codex_server["env_vars"] == ["COLONY_TASKS_HOME"]
    assert "${" not in json.dumps(codex_server)
    assert layout.codex_manifest()["mcpServers"] == "./.codex-plugin/mcp.json"
    example = layout.settings_example()["hooks"]
    assert {h["command"] for _, h in our_handlers({"hooks": example})} == {"colony-tasks"}


def test_plugin_and_marketplace_manifests_validate_against_their_schemas() -> None:
    assert_valid("codex-hooks.json", layout.plugin_hooks())
    assert_valid("codex-plugin-manifest.json", layout.codex_manifest())
    claude_market = layout.claude_marketplace()
    assert claude_market["plugins"][0]["source"] == "./"
    assert claude_market["plugins"][0]["name"] == layout.plugin_manifest()["name"]
    codex_market = layout.codex_marketplace()
    assert codex_market["plugins"][0]["source"] == {"source": "local", "path": "./"}
    assert codex_market["plugins"][0]["name"] == layout.codex_manifest()["name"]
    assert (REPO / "bin" / "colony-tasks").stat().st_mode & stat.S_IXUSR


def test_layout_check_reports_drift_and_write_fixes_it(tmp_path: Path) -> None:
    assert layout.main([str(tmp_path), "--check"]) == 1
    assert layout.main([str(tmp_path)]) == 0
    assert layout.main([str(tmp_path), "--check"]) == 0
    assert snapshot(tmp_path).keys() == layout.generated_files().keys()


def test_a_reinstall_updates_our_handler_where_it_stands(homes: Homes) -> None:
    run("install", agents=["claude"], command=OTHER_EXE)
    data = load(homes.claude_settings)
    mine = {"matcher": "Bash", "hooks": [{"type": "command", "command": "audit-bash"}]}
    data["hooks"]["PostToolUse"].append(mine)
    write_json(homes.claude_settings, data)

    run("install", agents=["claude"], command=EXE)

    groups = load(homes.claude_settings)["hooks"]["PostToolUse"]
    assert groups[0]["hooks"][0]["command"] == EXE
    assert groups[1] == mine


def test_project_install_says_what_each_machine_must_do_once(tmp_path: Path, homes: Homes) -> None:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    os.chdir(root)
    result = cli_run("install", "--scope", "project")
    out = " ".join(result.output.split())
    assert "run `colony-tasks` from PATH" in out
    assert "workspace trust" in out and "open /hooks" in out
    assert "trust the project" in out


def test_install_help_names_the_folder_backups_really_go_to(homes: Homes) -> None:
    seed_user_files(homes)
    help_text = " ".join(cli_run("install", "--help").output.split())
    change = next(c for c in run("install", command=EXE).changes if c.backup is not None)
    assert change.backup is not None
    backups = change.backup.parent.parent
    assert backups == homes.home / ".colony-tasks" / "backups"
    assert "~/.colony-tasks/backups/" in help_text
    assert "<file>.colony-tasks-<timestamp>.bak" in help_text
    assert change.backup.name.startswith(change.path.name + ".colony-tasks-")


def test_project_uninstall_leaves_no_approval_and_no_empty_folder(
    tmp_path: Path, homes: Homes
) -> None:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    run("install", scope="project", command=EXE, cwd=root)
    # Claude Code records the user's approval of the .mcp.json server here itself.
    local = root / ".claude" / "settings.local.json"
    write_json(local, {"enabledMcpjsonServers": ["colony-tasks", "other"], "model": "opus"})

    run("uninstall", scope="project", cwd=root)

    assert load(local) == {"enabledMcpjsonServers": ["other"], "model": "opus"}
    assert not (root / ".codex").exists()
    local.unlink()
    run("install", scope="project", command=EXE, cwd=root)
    write_json(local, {"enabledMcpjsonServers": ["colony-tasks"]})
    run("uninstall", scope="project", cwd=root)
    assert sorted(p.name for p in root.iterdir()) == [".git"]


def test_doctor_names_the_events_an_older_install_lacks(homes: Homes) -> None:
    from colony_tasks.install import status

    run("install", command=EXE)
    assert status.report(None)[0] == []
    settings = load(homes.claude_settings)
    for event in ("SubagentStart", "StopFailure"):
        del settings["hooks"][event]  # as an install by an older version left it
    write_json(homes.claude_settings, settings)

    problems, _ = status.report(None)

    assert len(problems) == 1
    assert str(homes.claude_settings) in problems[0]
    assert "SubagentStart, StopFailure" in problems[0] and "install` again" in problems[0]


def test_doctor_names_a_missing_background_wait(homes: Homes) -> None:
    from colony_tasks.install import status

    run("install", command=EXE)
    settings = load(homes.claude_settings)
    del settings["hooks"]["Stop"][0]["hooks"][1]  # an install from before waking existed
    write_json(homes.claude_settings, settings)

    problems, _ = status.report(None)

    assert len(problems) == 1
    assert "Stop (the background wait that wakes an idle session)" in problems[0]
    run("install", command=EXE)
    assert status.report(None)[0] == []
