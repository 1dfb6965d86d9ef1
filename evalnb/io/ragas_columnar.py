"""ragas datasets read by columns: one Arrow conversion and whole-column checks, no per-record loop.

For ragas JSONL files and in-memory ``EvaluationDataset`` records (their ``to_list()``).

The record path (:func:`evalnb.io.ragas_data.read_ragas_records`) checks every record and
names the bad one; at 20k samples it spends about a second in ``json.loads`` and Python
dicts. Here Arrow's JSON reader parses the file into typed columns and the lab's tables
are built from whole-column expressions. Arrow's reader is strict where it matters (a field
that changes type between records is an error, not a silent cast), and whenever anything
is not plainly a single-turn ragas dataset this returns ``None`` and the caller runs the
record path, which then reads it or raises the error naming the line: one set of rules.

What goes to the record path: nested values deeper than :data:`_MAX_OPENERS` brackets a
line (Arrow's parser recurses), surrogate escapes, two values on one line, null or
non-text prompts, lists holding anything but text (ids: text or integers), extra fields
holding anything but text, integers, booleans or lists of them, an extra field missing
from some records, multi-turn samples, and repeated (case, model) pairs.
"""

from __future__ import annotations

import io
import json
from typing import TYPE_CHECKING

import polars as pl
import pyarrow as pa
import pyarrow.json as pa_json

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

from evalnb.io.columnar import cases_of, has_null_items
from evalnb.io.media_fields import column_may_name_media
from evalnb.io.source import SURROGATE_ESCAPE
from evalnb.lab.schema import SCHEMAS, empty

__all__ = ["ragas_jsonl_tables", "ragas_object_tables"]

# Arrow's JSON parser recurses once per bracket: a line opening more than this many goes
# to the record path, whose parser reports depth as an error (measured: 200k nested
# brackets crash the Arrow reader of pyarrow 26 with a segmentation fault).
_MAX_OPENERS = 256
_KNOWN = (
    "user_input",
    "response",
    "reference",
    "retrieved_contexts",
    "reference_contexts",
    "synthesizer_name",
    "multi_responses",
    "retrieved_context_ids",
    "id",
    "model",
)
_OUTPUT_EXTRA = ("multi_responses", "retrieved_context_ids")
_TEXT_LISTS = ("retrieved_contexts", "reference_contexts", "multi_responses")
_PLAIN = (pl.String, pl.Int64, pl.Boolean)
_SCALARS = (str, int, float, type(None))  # bool is an int
_CASE_FIELDS = {name: name for name in ("case_id", "prompt", "expected", "corpus", "question_type")}


def ragas_jsonl_tables(text: str, model: str) -> dict[str, pl.DataFrame] | None:
    """Build the lab tables of a ragas JSONL text, or ``None`` to leave it to the record path."""
    if SURROGATE_ESCAPE.search(text):
        return None
    data = text.encode("utf-8")
    most, values = _plain_lines(data)
    if most > _MAX_OPENERS:
        return None
    try:
        table = pa_json.read_json(io.BytesIO(data))
        # Arrow's JSON reader builds a list whose first item is null with too short a
        # values array (pyarrow 26: offsets [0, 2] over one value); a full validation
        # catches what it got wrong before Polars reads past the end.
        table.validate(full=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        # Not plain typed columns (a type that changes, a value that is not an object),
        # or a table Arrow built wrong: the record path reads it or names the line and
        # field at fault.
        return None
    frame = pl.from_arrow(table)
    if not isinstance(frame, pl.DataFrame) or frame.height != values:
        return None  # two values on a line: the record path names it
    return _tables(frame, model)


def ragas_object_tables(
    records: Sequence[Mapping[str, object]], model: str
) -> dict[str, pl.DataFrame] | None:
    """Build the lab tables of an ``EvaluationDataset``'s records (``to_list()``), or ``None``.

    Arrow converts the records column by column and refuses a field whose type changes
    (it does not cast); only records of plain fields go to it (text, numbers, flat lists),
    as its conversion recurses into nested values.
    """
    if not records or not all(_flat(r) for r in records):
        return None
    try:
        table = pa.Table.from_pylist([dict(r) for r in records])
    except (
        pa.ArrowInvalid,
        pa.ArrowTypeError,
        pa.ArrowNotImplementedError,
        UnicodeError,
        OverflowError,
    ):
        # A field whose type changes, text that is not valid Unicode or an integer past
        # 64 bits: the record path reads it or names the sample and field at fault.
        return None
    frame = pl.from_arrow(table)
    return _tables(frame, model) if isinstance(frame, pl.DataFrame) else None


def _flat(record: object) -> bool:
    """Tell whether a record holds only scalars and lists of scalars."""
    if not isinstance(record, dict):
        return False
    for value in record.values():
        if isinstance(value, list):
            if not all(isinstance(x, _SCALARS) for x in value):
                return False
        elif not isinstance(value, _SCALARS):
            return False
    return True


def _tables(frame: pl.DataFrame, model: str) -> dict[str, pl.DataFrame] | None:
    """Build the lab tables of ragas samples held as columns, or ``None`` for the record path."""
    conv = _columns(frame, model)
    if conv is None:
        return None
    # The generic columnar importer's case building: content ids where none is given,
    # and None when one id has two contents.
    cases = cases_of(conv, _CASE_FIELDS)
    if cases is None:
        return None
    cases_table, case_id = cases
    outputs = conv.with_columns(case_id=case_id).select(
        "case_id",
        "model",
        pl.lit(0, pl.Int64).alias("sample"),
        "actual",
        "context",
        pl.col("output_extra").alias("extra"),
        pl.lit([], pl.List(pl.String)).alias("media"),
        pl.lit([], pl.List(pl.String)).alias("context_media"),
    )
    if outputs.select(pl.struct("case_id", "model").is_duplicated().any()).item():
        return None  # one answer twice: the record path names both lines
    tables = {name: empty(name) for name in SCHEMAS}
    # ragas has no categories: null, as the record path leaves them
    tables["cases"] = cases_table.with_columns(categories=pl.lit(None, pl.List(pl.String)))
    full = pl.DataFrame(schema=SCHEMAS["outputs"])
    tables["outputs"] = pl.concat([full, outputs], how="diagonal_relaxed").cast(SCHEMAS["outputs"])
    tables["info"] = pl.DataFrame(
        [{"key": "format", "value": json.dumps("ragas")}], schema=SCHEMAS["info"]
    )
    return tables


def _plain_lines(data: bytes) -> tuple[int, int]:
    """Return the most brackets a line opens and how many lines are not blank.

    The opening brackets bound a line's depth from above (some may sit inside strings).
    Python's ``strip`` would also skip a line of Unicode white space, which Arrow refuses:
    such a text goes to the record path. (Bytes methods run in C: 37 ms for 25 MB, where
    the same counts with NumPy masks took 127 ms.)
    """
    lines = data.split(b"\n")
    most = max(line.count(b"[") + line.count(b"{") for line in lines)
    return most, sum(1 for line in lines if line.strip())


def _columns(frame: pl.DataFrame, model: str) -> pl.DataFrame | None:
    """Return the record path's fields as columns, or ``None`` where a value needs that path."""
    schema = frame.schema
    if schema.get("user_input") != pl.String or frame["user_input"].null_count():
        return None  # multi-turn samples, or a record without a prompt
    for name in ("response", "reference", "synthesizer_name", "model"):
        if name in schema and schema[name] not in (pl.String, pl.Null):
            return None
    for name in (*_TEXT_LISTS, "retrieved_context_ids", "reference_context_ids"):
        if name in schema and not _plain_list(frame, name, texts_only=name in _TEXT_LISTS):
            return None
    if column_may_name_media(frame, "retrieved_contexts"):
        return None  # images among the contexts: the record path reads them
    if "id" in schema and schema["id"] not in (pl.String, pl.Int64, pl.Null):
        return None
    extra = [c for c in frame.columns if c not in _KNOWN]
    if any(not _plain_extra(frame, c) for c in extra):
        return None
    out_extra = [c for c in _OUTPUT_EXTRA if c in schema and schema[c] != pl.Null]
    if any(frame[c].null_count() for c in out_extra):
        return None  # a field some records lack: the record path writes each record's own
    col = {name: pl.col(name) if name in schema else pl.lit(None) for name in _KNOWN}
    reference = col["reference"].cast(pl.String)
    given_id = col["id"].cast(pl.String)
    return frame.select(
        given_id.alias("case_id"),
        pl.col("user_input").alias("prompt"),
        pl.when(reference.is_not_null() & (reference != ""))
        .then(pl.concat_list(reference))
        .otherwise(pl.lit([], pl.List(pl.String)))
        .alias("expected"),
        _texts(col["reference_contexts"]).alias("corpus"),
        col["synthesizer_name"].cast(pl.String).alias("question_type"),
        _json(extra).alias("extra"),
        # the record path: rec.get("model") or the model named when loading
        col["model"].cast(pl.String).replace("", None).fill_null(model).alias("model"),
        col["response"].cast(pl.String).alias("actual"),
        _texts(col["retrieved_contexts"]).alias("context"),
        _json(out_extra).alias("output_extra"),
    )


def _plain_list(frame: pl.DataFrame, name: str, *, texts_only: bool) -> bool:
    dtype = frame.schema[name]
    if dtype == pl.Null:
        return True
    allowed = (pl.List(pl.String),) if texts_only else (pl.List(pl.String), pl.List(pl.Int64))
    if dtype not in allowed:
        return False
    return not has_null_items(frame, name)


def _plain_extra(frame: pl.DataFrame, name: str) -> bool:
    """Tell whether a field of the user's serialises to Python's JSON here, in every record."""
    dtype = frame.schema[name]
    if isinstance(dtype, pl.List):
        if dtype.inner not in _PLAIN:
            return False
        if has_null_items(frame, name):
            return False
    elif dtype not in _PLAIN:
        return False  # floats print differently; objects and nulls go the record way
    return frame[name].null_count() == 0


def _texts(expr: pl.Expr) -> pl.Expr:
    return expr.cast(pl.List(pl.String)).fill_null(pl.lit([], pl.List(pl.String)))


def _json(columns: list[str]) -> pl.Expr:
    """Compact JSON of these fields (in the file's order): the record path's ``to_json``."""
    if not columns:
        return pl.lit("{}")
    return pl.struct(columns).struct.json_encode()
