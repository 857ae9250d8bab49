"""Plan, then apply: every file is read, edited in memory and checked before anything is written.

A plan is a list of :class:`FileChange` (one per file, in a stable order). ``apply`` backs up
each file it is about to change or delete, then writes it atomically. Nothing is written when
any file cannot be read or edited, so an error never leaves a half-finished install.

Scopes:

- **user** writes the user's own config files with the absolute path of this machine's
  console script.
- **project** writes files meant to be committed (``.claude/settings.json``, ``.mcp.json``,
  ``.codex/hooks.json``), so they name ``colony-tasks`` as found on PATH: each teammate's
  per-machine step is to have it on PATH (``pipx install .`` from the checkout). What only this
  machine needs goes to user-level files: Codex's MCP server (Codex reads it from
  ``$CODEX_HOME/config.toml``) and Claude Code's approval of the ``.mcp.json`` server
  (``~/.claude.json`` ``projects[<repo>].enabledMcpjsonServers``).
- Gemini CLI and Qwen Code keep hooks and MCP servers in one ``settings.json`` per scope
  (``~/.gemini/``, ``~/.qwen/``; ``.gemini/``, ``.qwen/`` in the repository).
- Both scopes share Codex's ``[mcp_servers.colony-tasks]``: who installed it is recorded in
  ``$CODEX_HOME/colony-tasks.installs.json``, and uninstalling one scope removes the table only
  when no other scope still uses it (each scope removes exactly what it added).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from . import claude, codex, copilot, copilot_extension, gemini, opencode, record
from .files import (
    InstallError,
    ShapeProblem,
    atomic_write,
    backup,
    dump_json,
    generated,
    load_json_object,
    read_text,
    remove,
    same_json,
    shape_error,
    unified_diff,
)
from .locate import EXECUTABLE, find_executable, repo_root

Action = Literal["install", "uninstall"]
Agent = Literal["claude", "codex", "gemini", "qwen", "copilot", "opencode"]
Scope = Literal["user", "project"]
#: Every agent the installer knows, in the order it writes them.
AGENTS: tuple[Agent, ...] = ("claude", "codex", "gemini", "qwen", "copilot", "opencode")
#: The agents installed for whether or not they have run here (as before there were more).
ALWAYS: tuple[Agent, ...] = ("claude", "codex")


def found_agents() -> tuple[Agent, ...]:
    """The agents an install without ``--agent`` covers: Claude Code and Codex, and each other
    client found here (Gemini CLI's and Qwen Code's user folder; Copilot CLI's and OpenCode's
    config folder, or their executable on PATH)."""
    import shutil

    def present(agent: Agent) -> bool:
        if agent in ALWAYS:
            return True
        if agent in gemini.CLIENTS:
            return gemini.CLIENTS[agent].present()
        if agent == "copilot":
            return copilot.copilot_home().is_dir() or shutil.which("copilot") is not None
        return opencode.config_dir().is_dir() or shutil.which("opencode") is not None

    return tuple(a for a in AGENTS if present(a))


@dataclass
class FileChange:
    """One file's content before and after (None = the file does not exist / is deleted)."""

    path: Path
    what: list[str]
    before: str | None
    after: str | None
    private: bool = True
    backup: Path | None = None

    @property
    def changed(self) -> bool:
        return self.before != self.after

    @property
    def status(self) -> str:
        """created, updated, removed, unchanged or absent (missing and left missing)."""
        if not self.changed:
            return "unchanged" if self.before is not None else "absent"
        if self.before is None:
            return "created"
        return "removed" if self.after is None else "updated"

    def diff(self) -> str:
        return unified_diff(self.path, self.before, self.after) if self.changed else ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "what": self.what,
            "status": self.status,
            "backup": str(self.backup) if self.backup else None,
        }


@dataclass
class Plan:
    """What ``install``/``uninstall`` will do (or did) for the chosen agents and scope."""

    action: Action
    agents: tuple[Agent, ...]
    scope: Scope
    command: str | None
    changes: list[FileChange] = field(default_factory=list)

    @property
    def changed(self) -> list[FileChange]:
        return [change for change in self.changes if change.changed]

    def to_dict(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "agents": list(self.agents),
            "scope": self.scope,
            "command": self.command,
            "files": [change.to_dict() for change in self.changes],
        }


TextEdit = Callable[[Path, str | None], str | None]


def _json_edit(mutate: Callable[[dict[str, Any]], None], removing: bool) -> TextEdit:
    """Wrap an in-place edit of a JSON object as a text → text edit."""

    def edit(path: Path, text: str | None) -> str | None:
        data = load_json_object(path, text)
        updated = copy.deepcopy(data)
        try:
            mutate(updated)
        except ShapeProblem as problem:
            raise shape_error(path, problem) from None
        if same_json(updated, data):
            return text
        if removing and not updated:
            # Emptied by uninstall: delete it, unless it is a symlink we must not break.
            return dump_json({}, text) if path.is_symlink() else None
        return dump_json(updated, text)

    return edit


def _edits(
    action: Action,
    agents: Iterable[Agent],
    scope: Scope,
    command: str | None,
    root: Path | None,
    codex_owners: record.Owners,
) -> list[tuple[Path, str, TextEdit]]:
    removing = action == "uninstall"
    # Committed project files name the command on PATH; user files this machine's path.
    portable = EXECUTABLE if scope == "project" and command is not None else command
    owner = record.owner(scope, root)
    edits: list[tuple[Path, str, TextEdit]] = []
    if "claude" in agents:
        hooks = claude.uninstall_hooks if removing else _bind(claude.install_hooks, portable)
        mcp = claude.uninstall_mcp if removing else _bind(claude.install_mcp, portable)
        edits.append(
            (claude.settings_path(scope, root), "Claude Code hooks", _json_edit(hooks, removing))
        )
        edits.append(
            (claude.mcp_path(scope, root), "Claude Code MCP server", _json_edit(mcp, removing))
        )
        if scope == "project":
            assert root is not None
            approve = _bind_root(
                claude.withdraw_approval if removing else claude.approve_project, root
            )
            edits.append(
                (
                    claude.approval_path(),
                    "Claude Code approval of the project's MCP server",
                    _json_edit(approve, removing),
                )
            )
            if removing:
                edits.append(
                    (
                        claude.local_settings_path(root),
                        "Claude Code's own record of that approval",
                        _json_edit(claude.withdraw_local_approval, removing),
                    )
                )
    if "codex" in agents:
        hooks = codex.uninstall_hooks if removing else _bind(codex.install_hooks, portable)
        edits.append((codex.hooks_path(scope, root), "Codex hooks", _json_edit(hooks, removing)))
        others = codex_owners.without(owner)
        remove_entry = removing and codex_owners.removable_by(owner)
        if not removing or remove_entry:
            edits.append((codex.config_path(), "Codex MCP server", _toml_edit(removing, command)))
        kept = others if removing else codex_owners.with_(owner)
        edits.append(
            (
                record.path(),
                "who installed the Codex MCP server",
                _json_edit(record.mutate(kept), removing),
            )
        )
    for client in (gemini.CLIENTS[a] for a in agents if a in gemini.CLIENTS):
        path = client.settings_path(scope, root)
        if removing:
            hooks, mcp = gemini.uninstall_hooks, gemini.uninstall_mcp
        else:
            hooks = _bind(_bind_client(gemini.install_hooks, client), portable)
            mcp = _bind(gemini.install_mcp, portable)
        edits.append((path, f"{client.label} hooks", _json_edit(hooks, removing)))
        edits.append((path, f"{client.label} MCP server", _json_edit(mcp, removing)))
    if "copilot" in agents:
        hooks = copilot.uninstall_hooks if removing else _bind(copilot.install_hooks, portable)
        mcp = copilot.uninstall_mcp if removing else _bind(copilot.install_mcp, portable)
        edits.append(
            (copilot.hooks_path(scope, root), "Copilot CLI hooks", _json_edit(hooks, removing))
        )
        edits.append(
            (copilot.mcp_path(scope, root), "Copilot CLI MCP server", _json_edit(mcp, removing))
        )
        if scope == "user":
            edits.append(
                (
                    copilot_extension.extension_path(),
                    "Copilot CLI extension (wakes an idle session)",
                    _generated_edit(
                        copilot_extension.MARKER,
                        copilot_extension.extension_text,
                        removing,
                        portable,
                    ),
                )
            )
    if "opencode" in agents:
        edits.append(
            (
                opencode.plugin_path(scope, root),
                "OpenCode plugin",
                _generated_edit(opencode.MARKER, opencode.plugin_text, removing, portable),
            )
        )
        mcp = opencode.uninstall_mcp if removing else _bind(opencode.install_mcp, portable)
        edits.append(
            (opencode.config_path(scope, root), "OpenCode MCP server", _json_edit(mcp, removing))
        )
    return edits


def _bind_client(
    func: Callable[[gemini.Client, dict[str, Any], str], None], client: gemini.Client
) -> Callable[[dict[str, Any], str], None]:
    def bound(data: dict[str, Any], command: str) -> None:
        func(client, data, command)

    return bound


def _generated_edit(
    marker: str, text_of: Callable[[str], str], removing: bool, command: str | None
) -> TextEdit:
    """A file we write whole from a template (:func:`.files.generated`) for ``command``."""

    def render() -> str:
        assert command is not None  # an install always names its command
        return text_of(command)

    return generated(marker, removing, render)


def _bind_root(
    func: Callable[[dict[str, Any], Path], None], root: Path
) -> Callable[[dict[str, Any]], None]:
    def bound(data: dict[str, Any]) -> None:
        func(data, root)

    return bound


def _bind(
    func: Callable[[dict[str, Any], str], None], command: str | None
) -> Callable[[dict[str, Any]], None]:
    assert command is not None

    def bound(data: dict[str, Any]) -> None:
        func(data, command)

    return bound


def _toml_edit(removing: bool, command: str | None) -> TextEdit:
    def edit(path: Path, text: str | None) -> str | None:
        if removing:
            result = codex.uninstall_mcp(path, text)
            return "" if result is None and path.is_symlink() else result
        assert command is not None
        return codex.install_mcp(path, text, command)

    return edit


def make_plan(
    action: Action,
    agents: Iterable[Agent] | None = None,
    scope: Scope = "user",
    *,
    command: str | None = None,
    cwd: Path | None = None,
) -> Plan:
    """Compute every file's new content without writing anything.

    ``command`` is the hook executable (default: :func:`find_executable`; uninstall needs none).
    ``cwd`` is where project scope looks for the repository (default: the current directory).
    ``agents``: default :func:`found_agents`.
    """
    wanted = set(found_agents() if agents is None else agents)
    chosen = tuple(agent for agent in AGENTS if agent in wanted)
    if action == "install" and command is None:
        command = find_executable()
    root = repo_root(cwd) if scope == "project" else None
    plan = Plan(action, chosen, scope, command)
    owners = record.read()
    by_path: dict[Path, FileChange] = {}
    for path, what, edit in _edits(action, chosen, scope, command, root, owners):
        change = by_path.get(path)
        if change is None:
            text = read_text(path)
            private = root is None or not path.is_relative_to(root)
            change = by_path[path] = FileChange(path, [], text, text, private)
            plan.changes.append(change)
        change.what.append(what)
        change.after = edit(path, change.after)
    return plan


def apply(plan: Plan, now: float | None = None) -> Plan:
    """Write the plan: back up each file that changes, then write (or delete) it atomically."""
    for change in plan.changed:
        if change.before is not None:
            change.backup = backup(change.path, now)
        if change.after is None:
            remove(change.path)
            if not change.private:  # project folders (.claude/, .opencode/plugins/) left empty
                _remove_empty_folders(change.path.parent)
            elif change.path == copilot_extension.extension_path():
                _remove_empty_folders(change.path.parent, stop=1)  # the extension's own folder
        else:
            atomic_write(change.path, change.after, private=change.private)
    return plan


def _remove_empty_folders(folder: Path, stop: int | None = None) -> None:
    """``folder`` and the folders above it that it emptied, up to the repository root (or
    ``stop`` folders at most)."""
    removed = 0
    while not (folder / ".git").exists() and (stop is None or removed < stop):
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent
        removed += 1


def run(
    action: Action,
    agents: Iterable[Agent] | None = None,
    scope: Scope = "user",
    *,
    dry_run: bool = False,
    command: str | None = None,
    cwd: Path | None = None,
) -> Plan:
    """Plan and (unless ``dry_run``) apply ``install`` or ``uninstall``."""
    plan = make_plan(action, agents, scope, command=command, cwd=cwd)
    return plan if dry_run else apply(plan)


__all__ = ["FileChange", "InstallError", "Plan", "apply", "found_agents", "make_plan", "run"]
