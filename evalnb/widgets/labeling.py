"""What both labelers share: the front end (``labeler.js``) and the traits it reads.

:class:`~evalnb.widgets.labeler.Labeler` labels a lab's rows into its store;
:class:`~evalnb.widgets.queue_labeler.QueueLabeler` labels a review queue's items on a
server. The view cannot tell them apart: each fills the same traits.
"""

from __future__ import annotations

from typing import Any, Protocol, cast

import traitlets

from evalnb.widgets.base import EvalWidget

__all__ = ["LabelingActions", "LabelingView"]

_AGREE_IS_NOT_BLIND = (
    "mode='agree' asks whether you agree with the metric's verdict, which blind labelling "
    "hides until you label: pass blind=False to label in agree mode"
)


class LabelingActions(Protocol):
    """What a labeler does when the browser sends a key's message (each subclass has these)."""

    def label(self, verdict: str, note: str | None = None) -> None:
        """Label the item on screen and move on (keys p/f, a/d)."""

    def undo(self) -> None:
        """Undo the last label, or go back to it (key u)."""

    def go(self, position: int) -> None:
        """Show item ``position`` (keys ←/→)."""

    def next_batch(self) -> None:
        """Draw the next batch, or sync a queue (key b)."""

    def apply(self) -> None:
        """Store the recalibrated threshold (the button), where the labeler may."""


class LabelingView(EvalWidget):
    """The labeler's synced traits (a base class: use ``evalnb.labeler``)."""

    _bundle = "labeler"
    position = traitlets.Int(0).tag(sync=True)
    """Index of the item on screen."""
    reviewer = traitlets.Unicode("").tag(sync=True)
    """Name recorded with every label."""
    mode = traitlets.Enum(["pass_fail", "agree"], "pass_fail").tag(sync=True)
    """``pass_fail`` (keys p/f) or ``agree`` (keys a/d against the metric's verdict)."""
    blind = traitlets.Bool(default_value=True).tag(sync=True)
    """Hide the metric's value and verdict until the item is labelled (the default).

    Labels that calibrate a metric must not be anchored by it: a reviewer shown "metric
    says pass" agrees more often than one who judged the answer alone, and the threshold
    fitted to those labels then confirms the metric instead of checking it."""
    _item = traitlets.Dict(allow_none=True, default_value=None).tag(sync=True)
    _progress = traitlets.Dict().tag(sync=True)
    _result = traitlets.Dict(allow_none=True, default_value=None).tag(sync=True)
    _points = traitlets.Bytes(b"").tag(sync=True)
    _bins = traitlets.Bytes(b"").tag(sync=True)
    _error = traitlets.Unicode("").tag(sync=True)

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)
        if self.blind and self.mode == "agree":
            raise ValueError(_AGREE_IS_NOT_BLIND)
        self.on_msg(self._on_msg)

    @traitlets.validate("mode")
    def _sighted_agree(self, proposal: dict[str, Any]) -> str:
        if proposal["value"] == "agree" and self.blind:
            raise traitlets.TraitError(_AGREE_IS_NOT_BLIND)
        return str(proposal["value"])

    def resolve(self, verdict: str, metric_pass: bool | None) -> str:
        """Return ``pass``/``fail`` for a key: as given, or ``agree``/``disagree`` mapped.

        Agreeing needs the metric's verdict seen (not blind) and scored.
        """
        if verdict not in ("agree", "disagree"):
            return verdict
        if self.blind or metric_pass is None:
            msg = (
                "agree/disagree compares with the metric's verdict, which is hidden (blind "
                "review) or missing here: label pass or fail"
            )
            raise ValueError(msg)
        return "pass" if metric_pass == (verdict == "agree") else "fail"

    def shown(self, item: dict[str, Any] | None) -> dict[str, Any] | None:
        """Return the item as the reviewer may see it: blind, the score waits for the label."""
        if item is None or not self.blind or item.get("human") is not None:
            return item
        return {**item, "value": None, "threshold": None, "passed": None, "hidden": True}

    def _on_msg(self, _widget: object, content: dict[str, Any], _buffers: object) -> None:
        action = content.get("action")
        this = cast("LabelingActions", self)
        self._error = ""
        try:
            if action == "label":
                this.label(str(content["verdict"]), content.get("note"))
            elif action == "undo":
                this.undo()
            elif action == "move":
                this.go(self.position + int(content.get("by", 0)))
            elif action == "next_batch":
                this.next_batch()
            elif action == "apply":
                this.apply()
        except (ValueError, KeyError) as err:  # shown in the widget, never swallowed silently
            self._error = str(err)
