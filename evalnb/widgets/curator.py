"""The suite curator: review generated test cases one at a time; accept, edit, exclude.

Each decision goes to the lab's append-only ``curation`` table (committed before the view
moves on), so a killed kernel or a second reviewer in another kernel loses nothing. The
card shows what a reviewer needs to judge a case: the question, the expected answer, the
passage it rests on, the source chunk and its validation scores.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import polars as pl
import traitlets

from evalnb.generation.curation import curate, curation_view
from evalnb.lab.verdicts import finite_or_none
from evalnb.widgets.base import EvalWidget

if TYPE_CHECKING:
    from collections.abc import Sequence

    from evalnb.lab.core import LabCore

__all__ = ["Curator", "curator"]

_SOURCE_CHARS = 6000  # the card shows this much of the source; the store keeps it whole


class Curator(EvalWidget):
    """Review a suite's cases: ``a`` accept, ``x`` exclude, ``e`` edit, ``r`` restore.

    ``←``/``→`` move, ``n`` write a note (kept with the next decision). An edit opens the
    prompt and the expected answer for editing; ``Ctrl+Enter`` saves, ``Esc`` cancels.
    Every decision is stored before the view moves to the next undecided case.

    Synced traits
    -------------
    position : int
        Index of the case shown.
    reviewer : str
        Who is curating (stored with every decision).

    Examples
    --------
    >>> import evalnb, polars as pl
    >>> lab = evalnb.load(pl.DataFrame({"prompt": ["What is 2+2?", "Capital of France?"],
    ...                                 "expected": ["4", "Paris"]}))
    >>> w = evalnb.curator(lab, reviewer="ann")
    >>> w.accept(); w.exclude(note="off topic")
    >>> lab.curation.view()["status"].to_list()
    ['accepted', 'excluded']
    """

    _bundle = "curator"
    position = traitlets.Int(0).tag(sync=True)
    """Index of the case on screen."""
    reviewer = traitlets.Unicode("").tag(sync=True)
    """Name stored with every decision."""
    _item = traitlets.Dict(allow_none=True, default_value=None).tag(sync=True)
    _progress = traitlets.Dict().tag(sync=True)
    _error = traitlets.Unicode("").tag(sync=True)

    def __init__(self, lab: LabCore, *, reviewer: str, cases: Sequence[str] | None = None) -> None:
        if not reviewer:
            msg = "the curator needs reviewer='<your name>': every decision records who made it"
            raise ValueError(msg)
        self._lab = lab
        view = curation_view(lab.cases, lab.table("curation"))
        ids = view["case_id"].to_list() if cases is None else list(cases)
        unknown = sorted(set(ids) - set(view["case_id"].to_list()))
        if unknown:
            msg = f"no cases {unknown[:5]} in this lab; pass ids from lab.cases"
            raise KeyError(msg)
        self._ids = ids
        super().__init__(reviewer=reviewer)
        self.on_msg(self._on_msg)
        self.observe(lambda _c: self._show(), names=["position"])
        pending = [i for i, s in enumerate(self._statuses()) if s == "pending"]
        self.position = pending[0] if pending else 0
        self._show()

    # -- actions (Python API; the browser sends the same as messages) ----------------------
    def accept(self, note: str | None = None) -> None:
        """Accept the case on screen as it is, and move on."""
        self._decide("accept", note=note)

    def exclude(self, note: str | None = None) -> None:
        """Exclude the case on screen from the suite (``note``: why), and move on."""
        self._decide("exclude", note=note)

    def restore(self, note: str | None = None) -> None:
        """Take back an exclusion: the case is pending again."""
        self._decide("restore", note=note, advance=False)

    def edit(
        self,
        *,
        prompt: str | None = None,
        expected: str | Sequence[str] | None = None,
        note: str | None = None,
    ) -> None:
        """Change the prompt and/or the expected answer(s) of the case on screen; move on."""
        item = self._item or {}
        # Only what changed is recorded, so a later edit of the other field is not undone.
        new_prompt = prompt if prompt is not None and prompt != item.get("prompt") else None
        answers = [expected] if isinstance(expected, str) else expected
        new_expected = (
            list(answers) if answers is not None and list(answers) != item.get("expected") else None
        )
        if new_prompt is None and new_expected is None:
            self._decide("accept", note=note)  # saved unchanged: that is an acceptance
            return
        self._decide("edit", prompt=new_prompt, expected=new_expected, note=note)

    def go(self, position: int) -> None:
        """Show case ``position`` (clamped to the cases)."""
        self.position = max(0, min(position, len(self._ids) - 1))

    @property
    def item(self) -> dict[str, Any] | None:
        """The case on screen, as curated so far, with its source and validation scores."""
        return None if self._item is None else dict(self._item)

    def _decide(self, action: str, *, advance: bool = True, **fields: Any) -> None:  # noqa: ANN401
        if not self._ids:
            msg = "there is no case to curate: the lab has none"
            raise ValueError(msg)
        curate(self._lab, self._ids[self.position], action, reviewer=self.reviewer, **fields)
        statuses = self._statuses()
        after = [i for i, s in enumerate(statuses) if s == "pending" and i > self.position]
        nxt = after[0] if advance and after else self.position
        if nxt == self.position:
            self._show()
        else:
            self.position = nxt

    def _statuses(self) -> list[str]:
        view = curation_view(self._lab.cases, self._lab.table("curation"))
        status = dict(view.select("case_id", "status").iter_rows())
        return [status.get(i, "pending") for i in self._ids]

    def _on_msg(self, _widget: object, content: dict[str, Any], _buffers: object) -> None:
        action = content.get("action")
        note = content.get("note") or None
        self._error = ""
        try:
            if action == "accept":
                self.accept(note)
            elif action == "exclude":
                self.exclude(note)
            elif action == "restore":
                self.restore(note)
            elif action == "edit":
                self.edit(prompt=content.get("prompt"), expected=content.get("expected"), note=note)
            elif action == "move":
                self.go(self.position + int(content.get("by", 0)))
        except (ValueError, KeyError) as err:  # shown in the widget, never swallowed silently
            self._error = str(err)

    # -- view ------------------------------------------------------------------------------
    def _show(self) -> None:
        view = curation_view(self._lab.cases, self._lab.table("curation"))
        mine = view.filter(pl.col("case_id").is_in(self._ids))
        counts = dict(mine.group_by("status").len().iter_rows())
        with self.hold_sync():
            self._progress = {
                "total": len(self._ids),
                "position": self.position,
                **{s: int(counts.get(s, 0)) for s in ("pending", "accepted", "edited", "excluded")},
            }
            self.set_trait("_item", self._detail(view) if self._ids else None)

    def _detail(self, view: pl.DataFrame) -> dict[str, Any]:
        case_id = self._ids[self.position]
        row = view.filter(pl.col("case_id") == case_id).row(0, named=True)
        found = self._lab.cases.filter(pl.col("case_id") == case_id)
        case = found.row(0, named=True) if found.height else {}  # excluded, applied: log only
        source = "\n\n".join(case.get("corpus") or [])
        try:
            extra = json.loads(case.get("extra") or "{}")
        except ValueError:
            extra = {}
        checks = self._lab.table("validation").filter(pl.col("case_id") == case_id)
        evidence = extra.get("evidence") if isinstance(extra, dict) else None
        return {
            "case_id": case_id,
            "status": row["status"],
            "prompt": row["prompt"],
            "expected": row["expected"] or [],
            "question_type": row["question_type"],
            "topic": row["topic"],
            "reviewer": row["reviewer"],
            "note": row["note"],
            "evidence": [str(e) for e in evidence] if isinstance(evidence, list) else [],
            "source": source[:_SOURCE_CHARS],
            "source_cut": len(source) > _SOURCE_CHARS,
            "validation": {
                m: finite_or_none(v) for m, v in checks.select("metric", "value").iter_rows()
            },
        }


def curator(lab: LabCore, *, reviewer: str, cases: Sequence[str] | None = None) -> Curator:
    """Open the suite curator on ``lab`` (``cases``: only these ids, in this order)."""
    return Curator(lab, reviewer=reviewer, cases=cases)
