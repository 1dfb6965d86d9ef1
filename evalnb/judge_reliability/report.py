"""The judges' report of a lab: what each judge cost and failed, and how it agrees with people.

Costs and parse failures are counted in :mod:`evalnb.analysis.judge_costs`, agreement with
the reviewers' labels in :mod:`evalnb.calibration.judge_agreement`; those two layers are
siblings and never import each other, so the report that joins them lives here, above both.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalnb.analysis.judge_costs import judge_report as judge_costs
from evalnb.calibration.judge_agreement import with_human_agreement

if TYPE_CHECKING:
    import polars as pl

    from evalnb.lab.core import LabCore

__all__ = ["judge_report"]


def judge_report(lab: LabCore) -> pl.DataFrame:
    """Per judge evaluator and model: parse failures, failed calls, tokens, cost.

    Where reviewers labelled the evaluator's primary metric, the judge–human agreement over
    those labels joins it: ``n_labels``, ``kappa`` and the confusion matrix (``both_pass``,
    ``judge_pass_human_fail``, ``judge_fail_human_pass``, ``both_fail``).
    """
    return with_human_agreement(lab, judge_costs(lab))
