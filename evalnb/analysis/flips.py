"""Robustness to input variations: verdict flips of perturbed cases against their originals.

A flip is a perturbed case whose verdict differs from its original case's verdict for the
same model, sample, evaluator and metric (H2O's definition). Counted per perturbation kind
and the original case's topic and question type, so a weakness to typos in one topic shows.
"""

from __future__ import annotations

import polars as pl

__all__ = ["FLIP_SCHEMA", "flip_table"]

FLIP_SCHEMA = pl.Schema(
    {
        "perturbation": pl.String(),
        "topic": pl.String(),
        "question_type": pl.String(),
        "n_pairs": pl.Int64(),
        "to_fail": pl.Int64(),
        "to_pass": pl.Int64(),
        "flip_rate": pl.Float64(),
        "mean_change": pl.Float64(),
    }
)


def flip_table(
    verdicts: pl.DataFrame, cases: pl.DataFrame, evaluator: str, metric: str
) -> pl.DataFrame:
    """Per (perturbation, topic, question type): pairs, flips each way, flip rate, mean change.

    Adversarial cases (``perturbation`` ``adversarial_<kind>``) are left out: their effect
    is :func:`evalnb.analysis.adversarial_effect.adversarial_effect`'s.
    """
    v = verdicts.filter(
        (pl.col("evaluator") == evaluator)
        & (pl.col("metric") == metric)
        & pl.col("passed").is_not_null()
    ).select("case_id", "model", "sample", "value", "passed")
    lineage = cases.filter(
        pl.col("perturbation_of").is_not_null()
        & ~pl.col("perturbation").fill_null("").str.starts_with("adversarial_")
    ).select("case_id", "perturbation", base="perturbation_of")
    base = v.join(cases.select("case_id", "topic", "question_type"), on="case_id").select(
        pl.col("case_id").alias("base"),
        "model",
        "sample",
        "topic",
        "question_type",
        base_value="value",
        base_passed="passed",
    )
    pairs = v.join(lineage, on="case_id").join(base, on=["base", "model", "sample"])
    if pairs.is_empty():
        return pl.DataFrame(schema=FLIP_SCHEMA)
    return (
        pairs.group_by("perturbation", "topic", "question_type")
        .agg(
            n_pairs=pl.len().cast(pl.Int64),
            to_fail=(pl.col("base_passed") & ~pl.col("passed")).sum().cast(pl.Int64),
            to_pass=(~pl.col("base_passed") & pl.col("passed")).sum().cast(pl.Int64),
            mean_change=(pl.col("value") - pl.col("base_value")).mean(),
        )
        .with_columns(flip_rate=(pl.col("to_fail") + pl.col("to_pass")) / pl.col("n_pairs"))
        .select(list(FLIP_SCHEMA))
        .sort(
            "flip_rate",
            "perturbation",
            "topic",
            "question_type",
            descending=[True, False, False, False],
            nulls_last=True,
        )
    )
