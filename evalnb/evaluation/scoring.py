"""Scoring a batch of a lab's rows: each evaluator's rows still to score, here or on Ray.

:class:`Scorer` is what ``evaluate`` hands to both of its walks: the walk in memory gives
it all the rows at once, the walk on disk (:mod:`evalnb.evaluation.on_disk`) a batch at a
time. It adds the agents' trajectories when an evaluator reads them, skips the answers an
evaluator already scored under the same parameters, and sends each evaluator where it
runs: the judges and objects made in this process here, the others to the Ray cluster
when there is one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

import polars as pl

from evalnb.evaluation.base import Context, JudgeRouter
from evalnb.evaluation.ray_engine import loads_model, score_with_ray
from evalnb.lab.media_rows import with_media
from evalnb.lab.rankings import with_rankings
from evalnb.lab.trajectories import with_trajectories

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from tqdm import tqdm

    from evalnb.evaluation.base import Evaluator
    from evalnb.evaluation.ray_engine import RayEngine
    from evalnb.lab.core import LabCore
    from evalnb.llm.client import LLMClient

__all__ = ["Scorer"]

_KEY = ["case_id", "model", "sample"]


@dataclass
class Scorer:
    """Score rows of ``lab`` with ``classes`` under their resolved parameters.

    Parameters
    ----------
    lab
        The lab the rows come from (its steps, reference calls and store path).
    classes
        The evaluators to run.
    resolved
        Each evaluator's parameters, resolved (:meth:`Evaluator.resolve`).
    bar
        The progress bar, advanced by answer × evaluator.
    judge
        The LLM client the judges call, or a :class:`~evalnb.evaluation.base.JudgeRouter`
        that picks one per row.
    ray
        The Ray engine, when the evaluation runs on a cluster.
    """

    lab: LabCore
    classes: Sequence[type[Evaluator]]
    resolved: Mapping[str, Mapping[str, object]]
    bar: tqdm[object]
    judge: LLMClient | JudgeRouter | None = None
    ray: RayEngine | None = None
    _steps: pl.DataFrame | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        # Steps kept on disk are read a batch of rows at a time; in memory, they are at hand.
        if self.trajectories and "steps" not in self.lab.on_disk:
            self._steps = self.lab.table("steps")

    @property
    def trajectories(self) -> bool:
        """Whether an evaluator reads the agents' steps (the rows then carry them)."""
        return any(c.trajectory for c in self.classes)

    def score(
        self,
        rows: pl.DataFrame,
        done_of: Mapping[str, pl.DataFrame],
        which: Sequence[type[Evaluator]] | None = None,
    ) -> dict[str, pl.DataFrame]:
        """Score the rows each evaluator has not scored yet; return each one's new result rows.

        Parameters
        ----------
        rows
            Output rows (:meth:`~evalnb.lab.core.LabCore.rows` or one of its batches).
        done_of
            Per evaluator, the answers (case, model, sample) it already scored.
        which
            The evaluators to run on these rows (all of them by default).
        """
        classes = self.classes if which is None else which
        if self.trajectories:  # agent evaluators read each row's steps
            rows = with_trajectories(self.lab, rows, self._steps)
        if any(c.ranked for c in classes):  # retrieval evaluators read rankings and grades
            rows = with_rankings(self.lab, rows)
        ray, bar = self.ray, self.bar
        # On Ray, evaluators with every row to score and no model to load share one pass.
        shared = (
            []
            if ray is None
            else [
                (c, self.resolved[c.id])
                for c in classes
                if not (c.judge or loads_model(c) or done_of[c.id].height)
            ]
        )
        pending = score_with_ray(ray, shared, rows, bar, self.lab.path) if ray and shared else {}
        out: dict[str, pl.DataFrame] = {}
        for cls in classes:
            done = done_of[cls.id]
            todo = rows.join(done, on=_KEY, how="anti") if done.height else rows
            bar.set_postfix_str(cls.id)
            bar.update(rows.height - todo.height)
            if not todo.height:
                continue
            if cls.id in pending:
                out[cls.id] = pending[cls.id]
            elif ray is not None and not (cls.judge or cls.uses_judge or cls.local_only):
                # judges wait on the LLM host, objects made here cannot be rebuilt: both run here
                job = [(cls, self.resolved[cls.id])]
                out[cls.id] = score_with_ray(ray, job, todo, bar, self.lab.path)[cls.id]
            else:
                out[cls.id] = self._in_blocks(cls, todo)
        return out

    def _in_blocks(self, cls: type[Evaluator], rows: pl.DataFrame) -> pl.DataFrame:
        """Score ``rows`` here in blocks of ``cls.block_rows`` (all at once when None)."""
        router = self.judge if isinstance(self.judge, JudgeRouter) else None
        client = router.strongest if router is not None else cast("LLMClient | None", self.judge)
        ctx = Context(progress=self.bar, judge=client)
        block = cls.block_rows or max(rows.height, 1)
        parts = []
        for start in range(0, rows.height, block):
            part = rows.slice(start, block)
            if cls.reads_media and self.lab.height("media"):
                part = with_media(self.lab, part)
            params = self.resolved[cls.id]
            if router is not None and cls.judge:  # the router picks each row's judge
                result = router.judge_rows(cls(), part, params, ctx)
            else:
                result = cls().score(part, params, ctx)
            parts.append(cls.keep_asked(result, params))
            self.bar.update(part.height)
        return pl.concat(parts)
