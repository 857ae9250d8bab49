"""The thin layer between the SDK and the tool functions.

- :func:`tool` marks a plain (sync) function as a tool; its docstring is the description.
- :class:`ColonyTool` runs it: one call at a time against the one store (the SDK runs sync
  tools on worker threads), core errors become tool errors whose text is the core's sentence,
  argument validation errors become one compact sentence, and results are sent as compact
  JSON with empty fields left out.
- :class:`VerbatimText` takes every text argument as sent: the SDK pre-parses JSON-looking
  strings for any parameter not annotated exactly ``str``, so for ``str | None`` a rationale
  like ``{"a": 1}`` became a dict (and was rejected) and ``"null"`` became None (dropped).
- :func:`tidy_schema` keeps ``tools/list`` small (no generated titles, optional fields without
  the ``anyOf``/``null`` wrapping).

The SDK's public API builds the tools (``Tool.from_function``, ``MCPServer.add_tool``). Two
things have no public extension point in it, and this module is the one place that relies on
its internals for them: JSON pre-parsing of text arguments (``FuncMetadata.pre_parse_json``,
overridden by :class:`VerbatimText`) and the wording of argument validation errors, which the
SDK raises inside ``Tool.run`` before the tool function is called (:class:`ColonyTool` rewords
them). A new SDK release that changes either shows up in tests/mcp (the stdio and in-memory
suites assert both).
"""

from __future__ import annotations

import json
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Union, get_args, get_origin

import anyio
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field, ValidationError

from colony_tasks.base.errors import ColonyError, StoreUnavailable, describe
from colony_tasks.base.redact import redact
from colony_tasks.base.text import fence, fenced
from colony_tasks.store import Store
from colony_tasks.store.faults import storage_failure

# How the MCP server words the core's next steps (colony_tasks.base.errors.STEPS): as tool calls.
STEP_WORDING = {
    "list_tasks": "List tasks with task_list().",
    "list_sessions": "See who is on your task with task_list().",
    "show_task": "See who is on task {task_id} with task_list().",
    "withdraw": "To take it back: withdraw(item_id={item_id}).",
    "chain_add": 'Give it the turn with chain_pass(chain_id={chain_id}, to="{who}", prompt=...),'
    " which adds it.",
    "chain_create": "Create one with chain_create(name=...).",
    "embed": "Vectors are computed in the background; search again shortly.",
    "plan_show": "See the plan's item ids with task_timeline().",
    "take_next": "take_work() gives you the next ready item.",
}

# -- shared parameter types ---------------------------------------------------------------------

# session_id is explained once, in the server instructions: repeating a description on every
# tool would cost ~1 KB of tools/list in every session's context.
SessionId = Annotated[str | None, Field(min_length=1)]
TaskId = Annotated[int | None, Field(ge=1)]  # default: the lane task (see instructions)
To = Annotated[
    str | None, Field(min_length=1, description="Handle, session id, claude/codex/human or any.")
]


# -- server state -------------------------------------------------------------------------------


@dataclass
class AppState:
    """What the lifespan opens: the store, and the lock that serializes tool calls on it."""

    store: Store
    serial: anyio.Lock
    search: Any = None  # the core's Searcher, built on the first search call


def state(ctx: Context) -> AppState:
    app = ctx.request_context.lifespan_context
    assert isinstance(app, AppState)
    return app


def store(ctx: Context) -> Store:
    return state(ctx).store


# -- registration -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Spec:
    description: str
    read_only: bool


#: The functions marked with :func:`tool`, and how.
SPECS: dict[Callable, Spec] = {}


def tool(*, read_only: bool = False) -> Callable[[Callable], Callable]:
    """Mark a function as a tool; :func:`build` turns it into a :class:`ColonyTool`.

    The docstring, whitespace folded into one paragraph, is the tool's description.
    """

    def mark(fn: Callable) -> Callable:
        description = " ".join((fn.__doc__ or "").split())
        if not description:
            raise TypeError(f"Tool {fn.__name__} needs a docstring: it is the description.")
        SPECS[fn] = Spec(description, read_only)
        return fn

    return mark


def build(fn: Callable) -> ColonyTool:
    """A :class:`ColonyTool` for a function marked with :func:`tool`, its schemas tidied."""
    spec = SPECS[fn]
    made = ColonyTool.from_function(
        fn,
        description=spec.description,
        annotations=ToolAnnotations(read_only_hint=True) if spec.read_only else None,
        structured_output=True,
    )
    made.fn_metadata = VerbatimText.model_construct(**dict(made.fn_metadata))
    made.parameters = tidy_schema(made.parameters)
    if not spec.read_only:
        # A write tool's result is a small JSON object its description names (an id and who
        # it reached); publishing its schema too would cost ~5 KB of tools/list in every
        # session's context. Results are still sent as structured content.
        made.fn_metadata.output_schema = None
    elif made.fn_metadata.output_schema is not None:
        made.fn_metadata.output_schema = tidy_schema(made.fn_metadata.output_schema)
    assert isinstance(made, ColonyTool)  # from_function is typed as building a Tool
    return made


def text_only(annotation: Any) -> bool:
    """``str`` or ``str | None``: a parameter whose value is text, never parsed JSON."""
    if annotation is str:
        return True
    if get_origin(annotation) in (Union, types.UnionType):
        return set(get_args(annotation)) <= {str, type(None)} and str in get_args(annotation)
    return False


class VerbatimText(FuncMetadata):
    """The SDK's argument handling, except that text parameters keep the string sent."""

    def pre_parse_json(self, data: dict[str, Any]) -> dict[str, Any]:
        parsed = super().pre_parse_json(data)
        for name, field in self.arg_model.model_fields.items():
            for key in (name, field.alias):
                if key in data and isinstance(data[key], str) and text_only(field.annotation):
                    parsed[key] = data[key]
        return parsed


# -- running ------------------------------------------------------------------------------------


class ColonyTool(Tool):
    """A tool that runs serialized on the store and speaks the core's sentences."""

    async def run(  # type: ignore[override]  # the SDK's Context is generic; ours is concrete
        self, arguments: dict[str, Any], context: Context, convert_result: bool = False
    ):
        try:
            async with state(context).serial:
                result = await super().run(arguments, context, convert_result=False)
        except UnexpectedToolError as error:
            if isinstance(error.__cause__, ColonyError):
                raise ToolError(fence(describe(error.__cause__, STEP_WORDING))) from error.__cause__
            if isinstance(error.__cause__, StoreUnavailable):  # passing: away, or its lock held
                raise ToolError(str(error.__cause__)) from error.__cause__
            cause = storage_failure(error.__cause__) if error.__cause__ else None
            if cause is not None:  # the store cannot take a write: say so, not a bare failure
                raise ToolError(
                    f"{self.name} failed: {redact(cause)}. Nothing of this call was saved;"
                    " try again once the store can be written (`colony-tasks doctor` checks it)."
                ) from error.__cause__
            if isinstance(error.__cause__, OverflowError):  # an id beyond SQLite's 64-bit range
                raise ToolError(
                    f"Invalid arguments for {self.name}: ids are positive integers below 2**63."
                ) from error.__cause__
            raise
        except ToolError as error:
            if isinstance(error.__cause__, ValidationError):
                raise ToolError(invalid_arguments(self.name, error.__cause__)) from error.__cause__
            raise
        return self.fn_metadata.convert_result(compact(result)) if convert_result else result


def invalid_arguments(name: str, error: ValidationError) -> str:
    """``Invalid arguments for task_post: content: String should have at least 1 character.``"""
    problems = []
    for detail in error.errors(include_url=False, include_input=False):
        where = ".".join(str(part) for part in detail["loc"])
        problems.append(f"{where}: {detail['msg']}" if where else detail["msg"])
    return f"Invalid arguments for {name}: {'; '.join(problems)}."


def compact(result: Any) -> Any:
    """A model result as compact JSON text plus structured content, None fields left out, and
    every string in it fenced (:func:`colony_tasks.base.text.fence`): other parties' words
    reach the model without controls, bidi or invisible characters."""
    if not isinstance(result, BaseModel):
        return result
    data = fenced(result.model_dump(mode="json", exclude_none=True))
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


# -- schemas ------------------------------------------------------------------------------------


def tidy_schema(schema: Any) -> Any:
    """Drop generated titles and ``default: null``; ``anyOf [X, null]`` becomes ``X``.

    Only the published schema changes: arguments are still validated by the SDK's pydantic
    model, and results leave None fields out, so both stay true to what is sent.
    """
    if isinstance(schema, list):
        return [tidy_schema(part) for part in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key == "default" and value is None:
            continue
        if key == "properties":
            out[key] = {name: tidy_schema(prop) for name, prop in value.items()}
        else:
            out[key] = tidy_schema(value)
    options = out.get("anyOf")
    if isinstance(options, list) and {"type": "null"} in options:
        rest = [o for o in options if o != {"type": "null"}]
        if len(rest) == 1:
            del out["anyOf"]
            out = {**rest[0], **out}
    return out
