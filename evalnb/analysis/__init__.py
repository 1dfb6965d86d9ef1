"""What the scores say: leaderboards, problems, insights, reports, charts, the archive writer.

Also classification macro scores, the judges' report and rich HTML tables.

The chart, report and archive modules load Altair, so this ``__init__`` leaves them to
be imported where they are used.

May import ``evaluation``, ``io`` and the layers below them.
"""

from __future__ import annotations

from evalnb.analysis.derived import Analysed, analyse
from evalnb.analysis.tables import RichTable, table

__all__ = ["Analysed", "RichTable", "analyse", "table"]
