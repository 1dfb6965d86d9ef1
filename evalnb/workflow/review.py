"""What a reviewer looks at for each step, and the charts the workflow report carries."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import polars as pl

from evalnb.analysis.flips import flip_table
from evalnb.api.validation import Validation

if TYPE_CHECKING:
    from evalnb.api.lab import Lab
    from evalnb.workflow.system import System

__all__ = ["Reviewed", "review_surface", "step_charts"]


class Reviewed(Protocol):
    """What review reads of a workflow (:class:`evalnb.workflow.core.Workflow` has it).

    A protocol, so that this module needs nothing from the workflow that uses it.
    """

    @property
    def lab(self) -> Lab:
        """The workflow's lab."""
        ...

    @property
    def system(self) -> System | None:
        """The system under test, when there is one."""
        ...

    def params(self, step: str) -> dict[str, Any]:
        """Return the step's parameters."""
        ...

    def summary(self, step: str) -> dict[str, Any]:
        """Return the step's last summary."""
        ...


def _metric(wf: Reviewed, step: str) -> tuple[str, str]:
    p = wf.params(step)
    return str(p["evaluator"]), str(p["metric"])


def _system(wf: Reviewed) -> str:
    if wf.system is None:
        msg = "the workflow has no system under test: open it with system=..."
        raise ValueError(msg)
    return wf.system.name


def _need(reviewer: str | None, step: str) -> str:
    if not reviewer:
        msg = f"reviewing {step} records decisions: pass reviewer='<your name>'"
        raise ValueError(msg)
    return reviewer


def review_surface(wf: Reviewed, step: str, reviewer: str | None) -> Any:  # noqa: ANN401 - one surface per step
    """Return the widget, chart or table a reviewer uses for ``step``."""
    lab = wf.lab
    if step == "topic_modeling":
        return pl.DataFrame(wf.summary(step).get("topics", []))
    if step == "test_generation":
        from evalnb.widgets.curator import Curator  # noqa: PLC0415 - widgets load late

        return Curator(lab, reviewer=reviewer) if reviewer else lab.curation.view()
    if step == "test_validation":
        v = Validation(lab, float(wf.params(step)["outlier_z"]))
        if not reviewer:
            return v
        first = v.outliers()["case_id"].unique(maintain_order=True).to_list()
        rest = [c for c in lab.cases["case_id"].to_list() if c not in set(first)]
        from evalnb.widgets.curator import Curator  # noqa: PLC0415 - widgets load late

        return Curator(lab, reviewer=reviewer, cases=first + rest)
    if step == "evaluation":
        return lab.eye()
    evaluator, metric = _metric(wf, step)
    if step == "calibration":
        from evalnb.widgets.labeler import Labeler  # noqa: PLC0415 - widgets load late

        return Labeler(lab, evaluator, metric, reviewer=_need(reviewer, step), n=20)
    if step == "failure_clustering":
        p = wf.params(step)
        return lab.failure_clusters(
            evaluator, metric, min_failures=p["min_failures"], seed=p["seed"]
        ).chart()
    if step == "weakness_detection":
        return lab.weakness(evaluator, metric, models=[_system(wf)], min_n=wf.params(step)["min_n"])
    if step == "input_variations":
        from evalnb.analysis.charts import flip_chart  # noqa: PLC0415 - Altair when drawn

        mine = lab.verdicts().filter(pl.col("model") == _system(wf))
        return flip_chart(flip_table(mine, lab.cases, evaluator, metric))
    return lab.robustness.chart(evaluator, metric)


def step_charts(wf: Reviewed) -> dict[str, str]:
    """Inline SVG charts for the report: flips and the adversarial effect, when they ran."""
    from evalnb.analysis.charts import adversarial_chart, flip_chart, to_svg  # noqa: PLC0415

    out: dict[str, str] = {}
    variations = wf.summary("input_variations")
    if variations.get("flips") or variations.get("per_kind"):
        flips = pl.DataFrame(variations["per_kind"]).with_columns(
            topic=pl.lit(""), question_type=pl.lit("")
        )
        out["input_variations"] = to_svg(flip_chart(flips))
    effect = wf.summary("adversarial_inputs").get("effect")
    if effect:
        evaluator, metric = _metric(wf, "adversarial_inputs")
        frame = pl.DataFrame(effect).with_columns(
            evaluator=pl.lit(evaluator), metric=pl.lit(metric)
        )
        out["adversarial_inputs"] = to_svg(adversarial_chart(frame, evaluator, metric))
    return out
