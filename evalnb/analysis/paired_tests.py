"""Paired tests of two systems' per-case values: plain, clustered (CR1), and their corrections.

The statistics behind :func:`evalnb.analysis.decide.decide`, on arrays: the oriented mean
difference with its standard error, interval and p-value (exact McNemar for 0/1 values,
paired t for numbers, CR1 with Student's t on G − 1 degrees of freedom for clustered cases,
and the wild cluster bootstrap when the clusters are few), and Holm's or
Benjamini–Yekutieli's adjustment across many comparisons.

With few clusters (fewer than :data:`FEW_CLUSTERS`), CR1's t reference is too narrow when
clusters differ in size or spread. The wild cluster bootstrap-t (Cameron, Gelbach & Miller,
"Bootstrap-based improvements for inference with clustered errors", 2008) then gives the
p-value: the null is imposed and each cluster's residuals are multiplied by one random
weight. Rademacher weights (±1) for 7 to 12 clusters, every one of the 2^G patterns
enumerated; beyond 12, 9,999 seeded draws. With 6 clusters or fewer, 2^G patterns allow no
p-value under 2/2^G (0.031 for six: never significant after a correction), so Webb's
six-point weights (±√½, ±1, ±√1.5; "Reworking wild bootstrap-based inference for clustered
errors", 2023), all 6^G patterns. The interval inverts the same test: every difference it
would not reject.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

__all__ = [
    "FEW_CLUSTERS",
    "ONE_CLUSTER",
    "PairedTest",
    "adjust",
    "paired_test",
    "tango_interval",
    "wild_cluster_bootstrap",
]

FEW_CLUSTERS = 30
ONE_CLUSTER = "fewer than 2 clusters"
_NO_DISCORDANCE = "exact McNemar, Tango's interval (no discordant pair in any cluster)"
_WEBB = 6  # up to 6^6 = 46,656 patterns of Webb's weights, all of them
_ENUMERATE = 12  # up to 2^12 = 4,096 sign patterns: all of them, not a sample


@dataclass(frozen=True)
class PairedTest:
    """One paired comparison: the oriented mean difference, its SE, interval and p-value."""

    n: int
    clusters: int
    difference: float
    se: float
    ci_low: float
    ci_high: float
    p_value: float
    method: str
    design_effect: float
    p_wilcoxon: float | None = None


def _cr1_se(d: np.ndarray, groups: np.ndarray) -> tuple[float, int]:
    """Return the CR1 standard error of the mean of ``d`` clustered by ``groups``, and G."""
    n = d.size
    residual = d - d.mean()
    _, inverse = np.unique(groups, return_inverse=True)
    sums = np.bincount(inverse, weights=residual)
    g = sums.size
    if g < 2:
        return math.nan, g
    # statsmodels' small-sample factor for OLS with k = 1 regressor: G/(G-1) · (N-1)/(N-k)
    factor = g / (g - 1) * (n - 1) / (n - 1)
    return math.sqrt(factor * float(np.sum(sums**2)) / n**2), g


@functools.cache
def _all_patterns(g: int, webb: bool) -> np.ndarray:
    """Every weight pattern of ``g`` clusters (kept: deciding many metrics reuses them)."""
    if webb:
        # Webb's six points: 6^G patterns where Rademacher's 2^G would leave too few p-values.
        points = np.array(
            [-math.sqrt(1.5), -1.0, -math.sqrt(0.5), math.sqrt(0.5), 1.0, math.sqrt(1.5)]
        )
        out = points[np.arange(6**g)[:, None] // (6 ** np.arange(g))[None, :] % 6]
    else:
        out = np.where((np.arange(2**g)[:, None] >> np.arange(g)[None, :]) & 1, 1.0, -1.0)
    out.setflags(write=False)
    return out


def _sign_patterns(g: int, draws: int, seed: int) -> np.ndarray:
    """Weights per cluster and draw (see the module docstring for which and why)."""
    if g <= _ENUMERATE:
        return _all_patterns(g, webb=g <= _WEBB)
    return np.random.default_rng(seed).choice([-1.0, 1.0], size=(draws, g))


def wild_cluster_bootstrap(
    d: np.ndarray, groups: np.ndarray, *, alpha: float = 0.05, draws: int = 9999, seed: int = 0
) -> tuple[float, float, float]:
    """Return the wild cluster bootstrap-t p-value of mean(d) = 0 and the interval it inverts.

    See the module docstring; the t statistics use the CR1 standard error. The interval is
    every μ₀ the same test (null μ = μ₀ imposed) would not reject at ``alpha``, found by
    bisection, so it excludes 0 exactly when the p-value is under ``alpha``.
    """
    d = np.asarray(d, dtype=float)
    n = d.size
    _, inverse = np.unique(groups, return_inverse=True)
    g = int(inverse.max()) + 1
    sizes = np.bincount(inverse, minlength=g).astype(float)
    mean = float(d.mean())
    se, _ = _cr1_se(d, groups)
    weights = _sign_patterns(g, draws, seed)  # (B, G)
    factor = g / (g - 1)
    sums = np.bincount(inverse, weights=d, minlength=g)
    # Under μ = μ0 a draw's cluster sums are w_g (s_g − μ0 n_g): linear in μ0, so its mean
    # shift and its residuals' sum of squares are a line and a parabola in μ0, their
    # coefficients computed once for every draw.
    a, b = weights * sums[None, :], weights * sizes[None, :]
    sum_a, sum_b = a.sum(axis=1), b.sum(axis=1)
    p_part = a - np.outer(sum_a / n, sizes)
    q_part = b - np.outer(sum_b / n, sizes)
    pp, pq, qq = (p_part**2).sum(axis=1), (p_part * q_part).sum(axis=1), (q_part**2).sum(axis=1)

    def p_value(mu0: float) -> float:
        shift = (sum_a - mu0 * sum_b) / n  # the draw's mean − μ0
        squares = np.maximum(pp - 2 * mu0 * pq + mu0**2 * qq, 0.0)
        boot_se = np.sqrt(factor * squares) / n
        with np.errstate(divide="ignore", invalid="ignore"):
            t_boot = np.abs(np.where(boot_se > 0, shift / boot_se, 0.0))
        t_obs = abs(mean - mu0) / se if se > 0 else math.inf
        return float(np.mean(t_boot >= t_obs - 1e-12))

    def edge(direction: float) -> float:
        inside, outside = mean, mean + direction * se
        while p_value(outside) >= alpha and abs(outside - mean) < 1e6 * max(se, 1e-12):
            inside, outside = outside, mean + 2 * (outside - mean)
        # Bisection until the edge is known to a millionth of a standard error (about 20
        # halvings); 50 fixed halvings went far past any digit shown and doubled the time
        # of a decision on few clusters. The count bounds the loop should se be tiny.
        tolerance = 1e-6 * max(se, 1e-12)
        for _ in range(200):
            if abs(outside - inside) <= tolerance:
                break
            middle = (inside + outside) / 2
            if p_value(middle) >= alpha:
                inside = middle
            else:
                outside = middle
        return (inside + outside) / 2

    return p_value(0.0), edge(-1.0), edge(1.0)


def tango_interval(better: int, worse: int, n: int, alpha: float = 0.05) -> tuple[float, float]:
    """Return Tango's score interval for a paired difference of proportions.

    ``better`` and ``worse`` are the discordant pairs (b = 1, a = 0 and the reverse) of
    ``n``; the difference is (better − worse) / n. Tango ("Equivalence test and confidence
    interval for the difference in proportions for the paired-sample design", Statistics
    in Medicine 1998) inverts the score test whose variance is taken under each null
    difference Δ₀ (the discordance probability re-estimated there), so that, unlike the
    Wald interval, it keeps its width when no pair is discordant: with none of 30 pairs it
    is ±z²/(n + z²) = ±0.114 at 95 %, not [0, 0].
    """
    from scipy import stats  # noqa: PLC0415

    z = float(stats.norm.ppf(1 - alpha / 2))
    observed = (better - worse) / n

    def score(delta: float) -> float:
        w = -better - worse + (2 * n - better + worse) * delta
        root = math.sqrt(max(w * w + 8 * n * worse * delta * (1 - delta), 0.0))
        q21 = max((root - w) / (4 * n), 0.0)
        variance = n * (2 * q21 + delta * (1 - delta))
        if variance <= 0:
            return math.inf if better - worse > n * delta else -math.inf
        return (better - worse - n * delta) / math.sqrt(variance)

    def edge(inside: float, outside: float) -> float:
        if abs(score(outside)) <= z:
            return round(outside)  # the interval reaches ±1
        for _ in range(100):  # the score falls with Δ₀: bisect to 1e-12 or so
            middle = (inside + outside) / 2
            if abs(score(middle)) <= z:
                inside = middle
            else:
                outside = middle
        return (inside + outside) / 2

    end = 1 - 1e-12
    return edge(observed, -end), edge(observed, end)


def _mcnemar(d: np.ndarray, alpha: float) -> tuple[float, float, float]:
    """Exact McNemar's p-value of oriented 0/±1 differences, with Tango's interval."""
    from scipy import stats  # noqa: PLC0415

    better = int(np.sum(d > 0))
    worse = int(np.sum(d < 0))
    k = better + worse
    p = float(min(1.0, 2 * stats.binom.cdf(min(better, worse), k, 0.5))) if k else 1.0
    low, high = tango_interval(better, worse, d.size, alpha)
    return p, low, high


def paired_test(
    a: np.ndarray,
    b: np.ndarray,
    *,
    clusters: np.ndarray | None = None,
    alpha: float = 0.05,
    bootstrap: bool | None = None,
    higher_is_better: bool = True,
) -> PairedTest:
    """Compare paired values: ``b - a`` (positive: ``b`` better), as described above.

    ``bootstrap``: the wild cluster bootstrap for clustered cases; None (default) uses it
    when there are fewer than :data:`FEW_CLUSTERS` clusters. ``higher_is_better`` False
    turns the difference round (``a - b``); the test chosen depends on the values only
    (0/1 values get McNemar's whichever way the metric points).

    Unclustered 0/1 values get exact McNemar's p-value and Tango's score interval
    (:func:`tango_interval`), which keeps its width when no pair is discordant. Clustered
    values need two clusters at least for a cluster-robust error: with fewer, the result
    says so (method ``"fewer than 2 clusters"``) and has no interval and p = 1.
    """
    from scipy import stats  # noqa: PLC0415 - heavy import, only when deciding

    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    binary = bool(np.all(np.isin(a, (0.0, 1.0))) and np.all(np.isin(b, (0.0, 1.0))))
    if not higher_is_better:
        a, b = -a, -b
    d = b - a
    n = d.size
    if n < 2:
        return PairedTest(
            n,
            n,
            float(d.mean()) if n else math.nan,
            math.nan,
            math.nan,
            math.nan,
            1.0,
            "too few cases",
            math.nan,
        )
    mean = float(d.mean())
    naive_se = float(d.std(ddof=1) / math.sqrt(n))
    wilcoxon = None
    if np.any(d != 0):
        wilcoxon = float(stats.wilcoxon(b, a).pvalue)
    if clusters is not None:
        se, g = _cr1_se(d, clusters)
        if g < 2:  # one cluster: its residuals sum to 0, so CR1 has nothing to estimate from
            return PairedTest(
                n, g, mean, math.nan, math.nan, math.nan, 1.0, ONE_CLUSTER, math.nan, wilcoxon
            )
        if se == 0 and binary:  # no discordant pair anywhere: CR1 says 0, Tango does not
            p, low, high = _mcnemar(d, alpha)
            z = float(stats.norm.ppf(1 - alpha / 2))
            return PairedTest(
                n,
                g,
                mean,
                (high - low) / (2 * z),
                low,
                high,
                p,
                _NO_DISCORDANCE,
                math.nan,
                wilcoxon,
            )
        df = max(g - 1, 1)
        t = stats.t.ppf(1 - alpha / 2, df)
        if not math.isfinite(se) or se == 0:
            p = 1.0 if mean == 0 else 0.0
        else:
            p = float(2 * stats.t.sf(abs(mean) / se, df))
        deff = (se / naive_se) ** 2 if naive_se > 0 else math.nan
        if (bootstrap if bootstrap is not None else g < FEW_CLUSTERS) and g >= 2 and se > 0:
            p, low, high = wild_cluster_bootstrap(d, clusters, alpha=alpha)
            return PairedTest(
                n, g, mean, se, low, high, p, "wild cluster bootstrap", deff, wilcoxon
            )
        return PairedTest(
            n, g, mean, se, mean - t * se, mean + t * se, p, f"CR1, t({df})", deff, wilcoxon
        )
    if binary:
        p, low, high = _mcnemar(d, alpha)
        z = float(stats.norm.ppf(1 - alpha / 2))
        return PairedTest(
            n, n, mean, (high - low) / (2 * z), low, high, p, "exact McNemar", 1.0, wilcoxon
        )
    t = stats.t.ppf(1 - alpha / 2, n - 1)
    p = float(stats.ttest_rel(b, a).pvalue) if naive_se > 0 else (1.0 if mean == 0 else 0.0)
    return PairedTest(
        n, n, mean, naive_se, mean - t * naive_se, mean + t * naive_se, p, "paired t", 1.0, wilcoxon
    )


def adjust(p_values: np.ndarray, method: str = "holm") -> np.ndarray:
    """Return p-values adjusted for multiplicity: Holm's step-down or Benjamini–Yekutieli.

    Equal to statsmodels' ``multipletests(method="holm" | "fdr_by")``; written out here
    because a few lines do not justify statsmodels at run time.
    """
    p = np.asarray(p_values, dtype=float)
    m = p.size
    if m == 0:
        return p
    order = np.argsort(p, kind="stable")
    ranked = p[order]
    if method == "holm":
        steps = np.maximum.accumulate((m - np.arange(m)) * ranked)
    elif method == "by":
        harmonic = float(np.sum(1.0 / np.arange(1, m + 1)))
        steps = np.minimum.accumulate((ranked * m * harmonic / np.arange(1, m + 1))[::-1])[::-1]
    else:
        msg = f"method={method!r}; expected 'holm' or 'by'"
        raise ValueError(msg)
    out = np.empty(m)
    out[order] = np.minimum(steps, 1.0)
    return out
