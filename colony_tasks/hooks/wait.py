"""``colony-tasks hook wait``: Claude Code's background Stop handler that wakes an idle session.

Installed with ``"async": true, "asyncRewake": true``: Claude Code runs it in the background
when a turn ends and, when it exits 2, wakes the session at once with its stderr as a system
reminder. It asks this user's relay to hold a wait for the session (:mod:`colony_tasks.relay.waits`)
and blocks on that one connection — no polling here; the relay watches for every waiter at once.

- an item that wakes the session arrives (:mod:`colony_tasks.domain.wake`): the item on stderr, exit 2;
- the session ends, resumes on its own, its agent process dies, waking is turned off, or no
  relay can be had: exit 0 with nothing said;
- Claude Code runs in print mode (``-p``) without streaming input: it exits as its turn ends,
  nothing can wake it, so this exits 0 at once.

OpenCode has no hooks of its own: our plugin runs this on ``session.idle`` (``--agent
opencode``) and, on exit 2, sends the text to the idle session as its next prompt through the
OpenCode server it runs in (``client.session.promptAsync``). ``opencode run`` exits as its
turn ends, so there this exits 0 at once.

Codex runs no background handlers (its stop gate is :func:`colony_tasks.domain.wake.stop_gate`): for
Codex this exits 0 at once; so does it inside Copilot CLI's hooks, which include
``.claude/settings.json``'s (``COPILOT_CLI=1``): Copilot knows no background handler and would
wait on this one. For Copilot our extension runs it instead (``--agent copilot``, from the
process Copilot starts for the extension: :mod:`colony_tasks.install.copilot_extension`), when
the session goes idle; the extension prompts the session with what it prints.

Qwen Code runs Claude-style hooks, ``"async": true`` ones in the background, but never reads
what they say: its Stop runs this in the background (``--agent qwen``), and on a wake this
hands the text to the session's own cross-session inbox (:mod:`.qwen_inbox`), which an idle
session takes as its next turn at once; this then exits 0. Headless ``qwen -p`` exits as its
turn ends, and a session without an inbox (``agents.crossSessionMessaging`` off) cannot be
reached: for both this exits 0 at once. Standard library only, like every hook client.
"""

from __future__ import annotations

import json
import os
import sys
import time

from ..base import backend, paths
from ..base.procs import COPILOT_EXTENSION_PARENT, agent_pid, command_line
from ..relay import wire
from . import qwen_inbox
from .dialects import copilot_claude_hook
from .payload import detect_agent, text

#: How long one wait lasts; the installed handler's timeout is longer (see
#: :data:`colony_tasks.install.hookblock.WAIT_TIMEOUT`), so the wait ends on its own first.
WAIT_SECONDS = 23 * 3600
#: A relay that is not up yet, or died mid-wait: ask again, this many times.
ATTEMPTS = 6
RETRY_PAUSE = 0.3


def wait(session: str, pid: int | None) -> str | None:
    """Hold a wait in the relay; the text to wake the session with, or None."""
    if not wire.enabled():
        return None
    path = wire.socket_path(wire.relay_key(backend.store_url()))
    request = {"op": "wait", "session": session, "pid": pid, "for": WAIT_SECONDS}
    spawned = False
    for _ in range(ATTEMPTS):
        try:
            reply = wire.ask(path, request, WAIT_SECONDS + 60)
        except wire.NoRelay:
            if not spawned:
                wire.spawn()
                spawned = True
            time.sleep(RETRY_PAUSE)
            continue
        if reply is not None and reply.get("wake"):
            return str(reply["wake"])
        if reply is not None:
            # The wait ended: the session ended, resumed, waking is off — or the relay retires
            # for an upgrade, and this process runs the old code: the next Stop waits anew.
            return None
        if pid is not None and not _alive(pid):
            return None
        time.sleep(RETRY_PAUSE)  # the relay died mid-wait: the next one serves us
    return None


#: The agents this wait wakes from any process of theirs: Claude Code (its background Stop
#: handler) and OpenCode (our plugin, which prompts the idle session itself). Copilot CLI's
#: only from our extension's process, Qwen Code's only from a session with an inbox
#: (:func:`_waits`).
WAKEABLE = ("claude", "opencode")


def wakeable(pid: int | None, agent: str = "claude") -> bool:
    """Whether the agent can be woken at all: Claude Code in print mode (``-p``) without
    streaming input exits as its turn ends (and would hold its exit 30 s for a background
    handler that waits); so does ``opencode run``. Unknown (no /proc): assume it can; the
    relay ends the wait when the agent process dies."""
    args = command_line(pid) if pid is not None else None
    if not args:
        return True
    if agent == "opencode":
        # Not OpenCode at all: the wait outlived it (our plugin starts it as OpenCode goes
        # idle, and `opencode run` may exit meanwhile), so the agent found is another process.
        return runs_opencode(args) and subcommand(args) != "run"
    printing = any(a in ("-p", "--print", "--prompt") for a in args)
    streaming = "--input-format=stream-json" in args or any(
        a == "--input-format" and b == "stream-json" for a, b in zip(args, args[1:], strict=False)
    )
    return not printing or streaming


def runs_opencode(args: list[str]) -> bool:
    """Whether the command line is OpenCode's (its binary, or a runtime running its launcher)."""
    return any(os.path.basename(arg).split(".")[0] == "opencode" for arg in args[:2])


def subcommand(args: list[str]) -> str:
    """OpenCode's subcommand (``run``, ``serve``; '' for its TUI), past the program (and the
    launcher script a runtime runs it from)."""
    rest = args[1:]
    while rest and os.path.basename(rest[0]).split(".")[0] == "opencode":
        rest = rest[1:]
    return rest[0] if rest and not rest[0].startswith("-") else ""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _waits(agent: str | None) -> bool:
    """Claude Code's background Stop handler, our OpenCode plugin, our Copilot CLI
    extension (the only one that runs it for Copilot: Copilot marks the processes it starts
    for extensions), or Qwen Code's background Stop handler in a session with an inbox."""
    if agent == "copilot":
        return bool(os.environ.get(COPILOT_EXTENSION_PARENT))
    if agent == "qwen":
        return qwen_inbox.inbox(os.environ) is not None
    return agent in WAKEABLE


def run(args: list[str]) -> int:
    """Entry point: 2 with the wake text on stderr, else 0. Fails open (0, logged)."""
    try:
        raw = sys.stdin.buffer.read(1 << 20) if sys.stdin else b""
        payload = json.loads(raw.decode("utf-8", errors="replace")) if raw.strip() else None
        if not isinstance(payload, dict):
            return 0
        agent = args[args.index("--agent") + 1] if "--agent" in args[:-1] else None
        agent = agent or detect_agent(payload, "stop")
        if copilot_claude_hook(os.environ) or not _waits(agent):
            return 0
        session = text(payload, "session_id")
        if not session:
            return 0
        pid = agent_pid(cheap=False)
        if not wakeable(pid, agent):
            return 0
        found = wait(session, pid)
        if not found:
            return 0
        if agent == "qwen":
            if not qwen_inbox.send(os.environ, session, found):
                paths.log("hook wait: the Qwen Code session's inbox did not take the wake")
            return 0
        sys.stderr.write(found + "\n")
        sys.stderr.flush()
        return 2
    except BaseException as error:  # noqa: BLE001 - hooks fail open, always
        paths.log(f"hook wait failed: {type(error).__name__}: {backend.redact_url(str(error))}")
        return 0
