"""Export a lab's agent runs as OpenAI chat conversations (the ``agent_chat`` format).

One record per output: ``{"id", "model", "sample", "messages", "expected",
"reference_tool_calls", "error", "duration_s", ...}`` with the case's unmapped fields back
at the top level, so ``evalnb.load`` reads the file back into equal cases, outputs, steps and
reference calls. An output without steps (a plain chat answer) becomes the case's script
followed by the answer.
"""

from __future__ import annotations

import json
from itertools import groupby
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evalnb.lab.core import LabCore

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
    out = []
    for o in lab.outputs.iter_rows(named=True):
        case = cases[o["case_id"]]
        run = runs.get((o["case_id"], o["model"], o["sample"]))
        messages = (
            _messages(run)
            if run
            else [*_script(case), {"role": "assistant", "content": o["actual"]}]
        )
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


def _script(case: dict[str, Any]) -> list[dict[str, Any]]:
    if case["messages"] is not None:
        return list(json.loads(case["messages"]))
    head = [{"role": "system", "content": case["system"]}] if case["system"] else []
    return [*head, {"role": "user", "content": case["prompt"]}]


def _messages(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rebuild a run's messages from its steps (a call row per tool call of a message)."""
    messages = []
    for _, group in groupby(rows, key=lambda r: r["step"]):
        parts = list(group)
        first = parts[0]
        msg: dict[str, Any] = {"role": first["role"], "content": first["content"]}
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
