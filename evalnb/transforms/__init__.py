"""Pure table transforms behind the widgets: no browser, no widget, only Polars in and out.

Each widget level is cut from an index built once per lab, so an interaction costs a filter
of small aggregate tables (and, at the model level, of one (metric, model) partition).
"""

from __future__ import annotations

from evalnb.transforms.cases import (
    BIN_SCHEMA,
    DOT_SCHEMA,
    case_detail,
    compare_dots,
    eye_dots,
    score_bins,
)
from evalnb.transforms.eye import (
    BAR_SCHEMA,
    LEVELS,
    NODE_SCHEMA,
    EyeIndex,
    check_path,
    eye_bars,
    eye_index,
    eye_nodes,
    path_titles,
)
from evalnb.transforms.weakness import (
    WeaknessIndex,
    cell_dots,
    grid_cells,
    restrict,
    univariate,
    weakness_index,
    weaknesses,
)

__all__ = [
    "BAR_SCHEMA",
    "BIN_SCHEMA",
    "DOT_SCHEMA",
    "LEVELS",
    "NODE_SCHEMA",
    "EyeIndex",
    "WeaknessIndex",
    "case_detail",
    "cell_dots",
    "check_path",
    "compare_dots",
    "eye_bars",
    "eye_dots",
    "eye_index",
    "eye_nodes",
    "grid_cells",
    "path_titles",
    "restrict",
    "score_bins",
    "univariate",
    "weakness_index",
    "weaknesses",
]
