"""Scenario 1: after `colony-tasks install` the agents' own `mcp list` sees our server; after
`colony-tasks uninstall` it is gone. `claude mcp list` spawns the server and reports
"✔ Connected" only after a real MCP handshake."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.agents

PROJECT_APPROVAL = (
    "Product gap: at project scope Claude Code lists the .mcp.json server as '⏸ Pending approval "
    "(run `claude` to approve)' and never starts it. `colony-tasks install --scope project` does "
    "not record the approval; Claude Code reads it from ~/.claude.json "
    "projects[<repo>].enabledMcpjsonServers (together with the workspace-trust flag)."
)


@pytest.mark.parametrize(
    "scope",
    [
        "user",
        pytest.param("project", marks=pytest.mark.xfail(strict=True, reason=PROJECT_APPROVAL)),
    ],
)
def test_claude_mcp_list_shows_the_server_connected_until_uninstall(sandbox, scope):
    sandbox.install("claude", scope)
    listed = sandbox.run(sandbox.toolchain.claude, "mcp", "list").stdout
    assert "colony-tasks:" in listed
    assert "✔ Connected" in listed, listed

    sandbox.colony("uninstall", "--agent", "claude", "--scope", scope)
    listed = sandbox.run(sandbox.toolchain.claude, "mcp", "list").stdout
    assert "colony-tasks" not in listed, listed


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
