"""The scores an evaluation adds to a lab kept on disk, written as new Parquet parts.

A lab whose store keeps ``scores`` as parts may be larger than memory, so an evaluation
never rewrites the table: each evaluator's new rows go to a part of its own, written a
batch at a time, and scores the same evaluators gave under other parameters are dropped by
rewriting only the parts holding them (streamed from disk to disk). Nothing is visible in
the store until the lab commits :meth:`ScoreParts.finish`'s change
(:meth:`~evalnb.lab.synced.SyncedTables.with_parts`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

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

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from pathlib import Path

    from evalnb.lab.core import LabCore
    from evalnb.lab.parts import Part

__all__ = ["ScoreParts"]

_KEY = ["case_id", "model", "sample"]


class ScoreParts:
    """Write one evaluation's new scores of a lab kept on disk, then describe the swap.

    Parameters
    ----------
    lab
        A lab whose store keeps ``scores`` as Parquet parts.
    keys
        Each evaluator's id and scoring key (the ``params`` its scores carry): rows under
        another key are stale and dropped by :meth:`finish`.

    Examples
    --------
    ``evaluate`` uses it as ``parts.write(...)`` per batch, then
    ``lab.with_parts({"scores": parts.finish()}, ...)``; on an error, :meth:`discard`.
    """

    def __init__(self, lab: LabCore, keys: Mapping[str, str]) -> None:
        if lab.path is None or "scores" not in lab.on_disk:
            msg = (
                "ScoreParts writes the scores of a lab whose store keeps them as Parquet parts; "
                f"this lab's store is {lab.path} and keeps {list(lab.on_disk)} on disk: "
                "save it with lab.save(path, on_disk=('outputs', 'scores')) first"
            )
            raise ValueError(msg)
        self._lab, self._store, self._keys = lab, lab.path, dict(keys)
        self._root = parts_dir(lab.path)
        self._seen = lab.parts_of("scores")
        self._writers: dict[str, PartWriter] = {}
        self._added: list[Part] = []
        self._rewritten: list[Part] = []

    def done(self) -> dict[str, pl.DataFrame]:
        """Return, per evaluator, the answers (case, model, sample) it already scored under its key."""
        scan = self._lab.scan("scores")
        return {
            evaluator: scan.filter((pl.col("evaluator") == evaluator) & (pl.col("params") == key))
            .select(_KEY)
            .unique()
            .collect()
            for evaluator, key in self._keys.items()
        }

    def write(self, evaluator: str, rows: pl.DataFrame) -> None:
        """Add ``rows`` (in the scores table's columns) to ``evaluator``'s new part."""
        if evaluator not in self._writers:
            self._writers[evaluator] = PartWriter(self._root, "scores", [evaluator])
        self._writers[evaluator].write(rows)

    def new_folder(self) -> Path:
        """Return a fresh folder where other processes (Ray workers) write a part's files."""
        return new_part_folder(self._root, "scores")

    def add_folder(self, folder: Path, evaluators: Iterable[str]) -> None:
        """Count a folder written by other processes as a new part holding ``evaluators``."""
        self._added.append(part_from_folder(self._root, folder, "scores", list(evaluators)))

    def finish(self) -> PartChange:
        """Publish the parts written and return the change to commit.

        The change adds the new parts and the rewrites of the parts that held stale scores,
        and drops those parts; the commit is refused when another process changed these
        evaluators' parts since the lab was read.
        """
        for writer in self._writers.values():
            part = writer.close()
            if part is not None:
                self._added.append(part)
        self._writers.clear()
        dropped = self._rewrite_stale()
        return PartChange(
            tuple(self._added + self._rewritten),
            drop=tuple(dropped),
            seen=self._seen,
            touched=frozenset(self._keys),
        )

    def written(self) -> dict[str, pl.LazyFrame]:
        """Return, per evaluator that wrote a part, a scan of the rows it wrote (before the commit)."""
        return {
            evaluator: scan_parts(self._store, "scores", holding).filter(
                pl.col("evaluator") == evaluator
            )
            for evaluator in self._keys
            if (holding := [p for p in self._added if evaluator in p.evaluators])
        }

    def discard(self) -> None:
        """Delete every part written so far (the evaluation failed before its commit)."""
        for writer in self._writers.values():
            writer.discard()
        self._writers.clear()
        remove_parts(self._root, [*self._added, *self._rewritten])
        self._added.clear()
        self._rewritten.clear()

    def _rewrite_stale(self) -> list[Part]:
        """Rewrite the parts holding stale scores without them; return the parts to drop.

        A part is stale when it holds scores of these evaluators under other parameters;
        its other rows (if any) are rewritten as a new part.
        """
        dropped: list[Part] = []
        for part in self._seen:
            mine = [(e, key) for e, key in self._keys.items() if part.holds(e)]
            if not mine:
                continue
            stale = pl.any_horizontal(
                [(pl.col("evaluator") == e) & (pl.col("params") != k) for e, k in mine]
            )
            rows = scan_parts(self._store, "scores", [part])
            n_stale, n = rows.select(stale.sum(), pl.len()).collect().row(0)
            if not n_stale:
                continue
            dropped.append(part)
            if n_stale < n:  # streamed: the part is never held whole
                self._rewritten.append(
                    write_part(self._root, "scores", rows.filter(~stale), part.evaluators)
                )
        return dropped
