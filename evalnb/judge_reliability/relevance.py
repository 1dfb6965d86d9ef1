"""The relevance judge's line of the judge card: how far its 0–3 grades agree with reviewers'.

Grades are ordered, so a judge that says 2 where a reviewer said 3 is nearer than one that
says 0: Cohen's weighted κ (linear and quadratic weights, as scikit-learn's
``cohen_kappa_score(weights=...)``; the one κ, :func:`evalnb.calibration.labels.cohen_kappa`)
is the measure TREC's relevance-judging studies report (UMBRELA reports Cohen's κ on the
grades and on relevant / not relevant). Beside it: exact agreement with Wilson's interval,
agreement on what the measures count as relevant (grade ≥ 1), and the mean grade difference
(a judge above 0 is lenient). Every interval is 95 %; κ's is a percentile bootstrap over
the documents graded by both.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from evalnb.judge_reliability.measures import kappa_interval, mean_difference, wilson
from evalnb.lab.rankings import JUDGE_SOURCE

if TYPE_CHECKING:
    from evalnb.lab.core import LabCore

__all__ = ["relevance_agreement"]


def relevance_agreement(lab: LabCore) -> pl.DataFrame:
    """Return each relevance judge's agreement with the reviewers' grades of the same documents.

    One row per judge (a ``judge:<model>`` source of ``lab.qrels``): ``n`` (documents both
    graded), ``exact`` (share of equal grades) with ``exact_low``/``exact_high``,
    ``relevant_kappa`` (κ on grade ≥ 1, what the measures count relevant), ``linear_kappa``
    and ``quadratic_kappa`` with their intervals, and ``mean_difference`` (judge − reviewer,
    in grades) with its interval. A κ is NaN where it says nothing (fewer than two
    documents, or one grade on both sides). An empty frame when no judge graded a document a
    reviewer also graded.
    """
    qrels = lab.table("qrels")
    by_judge = pl.col("source").str.starts_with(JUDGE_SOURCE).fill_null(value=False)
    people = qrels.filter(~by_judge).unique(["case_id", "doc_id"], keep="last", maintain_order=True)
    judged = qrels.filter(by_judge).unique(
        ["source", "case_id", "doc_id"], keep="last", maintain_order=True
    )
    both = judged.join(people, on=["case_id", "doc_id"], suffix="_person")
    rows = []
    for (source,), group in both.group_by("source", maintain_order=True):
        j = group["relevance"].to_numpy()
        h = group["relevance_person"].to_numpy()
        exact = wilson(int((j == h).sum()), j.size)
        relevant = kappa_interval(j >= 1, h >= 1)
        linear = kappa_interval(j, h, weights="linear")
        quadratic = kappa_interval(j, h, weights="quadratic")
        gap = mean_difference(j.astype(float), h.astype(float))
        rows.append(
            {
                "judge": str(source).removeprefix(JUDGE_SOURCE),
                "n": int(j.size),
                "exact": exact.estimate,
                "exact_low": exact.low,
                "exact_high": exact.high,
                "relevant_kappa": relevant.estimate,
                "linear_kappa": linear.estimate,
                "linear_low": linear.low,
                "linear_high": linear.high,
                "quadratic_kappa": quadratic.estimate,
                "quadratic_low": quadratic.low,
                "quadratic_high": quadratic.high,
                "mean_difference": gap.estimate,
                "difference_low": gap.low,
                "difference_high": gap.high,
            }
        )
    floats = (
        "exact",
        "exact_low",
        "exact_high",
        "relevant_kappa",
        "linear_kappa",
        "linear_low",
        "linear_high",
        "quadratic_kappa",
        "quadratic_low",
        "quadratic_high",
        "mean_difference",
        "difference_low",
        "difference_high",
    )
    schema = {"judge": pl.String, "n": pl.Int64} | dict.fromkeys(floats, pl.Float64)
    return pl.DataFrame(rows, schema=schema)
