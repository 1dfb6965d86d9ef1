"""The questions' drift per window, against the calibration lab's (a mixin of ``Monitor``).

The statistics are :mod:`evalnb.monitoring.drift`'s; here, which questions are embedded
(a seeded sample per window), where their embeddings are cached (the store) and what the
calibration lab's reference is (the bundle's sample of its questions).
"""

from __future__ import annotations

import hashlib
import math
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from evalnb.monitoring.drift import Reference, question_drift, topic_shift
from evalnb.monitoring.windows import parse_every

if TYPE_CHECKING:
    from evalnb.monitoring.scoring import BundleSpec
    from evalnb.monitoring.store import MonitorStore
    from evalnb.monitoring.windows import Settings

__all__ = ["DriftMethods"]

# Exceedances after which a window's shuffles stop (its p-value is then at least
# _HITS / shuffles, plainly not an alarm); also the resolution asked of the smallest p.
_HITS = 20


class DriftMethods:
    """The drift half of a monitor: it reads its ``store`` and its ``spec``'s reference."""

    store: MonitorStore
    spec: BundleSpec
    settings: Settings
    embedding_model: str

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
        self, every: str = "1d", *, sample: int = 300, permutations: int | None = None
    ) -> pl.DataFrame:
        """Per window: question drift, topic-mix shift and the unscored share; see module docs.

        ``sample`` questions per window are embedded (a seeded random sample; embeddings are
        cached in the store). ``*_p_adjusted``: Bonferroni over the windows tested.
        ``permutations``: the most shuffles per window; by default enough that a window
        can alarm after the correction (``20 × windows / α``), stopping early (after 20
        exceedances) on windows like the reference.
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
        n_windows = max(traces["window_start"].n_unique(), 1)
        alpha = 1 - self.settings.level
        most = permutations or max(200, math.ceil(_HITS * n_windows / alpha))
        rows = []
        for (start,), part in traces.group_by(["window_start"], maintain_order=True):
            seed = int(hashlib.sha256(str(start).encode()).hexdigest()[:8], 16)
            chosen = part.sample(min(sample, part.height), seed=seed) if part.height else part
            rec: dict[str, Any] = {"window_start": start, "questions": part.height}
            if reference is not None and chosen.height >= 2:
                vectors = self._embed(chosen["trace_id"].to_list(), chosen["prompt"].to_list())
                distance, p = question_drift(
                    reference.vectors, vectors, permutations=most, seed=seed, stop_after=_HITS
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
