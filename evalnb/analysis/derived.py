"""The Lab's analysis methods: thresholds, verdicts, leaderboards, problems, insights.

A mixin so that ``_lab.py`` stays about storage; every method is a thin call into the pure
table transforms (``_verdicts``, ``_leaderboard``, ``_problems``, ``_insights``).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from evalnb.analysis.insights import insights, insights_json
from evalnb.analysis.leaderboard import compare_models, leaderboard, overall_leaderboard
from evalnb.analysis.problems import problems, problems_json
from evalnb.analysis.tables import RichTable, table
from evalnb.lab.schema import SCHEMAS
from evalnb.lab.verdicts import current_thresholds, verdicts

if TYPE_CHECKING:
    from collections.abc import Mapping

    import altair as alt

    from evalnb.widgets.eye import Eye
    from evalnb.weakness.failure_clusters import FailureClusters
    from evalnb.lab.core import Lab
    from evalnb.widgets.grid import Weakness

__all__ = ["Analysed", "Analysis", "analyse", "lab_leaderboard"]


@dataclass(frozen=True)
class Analysed:
    """Everything derived from a lab's scores and thresholds, computed once."""

    verdicts: pl.DataFrame
    board: pl.DataFrame
    problems: pl.DataFrame
    insights: pl.DataFrame


def analyse(lab: Lab, seed: int = 0) -> Analysed:
    """Verdicts, leaderboard, problems and insights of ``lab`` in one pass (report, archive)."""
    v = verdicts(lab.scores, lab.metrics, lab.thresholds)
    board = lab_leaderboard(lab, v, seed=seed)
    return Analysed(v, board, problems(lab, v, board), insights(lab, v, board, seed=seed))


def lab_leaderboard(
    lab: Lab, v: pl.DataFrame, *, n_boot: int = 1000, seed: int = 0
) -> pl.DataFrame:
    """Return the leaderboard of ``lab``: per-row means, macro scores for classification."""
    from evalnb.analysis.classification import with_macro  # noqa: PLC0415

    return with_macro(leaderboard(v, n_boot=n_boot, seed=seed), lab, seed=seed)


def model_keys(lab: Lab) -> dict[str, str]:
    """Model name → the source's model key (H2O's ``dataset_row_keys`` need them)."""
    return dict(lab.model_table.select("model", "key").drop_nulls().iter_rows())


def _write(path: str | Path | None, text: str) -> str:
    if path is not None:
        Path(path).write_text(text, encoding="utf-8")
    return text


class Analysis:
    """Methods mixed into :class:`evalnb.Lab`."""

    def set_threshold(self: Lab, evaluator: str, metric: str, value: float, *,  # type: ignore[misc]
                      source: str = "user") -> Lab:  # fmt: skip
        """Set the pass threshold of one metric (a new version; older ones are kept).

        Everything derived (verdicts, problems, insights, charts, report) follows at once;
        no score is recomputed. Written through to the lab's store when it has one.
        """
        self.metric_spec(evaluator, metric)  # a KeyError naming the known metrics
        row = pl.DataFrame([{"evaluator": evaluator, "metric": metric, "threshold": float(value),
                             "source": source, "created_at": dt.datetime.now(dt.UTC)}],
                           schema=SCHEMAS["thresholds"])  # fmt: skip
        self._append("thresholds", row)
        return self

    def current_thresholds(self: Lab) -> pl.DataFrame:  # type: ignore[misc]
        """Return the threshold in force for every metric, with its source (default/user/calibrated)."""
        return current_thresholds(self.metrics, self.thresholds)

    def metric_spec(self: Lab, evaluator: str, metric: str) -> dict[str, Any]:  # type: ignore[misc]
        """One metric's spec and the threshold in force (a ``current_thresholds`` row)."""
        row = self.current_thresholds().filter(
            (pl.col("evaluator") == evaluator) & (pl.col("metric") == metric)
        )
        if row.is_empty():
            pairs = sorted(set(self.metrics.select("evaluator", "metric").iter_rows()))
            msg = f"no metric {metric!r} of evaluator {evaluator!r} in this lab (evaluate it first); known: {pairs}"
            raise KeyError(msg)
        return row.row(0, named=True)

    def verdicts(self: Lab) -> pl.DataFrame:  # type: ignore[misc]
        """Every score with its threshold and ``passed`` (null where the value is)."""
        return verdicts(self.scores, self.metrics, self.thresholds)

    def leaderboard(self: Lab, *, overall: bool = False, n_boot: int = 1000,  # type: ignore[misc]
                    seed: int = 0) -> pl.DataFrame:  # fmt: skip
        """Per (evaluator, metric, model): mean with a bootstrap 95 % CI, pass rate, rank.

        ``overall=True``: one row per model over the evaluators' primary metrics.
        """
        board = lab_leaderboard(self, self.verdicts(), n_boot=n_boot, seed=seed)
        return overall_leaderboard(board) if overall else board

    def compare(self: Lab, evaluator: str, metric: str | None = None, *,  # type: ignore[misc]
                seed: int = 0) -> pl.DataFrame:  # fmt: skip
        """Paired comparison of every two models: difference, 95 % CI, p-value, who wins."""
        if metric is None:
            prim = self.metrics.filter((pl.col("evaluator") == evaluator) & pl.col("primary"))
            if prim.is_empty():
                msg = (
                    f"evaluator {evaluator!r} has no scores in this lab; run evalnb.evaluate first"
                )
                raise KeyError(msg)
            metric = str(prim["metric"][0])
        return compare_models(self.verdicts(), evaluator, metric, seed=seed)

    def problems(self: Lab, *, seed: int = 0) -> pl.DataFrame:  # type: ignore[misc]
        """Problems, most severe first: thresholds failed, perturbation flips, data issues."""
        v = self.verdicts()
        return problems(self, v, lab_leaderboard(self, v, seed=seed))

    def insights(self: Lab, *, seed: int = 0) -> pl.DataFrame:  # type: ignore[misc]
        """Insights: significant best/worst models, hardest prompts, speed and cost."""
        v = self.verdicts()
        return insights(self, v, lab_leaderboard(self, v, seed=seed), seed=seed)

    def problems_table(self: Lab, *, max_rows: int = 50) -> RichTable:  # type: ignore[misc]
        """Show :meth:`problems` as an HTML table (severity badges); ``.frame`` holds the rows."""
        cols = ["severity", "problem_type", "evaluator", "metric", "model", "score", "threshold",
                "description", "actions_description", "case_ids"]  # fmt: skip
        return table(self.problems().select(cols), title="Problems", max_rows=max_rows)

    def insights_table(self: Lab, *, max_rows: int = 50) -> RichTable:  # type: ignore[misc]
        """Show :meth:`insights` as an HTML table; ``.frame`` holds the rows."""
        return table(self.insights(), title="Insights", max_rows=max_rows)

    def leaderboard_chart(self: Lab, evaluator: str | None = None, *,  # type: ignore[misc]
                          kind: str = "auto", seed: int = 0) -> alt.TopLevelMixin:  # fmt: skip
        """Chart the leaderboard as a bar chart, a radar or a heatmap (Altair, offline).

        ``bar``: means with 95 % CIs and the threshold; ``radar``: several metrics of one
        evaluator; ``heatmap``: model × metric (primary metrics of every evaluator when
        ``evaluator`` is None). ``auto`` picks what H2O shows: a heatmap for the whole lab, a bar chart for an
        evaluator with up to three metrics, a radar for more.
        """
        from evalnb.analysis.charts import bar_chart, heatmap, leaderboard_chart, radar_chart  # noqa: PLC0415

        board = self.leaderboard(seed=seed)
        kinds = {"auto", "bar", "radar", "heatmap"}
        if kind not in kinds:
            msg = f"kind must be one of {sorted(kinds)}; got {kind!r}"
            raise ValueError(msg)
        if evaluator is not None and evaluator not in set(board["evaluator"]):
            msg = f"no scores of evaluator {evaluator!r}; scored: {sorted(set(board['evaluator']))}"
            raise KeyError(msg)
        if kind == "heatmap" or (kind == "auto" and evaluator is None):
            part = board if evaluator is None else board.filter(pl.col("evaluator") == evaluator)
            return heatmap(part if evaluator is not None else part.filter(pl.col("primary")))
        if evaluator is None:
            msg = f"a {kind} chart shows one evaluator: pass evaluator=..."
            raise ValueError(msg)
        if kind == "bar":
            return bar_chart(board, evaluator)
        if kind == "radar":
            return radar_chart(board, evaluator)
        return leaderboard_chart(board, evaluator)

    def problems_json(self: Lab, path: str | Path | None = None) -> str:  # type: ignore[misc]
        """H2O's ``problems_and_actions.json`` text (written to ``path`` when given)."""
        return _write(path, problems_json(self.problems(), model_keys(self)))

    def insights_json(self: Lab, path: str | Path | None = None) -> str:  # type: ignore[misc]
        """H2O's ``insights_and_actions.json`` text (written to ``path`` when given)."""
        return _write(path, insights_json(self.insights()))

    def perturb(self: Lab, perturbators: str | list[str], *, intensity: str = "medium",  # type: ignore[misc]
                seed: int = 0, field: str = "prompt") -> Lab:  # fmt: skip
        """Add a perturbed copy of every original case per perturbator (H2O lineage).

        Each new case keeps its original's fields but ``field`` (default the prompt), links
        back through ``perturbation_of`` and carries H2O's ``perturbed_by:<name>:<intensity>``
        category. Models have not answered the new cases yet: run them (or import their
        answers), then evaluate; :meth:`problems` reports verdicts that flip. Deterministic
        for a seed; written through to the lab's store when it has one.
        """
        from evalnb.robustness.perturbed_cases import perturbed_cases  # noqa: PLC0415

        names = [perturbators] if isinstance(perturbators, str) else list(perturbators)
        added = perturbed_cases(self.cases, names, intensity, seed, field)
        cases = pl.concat(
            [self.cases, added.filter(~pl.col("case_id").is_in(self.cases["case_id"].implode()))]
        )
        self._update({"cases": cases})
        return self

    def report(self: Lab, path: str | Path | None = None, *, title: str | None = None,  # type: ignore[misc]
               seed: int = 0) -> str:  # fmt: skip
        """Render the self-contained HTML report; also write it to ``path`` when given.

        One file with no network access and no script: summary with a severity semaphore,
        problems, insights, one section per evaluator (metrics, chart, weakest cases,
        problems, parameters), the dataset, models and thresholds in force.
        """
        from evalnb.analysis.report import render_report  # noqa: PLC0415

        return _write(path, render_report(self, title=title, seed=seed))

    def eye(self: Lab, *, max_dots: int = 2000, seed: int = 0) -> Eye:  # type: ignore[misc]
        """Open the eval eye on this lab (:class:`evalnb.Eye`): domains → cases drill-down."""
        from evalnb.widgets.eye import Eye  # noqa: PLC0415

        return Eye(self, max_dots=max_dots, seed=seed)

    def weakness(self: Lab, evaluator: str, metric: str, *, min_n: int = 5,  # type: ignore[misc]
                 models: list[str] | None = None) -> Weakness:  # fmt: skip
        """Open the weakness grid (topic × question type) for one metric (``models``: a subset)."""
        from evalnb.widgets.grid import Weakness  # noqa: PLC0415

        return Weakness(self, evaluator, metric, min_n=min_n, models=models)

    def set_question_types(self: Lab, types: Mapping[str, str] | pl.DataFrame | None = None,  # type: ignore[misc]
                           *, overwrite: bool = False) -> pl.DataFrame:  # fmt: skip
        """Fill ``cases.question_type`` by rules (or from ``types``); returns who set what.

        Without ``types``, cases lacking a type get the rule-based one (``overwrite``: all
        cases); the returned frame names the rule that decided each.
        """
        from evalnb.weakness.question_types import set_question_types  # noqa: PLC0415

        return set_question_types(self, types, overwrite=overwrite)

    def failure_clusters(self: Lab, evaluator: str | None = None, metric: str | None = None,  # type: ignore[misc]
                         *, min_failures: int = 10, seed: int = 0) -> FailureClusters:  # fmt: skip
        """Cluster the failed rows so a human can name each weakness (see ``FailureClusters``)."""
        from evalnb.weakness.failure_clusters import failure_clusters  # noqa: PLC0415

        return failure_clusters(self, evaluator, metric, min_failures=min_failures, seed=seed)

    def archive(self: Lab, path: str | Path, *, seed: int = 0) -> Path:  # type: ignore[misc]
        """Write a ZIP archive in H2O's layout; ``evalnb.load(path)`` reads it back."""
        from evalnb.io.archive import write_archive  # noqa: PLC0415

        return write_archive(self, path, seed=seed)
