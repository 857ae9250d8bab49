"""The extension and plugin routes of Gemini CLI, Qwen Code and Copilot CLI, installed from a
local clone with each CLI's own command, offline.

Each route runs the repository's launcher, which builds the plugin's environment on first use
from the clone (pip pointed at a local wheelhouse, see :mod:`.wheelhouse`); nothing else
provides colony-tasks, and no settings or hook file of the client names it. A session then is
briefed by the route's SessionStart hook and claims a file through the route's MCP server.

- Gemini CLI 0.61 links ``gemini-extension/`` (``gemini extensions link``): its hooks run the
  launcher of the clone the folder is in.
- Qwen Code 0.24 installs the clone itself (``qwen extensions install``; ``qwen-extension.json``
  at its root is read before the Claude manifest beside it) into ``~/.qwen/extensions/``.
- Copilot CLI 1.0.102 adds the clone as a local marketplace (``.github/plugin/marketplace.json``,
  read before ``.claude-plugin/``) and installs its plugin, loaded live from the clone.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .gemini_server import GeminiServer
from .model_server import ChatCompletionsServer, ScriptedServer, call, context, say
from .sandbox import Run, Sandbox
from .wheelhouse import offline_pip

pytestmark = [pytest.mark.agents]


def brief(agent: str) -> re.Pattern[str]:
    return re.compile(rf"colony-tasks: you are {agent}-[\w-]+ on task #1 ")


def built_environments(root: Path) -> list[Path]:
    return sorted(root.rglob("venv/.built-from"))


def prepare(sandbox: Sandbox, wheels: Path) -> None:
    offline_pip(sandbox, wheels)
    sandbox.write("prices.py", "TAX = 0.19\n")
    sandbox.commit()


def assert_claimed_by_the_route(sandbox: Sandbox, agent: str, run: Run) -> None:
    """The sessions are the route's client's, and its MCP server acted as the last one."""
    sessions = sandbox.colony_json("sessions")
    assert {s["agent"] for s in sessions} == {agent}
    last = max(sessions, key=lambda s: s["started_at"])
    claims = [o for o in sandbox.lane_task()["timeline"] if o["kind"] == "claim"]
    assert [(c["session_id"], c["text"]) for c in claims] == [
        (last["id"], "claimed prices.py for 60m")
    ], run.output[-3000:]
    assert sandbox.hook_log() == ""


def assert_one_build_from(sandbox: Sandbox, clone: Path) -> None:
    """One plugin environment, built from the clone, shared by the hooks and the MCP server."""
    (stamp,) = built_environments(sandbox.home)
    assert stamp.read_text().strip() == str(clone)


def assert_briefed_and_served(
    sandbox: Sandbox, agent: str, model: ScriptedServer, run: Run, clone: Path
) -> None:
    """The extension's hooks briefed the session and its server claimed the file; the client's
    own settings name no hook of ours (the route alone did it)."""
    assert brief(agent).search(context(model.main_requests()[0])), run.output[-3000:]
    assert_claimed_by_the_route(sandbox, agent, run)
    assert_one_build_from(sandbox, clone)
    assert "hooks" not in (sandbox.home / f".{agent}" / "settings.json").read_text()


def test_gemini_extension_linked_from_a_clone_briefs_and_serves(sandbox, clone, wheels):
    gemini = sandbox.toolchain.gemini
    sandbox.env["GEMINI_CLI_TRUST_WORKSPACE"] = "true"  # linking asks to trust the folder
    linked = sandbox.run(gemini, "extensions", "link", str(clone / "gemini-extension"), "--consent")
    assert 'Extension "colony-tasks" linked successfully' in linked.stdout + linked.stderr, (
        linked.stdout + linked.stderr
    )
    listed = sandbox.run(gemini, "extensions", "list")
    assert "colony-tasks (0.1.0)" in listed.stdout + listed.stderr, listed.stdout + listed.stderr
    prepare(sandbox, wheels)

    model = GeminiServer([call("mcp_colony-tasks_claim_file", paths=["prices.py"]), say("Done.")])
    with model:
        run = sandbox.gemini(model, "Look around").finish()

    assert_briefed_and_served(sandbox, "gemini", model, run, clone)


def test_qwen_extension_linked_from_a_clone_briefs_and_serves(sandbox, clone, wheels):
    qwen = sandbox.toolchain.qwen
    linked = sandbox.run(qwen, "extensions", "link", str(clone), answer="y\n")
    said = linked.stdout + linked.stderr
    assert 'Extension "colony-tasks" linked successfully' in said, said
    listed = sandbox.run(qwen, "extensions", "list")
    assert "colony-tasks (0.1.0)" in listed.stdout + listed.stderr, listed.stdout + listed.stderr
    prepare(sandbox, wheels)

    model = ChatCompletionsServer(
        [call("mcp__colony-tasks__claim_file", paths=["prices.py"]), say("Done.")]
    )
    with model:
        run = sandbox.qwen(model, "Look around").finish()

    assert_briefed_and_served(sandbox, "qwen", model, run, clone)


def test_copilot_plugin_from_a_local_marketplace_briefs_and_serves(sandbox, clone, wheels):
    copilot = sandbox.toolchain.copilot
    sandbox.env["XDG_CACHE_HOME"] = sandbox.copilot_cache()
    added = sandbox.run(copilot, "plugin", "marketplace", "add", str(clone))
    assert 'Marketplace "colony-tasks" added successfully' in added.stdout, added.stdout
    installed = sandbox.run(copilot, "plugin", "install", "colony-tasks@colony-tasks")
    assert 'Plugin "colony-tasks" installed successfully' in installed.stdout, installed.stdout
    listed = sandbox.run(copilot, "plugin", "list")
    assert "colony-tasks@colony-tasks (v0.1.0) (enabled)" in listed.stdout, listed.stdout
    prepare(sandbox, wheels)

    # Copilot opens a server with a 2026-07-28 `discover` request and, when no answer comes in
    # time (the first session's server waits for the first-use build), sends `initialize` on
    # the same connection, which the MCP SDK then refuses: that session has the hooks only.
    first = ChatCompletionsServer([say("Done.")])
    with first:
        run = sandbox.copilot(first, "Look around").finish()
    assert brief("copilot").search(context(first.main_requests()[0])), run.output[-3000:]

    model = ChatCompletionsServer(
        [call("colony-tasks-claim_file", paths=["prices.py"]), say("Done.")]
    )
    with model:
        run = sandbox.copilot(model, "Claim the prices").finish()

    assert_claimed_by_the_route(sandbox, "copilot", run)
    assert not (sandbox.home / ".copilot" / "hooks").exists()
    assert_one_build_from(sandbox, clone)
