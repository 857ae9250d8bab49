"""Same-run A/B of the hook path of two installs: every hook event, warm and cold, B against A.

    python bench/hooks_ab.py --a ../other-checkout/.venv/bin/colony-tasks --b .venv/bin/colony-tasks \
        [--n 40] [--seed 200] [--warmup 2] [--keep]

Each side is only its console script: it gets its own temporary ``COLONY_TASKS_HOME``, its own
small git repository and its own store, seeded through that side's own ``colony-tasks hook ...``
processes with realistic Claude Code payloads (the shapes of ../shared/payloads), so the
comparison holds whatever each version's Python API or schema is. The seed is ``--seed`` hook
events of history (prompts, edits, commands) from three live sessions, then one of them, the
other session, edits ``src/held.py`` (claiming it), so a PreToolUse Edit of that file warns;
each side checks once that it does, and that one of a file nobody holds says nothing.

Every sample runs ``colony-tasks hook EVENT --agent claude`` as a new process, exactly as Claude
Code does, with a fresh prompt, ``prompt_id`` or ``tool_use_id`` (no sample is taken for a
repeat of the one before). A and B run back to back for each event, alternating which goes
first, and the events rotate every round (as :func:`_stats.time_interleaved`), so machine noise
hits both sides alike. Timed: session-start (a new session each time), user-prompt-submit,
pre-tool-use of an Edit of a file nobody holds and of the file the other session holds,
post-tool-use of an Edit and of a Bash command, and session-end of a session holding a claim.
The floor (each side's ``python -I -S -c pass``) is timed as a control: its B/A is noise.

- **warm**: the side's relay is running (the first seeding hook starts it; the benchmark waits
  until its socket answers a ping): the hook is a client of it.
- **cold**: ``COLONY_TASKS_RELAY=off``: the hook applies the event itself, on the same store.

The warm and the cold hooks act as two sessions of their own (each edits its own file), so what
one delivers or claims does not change what the other sees. Between rounds (untimed) the other
session edits its held file again (its claim kept fresh), a human posts a note in the lane's
thread (``colony-tasks post``: news for each session's next prompt), and the sessions
SessionStart began get a claim for SessionEnd to release. A Bash PostToolUse is preceded by its
PreToolUse (untimed), as the agent sends both.
Bytecode goes to a per-side ``PYTHONPYCACHEPREFIX`` under the temporary folder (compiled while
seeding), so neither checkout is written to and neither side recompiles per process. The relays
are stopped at the end.

Prints wall and CPU (user + system) tables with each event's B/A ratio of medians, and for warm
and cold the geometric mean of those ratios (and of each event's median per-round B/A, "paired").
The CPU is the hook process's own: a warm hook's relay works outside it (the relay's mean work
per event is printed below the tables). Hooks fail open (exit 0, a line in hooks.log), so each
side's hooks.log and the samples that printed something are checked too. Results go to
bench/results/hooks_ab.json.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import _stats  # noqa: E402

SIDES = ("A", "B")
MODES = ("warm", "cold")
FLOOR = "floor (python -I -S -c pass)"
EVENTS = (
    "session-start",
    "user-prompt-submit",
    "pre-tool-use (free)",
    "pre-tool-use (held)",
    "post-tool-use (Edit)",
    "post-tool-use (Bash)",
    "session-end",
)
#: How long one hook process may take before the run is abandoned (a hook's own deadline is 8 s).
PROCESS_TIMEOUT = 60.0
RELAY_START_WAIT = 30.0
RELAY_STOP_WAIT = 5.0
MAX_SOCKET_PATH = 100  # the relay moves its socket elsewhere past this (see relay/wire.py)
WORDS = "retry backoff auth middleware viewer schema migration cache index token parser".split()
APP = (
    "".join(
        f"def handler_{i}(request):\n    return request.get('{w}')\n\n\n"
        for i, w in enumerate(WORDS * 2)
    )
    + "RETRIES = 3\n"
)
TEST = "from src.app import RETRIES\n\n\ndef test_retries():\n    assert RETRIES\n"
BASH = "python -m pytest -q tests/test_app.py"
BASH_OUT = "...                                                                      [100%]\n3 passed in 0.04s\n"
# Kinds of generated ids (see uid): one per purpose, so no two samples share an id.
ME, OTHER, STARTED, SEEDED, PROMPT = 1, 2, 3, 4, 5
#: The file each mode's session edits at every round (each its own: no collision between them).
EDITED = {"warm": "src/app.py", "cold": "src/api.py"}


def uid(kind: int, number: int) -> str:
    """A UUID-shaped id, the same for A and B (their stores are separate), unique per use."""
    return str(uuid.UUID(int=(0xC01 << 116) | (kind << 64) | number))


def tool_use_id(kind: int, number: int) -> str:
    return f"toolu_{kind:02x}{number:018x}"  # Claude's shape: toolu_ and 20 hex digits


@dataclass
class Side:
    """One install under test, with its home, repository and relay."""

    label: str
    exe: Path
    root: Path
    home: Path = field(init=False)
    repo: Path = field(init=False)
    warm_env: dict[str, str] = field(init=False)
    cold_env: dict[str, str] = field(init=False)
    # Sessions SessionStart began, waiting for SessionEnd (per mode), and those given a claim.
    ending: dict[str, deque[str]] = field(init=False)
    task: int | None = None  # the lane task's id, for `colony-tasks post`
    armed: set[str] = field(default_factory=set)
    relay: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.home = self.root / "home"
        self.home.mkdir(mode=0o700)
        self.repo = git_repo(self.root)
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("COLONY_TASKS_", "PYTHON")) and k != "VIRTUAL_ENV"
        }
        env.update(
            COLONY_TASKS_HOME=str(self.home),
            # A relay left behind by a crashed run exits on its own soon after.
            COLONY_TASKS_RELAY_IDLE="120",
            PYTHONPYCACHEPREFIX=str(self.root / "pycache"),
        )
        self.warm_env = env
        self.cold_env = {**env, "COLONY_TASKS_RELAY": "off"}
        self.ending = {mode: deque() for mode in MODES}

    @property
    def socket(self) -> str:
        return str(self.home / "relay-local.sock")

    def env(self, mode: str) -> dict[str, str]:
        return self.warm_env if mode == "warm" else self.cold_env

    def cli(self, *args: str) -> bytes:
        """Run ``colony-tasks ARGS`` untimed; its stdout."""
        return run_process([str(self.exe), *args], b"", self.warm_env)[2]

    def hook(self, event: str, payload: dict, mode: str = "warm") -> bytes:
        """Run one hook untimed (seeding, between rounds); its stdout."""
        return run_hook(self, event, json.dumps(payload).encode(), mode)[2]


def run_hook(side: Side, event: str, data: bytes, mode: str) -> tuple[float, float, bytes]:
    """Run ``colony-tasks hook EVENT`` as Claude Code does: wall and CPU seconds, stdout."""
    args = [str(side.exe), "hook", event, "--agent", "claude"]
    return run_process(args, data, side.env(mode))


def run_process(args: list[str], data: bytes, env: dict[str, str]) -> tuple[float, float, bytes]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    try:
        # In a folder of no checkout, as bench/hooks.py runs hooks.
        done = subprocess.run(
            args, input=data, capture_output=True, env=env, cwd="/", timeout=PROCESS_TIMEOUT
        )
    except subprocess.TimeoutExpired:
        raise SystemExit(f"{args} took longer than {PROCESS_TIMEOUT:.0f} s") from None
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{args} exited {done.returncode}: {done.stderr[-500:]!r}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout


def git_repo(root: Path) -> Path:
    repo = root / "repo"
    files = {
        "src/app.py": APP,
        "src/api.py": APP,
        "src/free.py": "FREE = True\n",
        "src/held.py": "HELD = 1\n",
        "src/ending.py": "END = 1\n",
        "tests/test_app.py": TEST,
        "docs/guide.md": "# Guide\n",
        "README.md": "# proj\n",
    }
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@b",
        "GIT_COMMITTER_NAME": "b",
        "GIT_COMMITTER_EMAIL": "b@b",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    for args in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "init"]):
        subprocess.run(
            ["git", "-c", "init.defaultBranch=main", *args],
            cwd=repo,
            env=env,
            check=True,
            timeout=PROCESS_TIMEOUT,
        )
    # Written an hour ago: a shell command's hooks see nothing it changed (a file written in
    # the last seconds would count as written by the command).
    old = time.time() - 3600
    for rel in files:
        os.utime(repo / rel, (old, old))
    return repo


# -- payloads (Claude Code 2.1.330's shapes) ----------------------------------------------------


def base(side: Side, session: str) -> dict:
    slug = str(side.repo).replace("/", "-")
    return {
        "session_id": session,
        "transcript_path": f"/home/dev/.claude/projects/{slug}/{session}.jsonl",
        "cwd": str(side.repo),
    }


def turn(side: Side, session: str, number: int) -> dict:
    return {
        **base(side, session),
        "prompt_id": uid(PROMPT, number),
        "permission_mode": "acceptEdits",
    }


def session_start(side: Side, session: str) -> dict:
    return {**base(side, session), "hook_event_name": "SessionStart", "source": "startup"}


def prompt(side: Side, session: str, number: int) -> dict:
    words = f"{WORDS[number % len(WORDS)]} {WORDS[(number * 7) % len(WORDS)]}"
    return {
        **turn(side, session, number),
        "hook_event_name": "UserPromptSubmit",
        "prompt": f"add retry with backoff to the {words} path (step {number})",
    }


def edit_input(side: Side, rel: str) -> dict:
    old, new = ("RETRIES = 3", "RETRIES = 5") if rel in EDITED.values() else ("1", "2")
    return {
        "file_path": str(side.repo / rel),
        "old_string": old,
        "new_string": new,
        "replace_all": False,
    }


def pre_edit(side: Side, session: str, rel: str, use_id: str, number: int) -> dict:
    return {
        **turn(side, session, number),
        "effort": {"level": "medium"},
        "hook_event_name": "PreToolUse",
        "tool_name": "Edit",
        "tool_input": edit_input(side, rel),
        "tool_use_id": use_id,
    }


def post_edit(side: Side, session: str, rel: str, use_id: str, number: int) -> dict:
    tool_input = edit_input(side, rel)
    original = APP if rel in EDITED.values() else "1\n"
    return {
        **turn(side, session, number),
        "effort": {"level": "medium"},
        "hook_event_name": "PostToolUse",
        "tool_name": "Edit",
        "tool_input": tool_input,
        "tool_response": {
            "filePath": tool_input["file_path"],
            "oldString": tool_input["old_string"],
            "newString": tool_input["new_string"],
            "originalFile": original,
            "structuredPatch": [
                {
                    "oldStart": original.count("\n"),
                    "oldLines": 1,
                    "newStart": original.count("\n"),
                    "newLines": 1,
                    "lines": [f"-{tool_input['old_string']}", f"+{tool_input['new_string']}"],
                }
            ],
            "userModified": False,
            "replaceAll": False,
        },
        "tool_use_id": use_id,
        "duration_ms": 17,
    }


def pre_bash(side: Side, session: str, use_id: str, number: int) -> dict:
    return {
        **turn(side, session, number),
        "effort": {"level": "medium"},
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": BASH, "description": "Run the app tests"},
        "tool_use_id": use_id,
    }


def post_bash(side: Side, session: str, use_id: str, number: int) -> dict:
    return {
        **pre_bash(side, session, use_id, number),
        "hook_event_name": "PostToolUse",
        "tool_response": {
            "stdout": BASH_OUT,
            "stderr": "",
            "interrupted": False,
            "isImage": False,
            "noOutputExpected": False,
        },
        "tool_use_id": use_id,
        "duration_ms": 845,
    }


def session_end(side: Side, session: str) -> dict:
    return {**base(side, session), "hook_event_name": "SessionEnd", "reason": "other"}


def sample(side: Side, name: str, mode: str, number: int) -> tuple[str, bytes]:
    """The hook event and payload of sample ``number`` of ``name`` (a fresh id every time).
    Before a Bash PostToolUse, its PreToolUse runs untimed (it notes the files the command could
    change; the PostToolUse compares), as the agent sends both."""
    me = uid(ME, MODES.index(mode))
    kind = 16 + 2 * EVENTS.index(name) + MODES.index(mode)
    use_id = tool_use_id(kind, number)
    if name == "session-start":
        session = uid(STARTED, kind << 40 | number)
        side.ending[mode].append(session)
        payload = session_start(side, session)
    elif name == "user-prompt-submit":
        payload = prompt(side, me, kind << 40 | number)
    elif name == "pre-tool-use (free)":
        payload = pre_edit(side, me, "src/free.py", use_id, number)
    elif name == "pre-tool-use (held)":
        payload = pre_edit(side, me, "src/held.py", use_id, number)
    elif name == "post-tool-use (Edit)":
        payload = post_edit(side, me, EDITED[mode], use_id, number)
    elif name == "post-tool-use (Bash)":
        side.hook("pre-tool-use", pre_bash(side, me, use_id, number), mode)
        payload = post_bash(side, me, use_id, number)
    elif name == "session-end":
        payload = session_end(side, side.ending[mode].popleft())
    else:
        raise ValueError(name)
    return name.split(" (")[0], json.dumps(payload).encode()


# -- the relay ---------------------------------------------------------------------------------


def ping(path: str, timeout: float = 1.0) -> dict | None:
    """The relay's status (``ping`` is answered whatever the client's version), or None."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(path)
        sock.sendall(b'{"op": "ping"}\n')
        data = b""
        while not data.endswith(b"\n") and len(data) < 1 << 20:
            chunk = sock.recv(1 << 16)
            if not chunk:
                break
            data += chunk
        reply = json.loads(data)
        return reply if isinstance(reply, dict) else None
    except (OSError, ValueError):
        return None
    finally:
        sock.close()


def wait_for_relay(side: Side) -> dict:
    deadline = time.monotonic() + RELAY_START_WAIT
    while time.monotonic() < deadline:
        status = ping(side.socket)
        if status is not None:
            return status
        time.sleep(0.05)
    raise SystemExit(f"{side.label}: no relay answered on {side.socket} in {RELAY_START_WAIT} s")


def relay_pid(side: Side) -> int | None:
    try:
        pid = int((side.home / "relay-local.pid").read_text().strip())
    except (OSError, ValueError):
        return None
    try:  # the pid is this home's relay, not a recycled one
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except FileNotFoundError:
        return None
    except OSError:
        return pid
    return pid if b"colony_tasks.relay" in cmdline else None


def stop_relay(side: Side) -> str:
    """End the side's relay (SIGTERM, then SIGKILL past RELAY_STOP_WAIT); what happened."""
    pid = relay_pid(side)
    if pid is None:
        return "no relay running"
    try:
        os.kill(pid, signal.SIGTERM)
    except OSError as error:
        return f"relay {pid}: {error}"
    deadline = time.monotonic() + RELAY_STOP_WAIT
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return f"relay {pid} stopped"
        time.sleep(0.05)
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
    return f"relay {pid} killed (still running {RELAY_STOP_WAIT:.0f} s after SIGTERM)"


# -- seeding and the rounds ------------------------------------------------------------------


def seed(side: Side, events: int) -> dict:
    """Through the side's own hooks: the session the timed hooks of each mode act as and the
    other session, ``events`` hook events of history among them, and the other session's claim
    of src/held.py; then checks what the timed edits will see."""
    mine = [uid(ME, MODES.index(mode)) for mode in MODES]
    other = uid(OTHER, 0)
    side.hook("session-start", session_start(side, other))  # no relay yet: this one starts it
    side.relay = {"start": wait_for_relay(side)}
    for me in mine:
        side.hook("session-start", session_start(side, me))
    for i in range(events):
        session = (mine[0], other, mine[1])[i % 3]
        use_id = tool_use_id(SEEDED, i)
        step = i // 3 % 3
        if step == 0:
            side.hook("user-prompt-submit", prompt(side, session, i))
        elif step == 1:
            rel = f"{'lib' if session == other else 'src'}/mod{i % 17}.py"
            side.hook("pre-tool-use", pre_edit(side, session, rel, use_id, i))
            side.hook("post-tool-use", post_edit(side, session, rel, use_id, i))
        else:
            side.hook("pre-tool-use", pre_bash(side, session, use_id, i))
            side.hook("post-tool-use", post_bash(side, session, use_id, i))
    hold(side, 0)
    for mode in MODES:  # one session for the first SessionEnd of each mode to end
        session = uid(STARTED, MODES.index(mode))
        side.hook("session-start", session_start(side, session))
        side.ending[mode].append(session)
    arm(side, 0)
    try:
        tasks = json.loads(side.cli("tasks", "--json"))
        side.task = next(t["id"] for t in tasks if t.get("root") == str(side.repo))
    except (SystemExit, ValueError, TypeError, KeyError, StopIteration) as error:
        _stats.log(f"WARNING {side.label}: no lane task from `tasks --json` ({error!r}): no notes")
    checks = {}
    for me, mode in zip(mine, MODES, strict=True):
        for rel in ("src/free.py", "src/held.py"):
            use_id = tool_use_id(SEEDED, events + len(checks) + 1)
            out = side.hook("pre-tool-use", pre_edit(side, me, rel, use_id, events), mode)
            checks[f"{rel} [{mode}]"] = text = out.decode(errors="replace")
            if (rel == "src/held.py") != ("additionalContext" in text):
                _stats.log(f"WARNING {side.label}: pre-tool-use of {rel} [{mode}] said {text!r}")
    return checks


def hold(side: Side, number: int) -> None:
    """The other session edits src/held.py (again): it keeps holding it (an edit's claim
    expires after a while) and stays live."""
    other, use_id = uid(OTHER, 0), tool_use_id(OTHER, number)
    side.hook("post-tool-use", post_edit(side, other, "src/held.py", use_id, number))


def between(sides: list[Side], number: int) -> None:
    """Untimed after every round: the other session's edit, a note in the thread for the next
    prompt to deliver (posted by a human: the CLI's `post`), and a claim for each session
    SessionStart began (SessionEnd ends them one round later, holding a claim)."""
    for side in sides:
        hold(side, number)
        if side.task is not None:
            side.cli("post", str(side.task), f"progress note {number}: parser cache", "--as", "b")
        arm(side, number)


def arm(side: Side, number: int) -> None:
    """Each session waiting for SessionEnd edits src/ending.py once (claiming it)."""
    for queue in side.ending.values():
        for session in queue:
            if session not in side.armed:
                side.armed.add(session)
                use_id = tool_use_id(ME, len(side.armed))
                side.hook(
                    "post-tool-use", post_edit(side, session, "src/ending.py", use_id, number)
                )


@dataclass
class Samples:
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    outputs: int = 0


def rounds(
    sides: list[Side], n: int, first: int, results: dict[tuple[str, str, str], Samples] | None
) -> None:
    """``n`` rounds: every (event, mode) pair once per round, A and B back to back (which goes
    first alternates), the pairs rotating like :func:`_stats.time_interleaved`'s candidates."""
    pairs = [(FLOOR, "warm")] + [(name, mode) for name in EVENTS for mode in MODES]
    for r in range(n):
        number = first + r
        shift = r % len(pairs)
        order = sides if r % 2 == 0 else sides[::-1]
        for name, mode in pairs[shift:] + pairs[:shift]:
            for side in order:
                if name == FLOOR:
                    args = [str(python_of(side.exe)), "-I", "-S", "-c", "pass"]
                    wall, cpu, out = run_process(args, b"", side.warm_env)
                else:
                    event, data = sample(side, name, mode, number)
                    wall, cpu, out = run_hook(side, event, data, mode)
                if results is not None:
                    got = results.setdefault((name, mode, side.label), Samples())
                    got.wall.append(wall)
                    got.cpu.append(cpu)
                    got.outputs += bool(out.strip())
        between(sides, number)


# -- the sides -----------------------------------------------------------------------------------


def python_of(exe: Path) -> Path:
    """The interpreter of a console script (its ``#!`` line), else this one."""
    try:
        first = exe.read_bytes()[:400].split(b"\n", 1)[0].decode()
    except (OSError, UnicodeDecodeError):
        return Path(sys.executable)
    if first.startswith("#!") and " " not in first[2:].strip():
        return Path(first[2:].strip())
    return Path(sys.executable)


def describe(exe: Path, env: dict[str, str]) -> dict:
    """Which code a side runs: its version, source folder and commit (read only)."""

    def out(args: list[str], cwd: str = "/") -> str:
        try:
            done = subprocess.run(
                args, capture_output=True, text=True, env=env, cwd=cwd, timeout=PROCESS_TIMEOUT
            )
        except (OSError, subprocess.TimeoutExpired):
            return ""
        return done.stdout.strip() if done.returncode == 0 else ""

    source = out([str(python_of(exe)), "-c", "import colony_tasks; print(colony_tasks.__file__)"])
    folder = str(Path(source).parent.parent) if source else "/"
    git = ["git", "--no-optional-locks", "-C", folder]
    commit = out([*git, "rev-parse", "--short", "HEAD"]) if source else ""
    dirty = out([*git, "status", "--porcelain", "--untracked-files=no"]) if commit else ""
    return {
        "exe": str(exe),
        "python": str(python_of(exe)),
        "version": out([str(exe), "--version"]),
        "source": source,
        "commit": commit + (f" (+{len(dirty.splitlines())} changed files)" if dirty else ""),
    }


def log_lines(side: Side, name: str) -> list[str]:
    try:
        return (side.home / name).read_text(errors="replace").splitlines()
    except OSError:
        return []


# -- the report ----------------------------------------------------------------------------------


def paired_ratio(a: list[float], b: list[float]) -> float:
    """The median of the rounds' B/A (A and B ran back to back in each round)."""
    return _stats.percentile([y / x for x, y in zip(a, b, strict=True) if x > 0], 50)


def geomean(values: list[float]) -> float:
    values = [v for v in values if v and v > 0 and not math.isnan(v)]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else math.nan


def report(results: dict[tuple[str, str, str], Samples], metric: str) -> tuple[list, dict]:
    """Rows (A, then B with its B/A) per event and mode, and the geometric means by mode."""
    rows: list[_stats.Stat] = []
    ratios: dict[str, list[float]] = {mode: [] for mode in MODES}
    for mode in MODES:
        for name in (FLOOR, *EVENTS) if mode == "warm" else EVENTS:
            got = {s: results[(name, mode, s)] for s in SIDES}
            label = name if name == FLOOR else f"{name} [{mode}]"
            a = _stats.stat(f"{label} A", getattr(got["A"], metric))
            b = _stats.stat(f"{label} B", getattr(got["B"], metric))
            rows += [a, _stats.compare(b, a, "A")]
            if name != FLOOR and b.ratio is not None:
                ratios[mode].append(b.ratio)
    return rows, {mode: geomean(values) for mode, values in ratios.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--a", required=True, type=Path, help="side A's colony-tasks script")
    parser.add_argument(
        "--b",
        type=Path,
        default=Path(sys.executable).parent / "colony-tasks",
        help="side B's colony-tasks script (default: this interpreter's)",
    )
    parser.add_argument("--n", type=int, default=40, help="timed rounds")
    parser.add_argument("--warmup", type=int, default=2, help="untimed rounds first")
    parser.add_argument("--seed", type=int, default=200, help="hook events of history per side")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "hooks_ab.json")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args()
    if args.n < 1 or args.warmup < 0 or args.seed < 0:
        raise SystemExit("--n must be at least 1, --warmup and --seed at least 0")
    exes = {"A": args.a.absolute(), "B": args.b.absolute()}
    for label, exe in exes.items():
        if not (exe.is_file() and os.access(exe, os.X_OK)):
            raise SystemExit(f"{label}: {exe} is not an executable console script")
    root = Path(tempfile.mkdtemp(prefix="colony-ab-"))
    if len(str(root / "a" / "home" / "relay-local.sock")) > MAX_SOCKET_PATH:
        shutil.rmtree(root)
        root = Path(tempfile.mkdtemp(prefix="colony-ab-", dir="/tmp"))
    info = _stats.machine_info()
    print(_stats.machine_line(info))
    sides: list[Side] = []
    try:
        for label in SIDES:
            folder = root / label.lower()
            folder.mkdir()
            sides.append(Side(label, exes[label], folder))
        about = {s.label: describe(s.exe, s.warm_env) for s in sides}
        for label, d in about.items():
            print(f"{label}: {d['exe']} | {d['version']} | {d['source']} {d['commit']}".rstrip())
        checks = {}
        for side in sides:
            _stats.log(f"seeding {side.label}: {args.seed} hook events")
            checks[side.label] = seed(side, args.seed)
        _stats.log(f"warming up ({args.warmup} rounds), then timing {args.n} interleaved rounds")
        rounds(sides, args.warmup, 1, None)
        results: dict[tuple[str, str, str], Samples] = {}
        for side in sides:
            side.relay["before"] = ping(side.socket) or {}
        rounds(sides, args.n, 1 + args.warmup, results)
        for side in sides:
            pid = relay_pid(side)
            side.relay["end"] = ping(side.socket) or {}
            side.relay["same"] = pid == side.relay["start"].get("pid")
    finally:
        stopped = {side.label: stop_relay(side) for side in sides}
        logs = {s.label: (log_lines(s, "hooks.log"), log_lines(s, "relay.log")) for s in sides}
        if args.keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)

    wall, wall_means = report(results, "wall")
    cpu, cpu_means = report(results, "cpu")
    print(_stats.format_table(wall, title="\nhook wall time per process (B/A: ratio of medians)"))
    print(_stats.format_table(cpu, title="\nhook CPU time (user + system) per process"))
    print()
    paired = {
        mode: geomean(
            [
                paired_ratio(results[(name, mode, "A")].wall, results[(name, mode, "B")].wall)
                for name in EVENTS
            ]
        )
        for mode in MODES
    }
    for mode in MODES:
        print(
            f"geometric mean B/A over {len(EVENTS)} events, {mode}: wall {wall_means[mode]:.3f}x"
            f" (paired {paired[mode]:.3f}x), cpu {cpu_means[mode]:.3f}x"
        )
    floor = {s: results[(FLOOR, "warm", s)].wall for s in SIDES}
    print(f"floor B/A (noise control): {paired_ratio(floor['A'], floor['B']):.3f}x paired median")
    notes = []
    for side in sides:
        hooks_log, relay_log = logs[side.label]
        before, end = side.relay.get("before", {}), side.relay.get("end", {})
        served = (end.get("served") or 0) - (before.get("served") or 0)
        work = (end.get("work_seconds") or 0) - (before.get("work_seconds") or 0)
        per_event = f"{1000 * work / served:.2f} ms of work per event" if served > 0 else "?"
        notes.append(
            f"{side.label}: relay {'kept' if side.relay.get('same') else 'CHANGED'} (timed rounds:"
            f" {served} events, {per_event}, rss {end.get('rss_kb')} kB), {stopped[side.label]};"
            f" hooks.log {len(hooks_log)} lines;"
            f" relays started {sum('serving' in line for line in relay_log)}"
        )
        notes += [f"  {line}" for line in hooks_log[-3:]]
    for name in EVENTS:  # the same work on both sides: a hook that says more or less differs
        for mode in MODES:
            shares = {s: f"{results[(name, mode, s)].outputs}/{args.n}" for s in SIDES}
            if len(set(shares.values())) > 1:
                notes.append(f"{name} [{mode}]: samples with output differ: {shares}")
    print("\n".join(notes))

    table = []
    for (name, mode, label), got in results.items():
        table.append(
            {
                "event": name,
                "mode": mode,
                "side": label,
                "wall": _stats.stat(f"{name} [{mode}] {label}", got.wall).to_dict(),
                "cpu": _stats.stat(f"{name} [{mode}] {label}", got.cpu).to_dict(),
                "outputs": got.outputs,
            }
        )
    pairs = {
        f"{name} [{mode}]": {
            "wall_p50_ratio": next(s.ratio for s in wall if s.name == f"{name} [{mode}] B"),
            "cpu_p50_ratio": next(s.ratio for s in cpu if s.name == f"{name} [{mode}] B"),
            "wall_paired_ratio": paired_ratio(
                results[(name, mode, "A")].wall, results[(name, mode, "B")].wall
            ),
        }
        for mode in MODES
        for name in EVENTS
    }
    target = _stats.write_json(
        args.out,
        {
            "machine": info,
            "loadavg_end": [round(x, 2) for x in os.getloadavg()],
            "n": args.n,
            "warmup": args.warmup,
            "seed": args.seed,
            "sides": about,
            "results": table,
            "ratios": pairs,
            "geomean": {"wall": wall_means, "wall_paired": paired, "cpu": cpu_means},
            "checks": checks,
            "relays": {s.label: {**s.relay, "stop": stopped[s.label]} for s in sides},
            "hooks_log": {label: lines[0][-20:] for label, lines in logs.items()},
            "notes": notes,
        },
    )
    print(f"results: {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
