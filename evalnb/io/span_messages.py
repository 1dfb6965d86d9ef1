"""Chat messages carried in span attributes: OpenInference's and the GenAI conventions'.

* OpenInference flattens each message into attributes:
  ``llm.input_messages.<i>.message.role``, ``...message.content`` (or
  ``...message.contents.<k>.message_content.text``, and an image's
  ``...message_content.image.image.url``),
  ``...message.tool_calls.<j>.tool_call.{id, function.name, function.arguments}`` and
  ``...message.tool_call_id``;
* the OpenTelemetry GenAI conventions keep them as JSON in ``gen_ai.input.messages`` /
  ``gen_ai.output.messages`` (``[{"role", "parts": [{"type": "text" | "tool_call" |
  "tool_call_response", ...}]}]``), the system prompt in ``gen_ai.system_instructions``.

Both come out as OpenAI-shaped dicts: ``role``, ``content``, ``tool_calls`` and
``tool_call_id``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["as_text", "llm_messages"]


def _is_index(text: str) -> bool:
    """Whether ``text`` is a list index as OpenInference writes one: ASCII digits, a few.

    ``str.isdigit`` also takes "²" and other digits ``int`` refuses; an index of thousands
    of digits names no real message. Any other key is not a message attribute.
    """
    return 0 < len(text) <= 9 and text.isascii() and text.isdigit()


def _openinference(attrs: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    """Rebuild OpenInference's flattened messages (``llm.input_messages.<i>.message.*``)."""
    found: dict[int, dict[str, Any]] = {}
    head = prefix + "."
    for key, value in attrs.items():
        if not key.startswith(head):
            continue
        index, _, rest = key[len(head) :].partition(".")
        if not _is_index(index) or not rest.startswith("message."):
            continue
        msg = found.setdefault(int(index), {"tool_calls": {}, "parts": {}})
        rest = rest[len("message.") :]
        if rest.startswith("tool_calls."):
            k, _, what = rest[len("tool_calls.") :].partition(".")
            if _is_index(k):
                msg["tool_calls"].setdefault(int(k), {})[what.removeprefix("tool_call.")] = value
        elif rest.startswith("contents."):
            k, _, what = rest[len("contents.") :].partition(".")
            if _is_index(k) and what.startswith("message_content."):
                msg["parts"].setdefault(int(k), {})[what[len("message_content.") :]] = value
        else:
            msg[rest] = value
    out = []
    for _, msg in sorted(found.items()):
        calls = [
            {
                "id": c.get("id"),
                "function": {
                    "name": c.get("function.name"),
                    "arguments": c.get("function.arguments", "{}"),
                },
            }
            for _, c in sorted(msg.pop("tool_calls").items())
        ]
        parts = [p for _, p in sorted(msg.pop("parts").items())]
        content = msg.get("content")
        if content is None and any("image.image.url" in p for p in parts):
            # An image part: the message stays a list of OpenAI parts, read as media later
            # (a base64 URL OpenInference cut at 32,000 characters is kept unavailable).
            content = [
                {"type": "image_url", "image_url": {"url": p["image.image.url"]}}
                if "image.image.url" in p
                else {"type": "text", "text": str(p.get("text") or "")}
                for p in parts
            ]
        elif content is None and parts:
            content = "".join(str(p["text"]) for p in parts if "text" in p)
        out.append(
            {
                "role": msg.get("role"),
                "content": content,
                "tool_calls": calls,
                "tool_call_id": msg.get("tool_call_id"),
            }
        )
    return out


def _genai(value: object) -> list[dict[str, Any]]:
    """Read the GenAI conventions' messages (``[{"role", "parts": [...]}]``, JSON text)."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            return []
    if not isinstance(value, list):
        return []
    out: list[dict[str, Any]] = []
    for msg in value:
        if not isinstance(msg, dict):
            continue
        texts: list[str] = []
        calls: list[dict[str, Any]] = []
        results: list[tuple[object, object]] = []
        parts = msg.get("parts")
        for part in parts if isinstance(parts, list) else []:  # malformed parts: no text
            if not isinstance(part, dict):
                continue
            kind = part.get("type")
            if kind == "text":
                texts.append(str(part.get("content") or ""))
            elif kind == "tool_call":
                calls.append(
                    {
                        "id": part.get("id"),
                        "function": {
                            "name": part.get("name"),
                            "arguments": part.get("arguments", {}),
                        },
                    }
                )
            elif kind == "tool_call_response":
                results.append((part.get("id"), part.get("response", part.get("result"))))
        if msg.get("role") == "tool" or results:
            for call_id, result in results:
                out.append(
                    {
                        "role": "tool",
                        "tool_call_id": call_id,
                        "tool_calls": [],
                        "content": as_text(result),
                    }
                )
            continue
        out.append(
            {
                "role": msg.get("role"),
                "content": "".join(texts) if texts else None,
                "tool_calls": calls,
                "tool_call_id": None,
            }
        )
    return out


def as_text(value: object) -> str | None:
    """Return a value as message text: text as is, anything else as JSON (None stays None)."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def llm_messages(attrs: Mapping[str, Any], side: str) -> list[dict[str, Any]]:
    """Return an LLM span's input or output messages in OpenAI's shape (with ``tool_calls``)."""
    messages = _openinference(attrs, f"llm.{side}_messages")
    if not messages:
        messages = _genai(attrs.get(f"gen_ai.{side}.messages"))
    if side == "input" and not any(m["role"] == "system" for m in messages):
        system = attrs.get("gen_ai.system_instructions")
        if system:
            texts = (
                _genai([{"role": "system", "parts": system}])
                if isinstance(system, list)
                else [{"role": "system", "content": str(system)}]
            )
            messages = texts + messages
    return messages
