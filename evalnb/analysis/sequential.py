"""Stop a comparison as soon as it is settled: an anytime-valid confidence sequence on the paired difference.

A fixed-n comparison asks every case of a lab, then tests once. Looking at the running
difference after every batch and stopping when it "looks significant" inflates the false
verdicts (each look is another chance to be fooled). A *confidence sequence* covers the true
difference at every look at once, so the run may be stopped at any look and its verdict keeps
its error rate.

The sequence is the asymptotic one of Waudby-Smith, Arnold, Wu & Ramdas ("Time-uniform
central limit theory and asymptotic confidence sequences", Annals of Statistics 52(6), 2024,
Theorem 2.2): Robbins' normal-mixture boundary around the running mean, scaled by the running
standard deviation. The monitor uses the same boundary on its PPI increments
(:mod:`evalnb.monitoring.stats`). Its width after ``t`` observations is::

    sd · sqrt( 2 (t ρ² + 1) / (t² ρ²) · log( sqrt(t ρ² + 1) / α ) )

with ρ² tuned so the boundary is tightest at ``t_opt`` observations.

:class:`Sequential` is the rule :func:`evalnb.run_suite` takes as ``until=``: the suite asks
the cases in a seeded random order (the sequence assumes exchangeable arrivals; a lab sorted by
topic is not), a batch at a time; after each batch the rule scores the new answers of both
systems, adds each case's paired difference (candidate − baseline, positive = better) and
checks the sequence. It stops when the verdict is settled either way:

- ``better`` / ``worse``: the whole interval is above / below 0;
- with a ``margin``, also ``equivalent`` (the interval inside ±margin) or ``non-inferior``
  (its low end above −margin): the question a migration asks is then answered.

With ``cluster=`` (a case column) whole clusters are asked together and one increment is a
cluster's mean difference: the estimand is then the mean over clusters, which equals the mean
over cases when clusters are of one size.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import polars as pl

from evalnb.analysis.decide import case_columns, chosen_metrics, default_cluster, paired_cases

if TYPE_CHECKING:
    from collections.abc import Sequence

    from evalnb.lab.core import LabCore
    from evalnb.llm.client import LLMClient

__all__ = [
    "Look",
    "Sequential",
    "cs_radius",
    "decide_rule",
    "difference_prior",
    "running_interval",
    "sequential",
    "settled",
    "stream_verdict",
]

L = TypeVar("L", bound="LabCore")
_MIN_UNITS = 30  # the asymptotic sequence's running variance needs a few dozen increments
_PRIOR_WEIGHT = 4.0  # pseudo-observations of variance 1 (see difference_prior)


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


def running_interval(
    values: np.ndarray,
    *,
    alpha: float = 0.05,
    t_opt: float | None = None,
    prior_variance: float = 0.0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return the running mean of ``values`` and its anytime-valid interval after every observation.

    Parameters
    ----------
    values
        The increments in arrival order.
    alpha
        The error level, simultaneous over every time.
    t_opt
        The number of observations at which the sequence is tightest (default: all of them).
    prior_variance
        Added to the running sum of squares, as pseudo-observations of variance 1 (0: none).
        Differences of 0/1 verdicts often start with a run of zeros (the systems agree on
        the first 30 cases), whose running variance is 0 and interval [0, 0]: an
        "equivalent" on no evidence. :func:`difference_prior` gives the one for
        differences of scores in [0, 1] (1, the largest variance such a difference has).

    Returns
    -------
    tuple of ndarray
        Running mean, lower and upper bound (not clipped).
    """
    x = np.asarray(values, dtype=float)
    t = np.arange(1, x.size + 1, dtype=float)
    mean = np.cumsum(x) / t
    # Running variance from the running sums; with one observation the spread is unknown (0).
    second = np.cumsum(x**2) / t
    var = np.maximum(second - mean**2, 0.0) * t / np.maximum(t - 1, 1)
    if prior_variance:
        var = (prior_variance + var * (t - 1)) / (t - 1 + prior_variance)
    radius = cs_radius(t, np.sqrt(var), alpha, t_opt or max(float(x.size), 1.0))
    return mean, mean - radius, mean + radius


def difference_prior(d: np.ndarray) -> float:
    """Return the prior variance for :func:`running_interval` of paired differences ``d``.

    Where every difference is within ±1 (scores in [0, 1], whose difference has at most
    variance 1): that variance counted as four observations, about z² at 95 % — the weight
    Wilson's and Tango's intervals give the unseen when nothing was seen (with no
    discordant pair in n, Tango's half-width is z²/(n + z²)). 0 otherwise: no scale is
    known.
    """
    x = np.asarray(d, dtype=float)
    return _PRIOR_WEIGHT if x.size and float(np.max(np.abs(x))) <= 1.0 else 0.0


def settled(low: float, high: float, margin: float | None) -> str | None:
    """Return the verdict an interval settles (as :func:`~evalnb.analysis.decide.decide` reads one), or None."""
    if low > 0:
        return "better"
    if high < 0:
        return "worse"
    if margin is not None and -margin < low and high < margin:
        return "equivalent"
    if margin is not None and low > -margin:
        return "non-inferior"
    return None


@dataclass(frozen=True)
class Look:
    """The state of the sequence after one batch."""

    cases: int
    units: int
    difference: float
    low: float
    high: float
    verdict: str | None


@dataclass
class Sequential:
    """A stopping rule for :func:`evalnb.run_suite` (``until=``); see the module docstring.

    Build one with :func:`sequential` or ``lab.decisions.rule(...)``. After the run, ``verdict``,
    ``looks`` (one :class:`Look` per batch), ``calls_saved`` and :meth:`explain` say what
    happened.
    """

    baseline: str
    candidate: str
    evaluator: Any
    metric: str | None = None
    margin: float | None = None
    alpha: float = 0.05
    batch: int = 20
    cluster: str | None = None
    seed: int = 0
    judge: LLMClient | None = None
    t_opt: float | None = None
    min_units: int = _MIN_UNITS
    looks: list[Look] = field(default_factory=list)
    verdict: str = "not run"
    calls_saved: int = 0
    total_cases: int = 0

    # -- what run_suite calls -------------------------------------------------------------
    def order(self, cases: pl.DataFrame) -> list[list[str]]:
        """Return the case ids to ask, batch by batch: seeded random order, whole clusters together."""
        rng = random.Random(self.seed)
        if self.cluster is None:
            ids = cases["case_id"].to_list()
            rng.shuffle(ids)
            return [ids[i : i + self.batch] for i in range(0, len(ids), self.batch)]
        fields = case_columns(cases, [self.cluster], "cluster")
        groups = [
            g["case_id"].to_list()
            for _, g in fields.with_columns(
                pl.col(self.cluster).cast(pl.String).fill_null("")
            ).group_by(self.cluster, maintain_order=True)
        ]
        rng.shuffle(groups)
        batches: list[list[str]] = []
        current: list[str] = []
        for g in groups:  # a batch holds whole clusters, about `batch` cases
            current += g
            if len(current) >= self.batch:
                batches.append(current)
                current = []
        return [*batches, current] if current else batches

    def check(self, lab: L, *, asked: int, total: int, calls_per_case: int) -> tuple[L, bool]:
        """Score the answers so far, add a look; return the scored lab and whether to stop."""
        from evalnb.evaluation.engine import evaluate  # noqa: PLC0415 (the engine is heavy)

        missing = {self.baseline, self.candidate} - set(lab.models)
        if missing:
            msg = f"the stopping rule compares {sorted(missing)}, which run_suite was not asked for"
            raise ValueError(msg)
        scored = evaluate(lab, [self.evaluator], judge=self.judge, progress=False)
        d = self.differences(scored)
        self.total_cases = total
        t_opt = self.t_opt or max(self._units(scored, total) / 2, self.min_units)
        if d.size:
            mean, low, high = (
                a[-1]
                for a in running_interval(
                    d, alpha=self.alpha, t_opt=t_opt, prior_variance=difference_prior(d)
                )
            )
        else:
            mean = low = high = float("nan")
        verdict = (
            settled(float(low), float(high), self.margin) if d.size >= self.min_units else None
        )
        self.looks.append(Look(asked, int(d.size), float(mean), float(low), float(high), verdict))
        self.verdict = verdict or "inconclusive"
        self.calls_saved = (total - asked) * calls_per_case if verdict else 0
        return scored, verdict is not None

    # -- the statistics -------------------------------------------------------------------
    def _chosen(self, lab: LabCore) -> tuple[str, str, bool]:
        names = None if self.metric is None else [self.metric]
        ids = {str(getattr(self.evaluator, "id", self.evaluator))}
        chosen = [c for c in chosen_metrics(lab, names) if names or c[0] in ids]
        if len(chosen) != 1:
            msg = (
                f"the stopping rule needs one metric; {len(chosen)} match "
                f"(evaluator {sorted(ids)}, metric {self.metric!r}): pass metric='evaluator.metric'"
            )
            raise ValueError(msg)
        return chosen[0]

    def differences(self, lab: LabCore) -> np.ndarray:
        """Return the paired differences (per case, or per cluster) in the order they were asked."""
        evaluator, metric, higher = self._chosen(lab)
        paired = paired_cases(lab, evaluator, metric, self.baseline, self.candidate)
        sign = 1.0 if higher else -1.0
        paired = paired.with_columns(d=sign * (pl.col("b") - pl.col("a")))
        arrival = pl.DataFrame(
            {"case_id": lab.outputs["case_id"].unique(maintain_order=True)}
        ).with_row_index("arrival")
        paired = paired.join(arrival, on="case_id").sort("arrival")
        if self.cluster is None:
            return paired["d"].to_numpy()
        groups = case_columns(lab.cases, [self.cluster], "cluster").select(
            "case_id", pl.col(self.cluster).cast(pl.String).fill_null("")
        )
        return (
            paired.join(groups, on="case_id")
            .group_by(self.cluster, maintain_order=True)
            .agg(pl.col("d").mean())["d"]
            .to_numpy()
        )

    def _units(self, lab: LabCore, total: int) -> float:
        if self.cluster is None:
            return float(total)
        return float(lab.cases[self.cluster].n_unique())

    def explain(self) -> str:
        """One paragraph: the verdict, where it stopped and what it saved."""
        if not self.looks:
            return "the stopping rule has not been run (pass it to run_suite as until=)"
        last = self.looks[-1]
        unit = f"clusters of {self.cluster}" if self.cluster else "cases"
        head = (
            f"{self.candidate} vs {self.baseline}: {self.verdict.upper()} after {last.cases} of "
            f"{self.total_cases} cases ({last.units} {unit}, {len(self.looks)} looks); "
            f"difference {last.difference:+.4f}, anytime-valid {1 - self.alpha:.0%} interval "
            f"[{last.low:+.4f}, {last.high:+.4f}]"
        )
        if self.verdict == "inconclusive":
            return head + "; every case was asked and the interval still holds what matters"
        return head + f"; stopped early, {self.calls_saved:,} calls saved"

    def __str__(self) -> str:
        return self.explain()


def sequential(
    baseline: str,
    candidate: str,
    evaluator: Any,  # noqa: ANN401 (a catalog id or an Evaluator class, as evaluate takes)
    *,
    metric: str | None = None,
    margin: float | None = None,
    alpha: float = 0.05,
    batch: int = 20,
    cluster: str | None = None,
    seed: int = 0,
    judge: LLMClient | None = None,
    t_opt: float | None = None,
) -> Sequential:
    """Return a rule that stops :func:`evalnb.run_suite` once ``candidate`` vs ``baseline`` is settled.

    Parameters
    ----------
    baseline, candidate
        The two models ``run_suite`` asks.
    evaluator
        What scores each answer as it arrives (a catalog id, or an evaluator class).
    metric
        ``"evaluator.metric"`` when the evaluator has several; default its primary one.
    margin
        The difference that does not matter: the run also stops on ``equivalent`` or
        ``non-inferior``.
    alpha
        The error level of the verdict, whatever the number of looks.
    batch
        Cases asked between two looks.
    cluster
        A case column whose cases are not independent: whole clusters are asked together
        and count as one increment.
    seed
        The order the cases are asked in.
    judge
        The client of a judge evaluator.
    t_opt
        Increments at which the sequence is tightest (default: half of those planned).

    Examples
    --------
    >>> rule = sequential("gpt-a", "gpt-b", "answer_similarity", margin=0.02)
    >>> rule.verdict
    'not run'
    """
    if margin is not None and margin <= 0:
        msg = f"margin={margin}; expected a positive difference in the metric's units"
        raise ValueError(msg)
    if not 0 < alpha < 1:
        msg = f"alpha={alpha}; expected a level between 0 and 1"
        raise ValueError(msg)
    if batch < 1:
        msg = f"batch={batch}; expected at least one case between looks"
        raise ValueError(msg)
    return Sequential(
        baseline,
        candidate,
        evaluator,
        metric=metric,
        margin=margin,
        alpha=alpha,
        batch=batch,
        cluster=cluster,
        seed=seed,
        judge=judge,
        t_opt=t_opt,
    )


def stream_verdict(
    d: Sequence[float] | np.ndarray,
    *,
    alpha: float = 0.05,
    margin: float | None = None,
    batch: int = 20,
    t_opt: float | None = None,
    min_units: int = _MIN_UNITS,
) -> tuple[str, int]:
    """Return the verdict and the increments used when ``d`` arrives a batch at a time (the rule's kernel).

    ``t_opt`` defaults to half the stream, as the rule's does.
    """
    x = np.asarray(d, dtype=float)
    _, low, high = running_interval(
        x,
        alpha=alpha,
        t_opt=t_opt or max(x.size / 2, min_units),
        prior_variance=difference_prior(x),
    )
    for end in range(batch, x.size + batch, batch):
        t = min(end, x.size)
        if t < min_units:
            continue
        verdict = settled(float(low[t - 1]), float(high[t - 1]), margin)
        if verdict:
            return verdict, t
    return "inconclusive", int(x.size)


def decide_rule(
    lab: LabCore,
    baseline: str,
    candidate: str,
    evaluator: Any,  # noqa: ANN401 (a catalog id or an evaluator class, as evaluate takes)
    *,
    metric: str | None = None,
    margin: float | None = None,
    alpha: float = 0.05,
    batch: int = 20,
    cluster: str | None = None,
    seed: int = 0,
    judge: LLMClient | None = None,
) -> Sequential:
    """Return a rule that stops ``evalnb.run_suite(lab, ..., until=rule)`` once settled.

    As :func:`evalnb.sequential`, with this lab's defaults: cases cluster by their topic
    when the lab has topics (as in ``lab.decisions.decide``; ``cluster=""`` for independent cases).
    The run asks the cases in a seeded random order, a batch at a time, and stops when an
    anytime-valid confidence sequence on the paired difference settles the verdict
    (:mod:`evalnb.analysis.sequential`); ``print(rule)`` then says what it saved.
    """
    chosen, _ = default_cluster(lab.cases, cluster)
    return sequential(
        baseline,
        candidate,
        evaluator,
        metric=metric,
        margin=margin,
        alpha=alpha,
        batch=batch,
        cluster=chosen,
        seed=seed,
        judge=judge,
    )
