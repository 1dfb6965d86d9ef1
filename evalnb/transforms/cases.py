"""The eye's model level and case panel: dots of one (metric, model), one case's details.

Only what is shown travels to the browser: at most ``max_dots`` dots (a systematic sample
of the value-sorted rows, so every quantile stays represented) plus a histogram of all rows,
and one case at a time.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from evalnb.lab.rankings import grades_of, in_trec_order, ranked_of, with_rankings
from evalnb.lab.verdicts import finite_or_none
from evalnb.media.access import panel_media
from evalnb.transforms.eye import catalog_titles

if TYPE_CHECKING:
    from evalnb.lab.core import LabCore
    from evalnb.transforms.eye import EyeIndex

__all__ = [
    "BIN_SCHEMA",
    "DOT_SCHEMA",
    "case_detail",
    "compare_dots",
    "eye_dots",
    "ranking_of",
    "run_steps",
    "score_bins",
]

DOT_SCHEMA = pl.Schema(
    dict[str, pl.DataType](
        {
            "case_id": pl.String(),
            "sample": pl.Int32(),
            "value": pl.Float64(),
            "passed": pl.Boolean(),
            "other": pl.Float64(),
        }
    )
)
"""One test case of the dot chart; ``other`` is the compared metric's value (else null)."""
BIN_SCHEMA = pl.Schema(
    dict[str, pl.DataType](
        {
            "low": pl.Float64(),
            "high": pl.Float64(),
            "n": pl.Int32(),
            "n_passed": pl.Int32(),
        }
    )
)
"""One histogram bin of every scored row (the dots may be a sample)."""


def _part(index: EyeIndex, evaluator: str, metric: str, model: str) -> pl.DataFrame:
    try:
        return index.parts[(evaluator, metric, model)]
    except KeyError:
        known = sorted(k for k in index.parts if k[0] == evaluator)
        msg = f"no scores for ({evaluator!r}, {metric!r}, {model!r}); known: {known}"
        raise KeyError(msg) from None


def eye_dots(
    index: EyeIndex, evaluator: str, metric: str, model: str, *, max_dots: int = 2000
) -> pl.DataFrame:
    """Dots of one (evaluator, metric, model), sorted by value (``DOT_SCHEMA``).

    Unscored rows (null value) are left out. Above ``max_dots`` rows every k-th row of the
    sorted values is kept, so the dots keep the distribution's shape; :func:`score_bins`
    counts them all.
    """
    part = _part(index, evaluator, metric, model).drop_nulls("value")
    if part.height > max_dots:
        step = part.height / max_dots
        part = part[np.floor(np.arange(max_dots) * step).astype(np.int64)]
    return part.select(
        "case_id",
        pl.col("sample").cast(pl.Int32),
        "value",
        "passed",
        other=pl.lit(None, pl.Float64),
    )


def compare_dots(
    index: EyeIndex,
    evaluator: str,
    metric: str,
    model: str,
    other: tuple[str, str],
    *,
    max_dots: int = 2000,
) -> pl.DataFrame:
    """Dots of one metric with a second metric's value of the same case in ``other``."""
    dots = eye_dots(index, evaluator, metric, model, max_dots=max_dots).drop("other")
    second = _part(index, other[0], other[1], model).select(
        "case_id", pl.col("sample").cast(pl.Int32), other="value"
    )
    return dots.join(second, on=["case_id", "sample"], how="left", maintain_order="left")


def score_bins(
    index: EyeIndex, evaluator: str, metric: str, model: str, *, n_bins: int = 20
) -> pl.DataFrame:
    """Histogram of every scored row of one (evaluator, metric, model) (``BIN_SCHEMA``)."""
    part = _part(index, evaluator, metric, model).drop_nulls("value")
    values = part["value"].to_numpy()
    if values.size == 0:
        return pl.DataFrame(schema=BIN_SCHEMA)
    finite = values[np.isfinite(values)]
    low, high = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    edges = np.linspace(low, high if high > low else low + 1.0, n_bins + 1)
    which = np.clip(np.searchsorted(edges, values, side="right") - 1, 0, n_bins - 1)
    passed = part["passed"].fill_null(value=False).to_numpy()
    return pl.DataFrame(
        {
            "low": edges[:-1],
            "high": edges[1:],
            "n": np.bincount(which, minlength=n_bins),
            "n_passed": np.bincount(which, weights=passed, minlength=n_bins),
        },
        schema=BIN_SCHEMA,
        strict=False,
    )


def case_detail(
    lab: LabCore,
    index: EyeIndex,
    case_id: str,
    model: str,
    sample: int = 0,
    *,
    focus: tuple[str, str] | None = None,
) -> dict[str, Any]:
    """Everything the case panel shows, as plain JSON-able values.

    Keys: ``case_id, model, sample, prompt, expected, actual, context, cost, duration_s,
    error, steps`` (an agent's messages and tool calls, in order; empty for other answers),
    ``media`` (the case's, the answer's and the contexts' items: :func:`~evalnb.media.access.panel_media`),
    ``metrics`` (every metric of the case with score, threshold, verdict, title and
    description; ``focus`` first) and ``sentences`` (the answer split into sentences with a
    score each, from the focused evaluator when it gives them, else from any evaluator that
    does; null when none does).
    """
    out = (
        lab.scan("outputs")
        .filter(  # one row, read from disk when kept there
            (pl.col("case_id") == case_id)
            & (pl.col("model") == model)
            & (pl.col("sample") == sample)
        )
        .collect()
    )
    if out.is_empty():
        msg = (
            f"no output of model {model!r} for case {case_id!r} (sample {sample}); "
            "pick a case shown in the eye (its dots carry case_id and sample)"
        )
        raise KeyError(msg)
    case = lab.cases.filter(pl.col("case_id") == case_id).row(0, named=True)
    o = out.row(0, named=True)
    rows = (
        index.verdicts.filter(
            (pl.col("case_id") == case_id)
            & (pl.col("model") == model)
            & (pl.col("sample") == sample)
        )
        .collect()
        .join(
            index.specs.select("evaluator", "metric", "description"),
            on=["evaluator", "metric"],
            how="left",
        )
    )
    if focus is not None:
        first = (pl.col("evaluator") == focus[0]) & (pl.col("metric") == focus[1])
        rows = rows.sort(~first, pl.col("evaluator") != focus[0], "evaluator", "metric")
    evaluator_titles = catalog_titles()
    metrics = [
        {
            "evaluator": r["evaluator"],
            "evaluator_title": evaluator_titles.get(r["evaluator"], r["evaluator"]),
            "metric": r["metric"],
            "title": r["title"] or r["metric"],
            "description": r["description"] or "",
            "value": finite_or_none(r["value"]),
            "threshold": finite_or_none(r["threshold"]),
            "passed": r["passed"],
            "higher_is_better": r["higher_is_better"],
            "reason": _reason(r["detail"]),
        }
        for r in rows.iter_rows(named=True)
    ]
    return {
        "case_id": case_id,
        "model": model,
        "sample": sample,
        "prompt": case["prompt"],
        "expected": case["expected"] or [],
        "actual": o["actual"],
        "context": o["context"] or [],
        "cost": finite_or_none(o["cost"]),
        "duration_s": finite_or_none(o["duration_s"]),
        "error": o["error"],
        "metrics": metrics,
        "sentences": _sentences(rows),
        "steps": run_steps(lab, case_id, model, sample),
        "ranking": ranking_of(lab, case, o),
        # The case's images and audio, the answer's, the contexts': thumbnails made here
        "media": panel_media(
            lab,
            [
                ("case", case.get("media")),
                ("answer", o.get("media")),
                ("context", o.get("context_media")),
            ],
        ),
    }


MAX_PANEL_DOCUMENTS, MAX_DOCUMENT_CHARS = 20, 600


def ranking_of(lab: LabCore, case: dict[str, Any], output: dict[str, Any]) -> dict[str, Any] | None:
    """Return the answer's retrieved ranking as the eye shows it, or None when it has none.

    ``documents``: the first :data:`MAX_PANEL_DOCUMENTS` in trec_eval's order (score, then
    document id, descending) with ``rank``, ``doc_id``, ``score``, ``grade`` (the grade the
    measures use; null where unjudged) and ``text`` (the lab's document text, cut to
    :data:`MAX_DOCUMENT_CHARS`; null where the lab holds none); ``n_ranked``; ``n_relevant``
    (documents judged relevant for the case); ``missed`` (relevant documents the ranking
    never retrieved, best graded first, at most ten).
    """
    row = pl.DataFrame(
        {
            "case_id": [case["case_id"]],
            "model": [output["model"]],
            "sample": [output["sample"]],
            "output_extra": [output.get("extra")],
            "case_extra": [case.get("extra")],
        },
        schema={
            "case_id": pl.String,
            "model": pl.String,
            "sample": pl.Int64,
            "output_extra": pl.String,
            "case_extra": pl.String,
        },
    )
    both = with_rankings(lab, row)
    ranked = ranked_of(both)
    if ranked.is_empty():
        return None
    grades = grades_of(both).select("doc_id", grade="relevance")
    order = in_trec_order(ranked, ["group"]).join(grades, on="doc_id", how="left")
    top = order.head(MAX_PANEL_DOCUMENTS)
    chunks = lab.table("chunks")
    texts = (
        chunks.filter(pl.col("chunk_id").is_in(top["doc_id"].implode())).select(
            doc_id="chunk_id", text=pl.col("text").str.slice(0, MAX_DOCUMENT_CHARS)
        )
        if chunks.height
        else pl.DataFrame(schema={"doc_id": pl.String, "text": pl.String})
    )
    documents = top.join(texts, on="doc_id", how="left", maintain_order="left").select(
        "rank", "doc_id", pl.col("score").fill_nan(None), "grade", "text"
    )
    relevant = grades.filter(pl.col("grade") >= 1)
    missed = relevant.join(ranked.select("doc_id"), on="doc_id", how="anti").sort(
        "grade", "doc_id", descending=[True, False]
    )
    return {
        "documents": documents.to_dicts(),
        "n_ranked": ranked.height,
        "n_relevant": relevant.height,
        "missed": missed.head(10).to_dicts(),
    }


# What one case panel carries of an agent's run: enough to read it, bounded for the widget.
MAX_PANEL_STEPS, MAX_STEP_CHARS = 200, 4_000


def run_steps(lab: LabCore, case_id: str, model: str, sample: int) -> list[dict[str, Any]]:
    """Return the run's steps in order (an agent's messages and tool calls); [] otherwise.

    What the eye's case panel and the labeler show of an agent's run.
    """
    if not lab.height("steps"):
        return []
    mine = (
        lab.scan("steps")
        .filter(  # on disk, only this run's rows are read
            (pl.col("case_id") == case_id)
            & (pl.col("model") == model)
            & (pl.col("sample") == sample)
            & (pl.col("role") != "tool")  # a result is shown with the call it answers
        )
        .sort("step", maintain_order=True)
        .collect()
    )

    def cut(value: str | None) -> str | None:
        if value is None or len(value) <= MAX_STEP_CHARS:
            return value
        return value[:MAX_STEP_CHARS] + f"… ({len(value) - MAX_STEP_CHARS:,} more characters)"

    out = [
        {
            "step": r["step"],
            "role": r["role"],
            "content": cut(r["content"]),
            "tool_name": cut(r["tool_name"]),
            "tool_args": cut(r["tool_args"]),
            "args_valid": r["args_valid"],
            "tool_result": cut(r["tool_result"]),
            "error": cut(r["error"]),
            "latency_s": finite_or_none(r["latency_s"]),
            "cost": finite_or_none(r["cost"]),
        }
        for r in mine.head(MAX_PANEL_STEPS).iter_rows(named=True)
    ]
    if mine.height > MAX_PANEL_STEPS:
        out.append(
            {
                "step": None,
                "role": "note",
                "content": f"{mine.height - MAX_PANEL_STEPS:,} more steps: lab.steps has them all",
                "tool_name": None,
                "tool_args": None,
                "args_valid": None,
                "tool_result": None,
                "error": None,
                "latency_s": None,
                "cost": None,
            }
        )
    return out


def _reason(detail: str | None) -> str | None:
    if not detail:
        return None
    try:
        parsed = json.loads(detail)
    except ValueError:
        return None
    reason = parsed.get("reason") if isinstance(parsed, dict) else None
    return str(reason) if reason is not None else None


def _sentences(rows: pl.DataFrame) -> dict[str, Any] | None:
    """Return the first row (in panel order) whose detail scores the answer sentence by sentence."""
    for ev, metric, detail in rows.select("evaluator", "metric", "detail").iter_rows():
        if not detail or '"sentences"' not in detail:
            continue
        items = json.loads(detail).get("sentences") or []
        key = next((k for item in items for k in item if k != "text"), None)
        if key is None:
            continue
        return {
            "evaluator": ev,
            "metric": metric,
            "key": key,
            "items": [{"text": i["text"], "score": finite_or_none(i.get(key))} for i in items],
        }
    return None
