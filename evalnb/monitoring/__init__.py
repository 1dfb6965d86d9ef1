"""Ongoing monitoring: a calibration bundle applied to live traffic (``evalnb.monitor``).

A floor above the calibration it applies and beside ``team``: it reads traffic, scores it
with the evaluation engine, keeps everything in a DuckDB file of its own and estimates pass
rates with human labels; the monitor view (``widgets``) and the facade sit above it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["OTLPJsonFileExporter"]


def __getattr__(name: str) -> Any:  # noqa: ANN401 - the module attribute asked for
    """Open ``evalnb.monitoring.OTLPJsonFileExporter`` on first use.

    Not for a circle: the exporter needs the OpenTelemetry SDK (``evalnb[otel]``), an extra
    that importing the monitoring package must not require.
    """
    if name == "OTLPJsonFileExporter":
        from evalnb.monitoring.otlp_file import OTLPJsonFileExporter  # noqa: PLC0415

        return OTLPJsonFileExporter
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)
