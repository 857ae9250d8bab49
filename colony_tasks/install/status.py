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

from . import claude, codex, copilot, copilot_extension, gemini
from .hookblock import WAIT_EVENT, WAIT_SLUG, events_for, is_our_handler
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

GEMINI_TRUST_STEP = (
    "Gemini CLI runs hooks (user and project) only in a folder it trusts: trust the repository"
    " when Gemini CLI asks (or run it with --skip-trust); it names new project hooks once."
)


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


#: How doctor names Claude Code's and Qwen Code's background Stop wait (hookblock.WAIT_SLUG) when it is missing.
WAIT_NAME = "Stop (the background wait that wakes an idle session)"


def _is_our_wait(handler: Any) -> bool:
    """Claude Code's wait wakes with ``asyncRewake``; Qwen Code's runs ``async`` and sends to
    the session's inbox itself."""
    if not is_our_handler(handler) or handler.get("async") is not True:
        return False
    args = handler.get("args")
    words = args if isinstance(args, list) else str(handler.get("command", "")).split()
    rewakes = handler.get("asyncRewake") is True or words[-2:] == ["--agent", "qwen"]
    return WAIT_SLUG in words and rewakes


def _our_events(path: Path) -> set[str]:
    """The events under which ``path`` holds a colony-tasks handler (and :data:`WAIT_NAME`
    for Claude Code's background wait)."""
    hooks = _json(path).get("hooks")
    if not isinstance(hooks, dict):
        return set()
    found = set()
    for event, groups in hooks.items():
        for group in groups if isinstance(groups, list) else []:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            if any(is_our_handler(h) for h in handlers or []):
                found.add(event)
            if event == WAIT_EVENT and any(_is_our_wait(h) for h in handlers or []):
                found.add(WAIT_NAME)
    return found


def _has_our_hooks(path: Path) -> bool:
    return bool(_our_events(path))


def missing_events(path: Path, agent: str) -> list[str]:
    """The events of this version that an install in ``path`` lacks (written by an older
    version): their hooks never run until `colony-tasks install` is run again."""
    have = _our_events(path)
    if not have:
        return []
    wanted = [e.name_for(agent) for e in events_for(agent)]
    wanted += [WAIT_NAME] if agent in ("claude", "qwen") else []
    return [name for name in wanted if name not in have]


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


def claude_workspace_trusted(root: Path) -> bool:
    """Whether Claude Code recorded the folder's workspace trust as accepted (its state file,
    ``projects[<root>].hasTrustDialogAccepted``)."""
    projects = _json(claude.approval_path()).get("projects")
    if not isinstance(projects, dict):
        return False
    for key in {str(root), str(root.resolve())}:
        entry = projects.get(key)
        if isinstance(entry, dict) and entry.get("hasTrustDialogAccepted") is True:
            return True
    return False


def claude_plugins(root: Path | None) -> list[str]:
    """``colony-tasks@<marketplace>`` entries enabled in Claude Code's ``enabledPlugins``
    (user settings, and the project's shared and local settings)."""
    files = [claude.settings_path("user", None)]
    if root is not None:
        files += [root / ".claude" / "settings.json", root / ".claude" / "settings.local.json"]
    found: list[str] = []
    for path in files:
        enabled = _json(path).get("enabledPlugins")
        if isinstance(enabled, dict):
            found += [k for k, on in enabled.items() if k.startswith("colony-tasks@") and on]
    return sorted(set(found))


def double_install(root: Path | None) -> str | None:
    """The sentence for the plugin *and* a settings-file install both active in Claude Code."""
    plugins = claude_plugins(root)
    settings = [p for p in where(root) if p.name != "hooks.json"]  # Claude's, not Codex's
    if not plugins or not settings:
        return None
    scopes = " and ".join(
        "--scope project" if root is not None and p.is_relative_to(root) else "--scope user"
        for p in settings
    )
    return (
        f"colony-tasks is installed twice for Claude Code: as the plugin {', '.join(plugins)}"
        f" and in {', '.join(map(str, settings))}, so every hook fires twice (only the first"
        f" acts). Keep one: `colony-tasks uninstall --agent claude` ({scopes}) or"
        f" `claude plugin uninstall {plugins[0]}`."
    )


def codex_double_install(root: Path | None) -> str | None:
    """The same for Codex: the plugin enabled in config.toml and a hooks.json install."""
    configured = _codex_config().get("plugins")
    plugins = sorted(
        name
        for name, entry in (configured.items() if isinstance(configured, dict) else [])
        if name.startswith("colony-tasks@") and isinstance(entry, dict) and entry.get("enabled")
    )
    files = [p for p in where(root) if p.name == "hooks.json"]
    if not plugins or not files:
        return None
    return (
        f"colony-tasks is installed twice for Codex: as the plugin {', '.join(plugins)} and in"
        f" {', '.join(map(str, files))}, so every hook fires twice (only the first acts). Keep"
        f" one: `colony-tasks uninstall --agent codex` or `codex plugin remove {plugins[0]}`."
    )


#: The name Gemini CLI, Qwen Code and Copilot CLI know our extension/plugin by.
ROUTE_NAME = "colony-tasks"


def copilot_hook_files(root: Path | None) -> list[Path]:
    """Copilot's hook files (user, and the repository's) that hold colony-tasks handlers."""
    files = [copilot.hooks_path("user", None)]
    if root is not None:
        files.append(copilot.hooks_path("project", root))
    found = []
    for path in files:
        hooks = _json(path).get("hooks")
        handlers = hooks.values() if isinstance(hooks, dict) else []
        if any(copilot.is_ours(h) for group in handlers if isinstance(group, list) for h in group):
            found.append(path)
    return found


def route_installed(agent: str) -> str | None:
    """How the extension/plugin route of ``agent`` (gemini, qwen, copilot) is installed here, as
    the client names it, or None: an extension folder in the client's user folder (installed or
    linked), or a Copilot plugin enabled in its settings."""
    if agent in gemini.CLIENTS:
        folder = gemini.CLIENTS[agent].user_dir() / "extensions" / ROUTE_NAME
        return f"the extension {ROUTE_NAME} ({folder})" if folder.is_dir() else None
    if agent == "copilot":
        enabled = _json(copilot.copilot_home() / "settings.json").get("enabledPlugins")
        names = sorted(
            k for k, on in (enabled.items() if isinstance(enabled, dict) else []) if on is True
        )
        plugins = [k for k in names if k.startswith(f"{ROUTE_NAME}@")]
        return f"the plugin {', '.join(plugins)}" if plugins else None
    return None


#: Per client with a route, how to take the route out.
_ROUTE_REMOVAL = {
    "gemini": ("Gemini CLI", f"gemini extensions uninstall {ROUTE_NAME}"),
    "qwen": ("Qwen Code", f"qwen extensions uninstall {ROUTE_NAME}"),
    "copilot": ("Copilot CLI", f"copilot plugin uninstall {ROUTE_NAME}"),
}


def route_double_install(agent: str, root: Path | None) -> str | None:
    """The sentence for the extension/plugin route *and* a hook-file install both active in
    Gemini CLI, Qwen Code or Copilot CLI (the clients run both)."""
    route = route_installed(agent)
    if route is None:
        return None
    if agent == "copilot":
        files = copilot_hook_files(root)
    else:
        files = client_files(root)[agent]
    if not files:
        return None
    label, removal = _ROUTE_REMOVAL[agent]
    return (
        f"colony-tasks is installed twice for {label}: as {route} and in"
        f" {', '.join(map(str, files))}, so every hook runs twice and two MCP servers are"
        f" registered. Keep one: `colony-tasks uninstall --agent {agent}` or `{removal}`."
    )


def copilot_wake_note() -> str | None:
    """What keeps our Copilot CLI extension from running, when it is installed: Copilot's
    experimental features are off (the user turns them on; install does not)."""
    path = copilot_extension.extension_path()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return None
    settings = _json(copilot.copilot_home() / "settings.json")
    if not copilot_extension.is_ours(text) or copilot_extension.experimental_on(settings):
        return None
    return f"{path} is installed, but {copilot_extension.NOT_LOADED}"


def copilot_wake_step() -> str:
    """The install's word on the Copilot extension: what it does, and what it still needs."""
    settings = _json(copilot.copilot_home() / "settings.json")
    if copilot_extension.experimental_on(settings):
        return "Copilot CLI: the colony-tasks extension wakes an idle session (experimental)."
    return f"Copilot CLI: the colony-tasks extension wakes an idle session. {copilot_extension.NOT_LOADED}"


def qwen_wake_note(root: Path | None) -> str | None:
    """What keeps our Qwen Code wake out of an idle session, when our hooks are installed: a
    Qwen setting (user or project scope) that turns away or holds the messages a session's own
    processes send it (the user's to change; install does not)."""
    scopes = [("user", None)] + ([("project", root)] if root is not None else [])
    for scope, at in scopes:
        path = gemini.QWEN.settings_path(scope, at)
        blocked = gemini.qwen_wake_blocked(_json(path))
        if blocked:
            return (
                f"Qwen Code: {blocked} in {path}, so colony-tasks cannot wake an idle session;"
                f" waking needs {gemini.QWEN_WAKE_NEEDS}."
            )
    return None


def qwen_wake_step() -> str:
    """The install's word on waking an idle Qwen Code session, and what it needs."""
    return (
        "Qwen Code: a background Stop hook wakes an idle session through its own cross-session"
        f" inbox; this needs {gemini.QWEN_WAKE_NEEDS}."
    )


def where(root: Path | None) -> list[Path]:
    """Every settings/hooks file the agents read here that holds colony-tasks hooks."""
    claude_files = [claude.settings_path("user", None)]
    if root is not None:
        claude_files += [root / ".claude" / "settings.json", root / ".claude/settings.local.json"]
    codex_files = [codex_home() / "hooks.json"]
    if root is not None:
        codex_files.append(codex.hooks_path("project", root))
    return [p for p in (*claude_files, *codex_files) if _has_our_hooks(p)]


def client_files(root: Path | None) -> dict[str, list[Path]]:
    """Per client of the Gemini settings layout (Gemini CLI, Qwen Code), its settings files
    here that hold colony-tasks hooks."""
    found = {}
    for agent, client in gemini.CLIENTS.items():
        files = [client.settings_path("user", None)]
        if root is not None:
            files.append(client.settings_path("project", root))
        found[agent] = [p for p in files if _has_our_hooks(p)]
    return found


def installed_agents(root: Path | None) -> list[str]:
    """The agents with colony-tasks hooks registered here, in the installer's order."""
    found = []
    files = where(root)
    if any(p.name != "hooks.json" for p in files):
        found.append("claude")
    if any(p.name == "hooks.json" for p in files):
        found.append("codex")
    found += [agent for agent, paths in client_files(root).items() if paths]
    return found


def cursor_dir() -> Path:
    return Path.home() / ".cursor"


def cursor_note(root: Path | None) -> str | None:
    """What Cursor does with our Claude Code hooks, when Cursor is installed here."""
    if not cursor_dir().is_dir():
        return None
    claude_hooks = [p for p in where(root) if p.name != "hooks.json"]
    runs = (
        f"it runs the colony-tasks hooks of {', '.join(map(str, claude_hooks))}"
        if claude_hooks
        else "it would run colony-tasks hooks installed for Claude Code"
    )
    return (
        f"Cursor is installed here ({cursor_dir()}): with its third-party hooks enabled, {runs}"
        " (Claude Code's .claude/settings*.json and ~/.claude/settings.json). Each Cursor"
        " session sends its own session id, so it joins the lane as a session of its own"
        " (read as a Claude Code session: its payloads go through the Claude adapter, fields"
        " it lacks are left out) and never fires twice for a Claude Code session."
    )


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
    clients = client_files(root)
    routes = any(route_installed(agent) for agent in _ROUTE_REMOVAL)
    if not claude_found and not codex_found and not any(clients.values()) and not routes:
        problems.append(
            "No colony-tasks hooks are registered for Claude Code, Codex, Gemini CLI or Qwen"
            " Code here; run `colony-tasks install`."
        )
    twice_routes = [route_double_install(agent, root) for agent in _ROUTE_REMOVAL]
    for twice in (double_install(root), codex_double_install(root), *twice_routes):
        if twice:
            problems.append(twice)
    for agent, found in (("claude", claude_found), ("codex", codex_found), *clients.items()):
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
            skipped = f"Codex does not trust {root}, so it skips {codex_project}"
            if codex_user in codex_found:
                # The user-scope hooks run anyway: nothing is missing, one scope is redundant.
                notes.append(
                    f"{skipped}; your user-scope hooks ({codex_user}) cover it, so"
                    " `colony-tasks uninstall --scope project --agent codex` loses nothing."
                )
            else:
                problems.append(
                    f"{skipped}; trust the project when Codex asks (or install with --scope user)."
                )
        notes.append(CODEX_TRUST_STEP)
    if clients["gemini"]:
        notes.append(GEMINI_TRUST_STEP)
    wake = copilot_wake_note()
    if wake:
        notes.append(wake)
    qwen_wake = qwen_wake_note(root) if clients["qwen"] or route_installed("qwen") else None
    if qwen_wake:
        notes.append(qwen_wake)
    cursor = cursor_note(root)
    if cursor:
        notes.append(cursor)
    project_claude = root is not None and (root / ".claude" / "settings.json") in claude_found
    if project_claude and root is not None and not claude_workspace_trusted(root):
        notes.append(CLAUDE_TRUST_STEP)
    return problems, notes
