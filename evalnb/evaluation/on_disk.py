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

from evalnb.evaluation.base import score_rows
from evalnb.evaluation.ray_engine import loads_model
from evalnb.lab.parts import (
    PartChange,
    PartWriter,
    new_part_folder,
    part_from_folder,
    parts_dir,
    remove_parts,
    scan_parts,
    write_part,
)
from evalnb.lab.shards import ShardWriter

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from pathlib import Path

    from evalnb.evaluation.base import Evaluator
    from evalnb.evaluation.ray_engine import RayScorer
    from evalnb.lab.core import LabCore
    from evalnb.lab.parts import Part

__all__ = ["OnDisk", "score_on_disk"]

_KEY = ["case_id", "model", "sample"]


@dataclass(frozen=True)
class OnDisk:
    """What a run on disk wrote: the parts change, and each evaluator's new scores.

    ``new`` scans, per evaluator that scored anything, the rows it wrote (from the new
    parts, before they are committed): enough to warn that it scored nothing, and why.
    """

    parts: PartChange
    new: dict[str, pl.LazyFrame]


def score_on_disk(
    lab: LabCore,
    jobs: Sequence[tuple[type[Evaluator], str]],
    score: Callable[
        [pl.DataFrame, Mapping[str, pl.DataFrame], Sequence[type[Evaluator]]],
        dict[str, pl.DataFrame],
    ],
    remote: RayScorer | None = None,
) -> OnDisk:
    """Score every batch of ``lab``'s rows; write the new scores as parts.

    Parameters
    ----------
    lab
        A lab whose store keeps ``scores`` as parts.
    jobs
        Each evaluator with its scoring key (the ``params`` of its scores).
    score
        Scores one batch here: given the rows, the keys each evaluator already scored and
        the evaluators to run, returns each one's new result rows.
    remote
        The Ray engine, when it runs: every evaluator but the LLM judges goes to the
        cluster instead, whose workers write the scores themselves.

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
    groups = [] if remote is None else _groups([j for j in jobs if not j[0].judge], done)
    here = [cls for cls, _ in jobs if not any(cls is c for g in groups for c, _ in g)]
    keys = {cls.id: key for cls, key in jobs}
    writers = {cls.id: PartWriter(root, "scores", [cls.id]) for cls in here}
    shards = [ShardWriter(remote.shard_folder(g[0][0].id)) for g in groups] if remote else []
    added: list[Part] = []
    try:
        for batch in lab.row_batches():
            for evaluator, new in (score(batch, done, here) if here else {}).items():
                writers[evaluator].write(score_rows(new, evaluator, keys[evaluator]))
            for group, rows in zip(groups, shards, strict=True):
                mine = done[group[0][0].id]  # a group of several has nothing done
                todo = batch.join(mine, on=_KEY, how="anti") if mine.height else batch
                rows.write(todo)
                if remote is not None:  # always, with groups
                    remote.advance((batch.height - todo.height) * len(group))
        added = [p for p in (w.close() for w in writers.values()) if p is not None]
        for group, rows in zip(groups, shards, strict=True):
            added.extend(_on_cluster(root, group, rows, remote))
        rewritten, dropped = _without_stale(lab, seen, jobs)
    except BaseException:
        for w in writers.values():
            w.discard()
        remove_parts(root, added)
        raise
    finally:
        for rows in shards:
            rows.discard()
            if remote is not None:
                remote.release(rows.folder)
    change = PartChange(tuple(added + rewritten), drop=tuple(dropped), seen=seen,
                        touched=frozenset(cls.id for cls, _ in jobs))  # fmt: skip
    wrote = {
        cls.id: scan_parts(lab.path, "scores", holding).filter(pl.col("evaluator") == cls.id)
        for cls, _ in jobs
        if (holding := [p for p in added if cls.id in p.evaluators])
    }
    return OnDisk(change, wrote)


def _groups(
    jobs: Sequence[tuple[type[Evaluator], str]], done: Mapping[str, pl.DataFrame]
) -> list[list[tuple[type[Evaluator], str]]]:
    """Return the evaluators that run together on the cluster.

    Those loading no model with every row to score share one pass over one set of shards;
    any other runs alone.
    """
    shared = [j for j in jobs if not loads_model(j[0]) and not done[j[0].id].height]
    alone = [[j] for j in jobs if j not in shared]
    return ([shared] if shared else []) + alone


def _on_cluster(
    root: Path,
    group: Sequence[tuple[type[Evaluator], str]],
    rows: ShardWriter,
    remote: RayScorer | None,
) -> list[Part]:
    """Score a group's row shards on the cluster into a new part; none when nothing to score."""
    assert remote is not None
    if not rows.written:
        return []
    rows.close()
    folder = new_part_folder(root, "scores")
    remote.write_scores(group, rows.folder, folder)
    remote.advance(rows.written * len(group))
    return [part_from_folder(root, folder, "scores", [cls.id for cls, _ in group])]


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
