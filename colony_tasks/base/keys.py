"""Session keys: derived on the session's machine, stored only as a hash.

A session's key (:mod:`colony_tasks.domain.identity`, rule 2) is the HMAC-SHA256 of its id under a
random secret kept in this machine's data folder (``session-secret``, 0600). The store holds
only the key's SHA-256 (``session_keys.key_hash``): whoever reads the store — a member of a team
database, a copy of the SQLite file — learns no key, and a presented key is checked by hashing
it. The briefing recomputes the key each time it shows it, on the machine that ran the session.
Standard library only (the hook path registers sessions). ``hashlib`` and ``hmac`` are imported
where a key is made or checked: loading OpenSSL costs a hook that applies its own event ~2 ms
(a quarter of what the cold path added since 0.2), and most events never need a key.
"""

from __future__ import annotations

import os
import time

from . import paths

SECRET_NAME = "session-secret"
KEY_CHARS = 16


def _secret() -> bytes:
    """This machine's secret, created on first use (exclusively, so two processes agree)."""
    path = os.path.join(paths.ensure_home(), SECRET_NAME)
    for _ in range(100):
        try:
            fd = paths.open_private(path, os.O_RDONLY)
        except FileNotFoundError:
            fresh = os.urandom(32).hex().encode()
            try:
                fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
            except FileExistsError:
                continue
            try:
                os.write(fd, fresh)
            finally:
                os.close(fd)
            return fresh
        try:
            data = os.read(fd, 256).strip()
        finally:
            os.close(fd)
        if data:
            return data
        time.sleep(0.005)  # another process created it a moment ago and is writing it
    raise PermissionError(f"{path} stays empty; delete it to make a new secret")


def key_for(session_id: str) -> str:
    """The key of the session ``session_id`` (the same on every call on this machine)."""
    import hmac

    digest = hmac.new(_secret(), session_id.encode("utf-8", "surrogateescape"), "sha256")
    return digest.hexdigest()[:KEY_CHARS]


def key_hash(key: str) -> str:
    """What the store keeps of a key."""
    import hashlib

    return hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()


def matches(key: str, stored_hash: str | None) -> bool:
    """True when ``key`` is the key whose hash the store holds (constant time)."""
    import hmac

    return stored_hash is not None and hmac.compare_digest(key_hash(key), stored_hash)
