"""``colony-tasks install`` and ``colony-tasks uninstall``."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from typing import TYPE_CHECKING

import click

from .app import cli
from .output import CONTEXT_SETTINGS, emit, json_option

if TYPE_CHECKING:
    from ..install import Plan
    from ..install.plan import Action

# The installers (and tomlkit) are imported by these two commands only, not at start-up: every
# other command, a search included, would pay ~15 ms for them. Deferred for weight, not a cycle.

AGENT_NAMES = {
    "claude": "Claude Code",
    "codex": "Codex",
    "gemini": "Gemini CLI",
    "qwen": "Qwen Code",
    "copilot": "GitHub Copilot CLI",
    "opencode": "OpenCode",
}


def _options(func: Callable) -> Callable:
    func = json_option(func)
    func = click.option(
        "--git-guard",
        is_flag=True,
        help="Only the opt-in git pre-commit guard of the current repository (see `guard`).",
    )(func)
    func = click.option(
        "--dry-run", is_flag=True, help="Print a diff of each file instead of writing."
    )(func)
    func = click.option(
        "--scope",
        type=click.Choice(["user", "project"]),
        default="user",
        show_default=True,
        help="user: your own config folders. project: the current git repository.",
    )(func)
    func = click.option(
        "--agent",
        type=click.Choice([*AGENT_NAMES, "all"]),
        default="all",
        show_default=True,
        help="Which agent to configure (all: Claude Code, Codex, and the others found here).",
    )(func)
    return func


def _render(plan: Plan, dry_run: bool) -> str:
    agents = " and ".join(AGENT_NAMES[a] for a in plan.agents)
    if dry_run:
        diffs = [change.diff() for change in plan.changed]
        if not diffs:
            return f"Nothing to change for {agents} ({plan.scope} scope)."
        return "".join(diffs) + "Dry run: nothing was written."
    lines = [f"Hook command: {plan.command}"] if plan.command else []
    width = max(len(change.status) for change in plan.changes)
    for change in plan.changes:
        line = f"{change.status.ljust(width)}  {change.path}"
        if change.backup:
            line += f"  (backup: {change.backup})"
        lines.append(line)
    if not plan.changed:
        if plan.action == "install":
            lines.append(f"Already installed for {agents} ({plan.scope} scope): nothing to change.")
        else:
            lines.append(f"Not installed for {agents} ({plan.scope} scope): nothing to remove.")
    elif plan.action == "install":
        lines.append(f"Installed for {agents} ({plan.scope} scope). New sessions pick it up.")
    if plan.action == "install":
        lines.extend(next_steps(plan))
    elif plan.changed:
        lines.append(f"Removed colony-tasks from {agents} ({plan.scope} scope).")
    return "\n".join(lines)


def next_steps(plan: Plan) -> list[str]:
    """What the user still has to do once, by hand, for the agents to run the hooks."""
    from ..install import status
    from ..install.locate import EXECUTABLE

    steps = []
    if plan.scope == "project":
        steps.append(
            "The project files run `colony-tasks` from PATH, so they can be committed. Each"
            " teammate installs colony-tasks from the checkout (`pipx install .` or"
            " `uv tool install .`) and runs"
            " `colony-tasks install --scope project` once: that records this machine's Codex"
            " MCP server and Claude Code's approval of .mcp.json in their own user files."
        )
        if shutil.which(EXECUTABLE) is None:
            steps.append(
                f"Warning: `{EXECUTABLE}` is not on PATH here, so the agents cannot start it;"
                f" add {os.path.dirname(plan.command or '') or 'its folder'} to PATH."
            )
        if "claude" in plan.agents:
            steps.append(status.CLAUDE_TRUST_STEP)
    if plan.action == "install":
        from ..install.files import InstallError
        from ..install.locate import repo_root

        try:
            root = repo_root()
        except InstallError:
            root = None
        checks = {"claude": status.double_install, "codex": status.codex_double_install}
        for agent in plan.agents:
            if agent in checks:
                twice = checks[agent](root)
            else:
                twice = status.route_double_install(agent, root)
            if twice:
                steps.append(f"Warning: {twice}")
    if "gemini" in plan.agents:
        steps.append(status.GEMINI_TRUST_STEP)
    if "copilot" in plan.agents and plan.action == "install" and plan.scope == "user":
        steps.append(status.copilot_wake_step())
    if "qwen" in plan.agents and plan.action == "install":
        steps.append(status.qwen_wake_step())
    if "codex" in plan.agents:
        steps.append(status.CODEX_TRUST_STEP)
        if plan.scope == "project":
            steps.append("Codex reads the project's .codex/ hooks only once you trust the project.")
    return steps


def _run(action: Action, agent: str, scope: str, dry_run: bool, as_json: bool) -> None:
    from ..install import run
    from ..install.plan import found_agents

    agents = found_agents() if agent == "all" else (agent,)
    plan = run(action, agents, scope, dry_run=dry_run)  # type: ignore[arg-type]
    data = {**plan.to_dict(), "dry_run": dry_run}
    if as_json and dry_run:
        for entry, change in zip(data["files"], plan.changes, strict=True):
            entry["diff"] = change.diff()
    emit(as_json, data, lambda: _render(plan, dry_run))


@cli.command(context_settings=CONTEXT_SETTINGS)
@_options
def install(agent: str, scope: str, dry_run: bool, as_json: bool, git_guard: bool) -> None:
    """Register the hooks and the MCP server with Claude Code, Codex, Gemini CLI, Qwen Code.

    Safe to run again: it changes nothing when already installed and replaces entries left by
    an install from another virtualenv.

    \b
    Each changed file is backed up first (never beside it) into
      ~/.colony-tasks/backups/  (COLONY_TASKS_HOME/backups/ when set)
    as <file>.colony-tasks-<timestamp>.bak; the output names each backup.

    With --git-guard, instead: add the pre-commit guard to the current repository's git hooks
    folder (never to its tracked files, never over an existing pre-commit hook).
    """
    if git_guard:
        _guard("install", dry_run, as_json)
        return
    _run("install", agent, scope, dry_run, as_json)


@cli.command(context_settings=CONTEXT_SETTINGS)
@_options
def uninstall(agent: str, scope: str, dry_run: bool, as_json: bool, git_guard: bool) -> None:
    """Remove exactly what `install` added, keeping every other hook, setting and server.

    With --git-guard: only remove the current repository's pre-commit guard (if it is ours).
    """
    if git_guard:
        _guard("uninstall", dry_run, as_json)
        return
    _run("uninstall", agent, scope, dry_run, as_json)


def _guard(action: Action, dry_run: bool, as_json: bool) -> None:
    from ..install import commit_hook as gitguard
    from ..install.locate import find_executable, repo_root

    root = repo_root()
    if dry_run:
        hook = gitguard.hooks_dir(root) / "pre-commit"
        emit(as_json, {"path": str(hook), "dry_run": True}, lambda: f"Would {action} {hook}.")
        return
    if action == "install":
        change = gitguard.install(root, find_executable())
    else:
        change = gitguard.uninstall(root)
    messages = {
        "created": "Installed the git guard",
        "updated": "Updated the git guard",
        "unchanged": "The git guard is already installed",
        "removed": "Removed the git guard",
        "absent": "No colony-tasks git guard here: nothing to remove",
        "left": "Left the existing pre-commit hook alone",
    }
    emit(
        as_json,
        change.to_dict(),
        lambda: (
            f"{messages[change.status]}: {change.path}"
            + (f"\n{change.advice}" if change.advice else "")
        ),
    )
