"""The viewer's guards: the per-run token, strict response headers, and a Host check.

- Every request, reads included (pages, partials, the JSON API, static files), proves it has
  the token printed in the URL ``viewer`` opens: its path starts with ``/<token>/`` (the
  viewer's every link and form keep that prefix), or it carries the ``X-Colony-Token`` header
  or ``?token=``. A page load with a valid ``?token=`` redirects to the same page under the
  prefix. No cookie: a browser sends a 127.0.0.1 cookie to every port of 127.0.0.1, so any
  local server the browser visited would receive what grants access; a path goes only to the
  server it names (and no Referer leaves: ``no-referrer``). Anything else is refused (403)
  before anything is read from the store: the database is 0600, and the viewer must not serve
  every prompt and command to any local user.
- Every state-changing request also carries the token itself (the ``token`` form field or
  the header; pages render it into their forms' hidden field): a cookie alone does not
  authorise a write.
- Every response carries a Content-Security-Policy without inline script or style.
- On loopback, requests must name a loopback Host, which stops DNS-rebinding pages from
  reading the dashboard.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterable
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

TOKEN_FIELD = "token"
REJECTED = (
    "This request needs the viewer's token. Open the URL that `colony-tasks viewer` printed"
    " (it ends in ?token=...) and try again."
)
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


def prefix(token: str) -> str:
    """The path every page of this run lives under."""
    return f"/{token}"


def base(request: Request) -> str:
    """The prefix this request came in under ('' for a request admitted by its header)."""
    return str(request.scope.get("root_path", ""))


def route_path(request: Request) -> str:
    """The request's path without the run's prefix (``/claims``)."""
    path, root = request.url.path, base(request)
    return (path[len(root) :] or "/") if root and path.startswith(root) else path


def valid(token: str, given: str | None) -> bool:
    return bool(given) and secrets.compare_digest(str(given).encode(), token.encode())


def page_token(request: Request, token: str) -> str | None:
    """The token for this page's forms, when the request proved it has it (the prefix, or
    the header)."""
    if base(request).endswith(prefix(token)) or valid(token, request.headers.get(TOKEN_HEADER)):
        return token
    return None


def host_of(header: str) -> str:
    """The host part of a Host header (``[::1]:8000`` → ``::1``)."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1 : header.find("]")] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


class Guard:
    """ASGI middleware: security headers on every response, the Host check, and the token on
    every request (``token`` None only in tests of the other two)."""

    def __init__(
        self, app: ASGIApp, allowed_hosts: Iterable[str] | None = None, token: str | None = None
    ) -> None:
        self.app = app
        self.allowed = None if allowed_hosts is None else {h.lower() for h in allowed_hosts}
        self.token = token

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
        if self.token is not None and not await self._admitted(scope, send):
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"], *HEADERS]
            await send(message)

        await self.app(scope, receive, send_with_headers)

    async def _admitted(self, scope: Scope, send: Send) -> bool:
        """True when the request may go on; otherwise the refusal (or the cookie-setting
        redirect for ``?token=`` on a page) has been sent."""
        assert self.token is not None
        path, run = scope["path"], prefix(self.token)
        if path.startswith(run + "/") and secrets.compare_digest(path[: len(run)], run):
            scope["root_path"] = scope.get("root_path", "") + run  # routes see the rest
            return True
        request = Request(scope)
        if path == run:
            await _redirect(send, run + "/")
            return False
        if valid(self.token, request.headers.get(TOKEN_HEADER)):
            return True
        if valid(self.token, request.query_params.get(TOKEN_FIELD)):
            if request.method != "GET" or path.startswith(("/api/", "/static/")):
                return True
            await _redirect_to_prefix(request, self.token, send)
            return False
        if request.url.path.startswith("/api/"):
            await _plain(send, 403, json.dumps({"error": REJECTED}), "application/json")
        else:
            await _plain(send, 403, REJECTED)
        return False


async def _redirect_to_prefix(request: Request, token: str, send: Send) -> None:
    """``?token=`` on a page: the same page under the run's prefix, without the query token."""
    rest = [(k, v) for k, v in request.query_params.multi_items() if k != TOKEN_FIELD]
    # The prefix starts the path: "//host" (a redirect to another site) cannot come out.
    target = (
        prefix(token) + "/" + request.url.path.lstrip("/") + (f"?{urlencode(rest)}" if rest else "")
    )
    await _redirect(send, target)


async def _redirect(send: Send, target: str) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": 303,
            "headers": [
                (b"location", target.encode("latin-1", "replace")),
                (b"content-length", b"0"),
                *HEADERS,
            ],
        }
    )
    await send({"type": "http.response.body", "body": b""})


async def _plain(
    send: Send, status: int, text: str, content_type: str = "text/plain; charset=utf-8"
) -> None:
    body = text.encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", content_type.encode()),
                (b"content-length", str(len(body)).encode()),
                *HEADERS,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
