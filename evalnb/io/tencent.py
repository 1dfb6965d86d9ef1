"""Tencent Cloud TI evaluation sets.

Chat JSONL, evaluation-only JSONL with ``model_outputs``, and the legacy manual-evaluation
JSONL and CSV.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalnb.io.fields import Where, to_json

if TYPE_CHECKING:
    from collections.abc import Mapping

    from evalnb.io.builder import LabBuilder
    from evalnb.io.source import Line

__all__ = ["read_tencent", "read_tencent_csv"]

_KNOWN = {"id", "messages", "ref_answer", "model_outputs"}
_RESPONSE_KEYS = {"content", "reasoning_content", "duration_s", "cost", "error"}
_ROLES = {"system", "user", "assistant", "tool", "function", "developer"}


def read_tencent(lines: list[Line], source: str, builder: LabBuilder) -> None:
    """Add every line of a Tencent JSONL set (the mode is read per line)."""
    builder.info["format"] = "tencent"
    for number, value in lines:
        where = Where(source, f"line {number}")
        rec = where.record(value, "a JSON object with 'messages' or 'conversation'")
        if "conversation" in rec and "messages" not in rec:
            _manual(rec, where, builder)
        else:
            _chat(rec, where, builder)


def _case_id(rec: Mapping[str, object], where: Where) -> str:
    raw = rec.get("id")
    if raw is None:
        return ""
    if isinstance(raw, bool) or not isinstance(raw, str | int):
        msg = "id"
        raise where.error(msg, "a string or integer id", raw)
    return str(raw)


def _messages(rec: Mapping[str, object], where: Where) -> list[Mapping[str, object]]:
    messages = where.records(rec, "messages")
    for i, msg in enumerate(messages):
        mw = where.at("messages").at(i)
        role = mw.string(msg, "role", required=True)
        if role not in _ROLES:
            msg_0 = "role"
            raise mw.error(msg_0, f"one of {sorted(_ROLES)}", role)
        mw.string(msg, "content", required=True)
    if not any(m["role"] == "user" for m in messages):
        msg_0 = "messages"
        raise where.error(msg_0, "at least one message with role 'user'", messages)
    return messages


def _chat(rec: Mapping[str, object], where: Where, builder: LabBuilder) -> None:
    messages = _messages(rec, where)
    gt = str(messages[-1]["content"]) if messages[-1]["role"] == "assistant" else None
    prompt = next(str(m["content"]) for m in reversed(messages) if m["role"] == "user")
    system = next((str(m["content"]) for m in messages if m["role"] == "system"), None)
    ref = where.opt_string(rec, "ref_answer")
    expected = [r for r in (ref, gt) if r]
    if len(expected) == 2 and expected[0] == expected[1]:
        expected = expected[:1]
    case = {
        "case_id": _case_id(rec, where),
        "prompt": prompt,
        "messages": to_json(messages),
        "system": system,
        "expected": expected,
        "extra": to_json({k: v for k, v in rec.items() if k not in _KNOWN}),
    }
    case_id = builder.add_case(case, where, id_field="id")
    if rec.get("model_outputs") is None:
        return
    for i, mo in enumerate(where.records(rec, "model_outputs")):
        ow = where.at("model_outputs").at(i)
        model = ow.string(mo, "model_name", required=True)
        if not model:
            msg = "model_name"
            raise ow.error(msg, "a non-empty model name", model)
        for j, resp in enumerate(ow.records(mo, "responses")):
            rw = ow.at("responses").at(j)
            builder.add_output(
                {
                    "case_id": case_id,
                    "model": model,
                    "sample": j,
                    "actual": rw.string(resp, "content", required=True),
                    "reasoning": rw.opt_string(resp, "reasoning_content"),
                    "duration_s": rw.number(resp, "duration_s"),
                    "cost": rw.number(resp, "cost"),
                    "error": rw.opt_string(resp, "error"),
                    "extra": to_json({k: v for k, v in resp.items() if k not in _RESPONSE_KEYS}),
                },
                rw,
                id_field="model_name",
            )


def _manual(rec: Mapping[str, object], where: Where, builder: LabBuilder) -> None:
    turns = where.records(rec, "conversation")
    if not turns:
        msg = "conversation"
        raise where.error(msg, "at least one {prompt, response} turn", turns)
    system = where.opt_string(rec, "system") or None
    messages: list[dict[str, str]] = [{"role": "system", "content": system}] if system else []
    for i, turn in enumerate(turns):
        tw = where.at("conversation").at(i)
        messages.append({"role": "user", "content": tw.string(turn, "prompt", required=True)})
        messages.append({"role": "assistant", "content": tw.string(turn, "response")})
    last = messages.pop()  # the last response is the reference answer, not chat history
    case = {
        "case_id": _case_id(rec, where),
        "prompt": messages[-1]["content"],
        "messages": to_json(messages),
        "system": system,
        "expected": [last["content"]] if last["content"] else [],
        "extra": to_json(
            {k: v for k, v in rec.items() if k not in {"id", "system", "conversation"}}
        ),
    }
    builder.add_case(case, where, id_field="id")


def read_tencent_csv(
    rows: list[tuple[int, dict[str, str]]], source: str, builder: LabBuilder
) -> None:
    """Add a manual-evaluation CSV (columns ``system``, ``prompt``, ``response``)."""
    builder.info["format"] = "tencent_csv"
    for number, row in rows:
        where = Where(source, f"line {number}")
        system = row.get("system") or None
        prompt = row["prompt"]
        messages = ([{"role": "system", "content": system}] if system else []) + [
            {"role": "user", "content": prompt}
        ]
        case = {
            "prompt": prompt,
            "messages": to_json(messages),
            "system": system,
            "expected": [row["response"]] if row.get("response") else [],
            "extra": to_json(
                {k: v for k, v in row.items() if k not in {"system", "prompt", "response"}}
            ),
        }
        builder.add_case(case, where, id_field="prompt")
