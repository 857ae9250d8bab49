"""The viewer application: ``create_app(store, token)`` builds one Starlette app over one store.

Pages (server-rendered Jinja2) live in :mod:`.pages`, JSON endpoints in :mod:`.api`, the
human's actions in :mod:`.actions`, the guards in :mod:`.security`. All JavaScript and CSS are
files under ``static/``: nothing is fetched from another origin.
"""

from __future__ import annotations

import getpass
import os
from collections.abc import Iterable
from pathlib import Path

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

from ..base.errors import ColonyError, describe
from ..store import Store
from . import api, pages
from .actions import STEP_WORDING, status_for
from .context import Viewer, base_context, viewer_of
from .security import Guard, route_path
from .templating import respond

STATIC = Path(__file__).parent / "static"


def create_app(
    store: Store,
    token: str,
    *,
    human_name: str | None = None,
    cwd: str | None = None,
    allowed_hosts: Iterable[str] | None = None,
) -> Starlette:
    """The viewer over ``store``; POSTs need ``token``. ``allowed_hosts`` None skips the check."""
    if not token:
        raise ValueError("The viewer needs a non-empty token.")
    viewer = Viewer(
        store=store,
        token=token,
        human_name=(human_name or _login()).strip() or "human",
        cwd=cwd or os.getcwd(),
    )
    routes = [
        *pages.routes(),
        *api.routes(),
        Mount("/static", app=StaticFiles(directory=str(STATIC)), name="static"),
    ]
    app = Starlette(
        routes=routes,
        middleware=[Middleware(Guard, allowed_hosts=allowed_hosts, token=token)],
        exception_handlers={ColonyError: _core_error, HTTPException: _http_error},
    )
    app.state.viewer = viewer
    return app


def _login() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no USER variable and no passwd entry
        return "human"


def _wants_json(request: Request) -> bool:
    return route_path(request).startswith("/api/")


async def _core_error(request: Request, error: Exception) -> Response:
    """The core's sentence, as JSON for the API and as a page otherwise."""
    assert isinstance(error, ColonyError)
    status = status_for(error)
    if _wants_json(request):
        return JSONResponse({"error": describe(error, STEP_WORDING)}, status_code=status)
    context = base_context(request, viewer_of(request))
    context.update(title="Not available", message=describe(error, STEP_WORDING), status=status)
    return respond(viewer_of(request).env, "error.html", context, status)


async def _http_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, HTTPException)
    if _wants_json(request):
        return JSONResponse({"error": error.detail}, status_code=error.status_code)
    if request.method != "GET":
        return PlainTextResponse(error.detail, status_code=error.status_code)
    context = base_context(request, viewer_of(request))
    context.update(
        title=f"Error {error.status_code}", message=error.detail, status=error.status_code
    )
    return respond(viewer_of(request).env, "error.html", context, error.status_code)
