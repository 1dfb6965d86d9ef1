"""The Python side of the anywidget components: the eval eye, the weakness grid, the labeler
and the suite curator.

They only display and select; what they draw comes from :mod:`evalnb.transforms`.

May import ``transforms``, ``analysis``, ``calibration``, ``diagnosis``, ``robustness`` and
below.
"""

from __future__ import annotations

from evalnb.widgets.curator import Curator, curator
from evalnb.widgets.eye import Eye
from evalnb.widgets.grid import Weakness, weakness
from evalnb.widgets.labeler import Labeler

__all__ = ["Curator", "Eye", "Labeler", "Weakness", "curator", "weakness"]
