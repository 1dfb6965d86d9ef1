"""The Ray Data engine: the same evaluator classes, run over a cluster as ``map_batches``.

``evalnb.evaluate(lab, names, engine="ray")`` decides in this process what to score (the
incremental rule is the local engine's), writes those rows as Parquet shards, and lets Ray
Data read them as Arrow batches and run the evaluator on each batch:

* evaluators that load no model run as stateless tasks;
* evaluators that load a model (an encoder, a classifier, a language model) run in a pool
  of actors, each loading the model once (process-wide caches) and scoring every batch it
  is given; with GPUs in the cluster each actor takes one.

Results stream back in row order and are merged into the lab's scores exactly as the local
engine merges its own, so both engines give equal tables. LLM-judge evaluators stay in this
process: their cost is waiting on the LLM host, which a cluster does not shorten, and their
reply cache is here.

Ray is an optional dependency (``pip install evalnb[ray]``), imported only when this engine
runs.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from evalnb.evaluation.base import BLOCK_ROWS, RESULT_SCHEMA, Context, Evaluator, score_rows
from evalnb.lab.errors import EvalnbError
from evalnb.lab.shards import SHARD_ROWS, write_shards

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping, Sequence

    from tqdm import tqdm

__all__ = ["MODEL_BATCH_ROWS", "RayEngine", "RayScorer", "loads_model", "score_with_ray"]

_KEY = ["case_id", "model", "sample"]
_POS = "_pos"

MODEL_BATCH_ROWS = 4096
"""Rows per batch for model evaluators: thousands of texts per forward loop keep a GPU busy,
and a lost actor redoes at most this many rows."""


def loads_model(cls: type[Evaluator]) -> bool:
    """Whether ``cls`` loads a model (it has a ``model`` parameter): such evaluators run in actors."""
    return any(p.name == "model" for p in cls.params)


@dataclass(frozen=True)
class RayEngine:
    """Where and how :func:`evalnb.evaluate` runs with ``engine="ray"``.

    Parameters
    ----------
    address
        The Ray cluster: ``"auto"`` (a cluster started on this machine with ``ray start``),
        ``"ray://head:10001"`` (a remote head), or None: ``$RAY_ADDRESS``, else a new
        local cluster. A process connects once: while it is connected (``ray.init`` called
        here or by the user), every run uses that cluster.
    shards
        Folder for the Parquet shards of the rows to score. Every node reads it, so on a
        multi-node cluster give a folder mounted at the same path on every node (NFS, a
        shared volume). Default: a folder beside the lab's store (a temporary folder for a
        lab without one), which a multi-node cluster refuses.
    actors
        Actors per model evaluator. Default: one per GPU when the cluster has GPUs, else
        one per four CPUs (each actor's torch uses several threads), at least one.
    shard_rows
        Rows per shard file.
    batch_rows
        Rows per ``map_batches`` call. Default: the evaluator's block size (50,000 for
        n-gram and pattern evaluators), 4,096 for model evaluators.
    keep_shards
        Keep the shards after the run (to inspect them); removed by default.
    """

    address: str | None = None
    shards: str | Path | None = None
    actors: int | None = None
    shard_rows: int = SHARD_ROWS
    batch_rows: int | None = None
    keep_shards: bool = False

    def connect(self) -> Any:  # noqa: ANN401 - the ray module
        """Import Ray and connect (or start a local cluster); say how to install it if missing."""
        try:
            import ray  # noqa: PLC0415 - optional dependency, loaded only for this engine
        except ImportError as exc:
            msg = (
                "engine='ray' needs Ray Data, which is not installed; install it with "
                "`pip install 'evalnb[ray]'` (or `pip install 'ray[data]'`), or use the "
                "default engine='local'"
            )
            raise EvalnbError(msg) from exc
        if not ray.is_initialized():
            address = self.address or os.environ.get("RAY_ADDRESS")
            ray.init(
                address=address,
                include_dashboard=False,
                log_to_driver=False,
                logging_level=logging.ERROR,
            )
        return ray


def score_with_ray(
    engine: RayEngine,
    jobs: Sequence[tuple[type[Evaluator], Mapping[str, object]]],
    rows: pl.DataFrame,
    bar: tqdm[object],
    lab_path: Path | None,
) -> dict[str, pl.DataFrame]:
    """Score ``rows`` with every evaluator of ``jobs`` in one pass over the cluster.

    Evaluators that load no model share the pass (each shard is read once); an evaluator
    that loads a model comes alone, to its own actor pool. Returns each evaluator's result
    rows in the order the local engine gives them.
    """
    ray = engine.connect()
    folder = _shard_folder(engine, ray, "-".join(c.id for c, _ in jobs), lab_path)
    # Each row carries its position: Ray batches need not align with the local engine's
    # blocks, and the position is what puts the results back in the local engine's order.
    write_shards(rows.with_row_index(_POS), folder, rows=engine.shard_rows)
    start, total = bar.n, rows.height * len(jobs)
    parts: dict[str, list[pl.DataFrame]] = {c.id: [] for c, _ in jobs}
    per_answer = 0.0  # result rows per answer, from the first batch (progress only)
    try:
        for batch in _run(ray, engine, [(c, dict(p)) for c, p in jobs], folder):
            frame = pl.from_arrow(batch)
            assert isinstance(frame, pl.DataFrame)  # a table always converts to a frame
            frame = frame.with_columns(pl.col("metric", "evaluator").cast(pl.String))
            for (evaluator,), part in frame.partition_by("evaluator", as_dict=True).items():
                parts[str(evaluator)].append(part.drop("evaluator"))
            per_answer = per_answer or frame.height / max(frame[_POS].n_unique(), 1)
            done = round(frame.height / per_answer) * len(jobs) if per_answer else 0
            bar.update(min(done, start + total - bar.n))
        bar.n = start + total
        bar.refresh()
    finally:
        _release(engine, folder)
    keys = rows.select(_KEY)
    empty = pl.DataFrame(
        schema={_POS: pl.UInt32, "metric": pl.String, "value": pl.Float64, "detail": pl.String}
    )
    return {
        cls.id: local_order(pl.concat(parts[cls.id]) if parts[cls.id] else empty, cls, keys)
        for cls, _ in jobs
    }


class RayScorer:
    """The Ray engine's side of ``evaluate`` on a lab kept on disk: the workers write the scores.

    The driver writes the rows to score as shards (a batch at a time); one Ray run per
    group of evaluators scores them all, and each worker writes its blocks' scores as
    Parquet files into the new part's folder, so no score passes through the driver. Ray
    retries a lost task, which rewrites the same file (files are named by block).
    """

    def __init__(
        self,
        engine: RayEngine,
        params: Mapping[str, Mapping[str, object]],
        lab_path: Path | None,
        bar: tqdm[object],
    ) -> None:
        self._engine, self._params, self._lab_path, self._bar = engine, params, lab_path, bar

    def advance(self, answers: int) -> None:
        """Count ``answers`` (answer × evaluator) as done on the progress bar."""
        self._bar.update(answers)

    def shard_folder(self, name: str) -> Path:
        """Return a new folder for a group's row shards, one every node can read."""
        return _shard_folder(self._engine, self._engine.connect(), name, self._lab_path)

    def write_scores(
        self, jobs: Sequence[tuple[type[Evaluator], str]], shards: Path, part: Path
    ) -> None:
        """Score the rows in ``shards`` with ``jobs`` (evaluator, scoring key) into ``part``."""
        ray = self._engine.connect()
        run = [(cls, dict(self._params[cls.id])) for cls, _ in jobs]
        try:
            with _dataset(ray, self._engine, run, shards, {c.id: k for c, k in jobs}) as ds:
                ds.write_parquet(str(part))
        except BaseException:
            shutil.rmtree(part, ignore_errors=True)
            raise

    def release(self, shards: Path) -> None:
        """Remove a group's row shards (unless kept), and the default folder once empty."""
        _release(self._engine, shards)


def _release(engine: RayEngine, shards: Path) -> None:
    """Remove a run's row shards unless the engine keeps them.

    The default folder goes too once no run uses it; a folder the user named stays.
    """
    if engine.keep_shards:
        return
    shutil.rmtree(shards, ignore_errors=True)
    if engine.shards is None:
        with contextlib.suppress(OSError):
            shards.parent.rmdir()


def _batch_rows(engine: RayEngine, classes: Sequence[type[Evaluator]]) -> int:
    """Rows per ``map_batches`` call: the engine's setting, else the smallest block."""
    blocks = [c.block_rows for c in classes if c.block_rows]
    fallback = MODEL_BATCH_ROWS if any(loads_model(c) for c in classes) else BLOCK_ROWS
    return engine.batch_rows or min(blocks, default=fallback)


def local_order(result: pl.DataFrame, cls: type[Evaluator], keys: pl.DataFrame) -> pl.DataFrame:
    """Return ``result`` as the local engine gives it: keys from ``_pos``, in its order.

    The workers send each result row's position among the scored rows instead of its keys
    (an integer instead of three columns of text), and the keys are gathered here. The
    local engine scores blocks of ``cls.block_rows`` rows (all rows when None), and each
    block lists its first metric for every row, then the next metric: the order is by
    (block, metric, row), metrics in the order the evaluator gives them. One integer key
    holds all three, and a result already in that order is not copied.
    """
    n_rows = keys.height
    block = cls.block_rows or max(n_rows, 1)
    metrics = result.get_column("metric").unique(maintain_order=True).to_list()
    rank = pl.col("metric").replace_strict(
        {m: i for i, m in enumerate(metrics)}, return_dtype=pl.Int64
    )
    pos = pl.col(_POS).cast(pl.Int64)
    order = result.select(((pos // block) * len(metrics) + rank) * n_rows + pos).to_series()
    if not order.is_sorted():
        result = result.gather(order.arg_sort())
    found = keys.gather(result.get_column(_POS))
    return (
        pl.concat([found, result.drop(_POS)], how="horizontal")
        .select(list(RESULT_SCHEMA))
        .cast(RESULT_SCHEMA)
    )


def _run(
    ray: Any,  # noqa: ANN401 - the ray module
    engine: RayEngine,
    jobs: list[tuple[type[Evaluator], dict[str, object]]],
    folder: Path,
) -> Iterator[Any]:
    """Yield the result batches (pyarrow tables with an ``evaluator`` column), in row order."""
    with _dataset(ray, engine, jobs, folder, None) as ds:
        yield from ds.iter_batches(batch_size=None, batch_format="pyarrow")


@contextlib.contextmanager
def _dataset(
    ray: Any,  # noqa: ANN401 - the ray module
    engine: RayEngine,
    jobs: list[tuple[type[Evaluator], dict[str, object]]],
    folder: Path,
    keys: dict[str, str] | None,
) -> Iterator[Any]:
    """Yield the Ray dataset scoring the shards in ``folder`` (tasks, or model actors).

    With ``keys`` (each evaluator's scoring key) the batches are whole rows of the lab's
    ``scores`` table, to be written by the workers; without, compact results for the driver.
    """
    context = ray.data.DataContext.get_current()
    saved = (
        context.execution_options.preserve_order,
        context.enable_progress_bars,
        context.print_on_execution_start,
    )
    # Row order keeps the merge cheap; Ray's own bars and execution plans would print over
    # ours (the engine shows one tqdm bar, as the local engine does).
    context.execution_options.preserve_order = keys is None
    context.enable_progress_bars = context.print_on_execution_start = False
    # Ray Data reports each run and each write at INFO on stderr: noise in a notebook cell.
    log = logging.getLogger("ray.data")
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        ds = ray.data.read_parquet(str(folder))
        size = _batch_rows(engine, [c for c, _ in jobs])
        if any(loads_model(c) for c, _ in jobs):
            gpus = int(ray.cluster_resources().get("GPU", 0))
            pool = engine.actors or gpus or max(1, int(ray.cluster_resources().get("CPU", 1)) // 4)
            ds = ds.map_batches(
                _ModelScorer,
                fn_constructor_args=(jobs, keys),
                batch_size=size,
                batch_format="pyarrow",
                compute=ray.data.ActorPoolStrategy(size=pool),
                num_gpus=1 if gpus else 0,
            )
        else:
            ds = ds.map_batches(
                score_batch,
                fn_args=(jobs,),
                fn_kwargs={"keys": keys},
                batch_size=size,
                batch_format="pyarrow",
            )
        yield ds
    finally:
        (
            context.execution_options.preserve_order,
            context.enable_progress_bars,
            context.print_on_execution_start,
        ) = saved
        log.setLevel(level)


def score_batch(
    batch: Any,  # noqa: ANN401 - a pyarrow table
    jobs: list[tuple[type[Evaluator], dict[str, object]]],
    ctx: Context | None = None,
    keys: dict[str, str] | None = None,
) -> Any:  # noqa: ANN401 - a pyarrow table
    """Score one Arrow batch in a worker with each evaluator's own ``score``.

    Each result row names its answer by ``_pos`` (a join within the batch, done here in
    parallel) rather than by its keys, and metric and evaluator travel dictionary-encoded:
    the bytes sent to the driver shrink about threefold. With ``keys``, rows of the lab's
    ``scores`` table instead, which the worker writes to disk itself.
    """
    frame = pl.from_arrow(batch)
    assert isinstance(frame, pl.DataFrame)  # a table always converts to a frame
    ctx = ctx or Context()
    if keys is not None:
        return pl.concat(
            [
                score_rows(
                    cls.keep_asked(cls().score(frame, params, ctx), params), cls.id, keys[cls.id]
                )
                for cls, params in jobs
            ]
        ).to_arrow()
    rows, positions = frame.drop(_POS), frame.select(*_KEY, _POS)
    parts = [
        cls.keep_asked(cls().score(rows, params, ctx), params)
        .select(list(RESULT_SCHEMA))
        .join(positions, on=_KEY, how="left", maintain_order="left")
        .select(
            _POS,
            pl.col("metric").cast(pl.Categorical),
            "value",
            "detail",
            evaluator=pl.lit(cls.id, pl.Categorical),
        )
        for cls, params in jobs
    ]
    return pl.concat(parts).to_arrow()


class _ModelScorer:
    """A Ray actor scoring batches with a model evaluator; its model loads once per actor.

    The loaders (:func:`evalnb.models.encoder.get_encoder`, the classifier and language-model
    loaders) cache per process, and an actor is one long-lived process, so the first batch
    loads the model and every later batch reuses it.
    """

    def __init__(
        self,
        jobs: list[tuple[type[Evaluator], dict[str, object]]],
        keys: dict[str, str] | None = None,
    ) -> None:
        self._jobs, self._ctx, self._keys = jobs, Context(), keys

    def __call__(self, batch: Any) -> Any:  # noqa: ANN401 - pyarrow tables
        return score_batch(batch, self._jobs, self._ctx, self._keys)


def _shard_folder(engine: RayEngine, ray: Any, evaluator: str, lab_path: Path | None) -> Path:  # noqa: ANN401
    """Return a new folder for this run's shards, one every node of the cluster can read."""
    name = f"{evaluator}-{uuid.uuid4().hex[:12]}"
    if engine.shards is not None:
        return Path(engine.shards) / name
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    if len(nodes) > 1:
        msg = (
            f"the Ray cluster has {len(nodes)} nodes, and the default shard folder is on this "
            "machine only; pass RayEngine(shards=...) a folder mounted at the same path on "
            "every node (NFS, a shared volume)"
        )
        raise EvalnbError(msg)
    base = lab_path.with_name(lab_path.name + ".shards") if lab_path is not None else None
    return (base or Path(tempfile.gettempdir()) / "evalnb-shards") / name
