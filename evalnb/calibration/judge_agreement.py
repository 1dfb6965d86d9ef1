"""How far an LLM judge's verdicts agree with the humans who labelled the same rows."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from evalnb.calibration.labels import cohen_kappa
from evalnb.calibration.recalibrate import labelled_points

if TYPE_CHECKING:
    from evalnb.lab.core import LabCore

__all__ = ["judge_agreement", "with_human_agreement"]


def judge_agreement(lab: LabCore, evaluator: str, metric: str) -> dict[str, float | int]:
    """Cohen's κ between the judge metric's verdicts and the human labels, and their confusion matrix."""
    points = labelled_points(lab, evaluator, metric)
    spec = lab.metric_spec(evaluator, metric)
    v = points["value"].to_numpy()
    judge_pass = v >= spec["threshold"] if spec["higher_is_better"] else v <= spec["threshold"]
    human = points["human_pass"].to_numpy().astype(bool)
    return {
        "n_labels": int(v.size),
        "agreement": float(np.mean(judge_pass == human)) if v.size else float("nan"),
        "kappa": cohen_kappa(judge_pass, human),
        # the judge–human confusion matrix: who said pass, who said fail
        "both_pass": int((judge_pass & human).sum()),
        "judge_pass_human_fail": int((judge_pass & ~human).sum()),
        "judge_fail_human_pass": int((~judge_pass & human).sum()),
        "both_fail": int((~judge_pass & ~human).sum()),
    }


def with_human_agreement(lab: LabCore, report: pl.DataFrame) -> pl.DataFrame:
    """Join the judge–human agreement of each judge's primary metric to a judge report.

    Only evaluators whose primary metric reviewers labelled gain the columns ``n_labels``,
    ``kappa`` and the confusion matrix cells.
    """
    primary = lab.metrics.filter(
        pl.col("primary") & pl.col("evaluator").is_in(report["evaluator"].implode())
    )
    rows = []
    for evaluator, metric in primary.select("evaluator", "metric").iter_rows():
        found = judge_agreement(lab, evaluator, metric)
        if found["n_labels"]:
            rows.append({"evaluator": evaluator, **found})
    if not rows:
        return report
    return report.join(pl.DataFrame(rows).drop("agreement"), on="evaluator", how="left")
