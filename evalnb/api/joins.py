"""Functions of a lab that join layers which never import each other, or import up.

``analysis`` draws charts and ``calibration`` measures labels; they are siblings (neither
imports the other), so a chart of a calibration measure is put together here, above both,
and bound into a namespace like every other function of the lab (:mod:`evalnb.api.binding`).
The retrieval attribution (``transforms``, above ``analysis``) joins the insights and the
report here too: the analysis layer derives what the scores say, the attribution adds
which failures were the retriever's.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import polars as pl

from evalnb.analysis.derived import Analysed, analyse, insights_of
from evalnb.calibration.reliability import reliability
from evalnb.transforms.attribution import attribution_insights

if TYPE_CHECKING:
    import altair as alt

    from evalnb.lab.core import LabCore

__all__ = ["analysed_of", "lab_insights", "reliability_chart"]


def lab_insights(lab: LabCore, *, seed: int = 0) -> pl.DataFrame:
    """Return the lab's insights: what its scores say, then where retrieval failed its answers."""
    told = attribution_insights(lab)
    found = insights_of(lab, seed=seed)
    return pl.concat([found, told]) if told.height else found


def analysed_of(lab: LabCore, seed: int = 0) -> Analysed:
    """Return :func:`~evalnb.analysis.derived.analyse` with the retrieval insights added."""
    done = analyse(lab, seed)
    told = attribution_insights(lab)
    return replace(done, insights=pl.concat([done.insights, told])) if told.height else done


def reliability_chart(
    lab: LabCore, evaluator: str, metric: str, *, bins: int = 8
) -> alt.LayerChart:
    """Chart the reliability of one metric: humans' pass rate per score band, and the threshold.

    The bands are ``lab.calibration.reliability``'s (each with its 95 % interval); the dashed
    line is the threshold in force.
    """
    from evalnb.analysis.charts import reliability_chart as drawn  # noqa: PLC0415 - Altair when drawn

    spec = lab.metric_spec(evaluator, metric)
    return drawn(
        reliability(lab, evaluator, metric, bins=bins),
        spec["threshold"],
        f"{evaluator}/{metric}: humans passed, by score",
    )
