"""Charts (Altair): leaderboards (bar with CIs, radar, heatmap), the adversarial effect.

Charts carry their data inline (``alt.Data(values=...)``), so JupyterLab renders them with
no network, and :func:`to_svg` turns one into inline SVG for the HTML report (vl-convert,
offline).
"""

from __future__ import annotations

import math
from typing import cast

import altair as alt
import polars as pl

from evalnb.lab.offline_charts import offline

__all__ = [
    "adversarial_chart",
    "bar_chart",
    "chart_data",
    "heatmap",
    "leaderboard_chart",
    "radar_chart",
    "to_svg",
]


def chart_data(frame: pl.DataFrame) -> alt.Data:
    """Return ``frame`` as inline chart data (non-finite floats as missing)."""
    # inf/NaN are not JSON; a missing mean is simply not drawn
    floats = pl.col(pl.Float64)
    clean = frame.with_columns(pl.when(floats.is_finite()).then(floats).name.keep())
    return alt.Data(values=clean.to_dicts())  # type: ignore[no-untyped-call]


def bar_chart(board: pl.DataFrame, evaluator: str) -> alt.FacetChart:
    """Mean per model with its 95 % interval, one panel per metric, threshold as a rule."""
    part = board.filter(pl.col("evaluator") == evaluator)
    base = alt.Chart(chart_data(part))
    bars = base.mark_bar().encode(
        x=alt.X("model:N", title=None),
        y=alt.Y("mean:Q", title="mean"),
        color=alt.Color("model:N", legend=None),
        tooltip=[
            "model:N",
            "metric:N",
            alt.Tooltip("mean:Q", format=".4f"),
            alt.Tooltip("ci_low:Q", format=".4f"),
            alt.Tooltip("ci_high:Q", format=".4f"),
            alt.Tooltip("pass_rate:Q", format=".1%"),
            "n_cases:Q",
        ],
    )
    err = base.mark_rule(color="black").encode(x="model:N", y="ci_low:Q", y2="ci_high:Q")
    rule = base.mark_rule(color="red", strokeDash=[4, 3]).encode(y="mean(threshold):Q")
    layered = (bars + err + rule).properties(width=160, height=160)
    return offline(cast("alt.FacetChart", layered.facet(column=alt.Column("metric:N", title=None))))


def radar_chart(board: pl.DataFrame, evaluator: str) -> alt.LayerChart:
    """Several metrics of one evaluator: one closed polygon per model (means scaled 0–1)."""
    part = board.filter(pl.col("evaluator") == evaluator).with_columns(
        pl.col("mean").fill_null(0.0).clip(0.0, 1.0).alias("r")
    )
    metrics = part["metric"].unique(maintain_order=True).to_list()
    angle = {m: 2 * math.pi * i / len(metrics) for i, m in enumerate(metrics)}
    pts = part.with_columns(
        order=pl.col("metric").replace_strict(
            {m: i for i, m in enumerate(metrics)}, return_dtype=pl.Int64
        ),
        x=pl.col("r")
        * pl.col("metric").replace_strict(
            {m: math.sin(a) for m, a in angle.items()}, return_dtype=pl.Float64
        ),
        y=pl.col("r")
        * pl.col("metric").replace_strict(
            {m: math.cos(a) for m, a in angle.items()}, return_dtype=pl.Float64
        ),
    )
    closed = pl.concat(
        [pts, pts.filter(pl.col("order") == 0).with_columns(order=pl.lit(len(metrics), pl.Int64))]
    )
    axes = pl.DataFrame(
        {
            "metric": metrics,
            "x": [math.sin(angle[m]) * 1.1 for m in metrics],
            "y": [math.cos(angle[m]) * 1.1 for m in metrics],
        }
    )
    scale = alt.Scale(domain=[-1.25, 1.25])
    lines = (
        alt.Chart(chart_data(closed))
        .mark_line(point=True)
        .encode(
            x=alt.X("x:Q", scale=scale, axis=None),
            y=alt.Y("y:Q", scale=scale, axis=None),
            order="order:Q",
            color="model:N",
            tooltip=["model:N", "metric:N", alt.Tooltip("mean:Q", format=".4f")],
        )
    )
    labels = alt.Chart(chart_data(axes)).mark_text().encode(x="x:Q", y="y:Q", text="metric:N")
    return offline(cast("alt.LayerChart", (lines + labels).properties(width=260, height=260)))


def heatmap(board: pl.DataFrame) -> alt.LayerChart:
    """Model × (evaluator/metric) cells coloured by mean, labelled with the value."""
    part = board.with_columns(key=pl.col("evaluator") + "/" + pl.col("metric"))
    # Vega cuts an axis label at 180 px by default: "answer_relevancy_similarity/…" lost
    # its metric. Whole labels, the column ones slanted.
    base = alt.Chart(chart_data(part)).encode(
        x=alt.X("key:N", title=None, axis=alt.Axis(labelLimit=0, labelAngle=-40)),
        y=alt.Y("model:N", title=None, axis=alt.Axis(labelLimit=0)),
    )
    cells = base.mark_rect().encode(
        color=alt.Color("mean:Q", scale=alt.Scale(scheme="redyellowgreen")),
        tooltip=[
            "model:N",
            "key:N",
            alt.Tooltip("mean:Q", format=".4f"),
            alt.Tooltip("pass_rate:Q", format=".1%"),
        ],
    )
    text = base.mark_text(fontSize=9).encode(text=alt.Text("mean:Q", format=".2f"))
    size = {
        "width": 34 * max(1, part["key"].n_unique()),
        "height": 22 * max(1, part["model"].n_unique()),
    }
    return offline(cast("alt.LayerChart", (cells + text).properties(**size)))


def leaderboard_chart(board: pl.DataFrame, evaluator: str) -> alt.TopLevelMixin:
    """Pick the chart H2O would show: bar for ≤ 3 metrics, radar for more."""
    n = board.filter(pl.col("evaluator") == evaluator)["metric"].n_unique()
    return bar_chart(board, evaluator) if n <= 3 else radar_chart(board, evaluator)


def to_svg(chart: alt.TopLevelMixin) -> str:
    """Render a chart to standalone SVG text, offline."""
    import vl_convert  # noqa: PLC0415

    return str(vl_convert.vegalite_to_svg(chart.to_json()))


def adversarial_chart(effect: pl.DataFrame, evaluator: str, metric: str) -> alt.LayerChart:
    """Mean difference per kind and model with its 95 % interval; zero marks no effect."""
    part = effect.filter((pl.col("evaluator") == evaluator) & (pl.col("metric") == metric))
    if part.is_empty():
        msg = (
            f"no adversarial pairs scored for {evaluator}/{metric}; make adversarial cases "
            "(evalnb.adversarial), answer and evaluate them, then compare"
        )
        raise ValueError(msg)
    base = alt.Chart(chart_data(part))
    y = alt.Y("kind:N", title=None)
    points = base.mark_point(filled=True, size=70).encode(
        x=alt.X("difference:Q", title=f"{metric}: adversarial − base"),
        y=y,
        color=alt.Color("model:N"),
        yOffset="model:N",
        tooltip=[
            "kind:N",
            "model:N",
            "n_pairs:Q",
            alt.Tooltip("difference:Q", format=".4f"),
            alt.Tooltip("ci_low:Q", format=".4f"),
            alt.Tooltip("ci_high:Q", format=".4f"),
            alt.Tooltip("base_pass_rate:Q", format=".1%"),
            alt.Tooltip("adversarial_pass_rate:Q", format=".1%"),
            "flips:Q",
        ],
    )
    bars = base.mark_rule().encode(
        x="ci_low:Q", x2="ci_high:Q", y=y, color="model:N", yOffset="model:N"
    )
    zero = alt.Chart(alt.Data(values=[{"x": 0}])).mark_rule(color="gray", strokeDash=[4, 3])  # type: ignore[no-untyped-call]
    layered = zero.encode(x="x:Q") + bars + points
    return offline(
        cast("alt.LayerChart", layered.properties(width=360, title=f"{evaluator} / {metric}"))
    )


def flip_chart(flips: pl.DataFrame) -> alt.Chart:
    """Flips per perturbation kind, each way (pass → fail, fail → pass), out of the pairs."""
    per_kind = flips.group_by("perturbation").agg(pl.col("n_pairs", "to_fail", "to_pass").sum())
    long = per_kind.unpivot(
        index=["perturbation", "n_pairs"],
        on=["to_fail", "to_pass"],
        variable_name="way",
        value_name="flips",
    )
    chart: alt.Chart = (
        alt.Chart(chart_data(long))
        .mark_bar()
        .encode(
            x=alt.X("flips:Q", title="verdict flips"),
            y=alt.Y("perturbation:N", title=None),
            color=alt.Color(
                "way:N",
                scale=alt.Scale(domain=["to_fail", "to_pass"], range=["#e53935", "#43a047"]),
            ),
            tooltip=["perturbation:N", "way:N", "flips:Q", "n_pairs:Q"],
        )
        .properties(width=360, title="Input variations: verdict flips per perturbation")
    )
    return offline(chart)


def reliability_chart(table: pl.DataFrame, threshold: float | None, title: str) -> alt.LayerChart:
    """Human pass rate per score band with its interval, and the threshold in force."""
    base = alt.Chart(chart_data(table))
    bars = base.mark_rule().encode(
        x=alt.X("score:Q", title="metric score (band mean)"),
        y=alt.Y("ci_low:Q", title="humans passed", scale=alt.Scale(domain=[0, 1])),
        y2="ci_high:Q",
    )
    line = base.mark_line(point=True).encode(
        x="score:Q",
        y="human_pass_rate:Q",
        tooltip=[
            alt.Tooltip("low:Q", format=".3f"),
            alt.Tooltip("high:Q", format=".3f"),
            "n:Q",
            alt.Tooltip("human_pass_rate:Q", format=".0%"),
            alt.Tooltip("ci_low:Q", format=".0%"),
            alt.Tooltip("ci_high:Q", format=".0%"),
        ],
    )
    layers = bars + line
    if threshold is not None and math.isfinite(threshold):
        at = alt.Data(values=[{"t": threshold}])  # type: ignore[no-untyped-call]
        layers = layers + alt.Chart(at).mark_rule(color="red", strokeDash=[4, 3]).encode(x="t:Q")
    return offline(cast("alt.LayerChart", layers.properties(width=360, title=title)))


def monitoring_chart(windows: pl.DataFrame, title: str) -> alt.LayerChart:
    """One metric's windows: the metric's pass rate, the corrected one, the sequence's band.

    ``windows`` has ``window_start``, ``pass_rate``, ``corrected``, ``cs_low``, ``cs_high``
    and ``accepted`` (the frame ``Monitor.windows`` returns, one metric).
    """
    data = windows.select(
        pl.col("window_start").dt.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "pass_rate",
        "corrected",
        "cs_low",
        "cs_high",
        "accepted",
    )
    base = alt.Chart(chart_data(data)).encode(x=alt.X("window_start:T", title="window"))
    band = base.mark_area(opacity=0.35, color="#90caf9").encode(
        y=alt.Y("cs_low:Q", title="pass rate", scale=alt.Scale(zero=False)), y2="cs_high:Q"
    )
    raw = base.mark_line(point=True, color="#9e9e9e").encode(y="pass_rate:Q")
    corrected = base.mark_line(point=True, color="#0d47a1").encode(y="corrected:Q")
    layers = band + raw + corrected
    accepted = windows.get_column("accepted").drop_nulls()
    if accepted.len():
        at = alt.Data(values=[{"a": float(accepted[0])}])  # type: ignore[no-untyped-call]
        layers = layers + alt.Chart(at).mark_rule(color="red", strokeDash=[4, 3]).encode(y="a:Q")
    return offline(cast("alt.LayerChart", layers.properties(width=480, title=title)))


_VERDICT_COLOURS = {
    "better": "#43a047",
    "worse": "#e53935",
    "equivalent": "#1e88e5",
    "non-inferior": "#00897b",
    "inconclusive": "#9e9e9e",
}


def decision_chart(frame: pl.DataFrame, margin: float | None, title: str) -> alt.LayerChart:
    """Per metric (and slice): candidate − baseline with its interval, coloured by verdict.

    Zero is dashed; with a margin, ±margin bounds a shaded band (the differences that do
    not matter). ``frame`` is :class:`~evalnb.analysis.decide.Decision`'s.
    """
    rows = frame.with_columns(
        label=pl.concat_str(
            "evaluator",
            pl.lit("."),
            "metric",
            pl.when(pl.col("slice") != "")
            .then(pl.concat_str(pl.lit(" ["), "slice", pl.lit("]")))
            .otherwise(pl.lit("")),
        )
    )
    base = alt.Chart(chart_data(rows))
    y = alt.Y("label:N", title=None, sort=None)
    colour = alt.Color(
        "verdict:N",
        scale=alt.Scale(domain=list(_VERDICT_COLOURS), range=list(_VERDICT_COLOURS.values())),
    )
    bars = base.mark_rule(strokeWidth=2).encode(x="ci_low:Q", x2="ci_high:Q", y=y, color=colour)
    points = base.mark_point(filled=True, size=70).encode(
        x=alt.X("difference:Q", title="candidate − baseline (positive: better)"),
        y=y,
        color=colour,
        tooltip=[
            "label:N",
            "verdict:N",
            alt.Tooltip("difference:Q", format="+.4f"),
            alt.Tooltip("ci_low:Q", format="+.4f"),
            alt.Tooltip("ci_high:Q", format="+.4f"),
            alt.Tooltip("p_adjusted:Q", format=".3g"),
            "n:Q",
            "clusters:Q",
        ],
    )
    zero = alt.Chart(alt.Data(values=[{"x": 0}])).mark_rule(color="gray", strokeDash=[4, 3])  # type: ignore[no-untyped-call]
    layered = zero.encode(x="x:Q") + bars + points
    if margin is not None:
        band = alt.Chart(alt.Data(values=[{"lo": -margin, "hi": margin}])).mark_rect(  # type: ignore[no-untyped-call]
            color="#1e88e5", opacity=0.08
        )
        layered = band.encode(x="lo:Q", x2="hi:Q") + layered
    return offline(cast("alt.LayerChart", layered.properties(width=420, title=title)))
