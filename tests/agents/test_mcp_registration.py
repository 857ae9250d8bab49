"""Scenario 1: after `colony-tasks install` the agents' own `mcp list` sees our server; after
`colony-tasks uninstall` it is gone. `claude mcp list` spawns the server and reports
"✔ Connected" only after a real MCP handshake."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.agents


@pytest.mark.parametrize("scope", ["user", "project"])
def test_claude_mcp_list_shows_the_server_connected_until_uninstall(sandbox, scope):
    if scope == "project":
        sandbox.accept_workspace_trust()  # the one step install asks of the user
    sandbox.install("claude", scope)
    listed = sandbox.run(sandbox.toolchain.claude, "mcp", "list").stdout
    assert "colony-tasks:" in listed
    assert "✔ Connected" in listed, listed

    sandbox.colony("uninstall", "--agent", "claude", "--scope", scope)
    listed = sandbox.run(sandbox.toolchain.claude, "mcp", "list").stdout
    assert "colony-tasks" not in listed, listed


def test_claude_starts_the_project_server_only_with_the_approval_install_records(sandbox):
    sandbox.accept_workspace_trust()
    sandbox.install("claude", "project")
    state_file = sandbox.home / ".claude.json"
    state = json.loads(state_file.read_text())
    project = state["projects"][str(sandbox.repo)]
    assert project["enabledMcpjsonServers"] == ["colony-tasks"]
    del project["enabledMcpjsonServers"]
    state_file.write_text(json.dumps(state))
    listed = sandbox.run(sandbox.toolchain.claude, "mcp", "list").stdout
    assert "Pending approval" in listed, listed


@pytest.mark.parametrize("scope", ["user", "project"])
def test_codex_mcp_list_shows_the_server_enabled_until_uninstall(sandbox, scope):
    sandbox.install("codex", scope)
    listed = sandbox.run(sandbox.toolchain.codex, "mcp", "list").stdout
    row = next((line for line in listed.splitlines() if line.startswith("colony-tasks ")), None)
    assert row is not None, listed
    assert row.split()[1].endswith("/colony-tasks") and " mcp " in row
    assert "enabled" in row.split(), row

    sandbox.colony("uninstall", "--agent", "codex", "--scope", scope)
    listed = sandbox.run(sandbox.toolchain.codex, "mcp", "list").stdout
    assert "colony-tasks" not in listed, listed
