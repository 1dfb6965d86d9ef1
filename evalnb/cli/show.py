"""What the ``evalnb`` command prints: plain tables, messages, a lab's description (``info``)."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

import polars as pl

if TYPE_CHECKING:
    from evalnb.api.lab import Lab

__all__ = ["describe", "say", "show", "table_text"]


def describe(lab: Lab) -> str:
    """Summarise a lab as text: counts per table, models, evaluators run, answers per model."""
    lines = [repr(lab), "", "tables:"]
    counts = list(lab.summary().iter_rows())
    width = max(len(str(t)) for t, _ in counts) + 2  # the longest name sets the column
    # The models table holds what is known about a model (host, settings); a lab read from
    # answers alone has none, which "0 rows" beside three models answering would misstate.
    noted = {"models": f"  (details of the models; {len(lab.models)} answered)"}
    lines += [f"  {t:<{width}}{n:>9,} rows{noted.get(t, '') if not n else ''}" for t, n in counts]
    lines.append(f"models: {', '.join(lab.models) or '(none)'}")
    # Through scans: a lab kept on disk is described without loading its big tables.
    scores = lab.scan("scores")
    found = scores.select(pl.col("evaluator").unique().sort()).collect()
    lines.append(f"evaluators run: {', '.join(found['evaluator'].drop_nulls()) or '(none yet)'}")
    if lab.height("outputs"):
        stats = (
            lab.scan("outputs")
            .group_by("model", maintain_order=True)
            .agg(
                answers=pl.len(),
                empty=(pl.col("actual").str.strip_chars() == "").sum(),
                errors=pl.col("error").is_not_null().sum(),
                mean_s=pl.col("duration_s").mean().round(2),
                total_cost=pl.col("cost").sum().round(4),
            )
            .sort("model")
            .collect()
        )
        lines += ["", "answers per model:", table_text(stats)]
    if lab.height("scores"):
        lines += ["", "primary metric per model (mean over scored rows):", table_text(_board(lab))]
    cells = lab.cases.filter(pl.col("topic").is_not_null() | pl.col("question_type").is_not_null())
    if cells.height:
        grid = cells.group_by("topic", "question_type").len().sort("topic", "question_type")
        lines += ["", f"topics × question types: {grid.height} cells"]
    perturbed = lab.cases["perturbation_of"].is_not_null().sum()
    if perturbed:
        lines.append(f"perturbed cases: {perturbed}")
    fmt = lab.info.get("format")
    if fmt:
        lines.append(f"source format: {json.dumps(fmt)}")
    return "\n".join(lines)


def _board(lab: Lab) -> pl.DataFrame:
    primary = lab.metrics.filter(pl.col("primary")).select("evaluator", "metric")
    return (
        lab.scan("scores")
        .join(primary.lazy(), on=["evaluator", "metric"])
        .group_by("evaluator", "metric", "model")
        .agg(mean=pl.col("value").mean().round(4), scored=pl.col("value").count())
        .sort("evaluator", "mean", descending=[False, True])
        .collect()
    )


def table_text(frame: pl.DataFrame) -> str:
    """Return a frame as the plain table the command line prints (no shape, no dtypes)."""
    with pl.Config(tbl_hide_dataframe_shape=True, tbl_hide_column_data_types=True, tbl_rows=100):
        return str(frame)


def say(text: str) -> None:
    """Write one message to standard output."""
    sys.stdout.write(text + "\n")


def show(value: pl.DataFrame | str) -> None:
    """Print a frame as a table, or a message as it is."""
    say(table_text(value) if isinstance(value, pl.DataFrame) else value)
