"""The judge reliability card's statistics, on arrays: each returns an estimate with its 95 % interval.

Pure kernels, no lab and no judge: :mod:`evalnb.judge_reliability.components` feeds them what the
judge said. Each is the textbook statistic, checked in the tests against a reference
implementation: Wilson's interval (statsmodels' ``proportion_confint(method="wilson")``),
Cohen's κ (scikit-learn's ``cohen_kappa_score``), ICC(2,1) (pingouin's ``intraclass_corr``,
Shrout & Fleiss' two-way random effects, absolute agreement, single rater).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from evalnb.calibration.labels import cohen_kappa
from evalnb.calibration.reliability import wilson_interval

__all__ = [
    "Measured",
    "icc21",
    "kappa_interval",
    "length_slope",
    "mean_difference",
    "position_measures",
    "repeat_kappa",
    "wilson",
    "within_item_sd",
]

_Z = NormalDist().inv_cdf(0.975)


@dataclass(frozen=True)
class Measured:
    """A measure's value with its 95 % interval and the number of items behind it."""

    estimate: float
    low: float
    high: float
    n: int


def wilson(successes: int, n: int) -> Measured:
    """Return a proportion with Wilson's score interval (95 %): evalnb's one Wilson.

    :func:`evalnb.calibration.reliability.wilson_interval` computes it (equal to
    statsmodels' ``proportion_confint(method="wilson")``); this names it for the card.
    """
    if n == 0:
        return Measured(math.nan, math.nan, math.nan, 0)
    low, high = wilson_interval(successes, n, _Z)
    return Measured(successes / n, float(low), float(high), n)


def kappa_interval(
    a: np.ndarray,
    b: np.ndarray,
    *,
    weights: str | None = None,
    draws: int = 2000,
    seed: int = 0,
) -> Measured:
    """Return Cohen's κ of two raters with a percentile bootstrap interval over items.

    Verdicts (booleans) by default; with ``weights`` (``"linear"``, ``"quadratic"``) ordered
    grades and the weighted κ.
    """
    x, y = (np.asarray(v, dtype=bool if weights is None else None) for v in (a, b))
    n = x.size
    if n < 2:
        return Measured(math.nan, math.nan, math.nan, n)
    kappa = cohen_kappa(x, y, weights)
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, n, size=(draws, n))
    # The one κ per draw (calibration.labels.cohen_kappa): its NaN where a draw leaves both
    # sides constant is left out of the quantiles.
    boot = np.array([cohen_kappa(x[p], y[p], weights) for p in picks])
    if not math.isfinite(kappa) or np.isnan(boot).all():
        return Measured(float(kappa), math.nan, math.nan, n)
    low, high = np.nanquantile(boot, [0.025, 0.975])
    return Measured(float(kappa), float(low), float(high), n)


def repeat_kappa(verdicts: np.ndarray) -> Measured:
    """Return test–retest κ of an items × repeats verdict matrix: the mean over pairs of runs.

    The interval is the bootstrap one of the first two runs' κ (the pairs share items).
    """
    v = np.asarray(verdicts, dtype=bool)
    pairs = [(i, j) for i in range(v.shape[1]) for j in range(i + 1, v.shape[1])]
    kappas = [cohen_kappa(v[:, i], v[:, j]) for i, j in pairs]
    first = kappa_interval(v[:, 0], v[:, 1])
    return Measured(float(np.mean(kappas)), first.low, first.high, v.shape[0])


def icc21(scores: np.ndarray) -> Measured:
    """Return ICC(2,1) of an items × repeats score matrix with its F-based 95 % interval.

    Two-way random effects, absolute agreement, single measurement (Shrout & Fleiss 1979;
    the interval of McGraw & Wong 1996), as pingouin's ``intraclass_corr`` row ``ICC2``.
    """
    x = np.asarray(scores, dtype=float)
    n, k = x.shape
    if n < 2 or k < 2:
        return Measured(math.nan, math.nan, math.nan, n)
    grand = x.mean()
    ss_rows = k * float(((x.mean(axis=1) - grand) ** 2).sum())
    ss_cols = n * float(((x.mean(axis=0) - grand) ** 2).sum())
    ss_err = float(((x - grand) ** 2).sum()) - ss_rows - ss_cols
    msr, msc = ss_rows / (n - 1), ss_cols / (k - 1)
    mse = ss_err / ((n - 1) * (k - 1))
    denominator = msr + (k - 1) * mse + k * (msc - mse) / n
    if denominator <= 0:
        return Measured(1.0 if msr > 0 or mse == 0 else math.nan, math.nan, math.nan, n)
    icc = (msr - mse) / denominator
    from scipy import stats  # noqa: PLC0415 - only when a card is computed

    # McGraw & Wong's interval for ICC(A,1), with Satterthwaite's degrees of freedom.
    a = k * icc / (n * (1 - icc)) if icc < 1 else math.inf
    b = 1 + k * icc * (n - 1) / (n * (1 - icc)) if icc < 1 else math.inf
    if not math.isfinite(a) or mse == 0:
        return Measured(float(icc), float(icc), float(icc), n)
    v = (a * msc + b * mse) ** 2 / ((a * msc) ** 2 / (k - 1) + (b * mse) ** 2 / ((n - 1) * (k - 1)))
    f_low = stats.f.ppf(0.975, n - 1, v)
    f_high = stats.f.ppf(0.975, v, n - 1)
    low = n * (msr - f_low * mse) / (f_low * (k * msc + (k * n - k - n) * mse) + n * msr)
    high = n * (f_high * msr - mse) / (k * msc + (k * n - k - n) * mse + n * f_high * msr)
    return Measured(float(icc), float(low), float(high), n)


def within_item_sd(scores: np.ndarray) -> Measured:
    """Return the within-item standard deviation across repeats (√ of Miller's σ²ᵢ, pooled).

    The interval is χ²-based on the pooled variance's n·(k − 1) degrees of freedom.
    """
    x = np.asarray(scores, dtype=float)
    n, k = x.shape
    if n < 1 or k < 2:
        return Measured(math.nan, math.nan, math.nan, n)
    var = float(x.var(axis=1, ddof=1).mean())
    df = n * (k - 1)
    from scipy import stats  # noqa: PLC0415

    low = math.sqrt(df * var / stats.chi2.ppf(0.975, df))
    high = math.sqrt(df * var / stats.chi2.ppf(0.025, df))
    return Measured(math.sqrt(var), low, high, n)


def mean_difference(after: np.ndarray, before: np.ndarray) -> Measured:
    """Return the mean paired difference ``after − before`` with its t interval."""
    d = np.asarray(after, dtype=float) - np.asarray(before, dtype=float)
    d = d[np.isfinite(d)]
    n = d.size
    if n < 2:
        return Measured(float(d.mean()) if n else math.nan, math.nan, math.nan, n)
    from scipy import stats  # noqa: PLC0415

    mean, se = float(d.mean()), float(d.std(ddof=1) / math.sqrt(n))
    t = float(stats.t.ppf(0.975, n - 1))
    return Measured(mean, mean - t * se, mean + t * se, n)


def length_slope(scores: np.ndarray, words: np.ndarray) -> Measured:
    """Return the OLS slope of score on answer length, per 100 words, with its t interval."""
    y = np.asarray(scores, dtype=float)
    x = np.asarray(words, dtype=float) / 100
    keep = np.isfinite(y) & np.isfinite(x)
    y, x = y[keep], x[keep]
    n = y.size
    if n < 3 or np.ptp(x) == 0:
        return Measured(math.nan, math.nan, math.nan, n)
    from scipy import stats  # noqa: PLC0415

    fit = stats.linregress(x, y)
    t = float(stats.t.ppf(0.975, n - 2))
    return Measured(
        float(fit.slope), float(fit.slope - t * fit.stderr), float(fit.slope + t * fit.stderr), n
    )


def position_measures(first_order: list[str], swapped: list[str]) -> dict[str, Measured]:
    """Position bias from the winners of each pair asked in both orders.

    ``first_order[i]`` is the winner (``"a"``, ``"b"`` or ``"tie"``) with A shown first,
    ``swapped[i]`` with B shown first. Returns ``flip_rate`` (decisive pairs whose winner
    changed with the order), ``first_position_rate`` (the share of decisive verdicts that
    chose whichever answer was shown first; 0.5 is no lean) and ``position_lean`` (among
    flips, first-shown picks minus second-shown picks, over flips: −1 … 1, 0 fair).
    """
    decisive = [
        (x, y) for x, y in zip(first_order, swapped, strict=True) if x != "tie" and y != "tie"
    ]
    flips = [(x, y) for x, y in decisive if x != y]
    first_picks = sum((x == "a") + (y == "b") for x, y in decisive)
    lean_first = sum(x == "a" and y == "b" for x, y in flips)
    lean_second = len(flips) - lean_first
    lean = (lean_first - lean_second) / len(flips) if flips else math.nan
    # the lean's interval: from the share of flips that went to the first position
    share = wilson(lean_first, len(flips))
    return {
        "flip_rate": wilson(len(flips), len(decisive)),
        "first_position_rate": wilson(int(first_picks), 2 * len(decisive)),
        "position_lean": Measured(
            lean,
            2 * share.low - 1 if flips else math.nan,
            2 * share.high - 1 if flips else math.nan,
            len(flips),
        ),
    }
