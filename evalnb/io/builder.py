"""Collects the rows an importer parsed, checks ids, and builds the lab frames."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import polars as pl
import pyarrow as pa

from evalnb.lab.schema import SCHEMAS, empty
from evalnb.media.table import MediaShelf

if TYPE_CHECKING:
    from collections.abc import Mapping

    from evalnb.io.fields import Where

__all__ = ["LabBuilder", "content_id", "content_ids"]

# Fields that define a case: two rows agreeing on all of them are the same case (used when a
# source has no id of its own).
_IDENTITY = ("prompt", "expected", "condition", "constraints", "system", "messages")


_ARROW: dict[pl.DataType, pa.DataType] = {
    pl.String(): pa.large_string(),
    pl.List(pl.String()): pa.large_list(pa.large_string()),
    pl.Float64(): pa.float64(),
    pl.Int64(): pa.int64(),
    pl.Boolean(): pa.bool_(),
    pl.Datetime("us", "UTC"): pa.timestamp("us", tz="UTC"),
    pl.Binary(): pa.large_binary(),
}


def content_id(case: dict[str, Any]) -> str:
    """Stable id of a case from its content (prompt, references, condition, chat, media).

    A case's media ids join the payload only when it has media, so a text case keeps the id
    it had before labs held media.
    """
    values: list[object] = [case.get(k) for k in _IDENTITY]
    if case.get("media"):
        values.append(case["media"])
    payload = json.dumps(values, ensure_ascii=False)
    return "c" + hashlib.sha256(payload.encode()).hexdigest()[:16]


# json.dumps(..., ensure_ascii=False) escapes exactly these characters.
_JSON_ESCAPES = {
    "\\": "\\\\",
    '"': '\\"',
    **{chr(i): f"\\u{i:04x}" for i in range(0x20)},
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\b": "\\b",
    "\f": "\\f",
}


def _json_string(value: pl.Expr) -> pl.Expr:
    """``json.dumps`` of each string (``ensure_ascii=False``); null gives ``null``."""
    quoted = pl.concat_str([pl.lit('"'), value.str.replace_many(_JSON_ESCAPES), pl.lit('"')])
    return pl.when(value.is_null()).then(pl.lit("null")).otherwise(quoted)


def content_ids(frame: pl.DataFrame) -> pl.Series:
    """:func:`content_id` of every row of ``frame``, with the JSON built as column passes.

    The ids are stored in labs, so they must stay byte-for-byte those of
    :func:`content_id`; a property test holds the two together.
    """
    parts: list[pl.Expr] = []
    for key in _IDENTITY:
        dtype = frame.schema.get(key)
        if dtype is None:
            parts.append(pl.lit("null"))
        elif dtype == pl.List(pl.String):
            items = pl.col(key).list.eval(_json_string(pl.element())).list.join(", ")
            listed = pl.concat_str([pl.lit("["), items, pl.lit("]")])
            parts.append(pl.when(pl.col(key).is_null()).then(pl.lit("null")).otherwise(listed))
        else:
            parts.append(_json_string(pl.col(key).cast(pl.String)))
    body = pl.concat_str(parts, separator=", ")
    if "media" in frame.columns:  # as content_id: only a case with media adds its ids
        ids = pl.col("media").list.eval(_json_string(pl.element())).list.join(", ")
        with_media = pl.concat_str([body, pl.lit(", ["), ids, pl.lit("]")])
        body = pl.when(pl.col("media").list.len() > 0).then(with_media).otherwise(body)
    payload = frame.select(pl.concat_str([pl.lit("["), body, pl.lit("]")])).to_series()
    # Bytes straight from Arrow and Polars for the prefix: a third less than str.encode per row.
    sha = hashlib.sha256
    digests = pl.Series([sha(p).digest()[:8] for p in payload.cast(pl.Binary).to_list()])
    return pl.select(
        case_id=pl.concat_str([pl.lit("c"), pl.lit(digests).bin.encode("hex")])
    ).to_series()


def _unmapped_hint(known: dict[str, Any], case: dict[str, Any]) -> str:
    """Name the unmapped columns that differ: often the one saying which model answered."""
    try:
        a, b = json.loads(known.get("extra") or "{}"), json.loads(case.get("extra") or "{}")
    except ValueError:
        return ""
    columns = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
    if not columns:
        return ""
    return (
        f" The unmapped column(s) {columns} differ: the same question answered by several "
        f"models? Then map the column naming the model, e.g. load(path, model={columns[0]!r})."
    )


@dataclass
class LabBuilder:
    """Accumulates cases, outputs, scores and metric specs, rejecting inconsistent ids."""

    cases: dict[str, dict[str, Any]] = field(default_factory=dict)
    outputs: list[dict[str, Any]] = field(default_factory=list)
    scores: list[dict[str, Any]] = field(default_factory=list)
    metrics: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    models: dict[str, dict[str, Any]] = field(default_factory=dict)
    info: dict[str, object] = field(default_factory=dict)
    steps: list[dict[str, Any]] = field(default_factory=list)
    reference_calls: list[dict[str, Any]] = field(default_factory=list)
    # Images, audio, video and documents met, once each (cases hold their ids).
    media: MediaShelf = field(default_factory=MediaShelf)
    _case_at: dict[str, Where] = field(default_factory=dict)
    _output_at: dict[tuple[str, str, int], Where] = field(default_factory=dict)
    # Tables a columnar importer built whole (evalnb.io.columnar); they replace the rest.
    prebuilt: dict[str, pl.DataFrame] | None = None

    def add_case(self, case: dict[str, Any], where: Where, *, id_field: str) -> str:
        """Add a case (``case_id`` filled from content when empty) and return its id.

        The same id may come again (a test lab repeats the case once per model) only with
        the same content; anything else is an error naming both places.
        """
        case.setdefault("extra", "{}")
        case.setdefault("media", [])
        made_here = not case.get("case_id")
        if made_here:
            case["case_id"] = content_id(case)
        case_id: str = case["case_id"]
        known = self.cases.get(case_id)
        if known is None:
            self.cases[case_id] = case
            self._case_at[case_id] = where
            return case_id
        if known != case:
            diff = sorted(k for k in set(known) | set(case) if known.get(k) != case.get(k))
            if made_here:  # the id is ours (a hash of the content): never show it
                differ = [k for k in diff if k != "extra"]
                raise where.error(
                    id_field,
                    f"each question once per model, or the same case as at {self._describe(case_id)}",
                    f"the same question again with other content: {str(case.get('prompt'))[:80]!r}",
                    (
                        (f"The two records differ in {differ}." if differ else "")
                        + (_unmapped_hint(known, case) or " Give each record an id column.")
                    ).strip(),
                )
            raise where.error(
                id_field,
                f"a unique id, or the same case content as at {self._describe(case_id)}",
                case_id,
                f"The two records differ in {diff}; give them different ids."
                + _unmapped_hint(known, case),
            )
        return case_id

    def add_output(self, output: dict[str, Any], where: Where, *, id_field: str) -> None:
        """Add an output row; a repeated (case, model, sample) is an error."""
        output.setdefault("sample", 0)
        output.setdefault("context", [])
        output.setdefault("media", [])
        output.setdefault("context_media", [])
        output.setdefault("extra", "{}")
        key = (output["case_id"], output["model"], output["sample"])
        if key in self._output_at:
            first = self._output_at[key]
            raise where.error(
                id_field,
                "one answer per (case, model, sample)",
                f"case {key[0]} and model {key[1]} again (first at {first.location})",
                "Remove the duplicate row or give the models distinct names.",
            )
        self._output_at[key] = where
        self.outputs.append(output)

    def add_imported_score(
        self,
        key: tuple[str, str, int],
        evaluator: str,
        metric: str,
        value: float | None,
        detail: str | None,
        *,
        description: str,
        spec: Mapping[str, object] | None = None,
    ) -> None:
        """Add a score another tool recorded, and its metric (first registration wins).

        ``spec`` adds to the metric's row (``min``, ``max``, ``default_threshold``, ...);
        the first metric imported is the primary one.
        """
        case_id, model, sample = key
        self.scores.append(
            {
                "case_id": case_id,
                "model": model,
                "sample": sample,
                "evaluator": evaluator,
                "metric": metric,
                "value": value,
                "detail": detail,
                "params": "{}",
            }
        )
        self.metrics.setdefault(
            (evaluator, metric),
            {
                "evaluator": evaluator,
                "metric": metric,
                "domain": "generation",
                "title": metric,
                "description": description,
                "higher_is_better": True,
                "primary": not self.metrics,
                **(spec or {}),
            },
        )

    def add_model(self, name: str, key: str | None, meta: str) -> None:
        """Register a model of the catalogue (first registration wins)."""
        self.models.setdefault(name, {"model": name, "key": key, "meta": meta})

    def _describe(self, case_id: str) -> str:
        where = self._case_at[case_id]
        return where.location or where.source

    def frames(self) -> dict[str, pl.DataFrame]:
        """Build the lab tables (only those this builder has content for are non-empty)."""
        if self.prebuilt is not None:
            return self.prebuilt
        out = {
            "cases": _frame(list(self.cases.values()), "cases"),
            "outputs": _frame(self.outputs, "outputs"),
            "scores": _frame(self.scores, "scores"),
            "metrics": _frame(list(self.metrics.values()), "metrics"),
            "models": _frame(list(self.models.values()), "models"),
            "steps": _frame(self.steps, "steps"),
            "reference_calls": _frame(self.reference_calls, "reference_calls"),
            "media": self.media.frame(),
            "info": _frame(
                [
                    {"key": k, "value": json.dumps(v, ensure_ascii=False)}
                    for k, v in self.info.items()
                ],
                "info",
            ),
        }
        for name in SCHEMAS:  # the tables an import never fills (labels, chunks, ...)
            out.setdefault(name, empty(name))
        return out


def _frame(rows: list[dict[str, Any]], table: str) -> pl.DataFrame:
    schema = SCHEMAS[table]
    if not rows:
        return empty(table)
    # Through Arrow: Polars builds a List(String) column from Python lists one Series per
    # element, which made this the slowest step of an import (10x slower than Arrow).
    arrow = pa.table(
        {
            name: pa.array([row.get(name) for row in rows], type=_ARROW[dtype])
            for name, dtype in schema.items()
        }
    )
    frame = pl.from_arrow(arrow)
    assert isinstance(frame, pl.DataFrame)  # a table always converts to a frame
    return frame.cast(schema)
