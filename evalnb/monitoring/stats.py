"""The monitor's statistics: PPI over live traffic, and confidence sequences that allow peeking.

Three estimates of a pass rate, each for a stated question:

* :func:`ppi_superpopulation` — the fixed-time PPI++ estimate and z-interval of the pass rate
  of the process the traffic comes from (Angelopoulos, Duchi & Zrnic 2023, "PPI++"). The same
  estimand, λ rule and interval as the reference implementation ``ppi-python``
  (``ppi_mean_pointestimate`` / ``ppi_mean_ci``): λ = Cov(Y, Ŷ) / ((1 + n/N) Var(Ŷ)), the
  covariance over the labelled rows, the variance over every row, clipped to [0, 1].
* :func:`evalnb.calibration.ppi.ppi_mean` — the finite-population estimate: a window's traffic
  *is* the population (every trace scored), so the metric's mean has no sampling error and
  the labels' term gets the finite-population correction. Narrower when a large share of a
  window is labelled; the two agree as the share goes to 0.
* :func:`confidence_sequence` — an anytime-valid interval: it covers the pass rate at every
  look at once, so a dashboard checked after every window keeps its stated coverage. It is the
  asymptotic confidence sequence of Waudby-Smith, Arnold, Wu & Ramdas ("Time-uniform central
  limit theory and asymptotic confidence sequences", Annals of Statistics 52(6), 2024,
  Theorem 2.2: Robbins' normal-mixture boundary on a running mean with its running variance),
  applied to one PPI increment per trace (the inverse-probability form of PPI, as in Zrnic &
  Candès, "Active statistical inference", ICML 2024)::

      z_j = λ·ŷ_j + c + (ξ_j / π)·(y_j − λ·ŷ_j − c)

  where ξ_j says whether trace j was labelled and π is its window's labelling rate, so z_j
  has mean θ (the pass rate) whatever the metric's quality; c, the metric's mean bias,
  centres the labelled term (the augmented inverse-probability form), which keeps most of its
  variance out. λ and c must not look at the data they weigh: a window uses those fitted on
  the labels of the windows before it.

:func:`drop_bound` turns these into an alarm: the tightest one-sided upper bound over every
run of windows ending now, the error level split over the runs' starts (Bonferroni over a
horizon of windows), so a stream whose pass rate stays at or above the accepted level raises
no alarm in that horizon with probability at least 1 − α.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

__all__ = [
    "Interval",
    "confidence_sequence",
    "cs_radius",
    "drop_bound",
    "fitted_lambda",
    "ppi_increments",
    "ppi_superpopulation",
]


@dataclass(frozen=True)
class Interval:
    """An estimate with its interval (and the λ that weighed the metric, where there is one)."""

    estimate: float
    low: float
    high: float
    lam: float | None = None


def _clip(value: float) -> float:
    return float(min(1.0, max(0.0, value)))


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


def fitted_lambda(human: np.ndarray, metric: np.ndarray) -> float:
    """Power-tuned λ = Cov(y, ŷ) / Var(ŷ) on labelled rows, clipped to [0, 1] (0 with no spread)."""
    y = np.asarray(human, dtype=float)
    f = np.asarray(metric, dtype=float)
    if y.size < 2:
        return 0.0
    var = float(np.var(f))
    if var == 0:
        return 0.0
    return float(np.clip(np.mean((y - y.mean()) * (f - f.mean())) / var, 0.0, 1.0))


def ppi_increments(
    metric: np.ndarray,
    human: np.ndarray,
    labelled: np.ndarray,
    rate: float,
    lam: float,
    centre: float = 0.0,
) -> np.ndarray:
    """One PPI increment per trace of a window: λ·ŷ + c + (ξ/π)(y − λ·ŷ − c).

    Parameters
    ----------
    metric
        The metric's verdict (1/0) on every trace of the window.
    human
        The reviewers' verdicts, read only where ``labelled`` is true.
    labelled
        Which traces were labelled (a uniform random sample of the window).
    rate
        π, the window's labelling rate (labelled traces / traces).
    lam, centre
        λ and c, fitted on earlier windows' labels only: c (the metric's mean bias) centres
        the labelled term, which leaves the mean alone and removes most of its variance.

    Returns
    -------
    ndarray
        Increments whose mean is the pass rate; see the module docstring.
    """
    f = np.asarray(metric, dtype=float)
    xi = np.asarray(labelled, dtype=bool)
    z = lam * f + centre
    if rate > 0:
        y = np.where(xi, np.asarray(human, dtype=float), 0.0)
        z = z + np.where(xi, (y - lam * f - centre) / rate, 0.0)
    return z


def _rho2(alpha: float, t_opt: float) -> float:
    """Robbins' mixture variance tuned so the boundary is tightest at ``t_opt`` observations."""
    log_a = -2 * math.log(alpha)
    return (log_a + math.log(log_a + 1)) / t_opt


def cs_radius(t: np.ndarray, sd: np.ndarray, alpha: float, t_opt: float) -> np.ndarray:
    """Half-width of the two-sided asymptotic confidence sequence after ``t`` observations.

    ``sd`` is the running standard deviation; a one-sided bound at level α uses the same
    radius (conservative: the two-sided boundary at α bounds each side at α).
    """
    rho2 = _rho2(alpha, t_opt)
    t = np.asarray(t, dtype=float)
    tr = t * rho2 + 1
    return np.asarray(sd, dtype=float) * np.sqrt(
        2 * tr / (t**2 * rho2) * np.log(np.sqrt(tr) / alpha)
    )


def confidence_sequence(
    z: np.ndarray, *, level: float = 0.95, t_opt: float | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return the running mean of ``z`` and its anytime-valid interval after every observation.

    Parameters
    ----------
    z
        The increments in arrival order (:func:`ppi_increments`).
    level
        The coverage, simultaneous over every time.
    t_opt
        The number of observations at which the sequence is tightest (default: all of them).

    Returns
    -------
    tuple of ndarray
        Running mean, lower and upper bound (clipped to [0, 1]).
    """
    values = np.asarray(z, dtype=float)
    t = np.arange(1, values.size + 1, dtype=float)
    mean = np.cumsum(values) / t
    # Running variance by Welford's sums; with fewer than two observations, the widest a
    # rate's increments can spread.
    second = np.cumsum(values**2) / t
    var = np.maximum(second - mean**2, 0.0) * t / np.maximum(t - 1, 1)
    radius = cs_radius(t, np.sqrt(var), 1 - level, t_opt or max(float(values.size), 1.0))
    return mean, np.clip(mean - radius, 0.0, 1.0), np.clip(mean + radius, 0.0, 1.0)


def drop_bound(
    window_sums: np.ndarray,
    window_squares: np.ndarray,
    window_counts: np.ndarray,
    *,
    alpha: float,
    horizon: int,
    t_opt: float,
) -> tuple[float, int]:
    """Return the tightest one-sided upper bound on the pass rate over runs of windows ending now.

    Parameters
    ----------
    window_sums, window_squares, window_counts
        Per window, oldest first: the sum of the PPI increments, of their squares, and how
        many there are (traces).
    alpha
        The chance, over ``horizon`` windows, that a stream whose pass rate never drops raises
        an alarm at all; each start gets ``alpha / horizon``.
    horizon
        The windows the error level is spread over.
    t_opt
        The traces at which each run's boundary is tightest.

    Returns
    -------
    tuple
        The bound and the index of the run's first window.
    """
    s = np.cumsum(np.asarray(window_sums, dtype=float)[::-1])
    q = np.cumsum(np.asarray(window_squares, dtype=float)[::-1])
    n = np.cumsum(np.asarray(window_counts, dtype=float)[::-1])
    ok = n > 1
    if not ok.any():
        return 1.0, len(window_counts) - 1
    mean = np.where(ok, s / np.maximum(n, 1), 0.0)
    var = np.where(
        ok, np.maximum(q / np.maximum(n, 1) - mean**2, 0.0) * n / np.maximum(n - 1, 1), 0.0
    )
    radius = cs_radius(np.maximum(n, 1), np.sqrt(var), alpha / horizon, t_opt)
    upper = np.where(ok, mean + radius, np.inf)
    best = int(np.argmin(upper))
    return float(min(upper[best], 1.0)), len(window_counts) - 1 - best
