"""Which store backend this process uses, and how to print its address safely.

Unset, colony-tasks keeps one SQLite file under the data folder. Team mode puts every front end
on a shared PostgreSQL database: ``COLONY_TASKS_DATABASE_URL=postgresql://user:pass@host/db``
or ``{"store": {"url": "postgresql://..."}}`` in settings.json (the environment wins). Hooks
never import a database driver: in team mode they reach the local relay
(:mod:`colony_tasks.relay.team`). Standard library only: every hook process imports this module.
"""

from __future__ import annotations

import os
import re
import zlib

from . import settings

ENV_URL = "COLONY_TASKS_DATABASE_URL"
ENV_DEVELOPER = "COLONY_TASKS_DEVELOPER"
ENV_MACHINE = "COLONY_TASKS_MACHINE"

# Compiled on first use (re.compile caches): compiling at import cost every hook process,
# team mode or not, ~4 M instructions.
_PASSWORD = r"(?P<head>[a-z][a-z0-9+.-]*://[^:/@\s]*:)(?P<secret>[^@\s]*)(?=@)"
_PASSWORD_PARAM = r"(?P<head>[?&]password=)(?P<secret>[^&\s]*)"


def store_url() -> str | None:
    """The team store's URL, or None for the local SQLite store."""
    url = os.environ.get(ENV_URL, "").strip()
    if not url:
        configured = settings.get("store", "url")
        url = configured.strip() if isinstance(configured, str) else ""
    return url or None


SSLMODES = ("disable", "allow", "prefer", "require", "verify-ca", "verify-full")


def check_url(url: str) -> None:
    """Refuse a store URL colony-tasks cannot use: another database's scheme (``mysql://``
    would otherwise become a SQLite file of that name) or a misspelt ``sslmode`` (which must
    not quietly become "TLS if offered, unverified")."""
    from .errors import Misconfigured

    scheme, sep, rest = url.partition("://")
    if not sep or not scheme[:1].isalpha():
        return  # a path
    if not all(c.isalnum() or c in "+-." for c in scheme):
        return
    if scheme not in ("postgresql", "postgres"):
        raise Misconfigured(
            f"The store URL {redact_url(url)} uses {scheme}://, which colony-tasks does not"
            " support: use a postgresql:// URL, or unset COLONY_TASKS_DATABASE_URL (and"
            " settings.json's store.url) to use this machine's SQLite store."
        )
    import urllib.parse

    query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))
    sslmode = query.get("sslmode", "prefer")
    if sslmode not in SSLMODES:
        raise Misconfigured(
            f"Unknown sslmode {sslmode!r} in {redact_url(url)}; use one of {', '.join(SSLMODES)}."
        )


def redact_url(text: str) -> str:
    """``text`` with every URL password (``user:secret@`` or ``?password=``) replaced by ***."""
    if "://" not in text and "password=" not in text.lower():
        return text
    text = re.sub(_PASSWORD, lambda m: m.group("head") + "***", text, flags=re.I)
    return re.sub(_PASSWORD_PARAM, lambda m: m.group("head") + "***", text, flags=re.I)


def store_key(url: str) -> str:
    """A short stable name for one store (its URL without the password), used to name the
    relay's socket, lock and outbox: one relay per user and store."""
    raw = redact_url(url).encode("utf-8")
    return f"{zlib.crc32(raw):08x}{zlib.adler32(raw):08x}"
