"""Decide between two systems: clustered, paired, corrected for many metrics, with margins and power.

:func:`decide` compares a *candidate* with a *baseline* on the cases both answered, metric
by metric (and per slice when asked). The paired difference is oriented so that a positive
one means the candidate is better (a lower-is-better metric is turned round). Then:

- **Clusters** (``cluster=``: a case column such as the source document, the template or
  the conversation; the lab's topics by default when it has them, and said so): the mean
  difference's standard error is cluster-robust (CR1, the one statsmodels' OLS gives with
  ``cov_type="cluster"``), and its interval and p-value use Student's t with G − 1 degrees
  of freedom (G clusters; statsmodels' default normal is too narrow with few clusters).
  With fewer than 30 clusters the p-value and interval come from the wild cluster
  bootstrap instead (CR1's t is still too narrow when few clusters differ in size:
  :mod:`evalnb.analysis.paired_tests`). The design effect (the variance over the naive one)
  is reported.
  Fewer than two clusters (one topic, a cluster column null everywhere, a slice inside
  one cluster) leave nothing to estimate that error from: no verdict, and a note says why.
- **Without clusters**: verdicts (0/1 metrics, whichever way they point) get the exact
  McNemar test on the discordant pairs (statsmodels' ``mcnemar(exact=True)``) and Tango's
  score interval (it keeps its width when no pair is discordant, where the Wald interval
  is [0, 0] and would call two systems equivalent on 30 agreeing cases); numbers the
  paired t-test (scipy's ``ttest_rel``), with the Wilcoxon signed-rank p-value beside it
  (scipy's ``wilcoxon``).
- **Several samples per case** (``sample`` > 0) are averaged per case first; the
  within-case variance is kept for :func:`~evalnb.analysis.planning.plan` (Miller's K resamples).
- **Many comparisons**: p-values are adjusted across every metric × slice compared, by Holm
  (default) or Benjamini–Yekutieli (``correction="by"``).
- **One judge for both**: a judged metric whose two systems' scores carry different judge
  fingerprints (``detail.fingerprint``: the judge's model, server, decoding, contract,
  the evaluator's version and the reader's edition) is refused, naming what differs: a
  difference between two judges is not a difference between two systems
  (``mixed_judges="allow"`` compares them anyway, noted).
- **Verdicts**: ``better`` / ``worse`` (adjusted p under ``alpha``), ``equivalent`` (the
  interval inside ±margin), ``non-inferior`` (its worst end above −margin), else
  ``inconclusive`` with the smallest difference the run could have seen (80 % power).

Intervals are two-sided at 1 − alpha and not widened for multiplicity: a margin decision
read off one is the usual one-sided test at alpha / 2.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from evalnb.analysis.paired_tests import ONE_CLUSTER, PairedTest, adjust, paired_test

if TYPE_CHECKING:
    from collections.abc import Sequence

    from evalnb.lab.core import LabCore

__all__ = [
    "VERDICTS",
    "Decision",
    "case_columns",
    "chosen_metrics",
    "decide",
    "default_cluster",
    "mixed_fingerprints",
    "paired_cases",
]

VERDICTS = ("better", "worse", "equivalent", "non-inferior", "inconclusive")
_FRAME_ORDER = (
    "evaluator",
    "metric",
    "slice",
    "verdict",
    "difference",
    "ci_low",
    "ci_high",
    "detectable",
    "p_adjusted",
    "n",
    "clusters",
    "design_effect",
    "method",
    "p_value",
    "p_wilcoxon",
    "guardrail",
)
_POWER_Z = 0.8416212335729143  # z of 80 % power


def _verdict(test: PairedTest, adjusted: float, alpha: float, margin: float | None) -> str:
    if adjusted < alpha and test.difference > 0:
        return "better"
    if adjusted < alpha and test.difference < 0:
        return "worse"
    if margin is not None and -margin < test.ci_low and test.ci_high < margin:
        return "equivalent"
    if margin is not None and test.ci_low > -margin:
        return "non-inferior"
    return "inconclusive"


@dataclass(frozen=True, repr=False)
class Decision:
    """What :func:`decide` found: one row per metric (and slice), and the overall call.

    Attributes
    ----------
    frame
        ``evaluator, metric, slice, verdict, difference, ci_low, ci_high, detectable,
        p_adjusted, n, clusters, design_effect, method, p_value, p_wilcoxon, guardrail``: the
        difference is candidate − baseline in the metric's units, oriented so that positive
        is better; ``detectable`` is the smallest difference this run had 80 % power to see.
    verdict
        ``"better"`` (some metric better, none worse, guardrails kept), ``"worse"`` (a
        metric or guardrail worse), ``"non-inferior"`` (with a margin: every metric at least
        non-inferior) or ``"inconclusive"``.
    """

    baseline: str
    candidate: str
    frame: pl.DataFrame
    verdict: str
    alpha: float
    margin: float | None
    cluster: str | None
    correction: str
    notes: tuple[str, ...] = field(default_factory=tuple)

    def explain(self) -> str:
        """Return a one-screen explanation (what ``evalnb gate`` prints)."""
        lines = [
            f"{self.candidate} vs {self.baseline}: {self.verdict.upper()}",
            f"alpha {self.alpha:g}, {self.correction} across {self.frame.height} comparison(s)"
            + (f", margin ±{self.margin:g}" if self.margin is not None else "")
            + (f", clustered by {self.cluster}" if self.cluster else ", cases independent"),
            "differences: candidate − baseline in each metric's units, positive = better",
        ]
        for r in self.frame.iter_rows(named=True):
            where = f" [{r['slice']}]" if r["slice"] else ""
            line = (
                f"  {r['evaluator']}.{r['metric']}{where}: {r['difference']:+.4f} "
                f"[{r['ci_low']:+.4f}, {r['ci_high']:+.4f}] p={r['p_adjusted']:.3g} → {r['verdict']}"
            )
            if r["verdict"] == "inconclusive" and r["detectable"] is not None:
                line += f" (a difference under {r['detectable']:.4f} would not have been seen)"
            lines.append(line)
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.explain()

    __repr__ = __str__

    def _repr_html_(self) -> str:
        # The report module loads Altair and the SVG renderer: only when a decision is shown.
        from evalnb.analysis.report import decision_html  # noqa: PLC0415

        return decision_html(self)


def case_columns(cases: pl.DataFrame, names: Sequence[str], option: str) -> pl.DataFrame:
    """Return ``case_id`` and the case fields ``names``: a column, or a field of ``extra``.

    A source's own fields (a ``document_id`` beside the prompt) live in the cases' ``extra``
    JSON; they cluster and slice as columns do. A name found in neither is an error listing
    what there is.
    """
    out = cases.select("case_id")
    for name in dict.fromkeys(names):
        if name in cases.columns:
            out = out.with_columns(cases[name])
            continue
        found = (
            cases["extra"].str.json_path_match(f"$.{name}")
            if "extra" in cases.columns and name.isidentifier()
            else None
        )
        if found is None or found.null_count() == found.len():
            fields = sorted(_extra_fields(cases))
            msg = (
                f"{option}={name!r} is not a case column nor a field of the cases' extra; "
                f"columns: {cases.columns}" + (f", extra fields: {fields[:20]}" if fields else "")
            )
            raise ValueError(msg)
        out = out.with_columns(found.alias(name))
    return out


def _extra_fields(cases: pl.DataFrame) -> set[str]:
    if "extra" not in cases.columns:
        return set()
    import json  # noqa: PLC0415 - the error path only

    keys: set[str] = set()
    for blob in cases["extra"].drop_nulls().head(200):
        try:
            value = json.loads(blob)
        except ValueError:
            continue
        if isinstance(value, dict):
            keys |= set(value)
    return keys


def default_cluster(cases: pl.DataFrame, cluster: str | None) -> tuple[str | None, list[str]]:
    """Return the cluster field in force (the topics by default) and a note when defaulted.

    ``""`` asks for independent cases; a name that is neither a case column nor a field of
    the cases' ``extra`` is an error.
    """
    notes = []
    if cluster is None and "topic" in cases.columns and cases["topic"].drop_nulls().n_unique() > 1:
        cluster = "topic"
        notes.append(
            "cases clustered by their topic (the default when the lab has topics): "
            "pass cluster='' if they are independent"
        )
    if cluster:
        case_columns(cases, [cluster], "cluster")
    return cluster or None, notes


def chosen_metrics(lab: LabCore, metrics: Sequence[str] | None) -> list[tuple[str, str, bool]]:
    """Return (evaluator, metric, higher is better) of the metrics named, or every primary one.

    A name is ``"evaluator.metric"`` or a metric name that only one evaluator of the lab uses.
    """
    known = lab.metrics.select("evaluator", "metric", "primary", "higher_is_better")
    scored = lab.scores.select("evaluator", "metric").unique()
    known = known.join(scored, on=["evaluator", "metric"])
    if metrics is None:
        # The leaderboard's order (evaluator, then metric), not the order they were scored in:
        # the same lab's views list its metrics alike.
        chosen = known.filter(pl.col("primary")).sort("evaluator", "metric")
    else:
        keys = []
        for m in metrics:
            ev, _, name = m.rpartition(".")
            hit = known.filter(
                (pl.col("metric") == name)
                & ((pl.col("evaluator") == ev) if ev else pl.lit(value=True))
            )
            if hit.height != 1:
                found = sorted(
                    f"{e}.{x}" for e, x in known.select("evaluator", "metric").iter_rows()
                )
                msg = (
                    f"metric {m!r} names {hit.height} scored metrics; expected one of {found[:20]}"
                )
                raise ValueError(msg)
            keys.append(hit)
        chosen = pl.concat(keys)
    return [
        (e, m, bool(h))
        for e, m, h in chosen.select("evaluator", "metric", "higher_is_better").iter_rows()
    ]


def paired_cases(
    lab: LabCore, evaluator: str, metric: str, baseline: str, candidate: str
) -> pl.DataFrame:
    """Per case: each arm's mean over its samples, the samples and their variance."""
    s = lab.scores.filter(
        (pl.col("evaluator") == evaluator)
        & (pl.col("metric") == metric)
        & pl.col("value").is_not_null()
        & pl.col("value").is_finite()  # a NaN or inf score is no score: never a mean of NaN
    )
    arms = []
    for name, model in (("a", baseline), ("b", candidate)):
        arms.append(
            s.filter(pl.col("model") == model)
            .group_by("case_id")
            .agg(
                pl.col("value").mean().alias(name),
                pl.len().alias(f"k_{name}"),
                pl.col("value").var(ddof=1).alias(f"var_{name}"),
            )
        )
    return arms[0].join(arms[1], on="case_id").sort("case_id")


def mixed_fingerprints(lab: LabCore, evaluator: str, metric: str, models: Sequence[str]) -> str:
    """Say how the judge fingerprints of ``models``' scores differ ('' when they agree)."""
    scores = lab.metric_scores(evaluator, metric).filter(
        pl.col("model").is_in(list(models)) & pl.col("detail").is_not_null()
    )
    if scores.is_empty():
        return ""
    found = (
        scores.select(
            print=pl.col("detail").str.json_path_match("$.fingerprint.id"),
            parts=pl.col("detail").str.json_path_match("$.fingerprint"),
        )
        .drop_nulls("print")
        .unique("print")
    )
    if found.height < 2:
        return ""
    parts = [json.loads(p) for p in found["parts"]]
    differ = sorted(
        k
        for k in parts[0]
        if k != "id" and len({json.dumps(p.get(k), sort_keys=True) for p in parts}) > 1
    )
    return ", ".join(f"{k}: " + " vs ".join(sorted({str(p.get(k)) for p in parts})) for k in differ)


def decide(
    lab: LabCore,
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
    mixed_judges: str = "refuse",
) -> Decision:
    """Compare ``candidate`` with ``baseline`` on ``lab`` (see the module docstring).

    Parameters
    ----------
    lab
        Scores of both systems on the same cases.
    baseline, candidate
        Model names.
    metrics
        ``"evaluator.metric"`` or a metric name unique in the lab; default: every
        evaluator's primary metric.
    margin
        The difference (in the metric's units) that does not matter: with it, ``equivalent``
        and ``non-inferior`` verdicts.
    alpha
        The family-wise error rate (Holm) or false discovery rate (BY).
    cluster
        A case column whose cases are not independent; default: ``topic`` when the lab's
        cases have topics; ``""`` for independent cases.
    slices
        A case column: each of its values gets its own comparisons (in the correction too).
    correction
        ``"holm"`` or ``"by"`` (Benjamini–Yekutieli).
    guardrails
        Metrics that must not get worse: a ``worse`` one makes the whole call ``worse``.
    mixed_judges
        ``"refuse"`` (the default): a judged metric whose two systems' scores carry
        different judge fingerprints (another judge model, server, decoding, contract,
        prompt or reader) is an error naming what differs — the difference would be the
        judges', not the systems'. ``"allow"`` compares them anyway, with a note.
    """
    if mixed_judges not in ("refuse", "allow"):
        msg = f"mixed_judges={mixed_judges!r}; expected 'refuse' or 'allow'"
        raise ValueError(msg)
    if correction not in ("holm", "by"):
        msg = f"correction={correction!r}; expected 'holm' or 'by'"
        raise ValueError(msg)
    if margin is not None and not (math.isfinite(margin) and margin > 0):
        msg = f"margin={margin}; expected a positive difference in the metric's units"
        raise ValueError(msg)
    if not (isinstance(alpha, int | float) and 0 < alpha < 1):
        msg = f"alpha={alpha!r}; expected an error rate strictly between 0 and 1 (e.g. 0.05)"
        raise ValueError(msg)
    missing = {baseline, candidate} - set(lab.models)
    if missing:
        msg = f"model(s) {sorted(missing)} not in the lab; models: {lab.models}"
        raise ValueError(msg)
    cases = lab.cases
    cluster, notes = default_cluster(cases, cluster)
    if slices is not None:
        case_columns(cases, [slices], "slices")
    chosen = chosen_metrics(lab, metrics)
    guarded = {g.rpartition(".")[2] for g in guardrails}
    extra = [g for g in guardrails if g.rpartition(".")[2] not in {m for _, m, _ in chosen}]
    if extra:
        chosen += chosen_metrics(lab, extra)
    rows: list[dict[str, object]] = []
    tests: list[PairedTest] = []
    columns = list(dict.fromkeys(c for c in (cluster, slices) if c is not None))
    for evaluator, metric, higher in chosen:
        mixed = mixed_fingerprints(lab, evaluator, metric, [baseline, candidate])
        if mixed and mixed_judges == "refuse":
            msg = (
                f"{evaluator}.{metric}: the two systems were judged under different judge "
                f"fingerprints ({mixed}); their difference would be the judges'. Evaluate both "
                "again with one judge, or pass mixed_judges='allow'"
            )
            raise ValueError(msg)
        if mixed:
            notes.append(f"{evaluator}.{metric}: compared across judge fingerprints ({mixed})")
        paired = paired_cases(lab, evaluator, metric, baseline, candidate)
        if columns:
            paired = paired.join(case_columns(cases, columns, "cluster"), on="case_id", how="left")
        parts = [("", paired)]
        if slices is not None:
            parts += [
                (str(v), paired.filter(pl.col(slices) == v))
                for v in paired[slices].unique().sort().drop_nulls()
            ]
        for name, part in parts:
            a, b = part["a"].to_numpy(), part["b"].to_numpy()
            groups = (
                part[cluster].cast(pl.String).fill_null("(none)").to_numpy() if cluster else None
            )
            test = paired_test(a, b, clusters=groups, alpha=alpha, higher_is_better=higher)
            if test.method == ONE_CLUSTER:
                where = f" [{slices} = {name}]" if name else ""
                notes.append(
                    f"{evaluator}.{metric}{where}: all {test.n} cases fall in one cluster of "
                    f"{cluster!r}, and a cluster-robust error needs two at least: no verdict. "
                    "Cluster by a finer column, or pass cluster='' if the cases are independent"
                )
            tests.append(test)
            rows.append(
                {
                    "evaluator": evaluator,
                    "metric": metric,
                    "slice": name,
                    "guardrail": metric in guarded,
                }
            )
    if not tests:
        msg = "no metric scored for both models: run evalnb.evaluate on both first"
        raise ValueError(msg)
    p = np.array([t.p_value for t in tests])
    adjusted = adjust(p, correction)
    from scipy import stats  # noqa: PLC0415

    z = float(stats.norm.ppf(1 - alpha / 2))
    out = []
    for row, test, adj in zip(rows, tests, adjusted, strict=True):
        detectable = (z + _POWER_Z) * test.se if math.isfinite(test.se) else None
        out.append(
            {
                **row,
                "n": test.n,
                "clusters": test.clusters,
                "difference": test.difference,
                "ci_low": test.ci_low,
                "ci_high": test.ci_high,
                "p_value": test.p_value,
                "p_adjusted": float(adj),
                "p_wilcoxon": test.p_wilcoxon,
                "method": test.method,
                "design_effect": test.design_effect,
                "verdict": _verdict(test, float(adj), alpha, margin),
                "detectable": detectable,
            }
        )
    # The verdict first after the names: a notebook's table shows its left columns, and the
    # verdict and what the run could see are what a reader looks for.
    frame = pl.DataFrame(out).select(*_FRAME_ORDER)
    verdicts = frame.filter(pl.col("slice") == "")["verdict"].to_list()
    if "worse" in verdicts:  # a metric, or a guardrail, got worse
        overall = "worse"
    elif margin is not None:
        kept = all(v in ("better", "equivalent", "non-inferior") for v in verdicts)
        overall = ("better" if "better" in verdicts else "non-inferior") if kept else "inconclusive"
    else:
        overall = "better" if "better" in verdicts else "inconclusive"
    return Decision(
        baseline, candidate, frame, overall, alpha, margin, cluster, correction, tuple(notes)
    )
