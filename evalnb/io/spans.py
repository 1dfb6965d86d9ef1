"""Agent traces: OpenInference and OpenTelemetry GenAI spans exported as JSON or JSONL.

Two span shapes are read:

* OTLP JSON (the collector's file exporter, ``ExportTraceServiceRequest``):
  ``{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId", "spanId", "parentSpanId",
  "name", "startTimeUnixNano", "endTimeUnixNano", "attributes": [{"key", "value":
  {"stringValue" | "intValue" | ...}}], "status": {"code", "message"}}]}]}]}``, one
  document or one per line;
* flat spans (OpenTelemetry Python's ``span.to_json()``, the console exporter):
  ``{"name", "context": {"trace_id", "span_id"}, "parent_id", "start_time", "end_time",
  "attributes": {...}, "status": {"status_code", "description"}}``, a list or one per line.

Spans are grouped into conversations by ``session.id`` / ``gen_ai.conversation.id`` (several
traces of one session are one conversation) or else by trace, and replayed in start order:

* an LLM span (``openinference.span.kind = LLM``, or ``gen_ai.operation.name`` chat /
  text_completion / generate_content) adds the user messages its input has that were not seen
  yet, the tool results its input carries that no TOOL span gave, and its output messages
  (text and tool calls), with the span's duration, tokens and cost;
* a TOOL span (``execute_tool``) adds the tool's result (``output.value`` /
  ``gen_ai.tool.call.result``), answering the call by ``tool_call.id`` /
  ``gen_ai.tool.call.id`` (else the earliest unanswered call of that tool); a span whose status
  is ERROR records the error;
* an AGENT span (``invoke_agent``) names the agent (the output's model) and gives the prompt
  and the answer when no LLM span has them.

Messages come (:mod:`evalnb.io.span_messages`) from OpenInference's flattened attributes (``llm.input_messages.0.message.role``,
``...message.tool_calls.0.tool_call.function.arguments``) or from the GenAI conventions' JSON
attributes (``gen_ai.input.messages``, ``gen_ai.output.messages`` with typed ``parts``).
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from evalnb.io.agents import AgentReader
from evalnb.io.fields import Where
from evalnb.io.span_messages import as_text, llm_messages

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from evalnb.io.builder import LabBuilder

__all__ = ["any_value", "is_span_record", "read_spans"]

_LLM_OPS = {"chat", "text_completion", "generate_content", "completion"}
_KINDS = {"execute_tool": "TOOL", "invoke_agent": "AGENT", "create_agent": "AGENT"}
_SESSION_KEYS = ("session.id", "gen_ai.conversation.id")
_AGENT_KEYS = ("gen_ai.agent.name", "agent.name", "graph.node.id")
_MODEL_KEYS = ("llm.model_name", "gen_ai.response.model", "gen_ai.request.model")


def is_span_record(value: object) -> bool:
    """Whether a parsed record is an OTLP export request or a flat exported span."""
    if not isinstance(value, dict):
        return False
    if "resourceSpans" in value:
        return True
    context = value.get("context")
    return isinstance(context, dict) and "trace_id" in context and "attributes" in value


@dataclass
class _Span:
    trace: str
    span_id: str
    parent: str | None
    name: str
    start: float
    end: float | None
    attrs: dict[str, Any]
    error: str | None
    where: Where

    @property
    def kind(self) -> str:
        kind = self.attrs.get("openinference.span.kind")
        if isinstance(kind, str) and kind:
            return kind.upper()
        op = self.attrs.get("gen_ai.operation.name")
        if not isinstance(op, str):  # attributes hold any JSON value
            return "OTHER"
        return "LLM" if op in _LLM_OPS else _KINDS.get(op, "OTHER")

    @property
    def duration(self) -> float | None:
        return None if self.end is None else max(self.end - self.start, 0.0)


def read_spans(records: Iterable[tuple[Where, object]], builder: LabBuilder) -> None:
    """Add the conversations of exported spans (records with their places) to a lab."""
    builder.info["format"] = "agent_spans"
    spans: list[_Span] = []
    for where, value in records:
        rec = where.record(value, "an OTLP export object or an exported span")
        if "resourceSpans" in rec:
            spans.extend(_otlp(rec, where))
        else:
            spans.append(_flat(rec, where))
    if not spans:
        msg = "resourceSpans"
        raise Where(records_source(records)).error(msg, "at least one span", "none")
    reader = AgentReader(builder)
    runs: dict[tuple[str, str], int] = {}
    conversations = _conversations(spans)
    if not conversations:
        kinds = sorted({s.kind or "(no kind)" for s in spans})[:8]
        raise Where(records_source(records)).error(
            None,
            "spans of an agent's run (OpenInference AGENT, LLM or TOOL spans, or GenAI "
            "spans with messages)",
            f"{len(spans):,} spans of kinds {kinds} and no conversation in them",
        )
    for conversation in conversations:
        rec = conversation.record()
        # Runs of one script (same system and user texts) by one agent are samples of one
        # case, so two agents' runs of a test set line up; the trace names the run.
        script = json.dumps(
            [
                (m["role"], m.get("content"))
                for m in rec["messages"]
                if m["role"] in ("system", "developer", "user")
            ]
        )
        sample = runs.get((script, rec["model"]), 0)
        runs[(script, rec["model"])] = sample + 1
        rec["sample"] = sample
        reader.add(rec, conversation.where)


def records_source(records: Iterable[tuple[Where, object]]) -> str:
    """Return the file name the records came from (for an error about all of them)."""
    return next((w.source for w, _ in records), "<spans>")


# -- reading the two shapes -------------------------------------------------------------


def _otlp(rec: Mapping[str, object], where: Where) -> list[_Span]:
    out = []
    for i, rs in enumerate(where.records(rec, "resourceSpans")):
        rw = where.at("resourceSpans").at(i)
        for j, ss in enumerate(rw.records(rs, "scopeSpans") if "scopeSpans" in rs else []):
            sw = rw.at("scopeSpans").at(j)
            for k, span in enumerate(sw.records(ss, "spans") if "spans" in ss else []):
                out.append(_otlp_span(span, sw.at("spans").at(k)))
    return out


def _otlp_span(span: Mapping[str, object], where: Where) -> _Span:
    attrs: dict[str, Any] = {}
    raw = span.get("attributes") or []
    if not isinstance(raw, list):
        msg = "attributes"
        raise where.error(msg, "a list of {key, value} objects", raw)
    for i, item in enumerate(raw):
        aw = where.at("attributes").at(i)
        a = aw.record(item, "a {key, value} attribute object")
        key = aw.string(a, "key", required=True)
        attrs[key] = any_value(a.get("value"), aw)
    status = span.get("status") if isinstance(span.get("status"), dict) else {}
    assert isinstance(status, dict)
    code = status.get("code")
    error = None
    if code in (2, "2", "STATUS_CODE_ERROR", "ERROR"):
        error = str(status.get("message") or "the span's status is ERROR")
    return _Span(
        trace=where.string(span, "traceId", required=True),
        span_id=where.string(span, "spanId", required=True),
        parent=str(span["parentSpanId"]) if span.get("parentSpanId") else None,
        name=str(span.get("name") or ""),
        start=_nanos(span.get("startTimeUnixNano"), where, "startTimeUnixNano") or 0.0,
        end=_nanos(span.get("endTimeUnixNano"), where, "endTimeUnixNano", optional=True),
        attrs=attrs,
        error=error,
        where=where,
    )


def any_value(value: object, where: Where) -> object:
    """Decode OTLP's AnyValue (``{"stringValue": ...}``, ``{"intValue": "3"}``, arrays)."""
    if not isinstance(value, dict) or not value:
        return None
    ((kind, inner),) = list(value.items())[:1]
    if kind == "stringValue":
        return str(inner)
    if kind == "intValue":
        try:
            return int(str(inner))
        except ValueError:
            msg = "value"
            raise where.error(msg, "an integer (intValue)", inner) from None
    if kind in ("doubleValue", "boolValue"):
        return inner
    if kind == "arrayValue" and isinstance(inner, dict):
        return [any_value(v, where) for v in inner.get("values") or []]
    if kind == "kvlistValue" and isinstance(inner, dict):
        out: dict[str, object] = {}
        for kv in inner.get("values") or []:
            if not isinstance(kv, dict):
                continue
            key = kv.get("key")
            if not isinstance(key, str):
                field = "key"
                raise where.error(field, "a string key of a kvlistValue", key)
            out[key] = any_value(kv.get("value"), where)
        return out
    return inner


def _nanos(value: object, where: Where, key: str, *, optional: bool = False) -> float | None:
    if value is None and optional:
        return None
    try:
        return int(str(value)) / 1e9
    except (ValueError, OverflowError):  # not an integer; or beyond any float (4,000 digits)
        raise where.error(key, "nanoseconds since the epoch", value) from None


def _flat(rec: Mapping[str, object], where: Where) -> _Span:
    context = where.record(rec.get("context"), "a context object with trace_id and span_id")
    cw = where.at("context")
    attrs = rec.get("attributes") or {}
    if not isinstance(attrs, dict):
        msg = "attributes"
        raise where.error(msg, "an object of attributes", attrs)
    status = rec.get("status") if isinstance(rec.get("status"), dict) else {}
    assert isinstance(status, dict)
    error = None
    if str(status.get("status_code", "")).upper() in ("ERROR", "STATUSCODE.ERROR"):
        error = str(status.get("description") or "the span's status is ERROR")
    return _Span(
        trace=cw.string(context, "trace_id", required=True),
        span_id=cw.string(context, "span_id", required=True),
        parent=str(rec["parent_id"]) if rec.get("parent_id") else None,
        name=str(rec.get("name") or ""),
        start=_iso(rec.get("start_time"), where, "start_time"),
        end=_iso(rec.get("end_time"), where, "end_time") if rec.get("end_time") else None,
        attrs=dict(attrs),
        error=error,
        where=where,
    )


def _iso(value: object, where: Where, key: str) -> float:
    if not isinstance(value, str):
        raise where.error(key, "an ISO 8601 time", value)
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        raise where.error(key, "an ISO 8601 time", value) from None


# -- replaying a conversation --------------------------------------------------------


@dataclass
class _Conversation:
    key: str
    spans: list[_Span] = field(default_factory=list)

    @property
    def where(self) -> Where:
        first = self.spans[0].where
        return Where(first.source, f"{first.location or '$'} (conversation {self.key})")

    def record(self) -> dict[str, Any]:
        spans = sorted(self.spans, key=lambda s: (s.start, s.end or s.start))
        messages: list[dict[str, Any]] = []
        users_seen = 0
        called: dict[str, str] = {}  # call id -> tool name
        answered: set[str] = set()
        # Unanswered call ids per tool name, oldest first; answered ones are skipped when
        # reached, so matching stays linear however the results are ordered.
        open_calls: dict[str, deque[str]] = {}
        agent = prompt = answer = None
        model = None
        wall: float | None = None
        for span in spans:
            attrs, kind = span.attrs, span.kind
            if kind == "AGENT":
                agent = agent or _first(attrs, _AGENT_KEYS) or span.name or None
                if span.duration is not None:  # the run's wall time: the agent spans' sum
                    wall = (wall or 0.0) + span.duration
                prompt = prompt or as_text(attrs.get("input.value"))
                answer = as_text(attrs.get("output.value")) or answer
            elif kind == "LLM":
                model = model or _first(attrs, _MODEL_KEYS)
                inputs = llm_messages(span.attrs, "input")
                users = [m for m in inputs if m["role"] in ("user", "system", "developer")]
                n_users = sum(1 for m in users if m["role"] == "user")
                if not messages:  # the script up to the first call: system and user
                    messages.extend({"role": m["role"], "content": m["content"]} for m in users)
                    users_seen = n_users
                elif n_users > users_seen:  # a later user turn (a multi-turn session)
                    new = [m for m in users if m["role"] == "user"][users_seen:]
                    messages.extend({"role": "user", "content": m["content"]} for m in new)
                    users_seen = n_users
                for m in inputs:  # tool results only the next model call saw
                    cid = m.get("tool_call_id")
                    cid = None if cid is None else str(cid)  # an id of any JSON type
                    if m["role"] == "tool" and cid in called and cid not in answered:
                        messages.append(
                            {"role": "tool", "tool_call_id": cid, "content": m["content"]}
                        )
                        answered.add(cid)
                for m in llm_messages(span.attrs, "output"):
                    if m["role"] not in (None, "assistant"):
                        continue
                    calls = []
                    for c in m["tool_calls"]:
                        cid = str(c.get("id") or f"{span.span_id}:{len(called)}")
                        called[cid] = str(c["function"]["name"])
                        open_calls.setdefault(called[cid], deque()).append(cid)
                        calls.append({**c, "id": cid})
                    messages.append(
                        {
                            "role": "assistant",
                            "content": m["content"],
                            "tool_calls": calls,
                            **_usage(span),
                        }
                    )
                if span.error:
                    messages.append(
                        {"role": "assistant", "content": None, "error": span.error, **_usage(span)}
                    )
            elif kind == "TOOL":
                name = _first(attrs, ("tool.name", "gen_ai.tool.name")) or span.name
                cid = _first(attrs, ("tool_call.id", "gen_ai.tool.call.id", "message.tool_call_id"))
                if cid is None or cid not in called:
                    cid = _oldest_open(open_calls.get(name), answered)
                if cid is None:  # a tool no model call asked for: record it as its own call
                    cid = f"{span.span_id}"
                    called[cid] = name
                    args = attrs.get("tool.parameters", attrs.get("gen_ai.tool.call.arguments"))
                    args = attrs.get("input.value", args)
                    messages.append(
                        {
                            "role": "assistant",
                            "content": None,
                            "tool_calls": [
                                {"id": cid, "function": {"name": name, "arguments": args or "{}"}}
                            ],
                        }
                    )
                result = attrs.get("output.value", attrs.get("gen_ai.tool.call.result"))
                messages.append(
                    {
                        "role": "tool",
                        "tool_call_id": cid,
                        "content": as_text(result),
                        "latency_s": span.duration,
                        **({"error": span.error} if span.error else {}),
                    }
                )
                answered.add(cid)
        if not any(m["role"] == "user" for m in messages) and prompt:
            messages.insert(0, {"role": "user", "content": prompt})
        last = next((m for m in reversed(messages) if m["role"] == "assistant"), None)
        if answer and (last is None or last.get("tool_calls") or not last.get("content")):
            messages.append({"role": "assistant", "content": answer})
        traces = sorted({s.trace for s in self.spans})
        rec: dict[str, Any] = {} if wall is None else {"duration_s": wall}
        return {
            **rec,
            "run": {"conversation": self.key, "traces": traces},
            "model": agent or model or "agent",
            "messages": [{k: v for k, v in m.items() if v is not None} for m in messages],
        }


def _oldest_open(calls: deque[str] | None, answered: set[str]) -> str | None:
    """Drop answered ids off the front of ``calls``; return the oldest unanswered one."""
    while calls:
        if calls[0] not in answered:
            return calls[0]
        calls.popleft()
    return None


def _usage(span: _Span) -> dict[str, Any]:
    attrs = span.attrs
    tokens = attrs.get("llm.token_count.total")
    for pair in (
        ("llm.token_count.prompt", "llm.token_count.completion"),
        ("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"),
    ):
        if tokens is None:
            numbers = [v for k in pair if isinstance(v := attrs.get(k), int | float)]
            tokens = sum(numbers) if numbers else None
    cost = attrs.get("llm.cost.total")
    # Passed on as they are: the conversation reader checks them where it reads them
    # (a whole number of tokens, a finite cost), naming the message.
    return {
        "latency_s": span.duration,
        "tokens": tokens if isinstance(tokens, int | float) else None,
        "cost": cost if isinstance(cost, int | float) else None,
    }


def _first(attrs: Mapping[str, Any], keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = attrs.get(key)
        if value not in (None, ""):
            return str(value)
    return None


def _conversations(spans: list[_Span]) -> list[_Conversation]:
    """Group spans by session (any span of a trace may carry it), else by trace."""
    session_of: dict[str, str] = {}
    for span in spans:
        session = _first(span.attrs, _SESSION_KEYS)
        if session is not None:
            session_of.setdefault(span.trace, session)
    groups: dict[str, _Conversation] = {}
    for span in spans:
        key = session_of.get(span.trace, span.trace)
        groups.setdefault(key, _Conversation(key)).spans.append(span)
    # Traces of non-agent work (no LLM, tool or agent span) are not conversations.
    return [c for c in groups.values() if any(s.kind in ("LLM", "TOOL", "AGENT") for s in c.spans)]
