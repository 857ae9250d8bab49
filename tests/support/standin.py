"""A stand-in agent: a real process whose hooks are its own children, as an agent's are.

It runs ``colony-tasks hook session-start`` for its session (so the session is bound to this
process), optionally starts ``colony-tasks hook wait`` the way Claude Code does at Stop (in
the background) and records how that wait ended, then idles until the test kills it. Tests
use it as the victim: a live agent process that is none of the test's ancestors.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from tests.support.hookrun import EXE, claude

SCRIPT = """
import json, os, subprocess, sys, time
exe, start, stop, out = sys.argv[1:5]
with open(start, 'rb') as payload:
    subprocess.run([exe, 'hook', 'session-start', '--agent', 'claude'], stdin=payload,
                   capture_output=True, check=True)
open(out + '.started', 'w').close()
if stop != '-':
    with open(stop, 'rb') as payload:
        wait = subprocess.Popen([exe, 'hook', 'wait', '--agent', 'claude'], stdin=payload,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    open(out + '.waiting', 'w').close()
    _, err = wait.communicate()
    with open(out + '.tmp', 'w') as done:
        json.dump([wait.returncode, err.decode()], done)
    os.replace(out + '.tmp', out + '.waited')
time.sleep(3600)
"""


class StandIn:
    """One stand-in agent process (see the module docstring)."""

    def __init__(self, home: Path, repo: Path, sid: str, *, wait: bool = False) -> None:
        self.sid = sid
        folder = home.parent / f"standin-{sid}"
        folder.mkdir(parents=True, exist_ok=True)
        start = folder / "start.json"
        start.write_text(json.dumps(claude("session-start", sid, repo, source="startup")))
        stop = folder / "stop.json"
        stop.write_text(json.dumps(claude("stop", sid, repo, stop_hook_active=False)))
        self.out = folder / "out"
        self.process = subprocess.Popen(
            [sys.executable, "-c", SCRIPT, str(EXE), str(start), str(stop) if wait else "-"]
            + [str(self.out)],
            env={**os.environ, "COLONY_TASKS_HOME": str(home)},
        )
        self.pid = self.process.pid
        self._until(".started")

    def _until(self, suffix: str, timeout: float = 30.0) -> Path:
        path = Path(f"{self.out}{suffix}")
        deadline = time.monotonic() + timeout
        while not path.exists():
            if self.process.poll() is not None:
                raise AssertionError(f"the stand-in agent {self.sid} exited early")
            if time.monotonic() > deadline:
                raise AssertionError(f"the stand-in agent {self.sid} never wrote {path.name}")
            time.sleep(0.02)
        return path

    def waited(self, timeout: float = 30.0) -> tuple[int, str]:
        """How its ``hook wait`` ended: (exit code, stderr)."""
        code, err = json.loads(self._until(".waited", timeout).read_text())
        return int(code), str(err)

    def wait_done(self) -> bool:
        return Path(f"{self.out}.waited").exists()

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()
