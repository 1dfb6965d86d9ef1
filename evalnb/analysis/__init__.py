"""What the scores say: leaderboards with CIs, classification macro scores, problems, insights, judge reports, tables, charts, the HTML report and the archive writer.

The chart, report and archive modules load Altair, so this ``__init__`` leaves them to
be imported where they are used. May import: ``evaluators``, ``io``, ``lab``.
"""

from __future__ import annotations

from evalnb.analysis.derived import Analysed, analyse
from evalnb.analysis.tables import RichTable, table

__all__ = ["Analysed", "RichTable", "analyse", "table"]
