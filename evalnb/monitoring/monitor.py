"""The monitor: a calibration bundle applied to live traffic, kept in one DuckDB file.

``Monitor.ingest`` reads what is new in a source (exported spans, Parquet, a frame), scores
each new trace once with the bundle's evaluators and commits requests, scores and the
source's checkpoint together (:mod:`evalnb.monitoring.store`). ``windows`` estimates each
window's pass rates (:mod:`evalnb.monitoring.windows`), ``drift`` compares its questions
with the calibration lab's (:mod:`evalnb.monitoring.drift`), ``alerts`` records and posts
what crossed a line (:mod:`evalnb.monitoring.alerts`), and ``sample_for_review`` hands a
window's random sample to reviewers, whose labels come back with ``add_labels``.
"""

from __future__ import annotations

import json
import time
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import polars as pl

from evalnb.calibration.bundle_check import bundle_hash, check_calibration
from evalnb.lab.connection import run
from evalnb.lab.errors import InputError
from evalnb.lab.files import read_json
from evalnb.monitoring.alerts import alert_id, post_alert
from evalnb.monitoring.ingest import (
    Bad,
    Checkpoint,
    chunks,
    drop_damaged,
    file_identity,
    not_json_lines,
    source_files,
)
from evalnb.monitoring.question_drift import DriftMethods
from evalnb.monitoring.review import STRATEGIES, ReviewMethods
from evalnb.monitoring.scoring import BundleSpec, score_requests
from evalnb.monitoring.store import MonitorStore, registered, utc_now
from evalnb.monitoring.traffic import (
    REQUESTS,
    SpanBatch,
    SpanLite,
    requests_frame,
    requests_from_frame,
    spans_of_line,
)
from evalnb.monitoring.windows import Settings, estimate_windows, parse_every

if TYPE_CHECKING:
    import duckdb

    from evalnb.llm.client import LLMClient

__all__ = ["STRATEGIES", "IngestReport", "Monitor"]

IngestReport = dict[str, Any]


class Monitor(DriftMethods, ReviewMethods):
    """A calibration bundle monitoring live traffic; see :func:`evalnb.monitor`.

    Ingest, windows and alerts are here; drift is :mod:`evalnb.monitoring.question_drift`'s,
    the reviewers' samples and labels :mod:`evalnb.monitoring.review`'s.
    """

    def __init__(
        self,
        bundle: str | Path | dict[str, Any],
        store: str | Path,
        *,
        judge: LLMClient | None = None,
        judge_rate: float = 0.1,
        level: float = 0.95,
        horizon: int = 30,
        t_opt: float = 2000.0,
        embedding_model: str = "all-MiniLM-L6-v2",
    ) -> None:
        where = str(bundle) if isinstance(bundle, str | Path) else "the bundle given"
        raw: object = (
            read_json(bundle, "a JSON calibration bundle")
            if isinstance(bundle, str | Path)
            else bundle
        )
        self.path = Path(store)
        # A bundle a store holds (the same content's hash) was checked when it was first
        # used: a cron run need not check it again (the schema check alone takes seconds).
        # A store is created only once the bundle passed its checks.
        held = (
            isinstance(raw, dict)
            and self.path.exists()
            and bool(
                MonitorStore(self.path).rows(
                    "SELECT 1 FROM bundles WHERE bundle_hash = ?", [bundle_hash(raw)]
                )
            )
        )
        data = dict(raw) if held and isinstance(raw, dict) else check_calibration(raw, where)
        self.spec = BundleSpec.of(data, where)
        self.store = MonitorStore(self.path)
        if not 0 <= judge_rate <= 1:
            msg = f"judge_rate is a share of traces in [0, 1]; got {judge_rate!r}"
            raise ValueError(msg)
        if not 0 < level < 1 or horizon < 1 or t_opt < 1:
            msg = (
                "level must be in (0, 1), horizon (windows) and t_opt (traces) at least 1; "
                f"got {level!r}, {horizon!r}, {t_opt!r}"
            )
            raise ValueError(msg)
        levels = self.spec.metrics.select(pl.coalesce("accepted", "lab_pass_rate").alias("level"))[
            "level"
        ]
        if levels.null_count() == levels.len():
            warnings.warn(
                f"{where}: no metric has an accepted pass rate (nor the lab's own rate to fall "
                "back on): no pass-rate alarm can fire; only drift can alert. Export the "
                "bundle with accepted= set",
                stacklevel=2,
            )
        self.judge, self.judge_rate = judge, judge_rate
        self.settings = Settings(level=level, horizon=horizon, t_opt=t_opt)
        self.embedding_model = embedding_model
        bundle_json = json.dumps(self.spec.bundle, ensure_ascii=False)

        def remember(con: duckdb.DuckDBPyConnection) -> None:
            con.execute(
                "INSERT INTO bundles SELECT ?, ?, ? WHERE ? NOT IN (SELECT bundle_hash FROM bundles)",
                [self.spec.hash, bundle_json, utc_now(), self.spec.hash],
            )

        self.store.write(remember)

    def __repr__(self) -> str:
        s = self.status()
        return (
            f"<evalnb Monitor {self.path.name}: {s['traces']:,} traces, bundle "
            f"{self.spec.hash[:12]}, {s['labels']} labels, {s['alerts']} alerts>"
        )

    # -- ingest -----------------------------------------------------------------

    def ingest(self, source: str | Path | pl.DataFrame) -> IngestReport:
        """Read, score and store what is new in ``source``; see :func:`evalnb.monitor`.

        Returns
        -------
        dict
            ``files`` read, ``lines`` parsed, ``requests`` new, ``duplicates`` (traces
            already held), ``waiting`` (spans whose root has not come yet), ``quarantined``
            (lines, files and late spans that could not be read, newly recorded:
            :meth:`quarantine` lists them all), ``seconds``.
        """
        started = time.perf_counter()
        report: IngestReport = dict.fromkeys(
            ("files", "lines", "requests", "duplicates", "quarantined"), 0
        )
        if isinstance(source, pl.DataFrame):
            self._commit(requests_from_frame(source, "the frame given"), "frame", report)
        else:
            path = Path(source)
            if not path.exists():
                msg = f"{path}: no such file or folder of traffic to ingest"
                raise FileNotFoundError(msg)
            files = [path] if path.is_file() else None
            parquet = sorted(path.glob("*.parquet")) if path.is_dir() else []
            if parquet or path.suffix == ".parquet":
                self._ingest_parquet(parquet or [path], report)
            else:
                for file in files or source_files(path):
                    self._ingest_lines(file, report)
        report["waiting"] = self._count("SELECT count(*) FROM pending")
        report["seconds"] = round(time.perf_counter() - started, 3)
        return report

    def _ingest_parquet(self, files: list[Path], report: IngestReport) -> None:
        for file in files:
            stat = file.stat()
            source = f"parquet:{file.name}:{stat.st_size}:{stat.st_mtime_ns}"
            if self.store.rows("SELECT 1 FROM checkpoints WHERE source = ?", [source]):
                continue
            report["files"] += 1
            frame = requests_from_frame(pl.read_parquet(file), str(file))
            self._commit(frame, source, report, checkpoint=(file, Checkpoint(stat.st_size, "", 0)))

    def _ingest_lines(self, file: Path, report: IngestReport) -> None:
        why = not_json_lines(file)
        if why is not None:
            stat = file.stat()
            source = f"unreadable:{file.name}:{stat.st_size}:{stat.st_mtime_ns}"
            bad = [Bad(0, why, "")]
            self._commit(pl.DataFrame(schema=REQUESTS), source, report, bad=(file, bad))
            return
        identity = file_identity(file)
        if identity is None:  # not one complete line yet: next time
            return
        rows = self.store.rows(
            'SELECT "offset", tail_hash, lines FROM checkpoints WHERE source = ?', [identity]
        )
        done = Checkpoint(*rows[0]) if rows else None  # type: ignore[arg-type]
        read = False
        for chunk in chunks(file, identity, done):
            read = True
            batch = SpanBatch()
            good, bad = chunk.parse()
            for where, value in good:
                try:
                    batch.add(spans_of_line(value, where))
                except InputError as err:
                    number = int(str(where.location).removeprefix("line "))
                    bad.append(Bad(number, f"not an OTLP export request: {err}"[:300], ""))
                    continue
                report["lines"] += 1
            self._add_waiting(batch)
            damaged = drop_damaged(batch, bad)
            requests, waiting = batch.split()
            frame = requests_frame(requests) if requests else pl.DataFrame(schema=REQUESTS)
            self._commit(
                frame,
                identity,
                report,
                checkpoint=(file, chunk.checkpoint()),
                waiting=waiting,
                done_ids=[*batch.traces, *damaged],
                bad=(file, bad),
            )
        report["files"] += int(read)

    def _add_waiting(self, batch: SpanBatch) -> None:
        """Add the spans that waited in the store for the traces of this batch."""
        if not batch.traces:
            return
        waited = self.store.read_with(
            "SELECT p.span FROM pending p JOIN batch_ids b USING (trace_id)",
            batch_ids=self.store.ids(list(batch.traces)),
        )
        batch.add(SpanLite.from_json(s) for s in waited.get_column("span"))

    def _commit(
        self,
        requests: pl.DataFrame,
        source: str,
        report: IngestReport,
        *,
        checkpoint: tuple[Path, Checkpoint] | None = None,
        waiting: list[SpanLite] | None = None,
        done_ids: list[str] | None = None,
        bad: tuple[Path, list[Bad]] | None = None,
    ) -> None:
        requests = requests.unique("trace_id", keep="first", maintain_order=True)
        known = self.store.with_connection(
            lambda con: self.store.known(con, "traces", requests.get_column("trace_id").to_list())
        )
        new = requests.filter(~pl.col("trace_id").is_in(list(known)))
        report["duplicates"] += requests.height - new.height
        scores = score_requests(new, self.spec, judge=self.judge, judge_rate=self.judge_rate)
        now = utc_now()
        traces = new.with_columns(
            pl.lit(source).alias("source"),
            pl.lit(self.spec.hash).alias("bundle_hash"),
            pl.lit(now, dtype=pl.Datetime("us", "UTC")).alias("ingested_at"),
        )
        held = pl.DataFrame(
            {
                "trace_id": [s.trace for s in waiting or []],
                "span": [s.as_json() for s in waiting or []],
                "source": [source] * len(waiting or []),
            },
            schema={"trace_id": pl.String(), "span": pl.String(), "source": pl.String()},
        )
        completed = pl.DataFrame({"trace_id": done_ids or []}, schema={"trace_id": pl.String()})
        path_text = str(bad[0]) if bad else str(checkpoint[0]) if checkpoint else source
        unread = pl.DataFrame(
            [
                (source, path_text, b.line, b.reason, b.preview, now)
                for b in (bad[1] if bad else [])
            ],
            schema=_QUARANTINE,
            orient="row",
        )
        counted: list[int] = []

        frames = {
            "new_traces": traces,
            "new_scores": scores,
            "held_spans": held,
            "batch_done": completed,
            "unread": unread,
        }

        def body(con: duckdb.DuckDBPyConnection) -> None:
            with registered(con, frames):
                # Scores first, of the traces not held yet: another process may have
                # committed some of this batch since it was read (then they are its).
                con.execute(
                    "INSERT INTO scores SELECT * FROM new_scores "
                    "WHERE trace_id NOT IN (SELECT trace_id FROM traces)"
                )
                con.execute(
                    "INSERT INTO traces SELECT * FROM new_traces "
                    "WHERE trace_id NOT IN (SELECT trace_id FROM traces)"
                )
                # Spans of this batch's traces left the waiting room (into a request, or
                # back into it with the new ones: `held` has them all).
                con.execute(
                    "DELETE FROM pending WHERE trace_id IN (SELECT trace_id FROM batch_done)"
                )
                con.execute(
                    "INSERT INTO pending SELECT * FROM held_spans "
                    "WHERE trace_id NOT IN (SELECT trace_id FROM traces)"
                )
                # A span whose trace was scored already cannot join it: said, not dropped.
                before = cast("int", run(con, "SELECT count(*) FROM quarantine")[0][0])
                con.execute(
                    "INSERT OR IGNORE INTO quarantine SELECT source, ?, -1, "
                    "'a span that came after its trace was scored (trace ' || trace_id || ')', "
                    "left(span, 120), ? FROM held_spans "
                    "WHERE trace_id IN (SELECT trace_id FROM traces)",
                    [path_text, now],
                )
                con.execute("INSERT OR IGNORE INTO quarantine SELECT * FROM unread")
                counted.append(
                    cast("int", run(con, "SELECT count(*) FROM quarantine")[0][0]) - before
                )
                if checkpoint is not None:
                    path, cp = checkpoint
                    con.execute(
                        "INSERT OR REPLACE INTO checkpoints VALUES (?, ?, ?, ?, ?, ?)",
                        [source, str(path), cp.offset, cp.tail_hash, cp.lines, now],
                    )

        self.store.write(body)
        report["requests"] += new.height
        report["quarantined"] += counted[-1] if counted else 0

    # -- estimates -----------------------------------------------------------------

    def windows(self, every: str = "1d") -> pl.DataFrame:
        """One row per window and calibrated metric; see :mod:`evalnb.monitoring.windows`."""
        interval = parse_every(every)
        agg = self.store.read(
            f"""SELECT time_bucket(INTERVAL '{interval}', t."at") AS window_start,
                       s.evaluator, s.metric, any_value(s.bundle_hash) AS bundle_hash,
                       count(*) AS n, count(s.passed) AS scored,
                       CAST(coalesce(sum(CASE WHEN s.passed THEN 1 ELSE 0 END), 0) AS BIGINT) AS passes
                FROM scores s JOIN traces t USING (trace_id)
                GROUP BY ALL ORDER BY window_start"""
        )
        agg = agg.with_columns(pl.col("window_start").dt.convert_time_zone("UTC"))
        labelled = self._labelled(
            every, agg.select("window_start", "evaluator", "metric", "scored")
        )
        return estimate_windows(agg, labelled, self.spec.metrics, self.settings)

    def _labelled(self, every: str, counts: pl.DataFrame) -> pl.DataFrame:
        """Return the labelled traces of samples drawn on this grid, with each one's chance of a label."""
        frame = self.store.read(
            """WITH latest AS (
                   SELECT * FROM labels QUALIFY row_number() OVER (
                       PARTITION BY trace_id, evaluator, metric
                       ORDER BY created_at DESC, label_id DESC) = 1)
               SELECT sm.window_start, l.evaluator, l.metric, sm.strategy,
                      sm.probability, sm.window_traces, sm.sample_id,
                      CASE WHEN s.passed THEN 1 ELSE 0 END AS predicted,
                      CASE WHEN l.verdict = 'pass' THEN 1 ELSE 0 END AS human,
                      CASE WHEN sm.strategy = 'stratified'
                           THEN CAST(s.passed AS VARCHAR) ELSE 'all' END AS stratum
               FROM latest l
               JOIN samples sm ON sm.trace_id = l.trace_id AND sm.every = ?
                    AND (sm.evaluator IS NULL
                         OR (sm.evaluator = l.evaluator AND sm.metric = l.metric))
               JOIN scores s ON s.trace_id = l.trace_id AND s.evaluator = l.evaluator
                    AND s.metric = l.metric
               WHERE s.passed IS NOT NULL AND l.verdict IN ('pass', 'fail')""",
            [every],
        )
        if not frame.height:
            return frame.with_columns(pl.lit(None, dtype=pl.Float64).alias("pi"))
        frame = frame.with_columns(pl.col("window_start").dt.convert_time_zone("UTC"))
        keys = ["window_start", "evaluator", "metric", "stratum"]
        # `counts`: each window's scored traces per metric, as windows() counted them (a
        # window's traffic split by bundle would count once per bundle: summed here).
        counts = counts.group_by(["window_start", "evaluator", "metric"]).agg(
            pl.col("scored").sum()
        )
        labelled_n = frame.group_by(keys).len("labelled")
        frame = frame.join(labelled_n, on=keys).join(
            counts, on=["window_start", "evaluator", "metric"], how="left"
        )
        # Random: the labelled share of the window's scored traces. Stratified: of the
        # stratum's traces when the sample was drawn (its size is recorded).
        return frame.with_columns(
            pl.when(pl.col("strategy") == "random")
            .then(pl.col("labelled") / pl.col("scored"))
            .otherwise(pl.col("labelled") / pl.col("window_traces"))
            .alias("pi")
        )

    # -- alerts --------------------------------------------------------------------

    def alerts(
        self,
        every: str = "1d",
        *,
        webhook: str | None = None,
        drift: bool = True,
        windows: pl.DataFrame | None = None,
        drift_frame: pl.DataFrame | None = None,
    ) -> pl.DataFrame:
        """Record (and post to ``webhook``) what crossed a line; return every alert so far.

        A window × metric whose pass-rate bound (the confidence sequence's upper bound over
        the runs of windows ending there, ``drop_bound``) lies below the bundle's accepted
        pass rate; while a metric has no reviewers' labels, one whose own verdicts' bound
        (``raw_drop_bound``) lies below the accepted rate, or the calibration lab's own rate
        when none was accepted (``pass_rate_uncorrected``: not corrected by labels); a window whose question drift or topic mix is significant after the
        Bonferroni correction (``drift=False`` skips embedding the questions). Each is
        recorded once; see :mod:`evalnb.monitoring.alerts` for the webhook. ``windows`` and
        ``drift_frame``: those frames when the caller computed them already.
        """
        alpha = 1 - self.settings.level
        frame = windows if windows is not None else self.windows(every)
        found = [
            (
                r["window_start"],
                r["evaluator"],
                r["metric"],
                "pass_rate",
                r["drop_bound"],
                r["accepted"],
                f"the pass rate is below {r['accepted']:.3f} (bound {r['drop_bound']:.3f}, "
                f"over the windows since {r['drop_since']})",
            )
            for r in frame.filter(pl.col("below_accepted")).iter_rows(named=True)
        ]
        # No labels yet for a metric: its own verdicts alarm, said to be uncorrected.
        found += [
            (
                r["window_start"],
                r["evaluator"],
                r["metric"],
                "pass_rate_uncorrected",
                r["raw_drop_bound"],
                r["raw_level"],
                f"the metric's own pass rate (uncorrected: no reviewers' labels yet) is below "
                f"{r['raw_level']:.3f} (bound {r['raw_drop_bound']:.3f})",
            )
            for r in frame.filter(pl.col("raw_below") & pl.col("drop_bound").is_null()).iter_rows(
                named=True
            )
        ]
        if drift and self.spec.bundle.get("reference"):
            if drift_frame is None:
                drift_frame = self.drift(every)
            for r in drift_frame.iter_rows(named=True):
                for kind, column in (
                    ("question_drift", "question_p_adjusted"),
                    ("topic_mix", "topic_p_adjusted"),
                ):
                    if r.get(column) is not None and r[column] < alpha:
                        found.append(
                            (
                                r["window_start"],
                                "",
                                "",
                                kind,
                                r[column],
                                alpha,
                                f"{column} = {r[column]:.4g}",
                            )
                        )
        now = utc_now()
        new = pl.DataFrame(
            [
                {
                    "alert_id": alert_id(every, w, ev, m, kind),
                    "every": every,
                    "window_start": w,
                    "evaluator": ev,
                    "metric": m,
                    "kind": kind,
                    "value": value,
                    "level": level,
                    "detail": detail,
                    "created_at": now,
                    "sent_at": None,
                    "last_error": None,
                }
                for w, ev, m, kind, value, level, detail in found
            ],
            schema=_ALERTS,
        )
        self.store.insert_new("alerts", new, "alert_id")
        if webhook is not None:
            self._post(webhook)
        return self.store.read("SELECT * FROM alerts ORDER BY window_start, kind, metric")

    def _post(self, webhook: str) -> None:
        """Post the alerts not sent yet; record why each that failed did (``last_error``).

        After the first failure the run stops posting: a webhook that is down would cost
        its timeout once per alert on every run. The rest wait for the next run; a
        warning says how many were not delivered and why.
        """
        unsent = self.store.read("SELECT * FROM alerts WHERE sent_at IS NULL").to_dicts()
        for k, alert in enumerate(unsent):
            alert.pop("last_error", None)
            why = post_alert(webhook, {**alert, "bundle_hash": self.spec.hash})
            if why is None:
                self._mark_sent(alert["alert_id"], None)
                continue
            self._mark_sent(alert["alert_id"], why)
            left = len(unsent) - k
            warnings.warn(
                f"{left} alert(s) not delivered to the webhook ({why}); they stay unsent "
                "(alerts()'s last_error) and are posted on the next run",
                stacklevel=3,
            )
            return

    def _mark_sent(self, alert: str, error: str | None) -> None:
        """Mark an alert sent (``error`` None) or record why its post failed."""

        def body(con: duckdb.DuckDBPyConnection) -> None:
            if error is None:
                con.execute(
                    "UPDATE alerts SET sent_at = ?, last_error = NULL WHERE alert_id = ?",
                    [utc_now(), alert],
                )
            else:
                con.execute("UPDATE alerts SET last_error = ? WHERE alert_id = ?", [error, alert])

        self.store.write(body)

    def _count(self, sql: str) -> int:
        return cast("int", self.store.rows(sql)[0][0])

    def report_view(self, every: str = "1d", *, drift: bool = True) -> dict[str, Any]:
        """Return what the HTML report's "Ongoing monitoring" section shows (``lab.report(monitor=)``)."""
        with_drift = drift and bool(self.spec.bundle.get("reference"))
        windows = self.windows(every)
        drift_frame = self.drift(every) if with_drift else None
        alerts = self.alerts(every, drift=with_drift, windows=windows, drift_frame=drift_frame)
        return {
            "bundle": self.spec.hash,
            "every": every,
            "windows": windows,
            "alerts": alerts,
            "drift": drift_frame,
        }

    def quarantine(self) -> pl.DataFrame:
        """Return what the sources held that could not be read: file, line, reason, first bytes."""
        return self.store.read("SELECT * FROM quarantine ORDER BY path, line")

    def status(self) -> dict[str, Any]:
        """Return counts and times: traces, first and last trace, files read, waiting spans, labels, alerts, quarantined."""
        row = self.store.rows(
            """SELECT (SELECT count(*) FROM traces), (SELECT min("at") FROM traces),
                      (SELECT max("at") FROM traces), (SELECT count(*) FROM checkpoints),
                      (SELECT count(*) FROM pending), (SELECT count(*) FROM labels),
                      (SELECT count(*) FROM alerts), (SELECT count(*) FROM alerts WHERE sent_at IS NULL),
                      (SELECT count(*) FROM quarantine)"""
        )[0]
        keys = (
            "traces",
            "first",
            "last",
            "sources",
            "waiting_spans",
            "labels",
            "alerts",
            "unsent_alerts",
            "quarantined",
        )
        return {"bundle_hash": self.spec.hash, **dict(zip(keys, row, strict=True))}


_QUARANTINE = {
    "source": pl.String(),
    "path": pl.String(),
    "line": pl.Int64(),
    "reason": pl.String(),
    "preview": pl.String(),
    "seen_at": pl.Datetime("us", "UTC"),
}
_ALERTS = {
    "alert_id": pl.String(),
    "every": pl.String(),
    "window_start": pl.Datetime("us", "UTC"),
    "evaluator": pl.String(),
    "metric": pl.String(),
    "kind": pl.String(),
    "value": pl.Float64(),
    "level": pl.Float64(),
    "detail": pl.String(),
    "created_at": pl.Datetime("us", "UTC"),
    "sent_at": pl.Datetime("us", "UTC"),
    "last_error": pl.String(),
}
