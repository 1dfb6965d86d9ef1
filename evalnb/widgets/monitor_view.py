"""The monitor view: pass rates over time with their bands, drift beside them, alerts marked.

The kernel computes the windows (:meth:`Monitor.windows`, :meth:`Monitor.drift`,
:meth:`Monitor.alerts`) and sends them as Arrow IPC; the browser draws one panel per
calibrated metric (the raw pass rate, the corrected one with the confidence sequence's band,
the accepted level) and one of question drift, and reports the window clicked: its traces
then open in the eye below the chart. Nothing is fetched from the network.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

import ipywidgets
import polars as pl
import traitlets

from evalnb.widgets.arrow import to_ipc
from evalnb.widgets.base import EvalWidget
from evalnb.widgets.eye import eye

if TYPE_CHECKING:
    from evalnb.monitoring.monitor import Monitor

__all__ = ["MonitorChart", "MonitorView", "monitor_view"]


class MonitorChart(EvalWidget):
    """The chart of a monitor's windows; ``selected_window`` is the clicked window (ISO time)."""

    _bundle = "monitor"
    selected_window = traitlets.Unicode("").tag(sync=True)
    """The start of the clicked window (ISO 8601), or empty."""
    _windows = traitlets.Bytes(b"").tag(sync=True)
    _drift = traitlets.Bytes(b"").tag(sync=True)
    _alerts = traitlets.Bytes(b"").tag(sync=True)
    _meta = traitlets.Dict().tag(sync=True)

    def show(
        self,
        windows: pl.DataFrame,
        drift: pl.DataFrame | None,
        alerts: pl.DataFrame,
        meta: dict[str, Any],
    ) -> None:
        """Draw these windows, drift and alerts (one message to the browser)."""
        with self.hold_sync():
            self._windows = to_ipc(_iso(windows, "window_start", "drop_since"))
            self._drift = to_ipc(_iso(drift, "window_start")) if drift is not None else b""
            self._alerts = to_ipc(
                _iso(
                    alerts.select("window_start", "evaluator", "metric", "kind", "detail"),
                    "window_start",
                )
            )
            self._meta = meta


def _iso(frame: pl.DataFrame, *columns: str) -> pl.DataFrame:
    """Write times as ISO text: the browser draws them without time-zone arithmetic."""
    return frame.with_columns(
        pl.col(c).dt.strftime("%Y-%m-%dT%H:%M:%SZ") for c in columns if c in frame.columns
    )


class MonitorView(ipywidgets.VBox):  # type: ignore[misc]
    """The chart, and below it the eye of the window clicked (see :func:`monitor_view`)."""

    def __init__(self, monitor: Monitor, every: str, *, drift: bool) -> None:
        self.monitor, self.every = monitor, every
        # One computation of the windows and drift serves the chart and the alerts.
        view = monitor.report_view(every, drift=drift)
        windows, drift_frame, alerts = view["windows"], view["drift"], view["alerts"]
        self.chart = MonitorChart()
        meta = {"every": every, "bundle": monitor.spec.hash[:12], "level": monitor.settings.level}
        self.chart.show(windows, drift_frame, alerts, meta)
        self.detail = ipywidgets.VBox()
        self.chart.observe(self._open, names=["selected_window"])
        super().__init__([self.chart, self.detail])

    def _open(self, change: dict[str, Any]) -> None:
        value = change["new"]
        if not value:
            self.detail.children = []
            return
        start = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        lab = self.monitor.window_lab(start, self.every)
        title = ipywidgets.HTML(
            f"<b>Window {start:%Y-%m-%d %H:%M} UTC</b>: {lab.outputs.height} traces"
        )
        self.detail.children = [title, eye(lab)] if lab.outputs.height else [title]


def monitor_view(monitor: Monitor, every: str = "1d", *, drift: bool = True) -> MonitorView:
    """Open the monitor view of ``monitor`` on the ``every`` grid (see :class:`MonitorView`)."""
    return MonitorView(monitor, every, drift=drift)
