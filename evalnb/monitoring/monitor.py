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

import datetime as dt
import hashlib
import json
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import polars as pl

from evalnb.calibration.bundle import apply_calibration, bundle_hash, check_calibration
from evalnb.lab.core import LabCore
from evalnb.lab.errors import InputError
from evalnb.lab.files import read_json
from evalnb.monitoring.alerts import alert_id, post_alert
from evalnb.monitoring.drift import Reference, question_drift, topic_shift
from evalnb.monitoring.ingest import Checkpoint, chunks, file_identity, source_files
from evalnb.monitoring.scoring import BundleSpec, quiet_evaluate, requests_lab, score_requests
from evalnb.monitoring.store import MonitorStore, registered
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

STRATEGIES = ("random", "stratified")
IngestReport = dict[str, Any]


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class Monitor:
    """A calibration bundle monitoring live traffic; see :func:`evalnb.monitor`."""

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
        self.judge, self.judge_rate = judge, judge_rate
        self.settings = Settings(level=level, horizon=horizon, t_opt=t_opt)
        self.embedding_model = embedding_model
        bundle_json = json.dumps(self.spec.bundle, ensure_ascii=False)

        def remember(con: duckdb.DuckDBPyConnection) -> None:
            con.execute(
                "INSERT INTO bundles SELECT ?, ?, ? WHERE ? NOT IN (SELECT bundle_hash FROM bundles)",
                [self.spec.hash, bundle_json, _now(), self.spec.hash],
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
            already held), ``waiting`` (spans whose root has not come yet), ``seconds``.
        """
        started = time.perf_counter()
        report: IngestReport = dict.fromkeys(("files", "lines", "requests", "duplicates"), 0)
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
            for where, value in chunk.records():
                batch.add(spans_of_line(value, where))
                report["lines"] += 1
            self._add_waiting(batch)
            requests, waiting = batch.split()
            frame = requests_frame(requests) if requests else pl.DataFrame(schema=REQUESTS)
            self._commit(
                frame,
                identity,
                report,
                checkpoint=(file, chunk.checkpoint()),
                waiting=waiting,
                done_ids=list(batch.traces),
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
    ) -> None:
        requests = requests.unique("trace_id", keep="first", maintain_order=True)
        known = self.store.with_connection(
            lambda con: self.store.known(con, "traces", requests.get_column("trace_id").to_list())
        )
        new = requests.filter(~pl.col("trace_id").is_in(list(known)))
        report["duplicates"] += requests.height - new.height
        scores = score_requests(new, self.spec, judge=self.judge, judge_rate=self.judge_rate)
        now = _now()
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

        frames = {
            "new_traces": traces,
            "new_scores": scores,
            "held_spans": held,
            "batch_done": completed,
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
                if checkpoint is not None:
                    path, cp = checkpoint
                    con.execute(
                        "INSERT OR REPLACE INTO checkpoints VALUES (?, ?, ?, ?, ?, ?)",
                        [source, str(path), cp.offset, cp.tail_hash, cp.lines, now],
                    )

        self.store.write(body)
        report["requests"] += new.height

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
        return estimate_windows(agg, self._labelled(every), self.spec.metrics, self.settings)

    def _labelled(self, every: str) -> pl.DataFrame:
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
        counts = self.store.read(
            f"""SELECT time_bucket(INTERVAL '{parse_every(every)}', t."at") AS window_start,
                       s.evaluator, s.metric, count(s.passed) AS scored
                FROM scores s JOIN traces t USING (trace_id) GROUP BY ALL"""
        ).with_columns(pl.col("window_start").dt.convert_time_zone("UTC"))
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

    # -- drift ---------------------------------------------------------------------

    def _embed(self, trace_ids: list[str], prompts: list[str]) -> np.ndarray:
        """Embeddings of the prompts, cached in the store by trace id."""
        from evalnb.models.encoder import get_encoder  # noqa: PLC0415 - torch only when used

        if not trace_ids:
            return np.zeros((0, 1), dtype=np.float32)
        cached = self.store.read_with(
            "SELECT e.trace_id, e.vector FROM embeddings e JOIN want USING (trace_id)",
            want=self.store.ids(trace_ids),
        )
        have = {r[0]: r[1] for r in cached.iter_rows()}
        todo = [(t, p) for t, p in zip(trace_ids, prompts, strict=True) if t not in have]
        if todo:
            vectors = get_encoder(self.embedding_model).encode([p for _, p in todo])
            new = pl.DataFrame(
                {"trace_id": [t for t, _ in todo], "vector": [v.tolist() for v in vectors]},
                schema={"trace_id": pl.String(), "vector": pl.List(pl.Float32())},
            )
            self.store.insert_new("embeddings", new, "trace_id")
            have |= dict(zip(new["trace_id"].to_list(), new["vector"].to_list(), strict=True))
        return np.array([have[t] for t in trace_ids], dtype=np.float32)

    def _reference(self) -> Reference | None:
        ref = self.spec.bundle.get("reference")
        if not ref or not ref["prompts"]:
            return None
        from evalnb.models.encoder import get_encoder  # noqa: PLC0415 - torch only when used

        vectors = get_encoder(self.embedding_model).encode(ref["prompts"])
        return Reference.of(vectors, ref["topics"])

    def drift(
        self, every: str = "1d", *, sample: int = 300, permutations: int = 200
    ) -> pl.DataFrame:
        """Per window: question drift, topic-mix shift and the unscored share; see module docs.

        ``sample`` questions per window are embedded (a seeded random sample; embeddings are
        cached in the store). ``*_p_adjusted``: Bonferroni over the windows tested.
        """
        interval = parse_every(every)
        traces = self.store.read(
            f"""SELECT time_bucket(INTERVAL '{interval}', "at") AS window_start, trace_id, prompt
                FROM traces WHERE prompt IS NOT NULL ORDER BY window_start, trace_id"""
        ).with_columns(pl.col("window_start").dt.convert_time_zone("UTC"))
        unscored = self.store.read(
            f"""SELECT time_bucket(INTERVAL '{interval}', t."at") AS window_start,
                       avg(CASE WHEN s.passed IS NULL THEN 1.0 ELSE 0.0 END) AS unscored_share
                FROM scores s JOIN traces t USING (trace_id) GROUP BY ALL"""
        ).with_columns(pl.col("window_start").dt.convert_time_zone("UTC"))
        reference = self._reference()
        rows = []
        for (start,), part in traces.group_by(["window_start"], maintain_order=True):
            seed = int(hashlib.sha256(str(start).encode()).hexdigest()[:8], 16)
            chosen = part.sample(min(sample, part.height), seed=seed) if part.height else part
            rec: dict[str, Any] = {"window_start": start, "questions": part.height}
            if reference is not None and chosen.height >= 2:
                vectors = self._embed(chosen["trace_id"].to_list(), chosen["prompt"].to_list())
                distance, p = question_drift(
                    reference.vectors, vectors, permutations=permutations, seed=seed
                )
                topic_p, no_topic, _ = topic_shift(reference, vectors)
                rec |= {
                    "question_distance": distance,
                    "question_p": p,
                    "topic_p": topic_p,
                    "no_topic_share": no_topic,
                }
            rows.append(rec)
        schema = {
            "window_start": pl.Datetime("us", "UTC"),
            "questions": pl.Int64(),
            "question_distance": pl.Float64(),
            "question_p": pl.Float64(),
            "topic_p": pl.Float64(),
            "no_topic_share": pl.Float64(),
        }
        frame = pl.DataFrame(rows, schema=schema) if rows else pl.DataFrame(schema=schema)
        tested = max(frame.height, 1)
        return (
            frame.with_columns(
                (pl.col("question_p") * tested).clip(upper_bound=1.0).alias("question_p_adjusted"),
                (pl.col("topic_p") * tested).clip(upper_bound=1.0).alias("topic_p_adjusted"),
            )
            .join(unscored, on="window_start", how="left")
            .sort("window_start")
        )

    # -- alerts --------------------------------------------------------------------

    def alerts(
        self, every: str = "1d", *, webhook: str | None = None, drift: bool = True
    ) -> pl.DataFrame:
        """Record (and post to ``webhook``) what crossed a line; return every alert so far.

        A window × metric whose pass-rate bound (the confidence sequence's upper bound over
        the runs of windows ending there, ``drop_bound``) lies below the bundle's accepted
        pass rate; a window whose question drift or topic mix is significant after the
        Bonferroni correction (``drift=False`` skips embedding the questions). Each is
        recorded once; see :mod:`evalnb.monitoring.alerts` for the webhook.
        """
        alpha = 1 - self.settings.level
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
            for r in self.windows(every).filter(pl.col("below_accepted")).iter_rows(named=True)
        ]
        if drift and self.spec.bundle.get("reference"):
            for r in self.drift(every).iter_rows(named=True):
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
        now = _now()
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
                }
                for w, ev, m, kind, value, level, detail in found
            ],
            schema=_ALERTS,
        )
        self.store.insert_new("alerts", new, "alert_id")
        if webhook is not None:
            for alert in self.store.read("SELECT * FROM alerts WHERE sent_at IS NULL").to_dicts():
                if post_alert(webhook, {**alert, "bundle_hash": self.spec.hash}) is None:
                    self._mark_sent(alert["alert_id"])
        return self.store.read("SELECT * FROM alerts ORDER BY window_start, kind, metric")

    def _mark_sent(self, alert: str) -> None:
        def body(con: duckdb.DuckDBPyConnection) -> None:
            con.execute("UPDATE alerts SET sent_at = ? WHERE alert_id = ?", [_now(), alert])

        self.store.write(body)

    def _count(self, sql: str) -> int:
        return cast("int", self.store.rows(sql)[0][0])

    # -- review --------------------------------------------------------------------

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
                "created_at": [_now()] * len(rows),
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
                pl.lit(_now(), dtype=pl.Datetime("us", "UTC")).alias("created_at")
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

    def report_view(self, every: str = "1d", *, drift: bool = True) -> dict[str, Any]:
        """Return what the HTML report's "Ongoing monitoring" section shows (``lab.report(monitor=)``)."""
        with_drift = drift and bool(self.spec.bundle.get("reference"))
        return {
            "bundle": self.spec.hash,
            "every": every,
            "windows": self.windows(every),
            "alerts": self.alerts(every, drift=with_drift),
            "drift": self.drift(every) if with_drift else None,
        }

    def status(self) -> dict[str, Any]:
        """Return counts and times: traces, first and last trace, files read, waiting spans, labels, alerts."""
        row = self.store.rows(
            """SELECT (SELECT count(*) FROM traces), (SELECT min("at") FROM traces),
                      (SELECT max("at") FROM traces), (SELECT count(*) FROM checkpoints),
                      (SELECT count(*) FROM pending), (SELECT count(*) FROM labels),
                      (SELECT count(*) FROM alerts), (SELECT count(*) FROM alerts WHERE sent_at IS NULL)"""
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
        )
        return {"bundle_hash": self.spec.hash, **dict(zip(keys, row, strict=True))}


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
}
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
