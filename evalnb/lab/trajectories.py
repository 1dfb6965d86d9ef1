"""An agent's runs as rows: each output row with its steps and its case's reference calls.

The agent evaluators (``trajectory = True``) read these two list columns; the engine adds
them a batch of rows at a time, so a lab whose steps are kept on disk reads only the steps
of the rows at hand.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

if TYPE_CHECKING:
    from evalnb.lab.core import LabCore

__all__ = ["with_trajectories"]

_KEY = ["case_id", "model", "sample"]


def with_trajectories(
    lab: LabCore, rows: pl.DataFrame, steps: pl.DataFrame | None = None
) -> pl.DataFrame:
    """Add each row's ``steps`` and its case's ``reference`` calls as list-of-struct columns.

    Parameters
    ----------
    lab
        The lab the rows come from.
    rows
        Output rows (``case_id``, ``model``, ``sample`` and any other columns).
    steps
        The lab's whole ``steps`` table when it is in memory; None reads only the steps of
        ``rows``' runs (a semi-join inside the Parquet scan when kept on disk).

    Returns
    -------
    pl.DataFrame
        ``rows`` with ``steps`` (the run's steps in order; null for a run with none) and
        ``reference`` (the case's reference tool calls; null when it has none).
    """
    if steps is None:
        keys = rows.select(_KEY).unique().lazy()
        steps = lab.scan("steps").join(keys, on=_KEY, how="semi").collect()
    per_output = (
        steps.sort([*_KEY, "step"])
        .group_by(_KEY, maintain_order=True)
        .agg(steps=pl.struct(pl.exclude(_KEY)))
    )
    per_case = (
        lab.table("reference_calls")
        .sort("case_id", "position")
        .group_by("case_id", maintain_order=True)
        .agg(reference=pl.struct("tool_name", "tool_args").filter(pl.col("position") >= 0))
    )
    out = rows.drop(["steps", "reference"], strict=False)
    out = out.join(per_output, on=_KEY, how="left", maintain_order="left")
    return out.join(per_case, on="case_id", how="left", maintain_order="left")
