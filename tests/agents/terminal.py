"""Claude Code's and Copilot CLI's interactive UIs in a real terminal (tmux), for what their
print modes never do (and Qwen Code's, whose idle session our hook wakes).

Some events come only from the interactive UI: ``Notification`` with ``idle_prompt`` (the UI
has been waiting for input for ``messageIdleNotifThresholdMs``) and with ``permission_prompt``
(it shows a permission dialog). :func:`interactive_claude` starts ``claude PROMPT`` in a
detached tmux session of its own (own socket under the sandbox), past the first-run screens
the way a user who already went through them would be, and kills it afterwards.
:func:`interactive_copilot` does the same for Copilot CLI (an idle session its extension wakes).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .model_server import ChatCompletionsServer, MessagesServer
from .sandbox import Sandbox

WAIT_SECONDS = 60


@dataclass
class Terminal:
    socket: Path
    debug: Path

    def _tmux(self, *args: str) -> str:
        return subprocess.run(
            ["tmux", "-S", str(self.socket), *args], capture_output=True, text=True, check=True
        ).stdout

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p")

    def send(self, *keys: str) -> None:
        self._tmux("send-keys", *keys)

    def wait_for(self, what: str, check: Callable[[], Any]) -> Any:
        """``check()``'s first truthy value, polled for up to ``WAIT_SECONDS``."""
        deadline = time.monotonic() + WAIT_SECONDS
        while time.monotonic() < deadline:
            found = check()
            if found:
                return found
            time.sleep(0.5)
        raise AssertionError(f"timed out waiting for {what}; the screen:\n{self.screen()}")


def remember_first_run(sandbox: Sandbox, idle_ms: int) -> None:
    """What Claude Code records once a user went through its first-run screens (onboarding,
    the folder's trust, the API key), and a short idle-notification threshold."""
    sandbox.accept_workspace_trust()
    state_file = sandbox.home / ".claude.json"
    state = json.loads(state_file.read_text())
    key = sandbox.env["ANTHROPIC_API_KEY"]
    state.update(
        {
            "hasCompletedOnboarding": True,
            "theme": "dark",
            "messageIdleNotifThresholdMs": idle_ms,
            "customApiKeyResponses": {"approved": [key[-20:]], "rejected": []},
        }
    )
    state_file.write_text(json.dumps(state, indent=2))


@contextmanager
def interactive_claude(
    sandbox: Sandbox, server: MessagesServer, prompt: str, *extra: str, idle_ms: int = 60_000
) -> Iterator[Terminal]:
    if shutil.which("tmux") is None:
        import pytest

        pytest.skip("tmux is not installed: the interactive UI needs a terminal")
    remember_first_run(sandbox, idle_ms)
    index = len(list(sandbox.home.glob("claude-tui-*.txt")))
    terminal = Terminal(
        sandbox.home.parent / f"tmux-{index}.sock", sandbox.home / f"claude-tui-{index}.txt"
    )
    env = {
        **sandbox.env,
        "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{server.port}",
        "TERM": "xterm-256color",
    }
    command = [sandbox.toolchain.claude, "--debug-file", str(terminal.debug), *extra, prompt]
    shell = (
        f"cd {shlex.quote(str(sandbox.repo))} && exec env -i "
        + " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        + " "
        + " ".join(shlex.quote(part) for part in command)
    )
    subprocess.run(
        ["tmux", "-S", str(terminal.socket), "new-session", "-d", "-x", "160", "-y", "45", shell],
        check=True,
    )
    try:
        yield terminal
    finally:
        subprocess.run(
            ["tmux", "-S", str(terminal.socket), "kill-server"], capture_output=True, check=False
        )


@contextmanager
def interactive_copilot(
    sandbox: Sandbox, server: ChatCompletionsServer, prompt: str, *extra: str
) -> Iterator[Terminal]:
    """``copilot -i PROMPT`` (its interactive UI, the prompt its first message) offline against
    ``server``, every tool allowed, in a tmux session of its own; killed afterwards."""
    if shutil.which("tmux") is None:
        import pytest

        pytest.skip("tmux is not installed: the interactive UI needs a terminal")
    index = len(list(sandbox.home.parent.glob("tmux-copilot-*.sock")))
    terminal = Terminal(sandbox.home.parent / f"tmux-copilot-{index}.sock", Path(os.devnull))
    env = {
        **sandbox.copilot_env(server),
        "TERM": "xterm-256color",
    }
    command = [sandbox.toolchain.copilot, "--allow-all", "--no-auto-update", *extra, "-i", prompt]
    with _tmux(sandbox, terminal, env, command):
        yield terminal


@contextmanager
def interactive_qwen(
    sandbox: Sandbox, server: ChatCompletionsServer, prompt: str, *extra: str
) -> Iterator[Terminal]:
    """``qwen -i PROMPT`` (its interactive UI, the prompt its first message) offline against
    ``server``, tools approved, in a tmux session of its own; killed afterwards."""
    if shutil.which("tmux") is None:
        import pytest

        pytest.skip("tmux is not installed: the interactive UI needs a terminal")
    index = len(list(sandbox.home.parent.glob("tmux-qwen-*.sock")))
    terminal = Terminal(sandbox.home.parent / f"tmux-qwen-{index}.sock", Path(os.devnull))
    env = {**sandbox.qwen_env(server), "TERM": "xterm-256color"}
    command = [sandbox.toolchain.qwen, "--approval-mode", "yolo", *extra, "-i", prompt]
    with _tmux(sandbox, terminal, env, command):
        yield terminal


@contextmanager
def _tmux(
    sandbox: Sandbox, terminal: Terminal, env: dict[str, str], command: list[str]
) -> Iterator[None]:
    """``command`` with only ``env``, in the repository, in a detached tmux session of its
    own; the session killed afterwards."""
    shell = (
        f"cd {shlex.quote(str(sandbox.repo))} && exec env -i "
        + " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        + " "
        + " ".join(shlex.quote(part) for part in command)
    )
    subprocess.run(
        ["tmux", "-S", str(terminal.socket), "new-session", "-d", "-x", "160", "-y", "45", shell],
        check=True,
    )
    try:
        yield
    finally:
        subprocess.run(
            ["tmux", "-S", str(terminal.socket), "kill-server"], capture_output=True, check=False
        )
