"""A self-contained HTML report (seed 003 "View evaluation"): one file, no network, no script.

Every string that comes from the lab (model answers, prompts, model names, problem texts)
goes through :func:`html.escape`; charts are inline SVG rendered offline; a Content
Security Policy forbids scripts and any fetch, so even a missed escape could not run code
or call out.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import TYPE_CHECKING, Any, Protocol

import polars as pl

from evalnb.analysis.charts import (
    decision_chart,
    heatmap,
    leaderboard_chart,
    monitoring_chart,
    reliability_chart,
    to_svg,
)
from evalnb.analysis.derived import analyse
from evalnb.analysis.html_parts import escape as _e
from evalnb.analysis.html_parts import html_table as _table
from evalnb.analysis.html_parts import number as _num
from evalnb.analysis.overall import overall_leaderboard
from evalnb.analysis.retrieval_report import relevance_agreement_html, retrieval_html
from evalnb.evaluation.catalog import catalog
from evalnb.lab.schema import JUDGE_CARD_KEY
from evalnb.lab.version import __version__
from evalnb.media.access import panel_media

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from evalnb.analysis.derived import Analysed
    from evalnb.lab.core import LabCore

__all__ = ["DecisionData", "decision_html", "judge_card_html", "render_report"]


class DecisionData(Protocol):
    """What the report reads of a decision: plain data, so the report imports no decide.

    :class:`evalnb.analysis.decide.Decision` is one; ``decide`` shows itself through
    :func:`decision_html` without the report ever importing it back (no import circle).
    """

    @property
    def baseline(self) -> str:
        """The model in production."""

    @property
    def candidate(self) -> str:
        """The model proposed."""

    @property
    def verdict(self) -> str:
        """The overall call."""

    @property
    def frame(self) -> pl.DataFrame:
        """One row per metric and slice (``decide``'s columns)."""

    @property
    def alpha(self) -> float:
        """The error rate across the comparisons."""

    @property
    def margin(self) -> float | None:
        """The difference that does not matter, if any."""

    @property
    def cluster(self) -> str | None:
        """The case field the cases were clustered by, if any."""

    @property
    def correction(self) -> str:
        """``holm`` or ``by``."""

    @property
    def notes(self) -> tuple[str, ...]:
        """What the decision says of itself (defaults taken, clusters too few)."""


_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
_STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:1100px;color:#222}
h1,h2,h3{font-weight:600} table{border-collapse:collapse;margin:.5rem 0 1rem}
td,th{border:1px solid #ddd;padding:.25rem .5rem;vertical-align:top;text-align:left}
th{background:#f4f4f4} .thumbs{display:flex;gap:4px;margin-top:4px}
.thumb{max-width:96px;max-height:96px;border:1px solid #ddd} .thumb-note{font-size:11px;color:#666}
.HIGH{color:#fff;background:#c62828} .MEDIUM{background:#f9a825}
.LOW{background:#9ccc65} .sev{padding:0 .4rem;border-radius:3px;font-weight:600}
.text{white-space:pre-wrap;max-width:420px} details{margin:.3rem 0} .num{text-align:right}
.semaphore span{display:inline-block;margin-right:1rem;padding:.3rem .7rem;border-radius:4px}
"""
_WEAKEST = 5


def _problems_html(probs: pl.DataFrame) -> str:
    """Problems by type; the many per-case robustness flips fold into a details element."""
    if probs.is_empty():
        return "<p>No problems found.</p>"
    cols = ("severity", "problem_type", "evaluator", "model", "description", "actions_description")
    out = []
    for kind, part in probs.partition_by("problem_type", as_dict=True, maintain_order=True).items():
        table = _table(part.select(cols), ("description", "actions_description"))
        label = f"{_e(kind[0])}: {part.height} problem(s)"
        out.append(
            f"<details{' open' if part.height <= 20 else ''}><summary>{label}</summary>{table}</details>"
        )
    return "".join(out)


_FIRST = 5  # the groups of problems the summary ranks first


def _semaphore(problems: pl.DataFrame) -> str:
    """Render the counts by severity, then what to look at first: problems grouped, ranked.

    Hundreds of per-case problems (a robustness flip per perturbed case) read as a wall;
    grouped by kind, evaluator and model and ranked by their HIGH then MEDIUM counts, the
    first few say where the work is.
    """
    counts = dict(problems.group_by("severity").len().iter_rows()) if problems.height else {}
    lights = (
        '<p class="semaphore">'
        + "".join(
            f'<span class="{s}">{s}: {counts.get(s, 0)}</span>' for s in ("HIGH", "MEDIUM", "LOW")
        )
        + "</p>"
    )
    if problems.is_empty():
        return lights
    ranked = (
        problems.group_by("problem_type", "evaluator", "model")
        .agg(
            high=(pl.col("severity") == "HIGH").sum(),
            medium=(pl.col("severity") == "MEDIUM").sum(),
            problems=pl.len(),
            example=pl.col("description").first().str.slice(0, 160),
        )
        .sort(
            ["high", "medium", "problems", "problem_type", "evaluator", "model"],
            descending=[True, True, True, False, False, False],
        )
    )
    rows = "".join(
        f"<tr><td>{_e(r['problem_type'])}</td><td>{_e(r['evaluator'])}</td>"
        f"<td>{_e(r['model'])}</td><td class='num'>{r['high']}</td>"
        f"<td class='num'>{r['medium']}</td><td class='num'>{r['problems']}</td>"
        f"<td>{_e(r['example'])}</td></tr>"
        for r in ranked.head(_FIRST).iter_rows(named=True)
    )
    rest = ranked.height - min(ranked.height, _FIRST)
    return (
        f"{lights}<h3>Look first</h3><p>{problems.height:,} problems in {ranked.height:,} "
        f"groups (kind, evaluator, model); the {min(ranked.height, _FIRST)} with the most HIGH "
        "then MEDIUM problems"
        + (f" ({rest:,} more groups under Problems)" if rest else "")
        + ":</p><table><tr><th>kind</th><th>evaluator</th><th>model</th><th>HIGH</th>"
        f"<th>MEDIUM</th><th>all</th><th>for instance</th></tr>{rows}</table>"
    )


def _case_rows(lab: LabCore, verdicts: pl.DataFrame, evaluator: str, metric: str, hib: bool) -> str:
    """Render the weakest scored rows of the primary metric with their texts."""
    rows = (
        verdicts.filter(
            (pl.col("evaluator") == evaluator)
            & (pl.col("metric") == metric)
            & pl.col("value").is_not_null()
        )
        .sort("value", descending=not hib)
        .head(_WEAKEST)
        .join(
            lab.outputs.select("case_id", "model", "sample", "actual", "context", "media"),
            on=["case_id", "model", "sample"],
            how="left",
        )
        .join(
            lab.cases.select("case_id", "prompt", "expected", case_media="media"),
            on="case_id",
            how="left",
        )
    )
    out = []
    for r in rows.iter_rows(named=True):
        shown = _thumbnails(lab, r["case_media"], r["media"])
        chunks = "".join(f"<li>{_e(c)}</li>" for c in (r["context"] or []))
        ctx = (
            f"<details><summary>context ({len(r['context'] or [])} chunks)</summary><ol>{chunks}</ol></details>"
            if chunks
            else ""
        )
        out.append(
            f"<tr><td>{_e(r['model'])}</td><td class='num'>{_num(r['value'])}</td>"
            f"<td>{'pass' if r['passed'] else 'fail'}</td><td class='text'>{_e(r['prompt'])}{shown}</td>"
            f"<td class='text'>{_e(' | '.join(r['expected'] or []))}</td>"
            f"<td class='text'>{_e(r['actual'])}{ctx}</td></tr>"
        )
    head = "<tr><th>model</th><th>score</th><th>verdict</th><th>prompt</th><th>expected</th><th>actual</th></tr>"
    return f"<table>{head}{''.join(out)}</table>" if out else "<p>No scored rows.</p>"


def _thumbnails(lab: LabCore, case: list[str] | None, answer: list[str] | None) -> str:
    """Thumbnails of a row's images, embedded (the report is one offline file)."""
    if not (case or answer) or not lab.height("media"):
        return ""
    items = panel_media(lab, [("case", case), ("answer", answer)], max_side=96)
    figures = [
        f"<img class='thumb' src='{_e(m['src'])}' alt='{_e(m['role'] + ' ' + m['kind'])}'>"
        if m.get("src", "").startswith("data:image/")
        else f"<span class='thumb-note'>[{_e(m['role'])} {_e(m['kind'])}: {_e(m.get('note') or '')}]</span>"
        for m in items
    ]
    return f"<div class='thumbs'>{''.join(figures)}</div>"


def _evaluator_section(
    lab: LabCore,
    verdicts: pl.DataFrame,
    board: pl.DataFrame,
    problems: pl.DataFrame,
    insights: pl.DataFrame,
    evaluator: str,
) -> str:
    spec = lab.metrics.filter(pl.col("evaluator") == evaluator)
    prim = spec.filter(pl.col("primary"))
    prim_row = (prim if prim.height else spec).row(0, named=True)
    part = board.filter(pl.col("evaluator") == evaluator).select(
        "metric", "model", "n_cases", "mean", "ci_low", "ci_high", "pass_rate", "threshold", "rank"
    )
    params = (
        lab.scores.filter(pl.col("evaluator") == evaluator)["params"]
        .drop_nulls()
        .unique()
        .to_list()
    )
    mine = problems.filter(pl.col("evaluator") == evaluator).select(
        "severity", "model", "metric", "description"
    )
    return (
        f"<h2 id='ev-{_e(evaluator)}'>{_e(evaluator)}</h2>"
        f"<p>{_e(spec['description'][0] if spec.height else '')}</p>"
        f"<h3>Metrics</h3>{_table(part)}"
        f"<figure>{to_svg(leaderboard_chart(board, evaluator))}</figure>"
        f"<h3>Weakest cases ({_e(prim_row['metric'])})</h3>"
        f"{_case_rows(lab, verdicts, evaluator, prim_row['metric'], bool(prim_row['higher_is_better']))}"
        f"<h3>Most difficult cases</h3>{_difficult_html(insights, evaluator)}"
        f"<h3>Problems</h3>{_table(mine, ('description',)) if mine.height else '<p>None.</p>'}"
        f"<h3>Parameters</h3><pre>{_e(json.dumps([json.loads(p) for p in params], indent=1))}</pre>"
    )


def _difficult_html(insights: pl.DataFrame, evaluator: str) -> str:
    hard = insights.filter(
        (pl.col("evaluator") == evaluator) & pl.col("description").str.contains("most difficult")
    )
    return (
        f"<ul>{''.join(f'<li>{_e(d)}</li>' for d in hard['description'])}</ul>"
        if hard.height
        else "<p>None failed.</p>"
    )


def _eda(lab: LabCore) -> str:
    outputs = lab.outputs.with_columns(chars=pl.col("actual").str.len_chars())
    per_model = (
        outputs.group_by("model")
        .agg(
            answers=pl.len(),
            errors=pl.col("error").is_not_null().sum(),
            mean_chars=pl.col("chars").mean(),
            mean_duration_s=pl.col("duration_s").mean(),
            total_cost=pl.col("cost").sum(),
        )
        .sort("model")
    )
    cats = (
        lab.cases.select(pl.col("categories").explode())
        .drop_nulls()
        .group_by("categories")
        .len()
        .sort("len", descending=True)
        .head(20)
    )
    return (
        f"<h2>Dataset</h2><p>{lab.cases.height} test cases "
        f"({lab.cases['perturbation_of'].is_not_null().sum()} perturbed), "
        f"{lab.outputs.height} answers from {len(lab.models)} model(s).</p>"
        f"<h3>Models</h3>{_table(per_model)}"
        + (f"<h3>Categories</h3>{_table(cats)}" if cats.height else "")
    )


def _agreement_html(views: Sequence[Mapping[str, Any]]) -> str:
    """Render the human-calibration section: per labelled metric κ, labels needed, reliability."""
    if not views:
        return ""
    parts = [
        "<h2>Human calibration</h2><p>How the metrics agree with the reviewers' labels: "
        "the share of answers the reviewers passed per score band, with its 95 % interval.</p>"
    ]
    for view in views:
        parts.append(
            f"<h3>{_e(view['title'])}</h3>"
            + "".join(f"<p>{_e(line)}</p>" for line in view["lines"])
        )
        table = view.get("table")
        if isinstance(table, pl.DataFrame) and table.height:
            chart = reliability_chart(table, view.get("threshold"), str(view["title"]))
            parts.append(f"<figure>{to_svg(chart)}</figure>{_table(table)}")
    return "".join(parts)


_WINDOW_COLUMNS = [
    "window_start",
    "n",
    "pass_rate",
    "labels",
    "corrected",
    "corrected_low",
    "corrected_high",
    "cs_low",
    "cs_high",
    "accepted",
    "below_accepted",
]


def _monitoring_html(view: Mapping[str, Any] | None) -> str:
    """Render "Ongoing monitoring": per metric its windows' chart and table, alerts, drift.

    ``view``: ``bundle`` (hash), ``every``, ``windows``, ``alerts`` and ``drift`` (frames, the
    drift one may be None), as ``Monitor`` computes them.
    """
    if not view:
        return ""
    windows: pl.DataFrame = view["windows"]
    parts = [
        "<h2>Ongoing monitoring</h2>"
        f"<p>Live traffic scored with calibration bundle <code>{_e(str(view['bundle'])[:16])}</code>, "
        f"in windows of {_e(view['every'])}: the metric's pass rate under the calibrated "
        "threshold, the pass rate corrected by reviewers' labels on a random sample of each "
        "window (PPI), and the confidence sequence, valid however often it is looked at.</p>"
    ]
    for (ev, metric), part in windows.group_by(["evaluator", "metric"], maintain_order=True):
        name = f"{metric} ({ev})"
        parts.append(
            f"<h3>{_e(name)}</h3><figure>{to_svg(monitoring_chart(part, name))}</figure>"
            + _table(part.select(_WINDOW_COLUMNS))
        )
    alerts: pl.DataFrame = view["alerts"]
    parts.append(
        "<h3>Alerts</h3>"
        + (
            _table(
                alerts.select("window_start", "kind", "metric", "detail", "sent_at"), ("detail",)
            )
            if alerts.height
            else "<p>None.</p>"
        )
    )
    drift = view.get("drift")
    if isinstance(drift, pl.DataFrame) and drift.height:
        parts.append("<h3>Drift</h3>" + _table(drift))
    return "".join(parts)


# What the table leaves to the frame itself (the raw and signed-rank p-values, the guardrail
# flag); the order is decide's, the verdict beside the names.
_DECISION_HIDDEN = frozenset({"p_value", "p_wilcoxon", "guardrail"})


def decision_html(decision: DecisionData, *, heading: str = "h3") -> str:
    """Render a decision: the call, the chart of differences with the margin, the table, notes.

    The notebook view of :class:`~evalnb.analysis.decide.Decision` and the report's
    "Decision" section; every name from the lab is escaped.
    """
    d = decision
    how = (
        f"paired, {'clustered by ' + d.cluster if d.cluster else 'cases independent'}; "
        f"{d.correction} across {d.frame.height} comparison(s) at alpha {d.alpha:g}"
        + (f"; margin ±{d.margin:g}" if d.margin is not None else "")
    )
    title = f"{d.candidate} vs {d.baseline}"
    return (
        f"<{heading}>{_e(title)}: {_e(d.verdict.upper())}</{heading}><p>{_e(how)}</p>"
        f"<figure>{to_svg(decision_chart(d.frame, d.margin, title))}</figure>"
        + _table(d.frame.select([c for c in d.frame.columns if c not in _DECISION_HIDDEN]))
        + "<p>difference, its interval and detectable: candidate − baseline in each metric's "
        "own units (for a 0/1 verdict, a share of the cases: 0.05 is five points of pass "
        "rate); detectable: the smallest difference this run had 80 % power to see.</p>"
        + "".join(f"<p>Note: {_e(n)}</p>" for n in d.notes)
    )


_LIGHTS = {"green": "#43a047", "amber": "#f9a825", "red": "#e53935", "grey": "#9e9e9e"}


def judge_card_html(card: Mapping[str, Any], *, heading: str = "h3") -> str:
    """Render one judge card (as ``JudgeCard.to_json`` writes it): a line per measure, lit.

    The card's notebook view and the report's "Judge reliability" section; every text is
    escaped.
    """
    rows = []
    for m in card["measures"]:
        light = _LIGHTS.get(str(m["flag"]), "#1e88e5")
        interval = f"[{_num(m['ci_low'])}, {_num(m['ci_high'])}]" if m["ci_low"] is not None else ""
        rows.append(
            f"<tr><td><span class='sev' style='background:{light}'>{_e(m['flag'])}</span></td>"
            f"<td>{_e(m['component'])}</td><td>{_e(m['measure'])}</td>"
            f"<td class='num'>{_num(m['estimate'])}</td><td>{interval}</td>"
            f"<td>{_e(m.get('bound') or '')}</td>"
            f"<td class='num'>{_e(m['n'])}</td><td>{_e(m['note'])}</td></tr>"
        )
    conclusion = str(card.get("conclusion") or "")
    return (
        f"<{heading}>{_e(card['judge'])} as {_e(card['evaluator'])}.{_e(card['metric'])}</{heading}>"
        + (f"<p class='conclusion'><strong>{_e(conclusion)}</strong></p>" if conclusion else "")
        + f"<p>{_e(card['calls'])} calls on a seeded sample of the lab's answers. A light is red "
        "when the whole interval lies outside its bound, amber when only the estimate does.</p>"
        "<table><tr><th></th><th>component</th><th>measure</th><th>estimate</th>"
        f"<th>95 % CI</th><th>bound</th><th>n</th><th></th></tr>{''.join(rows)}</table>"
    )


def _judge_ids() -> list[str]:
    return catalog().filter(pl.col("judge"))["id"].to_list()


def _judge_cards_html(lab: LabCore, relevance: pl.DataFrame | None = None) -> str:
    """Render "Judge reliability": every card kept in the lab, and the relevance judges' agreement."""
    return _cards_html(lab) + relevance_agreement_html(relevance)


def _cards_html(lab: LabCore) -> str:
    cards = [v for k, v in lab.info.items() if k.startswith(JUDGE_CARD_KEY)]
    if not cards:
        judged = bool(lab.scores.height) and bool(
            lab.scores["evaluator"].unique().is_in(_judge_ids()).any()
        )
        return (
            "<h2>Judge reliability</h2><p>"
            + (
                "This lab's scores include LLM judges, and no judge card is kept: "
                if judged
                else "No LLM judge scored this lab, so no judge card is kept; with one, "
            )
            + "<code>lab.judges.with_card(lab.judges.card(evaluator, judge=...))</code> measures "
            "how far the judge can be trusted and shows it here.</p>"
        )
    return "<h2>Judge reliability</h2>" + "".join(
        judge_card_html(c) for c in cards if isinstance(c, dict)
    )


def render_report(
    lab: LabCore,
    *,
    title: str | None = None,
    seed: int = 0,
    analysed: Analysed | None = None,
    agreement: Sequence[Mapping[str, Any]] = (),
    monitoring: Mapping[str, Any] | None = None,
    decisions: Sequence[DecisionData] = (),
    attribution: pl.DataFrame | None = None,
    relevance_agreement: pl.DataFrame | None = None,
) -> str:
    """Render the report as HTML text.

    ``agreement``: the human-calibration views to show; ``monitoring``: the ongoing-monitoring
    view (see :func:`_monitoring_html`), or None; ``decisions``: :func:`evalnb.analysis.decide.decide`'s
    results, each a part of the "Decisions" section; ``attribution``: the failed answers
    attributed to retrieval or generation (``lab.retrieval.attribution_summary`` of every
    answer metric, with ``evaluator`` and ``metric`` columns), for the "Retrieval" section;
    ``relevance_agreement``: ``lab.judges.relevance_agreement()``, for "Judge reliability".
    """
    done = analysed or analyse(lab, seed)
    verdicts, board, probs, ins = done.verdicts, done.board, done.problems, done.insights
    evaluators = board["evaluator"].unique(maintain_order=True).to_list()
    name = title or str(lab.info.get("name") or "evalnb evaluation")
    toc = "".join(f"<li><a href='#ev-{_e(e)}'>{_e(e)}</a></li>" for e in evaluators)
    body = (
        f"<h1>{_e(name)}</h1><p>Generated {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC by evalnb {_e(__version__)}.</p>"
        f"<h2>Summary</h2>{_semaphore(probs)}"
        f"<h3>Overall leaderboard</h3>{_table(overall_leaderboard(verdicts, board))}"
        + (
            f"<figure>{to_svg(heatmap(board.filter(pl.col('primary'))))}</figure>"
            if board.height
            else ""
        )
        + f"<h3>Evaluators</h3><ul>{toc}</ul>"
        f"<h2>Problems</h2>{_problems_html(probs)}"
        f"<h2>Insights</h2><ul>{''.join(f'<li>{_e(d)}</li>' for d in ins['description'])}</ul>"
        + retrieval_html(lab, board, attribution)
        + "".join(_evaluator_section(lab, verdicts, board, probs, ins, e) for e in evaluators)
        + "<h2>Decisions</h2>"
        + (
            "".join(decision_html(d) for d in decisions)
            if decisions
            else "<p>No decision in this report: pass <code>decisions=[lab.decisions.decide(baseline, "
            "candidate)]</code> to <code>lab.report</code> for whether one system is better.</p>"
        )
        + _judge_cards_html(lab, relevance_agreement)
        + _agreement_html(agreement)
        + _monitoring_html(monitoring)
        + _eda(lab)
        + f"<h2>Configuration</h2>{_table(lab.current_thresholds().select('evaluator', 'metric', 'threshold', 'source', 'higher_is_better'))}"
    )
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<meta http-equiv='Content-Security-Policy' content=\"{_CSP}\">"
        f"<title>{_e(name)}</title><style>{_STYLE}</style></head><body>{body}</body></html>"
    )
