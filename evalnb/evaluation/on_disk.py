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

from evalnb.evaluation.base import score_rows
from evalnb.evaluation.ray_engine import loads_model
from evalnb.lab.score_parts import ScoreParts
from evalnb.lab.shards import ShardWriter

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    import polars as pl

    from evalnb.evaluation.base import Evaluator
    from evalnb.evaluation.ray_engine import RayScorer
    from evalnb.evaluation.scoring import Scorer
    from evalnb.lab.core import LabCore
    from evalnb.lab.parts import PartChange

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
    keys: Mapping[str, str],
    scorer: Scorer,
    remote: RayScorer | None = None,
) -> OnDisk:
    """Score every batch of ``lab``'s rows; write the new scores as parts.

    Parameters
    ----------
    lab
        A lab whose store keeps ``scores`` as parts.
    keys
        Each evaluator's scoring key (the ``params`` of its scores), by id.
    scorer
        Scores one batch here (:class:`~evalnb.evaluation.scoring.Scorer`).
    remote
        The Ray engine, when it runs: every evaluator but the LLM judges goes to the
        cluster instead, whose workers write the scores themselves.

    Returns
    -------
    OnDisk
        The parts to add and drop (nothing is in the store's list until it is committed;
        on an error here, what was written is deleted).
    """
    jobs = [(cls, keys[cls.id]) for cls in scorer.classes]
    parts = ScoreParts(lab, keys)
    done = parts.done()
    groups = [] if remote is None else _groups([j for j in jobs if not j[0].judge], done)
    here = [cls for cls, _ in jobs if not any(cls is c for g in groups for c, _ in g)]
    shards = [ShardWriter(remote.shard_folder(g[0][0].id)) for g in groups] if remote else []
    try:
        for batch in lab.row_batches():
            for evaluator, new in (scorer.score(batch, done, here) if here else {}).items():
                parts.write(evaluator, score_rows(new, evaluator, keys[evaluator]))
            for group, rows in zip(groups, shards, strict=True):
                mine = done[group[0][0].id]  # a group of several has nothing done
                todo = batch.join(mine, on=_KEY, how="anti") if mine.height else batch
                rows.write(todo)
                if remote is not None:  # always, with groups
                    remote.advance((batch.height - todo.height) * len(group))
        for group, rows in zip(groups, shards, strict=True):
            _on_cluster(parts, group, rows, remote)
        change = parts.finish()
    except BaseException:
        parts.discard()
        raise
    finally:
        for rows in shards:
            rows.discard()
            if remote is not None:
                remote.release(rows.folder)
    return OnDisk(change, parts.written())


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
    parts: ScoreParts,
    group: Sequence[tuple[type[Evaluator], str]],
    rows: ShardWriter,
    remote: RayScorer | None,
) -> None:
    """Score a group's row shards on the cluster into a new part (none when nothing to score)."""
    assert remote is not None
    if not rows.written:
        return
    rows.close()
    folder = parts.new_folder()
    remote.write_scores(group, rows.folder, folder)
    remote.advance(rows.written * len(group))
    parts.add_folder(folder, [cls.id for cls, _ in group])
