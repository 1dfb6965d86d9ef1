"""Assertions for a test suite or CI (``evalnb.testing``): fail a pull request whose candidate is worse.

``evalnb.testing.assert_not_worse(lab, "prod", "candidate", metric="rouge.rouge_l",
margin=0.01)`` passes when the candidate is better, or not worse by more than the margin;
it fails with the decision's one-screen explanation otherwise — also when the run cannot
tell (inconclusive), unless ``allow_inconclusive=True``. The decision is
:func:`evalnb.analysis.decide.decide`'s: clustered, paired, corrected for many metrics, so
that a suite run on every pull request does not flake on noise.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalnb.analysis.decide import Decision, decide

if TYPE_CHECKING:
    from collections.abc import Sequence

    from evalnb.lab.core import LabCore

__all__ = ["assert_not_worse"]


def assert_not_worse(
    lab: LabCore,
    baseline: str,
    candidate: str,
    *,
    metric: str | Sequence[str] | None = None,
    margin: float | None = None,
    alpha: float = 0.05,
    cluster: str | None = None,
    guardrails: Sequence[str] = (),
    allow_inconclusive: bool = False,
) -> Decision:
    """Fail (``AssertionError`` with the explanation) unless ``candidate`` is not worse.

    Returns the :class:`~evalnb.analysis.decide.Decision` when it passes.
    """
    metrics = [metric] if isinstance(metric, str) else metric
    decision = decide(
        lab,
        baseline,
        candidate,
        metrics=metrics,
        margin=margin,
        alpha=alpha,
        cluster=cluster,
        guardrails=guardrails,
    )
    allowed = {"better", "non-inferior"} | ({"inconclusive"} if allow_inconclusive else set())
    if decision.verdict not in allowed:
        raise AssertionError(decision.explain())
    return decision
