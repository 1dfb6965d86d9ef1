"""Reading and writing test labs: format sniffing, every importer and exporter, archives read back.

May import: ``lab``.
"""

from __future__ import annotations

from evalnb.io.load import FORMATS, detect_format

__all__ = ["FORMATS", "detect_format"]
