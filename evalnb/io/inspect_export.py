"""Export one model's answers as an Inspect AI eval log (JSON), media as Inspect content.

A log is one task run by one model, so a lab of several models is written one model at a
time. Each output becomes a sample: ``id`` the case, ``epoch`` the sample + 1, ``input`` and
``messages`` the case's messages and the answer, ``target`` the expected answers. Media are
``ContentImage`` / ``ContentAudio`` / ``ContentVideo`` / ``ContentDocument`` parts holding a
``data:`` URI of the very bytes kept (a remote item: its URL), so :func:`evalnb.load` reads
the log back into the same cases, answers and media ids.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from evalnb.io.agent_export import agent_chat_records
from evalnb.media.parts import inspect_parts, split_parts

if TYPE_CHECKING:
    from evalnb.lab.core import LabCore

__all__ = ["inspect_log_document"]


def inspect_log_document(lab: LabCore, model: str | None = None) -> dict[str, Any]:
    """Return the Inspect log of ``model``'s answers (the lab's only model by default).

    Raises
    ------
    ValueError
        With several models and no ``model``, or a ``model`` the lab lacks.
    """
    models = sorted(set(lab.outputs["model"].to_list()))
    if model is None:
        if len(models) != 1:
            msg = (
                f"an Inspect log holds one model's run; this lab has {models}: pass model='<name>'"
            )
            raise ValueError(msg)
        model = models[0]
    elif model not in models:
        msg = f"no answers of model {model!r} in this lab; expected one of {models}"
        raise ValueError(msg)
    samples = []
    for rec in agent_chat_records(lab):
        if rec["model"] != model:
            continue
        messages = [_message(m) for m in rec["messages"]]
        expected = rec.get("expected") or []
        sample: dict[str, Any] = {
            "id": rec["id"],
            "epoch": int(rec["sample"]) + 1,
            "input": [m for m in messages if m["role"] != "assistant"],
            "target": expected[0] if len(expected) == 1 else expected,
            "messages": messages,
            "output": {"model": model, "choices": []},
            "scores": {},
        }
        if rec.get("error"):
            sample["error"] = {"message": rec["error"]}
        if rec.get("duration_s") is not None:
            sample["total_time"] = rec["duration_s"]
        extra = {k: v for k, v in rec.items() if k not in _SAMPLE_KEYS}
        if extra:
            sample["metadata"] = extra
        samples.append(sample)
    name = lab.info.get("name")
    return {
        "version": 2,
        "status": "success",
        "eval": {"task": str(name or "evalnb"), "model": model},
        "samples": samples,
    }


_SAMPLE_KEYS = {"id", "model", "sample", "messages", "expected", "error", "duration_s", "run"}


def _message(msg: dict[str, Any]) -> dict[str, Any]:
    """Return an OpenAI-shaped message as Inspect's (content parts rewritten, calls flattened)."""
    out: dict[str, Any] = {"role": msg["role"]}
    content = msg.get("content")
    if isinstance(content, list):
        text, items = split_parts(content)
        out["content"] = inspect_parts(text, items)
    else:
        out["content"] = content or ""
    if msg.get("tool_calls"):
        out["tool_calls"] = [
            {
                "id": c.get("id"),
                "function": c["function"]["name"],
                "arguments": _arguments(c["function"].get("arguments")),
            }
            for c in msg["tool_calls"]
        ]
    for key in ("tool_call_id", "error"):
        if msg.get(key) is not None:
            out[key] = msg[key]
    return out


def _arguments(args: object) -> object:
    if isinstance(args, str):
        try:
            return json.loads(args)
        except json.JSONDecodeError:
            return args
    return args
