"""The public :class:`Lab`: the lab's tables, its views, and one namespace per concern.

``LabCore`` (:mod:`evalnb.lab`) holds the tables and may import nothing above it, yet a
data scientist expects ``lab.leaderboard()``, ``lab.calibration.recalibrate(...)`` and
``lab.eye()``. This class is where the two meet: the views every lab has (leaderboard,
problems, insights, report, export, eye, weakness) are methods here; every other concern is
a namespace (``lab.judges``, ``lab.calibration``, ``lab.decisions``, ``lab.curation``,
``lab.languages``, ``lab.robustness``) whose methods are its subpackage's functions with the
lab bound (:mod:`evalnb.api.binding`, :mod:`evalnb.api.namespaces`). The flat names those
methods had before stay one release, with a ``DeprecationWarning`` (:data:`MOVED`). Nothing
below imports this module; ``evalnb/__init__.py`` exports it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from evalnb.analysis import derived
from evalnb.analysis.insights import insights_json
from evalnb.analysis.rendered import Report
from evalnb.analysis.tables import table
from evalnb.api.binding import moved, namespace
from evalnb.api.joins import analysed_of, lab_insights
from evalnb.api.namespaces import (
    CalibrationMethods,
    CurationMethods,
    DecisionMethods,
    JudgeMethods,
    LanguageMethods,
    MediaMethods,
    RetrievalMethods,
    RobustnessMethods,
)
from evalnb.calibration.reliability import agreement_views
from evalnb.diagnosis.failure_clusters import failure_clusters
from evalnb.diagnosis.question_types import set_question_types
from evalnb.generation.curation import curated_cases
from evalnb.io.agent_export import agent_chat_records
from evalnb.io.h2o_export import h2o_lab_document, h2o_suite_document
from evalnb.io.inspect_export import inspect_log_document
from evalnb.io.load import load as load_core
from evalnb.io.ragas_data import ragas_records
from evalnb.io.tencent_export import tencent_records
from evalnb.judge_reliability.relevance import relevance_agreement
from evalnb.lab.core import LabCore
from evalnb.lab.files import write_atomic
from evalnb.llm.ragas_llm import RAGAS_MISSING
from evalnb.transforms.attribution import attribution_overview

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

    import altair as alt
    import pandas as pd
    import polars as pl

    from evalnb.analysis.decide import Decision
    from evalnb.analysis.tables import RichTable
    from evalnb.diagnosis.failure_clusters import FailureClusters
    from evalnb.judge_reliability.card import JudgeCard
    from evalnb.monitoring.monitor import Monitor
    from evalnb.widgets.eye import Eye
    from evalnb.widgets.weakness import Weakness

__all__ = ["MOVED", "Lab", "load", "open_lab"]

MOVED = {
    "judge_report": ("judges", "report"),
    "judge_card": ("judges", "card"),
    "judge_card_view": ("judges", "card_view"),
    "with_judge_card": ("judges", "with_card"),
    "judge_agreement": ("judges", "agreement"),
    "align_judge": ("judges", "align"),
    "judge_versions": ("judges", "versions"),
    "apply_judge_version": ("judges", "apply_version"),
    "add_label": ("calibration", "add_label"),
    "pull_labels": ("calibration", "pull_labels"),
    "calibration_sample": ("calibration", "sample"),
    "recalibrate": ("calibration", "recalibrate"),
    "corrected_leaderboard": ("calibration", "corrected_leaderboard"),
    "corrected_difference": ("calibration", "corrected_difference"),
    "reliability": ("calibration", "reliability"),
    "reliability_chart": ("calibration", "reliability_chart"),
    "reviewer_agreement": ("calibration", "reviewer_agreement"),
    "label_disagreements": ("calibration", "disagreements"),
    "export_calibration": ("calibration", "export"),
    "guardrail_config": ("calibration", "guardrail_config"),
    "corpus_patch": ("calibration", "corpus_patch"),
    "decide": ("decisions", "decide"),
    "decide_rule": ("decisions", "rule"),
    "compare": ("decisions", "compare"),
    "curate": ("curation", "curate"),
    "curator": ("curation", "curator"),
    "apply_curation": ("curation", "apply"),
    "answer_languages": ("languages", "answers"),
    "set_languages": ("languages", "set"),
    "perturb": ("robustness", "perturb"),
    "adversarial_effect": ("robustness", "effect"),
    "adversarial_chart": ("robustness", "chart"),
}
"""Old flat name of a :class:`Lab` method → (namespace, name there): kept one release.

``lab.languages()`` and ``lab.curation()`` (now namespaces) still answer when called, with
the same warning: ``lab.languages.summary()`` and ``lab.curation.view()``.
"""


class Lab(LabCore):
    """A test lab: cases, model outputs, scores, metric specs, human labels and thresholds.

    Build one with :func:`evalnb.load` (from a file or frame) or :func:`evalnb.open` (from a
    DuckDB store). The tables are Polars frames with fixed schemas (``docs/architecture.md``).

    Examples
    --------
    >>> import evalnb, polars as pl
    >>> lab = evalnb.load(pl.DataFrame({"prompt": ["2+2?"], "expected": ["4"], "actual": ["4"]}))
    >>> lab.cases.height, lab.models
    (1, ['model'])
    """

    judges = namespace(JudgeMethods)
    calibration = namespace(CalibrationMethods)
    decisions = namespace(DecisionMethods)
    curation = namespace(CurationMethods)
    languages = namespace(LanguageMethods)
    robustness = namespace(RobustnessMethods)
    retrieval = namespace(RetrievalMethods)
    media = namespace(MediaMethods)

    if not TYPE_CHECKING:  # the type checker flags the old names; at run time they warn

        def __getattr__(self, name: str) -> object:
            if name.startswith("_"):  # copy and pickle probe dunders: never the moved names
                raise AttributeError(name)
            return moved(self, name, MOVED)

    # -- files -----------------------------------------------------------------------------

    def export(
        self,
        path: str | Path,
        format: str = "h2o_lab",  # noqa: A002
        *,
        model: str | None = None,
    ) -> Path:
        """Write the lab to ``path`` in a source format others read.

        Parameters
        ----------
        path
            The file to write (replaced whole; written to a temporary file first).
        format
            ``"h2o_lab"`` (H2O Eval Studio test lab JSON), ``"h2o_suite"`` (H2O test suite
            JSON: the cases only, as curated (:meth:`curate`), grouped into tests by their
            documents), ``"tencent"`` (Tencent TI evaluation-only JSONL) or
            ``"agent_chat"`` (OpenAI chat conversations, JSONL: one per output, its steps as
            messages with tool calls, and the case's reference tool calls) or ``"ragas"``
            (ragas single-turn samples, JSONL: what ``EvaluationDataset.from_jsonl`` reads)
            or ``"inspect"`` (an Inspect AI eval log, JSON: one model's run).
            Importing the file back gives equal cases (and outputs and steps, for the
            formats that hold them); ``agent_chat`` and ``inspect`` carry the media as
            content parts, so the same media ids come back.
        model
            For ``"ragas"``: one model's answers (a ragas dataset holds one system's);
            without it every output is written, each with its ``model``. For
            ``"inspect"``: the model whose run the log is (needed with several).
        """
        if format == "h2o_lab":
            text = json.dumps(h2o_lab_document(self), indent=4, ensure_ascii=False)
        elif format == "h2o_suite":
            suite = curated_cases(self.cases, self.table("curation"))
            text = json.dumps(h2o_suite_document(self, suite), indent=4, ensure_ascii=False)
        elif format == "inspect":
            text = json.dumps(inspect_log_document(self, model), indent=1, ensure_ascii=False)
        elif format in ("tencent", "agent_chat", "ragas"):
            records = (
                tencent_records(self)
                if format == "tencent"
                else agent_chat_records(self)
                if format == "agent_chat"
                else ragas_records(self, model)
            )
            text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
        else:
            msg = (
                f"cannot export to {format!r}; expected 'h2o_lab', 'h2o_suite', 'tencent', "
                "'agent_chat', 'ragas' or 'inspect'"
            )
            raise ValueError(msg)
        return write_atomic(path, text)

    def to_ragas(self, model: str | None = None) -> Any:  # noqa: ANN401 - ragas' own type
        """Return the answers as a ragas ``EvaluationDataset`` (needs ``evalnb[ragas]``).

        One model's (``model``, or the lab's only one); with several models and no
        ``model``, a dict of one dataset per model. Fields as :func:`evalnb.load` reads them
        back (the unmapped ones from ``extra`` included).
        """
        try:
            from ragas import EvaluationDataset  # noqa: PLC0415 - optional
        except ImportError:
            msg = f"to_ragas {RAGAS_MISSING}"
            raise ImportError(msg) from None
        models = sorted(set(self.outputs["model"]))
        if model is not None or len(models) == 1:
            return EvaluationDataset.from_list(ragas_records(self, model or models[0]))
        return {m: EvaluationDataset.from_list(ragas_records(self, m)) for m in models}

    def report(
        self,
        path: str | Path | None = None,
        *,
        title: str | None = None,
        seed: int = 0,
        monitor: Monitor | None = None,
        every: str = "1d",
        decisions: Sequence[Decision] = (),
    ) -> Report:
        """Render the self-contained HTML report; also write it to ``path`` when given.

        One file with no network access and no script: summary with a severity semaphore,
        problems, insights, one section per evaluator (metrics, chart, weakest cases,
        problems, parameters), human calibration (κ with its interval, labels still needed,
        the reliability of each labelled metric), with ``monitor`` (:func:`evalnb.monitor`)
        ongoing monitoring (its ``every`` windows: pass rates, corrected ones with their
        confidence sequences, alerts, drift), with ``decisions`` (:meth:`decide`'s results)
        a section per decision (the call, each difference and interval with the margin
        drawn, clusters and correction stated), the dataset, models and thresholds in
        force. The returned
        :class:`evalnb.Report` prints as its path, shows itself in a notebook cell, and
        holds the document in ``html``.
        """
        from evalnb.analysis.report import render_report  # noqa: PLC0415 - loads Altair: only when a report is written

        html = render_report(
            self,
            title=title,
            seed=seed,
            analysed=analysed_of(self, seed),
            attribution=attribution_overview(self),
            relevance_agreement=relevance_agreement(self),
            agreement=agreement_views(self),
            monitoring=monitor.report_view(every) if monitor is not None else None,
            decisions=decisions,
        )
        return Report.written(html, path)

    def archive(self, path: str | Path, *, seed: int = 0) -> Path:
        """Write a ZIP archive in H2O's layout; ``evalnb.load(path)`` reads it back."""
        from evalnb.analysis.archive import write_archive  # noqa: PLC0415 - loads Altair, as above

        return write_archive(self, path, seed=seed, analysed=analysed_of(self, seed))

    # -- analysis ----------------------------------------------------------------------------

    def leaderboard(
        self,
        *,
        overall: bool = False,
        by: str | None = None,
        n_boot: int = 1000,
        seed: int = 0,
    ) -> pl.DataFrame:
        """Per (evaluator, metric, model): mean with a bootstrap 95 % CI, pass rate, rank.

        ``by`` names a text column of the cases (``"language"``, ``"topic"``, …): one
        leaderboard per value, each with its own intervals and ranks, the value in a first
        column. ``by="language"`` detects the languages of cases that have none.

        ``overall=True``: one row per model over the evaluators' primary metrics: the pass
        rate averaged over them, and ``rank`` by it, each with a 95 % interval from case
        resampling (``rank_ci_low``/``rank_ci_high``: the best and worst rank the model
        takes in the central 95 % of replicates). ``mean_rank`` and ``wins`` summarize the
        per-metric ranks and may order models differently.
        """
        return derived.leaderboard_of(self, overall=overall, by=by, n_boot=n_boot, seed=seed)

    def problems(self, *, seed: int = 0, all_metrics: bool = False) -> pl.DataFrame:
        """Problems, most severe first: thresholds failed, perturbation flips, data issues.

        Threshold and flip problems concern each evaluator's primary metric, as in H2O;
        ``all_metrics=True`` raises them for every metric.
        """
        return derived.problems_of(self, seed=seed, all_metrics=all_metrics)

    def insights(self, *, seed: int = 0) -> pl.DataFrame:
        """Insights: significant best/worst models, hardest prompts, speed, cost, retrieval misses.

        The last: where failed answers had no relevant document retrieved (a lab with
        rankings and relevance judgments; :meth:`retrieval` ``.attribution``).
        """
        return lab_insights(self, seed=seed)

    def problems_table(self, *, max_rows: int = 50) -> RichTable:
        """Show :meth:`problems` as an HTML table (severity badges); ``.frame`` holds the rows."""
        return derived.problems_table_of(self, max_rows=max_rows)

    def insights_table(self, *, max_rows: int = 50) -> RichTable:
        """Show :meth:`insights` as an HTML table; ``.frame`` holds the rows."""
        return table(lab_insights(self), title="Insights", max_rows=max_rows)

    def leaderboard_chart(
        self, evaluator: str | None = None, *, kind: str = "auto", seed: int = 0
    ) -> alt.TopLevelMixin:
        """Chart the leaderboard as a bar chart, a radar or a heatmap (Altair, offline).

        ``bar``: means with 95 % CIs and the threshold; ``radar``: several metrics of one
        evaluator; ``heatmap``: model × metric (primary metrics of every evaluator when
        ``evaluator`` is None). ``auto`` picks what H2O shows: a heatmap for the whole lab,
        a bar chart for an evaluator with up to three metrics, a radar for more.
        """
        return derived.chart_of(self, evaluator, kind=kind, seed=seed)

    def problems_json(self, path: str | Path | None = None) -> str:
        """H2O's ``problems_and_actions.json`` text (written to ``path`` when given)."""
        return derived.problems_json_of(self, path)

    def insights_json(self, path: str | Path | None = None) -> str:
        """H2O's ``insights_and_actions.json`` text (written to ``path`` when given)."""
        return derived.write_text(path, insights_json(lab_insights(self)))

    # -- question types and weakness ------------------------------------------------------------

    def set_question_types(
        self, types: Mapping[str, str] | pl.DataFrame | None = None, *, overwrite: bool = False
    ) -> pl.DataFrame:
        """Fill ``cases.question_type`` by rules (or from ``types``); returns who set what.

        Without ``types``, cases lacking a type get the rule-based one (``overwrite``: all
        cases); the returned frame names the rule that decided each.
        """
        return set_question_types(self, types, overwrite=overwrite)

    def failure_clusters(
        self,
        evaluator: str | None = None,
        metric: str | None = None,
        *,
        min_failures: int = 10,
        seed: int = 0,
    ) -> FailureClusters:
        """Cluster the failed rows so a human can name each weakness (see ``FailureClusters``)."""
        return failure_clusters(self, evaluator, metric, min_failures=min_failures, seed=seed)

    # -- widgets -------------------------------------------------------------------------------

    def eye(
        self,
        *,
        max_dots: int = 2000,
        seed: int = 0,
        card: JudgeCard | None = None,
        measure: str | None = None,
    ) -> Eye:
        """Open the eval eye on this lab (:class:`evalnb.Eye`): domains → cases drill-down.

        With a judge ``card``, the eye opens on the answer that shows ``measure`` worst
        (by default the card's first red measure): :meth:`evalnb.judges.JudgeCard.worst`.
        """
        from evalnb.widgets.eye import Eye  # noqa: PLC0415 - widgets load late

        shown = Eye(self, max_dots=max_dots, seed=seed)
        if card is not None:
            shown.focus(card.evaluator, card.metric, card.worst(measure))
        return shown

    def weakness(
        self,
        evaluator: str,
        metric: str,
        *,
        min_n: int = 5,
        models: list[str] | None = None,
        axes: tuple[str, str] = ("topic", "question_type"),
    ) -> Weakness:
        """Open the weakness grid for one metric (``models``: a subset).

        Topic × question type by default; ``axes`` takes any text column of the cases or
        ``"tool"`` (the tools an agent's runs called), e.g. ``axes=("tool", "topic")``.
        """
        from evalnb.widgets.weakness import Weakness  # noqa: PLC0415 - widgets load late

        return Weakness(self, evaluator, metric, min_n=min_n, models=models, axes=axes)


def load(
    source: str | Path | pl.DataFrame | pd.DataFrame | object,
    format: str | None = None,  # noqa: A002 - the public name the issue asks for
    **mapping: object,
) -> Lab:
    """Import a test lab from a file or a frame.

    Parameters
    ----------
    source
        A path (see ``evalnb.FORMATS`` for the formats read), a Polars/pandas frame, or a
        ragas ``EvaluationDataset`` / ``EvaluationResult`` (its scores become imported
        scores, evaluator ``ragas_result``).
    format
        Force a format instead of detecting it from the content.
    **mapping
        For a retrieval run (a TREC run file, or a ranx-style dict ``{qid: {docid:
        score}}``, or ``{system: {qid: {docid: score}}}``): ``qrels=`` its judgments (a TREC
        qrels file or ``{qid: {docid: grade}}``); for a BEIR folder, ``split=`` (default
        ``"test"``). For generic tables: which column holds each field, e.g. ``prompt="question",
        actual="answer", model="llm"``; ``actual={"model A": "col_a", ...}`` reads a wide
        table with one answer column per model. For HarpIA, Harbor and ragas sources,
        ``model=`` names the model the answers belong to; for agent conversations, the
        model of those that name none.

    Returns
    -------
    Lab
        A new in-memory lab; nothing is written until :meth:`Lab.save`.

    Raises
    ------
    InputError
        Naming the file, the line or JSON path, the field, what was expected and found.
    """
    return Lab.view(load_core(source, format, **mapping))


def open_lab(path: str | Path) -> Lab:
    """Open a lab stored in a DuckDB file by :meth:`Lab.save` or ``evalnb import``.

    Examples
    --------
    >>> import evalnb, polars as pl, tempfile, pathlib
    >>> lab = evalnb.load(pl.DataFrame({"prompt": ["hi"], "actual": ["hello"]}))
    >>> path = lab.save(pathlib.Path(tempfile.mkdtemp()) / "lab.duckdb")
    >>> evalnb.open(path).equals(lab)
    True
    """
    return Lab.open(path)
