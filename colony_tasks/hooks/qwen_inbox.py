"""Wake an idle Qwen Code session: one message into its cross-session inbox.

Every interactive Qwen Code session binds an inbox (a Unix socket) and hands the processes it
starts — its hooks among them — the socket's path and a token no other process holds
(``QWEN_CODE_MESSAGING_SOCKET``, ``QWEN_CODE_MESSAGING_TOKEN``). A message presented with that
token is the session's own process's: unless the user's ``agents.crossSessionInbound`` is
``hold`` or ``refuse`` it joins the session's input queue, which an idle session drains at once
as its next turn. Protocol: Qwen Code's ``features/cross-session-protocol.md`` (one connection
per message: the auth line and the frame in one write, then half-close; the receiver never
answers on it). Standard library only, like every hook client.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import uuid
from collections.abc import Mapping

SOCKET_ENV = "QWEN_CODE_MESSAGING_SOCKET"
TOKEN_ENV = "QWEN_CODE_MESSAGING_TOKEN"
#: How long the session gets to take the message and close the connection.
TIMEOUT = 5.0


def inbox(env: Mapping[str, str]) -> tuple[str, str] | None:
    """The session's inbox (socket path, child token), when it has one this user owns."""
    path, token = env.get(SOCKET_ENV, ""), env.get(TOKEN_ENV, "")
    if not path or not token:
        return None
    try:
        info = os.stat(path, follow_symlinks=False)
    except OSError:
        return None
    if not stat.S_ISSOCK(info.st_mode) or info.st_uid != os.getuid():
        return None
    return path, token


def frames(token: str, session: str, text: str) -> bytes:
    """The auth line and one user frame, newline-delimited JSON."""
    auth = {"msgV": 1, "type": "auth", "token": token}
    message = {
        "msgV": 1,
        "msgId": str(uuid.uuid4()),
        "type": "user",
        "toSessionId": session,
        "priority": "next",
        "message": {"role": "user", "content": text},
    }
    return "".join(json.dumps(part) + "\n" for part in (auth, message)).encode()


def send(env: Mapping[str, str], session: str, text: str) -> bool:
    """Hand ``text`` to the session's inbox; False when it has none or the send failed."""
    found = inbox(env)
    if found is None:
        return False
    path, token = found
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(TIMEOUT)
        try:
            conn.connect(path)
            conn.sendall(frames(token, session, text))
            conn.shutdown(socket.SHUT_WR)
            while conn.recv(4096):
                pass
        except OSError:
            return False
    return True
