"""The viewer's guards: the per-run token, strict response headers, and a Host check.

- Every state-changing request carries the token printed in the URL ``viewer`` opens: as the
  ``token`` form field or the ``X-Colony-Token`` header. The first page load with ``?token=``
  stores it in an HttpOnly, SameSite=Strict cookie and redirects to the same page without it;
  pages then render it into their forms' hidden field. A request without it is refused (403)
  before anything is read from or written to the store.
- Every response carries a Content-Security-Policy without inline script or style.
- On loopback, requests must name a loopback Host, which stops DNS-rebinding pages from
  reading the dashboard.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable

from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

TOKEN_FIELD = "token"
TOKEN_HEADER = "x-colony-token"
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
HEADERS = (
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
)


def new_token() -> str:
    return secrets.token_urlsafe(32)


def cookie_name(request: Request) -> str:
    """One cookie per port: cookies ignore ports, and two viewers may run side by side."""
    return f"colony-viewer-{request.url.port or 'default'}"


def valid(token: str, given: str | None) -> bool:
    return bool(given) and secrets.compare_digest(str(given).encode(), token.encode())


def page_token(request: Request, token: str) -> str | None:
    """The token for this page's forms, when the browser proved it has it (cookie)."""
    given = request.cookies.get(cookie_name(request))
    return token if valid(token, given) else None


def host_of(header: str) -> str:
    """The host part of a Host header (``[::1]:8000`` → ``::1``)."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1 : header.find("]")] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


class Guard:
    """ASGI middleware: security headers on every response, and the Host check."""

    def __init__(self, app: ASGIApp, allowed_hosts: Iterable[str] | None = None) -> None:
        self.app = app
        self.allowed = None if allowed_hosts is None else {h.lower() for h in allowed_hosts}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.allowed is not None:
            headers = dict(scope.get("headers") or [])
            host = host_of(headers.get(b"host", b"").decode("latin-1"))
            if host not in self.allowed:
                await _plain(send, 421, "Unknown host: open the viewer on a loopback address.")
                return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"], *HEADERS]
            await send(message)

        await self.app(scope, receive, send_with_headers)


async def _plain(send: Send, status: int, text: str) -> None:
    body = text.encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
                *HEADERS,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
