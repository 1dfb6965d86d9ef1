"""The anywidget components' Python side: eval eye, weakness grid, labeler, suite curator.

They only display and select; what they draw comes from :mod:`evalnb.transforms`.

May import ``transforms``, ``analysis``, ``calibration``, ``diagnosis``, ``generation``,
``robustness`` and below.
"""

from __future__ import annotations

from evalnb.widgets.curator import Curator, curator
from evalnb.widgets.eye import Eye
from evalnb.widgets.labeler import Labeler
from evalnb.widgets.weakness import Weakness, weakness

__all__ = ["Curator", "Eye", "Labeler", "Weakness", "curator", "weakness"]
