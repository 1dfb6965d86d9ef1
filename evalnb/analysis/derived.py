"""What a lab's scores and thresholds say, as functions of the lab.

The :class:`evalnb.Lab` methods ``leaderboard``, ``compare``, ``problems``, ``insights``,
their tables, charts and H2O JSON files are one-line calls into these functions, which
combine the pure table transforms (``leaderboard``, ``problems``, ``insights``,
``classification``) with the lab's verdicts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import polars as pl

from evalnb.analysis.adversarial_effect import adversarial_effect
from evalnb.analysis.classification import with_macro
from evalnb.analysis.insights import insights, insights_json
from evalnb.analysis.leaderboard import compare_models, leaderboard
from evalnb.analysis.overall import overall_leaderboard
from evalnb.analysis.problems import problems, problems_json
from evalnb.analysis.tables import RichTable, table
from evalnb.lab.files import write_atomic
from evalnb.lab.verdicts import lazy_verdicts, verdicts
from evalnb.text.language import case_languages

if TYPE_CHECKING:
    from pathlib import Path

    import altair as alt

    from evalnb.lab.core import LabCore

__all__ = [
    "Analysed",
    "adversarial_chart_of",
    "adversarial_effect_of",
    "analyse",
    "chart_of",
    "compare_of",
    "insights_json_of",
    "insights_of",
    "insights_table_of",
    "lab_leaderboard",
    "leaderboard_of",
    "model_keys",
    "problems_json_of",
    "problems_of",
    "problems_table_of",
    "write_text",
]


@dataclass(frozen=True)
class Analysed:
    """Everything derived from a lab's scores and thresholds, computed once."""

    verdicts: pl.DataFrame
    board: pl.DataFrame
    problems: pl.DataFrame
    insights: pl.DataFrame


def analyse(lab: LabCore, seed: int = 0) -> Analysed:
    """Verdicts, leaderboard, problems and insights of ``lab`` in one pass (report, archive)."""
    v = verdicts(lab.scores, lab.metrics, lab.thresholds)
    board = lab_leaderboard(lab, v, seed=seed)
    return Analysed(v, board, problems(lab, v, board), insights(lab, v, board, seed=seed))


def lab_leaderboard(
    lab: LabCore, v: pl.DataFrame | pl.LazyFrame, *, n_boot: int = 1000, seed: int = 0
) -> pl.DataFrame:
    """Return the leaderboard of ``lab``: per-row means, macro scores for classification."""
    return with_macro(leaderboard(v, n_boot=n_boot, seed=seed), lab, seed=seed)


def model_keys(lab: LabCore) -> dict[str, str]:
    """Model name → the source's model key (H2O's ``dataset_row_keys`` need them)."""
    return dict(lab.model_table.select("model", "key").drop_nulls().iter_rows())


def write_text(path: str | Path | None, text: str) -> str:
    """Return ``text``, written to ``path`` first when one is given."""
    if path is not None:
        write_atomic(path, text)
    return text


def leaderboard_of(
    lab: LabCore,
    *,
    overall: bool = False,
    by: str | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> pl.DataFrame:
    """Return the leaderboard of ``lab`` (see :meth:`evalnb.Lab.leaderboard`)."""
    if by is not None:
        return _leaderboard_by(lab, by, overall=overall, n_boot=n_boot, seed=seed)
    if not overall:  # one metric at a time from the verdicts' query: no whole verdict table
        return lab_leaderboard(lab, _query(lab), n_boot=n_boot, seed=seed)
    verdicts = lab.verdicts()
    board = lab_leaderboard(lab, verdicts, n_boot=n_boot, seed=seed)
    return overall_leaderboard(verdicts, board, n_boot=n_boot, seed=seed)


def _leaderboard_by(
    lab: LabCore, by: str, *, overall: bool, n_boot: int, seed: int
) -> pl.DataFrame:
    """One leaderboard per value of the cases' column ``by``, stacked under that column."""
    cases = lab.cases
    if by not in cases.columns or cases.schema[by] != pl.String:
        text_columns = [c for c, t in cases.schema.items() if t == pl.String and c != "case_id"]
        msg = f"leaderboard(by={by!r}): expected a text column of the cases, one of {text_columns}"
        raise ValueError(msg)
    values = case_languages(cases) if by == "language" else cases[by]
    groups = cases.select("case_id", group=values).drop_nulls("group")
    verdicts = lab.verdicts()
    boards = []
    for (value,), ids in groups.group_by("group", maintain_order=True):
        part = verdicts.join(ids.select("case_id"), on="case_id", how="semi")
        board = lab_leaderboard(lab, part, n_boot=n_boot, seed=seed)
        if overall:
            board = overall_leaderboard(part, board, n_boot=n_boot, seed=seed)
        boards.append(board.select(pl.lit(value, pl.String).alias(by), pl.all()))
    return pl.concat(boards, how="diagonal_relaxed").sort(by, maintain_order=True)


def _query(lab: LabCore) -> pl.LazyFrame:
    return lazy_verdicts(lab.scan("scores"), lab.metrics, lab.thresholds)


def compare_of(
    lab: LabCore, evaluator: str, metric: str | None = None, *, seed: int = 0
) -> pl.DataFrame:
    """Paired model comparisons of one metric (the evaluator's primary one by default)."""
    if metric is None:
        prim = lab.metrics.filter((pl.col("evaluator") == evaluator) & pl.col("primary"))
        if prim.is_empty():
            msg = f"evaluator {evaluator!r} has no scores in this lab; run evalnb.evaluate first"
            raise KeyError(msg)
        metric = str(prim["metric"][0])
    return compare_models(lab.verdicts(), evaluator, metric, seed=seed)


def problems_of(lab: LabCore, *, seed: int = 0, all_metrics: bool = False) -> pl.DataFrame:
    """Return the problems of ``lab``, most severe first (see :func:`problems`)."""
    v = _query(lab)  # each kind of problem collects only the rows it reads
    return problems(lab, v, lab_leaderboard(lab, v, seed=seed), all_metrics=all_metrics)


def insights_of(lab: LabCore, *, seed: int = 0) -> pl.DataFrame:
    """Return the insights of ``lab``."""
    v = lab.verdicts()
    return insights(lab, v, lab_leaderboard(lab, v, seed=seed), seed=seed)


def problems_table_of(lab: LabCore, *, max_rows: int = 50) -> RichTable:
    """Show the problems of ``lab`` as an HTML table with severity badges."""
    cols = [
        "severity",
        "problem_type",
        "evaluator",
        "metric",
        "model",
        "score",
        "threshold",
        "description",
        "actions_description",
        "case_ids",
    ]
    return table(problems_of(lab).select(cols), title="Problems", max_rows=max_rows)


def insights_table_of(lab: LabCore, *, max_rows: int = 50) -> RichTable:
    """Show the insights of ``lab`` as an HTML table."""
    return table(insights_of(lab), title="Insights", max_rows=max_rows)


def problems_json_of(lab: LabCore, path: str | Path | None = None) -> str:
    """H2O's ``problems_and_actions.json`` text of ``lab`` (written to ``path`` when given)."""
    return write_text(path, problems_json(problems_of(lab), model_keys(lab)))


def insights_json_of(lab: LabCore, path: str | Path | None = None) -> str:
    """H2O's ``insights_and_actions.json`` text of ``lab`` (written to ``path`` when given)."""
    return write_text(path, insights_json(insights_of(lab)))


def chart_of(
    lab: LabCore, evaluator: str | None = None, *, kind: str = "auto", seed: int = 0
) -> alt.TopLevelMixin:
    """Chart the leaderboard of ``lab`` (see :meth:`evalnb.Lab.leaderboard_chart`)."""
    from evalnb.analysis.charts import bar_chart, heatmap, leaderboard_chart, radar_chart  # noqa: PLC0415 - Altair loads only when a chart is drawn

    board = leaderboard_of(lab, seed=seed)
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


def adversarial_effect_of(lab: LabCore, *, n_boot: int = 1000, seed: int = 0) -> pl.DataFrame:
    """Compare each adversarial case's score with its base case's (:func:`evalnb.adversarial`).

    Per (evaluator, metric, model, kind): the pairs, both means, the mean difference
    (adversarial − base) with a 95 % interval from resampling the pairs, both pass
    rates, and ``flips`` (base passed, adversarial failed). Needs the models' answers to
    both and their scores.
    """
    return adversarial_effect(lab.verdicts(), lab.cases, n_boot=n_boot, seed=seed)


def adversarial_chart_of(
    lab: LabCore, evaluator: str, metric: str, *, n_boot: int = 1000, seed: int = 0
) -> alt.LayerChart:
    """Chart ``lab.robustness.effect`` of one metric: difference per kind, with its CI."""
    from evalnb.analysis.charts import adversarial_chart  # noqa: PLC0415 - Altair loads only when a chart is drawn

    return adversarial_chart(
        adversarial_effect_of(lab, n_boot=n_boot, seed=seed), evaluator, metric
    )
