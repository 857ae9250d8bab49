"""The repository as a plugin marketplace, installed with the real CLIs' own plugin commands.

A clean copy of the checkout's tracked files stands for a local clone (the ``clone`` fixture).
The plugin's launcher builds its Python environment on first use with pip, pointed at a
wheelhouse packed from this checkout's environment (:mod:`.wheelhouse`): nothing is downloaded.

Codex 0.169 installs the plugin from a local marketplace, runs its hooks and starts its MCP
server from ``.codex-plugin/mcp.json`` (Codex expands no ``${...}`` variables there, but resolves
a relative ``cwd`` against the plugin's folder, so the server runs ``./bin/colony-tasks`` from
there); its tools are deferred behind ``tool_search``, as for servers registered in config.toml.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

from colony_tasks.install.layout import plugin_hooks

from .model_server import (
    MessagesServer,
    ResponsesServer,
    Step,
    arguments,
    context,
    say,
    search_tools,
    texts,
)
from .wheelhouse import offline_pip

pytestmark = [pytest.mark.agents]

CHECKOUT = Path(__file__).resolve().parents[2]
BRIEF = re.compile(r"colony-tasks: you are (claude|codex)-[\w-]+ on task #1 ")


def wait_for_mcp_server(store: Path, timeout: float = 120.0) -> None:
    """Until a ``colony-tasks mcp`` process holds ``store`` open (Linux's /proc), plus a second
    for the agent's handshake and tool listing."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
                if b"mcp" not in args or not any(a.endswith(b"colony-tasks") for a in args):
                    continue
                fds = Path(f"/proc/{pid}/fd")
                if any(os.readlink(fds / fd) == str(store) for fd in os.listdir(fds)):
                    time.sleep(1.0)
                    return
            except OSError:
                continue  # gone meanwhile
        time.sleep(0.2)
    raise AssertionError(f"no colony-tasks MCP server opened {store} within {timeout:.0f} s")


def built_environments(root: Path) -> list[Path]:
    return sorted(root.rglob("venv/.built-from"))


def test_claude_plugin_validate_passes_on_the_repository(sandbox):
    result = sandbox.run(sandbox.toolchain.claude, "plugin", "validate", str(CHECKOUT))
    assert "✔ Validation passed" in result.stdout, result.stdout
    # Each of the plugin's parts is recognised: every hook handler, the MCP server, the launcher.
    handlers = [
        h for groups in plugin_hooks()["hooks"].values() for g in groups for h in g["hooks"]
    ]
    assert len(re.findall(r"❯ hooks: ", result.stdout)) == len(handlers), result.stdout
    assert "❯ mcpServers: colony-tasks stdio" in result.stdout


def test_claude_marketplace_add_and_install_then_a_session_is_briefed(sandbox, clone, wheels):
    claude = sandbox.toolchain.claude
    added = sandbox.run(claude, "plugin", "marketplace", "add", str(clone))
    assert "Successfully added marketplace: colony-tasks" in added.stdout, added.stdout
    installed = sandbox.run(claude, "plugin", "install", "colony-tasks@colony-tasks")
    assert "Successfully installed plugin: colony-tasks@colony-tasks" in installed.stdout
    offline_pip(sandbox, wheels)
    sandbox.write("prices.py", "TAX = 0.19\n")
    sandbox.commit()

    model = MessagesServer([say("Done.")])
    with model:
        run = sandbox.claude(model, "Look around").finish()

    first = model.main_requests()[0]
    assert BRIEF.search(context(first)), run.debug[-3000:]
    # The plugin's MCP server, started through the same launcher, offers its tools (deferred:
    # named in the request, loaded by the model's tool search).
    assert "mcp__plugin_colony-tasks_colony-tasks__task_post" in texts(first)
    # The environment was built once, under the plugin's data folder, from the plugin's root:
    # Claude Code runs a plugin of a local-folder marketplace in place, from that folder.
    (stamp,) = built_environments(sandbox.home)  # one build, shared by hooks and MCP server
    assert stamp.read_text().strip() == str(clone)
    assert "/plugins/data/colony-tasks-colony-tasks/venv/" in str(stamp)
    assert sandbox.session("claude")["handle"].startswith("claude-")
    assert not run.hook_problems(), run.hook_problems()


def test_codex_marketplace_add_and_plugin_add_then_a_session_is_briefed(sandbox, clone, wheels):
    codex = sandbox.toolchain.codex
    (sandbox.home / ".codex").mkdir()
    added = sandbox.run(codex, "plugin", "marketplace", "add", str(clone))
    assert "Added marketplace `colony-tasks`" in added.stdout, added.stdout + added.stderr
    listed = sandbox.run(codex, "plugin", "list")
    assert re.search(r"colony-tasks@colony-tasks\s+not installed", listed.stdout), listed.stdout
    installed = sandbox.run(codex, "plugin", "add", "colony-tasks@colony-tasks")
    assert "Added plugin `colony-tasks`" in installed.stdout, installed.stdout + installed.stderr
    offline_pip(sandbox, wheels)
    sandbox.write("prices.py", "TAX = 0.19\n")
    sandbox.commit()

    # Codex does not hold the first turn for its MCP servers (a server still starting is simply
    # not searched yet); this one may wait for the first-use build: the scripted model's first
    # step waits until the server has opened the store.
    def search_when_the_server_is_up() -> dict[str, object]:
        wait_for_mcp_server(sandbox.data / "colony.db")
        return arguments(search_tools("colony-tasks claim a file"))

    model = ResponsesServer(
        [
            Step(tool="tool_search", args=search_when_the_server_is_up, kind="tool_search"),
            Step(tool="claim_file", namespace="mcp__colony_tasks", args={"paths": ["prices.py"]}),
            say("Done."),
        ]
    )
    with model:
        run = sandbox.codex(model, "Look around", plugins=True).finish()

    first = model.main_requests()[0]
    assert BRIEF.search(context(first)), run.output[-3000:]
    (stamp,) = built_environments(sandbox.home)  # one build, shared by hooks and MCP server
    assert "/plugins/cache/colony-tasks/colony-tasks/" in stamp.read_text()
    assert sandbox.session("codex")["handle"].startswith("codex-")
    # The plugin's MCP server, found through tool_search, acted as the session that called it.
    claims = [o for o in sandbox.lane_task()["timeline"] if o["kind"] == "claim"]
    assert [(c["session_id"], c["text"]) for c in claims] == [
        (sandbox.session("codex")["id"], "claimed prices.py for 60m")
    ], run.output[-3000:]
    assert not run.hook_problems(), run.hook_problems()
