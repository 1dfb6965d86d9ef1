"""The monitor's statistics: PPI over live traffic, and confidence sequences that allow peeking.

Three estimates of a pass rate, each for a stated question:

* :func:`evalnb.calibration.ppi.ppi_superpopulation` — the fixed-time PPI++ estimate and
  z-interval of the pass rate of the process the traffic comes from (Angelopoulos, Duchi & Zrnic 2023, "PPI++"). The same
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
  Theorem 2.2: Robbins' normal-mixture boundary on a running mean with its running variance;
  the kernel is :mod:`evalnb.analysis.sequential`'s, which stops A/B runs early),
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

import numpy as np

from evalnb.analysis.sequential import cs_radius, running_interval

__all__ = ["confidence_sequence", "drop_bound", "fitted_lambda", "ppi_increments"]


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
    mean, low, high = running_interval(z, alpha=1 - level, t_opt=t_opt)
    return mean, np.clip(low, 0.0, 1.0), np.clip(high, 0.0, 1.0)


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
