"""Per-app state and per-request helpers shared by the page and API handlers."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode

import jinja2
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse

from ..store import Store
from . import security
from .templating import environment

MAX_BODY = 256 * 1024
FORM = "application/x-www-form-urlencoded"
REJECTED = security.REJECTED


@dataclass
class Viewer:
    """What every handler needs: the store, the run's token, who posts, the templates."""

    store: Store
    token: str
    human_name: str
    cwd: str
    env: jinja2.Environment = field(default_factory=environment)

    @property
    def human_id(self) -> str:
        """The session id :func:`colony_tasks.domain.sessions.human_session` gives this name."""
        return f"human:{self.human_name}"


def viewer_of(request: Request) -> Viewer:
    return request.app.state.viewer


def base_context(request: Request, viewer: Viewer) -> dict[str, Any]:
    """What the layout needs on every page: who posts, and the token for the forms."""
    me = viewer.store.get_session(viewer.human_id)
    return {
        "request_path": security.route_path(request),
        "base": security.base(request),
        "form_token": security.page_token(request, viewer.token),
        "me_id": viewer.human_id,
        "me_handle": me.handle if me else viewer.human_name,
        "search_query": "",
    }


def token_redirect(request: Request, viewer: Viewer) -> RedirectResponse | None:
    """``?token=`` on a page already under the run's prefix: drop it from the address bar."""
    if request.query_params.get(security.TOKEN_FIELD) is None:
        return None
    rest = [(k, v) for k, v in request.query_params.multi_items() if k != security.TOKEN_FIELD]
    # The prefix (or one leading slash) starts the path: never "//host", another site.
    path = security.base(request) + "/" + security.route_path(request).lstrip("/")
    return RedirectResponse(path + (f"?{urlencode(rest)}" if rest else ""), status_code=303)


async def checked_fields(request: Request) -> dict[str, Any]:
    """The fields of a state-changing request, once its token is verified (else 403).

    Form posts carry the token as the ``token`` field; JSON posts in the ``X-Colony-Token``
    header. Nothing reaches the store before this check passes.
    """
    viewer = viewer_of(request)
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    body = await _bounded_body(request)
    fields: dict[str, Any] = {}
    if kind == "application/json":
        try:
            loaded = json.loads(body or b"{}")
        except ValueError:
            loaded = None
        fields = loaded if isinstance(loaded, dict) else {}
    elif kind == FORM:
        # Parsed here rather than by request.form(): no python-multipart dependency needed.
        fields = dict(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))
    given = request.headers.get(security.TOKEN_HEADER) or fields.pop(security.TOKEN_FIELD, None)
    if not security.valid(viewer.token, given if isinstance(given, str) else None):
        raise HTTPException(403, REJECTED)
    if kind not in ("application/json", FORM):
        raise HTTPException(415, "Send a form or JSON.")
    return fields


async def _bounded_body(request: Request) -> bytes:
    """The request body, refused with 413 past :data:`MAX_BODY` bytes."""
    if int(request.headers.get("content-length") or 0) > MAX_BODY:
        raise HTTPException(413, "The request is too large.")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            raise HTTPException(413, "The request is too large.")
        chunks.append(chunk)
    return b"".join(chunks)
