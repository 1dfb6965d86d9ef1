"""Generic tables (CSV, Parquet, JSONL, JSON records, Polars/pandas frames) with a mapping."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from evalnb.io.fields import MAX_SAMPLE, Where, to_json
from evalnb.io.media_fields import base_of, media_ids, split_media_contexts
from evalnb.lab.errors import InputError

if TYPE_CHECKING:
    from evalnb.io.builder import LabBuilder

__all__ = ["FIELDS", "Record", "read_records", "resolve_mapping"]

Record = tuple[Where, Mapping[str, object]]

# Canonical field → source column names tried, in order, when the user maps nothing.
FIELDS: dict[str, tuple[str, ...]] = {
    "case_id": ("case_id", "id", "key"),
    "test_id": ("test_id",),
    "prompt": ("prompt", "input", "question", "query", "user_input"),
    "system": ("system", "system_prompt"),
    "expected": (
        "expected",
        "expected_output",
        "reference",
        "references",
        "ground_truth",
        "ref_answer",
        "target",
    ),
    "condition": ("condition",),
    "constraints": ("constraints",),
    "categories": ("categories", "category"),
    "topic": ("topic",),
    "question_type": ("question_type",),
    "language": ("language", "lang", "locale"),
    "corpus": ("corpus", "documents"),
    "perturbation_of": ("perturbation_of",),
    "perturbation": ("perturbation",),
    "model": ("model", "model_name"),
    "sample": ("sample",),
    "actual": ("actual", "actual_output", "response", "output", "answer", "prediction"),
    "reasoning": ("reasoning", "reasoning_content"),
    "context": ("context", "contexts", "retrieved_contexts"),
    "duration_s": ("duration_s", "duration", "latency", "actual_duration"),
    "cost": ("cost",),
    "error": ("error",),
    # Images, audio, video, documents: paths, URLs, data URLs, bytes, datasets' {bytes, path}
    "media": ("media", "image", "images", "audio"),
    "answer_media": ("answer_media", "output_media"),
    "context_media": ("context_media", "retrieved_media"),
}
LIST_FIELDS = {"expected", "categories", "corpus", "context"}
MEDIA_FIELDS = {"media", "answer_media", "context_media"}
NUMBER_FIELDS = {"duration_s", "cost"}
OUTPUT_FIELDS = {
    "model",
    "sample",
    "actual",
    "reasoning",
    "context",
    "duration_s",
    "cost",
    "error",
    "answer_media",
    "context_media",
}
KEEP_EMPTY_FIELDS = {"prompt", "actual"}  # "" stays a value here; elsewhere it means missing


def resolve_mapping(
    columns: Iterable[str], mapping: Mapping[str, object], source: str
) -> tuple[dict[str, str], dict[str, str]]:
    """Resolve the user's mapping against the columns present.

    Returns ``(fields, wide)``: canonical field → column, and for a wide table (``actual=
    {"model A": "col_a", ...}``) model name → column of its answers.
    """
    cols = list(columns)
    unknown = sorted(set(mapping) - set(FIELDS))
    if unknown:
        msg = (
            f"unknown mapping keys {unknown}; expected some of {sorted(FIELDS)}, each naming "
            "the source column that holds that field"
        )
        raise TypeError(msg)
    fields: dict[str, str] = {}
    wide: dict[str, str] = {}
    for name, value in mapping.items():
        if name == "actual" and isinstance(value, Mapping):
            wide = {str(m): str(c) for m, c in value.items()}
            continue
        if not isinstance(value, str):
            msg = f"mapping `{name}` must name a column (a string), got {value!r}"
            raise TypeError(msg)
        fields[name] = value
    for name, aliases in FIELDS.items():
        if name not in mapping:
            found = next((a for a in aliases if a in cols), None)
            if found is not None:
                fields[name] = found
    for col in [*fields.values(), *wide.values()]:
        if col not in cols:
            raise Where(source).error(
                col, f"a column named {col!r} (from the mapping)", f"columns {cols[:20]}"
            )
    if "prompt" not in fields:
        msg_0 = "prompt"
        raise Where(source).error(
            msg_0,
            f"a prompt column (one of {list(FIELDS['prompt'])}) or prompt='column'",
            f"columns {cols[:20]}",
        )
    return fields, wide


def _list(value: object, where: Where, col: str) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, str):
        if value.lstrip().startswith("["):
            try:
                parsed = json.loads(value)
            except json.JSONDecodeError:
                return [value]
            return _list(parsed, where, col)
        return [value]
    if isinstance(value, list | tuple):
        for item in value:
            if not isinstance(item, str):
                raise where.error(col, "a list of strings", value)
        return list(value)
    raise where.error(col, "a string or a list of strings", value)


def _convert(name: str, value: object, where: Where, col: str) -> object:
    if name in LIST_FIELDS:
        return _list(value, where, col)
    if name in NUMBER_FIELDS:
        if value is None or value == "":
            return None
        if isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                raise where.error(col, "a number", value) from None
        return where.number({col: value}, col)
    if name == "sample":
        if value is None or value == "":
            return 0
        try:
            sample = int(str(value)) if not isinstance(value, bool) else -1
        except ValueError:
            sample = -1
        if not 0 <= sample <= MAX_SAMPLE:
            raise where.error(col, "a non-negative integer sample index below 2**63", value)
        return sample
    if value is None:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool) and name == "case_id":
        return str(value)
    if not isinstance(value, str):
        raise where.error(col, "a string", value)
    return value if value != "" or name in KEEP_EMPTY_FIELDS else None


def read_records(
    records: list[Record],
    columns: list[str],
    mapping: Mapping[str, object],
    source: str,
    builder: LabBuilder,
) -> None:
    """Add generic records, one row = one case with zero or more model answers."""
    fields, wide = resolve_mapping(columns, mapping, source)
    used = set(fields.values()) | set(wide.values())
    builder.info["format"] = "table"
    builder.info["mapping"] = {**fields, **({"actual": wide} if wide else {})}
    for where, rec in records:
        try:
            _read_record(where, rec, fields, wide, used, builder)
        except RecursionError:  # a value nested too deeply to copy or serialise
            raise InputError(
                where.source,
                where.location,
                None,
                "values nested fewer than about 900 levels",
                "deeper nesting",
            ) from None


def _read_record(
    where: Where,
    rec: Mapping[str, object],
    fields: Mapping[str, str],
    wide: Mapping[str, str],
    used: set[str],
    builder: LabBuilder,
) -> None:
    values: dict[str, Any] = {
        n: _convert(n, rec.get(c), where, c) for n, c in fields.items() if n not in MEDIA_FIELDS
    }
    base = base_of(where.source)
    for name in MEDIA_FIELDS & set(fields):
        values[name] = media_ids(rec.get(fields[name]), where, fields[name], builder, base)
    if values.get("context"):  # ragas' multimodal samples list images among the contexts
        texts, ids = split_media_contexts(
            values["context"], where, fields["context"], builder, base
        )
        values["context"] = texts
        values["context_media"] = [*values.get("context_media", []), *ids]
    if "answer_media" in values:
        values["media_answer"] = values.pop("answer_media")
    case = {k: v for k, v in values.items() if k not in OUTPUT_FIELDS and k != "media_answer"}
    case["prompt"] = case.get("prompt") or ""
    case.setdefault("expected", [])
    case.setdefault("categories", [])
    case.setdefault("corpus", [])
    case["extra"] = to_json({k: _jsonable(v) for k, v in rec.items() if k not in used})
    case_id = builder.add_case(case, where, id_field=fields.get("case_id", "prompt"))
    output = {k: v for k, v in values.items() if k in OUTPUT_FIELDS}
    if "media_answer" in values:
        output["media"] = values["media_answer"]
    answers = (
        [(m, _convert("actual", rec.get(c), where, c)) for m, c in wide.items()]
        if wide
        else ([(output.get("model") or "model", output["actual"])] if "actual" in fields else [])
    )
    for model, actual in answers:
        if actual is None:  # no answer in this row (null or absent): not an empty answer
            continue
        builder.add_output(
            {**output, "case_id": case_id, "model": model, "actual": actual},
            where,
            id_field=fields.get("model", "model"),
        )


def _jsonable(value: object) -> object:
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return str(value)
