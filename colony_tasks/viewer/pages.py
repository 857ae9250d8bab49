"""HTML pages: lanes and tasks, a thread, claims, conflicts, sessions, search; plus their live partials.

Read-only handlers are plain functions (Starlette runs them in its thread pool, so a busy
database never stalls the event loop). The form posts verify the token first, then call
:mod:`.actions` and redirect back to the thread (post/redirect/get), or re-render it with the
core's sentence when the core refused.
"""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from ..base.errors import ColonyError, describe
from ..base.kinds import POSTABLE_KINDS
from . import actions, data, security
from .actions import STEP_WORDING
from .context import Viewer, base_context, checked_fields, token_redirect, viewer_of
from .templating import render_html, respond


def routes() -> list[Route]:
    return [
        Route("/", lanes_page, methods=["GET"], name="lanes"),
        Route("/partials/lanes", partial("_lanes.html", data.overview), methods=["GET"]),
        Route("/tasks/{task_id:int}", thread_page, methods=["GET"], name="thread"),
        Route("/tasks/{task_id:int}/live", thread_live, methods=["GET"]),
        Route("/tasks/{task_id:int}/post", post_form, methods=["POST"]),
        Route("/tasks/{task_id:int}/pass", pass_form, methods=["POST"]),
        Route("/tasks/{task_id:int}/plan", plan_form, methods=["POST"]),
        Route("/tasks/{task_id:int}/withdraw", withdraw_form, methods=["POST"]),
        Route("/tasks/{task_id:int}/resolve", resolve_form, methods=["POST"]),
        Route("/claims", claims_page, methods=["GET"], name="claims"),
        Route("/partials/claims", partial("_claims.html", data.claims_view), methods=["GET"]),
        Route("/conflicts", conflicts_page, methods=["GET"], name="conflicts"),
        Route(
            "/partials/conflicts", partial("_conflicts.html", data.conflicts_view), methods=["GET"]
        ),
        Route("/sessions", sessions_page, methods=["GET"], name="sessions"),
        Route("/partials/sessions", partial("_sessions.html", data.sessions_view), methods=["GET"]),
        Route("/search", search_page, methods=["GET"], name="search"),
    ]


def _flag(request: Request, name: str) -> bool:
    return request.query_params.get(name, "") in ("1", "on", "true", "yes")


def _page(request: Request, name: str, build: Any, **extra: Any) -> Response:
    viewer = viewer_of(request)
    redirect = token_redirect(request, viewer)
    if redirect is not None:
        return redirect
    context = base_context(request, viewer)
    context.update(build(viewer.store), **extra)
    return respond(viewer.env, name, context)


def partial(name: str, build: Any):
    """A handler that renders only a page's live region (polled by ``viewer.js``)."""

    def handler(request: Request) -> Response:
        viewer = viewer_of(request)
        context = base_context(request, viewer)
        context.update(build(viewer.store))
        return respond(viewer.env, name, context)

    return handler


def lanes_page(request: Request) -> Response:
    return _page(request, "lanes.html", data.overview, title="Lanes and tasks")


def claims_page(request: Request) -> Response:
    return _page(request, "claims.html", data.claims_view, title="Claims")


def conflicts_page(request: Request) -> Response:
    return _page(request, "conflicts.html", data.conflicts_view, title="Conflicts")


def sessions_page(request: Request) -> Response:
    return _page(request, "sessions.html", data.sessions_view, title="Sessions")


def search_page(request: Request) -> Response:
    query = request.query_params.get("q", "")
    return _page(
        request,
        "search.html",
        lambda store: data.search_view(store, query),
        title="Search",
        search_query=query,
    )


# -- the thread -------------------------------------------------------------------------------


def thread_context(
    request: Request, viewer: Viewer, task_id: int, *, activity: bool, **extra: Any
) -> dict[str, Any]:
    """Everything ``thread.html`` renders, with the compose form's draft and messages."""
    context = base_context(request, viewer)
    context.update(data.thread_view(viewer.store, task_id, activity=activity))
    task = context["task"]
    query = "?activity=1" if activity else ""
    draft = {
        "text": "",
        "kind": "note",
        "to": "",
        "reply_to": "",
        "pass_to": "",
        "prompt": "",
        "title": "",
        "files": "",
        "after": "",
    }
    reply = request.query_params.get("reply", "")
    if reply.isdigit():
        parent = viewer.store.get_observation(int(reply))
        if parent is not None and parent.task_id == task.id:
            draft.update(reply_to=reply, kind="answer" if parent.kind == "question" else "note")
    draft.update({k: str(v) for k, v in (extra.pop("draft", None) or {}).items() if k in draft})
    context.update(
        title=task.title,
        live_src=f"{security.base(request)}/tasks/{task.id}/live{query}",
        activity_query=query,
        draft=draft,
        error=None,
        notice=None,
        failed_form=None,
        kinds=POSTABLE_KINDS,
    )
    context.update(extra)
    return context


def thread_page(request: Request) -> Response:
    viewer = viewer_of(request)
    redirect = token_redirect(request, viewer)
    if redirect is not None:
        return redirect
    task_id = request.path_params["task_id"]
    context = thread_context(request, viewer, task_id, activity=_flag(request, "activity"))
    return respond(viewer.env, "thread.html", context)


def thread_live(request: Request) -> Response:
    """New items after ``?after=ID`` as rendered HTML, plus the refreshed header and sidebar."""
    viewer = viewer_of(request)
    after = request.query_params.get("after", "0")
    context = base_context(request, viewer)
    state = data.items_after(
        viewer.store,
        request.path_params["task_id"],
        int(after) if after.isdigit() else 0,
        activity=_flag(request, "activity"),
    )
    context.update(state)
    return JSONResponse(
        {
            "last_id": state["last_id"],
            "items_html": render_html(viewer.env, "_items.html", context) if state["items"] else "",
            "head_html": render_html(viewer.env, "_thread_head.html", context),
            "side_html": render_html(viewer.env, "_thread_side.html", context),
            "hint_html": render_html(viewer.env, "_turn_hint.html", context),
        }
    )


async def post_form(request: Request) -> Response:
    return await _act(request, actions.post_message, "post")


async def pass_form(request: Request) -> Response:
    return await _act(request, actions.pass_turn, "pass")


async def plan_form(request: Request) -> Response:
    return await _act(request, actions.plan_action, "plan")


async def withdraw_form(request: Request) -> Response:
    return await _act(request, actions.withdraw_item, "withdraw")


async def resolve_form(request: Request) -> Response:
    return await _act(request, actions.resolve_blocker, "resolve")


async def _act(request: Request, action: Any, form: str) -> Response:
    fields = await checked_fields(request)  # 403 before anything else happens
    viewer = viewer_of(request)
    task_id = request.path_params["task_id"]
    activity = str(fields.pop("activity", "")) == "1"
    try:
        result = await run_in_threadpool(
            action, viewer.store, viewer.human_name, viewer.cwd, task_id, fields
        )
    except ColonyError as error:
        draft = fields
        if form == "pass":
            draft = {"pass_to": fields.get("to", ""), "prompt": fields.get("prompt", "")}
        elif form == "plan":
            draft = {k: fields.get(k, "") for k in ("title", "files", "after")}
        return await run_in_threadpool(
            _rerender,
            request,
            task_id,
            activity=activity,
            status=actions.status_for(error),
            draft=draft,
            error=describe(error, STEP_WORDING),
            failed_form=form,
        )
    if result.get("notice"):
        return await run_in_threadpool(
            _rerender, request, task_id, activity=activity, notice=result["notice"]
        )
    query = "?activity=1" if activity else ""
    return RedirectResponse(
        f"{security.base(request)}/tasks/{task_id}{query}#m{int(result['id'])}", status_code=303
    )


def _rerender(
    request: Request, task_id: int, *, activity: bool, status: int = 200, **extra: Any
) -> Response:
    """The thread page again, with the core's sentence (or a notice) and the kept draft."""
    viewer = viewer_of(request)
    context = thread_context(request, viewer, task_id, activity=activity, **extra)
    return respond(viewer.env, "thread.html", context, status)
