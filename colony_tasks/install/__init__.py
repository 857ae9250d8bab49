"""``colony-tasks install`` / ``uninstall``: register the hooks and the MCP server with
Claude Code, Codex, Gemini CLI and Qwen Code, and take them out again.

Modules, bottom up:

- ``files``: reading, JSON with clear errors, diffs, backups and atomic writes.
- ``locate``: the console script, the repository root, each agent's config folder.
- ``hookblock``: the events we listen to and the merge/removal of our handlers.
- ``claude`` / ``codex`` / ``gemini`` (Gemini CLI and Qwen Code): each agent's handler shape,
  file locations and MCP entry.
- ``plan``: read every file, edit in memory, then back up and write.
- ``layout``: the plugin files committed at the repository root, generated from the same code;
  ``client_plugins``: those of Gemini CLI's extension, Qwen Code's and Copilot CLI's plugin.

Backups are ``<file>.colony-tasks-YYYYmmdd-HHMMSS.bak`` beside the file, made once per run for
each file the run changes or deletes.
"""

from __future__ import annotations

from .files import InstallError
from .plan import AGENTS, FileChange, Plan, apply, make_plan, run

__all__ = ["AGENTS", "FileChange", "InstallError", "Plan", "apply", "make_plan", "run"]
