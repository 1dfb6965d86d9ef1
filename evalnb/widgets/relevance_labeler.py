"""The relevance labeler: a reviewer grades pooled documents 0–3 for their query, keyboard first.

TREC's assessors grade a pool, the union of every retriever's top ``k`` per query, so no
retriever's documents go unjudged (:func:`evalnb.calibration.relevance.relevance_pool`).
This widget shows the pool one document at a time: the query, the passage, the retrievers
that ranked it and its best rank; keys ``0``–``3`` grade it (0 nothing to do with the
query … 3 devoted to it, with its exact answer), ``←``/``→`` move. Each grade is committed
to ``lab.qrels`` (as ``reviewer:<name>``) before the widget moves on, so a killed kernel
loses nothing, and reopening draws the pool again without what this reviewer graded.

Blind by default: a judge's grade of the same document (``lab.retrieval.judge``) is hidden
until the reviewer has graded it, because the reviewer's grade is what measures the judge
(``lab.judges.relevance_agreement``) and must not be anchored by it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import polars as pl
import traitlets

from evalnb.calibration.relevance import GRADES, add_grade, relevance_pool
from evalnb.lab.documents import documents_of
from evalnb.lab.rankings import JUDGE_SOURCE
from evalnb.widgets.base import EvalWidget

if TYPE_CHECKING:
    from evalnb.lab.core import LabCore

__all__ = ["RelevanceLabeler"]


class RelevanceLabeler(EvalWidget):
    """Grade a lab's pooled retrieved documents 0–3 (use ``evalnb.labeler(lab, task="relevance")``).

    Synced traits
    -------------
    position : int
        Index of the document shown in the pool.
    reviewer : str
        Who grades (stored with every grade as ``reviewer:<name>``).
    blind : bool
        Hide a judge's grade of the document until it is graded here.

    Examples
    --------
    >>> import evalnb
    >>> lab = evalnb.load({"bm25": {"q1": {"d1": 2.0, "d2": 1.0}}}, qrels={"q1": {"d9": 1}})
    >>> w = evalnb.labeler(lab, task="relevance", reviewer="ann", documents={"d1": "a", "d2": "b"})
    >>> w.grade(3); w.position
    1
    >>> lab.table("qrels").filter(lab.table("qrels")["doc_id"] == "d1")["relevance"].to_list()
    [3]
    """

    _bundle = "labeler"
    _task = traitlets.Unicode("relevance").tag(sync=True)
    position = traitlets.Int(0).tag(sync=True)
    reviewer = traitlets.Unicode("").tag(sync=True)
    blind = traitlets.Bool(default_value=True).tag(sync=True)
    _item = traitlets.Dict(allow_none=True, default_value=None).tag(sync=True)
    _progress = traitlets.Dict().tag(sync=True)
    _error = traitlets.Unicode("").tag(sync=True)

    def __init__(
        self,
        lab: LabCore,
        *,
        reviewer: str,
        k: int = 10,
        documents: object = None,
        blind: bool = True,
    ) -> None:
        if not reviewer.strip():
            msg = "the labeler needs reviewer='<your name>': every grade records who gave it"
            raise ValueError(msg)
        self._lab = lab
        source = f"reviewer:{reviewer}"
        # The pool as drawn now, less what this reviewer graded: what the session works through.
        self._pool = relevance_pool(lab, k).join(
            lab.table("qrels").filter(pl.col("source") == source).select("case_id", "doc_id"),
            on=["case_id", "doc_id"],
            how="anti",
        )
        self._texts = dict(documents_of(lab, documents).iter_rows()) if self._pool.height else {}
        self._k = k
        super().__init__(reviewer=reviewer, blind=blind)
        self.on_msg(self._on_msg)
        self.observe(lambda _c: self._show(), names=["position", "blind"])
        self._show()

    # -- actions (Python API; the browser sends the same as messages) ----------------------
    def grade(self, grade: int) -> None:
        """Grade the document on screen (0–3), commit it to ``lab.qrels``, move to the next."""
        if self._pool.is_empty():
            msg = "there is nothing to grade: every pooled document has a person's grade"
            raise ValueError(msg)
        if isinstance(grade, bool) or grade not in GRADES:
            msg = f"a grade is one of {GRADES} (0 not relevant … 3 perfectly); got {grade!r}"
            raise ValueError(msg)
        row = self._pool.row(self.position, named=True)
        add_grade(self._lab, row["case_id"], row["doc_id"], grade, reviewer=self.reviewer)
        mine = self._mine()
        ungraded = [i for i, key in enumerate(self._keys()) if key not in mine]
        later = [i for i in ungraded if i > self.position]
        target = (later or ungraded or [self.position])[0]
        if target == self.position:
            self._show()
        else:
            self.position = target

    def go(self, position: int) -> None:
        """Show document ``position`` of the pool (clamped to it)."""
        self.position = max(0, min(position, max(self._pool.height - 1, 0)))

    @property
    def pool(self) -> pl.DataFrame:
        """The documents of this session with this reviewer's grades so far (``grade``)."""
        mine = self._mine()
        return self._pool.with_columns(
            grade=pl.Series([mine.get(key) for key in self._keys()], dtype=pl.Int64)
        )

    # -- view ------------------------------------------------------------------------------
    def _grades(self, source: str | None = None) -> dict[tuple[str, str], int]:
        qrels = self._lab.table("qrels")
        chosen = (
            qrels.filter(pl.col("source") == source)
            if source is not None
            else qrels.filter(pl.col("source").str.starts_with(JUDGE_SOURCE))
        )
        return {
            (c, d): int(g) for c, d, g in chosen.select("case_id", "doc_id", "relevance").rows()
        }

    def _mine(self) -> dict[tuple[str, str], int]:
        return self._grades(f"reviewer:{self.reviewer}")

    def _keys(self) -> list[tuple[str, str]]:
        return list(zip(self._pool["case_id"], self._pool["doc_id"], strict=True))

    def _show(self) -> None:
        with self.hold_sync():
            mine = self._mine()
            keys = self._keys()
            self._progress = {
                "done": sum(k in mine for k in keys),
                "total": len(keys),
                "k": self._k,
            }
            if not keys:
                self.set_trait("_item", None)
                return
            row = self._pool.row(self.position, named=True)
            key = (row["case_id"], row["doc_id"])
            judges = self._grades()
            graded = mine.get(key)
            self.set_trait(
                "_item",
                {
                    "case_id": row["case_id"],
                    "doc_id": row["doc_id"],
                    "query": row["prompt"],
                    "passage": self._texts.get(row["doc_id"]),
                    "retrievers": list(row["models"]),
                    "best_rank": int(row["best_rank"]),
                    "grade": graded,
                    "judge_grade": None if self.blind and graded is None else judges.get(key),
                    "hidden": self.blind and graded is None and key in judges,
                },
            )

    def _on_msg(self, _widget: object, content: dict[str, Any], _buffers: object) -> None:
        self._error = ""
        try:
            if content.get("action") == "grade":
                self.grade(int(content["grade"]))
            elif content.get("action") == "move":
                self.go(self.position + int(content.get("by", 0)))
        except (ValueError, KeyError) as err:  # shown in the widget, never swallowed silently
            self._error = str(err)
