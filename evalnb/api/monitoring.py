"""``evalnb.monitor``: the public monitor, whose review samples and windows are labs.

:class:`evalnb.monitoring.monitor.Monitor` does the work; this facade hands its labs out as
:class:`evalnb.Lab` (for the labeler, the eye and review queues) and adds the view.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evalnb.api.lab import Lab
from evalnb.monitoring.monitor import Monitor as MonitorCore

if TYPE_CHECKING:
    import datetime as dt
    from pathlib import Path

    from evalnb.llm.client import LLMClient
    from evalnb.widgets.monitor_view import MonitorView

__all__ = ["Monitor", "monitor"]


class Monitor(MonitorCore):
    """A calibration bundle monitoring live traffic; build one with :func:`evalnb.monitor`."""

    def sample_for_review(self, per_window: int = 50, **options: Any) -> Lab:  # noqa: ANN401
        """Draw traces of the latest closed windows for reviewers, as a lab.

        See :meth:`evalnb.monitoring.monitor.Monitor.sample_for_review` for the options
        (``every``, ``strategy``, ``evaluator``, ``metric``, ``windows``, ``seed``). Label it
        with ``evalnb.labeler`` or publish it with ``evalnb.review``; give the labels back
        with :meth:`add_labels`.
        """
        return Lab.view(super().sample_for_review(per_window, **options))

    def traces_lab(self, trace_ids: list[str]) -> Lab:
        """Return a lab of these traces (case id = trace id), scored, with the bundle's thresholds."""
        return Lab.view(super().traces_lab(trace_ids))

    def window_lab(self, window_start: dt.datetime, every: str = "1d") -> Lab:
        """Return a lab of one window's traces, for ``evalnb.eye`` (at most 5,000: a sample beyond)."""
        return Lab.view(super().window_lab(window_start, every))

    def view(self, every: str = "1d", *, drift: bool = True) -> MonitorView:
        """Show the monitor view: pass rates with their bands over time, drift, alerts; offline.

        Clicking a window opens its traces in the eye below the chart.
        """
        from evalnb.widgets.monitor_view import monitor_view  # noqa: PLC0415 - widgets load late

        return monitor_view(self, every, drift=drift)


def monitor(
    bundle: str | Path | dict[str, Any],
    store: str | Path = "monitor.duckdb",
    *,
    judge: LLMClient | None = None,
    judge_rate: float = 0.1,
    level: float = 0.95,
    horizon: int = 30,
    t_opt: float = 2000.0,
    embedding_model: str = "all-MiniLM-L6-v2",
) -> Monitor:
    """Monitor live traffic with a calibration bundle (``lab.calibration.export``).

    Parameters
    ----------
    bundle
        The bundle's path, or the dict :func:`evalnb.calibration.bundle.read_calibration`
        returns. Its evaluators, their versions and parameters, and its calibrated
        thresholds are what traffic is scored with; a bundle whose evaluator version this
        evalnb lacks is refused, naming it.
    store
        The monitor's DuckDB file (created when missing): traffic, scores, checkpoints,
        samples, labels and alerts, so every run goes on where the last one stopped.
    judge, judge_rate
        The LLM client of the bundle's judge evaluators, and the share of traces they
        score (a stable sample by trace id). Without a client the judges are left out.
    level
        The coverage of intervals and confidence sequences (1 − α of the alarms).
    horizon
        The windows over which a stream that keeps its pass rate raises a false alarm with
        probability at most 1 − ``level``.
    t_opt
        The traces at which the confidence sequences are tightest.
    embedding_model
        The sentence embedder of question drift (the packaged all-MiniLM-L6-v2 by default).

    Returns
    -------
    Monitor
        ``ingest(source)``, ``windows(every=)``, ``drift(every=)``, ``alerts(every=,
        webhook=)``, ``sample_for_review(per_window=)``, ``add_labels(lab)``, ``view()``,
        ``status()``.
    """
    return Monitor(
        bundle,
        store,
        judge=judge,
        judge_rate=judge_rate,
        level=level,
        horizon=horizon,
        t_opt=t_opt,
        embedding_model=embedding_model,
    )
