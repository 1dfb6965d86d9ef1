"""The deciding part of the :class:`~evalnb.Lab` facade: which of two systems to ship.

Paired comparisons, clustered and corrected decisions with margins, and the rule that stops a
run once it is settled; each method a call into :mod:`evalnb.analysis`. :class:`evalnb.Lab`
inherits it, so the methods are the lab's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evalnb.analysis import derived
from evalnb.analysis.decide import Decision, decide, default_cluster
from evalnb.analysis.sequential import Sequential, sequential
from evalnb.lab.core import LabCore

if TYPE_CHECKING:
    from collections.abc import Sequence

    import polars as pl

    from evalnb.llm.client import LLMClient

__all__ = ["Decisions"]


class Decisions(LabCore):
    """A lab's methods for deciding between systems (see :class:`evalnb.Lab`)."""

    def decide(
        self,
        baseline: str,
        candidate: str,
        *,
        metrics: Sequence[str] | None = None,
        margin: float | None = None,
        alpha: float = 0.05,
        cluster: str | None = None,
        slices: str | None = None,
        correction: str = "holm",
        guardrails: Sequence[str] = (),
    ) -> Decision:
        """Decide between two systems: clustered, paired, corrected, with margins.

        Per metric (and per slice of ``slices``): the candidate's paired difference from the
        baseline (positive: better), its interval and adjusted p-value, and a verdict —
        ``better``, ``worse``, ``equivalent`` / ``non-inferior`` (within ``margin``) or
        ``inconclusive`` with the smallest difference the run could have seen. Cases in one
        ``cluster`` (a case column; the topics by default when the lab has them) are not
        counted as independent. See :mod:`evalnb.analysis.decide`.
        """
        return decide(
            self,
            baseline,
            candidate,
            metrics=metrics,
            margin=margin,
            alpha=alpha,
            cluster=cluster,
            slices=slices,
            correction=correction,
            guardrails=guardrails,
        )

    def decide_rule(
        self,
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
        when the lab has topics (as in :meth:`decide`; ``cluster=""`` for independent cases).
        The run asks the cases in a seeded random order, a batch at a time, and stops when an
        anytime-valid confidence sequence on the paired difference settles the verdict
        (:mod:`evalnb.analysis.sequential`); ``print(rule)`` then says what it saved.
        """
        chosen, _ = default_cluster(self.cases, cluster)
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

    def compare(self, evaluator: str, metric: str | None = None, *, seed: int = 0) -> pl.DataFrame:
        """Paired comparison of every two models: difference, 95 % CI, p-value, who wins."""
        return derived.compare_of(self, evaluator, metric, seed=seed)
