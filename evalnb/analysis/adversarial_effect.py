"""How adversarial inputs change scores: each adversarial case against its own base case.

The comparison is paired: an adversarial case's score minus its base case's score, for
the same model, evaluator and metric (each averaged over samples). The mean difference
has a 95 % interval from resampling the pairs, so a drop is told apart from noise; pass
rates and flips (a base case that passed whose adversarial case failed) come with it.
"""

from __future__ import annotations

import polars as pl

from evalnb.analysis.leaderboard import mean_interval

__all__ = ["EFFECT_SCHEMA", "adversarial_effect"]

_PREFIX = "adversarial_"
# Perturbators that attack the model as adversarial inputs do (H2O's agent-based ones).
_AGENT_BASED = ["contextual_misinformation"]
_KEYS = ["evaluator", "metric", "model", "kind"]
EFFECT_SCHEMA = pl.Schema(
    {
        "evaluator": pl.String,
        "metric": pl.String,
        "model": pl.String,
        "kind": pl.String,
        "n_pairs": pl.Int64,
        "base_mean": pl.Float64,
        "adversarial_mean": pl.Float64,
        "difference": pl.Float64,
        "ci_low": pl.Float64,
        "ci_high": pl.Float64,
        "base_pass_rate": pl.Float64,
        "adversarial_pass_rate": pl.Float64,
        "flips": pl.Int64,
        "higher_is_better": pl.Boolean,
    }
)


def adversarial_effect(
    verdicts: pl.DataFrame, cases: pl.DataFrame, *, n_boot: int = 1000, seed: int = 0
) -> pl.DataFrame:
    """Per (evaluator, metric, model, kind): paired score difference, adversarial − base.

    Parameters
    ----------
    verdicts
        The lab's verdicts (value, ``passed``, ``higher_is_better`` per scored row).
    cases
        The lab's cases; adversarial ones have ``perturbation`` ``adversarial_<kind>``.

    Returns
    -------
    polars.DataFrame
        ``n_pairs``, ``base_mean``, ``adversarial_mean``, ``difference`` with its 95 %
        interval (``ci_low``, ``ci_high``), both pass rates, ``flips`` (pairs whose base
        passed and adversarial case failed) and ``higher_is_better`` (which sign is worse).
    """
    adversarial = pl.col("perturbation").str.starts_with(_PREFIX) | pl.col("perturbation").is_in(
        _AGENT_BASED
    )
    lineage = cases.filter(adversarial).select(
        "case_id", base="perturbation_of", kind=pl.col("perturbation").str.strip_prefix(_PREFIX)
    )
    per_case = verdicts.group_by("case_id", "model", "evaluator", "metric").agg(
        value=pl.col("value").mean(),
        passed=pl.col("passed").cast(pl.Float64).mean(),
        higher_is_better=pl.col("higher_is_better").first(),
    )
    base = per_case.select(
        pl.col("case_id").alias("base"),
        "model",
        "evaluator",
        "metric",
        base_value="value",
        base_passed="passed",
    )
    pairs = (
        per_case.join(lineage, on="case_id")
        .join(base, on=["base", "model", "evaluator", "metric"])
        .filter(pl.col("value").is_not_nan() & pl.col("base_value").is_not_nan())
        .with_columns(diff=pl.col("value") - pl.col("base_value"))
        .sort([*_KEYS, "case_id"])
    )
    rows = []
    for key, group in pairs.group_by(_KEYS, maintain_order=True):
        low, high = mean_interval(group["diff"].to_numpy().reshape(-1, 1), n_boot, seed)
        flips = (group["base_passed"] == 1.0) & (group["passed"] == 0.0)
        rows.append(
            {
                **dict(zip(_KEYS, key, strict=True)),
                "n_pairs": group.height,
                "base_mean": group["base_value"].mean(),
                "adversarial_mean": group["value"].mean(),
                "difference": group["diff"].mean(),
                "ci_low": float(low[0]),
                "ci_high": float(high[0]),
                "base_pass_rate": group["base_passed"].mean(),
                "adversarial_pass_rate": group["passed"].mean(),
                "flips": int(flips.sum()),
                "higher_is_better": group["higher_is_better"][0],
            }
        )
    out = pl.DataFrame(rows, schema=EFFECT_SCHEMA) if rows else pl.DataFrame(schema=EFFECT_SCHEMA)
    return out.with_columns(pl.col("ci_low", "ci_high").fill_nan(None))
