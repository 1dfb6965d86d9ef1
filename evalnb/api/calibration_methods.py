"""The human-calibration part of the :class:`~evalnb.Lab` facade: labels and what they buy.

Labelling, recalibrated thresholds, corrected pass rates, reliability, judge alignment,
reviewer agreement and the calibration bundle; each method a one-line call into
:mod:`evalnb.calibration`. :class:`evalnb.Lab` inherits it, so the methods are the lab's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Self, TypeVar

import polars as pl

from evalnb.calibration.alignment import (
    JudgeAlignment,
    align_judge,
    apply_judge_version,
    judge_versions,
)
from evalnb.calibration.bundle import apply_calibration, export_calibration, read_calibration
from evalnb.calibration.corrected import (
    CorrectedDifference,
    corrected_difference,
    corrected_leaderboard,
)
from evalnb.calibration.guardrail import corpus_patch, guardrail_config
from evalnb.calibration.judge_agreement import judge_agreement
from evalnb.calibration.labels import add_label, disagreements, reviewer_agreement
from evalnb.calibration.recalibrate import recalibrate
from evalnb.calibration.reliability import reliability
from evalnb.calibration.sampling import calibration_sample
from evalnb.lab.core import LabCore
from evalnb.team.publish import pulled_labels

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    import altair as alt

    from evalnb.calibration.recalibrate import Calibration
    from evalnb.llm.client import LLMClient
    from evalnb.team.queue import ReviewQueue

__all__ = ["HumanCalibration", "load_calibration"]

L = TypeVar("L", bound="HumanCalibration")


class HumanCalibration(LabCore):
    """A lab's human-calibration methods (see :class:`evalnb.Lab`)."""

    # -- human calibration -------------------------------------------------------------------

    def add_label(
        self,
        case_id: str,
        model: str,
        evaluator: str,
        metric: str,
        verdict: str | None,
        *,
        reviewer: str,
        note: str | None = None,
        sample: int = 0,
        batch_id: str | None = None,
    ) -> pl.DataFrame:
        """Record a human verdict (``"pass"``/``"fail"``; None retracts the last one).

        Appended to the ``labels`` table — and to the lab's store, committed, before this
        returns — never updated in place. Returns the new row.
        """
        return add_label(
            self,
            case_id,
            model,
            evaluator,
            metric,
            verdict,
            reviewer=reviewer,
            note=note,
            sample=sample,
            batch_id=batch_id,
        )

    def pull_labels(self, queue: ReviewQueue, rule: str = "majority") -> pl.DataFrame:
        """Write a review queue's labels into the ``labels`` table (and the store, committed).

        ``rule``: ``"majority"`` (one label per item, the reviewers' majority; ties give
        none) or ``"all"`` (every reviewer's label; the lab's own majority rule then
        decides); under either, an item the lead adjudicated carries the lead's label alone,
        and no later pull retracts it (``"adjudicated"`` names the same as ``"majority"``). The
        rule and the queue are recorded with the batch, and how each item was drawn, so
        ``recalibrate``, the PPI-corrected pass rates, judge alignment and the calibration
        bundle use the labels unchanged. The queue speaks in the lab with one voice, the
        latest pull's: pulling again (with this rule or another) adds what is new and
        retracts what the rule no longer gives (a majority an edit turned into a tie,
        another rule's labels). Returns the rows added (retractions have a null verdict).
        """
        rows, (key, record) = pulled_labels(self, queue, rule)
        info = self.table("info")
        info = pl.concat(
            [info.filter(pl.col("key") != key), pl.DataFrame({"key": [key], "value": [record]})]
        )
        # The batch record first: labels without it would count as drawn outside a batch.
        self.replace_tables({"info": info})
        if rows.height:
            self.append_rows("labels", rows)
        return rows

    def calibration_sample(
        self, evaluator: str, metric: str, *, n: int = 20, strategy: str = "active", seed: int = 0
    ) -> pl.DataFrame:
        """Draw up to ``n`` scored rows of one metric for a human to label (never a labelled one).

        ``strategy``: ``random``, ``stratified`` (one per score quantile bin) or ``active``
        (nearest the current pass/fail boundary — where a label teaches most). Seeded.
        Returns the rows with ``value``, ``passed`` (the metric's verdict now), prompt,
        expected answer, the model's answer and retrieved context.
        """
        return calibration_sample(self, evaluator, metric, n=n, strategy=strategy, seed=seed)

    def recalibrate(
        self,
        evaluator: str,
        metric: str,
        *,
        criterion: str = "balanced_accuracy",
        apply: bool = True,
        n_boot: int = 1000,
        seed: int = 0,
        target_width: float = 0.05,
    ) -> Calibration:
        """Fit the metric's threshold to the human verdicts, with bootstrap CIs and κ.

        ``criterion``: ``balanced_accuracy`` (default), ``accuracy``, ``f1`` or ``logistic``
        (where P(human pass | score) crosses 0.5). With ``apply`` the new threshold is
        stored as a ``calibrated`` version; problems, insights, the eye and reports follow.
        """
        return recalibrate(
            self,
            evaluator,
            metric,
            criterion=criterion,
            apply=apply,
            n_boot=n_boot,
            seed=seed,
            target_width=target_width,
        )

    def corrected_leaderboard(
        self, evaluator: str, metric: str, *, assume_random: bool = False, level: float = 0.95
    ) -> pl.DataFrame:
        """Per model, the pass rate humans would give: labels correct the metric, with a valid CI.

        Prediction-powered inference (PPI++): the metric's verdict on every row, corrected by
        its disagreement with the humans on the labelled rows. Columns: the ``automatic``
        pass rate, the ``human_only`` one with its interval, the ``corrected`` one with its
        interval, the ``metric_weight`` λ (0: the metric adds nothing) and
        ``effective_labels`` (how many random labels alone would be as precise). Labels
        count when drawn at random or with known probabilities (labeler batches record
        them); ``active`` ones are left out and counted; labels given outside a batch count
        with ``assume_random=True`` (:mod:`evalnb.calibration.ppi` states the assumptions).
        """
        return corrected_leaderboard(
            self, evaluator, metric, assume_random=assume_random, level=level
        )

    def corrected_difference(
        self,
        baseline: str,
        candidate: str,
        evaluator: str,
        metric: str,
        *,
        assume_random: bool = False,
        level: float = 0.95,
        method: str = "finite",
    ) -> CorrectedDifference:
        """Candidate − baseline in the pass rate humans would give, with a label planner.

        The two PPI-corrected rates of :meth:`corrected_leaderboard` differenced on the cases
        both answered; labels on the same cases of both arms narrow the interval (their
        covariance is subtracted). ``label_plan`` says how far k more random labels on one
        arm, or on both, would shrink it. ``method="superpopulation"``: PPI++ on the paired
        differences, as ``ppi-python`` computes it (:mod:`evalnb.calibration.corrected`).
        """
        return corrected_difference(
            self,
            baseline,
            candidate,
            evaluator,
            metric,
            assume_random=assume_random,
            level=level,
            method=method,
        )

    def reliability(self, evaluator: str, metric: str, *, bins: int = 8) -> pl.DataFrame:
        """Per score band of the labelled answers: the share humans passed, with its CI."""
        return reliability(self, evaluator, metric, bins=bins)

    def reliability_chart(self, evaluator: str, metric: str, *, bins: int = 8) -> alt.LayerChart:
        """Chart :meth:`reliability`, with the threshold in force."""
        from evalnb.analysis.charts import reliability_chart  # noqa: PLC0415 - Altair when drawn

        spec = self.metric_spec(evaluator, metric)
        return reliability_chart(
            reliability(self, evaluator, metric, bins=bins),
            spec["threshold"],
            f"{evaluator}/{metric}: humans passed, by score",
        )

    def align_judge(
        self,
        evaluator: str,
        metric: str,
        *,
        judge: LLMClient,
        max_examples: int = 6,
        folds: int = 5,
        refine: bool = False,
        min_gain: float = 0.0,
        seed: int = 0,
    ) -> JudgeAlignment:
        """Build an aligned version of an LLM-judge evaluator from the human labels.

        Few-shot examples from the labelled answers (the judge's mistakes first) and, with
        ``refine``, grading rules the judge model writes from its disagreements. Measured
        k-fold on held-out labels (κ and accuracy before and after); recorded with its
        prompt, and ``kept`` only when κ rises by more than ``min_gain``. Apply a version
        with :meth:`apply_judge_version`; list them with :meth:`judge_versions`.
        """
        return align_judge(
            self,
            evaluator,
            metric,
            judge,
            max_examples=max_examples,
            folds=folds,
            refine=refine,
            min_gain=min_gain,
            seed=seed,
        )

    def judge_versions(self, evaluator: str | None = None) -> pl.DataFrame:
        """Every aligned judge version: kept or not, κ and accuracy before and after, its prompt."""
        return judge_versions(self, evaluator)

    def apply_judge_version(
        self, evaluator: str, version_id: str | None, *, judge: LLMClient
    ) -> Self:
        """Rescore ``evaluator`` with an aligned version; ``None`` rolls back to the plain judge."""
        return apply_judge_version(self, evaluator, version_id, judge)

    def export_calibration(
        self,
        path: str | Path,
        *,
        approved_by: str | None = None,
        note: str | None = None,
        accepted: float | Mapping[str, float] | None = None,
    ) -> Path:
        """Write the calibration bundle (JSON, schema-checked, and a Markdown summary beside it).

        Per calibrated metric: the threshold with its CI, agreement and κ before and after,
        labels per reviewer, the corrected pass rates and the pass rate accepted in
        production (``accepted``: one for all metrics or one per metric name; by default
        the lowest corrected pass rate among the models); the evaluators with their versions
        and parameters; a sample of the lab's questions (drift's reference); the approval
        (``approved_by``, ``note``), the lab's content hash and the evalnb version. Apply it
        to another lab with :func:`evalnb.load_calibration`, or to live traffic with
        :func:`evalnb.monitor`.
        """
        return export_calibration(self, path, approved_by=approved_by, note=note, accepted=accepted)

    def reviewer_agreement(self, evaluator: str, metric: str) -> pl.DataFrame:
        """Cohen's κ between every two reviewers on the items both labelled."""
        return reviewer_agreement(self.labels, evaluator, metric)

    def label_disagreements(self, evaluator: str, metric: str) -> pl.DataFrame:
        """Items the reviewers disagree on, with each verdict and note."""
        return disagreements(self.labels, evaluator, metric)

    def judge_agreement(self, evaluator: str, metric: str) -> dict[str, float | int]:
        """Cohen's κ between a judge metric's verdicts and the humans' labels of it."""
        return judge_agreement(self, evaluator, metric)

    def guardrail_config(
        self, path: str | Path | None = None, *, include_uncalibrated: bool = False
    ) -> dict[str, Any]:
        """Return the guardrail configuration (calibrated thresholds); write it to ``path``."""
        return guardrail_config(self, path, include_uncalibrated=include_uncalibrated)

    def corpus_patch(
        self, markdown: str | Path | None = None, json_path: str | Path | None = None
    ) -> pl.DataFrame:
        """Failed-by-metric answers the humans passed (FAQ style); write Markdown/JSON when asked."""
        return corpus_patch(self, markdown, json_path)


def load_calibration(path: str | Path, lab: L) -> L:
    """Apply a calibration bundle (:meth:`Lab.export_calibration`) to ``lab``; return it.

    Its thresholds become the ``calibrated`` versions in force (in the lab's store too).
    Refused, naming them, when ``lab`` does not score the bundle's metrics or one points
    the other way; a file that is not a bundle is an ``InputError`` naming the field.
    """
    apply_calibration(lab, read_calibration(path), str(path))
    return lab
