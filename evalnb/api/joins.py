"""Functions of a lab that join two layers which never import each other.

``analysis`` draws charts and ``calibration`` measures labels; they are siblings (neither
imports the other), so a chart of a calibration measure is put together here, above both,
and bound into a namespace like every other function of the lab (:mod:`evalnb.api.binding`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalnb.calibration.reliability import reliability

if TYPE_CHECKING:
    import altair as alt

    from evalnb.lab.core import LabCore

__all__ = ["reliability_chart"]


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
