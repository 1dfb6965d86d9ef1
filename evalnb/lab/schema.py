"""Fixed schemas of the lab tables: column names and types are public API."""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["JUDGE_CARD_KEY", "SCHEMAS", "TABLES", "conform", "empty", "sql_type"]

# The ``info`` key under which a judge reliability card is kept (then ``evaluator.metric``):
# the report shows it, the calibration bundle carries it.
JUDGE_CARD_KEY = "judge_card/"

_STR = pl.String()
_LIST = pl.List(pl.String())
_F64 = pl.Float64()
_I64 = pl.Int64()
_BOOL = pl.Boolean()
_TS = pl.Datetime("us", "UTC")
_BYTES = pl.Binary()

CASES = pl.Schema(
    {
        "case_id": _STR,
        "test_id": _STR,
        "prompt": _STR,
        "messages": _STR,
        "system": _STR,
        "expected": _LIST,
        "condition": _STR,
        "constraints": _STR,
        "categories": _LIST,
        "topic": _STR,
        "question_type": _STR,
        # ISO 639-1 code of the case's language: set by the user or the importer, else
        # detected (Lab.with_languages); null until then.
        "language": _STR,
        "corpus": _LIST,
        "perturbation_of": _STR,
        "perturbation": _STR,
        "perturbation_intensity": _STR,
        "extra": _STR,
        # The case's images, audio, video and documents, in order: ids of the media table.
        "media": _LIST,
    }
)

OUTPUTS = pl.Schema(
    {
        "case_id": _STR,
        "model": _STR,
        "sample": _I64,
        "actual": _STR,
        "reasoning": _STR,
        "context": _LIST,
        "duration_s": _F64,
        "cost": _F64,
        "error": _STR,
        # Row-level source fields we did not map (`extra` was first on cases only, but a
        # test lab row is a (case, model) pair and its unknown keys may differ per model).
        "extra": _STR,
        # Media in the answer (an image a model drew), and in the retrieved contexts (a page
        # image, a figure): ids of the media table, in order.
        "media": _LIST,
        "context_media": _LIST,
    }
)

SCORES = pl.Schema(
    {
        "case_id": _STR,
        "model": _STR,
        "sample": _I64,
        "evaluator": _STR,
        "metric": _STR,
        "value": _F64,
        "detail": _STR,
        # Canonical JSON of the evaluator parameters that produced the value: re-running
        # with the same ones skips the row (incremental evaluation).
        "params": _STR,
    }
)

METRICS = pl.Schema(
    {
        "evaluator": _STR,
        "metric": _STR,
        "domain": _STR,
        "title": _STR,
        "description": _STR,
        "min": _F64,
        "max": _F64,
        "higher_is_better": _BOOL,
        "default_threshold": _F64,
        "primary": _BOOL,
    }
)

LABELS = pl.Schema(
    {
        "label_id": _STR,
        "case_id": _STR,
        "model": _STR,
        "sample": _I64,
        "evaluator": _STR,
        "metric": _STR,
        "verdict": _STR,
        "reviewer": _STR,
        "note": _STR,
        "created_at": _TS,
        "batch_id": _STR,
    }
)

THRESHOLDS = pl.Schema(
    {
        "evaluator": _STR,
        "metric": _STR,
        "threshold": _F64,
        "source": _STR,
        "n_labels": _I64,
        "agreement": _F64,
        "ci_low": _F64,
        "ci_high": _F64,
        "created_at": _TS,
    }
)

# Beyond H2O's tables: the model catalogue (H2O keeps connection, collection and LLM names per
# model) and lab-level facts (name, description, source format, docs cache) need a home so an
# export can give back what was imported.
MODELS = pl.Schema({"model": _STR, "key": _STR, "meta": _STR})
INFO = pl.Schema({"key": _STR, "value": _STR})

# A corpus's chunks (evalnb.corpus): the documents test cases are generated from, each chunk
# an exact slice [start, end) of its page's (PDF) or document's text.
# An agent's run of a conversation, one row a message, and one a tool call: an assistant
# message calling three tools is three rows (its text on the first). A call's result and
# error are those of the tool message answering it (joined by ``tool_call_id`` at import).
STEPS = pl.Schema(
    {
        "case_id": _STR,
        "model": _STR,
        "sample": _I64,
        "step": _I64,
        "role": _STR,
        "content": _STR,
        "tool_call_id": _STR,
        "tool_name": _STR,
        "tool_args": _STR,  # the arguments as sent: JSON text (canonical when it parsed)
        "args_valid": _BOOL,  # false: the arguments were not valid JSON (kept as text)
        "tool_result": _STR,
        "error": _STR,
        "latency_s": _F64,
        "tokens": _I64,
        "cost": _F64,
    }
)

# The tool calls a conversation should make, in order (ragas' ``reference_tool_calls``).
REFERENCE_CALLS = pl.Schema(
    {"case_id": _STR, "position": _I64, "tool_name": _STR, "tool_args": _STR}
)

CHUNKS = pl.Schema(
    {
        "chunk_id": _STR,
        "doc": _STR,
        "page": _I64,
        "heading": _STR,
        "start": _I64,
        "end": _I64,
        "text": _STR,
        "n_tokens": _I64,
        "topic": _STR,
    }
)

# Test validation (evalnb.validate_tests): scores of a test case itself (its expected answer
# against its source), not of a model's answer, so apart from ``scores`` and leaderboards.
VALIDATION = pl.Schema(
    {
        "case_id": _STR,
        "metric": _STR,
        "value": _F64,
        "detail": _STR,
        "params": _STR,
    }
)

# Curation of a generated suite (lab.curation.curate): every accept / edit / exclude / restore a
# reviewer makes, appended and never changed, with the case as it was (JSON) so an exclusion
# applied to ``cases`` can still be undone.
CURATION = pl.Schema(
    {
        "curation_id": _STR,
        "case_id": _STR,
        "action": _STR,
        "prompt": _STR,
        "expected": _LIST,
        "reviewer": _STR,
        "note": _STR,
        "created_at": _TS,
        "snapshot": _STR,
    }
)

# The MRM workflow's audit trail (evalnb.workflow): every step configured, started, finished,
# failed or approved, appended and never changed; a step's status is folded from it.
WORKFLOW_EVENTS = pl.Schema(
    {
        "event_id": _STR,
        "step": _STR,
        "event": _STR,
        "run_id": _STR,
        "params": _STR,
        "inputs": _STR,
        "summary": _STR,
        "who": _STR,
        "note": _STR,
        "at": _TS,
        "duration_s": _F64,
    }
)

# Relevance judgments (TREC qrels, BEIR's qrels/<split>.tsv, reviewers' grades): how relevant
# a document is to a case's question. An int grade; >= 1 is relevant (trec_eval's default
# level), 0 or below judged not relevant, a document without a row unjudged. ``source``
# says who judged (a file's name, ``reviewer:<name>``, ``judge:<id>``).
QRELS = pl.Schema({"case_id": _STR, "doc_id": _STR, "relevance": _I64, "source": _STR})

# What a retriever returned for a case: one row a document, ``model`` the retriever (each
# configuration under test is a model, as an answering system is), ``sample`` the run.
# ``rank`` as given (a TREC run's fourth field); measures rank by ``score`` as trec_eval
# does (score descending, ties by document id descending).
RETRIEVALS = pl.Schema(
    {
        "case_id": _STR,
        "model": _STR,
        "sample": _I64,
        "rank": _I64,
        "doc_id": _STR,
        "score": _F64,
    }
)

# Images, audio, video and documents, once each (content-addressed: media_id is the sha256
# of the bytes; evalnb/media/items.py states the rules). ``status``: ok, remote (a URL kept,
# never fetched: no bytes), unavailable (cut short or undecodable: kept, counted, never
# judged), with its ``reason``.
MEDIA = pl.Schema(
    {
        "media_id": _STR,
        "kind": _STR,
        "mime": _STR,
        "data": _BYTES,
        "uri": _STR,
        "width": _I64,
        "height": _I64,
        "seconds": _F64,
        "size": _I64,
        "status": _STR,
        "reason": _STR,
    }
)

SCHEMAS: Mapping[str, pl.Schema] = {
    "cases": CASES,
    "outputs": OUTPUTS,
    "scores": SCORES,
    "metrics": METRICS,
    "labels": LABELS,
    "thresholds": THRESHOLDS,
    "models": MODELS,
    "info": INFO,
    "chunks": CHUNKS,
    "steps": STEPS,
    "reference_calls": REFERENCE_CALLS,
    "validation": VALIDATION,
    "curation": CURATION,
    "workflow_events": WORKFLOW_EVENTS,
    "qrels": QRELS,
    "retrievals": RETRIEVALS,
    "media": MEDIA,
}
TABLES: tuple[str, ...] = tuple(SCHEMAS)


def empty(table: str) -> pl.DataFrame:
    """Return an empty frame with the fixed schema of ``table``."""
    return pl.DataFrame(schema=SCHEMAS[table])


def conform(frame: pl.DataFrame, table: str) -> pl.DataFrame:
    """Cast ``frame`` to the schema of ``table``: columns in order, missing ones null.

    Raises
    ------
    ValueError
        If ``frame`` has columns the table does not know.
    """
    schema = SCHEMAS[table]
    unknown = [c for c in frame.columns if c not in schema]
    if unknown:
        msg = (
            f"table {table!r} has no columns {unknown}; expected a subset of "
            f"{list(schema)}. Put free-form fields into `extra` as JSON."
        )
        raise ValueError(msg)
    if frame.schema == schema:
        return frame  # already the table's columns, in order (every evaluate's scores)
    if frame.width == 0:
        # A frame with no columns cannot broadcast literals to its height: build it directly.
        return pl.DataFrame({n: pl.Series(n, [None] * frame.height, d) for n, d in schema.items()})
    return frame.select(
        frame[name].cast(dtype) if name in frame.columns else pl.lit(None, dtype).alias(name)
        for name, dtype in schema.items()
    )


def sql_type(dtype: pl.DataType) -> str:
    """Return the DuckDB column type that holds a lab column of Polars type ``dtype``."""
    if dtype == pl.String():
        return "VARCHAR"
    if dtype == pl.List(pl.String()):
        return "VARCHAR[]"
    if dtype == pl.Float64():
        return "DOUBLE"
    if dtype == pl.Int64():
        return "BIGINT"
    if dtype == pl.Boolean():
        return "BOOLEAN"
    if dtype == pl.Binary():
        return "BLOB"
    if isinstance(dtype, pl.Datetime):
        return "TIMESTAMPTZ"
    msg = f"no DuckDB type for Polars dtype {dtype!r}; extend `sql_type`"
    raise TypeError(msg)
