"""``python -m colony_tasks.relay``: run this user's relay for the configured store.

Hooks start it on demand. It takes the relay lock before importing the server, so a relay
started by a concurrent hook as well (which finds the lock held) costs little and exits.
"""

from __future__ import annotations

import fcntl
import os
import time

from ..base import backend, paths
from . import wire

#: A retiring relay (another version's) holds the lock until its requests in flight are done:
#: wait that long for it; a serving relay keeps it, and this one exits.
LOCK_WAIT = 3.0


def take_lock(key: str) -> int | None:
    """The relay lock's descriptor, held for this process's life; None when another relay
    kept it for :data:`LOCK_WAIT` seconds."""
    fd = os.open(wire.lock_path(key), os.O_CREAT | os.O_RDWR, 0o600)
    deadline = time.monotonic() + LOCK_WAIT
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except OSError:
            if time.monotonic() > deadline or _serving(key):
                os.close(fd)
                return None
            time.sleep(0.05)


def _serving(key: str) -> bool:
    """Whether a relay answers on the socket (then this one is not needed; a retiring relay
    has removed its socket already)."""
    try:
        return wire.ask(wire.socket_path(key), {"op": "ping"}, 1.0) is not None
    except wire.NoRelay:
        return False


def main() -> int:
    os.umask(0o077)  # whatever the umask of the hook that started it: every file private
    url = backend.store_url()
    key = wire.relay_key(url)
    os.chdir(paths.ensure_home())  # hold no user folder (a worktree may be removed meanwhile)
    if take_lock(key) is None:
        return 0  # another relay serves this store
    try:
        wire.listen_path(key)  # the socket's folder, private (elsewhere if squatted)
        from .server import LocalRelay, Relay, serve

        relay: Relay
        if url:
            from .team import TeamRelay

            relay = TeamRelay(url)
        else:
            relay = LocalRelay()
        return serve(relay, key)
    except BaseException as error:  # its output goes nowhere: say why in the hook log
        paths.log(f"relay {os.getpid()} failed: {type(error).__name__}: {error}")
        raise


if __name__ == "__main__":
    raise SystemExit(main())
