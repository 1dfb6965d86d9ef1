"""Prediction-powered estimates: human labels correct the metric's pass rate, with a valid CI.

The question a risk owner asks is not "where is the threshold" but "what share of this
model's answers would a human pass?". The metric answers it for every row, biased; the
humans answer it without bias, for few rows. Prediction-powered inference (Angelopoulos et
al. 2023; the power-tuned PPI++, 2024) combines them::

    estimate = λ · mean over all rows of the metric's verdict
             + mean over labelled rows of (human verdict − λ · metric verdict)

The second term measures the metric's bias on the labelled rows and removes it, so the
estimate is unbiased whatever the metric's quality; λ (between 0 and 1) is chosen to make
the interval narrowest: near 1 when the metric tracks the humans, 0 when it does not —
then the estimate *is* the humans' own pass rate. The metric's verdict is known for every
row of the lab, so its mean has no sampling error; only the labelled rows' term does.

Assumptions, stated so they can be checked: the labelled rows are a random sample of the
model's scored rows, drawn uniformly or with known inclusion probabilities (``random`` and
``stratified`` labeler batches record theirs; rows are then weighted by 1/probability).
Rows labelled because they sat near the threshold (``active`` sampling) are not a random
sample: they are left out of the estimate and counted. Labels given outside labeler batches
count only when the caller says they were drawn at random (``assume_random=True``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

__all__ = ["Interval", "PPIEstimate", "ppi_mean", "ppi_superpopulation"]


@dataclass(frozen=True)
class PPIEstimate:
    """A corrected mean with its interval, and what it is worth in human labels."""

    estimate: float
    ci_low: float
    ci_high: float
    lam: float
    """The weight given to the metric (0: the humans alone; 1: the classic difference estimator)."""
    human_only: float
    human_ci: tuple[float, float]
    automatic: float
    n_labels: int
    n_rows: int
    effective_labels: float
    """How many randomly drawn human labels alone would give an interval this narrow."""


def _clip(value: float) -> float:
    return float(min(1.0, max(0.0, value)))  # a rate stays in [0, 1]


def _agresti_coull(successes: float, n: int) -> float:
    """Return the variance of a proportion with two successes and two failures added."""
    p = (successes + 2) / (n + 4)
    return p * (1 - p) / (n + 4)


def _weighted(values: np.ndarray, w: np.ndarray) -> tuple[float, float]:
    """Hájek mean of ``values`` with weights ``w`` and the variance of that mean."""
    total = w.sum()
    mean = float((w * values).sum() / total)
    var = float((w**2 * (values - mean) ** 2).sum() / total**2)
    n = values.size
    return mean, var * n / (n - 1)  # the usual small-sample correction of the plug-in


def ppi_mean(
    human: np.ndarray,
    metric_labelled: np.ndarray,
    metric_all: np.ndarray,
    *,
    weights: np.ndarray | None = None,
    level: float = 0.95,
) -> PPIEstimate:
    """Estimate the population mean of the human verdict from labels and the metric's verdicts.

    Parameters
    ----------
    human
        Human verdicts (1 pass, 0 fail) of the labelled rows.
    metric_labelled
        The metric's verdicts (1/0) on the same rows.
    metric_all
        The metric's verdicts on every row of the population (labelled ones included).
    weights
        1 / inclusion probability of each labelled row (None: a uniform random sample).
    level
        The interval's coverage.
    """
    y = np.asarray(human, dtype=float)
    f = np.asarray(metric_labelled, dtype=float)
    n, big_n = y.size, int(np.asarray(metric_all).size)
    if n < 2:
        msg = f"a corrected estimate needs at least 2 labelled rows drawn at random; got {n}"
        raise ValueError(msg)
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
    # Without replacement from a finite population of N rows: the fpc shrinks the variance.
    fpc = max(0.0, 1.0 - n / big_n) if weights is None else 1.0
    z = NormalDist().inv_cdf(0.5 + level / 2)
    mean_f = float(np.mean(metric_all))
    h_mean, h_var = _weighted(y, w)
    h_var *= fpc
    # Power tuning: the λ that minimises Var(mean(y − λ f)) is Cov(y, f) / Var(f).
    fm = float((w * f).sum() / w.sum())
    var_f = float((w * (f - fm) ** 2).sum())
    cov = float((w * (f - fm) * (y - h_mean)).sum())
    lam = float(np.clip(cov / var_f, 0.0, 1.0)) if var_f > 0 else 0.0
    r_mean, r_var = _weighted(y - lam * f, w)
    r_var *= fpc
    # A sample that shows no spread (every label the same, or every one agreeing with the
    # metric) would give a zero-width interval; bound the unseen rate as Agresti–Coull do.
    h_var = max(h_var, _agresti_coull(float(y.sum()), n) * fpc)
    if r_var == 0:
        r_var = _agresti_coull(float(np.abs(y - lam * f).sum()), n) * fpc
    est = lam * mean_f + r_mean
    half, h_half = z * np.sqrt(r_var), z * np.sqrt(h_var)
    # What n random labels alone would need for this variance: Var(y)·fpc / n_eff = r_var.
    eff = float(n * h_var / r_var) if r_var > 0 else float("inf")
    return PPIEstimate(
        _clip(est),
        _clip(est - half),
        _clip(est + half),
        lam,
        h_mean,
        (_clip(h_mean - h_half), _clip(h_mean + h_half)),
        mean_f,
        n,
        big_n,
        eff,
    )


@dataclass(frozen=True)
class Interval:
    """An estimate with its interval (and the λ that weighed the metric, where there is one)."""

    estimate: float
    low: float
    high: float
    lam: float | None = None


def ppi_superpopulation(
    human: np.ndarray,
    metric_labelled: np.ndarray,
    metric_unlabelled: np.ndarray,
    *,
    level: float = 0.95,
    lam: float | None = None,
) -> Interval:
    """PPI++ estimate and z-interval of a mean, equal to ``ppi-python``'s for the same data.

    Parameters
    ----------
    human
        The reviewers' verdicts (1 pass, 0 fail) on the labelled rows, a uniform random sample.
    metric_labelled
        The metric's verdicts on the same rows.
    metric_unlabelled
        The metric's verdicts on the rows nobody labelled.
    level
        The interval's coverage (``ppi-python``'s ``1 - alpha``).
    lam
        λ, or None to fit it (the power-tuned value, clipped to [0, 1]).

    Returns
    -------
    Interval
        The estimate and interval, not clipped to [0, 1] (as the reference gives them).
    """
    y = np.asarray(human, dtype=float)
    f = np.asarray(metric_labelled, dtype=float)
    u = np.asarray(metric_unlabelled, dtype=float)
    n, big_n = y.size, u.size
    if n < 2 or big_n < 1:
        msg = (
            "a PPI estimate needs at least 2 labelled rows and 1 unlabelled row; "
            f"got {n} and {big_n}"
        )
        raise ValueError(msg)
    if lam is None:
        # The covariance over the labelled rows (divided by n), the variance over all rows
        # (divided by n + N - 1): the reference's `_calc_lam_glm` for a mean.
        cov = float(np.mean((y - y.mean()) * (f - f.mean())))
        var = float(np.var(np.concatenate([f, u]), ddof=1))
        lam = float(np.clip(cov / ((1 + n / big_n) * var), 0.0, 1.0)) if var > 0 else 0.0
    estimate = float(lam * u.mean() + np.mean(y - lam * f))
    # Standard deviations with ddof 0, as numpy's default that the reference uses.
    sd = math.sqrt(np.var(lam * u) / big_n + np.var(y - lam * f) / n)
    z = NormalDist().inv_cdf(0.5 + level / 2)
    return Interval(estimate, estimate - z * sd, estimate + z * sd, lam)
