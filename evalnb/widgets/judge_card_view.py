"""The judge card's view: its lit lines, and below them the eye at a measure's worst answer.

The card (:class:`evalnb.judges.JudgeCard`) holds the numbers and, per measure, the answers that show
it worst. This view draws the card's own HTML, offers one button per measure that kept an
example (red ones first), and opens the eye below at the answer the card names for the
button clicked (:meth:`evalnb.Eye.focus`). The eye is built on the first click: a card is
often read without one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import ipywidgets

from evalnb.widgets.eye import Eye

if TYPE_CHECKING:
    from evalnb.judge_reliability.card import JudgeCard
    from evalnb.lab.core import LabCore

__all__ = ["JudgeCardView"]


class JudgeCardView(ipywidgets.VBox):  # type: ignore[misc]
    """The card, a button per measure with examples, and the eye opened by the one clicked.

    Attributes
    ----------
    buttons
        The measures to open, as toggle buttons (``value``: the measure shown, or None).
    eye
        The eval eye once a measure has been opened, else None.
    """

    def __init__(self, lab: LabCore, card: JudgeCard) -> None:
        self.lab, self.card = lab, card
        self.eye: Eye | None = None
        flagged = set(card.flagged)
        kept = [m for m in card.frame["measure"] if len(card.examples.get(m, ()))]
        measures = sorted(kept, key=lambda m: m not in flagged)  # red first, else card order

        def counted(m: str) -> str:
            k = len(card.examples[m])
            return f"{m}: {k} answer{'s' if k != 1 else ''} kept"

        self.buttons = ipywidgets.ToggleButtons(
            options=measures,
            value=None,
            description="Worst of:",
            tooltips=[counted(m) for m in measures],
            # Each label whole: a fixed width cut "pass rate of dummy: I don't know." short.
            style={"button_width": "auto"},
        )
        self.evidence = ipywidgets.HTML()
        self.buttons.observe(self._open, names=["value"])
        self.detail = ipywidgets.VBox()
        parts: list[ipywidgets.Widget] = [ipywidgets.HTML(card.html())]
        if measures:
            parts.append(self.buttons)
        else:
            parts.append(ipywidgets.HTML("<p>No measure kept an example: every probe passed.</p>"))
        super().__init__([*parts, self.detail])

    def show(self, measure: str) -> Eye:
        """Open the eye at the answer that shows ``measure`` worst; return the eye."""
        self.buttons.value = measure  # the observer opens it, as a click does
        assert self.eye is not None  # set by _open
        return self.eye

    def _open(self, change: dict[str, Any]) -> None:
        measure = change["new"]
        if measure is None:
            self.detail.children = []
            return
        if self.eye is None:
            self.eye = Eye(self.lab)
        self.eye.focus(self.card.evaluator, self.card.metric, self.card.worst(measure))
        self.evidence.value = self.card.evidence(measure)
        self.detail.children = [self.evidence, self.eye] if self.evidence.value else [self.eye]
