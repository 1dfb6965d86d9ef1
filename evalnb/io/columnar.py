"""Columnar import of a generic table (a Polars frame, Parquet) without a per-record loop.

The record importer (:func:`evalnb.io.tabular.read_records`) checks every record and names
the bad one. This path builds the same tables from whole-column expressions for frames
whose columns already hold the right types and break no rule. Whenever a check fails it
returns ``None`` and the caller runs the record importer, which then raises the error
naming the record: one set of rules, one wording of every error.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import polars as pl

from evalnb.io.builder import content_ids
from evalnb.io.fields import MAX_SAMPLE
from evalnb.io.media_fields import column_may_name_media
from evalnb.io.tabular import (
    KEEP_EMPTY_FIELDS,
    LIST_FIELDS,
    MEDIA_FIELDS,
    NUMBER_FIELDS,
    OUTPUT_FIELDS,
    resolve_mapping,
)
from evalnb.lab.schema import SCHEMAS, empty

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["frame_tables", "has_null_items"]

# Unmapped columns of these types serialise to the same JSON in Polars and in Python.
_PLAIN_EXTRA = (
    pl.String,
    pl.Int8,
    pl.Int16,
    pl.Int32,
    pl.Int64,
    pl.UInt8,
    pl.UInt16,
    pl.UInt32,
    pl.Boolean,
    pl.Null,
)


def has_null_items(frame: pl.DataFrame, col: str) -> bool:
    """Tell whether any list of list column ``col`` holds a null item."""
    return bool(frame.select(pl.col(col).list.eval(pl.element().is_null()).list.any().any()).item())


def _field(frame: pl.DataFrame, name: str, col: str) -> pl.Expr | None:
    """Convert the column of field ``name``; ``None`` when a value needs the record path."""
    dtype = frame.schema[col]
    c = pl.col(col)
    if name in LIST_FIELDS:
        if dtype == pl.Null:
            return pl.lit([], pl.List(pl.String)).alias(name)
        if dtype == pl.List(pl.String):
            if has_null_items(frame, col):
                return None  # a null item: the record path names it
            return c.fill_null([]).alias(name)
        if dtype == pl.String:
            return _string_lists(frame, col, name)
        return None
    if name in NUMBER_FIELDS:
        if dtype == pl.Null:
            return pl.lit(None, pl.Float64).alias(name)
        if not (dtype.is_integer() or dtype.is_float()):
            return None
        if frame.select(c.cast(pl.Float64).is_infinite().any() | c.is_nan().any()).item():
            return None
        return c.cast(pl.Float64).alias(name)
    if name == "sample":
        if dtype == pl.Null:
            return pl.lit(0, pl.Int64).alias(name)
        if not dtype.is_integer() or frame.select((c < 0).any() | (c > MAX_SAMPLE).any()).item():
            return None
        return c.fill_null(0).cast(pl.Int64).alias(name)
    if dtype == pl.Null:
        return pl.lit(None, pl.String).alias(name)
    if name == "case_id" and dtype.is_integer():
        return c.cast(pl.String).alias(name)
    if dtype != pl.String:
        return None
    return (c if name in KEEP_EMPTY_FIELDS else pl.when(c != "").then(c)).alias(name)


def _string_lists(frame: pl.DataFrame, col: str, name: str) -> pl.Expr | None:
    """Read a text column as one-item lists, and JSON list text as the record path does.

    Texts that open with ``[`` are parsed here (a reference may also just begin with a
    bracket, "[1] Smith et al.": then it stays one text); a JSON value that is not a list
    of strings returns ``None``, so the record path names the record.
    """
    c = pl.col(col)
    bracketed = frame.select(c.filter(c.str.strip_chars_start().str.starts_with("[")).unique())
    keys, values = [], []
    for text in bracketed.to_series():
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError:
            parsed = [text]
        except (ValueError, RecursionError):
            return None
        if not isinstance(parsed, list) or not all(isinstance(v, str) for v in parsed):
            return None
        keys.append(text)
        values.append(parsed)
    single = pl.when(c.is_null() | (c == "")).then([]).otherwise(pl.concat_list(c))
    if not keys:
        return single.alias(name)
    lookup = pl.DataFrame(
        {col: keys, "\x00parsed": values},
        schema={col: pl.String, "\x00parsed": pl.List(pl.String)},
    )
    joined = frame.select(c).join(lookup, on=col, how="left", maintain_order="left")
    return pl.lit(joined.select(pl.coalesce("\x00parsed", single)).to_series()).alias(name)


def frame_tables(
    frame: pl.DataFrame, mapping: Mapping[str, object], source: str
) -> dict[str, pl.DataFrame] | None:
    """Build the lab tables of a generic frame, or ``None`` to leave it to the record path."""
    fields, wide = resolve_mapping(frame.columns, mapping, source)
    if MEDIA_FIELDS & set(fields) or column_may_name_media(frame, fields.get("context")):
        return None  # media are read and checked one record at a time
    used = set(fields.values()) | set(wide.values())
    unmapped = [c for c in frame.columns if c not in used]
    if any(not isinstance(frame.schema[c], _PLAIN_EXTRA) for c in unmapped):
        return None
    exprs = {n: _field(frame, n, c) for n, c in fields.items()}
    answers = {m: _field(frame, "actual", c) for m, c in wide.items()}
    if any(e is None for e in [*exprs.values(), *answers.values()]):
        return None
    extra = pl.struct(unmapped).struct.json_encode() if unmapped else pl.lit("{}")
    conv = frame.select(
        *[e for e in exprs.values() if e is not None],
        *[e.alias(f"\x00{m}") for m, e in answers.items() if e is not None],
        extra.alias("extra"),
    ).with_row_index("\x00row")
    built = cases_of(conv, fields)
    if built is None:
        return None
    cases, case_id = built
    conv = conv.with_columns(case_id)
    outputs = _outputs(conv, fields, list(wide))
    if outputs is None:
        return None
    info = {"format": "table", "mapping": {**fields, **({"actual": wide} if wide else {})}}
    tables = {name: empty(name) for name in SCHEMAS}
    tables["cases"] = cases
    tables["outputs"] = outputs
    tables["info"] = pl.DataFrame(
        [{"key": k, "value": json.dumps(v, ensure_ascii=False)} for k, v in info.items()],
        schema=SCHEMAS["info"],
    )
    return tables


def cases_of(
    conv: pl.DataFrame, fields: Mapping[str, str]
) -> tuple[pl.DataFrame, pl.Series] | None:
    """Build the unique cases and each row's case id (content ids where none is given)."""
    given = [n for n in fields if n not in OUTPUT_FIELDS and n != "case_id"]
    defaults = {"prompt": pl.col("prompt").fill_null("") if "prompt" in given else pl.lit("")}
    for name in ("expected", "categories", "corpus", "media"):
        if name not in given:
            defaults[name] = pl.lit([], pl.List(pl.String))
    conv = conv.with_columns(**defaults)
    case_id = (
        conv["case_id"]
        if "case_id" in fields
        else pl.Series("case_id", [None] * conv.height, dtype=pl.String)
    )
    missing = case_id.is_null() | (case_id == "")
    if missing.any():
        identity = ("prompt", "expected", "condition", "constraints", "system", "messages")
        present = [k for k in identity if k in conv.columns]
        ids = content_ids(conv.filter(missing).select(present))
        case_id = case_id.scatter(missing.arg_true(), ids)
    columns = [c for c in SCHEMAS["cases"] if c in conv.columns or c == "case_id"]
    table = conv.with_columns(case_id=case_id).select(columns).unique(maintain_order=True)
    if table["case_id"].is_duplicated().any():
        return None  # one id, two contents: the record path names both places
    full = pl.DataFrame(schema=SCHEMAS["cases"])
    return pl.concat([full, table], how="diagonal_relaxed").cast(SCHEMAS["cases"]), case_id


def _outputs(conv: pl.DataFrame, fields: Mapping[str, str], wide: list[str]) -> pl.DataFrame | None:
    """One row per answer (per model column of a wide table), in record order."""
    out_fields = [n for n in fields if n in OUTPUT_FIELDS and n not in {"model", "actual"}]
    base = [pl.col("case_id"), pl.col("\x00row"), *[pl.col(n) for n in out_fields]]
    if wide:
        parts = [
            conv.select(
                *base,
                pl.lit(m).alias("model"),
                pl.col(f"\x00{m}").alias("actual"),
                pl.lit(k).alias("\x00model"),
            )
            for k, m in enumerate(wide)
        ]
    elif "actual" in fields:
        model = pl.col("model").fill_null("model") if "model" in fields else pl.lit("model")
        parts = [
            conv.select(*base, model.alias("model"), pl.col("actual"), pl.lit(0).alias("\x00model"))
        ]
    else:
        return pl.DataFrame(schema=SCHEMAS["outputs"])
    out = (
        pl.concat(parts)
        .filter(pl.col("actual").is_not_null())
        .sort("\x00row", "\x00model")
        .with_columns(
            sample=pl.col("sample") if "sample" in out_fields else pl.lit(0, pl.Int64),
            context=pl.col("context")
            if "context" in out_fields
            else pl.lit([], pl.List(pl.String)),
            media=pl.lit([], pl.List(pl.String)),
            context_media=pl.lit([], pl.List(pl.String)),
            extra=pl.lit("{}"),
        )
    )
    if out.select(pl.struct("case_id", "model", "sample").is_duplicated().any()).item():
        return None  # a repeated (case, model, sample): the record path names it
    full = pl.DataFrame(schema=SCHEMAS["outputs"])
    present = [c for c in SCHEMAS["outputs"] if c in out.columns]
    return pl.concat([full, out.select(present)], how="diagonal_relaxed").cast(SCHEMAS["outputs"])
