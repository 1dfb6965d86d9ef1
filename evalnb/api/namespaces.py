"""The concerns of :class:`~evalnb.Lab`, one namespace each (``lab.judges``, ``lab.calibration``).

Also ``lab.decisions``, ``lab.curation``, ``lab.languages``, ``lab.robustness``,
``lab.retrieval`` and ``lab.media``. Every
attribute is a function of the concern's own subpackage with the lab bound
(:mod:`evalnb.api.binding`); nothing here computes. Where a method joins two layers that
never import each other (``analysis`` and ``calibration``), the function that joins them is
in :mod:`evalnb.api.joins`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalnb.analysis import derived
from evalnb.analysis.decide import decide
from evalnb.analysis.sequential import decide_rule
from evalnb.api.binding import Namespace, bound, old_call
from evalnb.api.joins import reliability_chart
from evalnb.calibration.alignment import align_judge, apply_judge_version, judge_versions
from evalnb.calibration.bundle import export_calibration
from evalnb.calibration.corrected import corrected_difference, corrected_leaderboard
from evalnb.calibration.guardrail import corpus_patch, guardrail_config
from evalnb.calibration.judge_agreement import judge_agreement
from evalnb.calibration.labels import add_label, disagreements, reviewer_agreement
from evalnb.calibration.recalibrate import recalibrate
from evalnb.calibration.relevance import add_grade, judge_relevance, relevance_pool
from evalnb.calibration.reliability import reliability
from evalnb.calibration.sampling import calibration_sample
from evalnb.diagnosis.languages import answer_languages, language_summary, set_languages
from evalnb.generation.baseline_retrievers import baseline_rankings
from evalnb.generation.curation import apply_curation, curate, curation_of
from evalnb.io.trec import export_trec
from evalnb.judge_reliability.card import judge_card, kept_with
from evalnb.judge_reliability.cascade_report import cascade_report
from evalnb.judge_reliability.relevance import relevance_agreement
from evalnb.judge_reliability.report import judge_report
from evalnb.media.access import export_media, media_of, media_summary, media_table, thumbnail
from evalnb.robustness.perturbed_cases import perturb
from evalnb.team.publish import pull_labels
from evalnb.transforms.attribution import attribution, attribution_summary

if TYPE_CHECKING:
    import polars as pl

    from evalnb.judge_reliability.card import JudgeCard
    from evalnb.lab.core import LabCore
    from evalnb.widgets.curator import Curator
    from evalnb.widgets.judge_card_view import JudgeCardView

__all__ = [
    "CalibrationMethods",
    "CurationMethods",
    "DecisionMethods",
    "JudgeMethods",
    "LanguageMethods",
    "MediaMethods",
    "RetrievalMethods",
    "RobustnessMethods",
]


def _labels(lab: LabCore) -> pl.DataFrame:
    return lab.labels


def _card_view() -> type[JudgeCardView]:
    from evalnb.widgets.judge_card_view import JudgeCardView  # noqa: PLC0415 - anywidget when shown

    return JudgeCardView


def _curator() -> type[Curator]:
    from evalnb.widgets.curator import Curator  # noqa: PLC0415 - anywidget when shown

    return Curator


class JudgeMethods(Namespace):
    """``lab.judges``: what the judges cost, how far to trust them, and their aligned versions."""

    report = bound(judge_report)
    cascade_report = bound(cascade_report)
    card = bound(judge_card)
    card_view: bound[[JudgeCard], JudgeCardView] = bound(load=_card_view)
    with_card = bound(kept_with)
    agreement = bound(judge_agreement)
    relevance_agreement = bound(relevance_agreement)
    align = bound(align_judge)
    versions = bound(judge_versions)
    apply_version = bound(apply_judge_version)


class CalibrationMethods(Namespace):
    """``lab.calibration``: reviewers' labels and what they buy (thresholds, corrected rates)."""

    add_label = bound(add_label)
    pull_labels = bound(pull_labels)
    sample = bound(calibration_sample)
    recalibrate = bound(recalibrate)
    corrected_leaderboard = bound(corrected_leaderboard)
    corrected_difference = bound(corrected_difference)
    reliability = bound(reliability)
    reliability_chart = bound(reliability_chart)
    reviewer_agreement = bound(reviewer_agreement, via=_labels)
    disagreements = bound(disagreements, via=_labels)
    export = bound(export_calibration)
    guardrail_config = bound(guardrail_config)
    corpus_patch = bound(corpus_patch)


class DecisionMethods(Namespace):
    """``lab.decisions``: which of two systems to ship (``decide``), and when to stop asking.

    ``compare`` is the quick look (every two models, one metric, unclustered, uncorrected);
    ship on ``decide``, which clusters, corrects for many metrics and states a margin.
    """

    decide = bound(decide)
    rule = bound(decide_rule)
    compare = bound(derived.compare_of)


class CurationMethods(Namespace):
    """``lab.curation``: reviewers accept, edit and exclude generated cases."""

    curate = bound(curate)
    view = bound(curation_of)
    curator: bound[..., Curator] = bound(load=_curator)
    apply = bound(apply_curation)

    def __call__(self) -> pl.DataFrame:
        """Show the cases as curated: the old ``lab.curation()``, now ``lab.curation.view()``."""
        return old_call("curation", "curation.view", curation_of, self.lab)


class LanguageMethods(Namespace):
    """``lab.languages``: each case's language, and the answers that came back in another."""

    summary = bound(language_summary)
    answers = bound(answer_languages)
    set = bound(set_languages)

    def __call__(self) -> pl.DataFrame:
        """Cases per language: the old ``lab.languages()``, now ``lab.languages.summary()``."""
        return old_call("languages", "languages.summary", language_summary, self.lab)


class RobustnessMethods(Namespace):
    """``lab.robustness``: perturbed copies of the cases and the effect of adversarial ones."""

    perturb = bound(perturb)
    effect = bound(derived.adversarial_effect_of)
    chart = bound(derived.adversarial_chart_of)


class RetrievalMethods(Namespace):
    """``lab.retrieval``: the retriever against relevance judgments, and what its misses cost.

    The measures themselves are the ``retrieval`` evaluator's (trec_eval's, per query):
    ``evalnb.evaluate(lab, "retrieval")``; leaderboards and ``decide`` then take retrievers.
    """

    attribution = bound(attribution)
    attribution_summary = bound(attribution_summary)
    baseline = bound(baseline_rankings)
    pool = bound(relevance_pool)
    add_grade = bound(add_grade)
    judge = bound(judge_relevance)
    export = bound(export_trec)


class MediaMethods(Namespace):
    """``lab.media``: the images, audio, video and documents the cases, answers and contexts hold.

    Loaded with the lab (OpenAI content parts, Inspect's content, datasets' image columns,
    paths and URLs; :mod:`evalnb.media.items` states the rules), kept once each by content.
    Judges see them (``media=`` of every judge), ``wer``/``cer``/``anls``/``clip_score``
    score without one.
    """

    table = bound(media_table)
    summary = bound(media_summary)
    of = bound(media_of)
    thumbnail = bound(thumbnail)
    export = bound(export_media)
