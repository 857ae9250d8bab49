"""A throwaway machine for one test: a temp HOME, a git repository, the agents and colony-tasks.

Everything the agents and colony-tasks write (``~/.claude``, ``~/.claude.json``, ``~/.codex``,
the store) lands under the temp HOME. The agents reach no network: Claude Code talks to
``ANTHROPIC_BASE_URL`` and Codex to a custom model provider, both a local scripted server, with
updates, telemetry and other non-essential traffic turned off.

An agent session runs as a background process (:class:`Run`), so a test can start a second
agent while the first one waits inside its turn; :meth:`Run.finish` waits for it with a bounded
deadline and checks that it exited cleanly; :meth:`Run.hook_problems` lists what the agent
said about rejected hooks or settings.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .gemini_server import GeminiServer
from .model_server import ChatCompletionsServer, MessagesServer, ResponsesServer, ScriptedServer
from .toolchain import Toolchain

RUN_SECONDS = 180
CODEX_MODEL = "gpt-5.5"  # in Codex's bundled catalog: apply_patch (freeform) and tool_search
# Named explicitly: Gemini CLI's default model "auto" first asks a router model by a side request.
GEMINI_MODEL = "gemini-2.5-flash"
COLONY = str(Path(sys.executable).with_name("colony-tasks"))

# What the agents print when a hook or a setting is rejected (checked against deliberately
# broken hooks in test_hooks_accepted.py): Claude Code's stdout and debug log, Codex's stderr.
HOOK_PROBLEMS = re.compile(
    r"hook failed|invalid setting|settings entries were skipped|hook: \w+ failed"
    r"|hook \w+(?::\w+)? \(\w+\) error|finished with status [1-9]",
    re.IGNORECASE,
)


@dataclass
class Run:
    """One agent process running a scripted session."""

    agent: str
    process: subprocess.Popen
    server: ScriptedServer
    log: Path | None = None  # Claude Code's --debug-file (Codex reports hooks on stderr)
    output: str = ""
    debug: str = ""

    def finish(self) -> Run:
        """Wait for the session to end; fail with the agent's output if it did not go well."""
        try:
            self.output, _ = self.process.communicate(timeout=RUN_SECONDS)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.output, _ = self.process.communicate()
            raise AssertionError(f"{self.agent} did not finish:\n{self.output[-4000:]}") from None
        if self.log is not None and self.log.exists():
            self.debug = self.log.read_text(errors="replace")
        assert self.process.returncode == 0, f"{self.agent} failed:\n{self.output[-4000:]}"
        return self

    def send(self, prompt: str) -> None:
        """One more user message to a streaming session (:meth:`Sandbox.claude_session`)."""
        assert self.process.stdin is not None
        message = {"type": "user", "message": {"role": "user", "content": prompt}}
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def hook_problems(self) -> list[str]:
        text = self.output + "\n" + self.debug
        return [line for line in text.splitlines() if HOOK_PROBLEMS.search(line)]


class Sandbox:
    """A temp HOME with a git repository ``shop`` in it, and helpers to run things there."""

    def __init__(self, root: Path, toolchain: Toolchain):
        self.toolchain = toolchain
        self.home = root / "home"
        self.repo = self.home / "shop"
        self.data = self.home / ".colony-tasks"
        self.home.mkdir()
        self.repo.mkdir()
        self.runs: list[Run] = []
        self.colony_path = COLONY
        # colony-tasks on PATH, as `pipx install` puts it: project-scope files name it so.
        user_bin = self.home / ".local" / "bin"
        user_bin.mkdir(parents=True)
        (user_bin / "colony-tasks").symlink_to(COLONY)
        self.env = {
            "HOME": str(self.home),
            "PATH": os.pathsep.join(
                [str(user_bin), str(toolchain.bin_dir), "/usr/local/bin", "/usr/bin", "/bin"]
            ),
            "LANG": "C.UTF-8",
            "TMPDIR": str(root),
            "COLONY_TASKS_HOME": str(self.data),
            # Claude Code: no updater, telemetry, error reports or other background traffic.
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "ANTHROPIC_API_KEY": "sk-ant-scripted",
            # Commands without a model server (`claude mcp list`) must not look up
            # api.anthropic.com either: offline, that costs ~20 s of DNS retries.
            "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
            # Codex: config, hooks and sessions under the temp HOME; warnings on stderr.
            "CODEX_HOME": str(self.home / ".codex"),
            "RUST_LOG": "warn",
        }
        for command in (
            ["git", "init", "-q", "-b", "main"],
            ["git", "config", "user.email", "dev@example.com"],
            ["git", "config", "user.name", "dev"],
        ):
            subprocess.run(command, cwd=self.repo, check=True)

    # --- files and commands ----------------------------------------------------------------

    def write(self, name: str, text: str) -> Path:
        path = self.repo / name
        path.write_text(text)
        return path

    def commit(self) -> None:
        subprocess.run(["git", "add", "-A"], cwd=self.repo, check=True)
        subprocess.run(["git", "commit", "-q", "-m", "start"], cwd=self.repo, check=True)

    def run(
        self, *command: str, check: bool = True, answer: str | None = None
    ) -> subprocess.CompletedProcess:
        """``command`` in the repository; ``answer``: what it reads on stdin (a prompt's reply)."""
        result = subprocess.run(
            command,
            cwd=self.repo,
            env=self.env,
            capture_output=True,
            text=True,
            input=answer,
            stdin=subprocess.DEVNULL if answer is None else None,
            timeout=RUN_SECONDS,
        )
        if check:
            assert result.returncode == 0, f"{command} failed:\n{result.stdout}{result.stderr}"
        return result

    def colony(self, *args: str) -> str:
        return self.run(COLONY, *args).stdout

    def colony_json(self, *args: str) -> Any:
        return json.loads(self.colony(*args, "--json"))

    def install(self, agent: str, scope: str = "user") -> None:
        self.colony("install", "--agent", agent, "--scope", scope)

    def accept_workspace_trust(self) -> None:
        """What Claude Code records when the user accepts the folder's trust dialog (once per
        folder and machine; `-p` runs skip the dialog, `mcp list` does not)."""
        state_file = self.home / ".claude.json"
        state = json.loads(state_file.read_text()) if state_file.exists() else {}
        project = state.setdefault("projects", {}).setdefault(str(self.repo), {})
        project["hasTrustDialogAccepted"] = True
        state_file.write_text(json.dumps(state, indent=2))

    def lane_task(self) -> dict[str, Any]:
        return self.colony_json("tasks", "show", "1")

    def session(self, agent: str) -> dict[str, Any]:
        found = [s for s in self.colony_json("sessions") if s["agent"] == agent]
        assert len(found) == 1, found
        return found[0]

    def hook_log(self) -> str:
        log = self.data / "hooks.log"
        return log.read_text() if log.exists() else ""

    # --- agents ----------------------------------------------------------------------------

    def _start(
        self, agent: str, command: list[str], env: dict[str, str], server, log=None, stdin=None
    ) -> Run:
        process = subprocess.Popen(
            command,
            cwd=self.repo,
            env=env,
            stdin=subprocess.DEVNULL if stdin is None else stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        run = Run(agent, process, server, log)
        self.runs.append(run)
        return run

    def claude(self, server: MessagesServer, prompt: str, *extra: str) -> Run:
        """``claude -p PROMPT`` against ``server``, edits accepted, debug log kept; ``extra``
        arguments (``--continue``) are added."""
        log = self.home / f"claude-debug-{len(self.runs)}.txt"
        env = {**self.env, "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{server.port}"}
        command = [
            self.toolchain.claude,
            "-p",
            prompt,
            "--permission-mode",
            "acceptEdits",
            # Our MCP tools ask for permission the first time, and `-p` cannot ask: allow them
            # the way a user who answered "always allow" would have.
            "--allowedTools",
            "mcp__colony-tasks",
            "--debug-file",
            str(log),
            *extra,
        ]
        return self._start("claude", command, env, server, log)

    def claude_session(self, server: MessagesServer, prompt: str) -> Run:
        """A Claude Code session that stays open between turns, idle like an interactive one:
        ``-p`` with stream-json input, the first user message ``prompt``; :meth:`Run.send`
        sends more, :meth:`Run.finish` closes its input (the session then ends)."""
        log = self.home / f"claude-debug-{len(self.runs)}.txt"
        env = {**self.env, "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{server.port}"}
        command = [
            self.toolchain.claude,
            "-p",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--verbose",
            "--permission-mode",
            "acceptEdits",
            "--allowedTools",
            "mcp__colony-tasks",
            "--debug-file",
            str(log),
        ]
        run = self._start("claude", command, env, server, log, stdin=subprocess.PIPE)
        run.send(prompt)
        return run

    def codex(
        self,
        server: ResponsesServer,
        prompt: str,
        *config: str,
        plugins: bool = False,
        resume: bool = False,
    ) -> Run:
        """``codex exec PROMPT`` against ``server`` (a custom Responses provider), hooks trusted;
        ``config``: more ``-c key=value`` settings; ``plugins``: installed plugins load (remote
        plugin and connector sync stay off); ``resume``: the prompt continues the folder's
        latest session (``codex exec resume --last``)."""
        url = f"http://127.0.0.1:{server.port}/v1"
        provider = f'{{name="scripted", base_url="{url}", wire_api="responses"}}'
        command = [
            self.toolchain.codex,
            "exec",
            *(["resume", "--last"] if resume else []),
            "--skip-git-repo-check",
            "--dangerously-bypass-approvals-and-sandbox",
            "--dangerously-bypass-hook-trust",
            "-c",
            "model_provider=scripted",
            "-c",
            f"model_providers.scripted={provider}",
            "-c",
            "check_for_update_on_startup=false",
            "-c",
            "analytics.enabled=false",
            # No plugin or connector sync with github.com / chatgpt.com.
            "-c",
            f"features.plugins={'true' if plugins else 'false'}",
            "-c",
            "features.apps=false",
            "-c",
            "features.remote_plugin=false",
            *(arg for setting in config for arg in ("-c", setting)),
            "-m",
            CODEX_MODEL,
            prompt,
        ]
        return self._start("codex", command, self.env, server)

    def _settings(self, folder: str, values: dict[str, Any]) -> None:
        """Merge ``values`` into ``~/<folder>/settings.json`` (beside what install wrote)."""
        path = self.home / folder / "settings.json"
        path.parent.mkdir(exist_ok=True)
        data = json.loads(path.read_text()) if path.exists() else {}
        path.write_text(json.dumps({**data, **values}, indent=2))

    def gemini(self, server: GeminiServer, prompt: str, resume: bool = False) -> Run:
        """``gemini -p PROMPT`` against ``server`` (an API key pointed at it), tools approved,
        the folder trusted, no update check or usage statistics; ``resume``: the prompt
        continues the folder's latest session (``--resume latest``)."""
        self._settings(
            ".gemini",
            {
                "security": {"auth": {"selectedType": "gemini-api-key"}},
                "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
                "privacy": {"usageStatisticsEnabled": False},
                "telemetry": {"enabled": False},
            },
        )
        env = {
            **self.env,
            "GOOGLE_GEMINI_BASE_URL": f"http://127.0.0.1:{server.port}",
            "GEMINI_API_KEY": "scripted",
            "GEMINI_CLI_TRUST_WORKSPACE": "true",
        }
        command = [
            self.toolchain.gemini,
            "-p",
            prompt,
            "--approval-mode",
            "yolo",
            "-m",
            GEMINI_MODEL,
            *(["--resume", "latest"] if resume else []),
        ]
        return self._start("gemini", command, env, server)

    def qwen(self, server: ChatCompletionsServer, prompt: str, resume: bool = False) -> Run:
        """``qwen -p PROMPT`` against ``server`` (:meth:`qwen_env`), tools approved;
        ``resume``: the prompt continues the folder's latest session (``--continue``)."""
        command = [self.toolchain.qwen, "-p", prompt, "--approval-mode", "yolo"]
        command += ["--continue"] if resume else []
        return self._start("qwen", command, self.qwen_env(server), server)

    def qwen_env(self, server: ChatCompletionsServer) -> dict[str, str]:
        """Qwen Code against ``server`` (an OpenAI-compatible provider): the managed memory's
        background model calls, follow-up suggestions, update checks and statistics off."""
        provider = {
            "id": "scripted",
            "name": "scripted",
            "baseUrl": f"http://127.0.0.1:{server.port}/v1",
            "envKey": "OPENAI_API_KEY",
        }
        self._settings(
            ".qwen",
            {
                "security": {"auth": {"selectedType": "openai"}},
                "modelProviders": {"openai": [provider]},
                "model": {"name": "scripted"},
                "memory": {
                    "enableManagedAutoMemory": False,
                    "enableManagedAutoDream": False,
                    "enableAutoSkill": False,
                },
                "ui": {"enableFollowupSuggestions": False},
                "general": {"enableAutoUpdate": False},
                "privacy": {"usageStatisticsEnabled": False},
                "telemetry": {"enabled": False},
            },
        )
        return {**self.env, "OPENAI_API_KEY": "scripted", "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1"}

    def copilot(self, server: ChatCompletionsServer, prompt: str, resume: bool = False) -> Run:
        """``copilot -p PROMPT`` offline against ``server`` (a BYOK OpenAI provider), every tool
        allowed and the folder trusted; ``resume``: the prompt continues the latest session
        (``--continue``). Its first run extracts its package (~235 MB) under
        ``$XDG_CACHE_HOME/copilot``: one folder beside the toolchain, shared by every sandbox."""
        env = self.copilot_env(server)
        command = [
            self.toolchain.copilot,
            "-p",
            prompt,
            "--allow-all",
            "--no-auto-update",
            # A resumed session keeps the trust its start gave (the two flags exclude each other).
            *(["--continue"] if resume else ["--trust-folder"]),
        ]
        return self._start("copilot", command, env, server)

    def copilot_env(self, server: ChatCompletionsServer) -> dict[str, str]:
        """Copilot offline against ``server`` (a BYOK OpenAI provider), no update."""
        return {
            **self.env,
            "XDG_CACHE_HOME": self.copilot_cache(),
            "COPILOT_OFFLINE": "true",
            "COPILOT_AUTO_UPDATE": "false",
            "COPILOT_PROVIDER_BASE_URL": f"http://127.0.0.1:{server.port}/v1",
            "COPILOT_PROVIDER_API_KEY": "sk-scripted",
            "COPILOT_MODEL": "scripted",
        }

    def copilot_cache(self) -> str:
        """Where Copilot extracts its package: one folder beside the toolchain."""
        return str(self.toolchain.bin_dir.parent.parent / "xdg-cache")

    def opencode_config(self, server: ChatCompletionsServer) -> None:
        """OpenCode's user config: the scripted provider, edits and commands allowed (what a
        user's own opencode.json holds before colony-tasks adds its MCP server)."""
        folder = self.home / ".config" / "opencode"
        folder.mkdir(parents=True, exist_ok=True)
        provider = {
            "npm": "@ai-sdk/openai-compatible",
            "options": {"baseURL": f"http://127.0.0.1:{server.port}/v1", "apiKey": "sk-scripted"},
            "models": {
                "scripted": {"tool_call": True, "limit": {"context": 200000, "output": 32000}}
            },
        }
        config = {
            "provider": {"scripted": provider},
            "model": "scripted/scripted",
            "small_model": "scripted/scripted",
            "autoupdate": False,
            "share": "disabled",
            "permission": {"edit": "allow", "bash": "allow", "external_directory": "allow"},
        }
        path = folder / "opencode.json"
        found = json.loads(path.read_text()) if path.exists() else {}
        path.write_text(json.dumps({**found, **config}, indent=2) + "\n")

    def opencode(self, server: ChatCompletionsServer, prompt: str, resume: bool = False) -> Run:
        """``opencode run PROMPT`` against ``server``, no update, model catalog, LSP download or
        sharing (:meth:`opencode_config` first); ``resume``: the prompt continues the folder's
        latest session (``--continue``)."""
        command = [self.toolchain.opencode, "run", prompt, *(["--continue"] if resume else [])]
        return self._start("opencode", command, self._opencode_env(server), server)

    def opencode_serve(self, server: ChatCompletionsServer, port: int) -> Run:
        """``opencode serve`` on 127.0.0.1:``port`` (its HTTP API drives sessions that idle
        between prompts, as the TUI's do), set up as :meth:`opencode`."""
        command = [self.toolchain.opencode, "serve", "--hostname", "127.0.0.1", "--port", str(port)]
        return self._start("opencode", command, self._opencode_env(server), server)

    def _opencode_env(self, server: ChatCompletionsServer) -> dict[str, str]:
        self.opencode_config(server)
        return {
            **self.env,
            "OPENCODE_DISABLE_AUTOUPDATE": "1",
            "OPENCODE_DISABLE_MODELS_FETCH": "1",
            "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
            "OPENCODE_DISABLE_SHARE": "1",
            "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
        }

    def stop_all(self) -> None:
        """Kill what is still running; keep each agent's model requests beside its log."""
        for index, run in enumerate(self.runs):
            if run.process.poll() is None:
                run.process.kill()
                run.process.communicate()
            bodies = [{"path": e.path, "body": e.body} for e in run.server.exchanges]
            dump = self.home / f"{run.agent}-requests-{index}.json"
            dump.write_text(json.dumps(bodies, indent=1))
