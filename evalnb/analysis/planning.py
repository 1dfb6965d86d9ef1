"""How many cases a comparison of two systems needs, from a pilot lab (Miller, 2024)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from evalnb.analysis.decide import chosen_metrics, default_cluster, paired_cases
from evalnb.analysis.paired_tests import paired_test

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

    def __str__(self) -> str:
        return (
            f"{self.cases:,} cases ({self.samples_per_case} sample(s) each) to see a difference "
            f"of {self.mde:g} with {self.power:.0%} power at alpha {self.alpha:g} "
            f"(design effect {self.design_effect:.2f}); the pilot's {self.pilot_cases} cases "
            f"could see {self.detectable_now:.4f}"
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

    if not 0 < power < 1 or not 0 < alpha < 1 or mde <= 0:
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
    omega = max(total - var_a / k_a - var_b / k_b, 0.0)
    deff = 1.0
    cluster, _ = default_cluster(lab.cases, cluster)
    if cluster:
        groups = paired.join(lab.cases.select("case_id", cluster), on="case_id", how="left")[
            cluster
        ]
        test = paired_test(
            np.zeros_like(d),
            d,
            clusters=groups.cast(pl.String).fill_null("(none)").to_numpy(),
            alpha=alpha,
            bootstrap=False,  # only the design effect is needed
        )
        deff = max(test.design_effect, 1.0) if math.isfinite(test.design_effect) else 1.0
    k = samples_per_case or k_a
    z = float(stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power))
    per_case = omega + var_a / k + var_b / k
    n = math.ceil(z**2 * per_case * deff / mde**2)
    now = z * math.sqrt(total * deff / paired.height)
    return Plan(max(n, 2), k, mde, power, alpha, omega, var_a, var_b, deff, now, paired.height)
