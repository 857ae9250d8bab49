"""Where the hooks are registered, and what would stop an agent from running them.

For ``doctor``: it reads the agents' config files (never writes) and reports what it can tell
from them.

- Not registered: no colony-tasks handler in any settings/hooks file the agent reads for this
  repository (user scope, or project scope of the current repository).
- Codex with hooks switched off (``[features] hooks = false``, or the deprecated
  ``codex_hooks``): no hook runs.
- Codex project-scope hooks in a project Codex does not trust (``[projects."<root>"]
  trust_level = "trusted"`` in config.toml): Codex skips the project's ``.codex/`` layer.
- Codex reviews every non-managed hook in ``/hooks`` before running it and records the trust
  against a hash of the hook's definition; a changed hook (a reinstall from another venv) is
  skipped until trusted again. That review cannot be read back reliably from outside Codex,
  so doctor only reminds of it where Codex hooks are installed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.exceptions import TOMLKitError

from . import claude, codex
from .hookblock import events_for, is_our_handler
from .locate import codex_home

CODEX_TRUST_STEP = (
    "Codex runs a new or changed hook only after it is trusted: start `codex`, open /hooks and"
    " trust the colony-tasks hooks (for one unattended run, `codex"
    " --dangerously-bypass-hook-trust`)."
)
CLAUDE_TRUST_STEP = (
    "Claude Code holds back project hooks and the .mcp.json server until the folder's"
    " workspace trust is accepted: start `claude` in the repository once and accept it."
)


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _our_events(path: Path) -> set[str]:
    """The events under which ``path`` holds a colony-tasks handler."""
    hooks = _json(path).get("hooks")
    if not isinstance(hooks, dict):
        return set()
    found = set()
    for event, groups in hooks.items():
        for group in groups if isinstance(groups, list) else []:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            if any(is_our_handler(h) for h in handlers or []):
                found.add(event)
    return found


def _has_our_hooks(path: Path) -> bool:
    return bool(_our_events(path))


def missing_events(path: Path, agent: str) -> list[str]:
    """The events of this version that an install in ``path`` lacks (written by an older
    version): their hooks never run until `colony-tasks install` is run again."""
    have = _our_events(path)
    if not have:
        return []
    return [e.name for e in events_for(agent) if e.name not in have]


def _codex_config() -> dict[str, Any]:
    try:
        return tomlkit.parse(codex.config_path().read_text(encoding="utf-8")).unwrap()
    except (OSError, TOMLKitError):
        return {}


def codex_project_trusted(config: dict[str, Any], root: Path) -> bool:
    projects = config.get("projects")
    if not isinstance(projects, dict):
        return False
    for key in {str(root), str(root.resolve())}:
        entry = projects.get(key)
        if isinstance(entry, dict) and entry.get("trust_level") == "trusted":
            return True
    return False


def report(root: Path | None) -> tuple[list[str], list[str]]:
    """(problems, notes) about hook registration for the repository at ``root`` (or None)."""
    problems: list[str] = []
    notes: list[str] = []
    claude_files = [claude.settings_path("user", None)]
    codex_user = codex_home() / "hooks.json"
    codex_project = codex.hooks_path("project", root) if root else None
    if root is not None:
        claude_files += [root / ".claude" / "settings.json", root / ".claude/settings.local.json"]
    claude_found = [p for p in claude_files if _has_our_hooks(p)]
    codex_found = [p for p in (codex_user, codex_project) if p is not None and _has_our_hooks(p)]
    if not claude_found and not codex_found:
        problems.append(
            "No colony-tasks hooks are registered for Claude Code or Codex here; run"
            " `colony-tasks install`."
        )
    for agent, found in (("claude", claude_found), ("codex", codex_found)):
        for path in found:
            missing = missing_events(path, agent)
            if missing:
                problems.append(
                    f"{path} lacks the colony-tasks hooks for {', '.join(missing)} (installed"
                    " by an older version); run `colony-tasks install` again."
                )
    if codex_found:
        config = _codex_config()
        features = config.get("features") if isinstance(config.get("features"), dict) else {}
        assert isinstance(features, dict)
        if features.get("hooks") is False or features.get("codex_hooks") is False:
            problems.append(
                f"Codex hooks are switched off ([features] hooks = false in"
                f" {codex.config_path()}): no colony-tasks hook runs in Codex."
            )
        untrusted = root is not None and not codex_project_trusted(config, root)
        if codex_project in codex_found and untrusted:
            problems.append(
                f"Codex does not trust {root}, so it skips {codex_project}; trust the"
                " project when Codex asks (or install with --scope user)."
            )
        notes.append(CODEX_TRUST_STEP)
    if root is not None and (root / ".claude" / "settings.json") in claude_found:
        notes.append(CLAUDE_TRUST_STEP)
    return problems, notes
