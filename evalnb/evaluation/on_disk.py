"""``evaluate`` on a lab whose store keeps its scores on disk as Parquet parts.

Such a lab may be larger than memory, so nothing is held whole: the answers are read a
batch at a time (:meth:`~evalnb.lab.LabCore.row_batches`), each evaluator's new scores
are written to one new part a batch at a time, and one transaction swaps the parts in.
Memory holds one batch, its scores, and the keys each evaluator already scored.

Scores an evaluator gave under other parameters are replaced, as the local engine does:
only the parts holding them are rewritten, streamed from disk to disk.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import polars as pl

from evalnb.evaluation.base import RESULT_SCHEMA
from evalnb.lab.parts import PartChange, PartWriter, parts_dir, scan_parts, write_part
from evalnb.lab.schema import SCHEMAS

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from evalnb.evaluation.base import Evaluator
    from evalnb.lab.core import LabCore
    from evalnb.lab.parts import Part

__all__ = ["OnDisk", "score_on_disk", "score_rows"]

_KEY = ["case_id", "model", "sample"]


@dataclass(frozen=True)
class OnDisk:
    """What a run on disk wrote: the parts change, and each evaluator's last new scores.

    ``sample`` holds, per evaluator, a batch with a value when any batch had one (else
    its last batch): enough to warn that it scored nothing, and why.
    """

    parts: PartChange
    sample: dict[str, pl.DataFrame]


def score_rows(result: pl.DataFrame, evaluator: str, key: str) -> pl.DataFrame:
    """Return an evaluator's result rows as rows of ``scores`` (with evaluator and params)."""
    return (
        result.select(list(RESULT_SCHEMA))
        .with_columns(evaluator=pl.lit(evaluator), params=pl.lit(key))
        .select(list(SCHEMAS["scores"]))
    )


def score_on_disk(
    lab: LabCore,
    jobs: Sequence[tuple[type[Evaluator], str]],
    score: Callable[[pl.DataFrame, Mapping[str, pl.DataFrame]], dict[str, pl.DataFrame]],
) -> OnDisk:
    """Score every batch of ``lab``'s rows with ``score``; write the new scores as parts.

    Parameters
    ----------
    lab
        A lab whose store keeps ``scores`` as parts.
    jobs
        Each evaluator with its scoring key (the ``params`` of its scores).
    score
        Scores one batch: given the rows and, per evaluator, the keys it already scored,
        returns each evaluator's new result rows (the engine's own scoring, local or Ray).

    Returns
    -------
    OnDisk
        The parts to add and drop (nothing is in the store's list until it is committed;
        on an error here, what was written is deleted).
    """
    assert lab.path is not None  # parts belong to a store
    root, seen = parts_dir(lab.path), lab.parts_of("scores")
    scan = lab.scan("scores")
    done = {
        cls.id: scan.filter((pl.col("evaluator") == cls.id) & (pl.col("params") == key))
        .select(_KEY).unique().collect()
        for cls, key in jobs
    }  # fmt: skip
    writers = {cls.id: PartWriter(root, "scores", [cls.id]) for cls, _ in jobs}
    sample: dict[str, pl.DataFrame] = {}
    try:
        for batch in lab.row_batches():
            for evaluator, new in score(batch, done).items():
                key = next(k for c, k in jobs if c.id == evaluator)
                writers[evaluator].write(score_rows(new, evaluator, key))
                if evaluator not in sample or not _has_value(sample[evaluator]):
                    sample[evaluator] = new
        added = [p for p in (w.close() for w in writers.values()) if p is not None]
        rewritten, dropped = _without_stale(lab, seen, jobs)
    except BaseException:
        for w in writers.values():
            w.discard()
        raise
    change = PartChange(tuple(added + rewritten), drop=tuple(dropped), seen=seen,
                        touched=frozenset(cls.id for cls, _ in jobs))  # fmt: skip
    return OnDisk(change, sample)


def _has_value(frame: pl.DataFrame) -> bool:
    return bool(frame.get_column("value").is_not_null().any())


def _without_stale(
    lab: LabCore, seen: Sequence[Part], jobs: Sequence[tuple[type[Evaluator], str]]
) -> tuple[list[Part], list[Part]]:
    """Return the parts rewriting those with stale scores, and the parts to drop.

    A part is stale when it holds scores of these evaluators under other parameters; its
    other rows (if any) are rewritten as a new part.
    """
    assert lab.path is not None
    root = parts_dir(lab.path)
    rewritten: list[Part] = []
    dropped: list[Part] = []
    for part in seen:
        mine = [(cls.id, key) for cls, key in jobs if part.holds(cls.id)]
        if not mine:
            continue
        stale = pl.any_horizontal(
            [(pl.col("evaluator") == e) & (pl.col("params") != k) for e, k in mine]
        )
        rows = scan_parts(lab.path, "scores", [part])
        n_stale, n = rows.select(stale.sum(), pl.len()).collect().row(0)
        if not n_stale:
            continue
        dropped.append(part)
        if n_stale < n:  # streamed: the part is never held whole
            rewritten.append(write_part(root, "scores", rows.filter(~stale), part.evaluators))
    return rewritten, dropped
