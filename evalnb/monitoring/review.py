"""Reviewers in the loop: a window's sample drawn for them, their labels taken back.

``sample_for_review`` draws traces of closed windows (uniformly, or stratified by a
metric's verdict with the inclusion probabilities recorded) and hands them out as a lab, for
the labeler or a team's review queue; ``add_labels`` takes the labels back into the store,
where :mod:`evalnb.monitoring.windows` counts those of random samples in the window's
estimates. A mixin of :class:`evalnb.monitoring.monitor.Monitor`.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import uuid
from typing import TYPE_CHECKING, Any

import polars as pl

from evalnb.calibration.bundle import apply_calibration
from evalnb.lab.core import LabCore
from evalnb.lab.errors import InputError
from evalnb.monitoring.scoring import quiet_evaluate, requests_lab
from evalnb.monitoring.store import utc_now
from evalnb.monitoring.windows import parse_every

if TYPE_CHECKING:
    from evalnb.monitoring.scoring import BundleSpec
    from evalnb.monitoring.store import MonitorStore

__all__ = ["STRATEGIES", "ReviewMethods"]

STRATEGIES = ("random", "stratified")


class ReviewMethods:
    """The review half of a monitor: it reads and writes its ``store`` under its ``spec``."""

    store: MonitorStore
    spec: BundleSpec

    def sample_for_review(
        self,
        per_window: int = 50,
        *,
        every: str = "1d",
        strategy: str = "random",
        evaluator: str | None = None,
        metric: str | None = None,
        windows: int | None = 1,
        seed: int = 0,
    ) -> LabCore:
        """Draw ``per_window`` traces of each of the last closed windows for reviewers.

        Parameters
        ----------
        per_window
            Traces per window (all of a smaller window).
        every
            The window grid (the same as ``windows(every=...)`` reads the labels on).
        strategy
            ``random`` (uniform) or ``stratified`` (half passes, half fails of one
            ``evaluator`` / ``metric``, inclusion probabilities recorded).
        windows
            How many of the latest closed windows (None: every window not sampled yet).
            The window still filling is never sampled: traces added later would not have had
            a chance to be drawn.
        seed
            Seeds the draw (with the window).

        Returns
        -------
        LabCore
            A lab of the drawn traces, scored and with the bundle's thresholds, for the
            labeler (``evalnb.labeler``) or a review queue (``evalnb.review``); give its
            labels back with :meth:`add_labels`.
        """
        if strategy not in STRATEGIES:
            msg = f"strategy must be one of {STRATEGIES}; got {strategy!r}"
            raise ValueError(msg)
        if strategy == "stratified" and (evaluator is None or metric is None):
            msg = "stratified sampling is by one metric's verdict: give evaluator= and metric="
            raise ValueError(msg)
        if per_window < 1:
            msg = f"per_window must be at least 1; got {per_window}"
            raise ValueError(msg)
        interval = parse_every(every)
        traces = self.store.read(
            f"""SELECT time_bucket(INTERVAL '{interval}', "at") AS window_start, trace_id
                FROM traces ORDER BY trace_id"""
        ).with_columns(pl.col("window_start").dt.convert_time_zone("UTC"))
        if not traces.height:
            msg = "this monitor holds no traffic yet: ingest some first"
            raise ValueError(msg)
        done = self.store.read("SELECT DISTINCT window_start FROM samples WHERE every = ?", [every])
        sampled = {w.astimezone(dt.UTC) for w in done.get_column("window_start").to_list()}
        closed = sorted(set(traces["window_start"].to_list()) - {traces["window_start"].max()})
        todo = [w for w in closed if w not in sampled]
        if windows is not None:
            todo = todo[-windows:]
        if not todo:
            msg = (
                f"no closed window on the {every!r} grid is left to sample (the newest one is "
                "still filling; every older one was sampled)"
            )
            raise ValueError(msg)
        verdicts = None
        if strategy == "stratified":
            verdicts = self.store.read(
                "SELECT trace_id, passed FROM scores WHERE evaluator = ? AND metric = ?",
                [evaluator, metric],
            )
        sample_id = uuid.uuid4().hex[:16]
        rows = []
        for w in todo:
            part = traces.filter(pl.col("window_start") == w)
            window_seed = seed + int(hashlib.sha256(str(w).encode()).hexdigest()[:8], 16)
            if verdicts is None:
                chosen = part.sample(min(per_window, part.height), seed=window_seed, shuffle=True)
                rows += [
                    (t, "all", chosen.height / part.height, part.height)
                    for t in chosen["trace_id"].to_list()
                ]
                continue
            scored = part.join(verdicts, on="trace_id").filter(pl.col("passed").is_not_null())
            for value in (True, False):
                stratum = scored.filter(pl.col("passed") == value)
                k = min(per_window // 2 + (per_window % 2 if value else 0), stratum.height)
                chosen = stratum.sample(k, seed=window_seed, shuffle=True) if k else stratum.head(0)
                rows += [
                    (t, str(value).lower(), k / stratum.height, stratum.height)
                    for t in chosen["trace_id"].to_list()
                ]
        by_window = dict(
            zip(traces["trace_id"].to_list(), traces["window_start"].to_list(), strict=True)
        )
        frame = pl.DataFrame(
            {
                "sample_id": [sample_id] * len(rows),
                "every": [every] * len(rows),
                "window_start": [by_window[r[0]] for r in rows],
                "trace_id": [r[0] for r in rows],
                "strategy": [strategy] * len(rows),
                "evaluator": [evaluator] * len(rows),
                "metric": [metric] * len(rows),
                "probability": [r[2] for r in rows],
                "window_traces": [r[3] for r in rows],
                "created_at": [utc_now()] * len(rows),
            },
            schema=_SAMPLES,
        )
        self.store.insert_new("samples", frame, None)
        lab = self.traces_lab(frame.get_column("trace_id").to_list())
        lab.replace_tables({"info": lab.table("info").vstack(_info({"monitor_sample": sample_id}))})
        return lab

    def traces_lab(self, trace_ids: list[str]) -> LabCore:
        """Return a lab of these traces (case id = trace id), scored with the bundle's thresholds."""
        requests = self.store.read_with(
            "SELECT t.* FROM traces t JOIN wanted USING (trace_id) ORDER BY t.trace_id",
            wanted=self.store.ids(trace_ids),
        )
        lab = requests_lab(requests)
        plain = [ev for ev in self.spec.evaluators if ev not in self.spec.judges]
        if plain and lab.outputs.height:
            params: dict[str, Any] = {ev: self.spec.evaluators[ev] for ev in plain}
            lab = quiet_evaluate(lab, plain, **params)
            bundle = {**self.spec.bundle, "judges": []}
            bundle["metrics"] = [m for m in bundle["metrics"] if m["evaluator"] in plain]
            apply_calibration(lab, bundle, "the monitor's bundle")
        return lab

    def window_lab(self, window_start: dt.datetime, every: str = "1d") -> LabCore:
        """Return a lab of one window's traces (for the eye); at most 5,000, a seeded sample beyond."""
        interval = parse_every(every)
        ids = self.store.read(
            f"""SELECT trace_id FROM traces
                WHERE time_bucket(INTERVAL '{interval}', "at") = ? ORDER BY trace_id""",
            [window_start],
        )
        if ids.height > 5000:
            ids = ids.sample(5000, seed=0)
        return self.traces_lab(ids.get_column("trace_id").to_list())

    def add_labels(self, labels: pl.DataFrame | LabCore) -> int:
        """Store reviewers' labels (a lab's ``labels`` table, or such a frame); return how many are new.

        The label's case id is the trace id. Labels already held (same ``label_id``) are
        skipped, so giving the same lab back twice changes nothing.
        """
        frame = labels.labels if isinstance(labels, LabCore) else labels
        needed = ["case_id", "evaluator", "metric", "verdict", "reviewer"]
        missing = [c for c in needed if c not in frame.columns]
        if missing:
            msg = f"labels need the columns {needed}; missing {missing}"
            raise ValueError(msg)
        bad = frame.with_row_index("row").filter(~pl.col("verdict").is_in(["pass", "fail"]))
        if bad.height:
            field, source = "verdict", "the labels given"
            raise InputError(
                source,
                f"row {bad.item(0, 'row')}",
                field,
                "pass or fail (a monitor's pass rate is a share of passes)",
                repr(bad.item(0, "verdict")),
            )
        if "label_id" not in frame.columns:
            frame = frame.with_columns(
                pl.concat_str(
                    ["case_id", "evaluator", "metric", "reviewer", "verdict"], separator="\x1f"
                )
                .hash()
                .cast(pl.String)
                .alias("label_id")
            )
        if "created_at" not in frame.columns:
            frame = frame.with_columns(
                pl.lit(utc_now(), dtype=pl.Datetime("us", "UTC")).alias("created_at")
            )
        new = frame.select(
            "label_id",
            pl.col("case_id").alias("trace_id"),
            "evaluator",
            "metric",
            "verdict",
            "reviewer",
            pl.col("created_at").cast(pl.Datetime("us", "UTC")),
        )
        held = self.store.with_connection(
            lambda con: self.store.known(con, "traces", new.get_column("trace_id").to_list())
        )
        return self.store.insert_new(
            "labels", new.filter(pl.col("trace_id").is_in(list(held))), "label_id"
        )


_SAMPLES = {
    "sample_id": pl.String(),
    "every": pl.String(),
    "window_start": pl.Datetime("us", "UTC"),
    "trace_id": pl.String(),
    "strategy": pl.String(),
    "evaluator": pl.String(),
    "metric": pl.String(),
    "probability": pl.Float64(),
    "window_traces": pl.Int64(),
    "created_at": pl.Datetime("us", "UTC"),
}


def _info(values: dict[str, str]) -> pl.DataFrame:
    return pl.DataFrame(
        {"key": list(values), "value": list(values.values())},
        schema={"key": pl.String(), "value": pl.String()},
    )
