"""What a cascade of judges did: per tier on a lab, and as the judge card's component.

Both read the rows a cascade judged (:mod:`evalnb.judge_reliability.cascade`): each row's
detail names the tier that kept it and the path it took (every tier it reached, with that
tier's confidence, cost and tokens). Agreement with humans is measured one way for both, on
the rows each tier kept: the lab's verdicts (:meth:`~evalnb.lab.core.LabCore.verdicts`, at
the threshold in force) against the reviewers' (:func:`~evalnb.calibration.labels.human_verdicts`),
with Wilson's 95 % interval.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import polars as pl

from evalnb.calibration.labels import human_verdicts
from evalnb.evaluation.catalog import get_evaluator
from evalnb.evaluation.engine import evaluate
from evalnb.judge_reliability.measures import Measured, wilson

if TYPE_CHECKING:
    from evalnb.judge_reliability.cascade import Cascade
    from evalnb.judge_reliability.components import CardRows
    from evalnb.lab.core import LabCore

__all__ = ["cascade_report", "kept_agreement", "measure_cascade"]

_KEY = ["case_id", "model", "sample"]
_STEP = pl.Struct(
    {
        "tier": pl.Int64,
        "model": pl.String,
        "kept": pl.Boolean,
        "cost": pl.Float64,
        "prompt_tokens": pl.Float64,
        "completion_tokens": pl.Float64,
    }
)


def _judged(scored: LabCore, evaluator: str, metric: str) -> pl.DataFrame:
    """Each judged row's ``tier`` (null: abstained), its ``path``, and its ``passed`` verdict."""
    rows = scored.verdicts().filter(
        (pl.col("evaluator") == evaluator) & (pl.col("metric") == metric)
    )
    fields = pl.Struct({"tier": pl.Int64, "cascade": pl.List(_STEP)})
    decoded = rows["detail"].fill_null("{}").str.json_decode(fields, infer_schema_length=None)
    return rows.select(*_KEY, "passed").with_columns(
        tier=decoded.struct.field("tier"), path=decoded.struct.field("cascade")
    )


def kept_agreement(judged: pl.DataFrame, lab: LabCore, evaluator: str, metric: str) -> pl.DataFrame:
    """Per tier: the labelled rows it kept (``labelled``) and how many agree (``agreed``)."""
    human = human_verdicts(lab.labels, evaluator, metric).drop_nulls("human_pass")
    return (
        judged.drop_nulls("tier")
        .drop_nulls("passed")
        .join(human.select(*_KEY, "human_pass"), on=_KEY)
        .group_by("tier")
        .agg(labelled=pl.len(), agreed=(pl.col("passed") == pl.col("human_pass")).sum())
    )


def cascade_report(lab: LabCore, evaluator: str, metric: str | None = None) -> pl.DataFrame:
    """Per tier of the cascade that judged ``evaluator``: what it kept, spent, and how well.

    Returns one row per tier: ``rows_reached``, ``rows_kept``, ``rows_escalated`` (to the
    next tier), ``rows_abstained`` (by the last), ``prompt_tokens``, ``completion_tokens``,
    ``cost`` (all the tier's calls, kept or not), and on the rows it kept that reviewers
    labelled: ``labelled``, ``agreement`` with Wilson's 95 % interval (``agreement_low``,
    ``agreement_high``).
    """
    metric = metric or get_evaluator(evaluator).primary().key
    if lab.metric_scores(evaluator, metric).is_empty():
        msg = f"no scores of {evaluator}/{metric}: evaluate it with judge=<a calibrated cascade>"
        raise KeyError(msg)
    judged = _judged(lab, evaluator, metric)
    if judged["path"].list.len().fill_null(0).max() == 0:
        msg = f"{evaluator}/{metric} was not judged by a cascade (no tier in its details)"
        raise ValueError(msg)
    steps = (
        judged.select("path", last=pl.col("path").list.len())
        .with_row_index("row")
        .explode("path")
        .with_columns(at=pl.int_range(1, pl.len() + 1).over("row"))
        .unnest("path")
    )
    kept = pl.col("kept")
    per_tier = (
        steps.group_by("tier", maintain_order=True)
        .agg(
            pl.col("model").first(),
            rows_reached=pl.len(),
            rows_kept=kept.sum(),
            rows_escalated=(~kept & (pl.col("at") < pl.col("last"))).sum(),
            rows_abstained=(~kept & (pl.col("at") == pl.col("last"))).sum(),
            prompt_tokens=pl.col("prompt_tokens").sum(),
            completion_tokens=pl.col("completion_tokens").sum(),
            cost=pl.col("cost").sum(),
        )
        .join(kept_agreement(judged, lab, evaluator, metric), on="tier", how="left")
        .with_columns(pl.col("labelled", "agreed").fill_null(0))
        .sort("tier")
    )
    measured = [wilson(int(a), int(n)) for a, n in per_tier.select("agreed", "labelled").rows()]
    return per_tier.drop("agreed").with_columns(
        agreement=pl.Series([m.estimate for m in measured], dtype=pl.Float64),
        agreement_low=pl.Series([m.low for m in measured], dtype=pl.Float64),
        agreement_high=pl.Series([m.high for m in measured], dtype=pl.Float64),
    )


def measure_cascade(
    card: CardRows, lab: LabCore, sample: LabCore, evaluator: str, metric: str, judge: Cascade
) -> None:
    """Add the judge card's cascade component, measured on the card's sample of answers.

    ``sample`` holds the card's answers, ``lab`` their labels. The calibration (its random
    labels, guarantee and thresholds, so a kept card and the bundle carrying it state them);
    coverage (answers given a verdict); per tier, the agreement with the labels on what it
    kept, lit against the cascade's ``target`` (red when the whole interval is below it);
    the share of answers the strongest judge saw; and the cost against the strongest judge
    alone on the same answers (asked afresh for the comparison), where the clients have prices.
    """
    cal = judge.calibration or {}
    labels = int(cal.get("labels", 0))
    card.add(
        "cascade",
        "calibration: random labels",
        Measured(float(labels), math.nan, math.nan, labels),
        note=f"{cal.get('guarantee', 'not calibrated')}; thresholds {cal.get('thresholds')}",
    )
    judged = _judged(evaluate(sample, [evaluator], judge=judge, progress=False), evaluator, metric)
    n = judged.height
    given = int(judged["tier"].is_not_null().sum())
    card.add("cascade", "cascade coverage", wilson(given, n), note="answers given a verdict")
    agreement = {t: (a, c) for t, c, a in kept_agreement(judged, lab, evaluator, metric).rows()}
    for i, tier in enumerate(judge.tiers):
        agreed, labelled = agreement.get(i, (0, 0))
        card.add_bounded(
            "cascade",
            f"agreement with humans, tier {i} ({tier.model})",
            wilson(agreed, labelled),
            (judge.target, 1.0),
            note=f"labelled answers this tier kept; the cascade's target is {judge.target:g}",
        )
    last = len(judge.tiers) - 1
    saw = int(judged["path"].list.eval(pl.element().struct.field("tier") == last).list.any().sum())
    card.add("cascade", "share seen by the strongest judge", wilson(saw, n))
    if judge.strongest.prices is None:
        card.unmeasured(
            "cascade",
            "give the clients prices= to compare the cascade's cost with the strongest judge's",
        )
        return
    # what every tier's calls cost (a reply from the cache says what it cost when asked)
    spent = float(judged["path"].list.eval(pl.element().struct.field("cost")).list.sum().sum())
    fresh = judge.strongest.with_settings(cache=False)
    alone_lab = evaluate(sample, [evaluator], judge=fresh, progress=False)
    alone = float(
        alone_lab.metric_scores(evaluator, metric)["detail"]
        .str.json_path_match("$.cost")
        .cast(pl.Float64)
        .sum()
    )
    card.add(
        "cascade",
        "cost against the strongest judge alone",
        Measured(spent / alone if alone > 0 else math.nan, math.nan, math.nan, n),
        note=f"${spent:.4f} against ${alone:.4f} on the same {n} answers",
    )
