"""What a chat-completions reply says, read defensively.

A host's reply is untrusted: the answer may be a string, a list of content parts, or absent
beside a tool call; usage counts may be strings, lists, NaN or negative; tool calls may carry
their arguments as text or as an object. These turn each into what evalnb keeps, or raise
``ValueError`` / ``TypeError`` saying what was found (the client records it as the call's
error, never as an answer).
"""

from __future__ import annotations

import json
import logging
import math
from typing import Any

__all__ = [
    "content_text",
    "finish_reason_of",
    "logprobs_of",
    "reply_contexts",
    "token_count",
    "tool_calls_of",
]

_log = logging.getLogger(__name__)
_log.addHandler(logging.NullHandler())


def tool_calls_of(raw: object) -> tuple[dict[str, Any], ...]:
    """Return the tool calls of a reply as ``{"id", "name", "arguments"}`` (JSON text)."""
    if not isinstance(raw, list):
        msg = f"tool_calls of type {type(raw).__name__}, expected a list"
        raise TypeError(msg)
    out = []
    for i, call in enumerate(raw):
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            msg = f"tool call {i} has no function name: {str(call)[:200]}"
            raise TypeError(msg)
        arguments = function.get("arguments", "{}")
        if not isinstance(arguments, str):  # some hosts send an object
            arguments = json.dumps(arguments, ensure_ascii=False)
        out.append(
            {
                "id": str(call.get("id") or f"call-{i}"),
                "name": function["name"],
                "arguments": arguments,
            }
        )
    return tuple(out)


def content_text(message: dict[str, Any]) -> str:
    """Return the answer of a reply's message: its text, or its text parts joined.

    A message with no text (``content: null`` beside ``tool_calls``) is not an answer: it is
    refused here, so it is neither cached nor scored as an empty answer.
    """
    content = message["content"]
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: [{"type": "text", "text": ...}, ...]
        texts = [p.get("text") for p in content if isinstance(p, dict) and p.get("type") == "text"]
        if texts and all(isinstance(t, str) for t in texts):
            return "".join(texts)  # type: ignore[arg-type]
        msg = f"content parts with no text (types {[type(p).__name__ for p in content][:5]})"
        raise ValueError(msg)
    if content is None and message.get("tool_calls"):
        calls = [
            c.get("function", {}).get("name") for c in message["tool_calls"] if isinstance(c, dict)
        ]
        msg = f"a tool call ({', '.join(map(str, calls[:5]))}) instead of an answer"
        raise ValueError(msg)
    msg = f"message content of type {type(content).__name__}, expected text"
    raise ValueError(msg)


# Above any real count (a million-token context is 1e6): a larger "count" is a bad value.
_MAX_TOKENS = 2**40


def token_count(usage: dict[str, Any], name: str) -> int | None:
    """Return a usage count, or None (with a warning) when the host sent nonsense."""
    value = usage.get(name)
    if value is None:
        return None
    ok = (isinstance(value, int) and not isinstance(value, bool)) or (
        isinstance(value, float) and math.isfinite(value) and value.is_integer()
    )
    if ok and 0 <= value <= _MAX_TOKENS:
        return int(value)
    _log.warning(
        "usage.%s of the reply is %r, expected a count from 0 to %d: recorded as unknown",
        name,
        str(value)[:40],
        _MAX_TOKENS,
    )
    return None


# A verdict or score sits in a reply's first few hundred tokens; more is not kept.
_MAX_LOGPROB_TOKENS = 512


def _logprob(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) and number <= 0.0 else None


def logprobs_of(
    choice: dict[str, Any],
) -> tuple[tuple[str, float, tuple[tuple[str, float], ...]], ...] | None:
    """Return a choice's token log-probabilities, None when it has none or they make no sense.

    OpenAI's shape (``logprobs.content[i] = {token, logprob, top_logprobs: [{token,
    logprob}]}``), as vLLM and llama.cpp send it. A host's odd values (a positive or NaN
    log-probability, a token that is not text) drop the whole list: a probability read from
    half a list would be wrong.
    """
    block = choice.get("logprobs")
    content = block.get("content") if isinstance(block, dict) else None
    if not isinstance(content, list) or not content:
        return None
    out = []
    for entry in content[:_MAX_LOGPROB_TOKENS]:
        if not isinstance(entry, dict) or not isinstance(entry.get("token"), str):
            return None
        lp = _logprob(entry.get("logprob"))
        if lp is None:
            return None
        top = []
        for alt in entry.get("top_logprobs") or []:
            alt_lp = _logprob(alt.get("logprob")) if isinstance(alt, dict) else None
            if alt_lp is None or not isinstance(alt.get("token"), str):
                return None
            top.append((str(alt["token"]), alt_lp))
        out.append((entry["token"], lp, tuple(top)))
    return tuple(out)


def finish_reason_of(choice: object) -> str | None:
    """Return the choice's ``finish_reason`` as short text, or None when the host sent none."""
    reason = choice.get("finish_reason") if isinstance(choice, dict) else None
    return reason[:40] if isinstance(reason, str) else None


def _passage(item: object) -> str | None:
    if isinstance(item, str):
        return item
    if isinstance(item, dict):
        for key in ("content", "text", "page_content", "chunk"):
            if isinstance(item.get(key), str):
                return str(item[key])
    return None


def reply_contexts(body: dict[str, Any]) -> tuple[str, ...] | None:
    """Read the retrieved passages a RAG endpoint returns beside its answer, if any.

    Shapes read: top-level ``contexts``, ``retrieved_contexts``, ``context`` or
    ``citations`` (lists of text, or of objects with ``content`` / ``text`` /
    ``page_content``), and the message's ``context.citations`` (Azure OpenAI on your data).
    None when the reply carries none.
    """
    message = ((body.get("choices") or [{}])[0] or {}).get("message") or {}
    context = message.get("context") if isinstance(message, dict) else None
    candidates = [body.get(k) for k in ("contexts", "retrieved_contexts", "context", "citations")]
    if isinstance(context, dict):
        candidates.append(context.get("citations"))
    for found in candidates:
        if isinstance(found, list):
            passages = [p for p in map(_passage, found) if p is not None]
            if passages or not found:
                return tuple(passages)
    return None
