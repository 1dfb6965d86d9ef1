"""The lab's core: its tables, their schemas and DuckDB store, thresholds and verdicts, errors.

Every other package builds on it. ``LabCore`` is what lower layers take and return; the
public ``evalnb.Lab`` (:mod:`evalnb.api`) extends it.

Imports nothing else of evalnb (the bottom layer; ``version`` holds the installed version).
"""

from __future__ import annotations

from evalnb.lab.core import LabCore
from evalnb.lab.errors import EvalnbError, InputError, StoreError
from evalnb.lab.schema import SCHEMAS, TABLES

__all__ = ["SCHEMAS", "TABLES", "EvalnbError", "InputError", "LabCore", "StoreError"]
