"""Inspect AI eval logs (the JSON log format, ``inspect eval --log-format json``).

A log is one task run by one model: ``{"version", "status", "eval": {"task", "model", ...},
"samples": [{"id", "epoch", "input", "target", "messages", "output", "scores", "error",
"total_time", "attachments", ...}]}``. Each sample becomes a conversation (its ``messages``,
with Inspect's tool calls and tool results) run by the log's model; epoch *n* is sample
*n - 1*. Its scorers' values are kept as imported scores (evaluator ``inspect``, one metric
per scorer, or per key of a scorer that returns a dict), their explanations as the detail.

Inspect may store long texts once per sample as ``attachment://<hash>``; they are resolved
from the sample's ``attachments``. The binary ``.eval`` format is a zip of these JSON
documents: convert it first with ``inspect log convert --to json``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from evalnb.io.agents import AgentReader
from evalnb.io.fields import Where, to_json
from evalnb.lab.bounds import MAX_RESOLVED_CHARS

if TYPE_CHECKING:
    from collections.abc import Mapping

    from evalnb.io.builder import LabBuilder

__all__ = ["EVALUATOR", "is_inspect_log", "read_inspect_log"]

EVALUATOR = "inspect"
# Inspect's default value_to_float: CORRECT, INCORRECT, PARTIAL, NOANSWER.
_LETTERS = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}
_ATTACHMENT = "attachment://"


def is_inspect_log(doc: object) -> bool:
    """Whether a parsed JSON document is an Inspect AI eval log."""
    # Both keys name the format; the reader then says what is wrong with either.
    return isinstance(doc, dict) and "eval" in doc and "status" in doc


def read_inspect_log(doc: object, where: Where, builder: LabBuilder) -> None:
    """Add an Inspect log's samples (conversations and their scores) to the lab being built."""
    log = where.record(doc, "an Inspect eval log object")
    builder.info["format"] = "inspect_log"
    spec = where.at("eval").record(
        where.require(log, "eval", "the log's eval spec"), "the log's eval spec: an object"
    )
    model = where.at("eval").string(spec, "model", required=True)
    task = spec.get("task")
    if log.get("status") not in ("success", None):
        builder.info["inspect_status"] = log.get("status")
    samples = log.get("samples")
    if samples is None:
        msg = "samples"
        raise where.error(
            msg,
            "the log's samples (run with log_samples=True)",
            "none",
            "Inspect wrote only the header; rerun the eval logging samples",
        )
    reader = AgentReader(builder)
    resolved = [0]  # characters the attachments expanded to, over the whole log
    for i, raw in enumerate(where.records(log, "samples")):
        sw = where.at("samples").at(i)
        rec = _resolved(raw, sw, resolved)
        key = reader.add(_conversation(rec, sw, model, task), sw)
        _scores(rec, sw, key, builder)


def _resolved(sample: Mapping[str, object], where: Where, spent: list[int]) -> dict[str, Any]:
    """Return the sample with ``attachment://`` references replaced by their texts.

    ``spent`` counts the characters substituted over the whole log: past
    ``MAX_RESOLVED_CHARS`` the log is refused (a text referred to many times would take its
    size as many times once the tables are built).
    """
    attachments = sample.get("attachments") or {}
    if not isinstance(attachments, dict):
        msg = "attachments"
        raise where.error(msg, "an object of texts by hash", attachments)

    def walk(value: object, path: Where) -> object:
        if isinstance(value, str) and value.startswith(_ATTACHMENT):
            key = value[len(_ATTACHMENT) :]
            if key not in attachments:
                msg = None
                raise path.error(msg, "an attachment the sample carries", value)
            text = attachments[key]
            spent[0] += len(text) if isinstance(text, str) else 0
            if spent[0] > MAX_RESOLVED_CHARS:
                raise path.error(
                    None,
                    f"attachments that expand to at most {MAX_RESOLVED_CHARS:,} characters in "
                    "all (EVALNB_MAX_RESOLVED_CHARS raises the bound)",
                    f"{spent[0]:,} characters by this reference to {key!r}",
                )
            return text
        if isinstance(value, dict):
            return {k: walk(v, path.at(k)) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v, path.at(j)) for j, v in enumerate(value)]
        return value

    return {k: (v if k == "attachments" else walk(v, where.at(k))) for k, v in sample.items()}


def _conversation(rec: Mapping[str, Any], where: Where, model: str, task: object) -> dict[str, Any]:
    """Translate one sample into a conversation record in OpenAI's shape."""
    sample_id = where.require(rec, "id", "the sample's id")
    epoch = where.count(rec, "epoch")
    messages = rec.get("messages") or []
    if not messages:  # a sample that never ran: its input is the conversation so far
        raw_input = where.require(rec, "input", "the sample's input")
        messages = (
            [{"role": "user", "content": raw_input}] if isinstance(raw_input, str) else raw_input
        )
    if not isinstance(messages, list):
        msg = "messages"
        raise where.error(msg, "a list of chat messages", messages)
    target = rec.get("target")
    out: dict[str, Any] = {
        "id": str(sample_id),
        "model": model,
        "sample": int(epoch) - 1 if epoch else 0,
        "messages": [_message(m, where.at("messages").at(j)) for j, m in enumerate(messages)],
        "expected": [target] if isinstance(target, str) and target else target or [],
    }
    if rec.get("error"):
        out["error"] = rec["error"]
    if isinstance(rec.get("total_time"), int | float):
        out["duration_s"] = rec["total_time"]
    meta = rec.get("metadata")
    if meta:
        out["metadata"] = meta
    if task is not None:
        out["task"] = task
    return out


def _message(msg: object, where: Where) -> dict[str, Any]:
    """Translate one Inspect chat message (tool calls, tool errors) into OpenAI's shape."""
    m = where.record(msg, "a chat message object")
    # Content parts pass through: the conversation reader keeps the text parts' text and
    # the images, audio, video and documents as media (reasoning is neither).
    out: dict[str, Any] = {"role": m.get("role"), "content": m.get("content")}
    calls = m.get("tool_calls")
    if calls:
        if not isinstance(calls, list):
            msg_0 = "tool_calls"
            raise where.error(msg_0, "a list of tool calls", calls)
        out["tool_calls"] = [_call(c, where.at("tool_calls").at(k)) for k, c in enumerate(calls)]
    if m.get("tool_call_id") is not None:
        out["tool_call_id"] = m["tool_call_id"]
    if m.get("error"):
        out["error"] = m["error"]
    return out


def _call(call: object, where: Where) -> dict[str, Any]:
    c = where.record(call, "a tool call object")
    name = where.string(c, "function", required=True)
    args: Any = c.get("arguments", {})
    if c.get("parse_error"):  # Inspect could not parse the model's arguments: keep the text
        args = _unparsed(args, c["parse_error"])
    return {"id": c.get("id"), "type": "function", "function": {"name": name, "arguments": args}}


def _unparsed(args: object, error: object) -> str:
    """Arguments Inspect failed to parse, as text that is not valid JSON (so it is flagged)."""
    text = args if isinstance(args, str) else to_json(args)
    return f"{text} (unparsable: {error})"


def _scores(
    rec: Mapping[str, Any], where: Where, key: tuple[str, str, int], builder: LabBuilder
) -> None:
    """Keep the sample's scorer values as imported scores (one metric per scorer or key)."""
    scores = rec.get("scores") or {}
    if not isinstance(scores, dict):
        msg = "scores"
        raise where.error(msg, "an object of scores by scorer", scores)
    named: dict[str, str] = {}  # metric name -> the place it came from
    for scorer, score in scores.items():
        sw = where.at("scores").at(scorer)
        s = sw.record(score, "a score object with 'value'")
        value = s.get("value")
        values = value if isinstance(value, dict) else {None: value}
        for sub, v in values.items():
            metric = scorer if sub is None else f"{scorer}/{sub}"
            place = f"scorer {scorer!r}" + ("" if sub is None else f", key {sub!r}")
            if metric in named:  # "a/b" beside {"a": {"b": ...}}: two values, one name
                raise sw.error(
                    None,
                    f"one value per metric name; {metric!r} also comes from {named[metric]}",
                    v,
                    "rename one of the scorers",
                )
            named[metric] = place
            # JSON has no NaN or infinity: such a value is kept as its text.
            shown = v if not isinstance(v, float) or math.isfinite(v) else repr(v)
            detail = {"value": shown}
            for field in ("answer", "explanation"):
                if s.get(field):
                    detail[field] = s[field]
            number = _number(v)
            if number is None and v is not None:
                detail["reason"] = "not a finite number Inspect's value_to_float knows"
            builder.add_imported_score(
                key,
                EVALUATOR,
                metric,
                number,
                to_json(detail),
                description=f"Score recorded by Inspect AI's {scorer} scorer.",
            )


def _number(value: object) -> float | None:
    """Inspect's default value_to_float: letters C/I/P/N, booleans, numbers, numeric text."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int | float):
        try:
            number = float(value)
        except OverflowError:  # an integer beyond any float (10**400)
            return None
        return number if math.isfinite(number) else None  # NaN or ±inf: not a score
    if isinstance(value, str):
        if value in _LETTERS:
            return _LETTERS[value]
        text = value.lower()
        if text in {"yes", "true"}:
            return 1.0
        if text in {"no", "false"}:
            return 0.0
        try:
            number = float(text)
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    # Inspect counts anything else as 0 with a warning; kept null here, with the reason.
    return None
