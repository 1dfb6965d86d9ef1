"""``evalnb monitor ingest|status``: a calibration bundle watching live traffic, from cron.

``ingest`` reads what is new in a folder of OTLP JSON files (or Parquet) into the monitor's
store, scores it with the bundle and, with ``--webhook``, posts the alerts not posted yet;
run it as often as the files grow. ``status`` prints the windows' pass rates and the alerts.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from evalnb.api.monitoring import monitor

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

__all__ = ["add_monitor_parser", "run_monitor_command"]

_SHOWN = [
    "window_start",
    "metric",
    "n",
    "pass_rate",
    "labels",
    "corrected",
    "cs_low",
    "cs_high",
    "accepted",
    "below_accepted",
]


def add_monitor_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``monitor ingest|status`` to the command line."""
    mon = sub.add_parser("monitor", help="ongoing monitoring of live traffic with a bundle")
    mon_sub = mon.add_subparsers(dest="monitor_command", required=True)
    ingest = mon_sub.add_parser("ingest", help="read, score and store what is new in a source")
    ingest.add_argument("source", type=Path, help="a folder of OTLP JSON files, or Parquet")
    ingest.add_argument("--webhook", help="post the alerts not posted yet to this URL")
    ingest.add_argument(
        "--no-drift", action="store_true", help="alerts on pass rates only (embed no questions)"
    )
    status = mon_sub.add_parser("status", help="the windows' pass rates and the alerts")
    for p in (ingest, status):
        p.add_argument("--bundle", type=Path, required=True, help="the calibration bundle (JSON)")
        p.add_argument("--store", type=Path, required=True, help="the monitor's DuckDB file")
        p.add_argument("--every", default="1d", help="the windows: 15m, 6h, 1d, 1w ...")


def run_monitor_command(
    args: argparse.Namespace, show: Callable[[pl.DataFrame | str], None]
) -> int:
    """Run one ``monitor`` subcommand; ``show`` prints a table or text."""
    mon = monitor(args.bundle, args.store)
    if args.monitor_command == "ingest":
        report = mon.ingest(args.source)
        show(
            f"read {report['lines']:,} lines of {report['files']} files in {report['seconds']} s: "
            f"{report['requests']:,} new traces scored, {report['duplicates']:,} already held, "
            f"{report['waiting']:,} spans waiting for their trace's root"
            + (
                f"; {report['quarantined']:,} unreadable lines or files quarantined "
                "(evalnb monitor status lists them)"
                if report["quarantined"]
                else ""
            )
        )
        if args.webhook:
            alerts = mon.alerts(args.every, webhook=args.webhook, drift=not args.no_drift)
            unsent = alerts.filter(pl.col("sent_at").is_null()).height
            show(f"{alerts.height} alerts, {unsent} not posted yet")
            failed = alerts.filter(pl.col("sent_at").is_null() & pl.col("last_error").is_not_null())
            if failed.height:
                show(f"the webhook failed: {failed['last_error'][0]}")
        return 0
    status = mon.status()
    show(
        f"{status['traces']:,} traces from {status['first']} to {status['last']}; "
        f"{status['labels']} labels; {status['alerts']} alerts ({status['unsent_alerts']} not "
        f"posted); bundle {status['bundle_hash'][:12]}"
    )
    show(mon.windows(args.every).select(_SHOWN))
    alerts = mon.store.read("SELECT window_start, kind, metric, detail FROM alerts ORDER BY 1")
    if alerts.height:
        show(alerts)
    if status["quarantined"]:
        show(f"{status['quarantined']} unreadable lines, files or late spans (quarantined):")
        show(mon.quarantine().select("path", "line", "reason"))
    return 0
