"""What both labelers share: the front end (``labeler.js``) and the traits it reads.

:class:`~evalnb.widgets.labeler.Labeler` labels a lab's rows into its store;
:class:`~evalnb.widgets.queue_labeler.QueueLabeler` labels a review queue's items on a
server. The view cannot tell them apart: each fills the same traits.
"""

from __future__ import annotations

import traitlets

from evalnb.widgets.base import EvalWidget

__all__ = ["LabelingView"]


class LabelingView(EvalWidget):
    """The labeler's synced traits (a base class: use ``evalnb.labeler``)."""

    _bundle = "labeler"
    position = traitlets.Int(0).tag(sync=True)
    """Index of the item on screen."""
    reviewer = traitlets.Unicode("").tag(sync=True)
    """Name recorded with every label."""
    mode = traitlets.Enum(["pass_fail", "agree"], "pass_fail").tag(sync=True)
    """``pass_fail`` (keys p/f) or ``agree`` (keys a/d against the metric's verdict)."""
    _item = traitlets.Dict(allow_none=True, default_value=None).tag(sync=True)
    _progress = traitlets.Dict().tag(sync=True)
    _result = traitlets.Dict(allow_none=True, default_value=None).tag(sync=True)
    _points = traitlets.Bytes(b"").tag(sync=True)
    _bins = traitlets.Bytes(b"").tag(sync=True)
    _error = traitlets.Unicode("").tag(sync=True)
