"""Scripted model servers: the real agent CLIs talk to these instead of to a model.

Each server answers the agent's model requests with the next step of a script ("call the tool
Edit with these arguments", "say done"), streamed in the wire format the CLI expects:

- :class:`MessagesServer` speaks the Anthropic Messages API with server-sent events, for Claude
  Code (``ANTHROPIC_BASE_URL``).
- :class:`ResponsesServer` speaks the OpenAI Responses API with server-sent events, for Codex (a
  custom ``model_provider`` with ``wire_api = "responses"``).
- :class:`ChatCompletionsServer` speaks OpenAI chat completions (streamed, or one JSON answer
  when the request does not ask for a stream), for Copilot CLI and OpenCode.

Every request body is recorded: it is exactly the context the model would have seen, so a test
can assert that a briefing, a delta or a warning reached the model. A step can hold its answer
until the test opens a gate, which keeps an agent's session (and its claims) alive while another
agent works.

Requests that are not the agent's main loop (Claude Code's side requests, which carry no tools)
are recorded and answered with a short text, without consuming a script step; a main-loop
request past the end of the script is answered "Done.", which ends the agent's turn.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

WAIT_SECONDS = 120


@dataclass
class Step:
    """One model turn: either call a tool (``tool`` and ``args``) or answer with ``text``.

    ``args`` may be a function, called when the step is answered (for values that only exist
    by then, such as the id of a question another agent asked meanwhile).
    ``gate``: the answer is held until the gate is set (bounded by ``WAIT_SECONDS``).
    ``reached`` is set when the agent's request for this step has arrived.
    ``status``: answer with this HTTP error instead (429: rate limited, 529: overloaded).
    ``tokens``: the context size the answer reports (Codex compacts past its configured limit;
    Qwen Code compresses only a history its model said was large).
    """

    tool: str | None = None
    args: dict[str, Any] | Callable[[], dict[str, Any]] = field(default_factory=dict)
    text: str = ""
    kind: str = "function"
    namespace: str | None = None
    gate: threading.Event | None = None
    reached: threading.Event = field(default_factory=threading.Event)
    request: dict[str, Any] | None = None
    status: int | None = None
    tokens: int = 1

    def wait_reached(self, what: str) -> dict[str, Any]:
        """The agent's request for this step, once it has arrived (bounded wait)."""
        if not self.reached.wait(WAIT_SECONDS):
            raise AssertionError(f"timed out waiting for {what}")
        assert self.request is not None
        return self.request


def call(tool: str, **args: Any) -> Step:
    """A step that calls ``tool`` with ``args``."""
    return Step(tool=tool, args=args)


def arguments(step: Step) -> dict[str, Any]:
    return step.args() if callable(step.args) else step.args


def patch(text: str) -> Step:
    """A Codex ``apply_patch`` call (a freeform tool: the patch text is the whole input)."""
    return Step(tool="apply_patch", text=text, kind="custom")


def search_tools(query: str) -> Step:
    """A Codex ``tool_search`` call, which loads the matching deferred (MCP) tools."""
    return Step(tool="tool_search", args={"query": query, "limit": 8}, kind="tool_search")


def say(text: str, gate: threading.Event | None = None) -> Step:
    """A step that answers with ``text`` (the end of the agent's turn)."""
    return Step(text=text, gate=gate)


def fail(status: int) -> Step:
    """A step that answers with an API error (429 rate limit, 529 overloaded)."""
    return Step(status=status)


API_ERRORS = {429: "rate_limit_error", 529: "overloaded_error"}


def texts(body: Any) -> str:
    """Every string in a request body, one per line: what the model would have read."""
    if isinstance(body, str):
        return body
    if isinstance(body, dict):
        return "\n".join(texts(v) for v in body.values())
    if isinstance(body, list):
        return "\n".join(texts(v) for v in body)
    return ""


def context(body: dict[str, Any]) -> str:
    """The text of a request without its tool schemas: prompts, messages, tool results."""
    return texts({key: value for key, value in body.items() if key != "tools"})


@dataclass
class Exchange:
    """One recorded HTTP request, and the script step that answered it (None for side requests)."""

    path: str
    body: dict[str, Any]
    step: Step | None


Route = tuple[Callable[[dict[str, Any]], bool], list[Step]]


class ScriptedServer:
    """A local HTTP server that answers main-loop requests with the steps of ``script``.

    ``routes``: (predicate, steps) pairs for agents that run beside the main one (a spawned
    subagent): a main-loop request the predicate accepts takes its answer from those steps
    instead, so two agents' interleaved requests each follow their own script.
    """

    def __init__(self, script: list[Step], routes: tuple[Route, ...] = ()):
        self.script = list(script)
        self.routes = [(accepts, list(steps)) for accepts, steps in routes]
        self.exchanges: list[Exchange] = []
        self._next = 0
        self._lock = threading.Condition()
        self._ids = itertools.count(1)
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._http.daemon_threads = True
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True)

    # --- lifecycle ------------------------------------------------------------------------

    @property
    def port(self) -> int:
        return self._http.server_address[1]

    def __enter__(self) -> ScriptedServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        for step in self.script:
            if step.gate is not None:
                step.gate.set()
        self._http.shutdown()
        self._http.server_close()

    # --- what the agent sent -----------------------------------------------------------------

    def main_requests(self) -> list[dict[str, Any]]:
        """The bodies of the requests that consumed a script step, in order."""
        with self._lock:
            return [e.body for e in self.exchanges if e.step is not None]

    # --- serving -----------------------------------------------------------------------------

    def new_id(self, prefix: str) -> str:
        return f"{prefix}_{next(self._ids):04d}"

    def is_main(self, path: str, body: dict[str, Any]) -> bool:
        raise NotImplementedError

    def stream(self, step: Step, body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        """The (event, data) pairs that answer ``step``."""
        raise NotImplementedError

    def side_reply(self, path: str, body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        return self.stream(say("ok"), body)

    def frame(self, events: list[tuple[str, dict[str, Any]]]) -> bytes:
        """The server-sent events as sent (``event:`` lines for named events)."""
        return "".join(
            (f"event: {name}\n" if name else "") + f"data: {json.dumps(data)}\n\n"
            for name, data in events
        ).encode()

    def encode(
        self, events: list[tuple[str, dict[str, Any]]], body: dict[str, Any]
    ) -> tuple[str, bytes]:
        """The answer's content type and bytes: server-sent events (:meth:`frame`)."""
        return "text/event-stream", self.frame(events)

    def models(self) -> dict[str, Any]:
        """The answer to a GET (a model list)."""
        return {"data": [], "models": []}

    def _take(self, path: str, body: dict[str, Any]) -> Step | None:
        with self._lock:
            step = None
            routed = [steps for accepts, steps in self.routes if accepts(body)]
            if self.is_main(path, body) and routed:
                step = routed[0].pop(0) if routed[0] else say("Done.")
                step.request = body
            elif self.is_main(path, body):
                if self._next < len(self.script):
                    step = self.script[self._next]
                    self._next += 1
                else:
                    step = say("Done.")
                step.request = body
            self.exchanges.append(Exchange(path, body, step))
            self._lock.notify_all()
        if step is not None:
            step.reached.set()
        return step

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                server._take(self.path, {})
                self._json(200, server.models())

            def do_HEAD(self) -> None:
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"_raw": raw.decode("utf-8", "replace")}
                step = server._take(self.path, body)
                if step is None:
                    events = server.side_reply(self.path, body)
                else:
                    if step.gate is not None and not step.gate.wait(WAIT_SECONDS):
                        self._json(500, {"error": "the test never opened this step's gate"})
                        return
                    if step.status is not None:
                        kind = API_ERRORS.get(step.status, "api_error")
                        error = {"type": kind, "message": f"scripted {step.status}"}
                        self._json(step.status, {"type": "error", "error": error})
                        return
                    events = server.stream(step, body)
                kind, payload = server.encode(events, body)
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def _json(self, status: int, data: dict[str, Any]) -> None:
                payload = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        return Handler


class MessagesServer(ScriptedServer):
    """The Anthropic Messages API, streamed (for Claude Code)."""

    def is_main(self, path: str, body: dict[str, Any]) -> bool:
        return (
            path.startswith("/v1/messages")
            and "count_tokens" not in path
            and bool(body.get("tools"))
        )

    def stream(self, step: Step, body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        message = {
            "id": self.new_id("msg"),
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "scripted"),
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
        events: list[tuple[str, dict[str, Any]]] = [
            ("message_start", {"type": "message_start", "message": message})
        ]
        if step.tool is not None:
            block = {"type": "tool_use", "id": self.new_id("toolu"), "name": step.tool, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(arguments(step))}
            stop_reason = "tool_use"
        else:
            block = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": step.text}
            stop_reason = "end_turn"
        events += [
            (
                "content_block_start",
                {"type": "content_block_start", "index": 0, "content_block": block},
            ),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                    "usage": {"output_tokens": 1},
                },
            ),
            ("message_stop", {"type": "message_stop"}),
        ]
        return events


class ResponsesServer(ScriptedServer):
    """The OpenAI Responses API, streamed (for Codex)."""

    def is_main(self, path: str, body: dict[str, Any]) -> bool:
        return path.endswith("/responses")

    def stream(self, step: Step, body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        response_id = self.new_id("resp")
        if step.kind == "tool_search":
            item = {
                "type": "tool_search_call",
                "id": self.new_id("ts"),
                "call_id": self.new_id("call"),
                "execution": "client",
                "status": "completed",
                "arguments": arguments(step),
            }
        elif step.kind == "custom":
            item = {
                "type": "custom_tool_call",
                "id": self.new_id("ctc"),
                "call_id": self.new_id("call"),
                "name": step.tool,
                "input": step.text,
                "status": "completed",
            }
        elif step.tool is not None:
            item = {
                "type": "function_call",
                "id": self.new_id("fc"),
                "call_id": self.new_id("call"),
                "name": step.tool,
                "arguments": json.dumps(arguments(step)),
                "status": "completed",
            }
            if step.namespace:
                item["namespace"] = step.namespace
        else:
            item = {
                "type": "message",
                "id": self.new_id("msg"),
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": step.text, "annotations": []}],
            }
        usage = {
            "input_tokens": step.tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 1,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": step.tokens + 1,
        }
        created = {"id": response_id, "object": "response", "status": "in_progress", "output": []}
        return [
            ("response.created", {"type": "response.created", "response": created}),
            (
                "response.output_item.added",
                {"type": "response.output_item.added", "output_index": 0, "item": item},
            ),
            (
                "response.output_item.done",
                {"type": "response.output_item.done", "output_index": 0, "item": item},
            ),
            (
                "response.completed",
                {
                    "type": "response.completed",
                    "response": {
                        **created,
                        "status": "completed",
                        "output": [item],
                        "usage": usage,
                    },
                },
            ),
        ]


class ChatCompletionsServer(ScriptedServer):
    """OpenAI chat completions (for Copilot CLI's and OpenCode's OpenAI-compatible providers).
    A request with tools is the main loop; one without (OpenCode's title) is a side request."""

    def is_main(self, path: str, body: dict[str, Any]) -> bool:
        return path.rstrip("/").endswith("/chat/completions") and bool(body.get("tools"))

    def models(self) -> dict[str, Any]:
        return {"object": "list", "data": [{"id": "scripted", "object": "model"}], "models": []}

    def stream(self, step: Step, body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        if step.tool is not None:
            call = {
                "index": 0,
                "id": self.new_id("call"),
                "type": "function",
                "function": {"name": step.tool, "arguments": json.dumps(arguments(step))},
            }
            message: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [call]}
            finish = "tool_calls"
        else:
            message = {"role": "assistant", "content": step.text}
            finish = "stop"
        # The usage reports at least 10 prompt tokens, more when the step says (Qwen Code
        # compresses only a history its model said was large).
        return [("", message), ("", {"finish_reason": finish, "tokens": max(step.tokens, 10)})]

    def encode(
        self, events: list[tuple[str, dict[str, Any]]], body: dict[str, Any]
    ) -> tuple[str, bytes]:
        message, finish = events[0][1], events[1][1]["finish_reason"]
        base = {"id": self.new_id("chatcmpl"), "created": 0, "model": body.get("model", "scripted")}
        tokens = events[1][1]["tokens"]
        usage = {"prompt_tokens": tokens, "completion_tokens": 5, "total_tokens": tokens + 5}
        if not body.get("stream"):
            choice = {"index": 0, "message": message, "finish_reason": finish}
            answer = {**base, "object": "chat.completion", "choices": [choice], "usage": usage}
            return "application/json", json.dumps(answer).encode()
        base["object"] = "chat.completion.chunk"
        delta = {k: v for k, v in message.items() if k != "role" and v is not None}
        chunks = [
            {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]},
            {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
            {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
            {**base, "choices": [], "usage": usage},
        ]
        lines = [f"data: {json.dumps(chunk)}\n\n" for chunk in chunks] + ["data: [DONE]\n\n"]
        return "text/event-stream", "".join(lines).encode()
