"""The relay's wire: where its socket lives, how a client asks it, how one is started.

One request per connection: a JSON object on one line, answered by one JSON line. Every
request carries ``v``, the client's version: a relay of another version answers
``{"retire": true}`` (the client handles its event itself) and, when an upgrade replaced its
package on disk, retires (finishes what it has in flight and exits), so nothing is served by
old code after an upgrade. A relay closes a connection unread when it is busy or the request
is too big or too slow (:mod:`colony_tasks.relay.bounds`): the client treats that as no
answer.

The socket is ``relay-<key>.sock`` in the data folder (0700), or, when that path is too long
for a unix socket, in a private folder of this user under the temp folder, where anyone may
create names first: ``colony-tasks-<uid>``, or, when that name is taken by something not ours
and private (another user's folder, a symlink, a file, a folder others may write), a fresh
folder the relay makes and records in the data folder (``relay-<key>.folder``). A client
sends nothing to a socket in a folder that is not this user's private folder, nor to a
listener of another uid (the kernel's peer credentials); it treats either as no relay. The
socket is created 0600 and the relay checks its peer's uid too. Standard library only: every
hook client imports this module.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import sys
import time
import zlib

from .. import __version__
from ..base import backend, paths

# The hook client imports no `typing` (~1.5 ms of every hook): see TYPE_CHECKING in docs/relay.md.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..base.agent_events import ToolAction

VERSION = __version__
#: How long ``colony-tasks search`` waits for a relay's answer (its first search loads the
#: vector index) before searching in its own process.
SEARCH_WAIT = 30.0
#: The key of this user's SQLite store (one per data folder); a team store's is
#: :func:`colony_tasks.base.backend.store_key` of its URL.
LOCAL_KEY = "local"
MAX_SOCKET_PATH = 100
MAX_REPLY = 16 * 1024 * 1024
#: macOS's and FreeBSD's LOCAL_PEERCRED (at level SOL_LOCAL = 0): a ``struct xucred``.
LOCAL_PEERCRED = 0x001


def relay_key(url: str | None) -> str:
    """Which relay serves the store at ``url``: the one of this user's SQLite store for None,
    else the team store's (its :func:`~colony_tasks.base.backend.store_key`)."""
    return backend.store_key(url) if url else LOCAL_KEY


class NoRelay(Exception):
    """Nothing listens on the relay's socket (never started, exited, killed), or this user
    may not reach it."""


class ForeignRelay(NoRelay):
    """The socket is in a folder that is not this user's private folder, or another user
    listens on it: nothing is sent (logged; the caller goes on as if there were no relay)."""


class ToolCall:
    """A tool call in the core's terms: ``action`` is ``edit`` (``paths`` are the files it
    writes), ``read`` (the files it reads), ``shell`` (``command`` is what it runs) or
    ``other``; ``use_id`` pairs a PreToolUse with its PostToolUse; ``edits`` are what a
    PreToolUse's edit says it will write, ``[kind, path, old, new]`` each (sent only when
    there are some). ``more``: how many more files the call named past those kept (set where a
    request is parsed; not sent)."""

    __slots__ = ("name", "action", "paths", "command", "use_id", "edits", "more")

    def __init__(
        self,
        name: str,
        action: ToolAction,
        paths: list[str],
        command: str = "",
        use_id: str = "",
        edits: list[list[str]] | None = None,
    ) -> None:
        self.name = name
        self.action = action
        self.paths = paths
        self.command = command
        self.use_id = use_id
        self.edits = edits or []
        self.more = 0

    def to_wire(self) -> dict[str, Any]:
        found: dict[str, Any] = {
            "name": self.name,
            "action": self.action,
            "paths": self.paths,
            "command": self.command,
            "use_id": self.use_id,
        }
        if self.edits:
            found["edits"] = self.edits
        return found


class EventRequest:
    """One agent event as a hook sends it to be applied: the event (our name, a row of
    :data:`colony_tasks.base.agent_events.EVENTS`), the agent's kind, its session id, working
    folder and agent process, the subagent that acted ('' for the session itself), the
    idempotency key and send time, the tool call (tool events) and the event's fields. Built
    by the hook client (:func:`colony_tasks.hooks.payload.request`), parsed and checked once
    where it is applied (:func:`colony_tasks.relay.apply.parse`)."""

    __slots__ = (
        "event",
        "agent",
        "session",
        "cwd",
        "pid",
        "subagent",
        "key",
        "at",
        "tool",
        "fields",
    )

    def __init__(
        self,
        event: str,
        agent: str,
        *,
        session: str = "",
        cwd: str = "",
        pid: int | None = None,
        subagent: str = "",
        key: str = "",
        at: float | None = None,
        tool: ToolCall | None = None,
        fields: dict[str, str | bool] | None = None,
    ) -> None:
        self.event = event
        self.agent = agent
        self.session = session
        self.cwd = cwd
        self.pid = pid
        self.subagent = subagent
        self.key = key
        self.at = at
        self.tool = tool
        self.fields = fields if fields is not None else {}

    def to_wire(self) -> dict[str, Any]:
        found: dict[str, Any] = {
            "op": "event",
            "event": self.event,
            "agent": self.agent,
            "session": self.session,
            "cwd": self.cwd,
            "pid": self.pid,
            "subagent": self.subagent,
            "key": self.key,
            "at": self.at,
            "fields": self.fields,
        }
        if self.tool is not None:
            found["tool"] = self.tool.to_wire()
        return found


def socket_path(store_key: str) -> str:
    """Where the relay for ``store_key`` listens: in the data folder, or where its path would
    be too long for a unix socket (about 100 bytes), under the temp folder: in the folder the
    last relay recorded (:func:`listen_path`), else in this user's folder there (under /tmp,
    when even that is too long)."""
    candidate = os.path.join(paths.home(), f"relay-{store_key}.sock")
    if len(candidate.encode()) <= MAX_SOCKET_PATH:
        return candidate
    name = f"r-{zlib.crc32(candidate.encode()):08x}.sock"
    recorded = _recorded_folder(store_key)
    if recorded and len(os.path.join(recorded, name).encode()) <= MAX_SOCKET_PATH:
        return os.path.join(recorded, name)
    short = os.path.join(paths.fallback_dir(), name)
    if len(short.encode()) <= MAX_SOCKET_PATH:
        return short
    return os.path.join("/tmp", f"colony-tasks-{os.getuid()}", name)


def folder_record_path(store_key: str) -> str:
    """The file in the data folder naming the temp folder the relay moved to (absent: it
    listens in the usual place)."""
    return os.path.join(paths.home(), f"relay-{store_key}.folder")


def _recorded_folder(store_key: str) -> str | None:
    try:
        fd = paths.open_private(folder_record_path(store_key), os.O_RDONLY)
    except OSError:
        return None
    try:
        text = os.read(fd, 4096).decode("utf-8", "surrogateescape").strip()
    finally:
        os.close(fd)
    return text if text.startswith("/") and "\n" not in text else None


def _not_private(folder: str) -> str | None:
    """Why ``folder`` may not hold this user's socket (None: it may): it must be a folder,
    not a link to one, of this user, that no one else may enter or write."""
    try:
        info = os.lstat(folder)
    except OSError as error:
        return f"{type(error).__name__}: {error.strerror}"
    if stat.S_ISLNK(info.st_mode):
        return "a symlink"
    if not stat.S_ISDIR(info.st_mode):
        return "not a folder"
    if info.st_uid != os.getuid():
        return f"owned by uid {info.st_uid}"
    if info.st_mode & 0o077:
        return f"mode {info.st_mode & 0o777:o}, open to others"
    return None


def listen_path(store_key: str) -> str:
    """The relay's side of :func:`socket_path`, called by the relay holding its lock before
    it listens: the socket's folder made ready (created 0700 when missing). When the usual
    folder under the temp folder is not this user's private folder (another user's, a
    symlink, a file, open to others), the relay does not give up: it makes a fresh private
    folder beside it (a random name, created by ``mkdir``, which fails rather than follow or
    reuse anything) and records it in the data folder, where clients look first."""
    path = socket_path(store_key)
    folder = os.path.dirname(path)
    if os.path.normpath(folder) == os.path.normpath(paths.home()):
        return path
    try:
        os.mkdir(folder, 0o700)
    except OSError:
        pass
    problem = _not_private(folder)
    if problem is None:
        return path
    name = os.path.basename(path)
    for base in (os.path.dirname(paths.fallback_dir()), "/tmp"):
        for _ in range(8):
            fresh = os.path.join(base, f"colony-tasks-{os.getuid()}-{os.urandom(4).hex()}")
            if len(os.path.join(fresh, name).encode()) > MAX_SOCKET_PATH:
                break
            try:
                os.mkdir(fresh, 0o700)
            except FileExistsError:
                continue
            except OSError:
                break
            _record_folder(store_key, fresh)
            paths.log(
                f"relay {os.getpid()}: {folder} is not this user's private folder ({problem});"
                f" listening in {fresh} instead"
            )
            return os.path.join(fresh, name)
    raise PermissionError(f"{folder} is not this user's private folder ({problem})")


def _record_folder(store_key: str, folder: str) -> None:
    record = folder_record_path(store_key)
    fd = paths.open_private(record + ".new", os.O_CREAT | os.O_WRONLY | os.O_TRUNC)
    try:
        os.write(fd, (folder + "\n").encode("utf-8", "surrogateescape"))
    finally:
        os.close(fd)
    os.replace(record + ".new", record)


def peer_uid(sock: socket.socket) -> int | None:
    """The uid of the process at the other end of a connected unix socket (for a client, the
    listener's, recorded by the kernel when it called ``listen``), or None where this
    platform gives no way to ask. Read from the raw structure: no ``struct`` import."""
    if sys.platform.startswith("linux"):  # struct ucred {pid_t pid; uid_t uid; gid_t gid}
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
        return int.from_bytes(creds[4:8], sys.byteorder)
    if sys.platform == "darwin" or sys.platform.startswith("freebsd"):
        # struct xucred {u_int cr_version; uid_t cr_uid; short cr_ngroups; gid_t cr_groups[16]}
        creds = sock.getsockopt(0, LOCAL_PEERCRED, 76)
        return int.from_bytes(creds[4:8], sys.byteorder)
    return None


def _refuse(path: str, why: str) -> ForeignRelay:
    paths.log(f"relay socket {path} refused: {why}; treated as no relay")
    return ForeignRelay(f"{path}: {why}")


def relay_running(store_key: str) -> bool:
    """Whether a relay process holds ``store_key``'s lock (alive, if not answering): then the
    store was not left by a crash. A lock file nobody holds, or none: False."""
    import fcntl  # only a hook that found no relay asks

    try:
        fd = os.open(lock_path(store_key), os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


def lock_path(store_key: str) -> str:
    return os.path.join(paths.home(), f"relay-{store_key}.lock")


def pid_path(store_key: str) -> str:
    return os.path.join(paths.home(), f"relay-{store_key}.pid")


def event_key(event: str, raw: bytes) -> str:
    """The idempotency key of one hook event: its name and a digest of the agent's exact
    bytes. Both agents put a fresh id in every payload they mean to be distinct (Claude's
    ``prompt_id`` and ``tool_use_id``, Codex's ``turn_id`` and ``tool_use_id``), so the same
    key twice means the same event: delivered twice by a hook installed twice, or applied by a
    relay that died before it could answer."""
    return f"{event}:{zlib.crc32(raw):08x}{zlib.adler32(raw):08x}{len(raw):x}"


def ask(path: str, request: dict[str, Any], timeout: float) -> dict[str, Any] | None:
    """Send one request, stamped with this client's version, and return the reply; None when
    none came within ``timeout`` (the relay is slow, or died mid-request). Raises
    :class:`NoRelay` when nothing listens, :class:`ForeignRelay` (logged) before sending
    anything when the socket's folder is not this user's private folder or another user
    listens."""
    request = {**request, "v": VERSION}
    deadline = time.monotonic() + timeout
    folder = os.path.dirname(path)
    if os.path.normpath(folder) != os.path.normpath(paths.home()):
        # Under the temp folder anyone may have made the name first. (The data folder is the
        # user's own, 0700 when we made it; there the listener's uid below is the check.)
        problem = _not_private(folder)
        if problem is not None:
            if problem.startswith("FileNotFoundError"):
                raise NoRelay(problem)  # never made yet: the relay that starts makes it
            raise _refuse(path, f"its folder is {problem}")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(max(timeout, 0.001))
        try:
            sock.connect(path)
        except (FileNotFoundError, ConnectionRefusedError, PermissionError) as error:
            raise NoRelay(str(error)) from None
        uid = peer_uid(sock)
        if uid is not None and uid != os.getuid():
            raise _refuse(path, f"it is served by uid {uid}")
        # ASCII JSON: a lone surrogate (half an emoji in the agent's payload) travels as an escape.
        sock.sendall(json.dumps(request).encode() + b"\n")
        data = b""
        while not data.endswith(b"\n") and len(data) <= MAX_REPLY:
            sock.settimeout(max(deadline - time.monotonic(), 0.001))
            chunk = sock.recv(1 << 16)
            if not chunk:
                break
            data += chunk
        reply = json.loads(data) if data.endswith(b"\n") else None
        return reply if isinstance(reply, dict) else None
    except (OSError, ValueError):
        return None
    finally:
        sock.close()


def spawn() -> None:
    """Start a relay for this user's store, detached (its own session, stdio on /dev/null).
    One started by a concurrent client as well exits at once: the first holds the lock.

    ``-P``: the hook runs in the agent's working folder, and ``python -m`` would otherwise put
    that folder first on the import path — a repository with a ``colony_tasks`` folder of its
    own would run as the relay."""
    devnull = os.open(os.devnull, os.O_RDWR)
    try:
        os.posix_spawn(
            sys.executable,
            [sys.executable, "-P", "-m", "colony_tasks.relay"],
            os.environ,
            file_actions=[(os.POSIX_SPAWN_DUP2, devnull, fd) for fd in (0, 1, 2)],
            setsid=True,
        )
    finally:
        os.close(devnull)


def request_once(
    store_key: str, request: dict[str, Any], timeout: float, *, start: bool = False
) -> dict[str, Any] | None:
    """Ask this user's relay for ``store_key``; None when there is none (starting one first
    when ``start``, for the next caller) or it did not answer in time."""
    try:
        return ask(socket_path(store_key), request, timeout)
    except NoRelay:
        if start:
            spawn()
        return None


def enabled() -> bool:
    """False when ``COLONY_TASKS_RELAY`` is off: every hook and search then runs in its own
    process."""
    return os.environ.get("COLONY_TASKS_RELAY", "").strip().lower() not in ("0", "off", "no")


def search(store_key: str, options: dict[str, Any]) -> dict[str, Any] | None:
    """A search answered by the relay's warm index (``{"hits": [...], "unavailable": ...}``),
    or None: no relay (one is started for the next search), disabled, or no answer in time."""
    if not enabled():
        return None
    reply = request_once(store_key, {"op": "search", **options}, SEARCH_WAIT, start=True)
    if reply is None or "hits" not in reply:
        return None
    return reply


def closing(store_key: str, agent_pid: int) -> None:
    """Tell this user's relay that the agent process ``agent_pid`` is shutting down: the wake
    waits of its sessions end (see :mod:`colony_tasks.relay.waits`). No relay: nothing to do."""
    if enabled():
        request_once(store_key, {"op": "closing", "pid": agent_pid}, 0.5)
