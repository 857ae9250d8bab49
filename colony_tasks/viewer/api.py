"""JSON endpoints beside the pages, built from the same :mod:`.data` dicts.

``GET /api/tasks``, ``/api/tasks/{id}``, ``/api/tasks/{id}/items?after=ID``, ``/api/claims``,
``/api/conflicts``, ``/api/sessions``, ``/api/search?q=``, ``/api/tasks/{id}/plan``; ``POST
/api/tasks/{id}/messages`` and ``POST /api/tasks/{id}/plan`` (JSON body, token in the
``X-Colony-Token`` header). Errors come back as ``{"error": sentence}``.
"""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..base.models import plain
from ..base.text import fenced
from . import actions, data
from .context import checked_fields, viewer_of


def routes() -> list[Route]:
    return [
        Route("/api/tasks", tasks, methods=["GET"]),
        Route("/api/tasks/{task_id:int}", task, methods=["GET"]),
        Route("/api/tasks/{task_id:int}/items", items, methods=["GET"]),
        Route("/api/tasks/{task_id:int}/messages", post_message, methods=["POST"]),
        Route("/api/tasks/{task_id:int}/plan", plan, methods=["GET"]),
        Route("/api/tasks/{task_id:int}/plan", plan_action, methods=["POST"]),
        Route("/api/claims", claims, methods=["GET"]),
        Route("/api/conflicts", conflicts, methods=["GET"]),
        Route("/api/sessions", sessions, methods=["GET"]),
        Route("/api/search", search, methods=["GET"]),
    ]


def _json(value: Any, status: int = 200) -> JSONResponse:
    """``value`` as JSON, every string fenced as the pages fence what they print."""
    return JSONResponse(fenced(plain(value)), status_code=status)


def _item(view: dict[str, Any]) -> dict[str, Any]:
    """A decorated thread item as one flat JSON object."""
    resolution = view["resolution"] or {}
    return {
        **view["obs"].to_dict(),
        "agent": view["agent"],
        "resolved_by": resolution.get("resolved_by"),
        "resolved_at": resolution.get("resolved_at"),
    }


def _thread(state: dict[str, Any]) -> dict[str, Any]:
    return {
        "task": state["task"],
        "lane": state["lane"],
        "participants": list(state["people"].values()),
        "coordinator": state["coordinator_handle"],
        "turn_holder": state["turn_holder_handle"],
        "questions": state["questions"],
        "handoffs": state["handoffs"],
        "blockers": state["blockers"],
        "claims": state["claims"],
        "items": [_item(v) for v in state["items"]],
        "last_id": state["last_id"],
    }


def tasks(request: Request) -> Response:
    status = request.query_params.get("status", "open")
    found = data.overview(viewer_of(request).store, status=status)
    return _json({"tasks": found["tasks"], "chains": found["chains"]})


def task(request: Request) -> Response:
    state = data.thread_view(viewer_of(request).store, request.path_params["task_id"])
    return _json(_thread(state))


def items(request: Request) -> Response:
    after = request.query_params.get("after", "0")
    state = data.items_after(
        viewer_of(request).store,
        request.path_params["task_id"],
        int(after) if after.isdigit() else 0,
        activity=request.query_params.get("activity") == "1",
    )
    return _json(
        {
            "task_id": state["task"].id,
            "items": [_item(v) for v in state["items"]],
            "last_id": state["last_id"],
            "turn_holder": state["turn_holder_handle"],
        }
    )


def claims(request: Request) -> Response:
    return _json(data.claims_view(viewer_of(request).store))


def conflicts(request: Request) -> Response:
    return _json(data.conflicts_view(viewer_of(request).store))


def sessions(request: Request) -> Response:
    return _json(data.sessions_view(viewer_of(request).store))


def search(request: Request) -> Response:
    return _json(data.search_view(viewer_of(request).store, request.query_params.get("q", "")))


async def _as_human(request: Request, action: Any) -> Response:
    """Run a viewer action as the human on the task in the path, with the form's fields."""
    fields = await checked_fields(request)
    viewer = viewer_of(request)
    result = await run_in_threadpool(
        action, viewer.store, viewer.human_name, viewer.cwd, request.path_params["task_id"], fields
    )
    return _json(result, status=201)


async def post_message(request: Request) -> Response:
    """Post as the human (``text``, ``kind``, ``to``, ``reply_to``, ``urgent``)."""
    return await _as_human(request, actions.post_message)


def plan(request: Request) -> Response:
    board = data.plan_view(viewer_of(request).store, request.path_params["task_id"])
    return _json(board or {"columns": {}, "counts": {}, "ready": [], "stale": []})


async def plan_action(request: Request) -> Response:
    """Change the plan as the human: ``action`` add, reassign or drop (see the form)."""
    return await _as_human(request, actions.plan_action)
