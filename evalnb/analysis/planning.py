"""How many cases a comparison of two systems needs, from a pilot lab (Miller, 2024)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from evalnb.analysis.decide import case_columns, chosen_metrics, default_cluster, paired_cases
from evalnb.analysis.paired_tests import ONE_CLUSTER, paired_test

if TYPE_CHECKING:
    from evalnb.lab.core import LabCore

__all__ = ["Plan", "plan"]


@dataclass(frozen=True)
class Plan:
    """How many cases a comparison needs, from a pilot's variance components (Miller, 2024)."""

    cases: int
    samples_per_case: int
    mde: float
    power: float
    alpha: float
    between_case_var: float
    within_case_var_a: float
    within_case_var_b: float
    design_effect: float
    detectable_now: float
    pilot_cases: int
    pilot_design_effect: float = 1.0
    """The design effect the pilot showed (``decide`` reports this one); ``design_effect``
    is it floored at 1."""
    notes: tuple[str, ...] = ()

    def __str__(self) -> str:
        deff = f"design effect {self.design_effect:.2f}"
        if self.pilot_design_effect < self.design_effect:
            deff += (
                f"; the pilot's was {self.pilot_design_effect:.2f}, planned at 1: clusters "
                "less alike than chance are a pilot's noise"
            )
        return (
            f"{self.cases:,} cases ({self.samples_per_case} sample(s) each) to see a difference "
            f"of {self.mde:g} with {self.power:.0%} power at alpha {self.alpha:g} "
            f"({deff}); the pilot's {self.pilot_cases} cases could see "
            f"{self.detectable_now:.4f}" + "".join(f"\nnote: {n}" for n in self.notes)
        )


def plan(
    lab: LabCore,
    metric: str,
    *,
    baseline: str,
    candidate: str,
    mde: float = 0.02,
    power: float = 0.8,
    alpha: float = 0.05,
    cluster: str | None = None,
    samples_per_case: int | None = None,
) -> Plan:
    """Return the cases needed to detect ``mde`` between two systems, from a pilot lab.

    Follows Miller's formula ``n = (z_{α/2} + z_β)² (ω² + σ²_A/K_A + σ²_B/K_B) / δ²`` times
    the design effect of ``cluster``: ω² is the between-case variance of the true difference,
    σ² each system's within-case variance (from several samples per case; 0 with one), K the
    samples per case (default: the pilot's). ``cluster`` defaults to the lab's topics, as in
    :func:`~evalnb.analysis.decide.decide` (``""``: independent cases).
    """
    from scipy import stats  # noqa: PLC0415

    if not 0 < power < 1 or not 0 < alpha < 1 or not (math.isfinite(mde) and mde > 0):
        msg = f"power={power}, alpha={alpha}, mde={mde}: expected 0 < power, alpha < 1 and mde > 0"
        raise ValueError(msg)
    ((evaluator, name, higher),) = chosen_metrics(lab, [metric])
    paired = paired_cases(lab, evaluator, name, baseline, candidate)
    if paired.height < 3:
        msg = f"the pilot has {paired.height} case(s) answered by both: at least 3 are needed"
        raise ValueError(msg)
    k_a = max(1, round(float(paired["k_a"].to_numpy().mean())))
    k_b = max(1, round(float(paired["k_b"].to_numpy().mean())))
    var_a = float(paired["var_a"].fill_null(0.0).to_numpy().mean()) if k_a > 1 else 0.0
    var_b = float(paired["var_b"].fill_null(0.0).to_numpy().mean()) if k_b > 1 else 0.0
    d = (paired["b"] - paired["a"]).to_numpy() * (1 if higher else -1)
    total = float(np.var(d, ddof=1))
    binary = bool(np.isin(paired.select("a", "b").to_numpy(), (0.0, 1.0)).all())
    notes: list[str] = []
    if total == 0:
        if not binary:
            msg = (
                f"the pilot's {paired.height} paired differences of {metric} are all "
                f"{d[0]:g}: no variance to plan from. Pilot on cases where the systems differ "
                "in different ways (more, or more varied, cases)"
            )
            raise ValueError(msg)
        # 0/1 verdicts that agree on every pilot case: the discordance rate is only known to
        # be below its exact 95 % bound (1 - 0.05^(1/n)), and a difference's variance is at
        # most that rate. Planned from the bound, and said so.
        total = 1 - 0.05 ** (1 / paired.height)
        notes.append(
            f"no discordant pair in the pilot's {paired.height} cases: planned from the "
            f"discordance rate's 95 % upper bound, {total:.3f}"
        )
    omega = max(total - var_a / k_a - var_b / k_b, 0.0)
    deff = pilot_deff = 1.0
    cluster, _ = default_cluster(lab.cases, cluster)
    if cluster:
        groups = paired.join(
            case_columns(lab.cases, [cluster], "cluster"), on="case_id", how="left"
        )[cluster]
        test = paired_test(
            np.zeros_like(d),
            d,
            clusters=groups.cast(pl.String).fill_null("(none)").to_numpy(),
            alpha=alpha,
            bootstrap=False,  # only the design effect is needed
        )
        if test.method == ONE_CLUSTER:
            msg = (
                f"every pilot case falls in one cluster of {cluster!r}: no design effect can "
                "be estimated from one cluster. Cluster by a finer field, or pass cluster='' "
                "if the cases are independent"
            )
            raise ValueError(msg)
        pilot_deff = test.design_effect if math.isfinite(test.design_effect) else 1.0
        # Below 1 (clusters less alike than chance) is a pilot's noise: planned at 1, not less.
        deff = max(pilot_deff, 1.0)
    k = samples_per_case or k_a
    z = float(stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power))
    per_case = omega + var_a / k + var_b / k
    n = math.ceil(z**2 * per_case * deff / mde**2)
    now = z * math.sqrt(total * deff / paired.height)
    return Plan(
        max(n, 2),
        k,
        mde,
        power,
        alpha,
        omega,
        var_a,
        var_b,
        deff,
        now,
        paired.height,
        pilot_deff,
        tuple(notes),
    )
