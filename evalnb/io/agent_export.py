"""Export a lab's agent runs as OpenAI chat conversations (the ``agent_chat`` format).

One record per output: ``{"id", "model", "sample", "messages", "expected",
"reference_tool_calls", "error", "duration_s", ...}`` with the case's unmapped fields back
at the top level, so ``evalnb.load`` reads the file back into equal cases, outputs, steps and
reference calls. An output without steps (a plain chat answer) becomes the case's script
followed by the answer. Media go back as OpenAI content parts (``image_url`` with a
``data:`` URL of the bytes kept, ``input_audio``, ``file``): each case message's own, and the
answer's on the last assistant message; loading the file again gives the same media ids.
"""

from __future__ import annotations

import json
from itertools import groupby
from typing import TYPE_CHECKING, Any

from evalnb.media.parts import openai_parts
from evalnb.media.table import items_by_id

if TYPE_CHECKING:
    from evalnb.lab.core import LabCore
    from evalnb.media.items import MediaItem

__all__ = ["agent_chat_records"]

_KEY = ("case_id", "model", "sample")


def agent_chat_records(lab: LabCore) -> list[dict[str, Any]]:
    """Build the ``agent_chat`` records of every output, in the lab's order."""
    cases = {c["case_id"]: c for c in lab.cases.iter_rows(named=True)}
    steps = lab.steps.sort([*_KEY, "step"])
    runs = {
        key: list(rows)
        for key, rows in groupby(
            steps.iter_rows(named=True), key=lambda r: tuple(r[k] for k in _KEY)
        )
    }
    references: dict[str, list[dict[str, Any]]] = {}
    for row in lab.reference_calls.sort("case_id", "position").iter_rows(named=True):
        calls = references.setdefault(row["case_id"], [])
        if row["position"] >= 0:  # position -1: "no tool should be called"
            calls.append(
                {
                    "type": "function",
                    "function": {"name": row["tool_name"], "arguments": row["tool_args"]},
                }
            )
    media = items_by_id(lab.table("media"))
    out = []
    for o in lab.outputs.iter_rows(named=True):
        case = cases[o["case_id"]]
        run = runs.get((o["case_id"], o["model"], o["sample"]))
        messages = (
            _messages(run, _script(case, media))
            if run
            else [*_script(case, media), {"role": "assistant", "content": o["actual"]}]
        )
        if o.get("media"):
            _show_answer_media(messages, [media[i] for i in o["media"] if i in media])
        rec: dict[str, Any] = {
            **json.loads(case["extra"] or "{}"),
            "id": o["case_id"],
            "model": o["model"],
            "sample": o["sample"],
            "messages": messages,
        }
        for key in ("topic", "question_type"):
            if case[key] is not None:
                rec[key] = case[key]
        if case["expected"] is not None and len(case["expected"]):
            rec["expected"] = list(case["expected"])
        if o["case_id"] in references:
            rec["reference_tool_calls"] = references[o["case_id"]]
        if o["error"] is not None and not any(m.get("error") == o["error"] for m in messages):
            rec["error"] = o["error"]
        if o["duration_s"] is not None:
            rec["duration_s"] = o["duration_s"]
        extra = json.loads(o["extra"] or "{}")
        if extra:
            rec["run"] = extra
        out.append(rec)
    return out


def _script(case: dict[str, Any], media: dict[str, MediaItem]) -> list[dict[str, Any]]:
    """Return the case's messages, each message's media back in its content parts."""
    if case["messages"] is not None:
        script = list(json.loads(case["messages"]))
        for msg in script:
            ids = msg.pop("media", None)
            if ids:
                msg["content"] = openai_parts(msg.get("content"), [media[i] for i in ids])
        return script
    head = [{"role": "system", "content": case["system"]}] if case["system"] else []
    ids = [i for i in case.get("media") or [] if i in media]
    prompt = openai_parts(case["prompt"], [media[i] for i in ids]) if ids else case["prompt"]
    return [*head, {"role": "user", "content": prompt}]


def _show_answer_media(messages: list[dict[str, Any]], items: list[MediaItem]) -> None:
    """Put the answer's media on the last assistant message (the reader gathers them all)."""
    last = next((m for m in reversed(messages) if m["role"] == "assistant"), None)
    if last is None:
        messages.append(last := {"role": "assistant", "content": None})
    text = last.get("content")
    last["content"] = openai_parts(text if isinstance(text, str) else None, items)


def _messages(rows: list[dict[str, Any]], script: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rebuild a run's messages from its steps (a call row per tool call of a message).

    A user or system message of the run takes its content parts from the case's script
    (the steps keep only text), matched by role and text.
    """
    media_text: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for m in script:
        if isinstance(m.get("content"), list):
            media_text.setdefault((m["role"], _joined(m["content"])), m["content"])
    messages = []
    for _, group in groupby(rows, key=lambda r: r["step"]):
        parts = list(group)
        first = parts[0]
        msg: dict[str, Any] = {"role": first["role"], "content": first["content"]}
        found = media_text.get((first["role"], first["content"] or ""))
        if found is not None and first["role"] in ("user", "system", "developer"):
            msg["content"] = found
        if first["role"] == "assistant" and first["tool_name"] is not None:
            msg["tool_calls"] = [
                {
                    "id": r["tool_call_id"],
                    "type": "function",
                    "function": {"name": r["tool_name"], "arguments": r["tool_args"]},
                }
                for r in parts
            ]
        elif first["error"] is not None:  # a call's error is its tool message's: kept there
            msg["error"] = first["error"]
        if first["role"] == "tool" and first["tool_call_id"] is not None:
            msg["tool_call_id"] = first["tool_call_id"]
        for key in ("latency_s", "tokens", "cost"):
            if first[key] is not None:
                msg[key] = first[key]
        messages.append(msg)
    return messages


def _joined(parts: list[dict[str, Any]]) -> str:
    return "".join(p.get("text") or "" for p in parts if p.get("type") == "text")
