"""What one relay may be made to hold by any process of its user, and when it retires.

Every process of the user can reach the relay's socket, so nothing a client sends may cost
the relay more than these bounds (issue 37):

- at most :data:`MAX_CONNECTIONS` connections are read or answered at once (one thread
  each); the relay closes any other at once, unread, and its client handles its event itself
  (a hook applies it in process or leaves it spooled, as when no relay answers). Held wake
  waits are not counted here: :mod:`.waits` bounds them;
- a request is one line of at most :data:`MAX_REQUEST` bytes, read whole within
  :data:`READ_WAIT` seconds of the connection's arrival, or the connection is closed unread
  (the hook's own wait for its relay is longer: it then applies the event itself). A real
  event is far smaller: a tool call names its files, not their content, and the largest
  texts, a pasted prompt or a shell command, are kept to 16,000 characters anyway;
- a tool call names at most :data:`MAX_PATHS` files: past them the event is applied with its
  first :data:`MAX_PATHS` (:func:`colony_tasks.relay.apply.parse_tool`), so one event cannot
  hold the store's write lock for seconds;
- a request of another version retires the relay only when the package it was loaded from
  now holds another version on disk (:func:`installed_version`: an upgrade replaced it); a
  client that merely claims another version is told to handle its event itself.
"""

from __future__ import annotations

import os
import re
import socket
import time

MAX_CONNECTIONS = 32
MAX_REQUEST = 1024 * 1024
READ_WAIT = 2.0
MAX_PATHS = 1_000
#: The file the package's version is read from (as the build does: ``tool.hatch.version``).
PACKAGE_INIT = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "__init__.py"
)
_VERSION_LINE = re.compile(r"""^__version__\s*=\s*["']([^"']+)["']""", re.MULTILINE)


def installed_version() -> str | None:
    """The version of the package this relay was loaded from, as it is on disk now; None
    when it is gone or unreadable (uninstalled: as good as replaced)."""
    try:
        with open(PACKAGE_INIT, encoding="utf-8") as handle:
            text = handle.read(64 * 1024)
    except (OSError, ValueError):
        return None
    found = _VERSION_LINE.search(text)
    return found.group(1) if found else None


def read_request(conn: socket.socket) -> bytes | None:
    """One request line, read whole within :data:`READ_WAIT` seconds and at most
    :data:`MAX_REQUEST` bytes; None (the connection is then closed unread) when the
    client sends more, stops short or is too slow."""
    deadline = time.monotonic() + READ_WAIT
    chunks: list[bytes] = []
    size = 0
    while not chunks or not chunks[-1].endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0 or size > MAX_REQUEST:
            return None
        conn.settimeout(left)
        chunk = conn.recv(min(1 << 16, MAX_REQUEST + 1 - size))
        if not chunk:
            return None
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks) if size <= MAX_REQUEST else None
