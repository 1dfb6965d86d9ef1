"""Threshold recalibration from human verdicts (:mod:`evalnb.calibration.sampling` picks the rows).

Criterion (stated, selectable): the new threshold is the cut on the metric's score that best
reproduces the human pass/fail verdicts — by balanced accuracy (default: robust when most
items pass or most fail), accuracy or F1 of "pass" — or, with ``criterion="logistic"``, the
score where a logistic model of P(human pass | score) crosses 0.5. Among equally good cuts
the middle of the best interval is taken, so the estimate does not hug one labelled score.
Uncertainty comes from a bootstrap over the labelled items.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from evalnb.calibration.labels import ITEM, cohen_kappa, human_verdicts
from evalnb.lab.schema import SCHEMAS
from evalnb.lab.verdicts import finite_or_none

if TYPE_CHECKING:
    from evalnb.lab.core import LabCore

__all__ = [
    "CRITERIA",
    "Calibration",
    "calibrate",
    "fit_threshold",
    "labelled_points",
    "recalibrate",
]

CRITERIA = ("balanced_accuracy", "accuracy", "f1", "logistic")


def _scores_of(v: np.ndarray, passed: np.ndarray, higher: bool) -> tuple[np.ndarray, np.ndarray]:
    # Work in "higher passes" space: flip lower-is-better scores once, here.
    return (v if higher else -v), passed.astype(bool)


def _cut_quality(s: np.ndarray, y: np.ndarray, criterion: str) -> tuple[np.ndarray, np.ndarray]:
    """Every candidate cut (between sorted scores) and its quality; predict pass if s ≥ cut."""
    order = np.argsort(s, kind="stable")
    s, y = s[order], y[order]
    uniq, first = np.unique(s, return_index=True)
    # Cut k sits below uniq[k] (k = len(uniq): above everything): rows from first[k] pass.
    cuts = np.concatenate([[uniq[0] - 1.0], (uniq[:-1] + uniq[1:]) / 2, [uniq[-1] + 1.0]])
    starts = np.concatenate([first, [s.size]])
    pos_total, n = int(y.sum()), s.size
    pos_below = np.concatenate([[0], np.cumsum(y)])[starts]  # passes predicted "fail"
    tp = pos_total - pos_below
    predicted_pass = n - starts
    fp = predicted_pass - tp
    tn = (n - pos_total) - fp
    fn = pos_below
    with np.errstate(invalid="ignore", divide="ignore"):
        if criterion == "accuracy":
            q = (tp + tn) / n
        elif criterion == "f1":
            q = np.where(tp > 0, 2 * tp / (2 * tp + fp + fn), 0.0)
        else:  # balanced accuracy; a class with no items counts as fully recalled
            tpr = np.where(pos_total > 0, tp / max(pos_total, 1), 1.0)
            tnr = np.where(n - pos_total > 0, tn / max(n - pos_total, 1), 1.0)
            q = (tpr + tnr) / 2
    return cuts, q.astype(float)


def _logistic(s: np.ndarray, y: np.ndarray, iters: int = 50) -> tuple[float, float]:
    """Intercept and slope of P(pass | s) by Newton's method with a tiny ridge (separable data)."""
    x = np.column_stack([np.ones_like(s), s])
    w = np.zeros(2)
    ridge = 1e-3 * np.eye(2)
    for _ in range(iters):
        p = 1 / (1 + np.exp(-np.clip(x @ w, -30, 30)))
        grad = x.T @ (y - p) - ridge @ w
        hess = (x * (p * (1 - p))[:, None]).T @ x + ridge
        step = np.linalg.solve(hess, grad)
        w += step
        if np.abs(step).max() < 1e-9:
            break
    return float(w[0]), float(w[1])


def fit_threshold(
    values: np.ndarray,
    human_pass: np.ndarray,
    *,
    higher_is_better: bool = True,
    criterion: str = "balanced_accuracy",
    current: float | None = None,
) -> tuple[float, float]:
    """Return the threshold that best agrees with the human verdicts, and its agreement.

    The agreement is the criterion's value at that threshold (for ``logistic``: the
    balanced accuracy of the logistic cut). Every threshold between the highest score
    below the best cut and the lowest above it agrees equally well
    (:func:`fit_threshold_range`): ``current`` is kept when it lies in that range, else
    its middle is taken.
    """
    cut, quality, _ = fit_threshold_range(
        values,
        human_pass,
        higher_is_better=higher_is_better,
        criterion=criterion,
        current=current,
    )
    return cut, quality


def fit_threshold_range(
    values: np.ndarray,
    human_pass: np.ndarray,
    *,
    higher_is_better: bool = True,
    criterion: str = "balanced_accuracy",
    current: float | None = None,
) -> tuple[float, float, tuple[float, float]]:
    """Return the threshold, its agreement and the range of thresholds that agree as well.

    The range runs from the highest labelled score the best cut fails to the lowest it
    passes (for ``logistic``, the cut itself): any threshold in it gives the labelled
    items the same verdicts. A ``current`` threshold inside it is kept — the labels give no
    reason to move it; otherwise the range's middle is chosen.
    """
    if criterion not in CRITERIA:
        msg = f"criterion must be one of {CRITERIA}; got {criterion!r}"
        raise ValueError(msg)
    s, y = _scores_of(np.asarray(values, float), np.asarray(human_pass), higher_is_better)
    if criterion == "logistic":
        a, b = _logistic(s, y.astype(float))
        cut = -a / b if b > 1e-12 else float(np.median(s))
        q = _balanced_accuracy(s >= cut, y)
        low = high = cut
    else:
        _, quality = _cut_quality(s, y, criterion)
        best = np.flatnonzero(quality >= quality.max() - 1e-12)
        # The first run of equally good neighbouring cuts.
        breaks = np.flatnonzero(np.diff(best) > 1)
        run = best[: breaks[0] + 1] if breaks.size else best
        uniq = np.unique(s)
        # Cut k passes the scores from uniq[k] up: a threshold in (uniq[k-1], uniq[k]]
        # gives the same verdicts. The run's range, kept within the labelled scores.
        low = float(uniq[run[0] - 1]) if run[0] > 0 else float(uniq[0])
        high = float(uniq[run[-1]]) if run[-1] < uniq.size else float(uniq[-1])
        cut, q = (low + high) / 2, float(quality[run[0]])
        if current is not None and math.isfinite(current):
            here = current if higher_is_better else -current
            if low < here <= high:
                cut = here
    if higher_is_better:
        return float(cut), q, (low, high)
    return -float(cut), q, (-high, -low)


def _balanced_accuracy(pred: np.ndarray, y: np.ndarray) -> float:
    """Balanced accuracy of predicted vs human pass (classes with no items count as 1)."""
    pos, neg = y.sum(), (~y).sum()
    tpr = float((pred & y).sum() / pos) if pos else 1.0
    tnr = float((~pred & ~y).sum() / neg) if neg else 1.0
    return (tpr + tnr) / 2


@dataclass(frozen=True)
class Calibration:
    """The outcome of ``lab.calibration.recalibrate`` for one metric."""

    evaluator: str
    metric: str
    criterion: str
    n_labels: int
    old_threshold: float | None
    threshold: float
    ci: tuple[float, float]
    agreement: float
    agreement_ci: tuple[float, float]
    kappa_before: float
    kappa_after: float
    width: float
    more_labels: int
    """Labels still needed (estimated, CI width ∝ 1/√n) for the interval to reach ``target_width``."""
    target_width: float
    points: pl.DataFrame = field(repr=False)
    """The labelled items: ``value`` and ``human_pass``."""
    kappa_ci: tuple[float, float] = (float("nan"), float("nan"))
    """95 % interval of the κ after, from the same resampling (the threshold refitted each time)."""
    equivalent: tuple[float, float] = (float("nan"), float("nan"))
    """Every threshold in this range gives the labelled items the same verdicts as ``threshold``."""
    rule: str = ""
    """How ``threshold`` was chosen within ``equivalent`` (kept, the middle, the logistic cut)."""

    def summary(self) -> str:
        """Return one paragraph a reviewer can read."""
        old = "none" if self.old_threshold is None else f"{self.old_threshold:.4g}"
        more = (
            "the interval is as narrow as asked"
            if self.more_labels == 0
            else f"about {self.more_labels} more labels would narrow it to ±{self.target_width / 2:.3g}"
        )
        return (
            f"{self.evaluator}/{self.metric}: threshold {old} → {self.threshold:.4g} "
            f"({self.rule}; equally good {self.equivalent[0]:.4g}–{self.equivalent[1]:.4g}; "
            f"95 % CI {self.ci[0]:.4g}–{self.ci[1]:.4g}) from {self.n_labels} human labels; "
            f"{self.criterion} {self.agreement:.3f} (CI {self.agreement_ci[0]:.3f}–"
            f"{self.agreement_ci[1]:.3f}); Cohen's κ metric vs humans {self.kappa_before:.3f} "
            f"before, {self.kappa_after:.3f} after (CI {self.kappa_ci[0]:.3f}–"
            f"{self.kappa_ci[1]:.3f}); {more}."
        )

    def to_dict(self) -> dict[str, object]:
        """Return the numbers as JSON-able values (for widgets and exports)."""
        clean = finite_or_none
        return {
            "evaluator": self.evaluator,
            "metric": self.metric,
            "criterion": self.criterion,
            "n_labels": self.n_labels,
            "old_threshold": clean(self.old_threshold),
            "threshold": clean(self.threshold),
            "ci": [clean(c) for c in self.ci],
            "agreement": clean(self.agreement),
            "agreement_ci": [clean(c) for c in self.agreement_ci],
            "kappa_before": clean(self.kappa_before),
            "kappa_after": clean(self.kappa_after),
            "kappa_ci": [clean(c) for c in self.kappa_ci],
            "equivalent": [clean(c) for c in self.equivalent],
            "rule": self.rule,
            "more_labels": self.more_labels,
            "target_width": self.target_width,
        }


def labelled_points(lab: LabCore, evaluator: str, metric: str) -> pl.DataFrame:
    """Human verdicts joined to the metric's scores: ``ITEM, value, human_pass``."""
    human = human_verdicts(lab.labels, evaluator, metric).drop_nulls("human_pass")
    scores = lab.metric_scores(evaluator, metric).select(*ITEM, "value")
    return human.join(scores, on=ITEM).drop_nulls("value").select(*ITEM, "value", "human_pass")


def calibrate(
    lab: LabCore,
    evaluator: str,
    metric: str,
    *,
    criterion: str = "balanced_accuracy",
    n_boot: int = 1000,
    seed: int = 0,
    target_width: float = 0.05,
) -> Calibration:
    """Fit the threshold of one metric to the humans' verdicts (see the module docstring)."""
    spec = lab.metric_spec(evaluator, metric)
    old = spec["threshold"]
    higher = bool(spec["higher_is_better"])
    points = labelled_points(lab, evaluator, metric)
    v = points["value"].to_numpy()
    y = points["human_pass"].to_numpy().astype(bool)
    if v.size < 4 or y.all() or (~y).all():
        msg = (
            f"recalibrating {evaluator}/{metric} needs at least 4 human labels with both "
            f"verdicts; got {v.size} ({int(y.sum())} pass, {int((~y).sum())} fail). "
            "Label more items (lab.calibration.sample(...) or evalnb.labeler(...))"
        )
        raise ValueError(msg)
    cut, quality, equivalent = fit_threshold_range(
        v, y, higher_is_better=higher, criterion=criterion, current=old
    )
    rng = np.random.default_rng(seed)
    cuts, quals, kappas = np.empty(n_boot), np.empty(n_boot), np.empty(n_boot)
    for i in range(n_boot):
        idx = rng.integers(0, v.size, v.size)
        if y[idx].all() or (~y[idx]).all():
            cuts[i] = quals[i] = kappas[i] = np.nan  # one-class resample: no cut is defined
            continue
        cuts[i], quals[i] = fit_threshold(
            v[idx], y[idx], higher_is_better=higher, criterion=criterion, current=old
        )
        kappas[i] = cohen_kappa(v[idx] >= cuts[i] if higher else v[idx] <= cuts[i], y[idx])
    lo, hi = np.nanpercentile(cuts, [2.5, 97.5])
    # Every threshold of the tie fits the labels as well as the one chosen: the interval
    # holds them all (one point of a flat optimum is not known better than the others).
    lo, hi = min(float(lo), equivalent[0]), max(float(hi), equivalent[1])
    kept = old is not None and cut == old
    rule = (
        "kept: the current threshold is among those that fit the labels best"
        if kept
        else "the middle of the thresholds that fit the labels best"
        if criterion != "logistic"
        else "where the logistic fit's P(pass) crosses 0.5"
    )
    qlo, qhi = np.nanpercentile(quals, [2.5, 97.5])
    klo, khi = np.nanpercentile(kappas, [2.5, 97.5])

    def verdicts_at(t: float | None) -> np.ndarray:
        if t is None or not math.isfinite(t):
            return np.ones_like(y) if higher else np.zeros_like(y)
        return v >= t if higher else v <= t

    width = float(hi - lo)
    more = (
        max(0, math.ceil(v.size * (width / target_width) ** 2) - v.size)
        if width > target_width
        else 0
    )
    return Calibration(
        evaluator,
        metric,
        criterion,
        int(v.size),
        old,
        cut,
        (float(lo), float(hi)),
        quality,
        (float(qlo), float(qhi)),
        cohen_kappa(verdicts_at(old), y),
        cohen_kappa(verdicts_at(cut), y),
        width,
        more,
        target_width,
        points,
        (float(klo), float(khi)),
        equivalent,
        rule,
    )


def recalibrate(
    lab: LabCore,
    evaluator: str,
    metric: str,
    *,
    criterion: str = "balanced_accuracy",
    apply: bool = True,
    n_boot: int = 1000,
    seed: int = 0,
    target_width: float = 0.05,
) -> Calibration:
    """Fit the metric's threshold to the human verdicts, with bootstrap CIs and κ.

    ``criterion``: ``balanced_accuracy`` (default), ``accuracy``, ``f1`` or ``logistic``
    (where P(human pass | score) crosses 0.5). With ``apply`` the new threshold is
    stored as a ``calibrated`` version; problems, insights, the eye and reports follow.
    """
    result = calibrate(
        lab,
        evaluator,
        metric,
        criterion=criterion,
        n_boot=n_boot,
        seed=seed,
        target_width=target_width,
    )
    if apply:
        row = pl.DataFrame(
            [
                {
                    "evaluator": evaluator,
                    "metric": metric,
                    "threshold": result.threshold,
                    "source": "calibrated",
                    "n_labels": result.n_labels,
                    "agreement": result.agreement,
                    "ci_low": result.ci[0],
                    "ci_high": result.ci[1],
                    "created_at": dt.datetime.now(dt.UTC),
                }
            ],
            schema=SCHEMAS["thresholds"],
        )
        lab.append_rows("thresholds", row)
    return result
