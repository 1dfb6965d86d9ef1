"""Agent conversations: OpenAI chat messages with tool calls, and ragas multi-turn samples.

A conversation is a case and an agent's run of it an output (whose ``actual`` is the last
assistant text), so every evaluator, the eye, labels and calibration work on agents too;
its messages and tool calls go to the ``steps`` table, and its ``reference_tool_calls`` to
``reference_calls``.

* OpenAI: ``{"messages": [...], "reference_tool_calls": [...], "model", "id", ...}``; an
  assistant message carries ``tool_calls[].function.{name, arguments}`` (``content`` may be
  null), a ``role: tool`` message answers one by ``tool_call_id``.
* ragas (``MultiTurnSample``, ``EvaluationDataset.to_jsonl``): ``{"user_input": [{"type":
  "human" | "ai" | "tool", "content", "tool_calls": [{"name", "args"}]}],
  "reference_tool_calls": [...], "reference": ...}``; a tool message answers the earliest
  call not answered yet.

The case is what the user said (its user and system messages, in order), so two agents'
runs of one script are one case with two outputs. Arguments that are not valid JSON are
kept as text with ``args_valid`` false, never dropped. Messages may carry ``latency_s``,
``tokens``, ``cost`` and ``error``; a tool message may carry ``error`` or
``status: "error"``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from evalnb.io.fields import Where, to_json
from evalnb.io.media_fields import base_of, refused
from evalnb.llm.agent import Turn, canonical_args, steps_of
from evalnb.media.items import MediaRefused
from evalnb.media.parts import split_parts

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

    from evalnb.io.builder import LabBuilder

__all__ = ["AgentReader", "is_agent_record", "read_agent_records"]

_RAGAS_ROLES = {"human": "user", "ai": "assistant", "tool": "tool", "system": "system"}
_ROLES = {"system", "developer", "user", "assistant", "tool", "function"}
# Everything else (ragas' reference_topics, rubrics, ...) is kept in the case's extra.
_KNOWN = {
    "id",
    "messages",
    "user_input",
    "reference_tool_calls",
    "model",
    "reference",
    "expected",
    "sample",
    "error",
    "duration_s",
    "run",
    "topic",
    "question_type",
}


def is_agent_record(value: object) -> bool:
    """Whether a parsed record is an agent conversation (tool calls, or ragas' turns).

    A conversation with no tool call is one too when it names its ``model`` (as our
    ``agent_chat`` export writes every run): Tencent's records carry their models in
    ``model_outputs`` and never a ``model`` of their own.
    """
    if not isinstance(value, dict):
        return False
    if "reference_tool_calls" in value:
        return True
    turns = value.get("user_input")
    if isinstance(turns, list) and any(isinstance(t, dict) and "type" in t for t in turns):
        return True
    messages = value.get("messages")
    if (
        isinstance(messages, list)
        and isinstance(value.get("model"), str)
        and "model_outputs" not in value
    ):
        return True
    return isinstance(messages, list) and any(
        isinstance(m, dict) and (m.get("tool_calls") or m.get("role") == "tool") for m in messages
    )


def read_agent_records(records: Sequence[tuple[Where, object]], builder: LabBuilder) -> None:
    """Add each conversation record (with the place it came from) to the lab being built."""
    builder.info["format"] = "agent_chat"
    reader = AgentReader(builder)
    for where, value in records:
        reader.add(
            where.record(value, "a conversation object with 'messages' or 'user_input'"), where
        )


class AgentReader:
    """Adds conversation records to a lab being built (other agent formats translate to one).

    A record is ``{"messages" | "user_input", "id", "model", "sample", "reference" |
    "expected", "reference_tool_calls", "topic", "question_type", "error", "duration_s",
    "run", ...}`` (``run``: an
    object kept in the output's extra, e.g. the trace it came from); the reader checks that
    two runs of one case agree on its reference tool calls.
    """

    def __init__(self, builder: LabBuilder) -> None:
        self.builder = builder
        self._references: dict[str, tuple[list[dict[str, Any]], Where]] = {}

    def add(self, rec: Mapping[str, object], where: Where) -> tuple[str, str, int]:
        """Add one conversation; return its output's (case_id, model, sample)."""
        messages = _messages(rec, where)
        _read_media(messages, self.builder, base_of(where.source))
        return _conversation(rec, messages, where, self.builder, self._references)


def _read_media(messages: list[dict[str, Any]], builder: LabBuilder, base: Path | None) -> None:
    """Split each message's content parts once: its text, and its media kept on the shelf.

    A message's media ids are kept beside its text (``_media``): the case's script keeps
    them per message, so an export writes each image back into the message it came from.
    """
    for msg in messages:
        content = msg.get("content")
        if not isinstance(content, list):
            continue
        mw: Where = msg["_where"]
        try:
            text, items = split_parts(content, base=base)
        except MediaRefused as exc:
            raise refused(mw, "content", exc) from None
        msg["_text"] = text
        msg["_media"] = [builder.media.add(item) for item in items]


def _messages(rec: Mapping[str, object], where: Where) -> list[dict[str, Any]]:
    """Return the record's messages in OpenAI's shape (ragas turns translated)."""
    if "messages" in rec:
        raw = where.records(rec, "messages")
        out = []
        for i, msg in enumerate(raw):
            mw = where.at("messages").at(i)
            role = mw.string(msg, "role", required=True)
            if role not in _ROLES:
                msg_0 = "role"
                raise mw.error(msg_0, f"one of {sorted(_ROLES)}", role)
            out.append({**msg, "_where": mw})
        return out
    raw = where.records(rec, "user_input")
    out = []
    for i, turn in enumerate(raw):
        tw = where.at("user_input").at(i)
        kind = tw.string(turn, "type", required=True)
        if kind not in _RAGAS_ROLES:
            msg_0 = "type"
            raise tw.error(msg_0, f"one of {sorted(_RAGAS_ROLES)}", kind)
        turned: dict[str, Any] = {k: v for k, v in turn.items() if k != "type"}
        turned["role"] = _RAGAS_ROLES[kind]
        turned["_where"] = tw
        out.append(turned)
    return out


def _text(msg: Mapping[str, Any], where: Where) -> str | None:
    """Return a message's text: a string, its text parts joined, or None (a bare tool call)."""
    if "_text" in msg:  # content parts, split once by _read_media
        return msg["_text"]  # type: ignore[no-any-return]
    content = msg.get("content")
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict) and p.get("type") == "text"]
        if all(isinstance(p, str) for p in parts):
            return "".join(parts)  # type: ignore[arg-type]
    msg_0 = "content"
    raise where.error(msg_0, "text, a list of text parts, or null", content)


def _calls(msg: Mapping[str, Any], where: Where) -> list[tuple[str | None, str, Any]]:
    """Return (id, name, arguments) of a message's tool calls, OpenAI's or ragas' shape."""
    raw = msg.get("tool_calls") or []
    if not isinstance(raw, list):
        msg_0 = "tool_calls"
        raise where.error(msg_0, "a list of tool calls", raw)
    out = []
    for i, call in enumerate(raw):
        cw = where.at("tool_calls").at(i)
        call = cw.record(call, "a tool call object")
        function = call.get("function")
        if isinstance(function, dict):  # OpenAI: {"id", "type": "function", "function": {...}}
            name = cw.at("function").string(function, "name", required=True)
            args = function.get("arguments", "{}")
        else:  # ragas: {"name", "args"}
            name = cw.string(call, "name", required=True)
            args = call.get("args", call.get("arguments", {}))
        call_id = call.get("id")
        out.append((str(call_id) if call_id is not None else None, name, args))
    return out


def _number(msg: Mapping[str, Any], key: str, where: Where) -> float | None:
    return where.number(msg, key) if key in msg else None


def _conversation(
    rec: Mapping[str, object],
    messages: list[dict[str, Any]],
    where: Where,
    builder: LabBuilder,
    references: dict[str, tuple[list[dict[str, Any]], Where]],
) -> tuple[str, str, int]:
    script = [
        {"role": m["role"], "content": _text(m, m["_where"])}
        | ({"media": m["_media"]} if m.get("_media") else {})
        for m in messages
        if m["role"] in ("user", "system", "developer")
    ]
    users = [m["content"] for m in script if m["role"] == "user" and m["content"]]
    if not users:
        msg = "messages"
        raise where.error(msg, "at least one user message with text", "none")
    expected = where.strings(rec, "reference", wrap=True) if "reference" in rec else []
    if "expected" in rec:
        expected = where.strings(rec, "expected", wrap=True)
    system = next((m["content"] for m in script if m["role"] in ("system", "developer")), None)
    case = {
        "case_id": str(rec["id"]) if rec.get("id") is not None else "",
        "prompt": users[0],
        "messages": to_json(script),
        "system": system,
        "expected": expected,
        "extra": to_json({k: v for k, v in rec.items() if k not in _KNOWN}),
        "topic": where.opt_string(rec, "topic"),
        "question_type": where.opt_string(rec, "question_type"),
        "media": [i for m in script for i in m.get("media", [])],
    }
    case_id = builder.add_case(case, where, id_field="id")
    model = str(rec.get("model") or "agent")
    sample = where.count(rec, "sample") or 0
    _reference(rec, case_id, where, builder, references)
    steps, answer = steps_of(_turns(messages), case_id, model, sample)
    # The agent's own failures (a message flagged with an error), not its tools' errors:
    # an output error means "the host failed" and scores the worst value.
    errors = [
        s["error"]
        for s in steps
        if s["error"] and s["role"] == "assistant" and s["tool_name"] is None
    ]
    if rec.get("error"):  # the run itself failed (an Inspect sample's error, ...)
        errors.append(_error(rec) or "the run failed")
    duration = where.number(rec, "duration_s") if "duration_s" in rec else None
    output = {
        "case_id": case_id,
        "model": model,
        "sample": sample,
        "actual": answer,
        "duration_s": duration if duration is not None else _total(steps, "latency_s"),
        "cost": _total(steps, "cost"),
        "error": errors[-1] if errors else None,
        "extra": to_json(rec["run"]) if isinstance(rec.get("run"), dict) else "{}",
        # What the agent showed: the media of its own messages, in order.
        "media": [i for m in messages if m["role"] == "assistant" for i in m.get("_media", [])],
    }
    builder.add_output(output, where, id_field="model")
    builder.steps.extend(steps)
    return case_id, model, sample


def _total(steps: list[dict[str, Any]], key: str) -> float | None:
    values = [s[key] for s in steps if s[key] is not None]
    return float(sum(values)) if values else None


def _turns(messages: list[dict[str, Any]]) -> list[Turn]:
    """Check every message and keep what a step needs (errors name the message's place)."""
    turns = []
    for msg in messages:
        mw: Where = msg["_where"]
        tokens = mw.count(msg, "tokens")
        call_id = msg.get("tool_call_id")
        turns.append(
            Turn(
                role=msg["role"],
                content=_text(msg, mw),
                tool_calls=_calls(msg, mw) if msg["role"] == "assistant" else [],
                tool_call_id=str(call_id) if call_id is not None else None,
                error=_error(msg),
                latency_s=_number(msg, "latency_s", mw),
                tokens=tokens,
                cost=_number(msg, "cost", mw),
            )
        )
    return turns


def _error(msg: Mapping[str, Any]) -> str | None:
    error = msg.get("error")
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])[:2000]  # Inspect's {"type", "message"}, OTel's status
    if error:
        return error if isinstance(error, str) else json.dumps(error, ensure_ascii=False)[:2000]
    if msg.get("status") == "error" or msg.get("is_error") is True:
        return "the tool reported an error"
    return None


def _reference(
    rec: Mapping[str, object],
    case_id: str,
    where: Where,
    builder: LabBuilder,
    references: dict[str, tuple[list[dict[str, Any]], Where]],
) -> None:
    """Record the case's reference tool calls; another run of the case must agree."""
    if "reference_tool_calls" not in rec:
        return
    raw = where.records(rec, "reference_tool_calls")
    # An empty reference ("no tool should be called") is kept as a row at position -1, so it
    # is told apart from a case with no reference at all.
    rows: list[dict[str, Any]] = (
        [] if raw else [{"case_id": case_id, "position": -1, "tool_name": None, "tool_args": None}]
    )
    for i, call in enumerate(raw):
        cw = where.at("reference_tool_calls").at(i)
        calls = _calls({"tool_calls": [call]}, cw)
        _, name, args = calls[0]
        text, _valid = canonical_args(args)
        rows.append({"case_id": case_id, "position": i, "tool_name": name, "tool_args": text})
    known = references.get(case_id)
    if known is None:
        references[case_id] = (rows, where)
        builder.reference_calls.extend(rows)
    elif known[0] != rows:
        first = known[1].location or known[1].source
        msg = "reference_tool_calls"
        raise where.error(
            msg,
            f"the same reference calls as at {first}",
            [r["tool_name"] for r in rows],
            "two runs of one conversation need one reference",
        )
