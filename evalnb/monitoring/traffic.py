"""Live traffic as requests: one row per trace, from exported spans, Parquet files or a frame.

A request is what a monitor scores: the question, the answer, the retrieved context, the
model and the time, keyed by the trace id. From exported spans (OTLP JSON as the
OpenTelemetry Collector's file exporter writes it, one ``ExportTraceServiceRequest`` a line;
or flat spans, one a line) they come from:

* the root span (no parent): the time (its start), ``input.value`` / ``output.value``
  (OpenInference) or ``gen_ai.prompt`` / ``gen_ai.completion``, an error status, and
  ``evalnb.expected`` / ``evalnb.condition`` when the application knows the expected answer
  or the condition an answer must meet (text matching's H2O condition);
* LLM spans (OpenInference ``LLM``, GenAI ``chat``...): the model, and the question (the
  last user message of the first call) and answer (the last call's output) when the root
  has none;
* RETRIEVER spans: ``retrieval.documents.<i>.document.content``, in order.

A trace's spans may come in several export batches (lines, files): they wait in the store
until its root span arrives (a root ends, and is exported, last).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import polars as pl

from evalnb.io.span_messages import as_text, llm_messages
from evalnb.io.spans import any_value

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from evalnb.io.fields import Where

__all__ = ["REQUESTS", "SpanBatch", "requests_frame", "requests_from_frame", "spans_of_line"]

REQUESTS = pl.Schema(
    {
        "trace_id": pl.String(),
        "at": pl.Datetime("us", "UTC"),
        "model": pl.String(),
        "prompt": pl.String(),
        "actual": pl.String(),
        "context": pl.List(pl.String()),
        "expected": pl.List(pl.String()),
        "condition": pl.String(),
        "error": pl.String(),
    }
)
_LLM_OPS = {"chat", "text_completion", "generate_content", "completion"}
_MODEL_KEYS = ("llm.model_name", "gen_ai.response.model", "gen_ai.request.model")
_DOC = "retrieval.documents."


@dataclass(slots=True)
class SpanLite:
    """The parts of a span a request needs (attributes decoded)."""

    trace: str
    parent: str | None
    start: float
    kind: str
    attrs: dict[str, Any]
    error: str | None
    service: str | None

    def as_json(self) -> str:
        """Return the span as JSON, to wait in the store for its trace's root."""
        fields = ("trace", "parent", "start", "kind", "attrs", "error", "service")
        return json.dumps({f: getattr(self, f) for f in fields}, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> SpanLite:
        """Read a span written by :meth:`as_json`."""
        return cls(**json.loads(text))


def _kind(attrs: Mapping[str, Any]) -> str:
    kind = attrs.get("openinference.span.kind")
    if isinstance(kind, str) and kind:
        return kind.upper()
    op = attrs.get("gen_ai.operation.name")
    return "LLM" if isinstance(op, str) and op in _LLM_OPS else "OTHER"


def _status_error(status: object, *, flat: bool) -> str | None:
    if not isinstance(status, dict):
        return None
    if flat:
        if str(status.get("status_code", "")).upper() in ("ERROR", "STATUSCODE.ERROR"):
            return str(status.get("description") or "the span's status is ERROR")
        return None
    if status.get("code") in (2, "2", "STATUS_CODE_ERROR", "ERROR"):
        return str(status.get("message") or "the span's status is ERROR")
    return None


def spans_of_line(value: object, where: Where) -> list[SpanLite]:
    """Return the spans of one parsed line: an OTLP export request, or one flat span."""
    rec = where.record(value, "an OTLP ExportTraceServiceRequest or an exported span")
    if "resourceSpans" not in rec:
        return [_flat(rec, where)]
    out: list[SpanLite] = []
    for i, rs in enumerate(_objects(rec, "resourceSpans", where)):
        rw = where.at("resourceSpans").at(i)
        service = None
        resource = rs.get("resource")
        if isinstance(resource, dict):
            for item in resource.get("attributes") or []:
                if isinstance(item, dict) and item.get("key") == "service.name":
                    service = as_text(any_value(item.get("value"), rw))
        for j, ss in enumerate(_objects(rs, "scopeSpans", rw)):
            sw = rw.at("scopeSpans").at(j)
            out.extend(
                _otlp_span(span, sw, k, service) for k, span in enumerate(_objects(ss, "spans", sw))
            )
    return out


def _objects(obj: Mapping[str, Any], key: str, where: Where) -> list[dict[str, Any]]:
    """Return ``obj[key]``, a list of objects (none when absent); a place only for an error."""
    value = obj.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise where.error(key, "a list of objects", value)
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            raise where.at(key).at(i).error(None, "a JSON object", item)
    return value


def _attributes(raw: object) -> dict[str, Any]:
    """Decode ``{key, value}`` attributes; the common string values without a call each.

    Raises KeyError, TypeError or AttributeError on anything else than a list of such
    objects: the caller then reads the span again the careful way, for the error's place.
    """
    attrs: dict[str, Any] = {}
    for item in raw or []:  # type: ignore[attr-defined]
        value = item.get("value")
        key = item["key"]
        if not isinstance(key, str):
            raise TypeError(key)
        if type(value) is dict and "stringValue" in value and len(value) == 1:
            attrs[key] = str(value["stringValue"])
        else:
            attrs[key] = _MISSING if value is None else value
    return attrs


_MISSING = object()


def _otlp_span(span: Mapping[str, object], sw: Where, k: int, service: str | None) -> SpanLite:
    raw = span.get("attributes") or []
    try:
        attrs = _attributes(raw) if isinstance(raw, list) else None
    except (KeyError, TypeError, AttributeError):
        attrs = None
    if attrs is None:
        # The careful way, only for a span the quick way could not read: its place, named.
        where = sw.at("spans").at(k)
        if not isinstance(raw, list):
            field = "attributes"
            raise where.error(field, "a list of {key, value} objects", raw)
        for i, item in enumerate(raw):
            if not isinstance(item, dict) or not isinstance(item.get("key"), str):
                field = "attributes"
                raise (
                    where.at("attributes")
                    .at(i)
                    .error(field, "a {key, value} attribute object", item)
                )
        attrs = {}
    place: Where | None = None  # built once, and only for a span with other values than text
    for key, value in attrs.items():
        if type(value) is dict or value is _MISSING:  # not a plain string: decode it
            place = place or sw.at("spans").at(k)
            attrs[key] = any_value(None if value is _MISSING else value, place)
    trace = span.get("traceId")
    if not isinstance(trace, str) or not trace:
        field = "traceId"
        raise sw.at("spans").at(k).error(field, "the trace id (hex text)", trace)
    parent = span.get("parentSpanId")
    start = span.get("startTimeUnixNano")
    try:
        seconds = int(start) / 1e9 if isinstance(start, int) else int(str(start)) / 1e9
    except (ValueError, OverflowError):
        field = "startTimeUnixNano"
        raise sw.at("spans").at(k).error(field, "nanoseconds since the epoch", start) from None
    return SpanLite(
        trace=trace,
        parent=str(parent) if parent else None,
        start=seconds,
        kind=_kind(attrs),
        attrs=attrs,
        error=_status_error(status, flat=False) if (status := span.get("status")) else None,
        service=service,
    )


def _flat(rec: Mapping[str, object], where: Where) -> SpanLite:
    context = where.record(rec.get("context"), "a context object with trace_id and span_id")
    attrs = rec.get("attributes") or {}
    if not isinstance(attrs, dict):
        field = "attributes"
        raise where.error(field, "an object of attributes", attrs)
    start = rec.get("start_time")
    try:
        at = datetime.fromisoformat(str(start).replace("Z", "+00:00")).timestamp()
    except ValueError:
        field = "start_time"
        raise where.error(field, "an ISO 8601 time", start) from None
    resource = rec.get("resource")
    service = None
    if isinstance(resource, dict) and isinstance(resource.get("attributes"), dict):
        service = as_text(resource["attributes"].get("service.name"))
    return SpanLite(
        trace=where.at("context").string(context, "trace_id", required=True),
        parent=str(rec["parent_id"]) if rec.get("parent_id") else None,
        start=at,
        kind=_kind(attrs),
        attrs=dict(attrs),
        error=_status_error(rec.get("status"), flat=True),
        service=service,
    )


def _last_user(messages: list[dict[str, Any]]) -> str | None:
    users = [m.get("content") for m in messages if m.get("role") == "user"]
    return as_text(users[-1]) if users else None


def _documents(attrs: Mapping[str, Any]) -> list[str]:
    docs: dict[int, str] = {}
    for key, value in attrs.items():
        if key.startswith(_DOC) and key.endswith(".document.content"):
            index = key[len(_DOC) : -len(".document.content")]
            if index.isascii() and index.isdigit() and len(index) < 7:
                text = as_text(value)
                if text is not None:
                    docs[int(index)] = text
    return [docs[i] for i in sorted(docs)]


def request_of(spans: list[SpanLite]) -> dict[str, Any]:
    """Return the request a trace's spans describe (its root among them); see the module docstring."""
    spans = sorted(spans, key=lambda s: s.start)
    root = next(s for s in spans if s.parent is None)
    attrs = root.attrs
    prompt = as_text(attrs.get("input.value") or attrs.get("gen_ai.prompt"))
    actual = as_text(attrs.get("output.value") or attrs.get("gen_ai.completion"))
    model = None
    context: list[str] = []
    llm = [s for s in spans if s.kind == "LLM"]
    for s in llm:
        model = model or next((str(s.attrs[k]) for k in _MODEL_KEYS if s.attrs.get(k)), None)
    if prompt is None and llm:
        prompt = _last_user(llm_messages(llm[0].attrs, "input"))
    if actual is None and llm:
        outputs = llm_messages(llm[-1].attrs, "output")
        actual = as_text(outputs[-1].get("content")) if outputs else None
    for s in spans:
        if s.kind == "RETRIEVER":
            context.extend(_documents(s.attrs))
    expected = attrs.get("evalnb.expected")
    condition = attrs.get("evalnb.condition")
    return {
        "trace_id": root.trace,
        "at": datetime.fromtimestamp(root.start, UTC),
        "model": model or root.service or "app",
        "prompt": prompt,
        "actual": actual,
        "context": context or None,
        "expected": [as_text(expected)] if expected is not None else None,
        "condition": as_text(condition),
        "error": root.error or next((s.error for s in spans if s.error), None),
    }


@dataclass
class SpanBatch:
    """Spans gathered from lines, grouped by trace; complete traces become requests."""

    traces: dict[str, list[SpanLite]] = field(default_factory=dict)

    def add(self, spans: Iterable[SpanLite]) -> None:
        """Add spans (of any traces)."""
        for span in spans:
            self.traces.setdefault(span.trace, []).append(span)

    def split(self) -> tuple[list[dict[str, Any]], list[SpanLite]]:
        """Return the requests of traces whose root is here, and the spans still waiting."""
        done, waiting = [], []
        for spans in self.traces.values():
            if any(s.parent is None for s in spans):
                done.append(request_of(spans))
            else:
                waiting.extend(spans)
        return done, waiting


def requests_frame(requests: list[dict[str, Any]]) -> pl.DataFrame:
    """Return the requests (dicts of ``REQUESTS``' fields) as a frame, built column by column.

    Through Arrow: a list column made from Python lists is one conversion there, and one
    Series per row in Polars (a batch has tens of thousands of rows).
    """
    import pyarrow as pa  # noqa: PLC0415 - polars' own dependency; here, only when used

    columns = {name: [r[name] for r in requests] for name in REQUESTS}
    arrow = pa.table(
        {
            name: pa.array(values, type=pa.list_(pa.string()))
            if isinstance(REQUESTS[name], pl.List)
            else pa.array(values)
            for name, values in columns.items()
            if name != "at"
        }
    )
    frame = pl.from_arrow(arrow)
    assert isinstance(frame, pl.DataFrame)  # a table gives a frame
    at = pl.Series("at", columns["at"], dtype=pl.Datetime("us", "UTC"))
    return frame.with_columns(at).select(list(REQUESTS)).cast(dict(REQUESTS))  # type: ignore[arg-type]


def requests_from_frame(frame: pl.DataFrame, source: str) -> pl.DataFrame:
    """Return requests from a frame (or Parquet) with ``trace_id``, ``at``, ``prompt``, ``actual``...

    ``context`` and ``expected`` may be text or lists of text; ``model`` defaults to
    ``app``. A missing or null ``trace_id`` or ``at`` is an error naming the row.
    """
    missing = [c for c in ("trace_id", "at", "actual") if c not in frame.columns]
    if missing:
        msg = (
            f"{source}: a frame of requests needs the columns {missing}; it has "
            f"{frame.columns[:12]}. Name them trace_id, at (a time), prompt, actual, context"
        )
        raise ValueError(msg)
    out = frame.select([c for c in REQUESTS if c in frame.columns])
    for name in ("context", "expected"):
        if name in out.columns and out.schema[name] == pl.String():
            out = out.with_columns(
                pl.when(pl.col(name).is_null())
                .then(None)
                .otherwise(pl.concat_list(name))
                .alias(name)
            )
    if out.schema["at"] != pl.Datetime("us", "UTC"):
        try:
            at = out.get_column("at")
            if at.dtype == pl.String():
                at = at.str.to_datetime(time_zone="UTC")
            out = out.with_columns(
                at.cast(pl.Datetime("us")).dt.replace_time_zone("UTC").alias("at")
            )
        except (pl.exceptions.PolarsError, TypeError) as err:
            msg = f"{source}: column `at` must be times (datetime, or ISO 8601 text); {err}"
            raise ValueError(msg) from None
    for name, dtype in REQUESTS.items():
        if name not in out.columns:
            out = out.with_columns(pl.lit(None, dtype=dtype).alias(name))
    out = out.with_columns(pl.col("model").fill_null("app")).select(list(REQUESTS))
    bad = out.select(pl.col("trace_id").is_null() | pl.col("at").is_null()).to_series()
    if bad.any():
        row = int(bad.arg_true()[0])
        msg = f"{source}: row {row} has no trace_id or no at; every request needs both"
        raise ValueError(msg)
    return out.cast(dict(REQUESTS))  # type: ignore[arg-type]
