"""The pass rate humans would give, from labels and metric: per model, and between two models.

Which labels may count (see :mod:`evalnb.calibration.ppi` for why): those of labeler
batches drawn ``random`` or ``stratified`` (weighted by their recorded inclusion
probability), and labels given outside a batch only when the caller vouches that they were
drawn at random. Rows labelled by ``active`` sampling are left out and counted.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from evalnb.calibration.labels import BATCH_KEY, human_verdicts
from evalnb.calibration.ppi import ppi_mean, ppi_superpopulation
from evalnb.lab.verdicts import verdicts

if TYPE_CHECKING:
    from evalnb.lab.core import LabCore

__all__ = [
    "CORRECTED_SCHEMA",
    "CorrectedDifference",
    "corrected_difference",
    "corrected_leaderboard",
    "random_labels",
]

_KEYS = ["case_id", "model", "sample"]
CORRECTED_SCHEMA = pl.Schema(
    {
        "model": pl.String(),
        "rows": pl.Int64(),
        "labels_used": pl.Int64(),
        "labels_left_out": pl.Int64(),
        "automatic": pl.Float64(),
        "human_only": pl.Float64(),
        "human_ci_low": pl.Float64(),
        "human_ci_high": pl.Float64(),
        "corrected": pl.Float64(),
        "ci_low": pl.Float64(),
        "ci_high": pl.Float64(),
        "metric_weight": pl.Float64(),
        "effective_labels": pl.Float64(),
    }
)


def _designs(lab: LabCore) -> pl.DataFrame:
    """Each batch-sampled row's design and inclusion probability (the latest batch wins)."""
    rows = []
    info = lab.table("info").filter(pl.col("key").str.starts_with(BATCH_KEY))
    for value in info["value"].to_list():
        record = json.loads(value)
        designs = record.get("design") or [record.get("strategy")] * len(record["items"])
        chances = record.get("inclusion") or [None] * len(record["items"])
        for (case_id, model, sample), design, chance in zip(
            record["items"], designs, chances, strict=True
        ):
            rows.append(
                {
                    "batch_id": record["batch_id"],
                    "case_id": case_id,
                    "model": model,
                    "sample": sample,
                    "design": design,
                    "inclusion": chance,
                }
            )
    return pl.DataFrame(
        rows,
        schema={
            "batch_id": pl.String,
            "case_id": pl.String,
            "model": pl.String,
            "sample": pl.Int64,
            "design": pl.String,
            "inclusion": pl.Float64,
        },
    )


def _verdicts_and_labels(
    lab: LabCore, evaluator: str, metric: str, *, assume_random: bool
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Every row's verdict, and the human verdicts with whether each may count (``usable``)."""
    v = verdicts(lab.metric_scores(evaluator, metric), lab.metrics, lab.thresholds).filter(
        pl.col("passed").is_not_null()
    )
    if v.is_empty():
        msg = f"no verdicts of {evaluator}/{metric}: evaluate it (with a threshold) first"
        raise KeyError(msg)
    return v, random_labels(lab, evaluator, metric, assume_random=assume_random)


def random_labels(
    lab: LabCore, evaluator: str, metric: str, *, assume_random: bool = False
) -> pl.DataFrame:
    """Return the human verdicts of a metric with whether each may count as a random label.

    ``case_id``, ``model``, ``sample``, ``human_pass``, the ``batch_id`` it was labelled in,
    its ``design`` and ``inclusion`` probability, and ``usable``: labelled in a ``random`` or
    ``stratified`` batch (with its inclusion probability), or outside any batch when
    ``assume_random``. What PPI's corrected rates and a cascade's calibration may use.
    """
    human = human_verdicts(lab.labels, evaluator, metric).drop_nulls("human_pass")
    last_batch = (
        lab.labels.filter((pl.col("evaluator") == evaluator) & (pl.col("metric") == metric))
        .sort("created_at")
        .group_by(_KEYS)
        .agg(pl.col("batch_id").last())
    )
    designs = _designs(lab)
    labelled = (
        human.select(*_KEYS, "human_pass")
        .join(last_batch, on=_KEYS, how="left")
        .join(designs, on=["batch_id", *_KEYS], how="left")
        .with_columns(
            usable=pl.when(pl.col("batch_id").is_null())
            .then(pl.lit(assume_random))
            .otherwise(
                pl.col("design").is_in(["random", "stratified"]) & pl.col("inclusion").is_not_null()
            )
        )
    )
    return labelled


def corrected_leaderboard(
    lab: LabCore, evaluator: str, metric: str, *, assume_random: bool = False, level: float = 0.95
) -> pl.DataFrame:
    """Per model, the pass rate humans would give: labels correct the metric, with a valid CI.

    Prediction-powered inference (PPI++): the metric's verdict on every row, corrected by
    its disagreement with the humans on the labelled rows. Columns: the ``automatic``
    pass rate, the ``human_only`` one with its interval, the ``corrected`` one with its
    interval, the ``metric_weight`` λ (0: the metric adds nothing) and
    ``effective_labels`` (how many random labels alone would be as precise). Labels
    count when drawn at random or with known probabilities (labeler batches record
    them); ``active`` ones are left out and counted; labels given outside a batch count
    with ``assume_random=True`` (:mod:`evalnb.calibration.ppi` states the assumptions).

    Parameters
    ----------
    assume_random
        Count labels given outside labeler batches (``lab.calibration.add_label``) as a uniform random
        sample of the model's rows — true when they were drawn with
        ``calibration_sample(strategy="random")`` or by any unbiased draw.
    level
        The intervals' coverage.
    """
    v, labelled = _verdicts_and_labels(lab, evaluator, metric, assume_random=assume_random)
    rows = []
    for model, part in v.sort(_KEYS).group_by("model", maintain_order=True):
        name = str(model[0])
        population = part.select(*_KEYS, f=pl.col("passed").cast(pl.Float64))
        mine = labelled.filter(pl.col("model") == name).join(population, on=_KEYS)
        use = mine.filter(pl.col("usable"))
        base = {
            "model": name,
            "rows": population.height,
            "labels_used": use.height,
            "labels_left_out": mine.height - use.height,
            "automatic": float(np.mean(population["f"].to_numpy())),
        }
        if use.height < 2:
            rows.append(base)
            continue
        weights = None
        if not (use["design"].fill_null("random") == "random").all():
            chance = use["inclusion"].fill_null(use.height / population.height).to_numpy()
            weights = 1.0 / chance
        e = ppi_mean(
            use["human_pass"].cast(pl.Float64).to_numpy(),
            use["f"].to_numpy(),
            population["f"].to_numpy(),
            weights=weights,
            level=level,
        )
        rows.append(
            {
                **base,
                "human_only": e.human_only,
                "human_ci_low": e.human_ci[0],
                "human_ci_high": e.human_ci[1],
                "corrected": e.estimate,
                "ci_low": e.ci_low,
                "ci_high": e.ci_high,
                "metric_weight": e.lam,
                "effective_labels": e.effective_labels if np.isfinite(e.effective_labels) else None,
            }
        )
    return pl.DataFrame(rows, schema=CORRECTED_SCHEMA)


@dataclass(frozen=True)
class CorrectedDifference:
    """Candidate − baseline in the pass rate humans would give, from labels on both arms.

    Attributes
    ----------
    frame
        One row: the difference of the automatic pass rates, of the humans' own, and the
        corrected one with its interval; labels used per arm and on both arms (paired).
    label_plan
        ``arm, more_labels, half_width``: what the interval's half-width becomes with that
        many more random labels on the baseline, the candidate, or the same cases of both.
    """

    baseline: str
    candidate: str
    method: str
    frame: pl.DataFrame
    label_plan: pl.DataFrame
    notes: tuple[str, ...] = ()

    def __str__(self) -> str:
        r = self.frame.row(0, named=True)
        lines = [
            f"{self.candidate} − {self.baseline}, as humans would judge ({self.method} PPI): "
            f"{r['corrected']:+.4f} [{r['ci_low']:+.4f}, {r['ci_high']:+.4f}] "
            f"(automatic {r['automatic']:+.4f}; labels {r['labels_baseline']} + "
            f"{r['labels_candidate']}, {r['labels_paired']} on both)"
        ]
        best = self.label_plan.sort("half_width").head(1)
        if best.height:
            arm, more, half = best.row(0)
            lines.append(f"  {more} more labels on {arm} would give ±{half:.4f}")
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)


def _arm(y: np.ndarray, f: np.ndarray) -> tuple[float, np.ndarray]:
    """λ (power-tuned, as :func:`ppi_mean`) and the residuals y − λ f of one arm's labelled rows."""
    var_f = float(np.var(f))
    lam = float(np.clip(np.mean((f - f.mean()) * (y - y.mean())) / var_f, 0, 1)) if var_f else 0.0
    return lam, y - lam * f


def _mean_variance(r: np.ndarray, n: int, big_n: int) -> float:
    """Variance of a mean of ``n`` residuals spread as ``r``, drawn without replacement of ``big_n``.

    A sample without spread would claim no error: it is bounded as if two of the next labels
    disagreed (the Agresti–Coull rule :func:`ppi_mean` uses).
    """
    k = r.size
    s2 = float(np.var(r, ddof=1)) if k > 1 else 0.25
    p = 2 / (k + 4)
    return max(s2, p * (1 - p)) / n * max(0.0, 1 - n / big_n)


@dataclass(frozen=True)
class _Spread:
    """What the difference's variance needs: each arm's residuals and their covariance."""

    r_a: np.ndarray
    r_b: np.ndarray
    s_ab: float
    big_n: int

    def half_width(self, z: float, n_a: int, n_b: int, n_c: int) -> float:
        """Half-width with ``n_a``, ``n_b`` labels per arm, ``n_c`` of them on the same cases."""
        n_a, n_b = min(n_a, self.big_n), min(n_b, self.big_n)
        cov = self.s_ab * n_c / (n_a * n_b) * max(0.0, 1 - max(n_a, n_b) / self.big_n)
        var = (
            _mean_variance(self.r_a, n_a, self.big_n)
            + _mean_variance(self.r_b, n_b, self.big_n)
            - 2 * cov
        )
        return z * math.sqrt(max(var, 0.0))

    def plan(self, z: float, n_c: int, baseline: str, candidate: str) -> pl.DataFrame:
        """Return the half-width with more random labels on one arm, or on the same cases of both."""
        n_a, n_b = self.r_a.size, self.r_b.size
        rows = []
        for more in (10, 25, 50, 100, 200, 400):
            for arm, grown in (
                (baseline, (n_a + more, n_b, n_c)),
                (candidate, (n_a, n_b + more, n_c)),
                ("both", (n_a + more, n_b + more, n_c + more)),
            ):
                if max(grown[:2]) <= self.big_n:
                    rows.append((arm, more, self.half_width(z, *grown)))
        return pl.DataFrame(
            rows,
            schema={"arm": pl.String, "more_labels": pl.Int64, "half_width": pl.Float64},
            orient="row",
        )


def corrected_difference(
    lab: LabCore,
    baseline: str,
    candidate: str,
    evaluator: str,
    metric: str,
    *,
    assume_random: bool = False,
    level: float = 0.95,
    method: str = "finite",
) -> CorrectedDifference:
    """Return the difference of two PPI-corrected pass rates with a valid interval.

    The population is the cases both systems answered (paired by case and sample). Each
    arm's rate is corrected as in :func:`corrected_leaderboard` (``finite``: the lab's rows
    are the population, the metric's mean has no sampling error, the labels' residuals get
    the finite-population correction); the variance of the difference subtracts the
    covariance of the two arms' residuals on cases labelled on both, so pairing the labels
    narrows the interval. ``superpopulation``: the cases are a sample of a larger stream; the
    labels must be on the same cases of both arms, and the estimate is PPI++ on the paired
    differences, equal to ``ppi-python``'s ``ppi_mean_ci`` on them.

    Labels count as in :func:`corrected_leaderboard` (random batches; ``assume_random`` for
    labels given outside a batch); stratified batches' labels are left out of a difference
    and counted in the notes.
    """
    if method not in ("finite", "superpopulation"):
        msg = f"method={method!r}; expected 'finite' or 'superpopulation'"
        raise ValueError(msg)
    v, labelled = _verdicts_and_labels(lab, evaluator, metric, assume_random=assume_random)
    pair = ["case_id", "sample"]
    arms = [
        v.filter(pl.col("model") == m).select(*pair, pl.col("passed").cast(pl.Float64).alias(k))
        for m, k in ((baseline, "f_a"), (candidate, "f_b"))
    ]
    population = arms[0].join(arms[1], on=pair).sort(pair)
    if population.is_empty():
        msg = (
            f"no case has verdicts of both {baseline!r} and {candidate!r} for {evaluator}/{metric}"
        )
        raise ValueError(msg)
    notes = []
    usable = labelled.filter(pl.col("usable") & (pl.col("design").fill_null("random") == "random"))
    left_out = labelled.height - usable.height
    if left_out:
        notes.append(
            f"{left_out} label(s) left out: not a uniform random draw (active or stratified "
            "batches, or labels outside a batch without assume_random=True)"
        )
    human = [
        usable.filter(pl.col("model") == m).select(
            *pair, pl.col("human_pass").cast(pl.Float64).alias(k)
        )
        for m, k in ((baseline, "y_a"), (candidate, "y_b"))
    ]
    a = population.join(human[0], on=pair)
    b = population.join(human[1], on=pair)
    both = a.join(human[1], on=pair)
    big_n = population.height
    if method == "superpopulation":
        unlabelled = population.join(both, on=pair, how="anti")
        e = ppi_superpopulation(
            both["y_b"].to_numpy() - both["y_a"].to_numpy(),
            both["f_b"].to_numpy() - both["f_a"].to_numpy(),
            unlabelled["f_b"].to_numpy() - unlabelled["f_a"].to_numpy(),
            level=level,
        )
        corrected, low, high = e.estimate, e.low, e.high
        lam_a = lam_b = float(e.lam or 0.0)
        plan = pl.DataFrame(
            schema={"arm": pl.String, "more_labels": pl.Int64, "half_width": pl.Float64}
        )
    else:
        if a.height < 2 or b.height < 2:
            msg = (
                f"a corrected difference needs at least 2 random labels on each arm; "
                f"{baseline!r} has {a.height}, {candidate!r} {b.height}: label a random sample of both"
            )
            raise ValueError(msg)
        lam_a, r_a = _arm(a["y_a"].to_numpy(), a["f_a"].to_numpy())
        lam_b, r_b = _arm(b["y_b"].to_numpy(), b["f_b"].to_numpy())
        res_a = a.select(*pair, r_a=pl.Series(r_a - r_a.mean()))
        res_b = b.select(*pair, r_b=pl.Series(r_b - r_b.mean()))
        paired = res_a.join(res_b, on=pair)
        s_ab = float((paired["r_a"] * paired["r_b"]).sum()) / max(paired.height - 1, 1)
        spread = _Spread(r_a, r_b, s_ab, big_n)
        z = NormalDist().inv_cdf(0.5 + level / 2)
        corrected = (
            lam_b * float(np.mean(population["f_b"].to_numpy()))
            + float(r_b.mean())
            - lam_a * float(np.mean(population["f_a"].to_numpy()))
            - float(r_a.mean())
        )
        half = spread.half_width(z, a.height, b.height, paired.height)
        low, high = corrected - half, corrected + half
        plan = spread.plan(z, paired.height, baseline, candidate)
    automatic = float(np.mean(population["f_b"].to_numpy())) - float(
        np.mean(population["f_a"].to_numpy())
    )
    human_only = (
        float(np.mean(both["y_b"].to_numpy())) - float(np.mean(both["y_a"].to_numpy()))
        if both.height
        else None
    )
    frame = pl.DataFrame(
        [
            {
                "evaluator": evaluator,
                "metric": metric,
                "cases": big_n,
                "labels_baseline": a.height,
                "labels_candidate": b.height,
                "labels_paired": both.height,
                "automatic": automatic,
                "human_only": human_only,
                "corrected": corrected,
                "ci_low": low,
                "ci_high": high,
                "metric_weight_baseline": lam_a,
                "metric_weight_candidate": lam_b,
            }
        ]
    )
    return CorrectedDifference(baseline, candidate, method, frame, plan, tuple(notes))
