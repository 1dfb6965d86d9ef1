"""The judge part of the :class:`~evalnb.Lab` facade: what the judges cost and how far to trust them.

The judges' report (parse failures, cost, agreement with people) and the judge reliability
card with its view; each method a call into :mod:`evalnb.analysis` or
:mod:`evalnb.judge_reliability`. :class:`evalnb.Lab` inherits it, so the methods are the lab's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

from evalnb.analysis.judge_costs import judge_report
from evalnb.calibration.judge_agreement import with_human_agreement
from evalnb.judge_reliability.card import JudgeCard, judge_card, kept_with
from evalnb.lab.core import LabCore

if TYPE_CHECKING:
    from collections.abc import Mapping

    import polars as pl

    from evalnb.llm.client import LLMClient
    from evalnb.widgets.judge_card_view import JudgeCardView

__all__ = ["JudgeMethods"]

L = TypeVar("L", bound="JudgeMethods")


class JudgeMethods(LabCore):
    """A lab's methods about its judges (see :class:`evalnb.Lab`)."""

    def judge_report(self) -> pl.DataFrame:
        """Per judge evaluator and model: parse failures, failed calls, tokens, cost.

        Where reviewers labelled the evaluator's primary metric, the judge–human agreement
        over those labels joins it: ``n_labels``, ``kappa`` and the confusion matrix
        (``both_pass``, ``judge_pass_human_fail``, ``judge_fail_human_pass``, ``both_fail``).
        """
        return with_human_agreement(self, judge_report(self))

    def judge_card(
        self,
        evaluator: str,
        metric: str | None = None,
        *,
        judge: LLMClient,
        n: int = 100,
        seed: int = 0,
        cross_judge: LLMClient | None = None,
        repeats: int = 2,
        families: Mapping[str, str] | None = None,
        probes: int = 50,
        assume_random: bool = False,
    ) -> JudgeCard:
        """Can I trust this judge on this lab? Eight components, each with its interval.

        Contract, stability (``repeats`` fresh runs), position (two models' answers asked in
        both orders), verbosity (padded answers), self-preference (with ``cross_judge``),
        validity (against the lab's human labels), adversarial answers and the consequence
        for the numbers, on a seeded sample of ``n`` answers, each with a traffic light;
        what cannot be measured here says why (:mod:`evalnb.judge_reliability.card`). The
        components that ask again do so on ``probes`` of the answers; ``assume_random``
        lets the consequence use labels given outside a random batch as a random sample.
        The card never writes to the lab's store.
        """
        return judge_card(
            self,
            evaluator,
            metric,
            judge=judge,
            n=n,
            seed=seed,
            cross_judge=cross_judge,
            repeats=repeats,
            families=families,
            probes=probes,
            assume_random=assume_random,
        )

    def with_judge_card(self: L, card: JudgeCard) -> L:
        """Return the lab with ``card`` kept, in its store too.

        The report's "Judge reliability" section shows it and ``export_calibration`` carries
        it in the bundle.
        """
        return kept_with(self, card)

    def judge_card_view(self, card: JudgeCard) -> JudgeCardView:
        """Show ``card`` with a button per measure that opens its worst answer in the eye."""
        from evalnb.widgets.judge_card_view import JudgeCardView  # noqa: PLC0415 - widgets load late

        return JudgeCardView(self, card)
