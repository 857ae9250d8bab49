"""The scripted model server for Gemini CLI (see :mod:`.model_server`; Qwen Code's ``openai``
provider talks to :class:`.model_server.ChatCompletionsServer`).

:class:`GeminiServer` speaks the Gemini API: ``models/<m>:streamGenerateContent?alt=sse``
(``data:`` lines of ``GenerateContentResponse``). A request that asks for JSON output (the
model router's and other side requests) is answered with JSON of the asked schema, without
consuming a step; tests pass ``-m`` so the router never asks.
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
