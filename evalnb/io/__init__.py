"""Reading and writing test labs: format sniffing, importers, exporters, archives read back.

May import ``llm``, ``models``, ``text``, ``lab``.
"""

from __future__ import annotations

from evalnb.io.load import FORMATS, detect_format

__all__ = ["FORMATS", "detect_format"]
