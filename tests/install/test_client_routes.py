"""The extension/plugin routes of Gemini CLI, Qwen Code and Copilot CLI (install/client_plugins):
every handler and server runs the repository's launcher and names its client, and the hooks
are the installer's own for that client."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from colony_tasks.install import client_plugins, copilot, gemini

REPO = Path(__file__).resolve().parents[2]
LAUNCHER = REPO / "bin" / "colony-tasks"


def _handlers(hooks: dict) -> list[dict]:
    return [h for groups in hooks.values() for g in groups for h in g["hooks"]]


@pytest.mark.parametrize(
    ("client", "manifest", "hooks", "extension_path"),
    [
        (
            gemini.GEMINI,
            client_plugins.gemini_manifest(),
            client_plugins.gemini_hooks()["hooks"],
            REPO / "gemini-extension",
        ),
        # Inline: Qwen Code reads hooks/hooks.json (Claude's, at the root) only without them.
        (
            gemini.QWEN,
            client_plugins.qwen_manifest(),
            client_plugins.qwen_manifest()["hooks"],
            REPO,
        ),
    ],
)
def test_gemini_and_qwen_hooks_run_the_launcher_as_the_installer_writes_them(
    client: gemini.Client, manifest: dict, hooks: dict, extension_path: Path
):
    installed = gemini.hooks_block(client, "colony-tasks")
    assert list(hooks) == list(installed)  # the installer's events, in its order
    for event, [group] in hooks.items():
        assert group.get("matcher") == installed[event].get("matcher")
    for handler in _handlers(hooks):
        # As the client fills in ${extensionPath}, then runs the string through the shell.
        words = shlex.split(handler["command"].replace("${extensionPath}", str(extension_path)))
        assert Path(words[0]).resolve() == LAUNCHER
        assert words[1] == "hook" and words[-2:] == ["--agent", client.agent]
    servers = manifest["mcpServers"]
    command = servers["colony-tasks"]["command"].replace("${extensionPath}", str(extension_path))
    assert Path(command).resolve() == LAUNCHER


def test_copilot_hooks_run_the_launcher_and_fail_open():
    hooks = client_plugins.copilot_hooks()["hooks"]
    assert list(hooks) == list(copilot.hooks_object("colony-tasks"))
    for [handler] in hooks.values():
        line = handler["bash"].replace("${COPILOT_PLUGIN_ROOT}", str(REPO))
        words = shlex.split(line)
        assert Path(words[2]).resolve() == LAUNCHER
        assert words[:2] == ["CLAUDE_PLUGIN_DATA=", "PLUGIN_DATA="]  # the servers' data folder
        assert line.endswith("2>/dev/null || true")  # Copilot denies a tool whose hook fails
    (server,) = client_plugins.copilot_mcp()["mcpServers"].values()
    script = server["args"][0].replace("${COPILOT_PLUGIN_ROOT}", str(REPO))
    assert server["command"] == "sh" and Path(script).resolve() == LAUNCHER
