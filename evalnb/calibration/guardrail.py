"""Exports of human calibration: guardrail configuration and corpus patch document.

Guardrail configuration (seed 003 "Guardrail configuration"): the calibrated thresholds per
evaluator and metric plus the evaluator ids, validated against :data:`GUARDRAIL_SCHEMA` on
write and on read. Corpus patch (seed 003 "Corpus patch document"): the items the metric
failed but the humans passed — question and the model's answer, FAQ style — as Markdown
and JSON.
"""

from __future__ import annotations

import html
import json
from typing import TYPE_CHECKING, Any

import polars as pl

from evalnb.calibration.labels import ITEM, human_verdicts
from evalnb.lab.errors import InputError
from evalnb.lab.files import read_json, write_atomic
from evalnb.lab.verdicts import passes

if TYPE_CHECKING:
    from pathlib import Path

    from evalnb.lab.core import LabCore

__all__ = [
    "GUARDRAIL_SCHEMA",
    "corpus_patch",
    "corpus_patch_markdown",
    "corpus_patch_rows",
    "guardrail_config",
    "read_guardrail",
]

GUARDRAIL_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "evalnb guardrail configuration",
    "type": "object",
    "required": ["calibrated_thresholds", "evaluator_ids"],
    "additionalProperties": False,
    "properties": {
        "calibrated_thresholds": {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "minProperties": 1,
                "additionalProperties": {"type": "number"},
            },
        },
        "evaluator_ids": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
    },
}


def guardrail_config(
    lab: LabCore, path: str | Path | None = None, *, include_uncalibrated: bool = False
) -> dict[str, Any]:
    """Thresholds in force that came from human calibration, in the seed's shape.

    ``include_uncalibrated`` adds every other finite threshold in force (user or default),
    for a guardrail that checks all evaluated metrics. Written to ``path`` when given.
    """
    current = lab.current_thresholds().filter(pl.col("threshold").is_finite())
    if not include_uncalibrated:
        current = current.filter(pl.col("source") == "calibrated")
    table: dict[str, dict[str, float]] = {}
    for ev, metric, thr in (
        current.select("evaluator", "metric", "threshold").sort("evaluator", "metric").iter_rows()
    ):
        table.setdefault(ev, {})[metric] = float(thr)
    config = {"calibrated_thresholds": table, "evaluator_ids": sorted(table)}
    import jsonschema  # noqa: PLC0415 - its import costs about a second; only exports need it

    jsonschema.validate(config, GUARDRAIL_SCHEMA)
    if path is not None:
        write_atomic(path, json.dumps(config, indent=2) + "\n")
    return config


def read_guardrail(path: str | Path) -> dict[str, Any]:
    """Read and validate a guardrail configuration file."""
    import jsonschema  # noqa: PLC0415 - slow import, see guardrail_config

    config: Any = read_json(path, "a JSON object")
    try:
        jsonschema.validate(config, GUARDRAIL_SCHEMA)
    except jsonschema.ValidationError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "(document)"
        raise InputError(
            str(path),
            where,
            where,
            "a guardrail configuration "
            "(calibrated_thresholds: evaluator → metric → number, evaluator_ids)",
            exc.message,
        ) from None
    if sorted(config["calibrated_thresholds"]) != sorted(config["evaluator_ids"]):
        raise InputError(
            str(path),
            "evaluator_ids",
            "evaluator_ids",
            "the evaluators of calibrated_thresholds",
            f"{config['evaluator_ids']!r}",
        )
    return dict(config)


def corpus_patch_rows(lab: LabCore) -> pl.DataFrame:
    """Items failed by their metric (threshold in force) that the humans marked as passed.

    One row per (case, model, sample) — an answer the humans accepted counts once however
    many metrics failed it — with the question, the answer, and the metrics that failed it.
    """
    labelled = lab.labels.select("evaluator", "metric").unique().sort("evaluator", "metric")
    current = lab.current_thresholds()
    parts = []
    for ev, metric in labelled.iter_rows():
        human = human_verdicts(lab.labels, ev, metric).filter(pl.col("human_pass"))
        spec = current.filter((pl.col("evaluator") == ev) & (pl.col("metric") == metric))
        if human.is_empty() or spec.is_empty():
            continue
        scored = lab.metric_scores(ev, metric)
        rows = (
            human.select(ITEM)
            .join(scored.select(*ITEM, "value"), on=ITEM)
            .with_columns(
                threshold=pl.lit(spec["threshold"][0]),
                passed=passes(
                    pl.col("value"),
                    pl.lit(spec["threshold"][0]),
                    pl.lit(spec["higher_is_better"][0]),
                ),
            )
        )
        parts.append(rows.filter(pl.col("passed") == False))  # noqa: E712  (null stays out)
    keys = ["case_id", "model", "sample"]
    schema = pl.Schema(
        dict[str, pl.DataType](
            {
                "case_id": pl.String(),
                "model": pl.String(),
                "sample": pl.Int64(),
                "question": pl.String(),
                "answer": pl.String(),
                "failed_metrics": pl.List(pl.String()),
            }
        )
    )
    if not parts:
        return pl.DataFrame(schema=schema)
    failed = (
        pl.concat(parts)
        .group_by(keys)
        .agg(failed_metrics=(pl.col("evaluator") + "/" + pl.col("metric")).sort())
    )
    return (
        failed.join(lab.cases.select("case_id", question="prompt"), on="case_id", how="left")
        .join(lab.outputs_of(failed, "actual").rename({"actual": "answer"}), on=keys, how="left")
        .select(schema.names())
        .sort(keys)
    )


def corpus_patch(
    lab: LabCore, markdown: str | Path | None = None, json_path: str | Path | None = None
) -> pl.DataFrame:
    """Failed-by-metric answers the humans passed (FAQ style); write Markdown/JSON when asked."""
    patch = corpus_patch_rows(lab)
    if markdown is not None:
        write_atomic(markdown, corpus_patch_markdown(patch))
    if json_path is not None:
        write_atomic(json_path, json.dumps(patch.to_dicts(), indent=2, ensure_ascii=False) + "\n")
    return patch


def _safe(text: object) -> str:
    # Markdown renders raw HTML: model text must stay text (and never close the comment).
    return html.escape(str(text or ""), quote=False).replace("--", "&#45;&#45;")


def corpus_patch_markdown(patch: pl.DataFrame, title: str = "Corpus patch") -> str:
    """Render the corpus patch as an FAQ document (question, then the accepted answer)."""
    lines = [
        f"# {title}",
        "",
        "Questions the RAG system answered correctly according to human reviewers although "
        "its metrics failed them. Add them to the corpus so retrieval finds them.",
        "",
    ]
    for r in patch.iter_rows(named=True):
        question = " ".join(_safe(r["question"]).split())
        lines += [
            f"## Q: {question}",
            "",
            _safe(r["answer"]).strip(),
            "",
            f"<!-- case {_safe(r['case_id'])}, model {_safe(r['model'])}; failed: "
            f"{_safe(', '.join(r['failed_metrics']))} -->",
            "",
        ]
    return "\n".join(lines)
