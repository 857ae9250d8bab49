"""Scripted model servers for Gemini CLI and Qwen Code (see :mod:`.model_server`).

- :class:`GeminiServer` speaks the Gemini API: ``models/<m>:streamGenerateContent?alt=sse``
  (``data:`` lines of ``GenerateContentResponse``). A request that asks for JSON output (the
  model router's and other side requests) is answered with JSON of the asked schema, without
  consuming a step; tests pass ``-m`` so the router never asks.
- :class:`ChatServer` speaks OpenAI chat completions, streamed (Qwen Code's ``openai``
  provider): a request with tools is the main loop.
"""

from __future__ import annotations

import json
from typing import Any

from .model_server import ScriptedServer, Step, arguments

Events = list[tuple[str, dict[str, Any]]]


def _wants_json(body: dict[str, Any]) -> bool:
    config = body.get("generationConfig") or {}
    return config.get("responseMimeType") == "application/json" or "responseJsonSchema" in config


def _json_answer(body: dict[str, Any]) -> str:
    config = body.get("generationConfig") or {}
    schema = config.get("responseJsonSchema") or config.get("responseSchema") or {}
    blanks = {"number": 1, "integer": 1, "boolean": False, "array": [], "object": {}}
    answer = {}
    for key, spec in (schema.get("properties") or {}).items():
        kind = str((spec or {}).get("type", "string")).lower()
        answer[key] = blanks.get(kind, "scripted")
    return json.dumps(answer)


class GeminiServer(ScriptedServer):
    """The Gemini API, streamed (for Gemini CLI's ``GOOGLE_GEMINI_BASE_URL``)."""

    def is_main(self, path: str, body: dict[str, Any]) -> bool:
        return (
            ":streamGenerateContent" in path and bool(body.get("tools")) and not _wants_json(body)
        )

    def _response(self, parts: list[dict[str, Any]]) -> Events:
        candidate = {"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}
        usage = {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2}
        return [("", {"candidates": [candidate], "usageMetadata": usage})]

    def stream(self, step: Step, body: dict[str, Any]) -> Events:
        if step.tool is not None:
            return self._response([{"functionCall": {"name": step.tool, "args": arguments(step)}}])
        return self._response([{"text": step.text}])

    def side_reply(self, path: str, body: dict[str, Any]) -> Events:
        text = _json_answer(body) if _wants_json(body) else "ok"
        return self._response([{"text": text}])


class ChatServer(ScriptedServer):
    """OpenAI chat completions, streamed (for Qwen Code's ``openai`` provider)."""

    def is_main(self, path: str, body: dict[str, Any]) -> bool:
        return path.rstrip("/").endswith("/chat/completions") and bool(body.get("tools"))

    def stream(self, step: Step, body: dict[str, Any]) -> Events:
        base = {"id": self.new_id("chatcmpl"), "object": "chat.completion.chunk", "created": 1}
        base["model"] = body.get("model", "scripted")
        if step.tool is not None:
            call = {
                "index": 0,
                "id": self.new_id("call"),
                "type": "function",
                "function": {"name": step.tool, "arguments": json.dumps(arguments(step))},
            }
            delta: dict[str, Any] = {"tool_calls": [call]}
            finish = "tool_calls"
        else:
            delta, finish = {"content": step.text}, "stop"
        usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
        return [
            (
                "",
                {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]},
            ),
            ("", {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}),
            ("", {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}),
            ("", {**base, "choices": [], "usage": usage}),
        ]

    def frame(self, events: Events) -> bytes:
        return super().frame(events) + b"data: [DONE]\n\n"
