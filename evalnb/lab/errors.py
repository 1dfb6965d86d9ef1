"""Exception types of evalnb.

Every error caused by user input is an :class:`InputError`: its message names the source
file, the place inside it (line for JSONL/CSV, JSON path for JSON, record for frames), the
field, what was expected and what was found, so the user can fix the file without reading
our code.
"""

from __future__ import annotations

import reprlib

__all__ = ["EvalnbError", "InputError", "StoreConflict", "StoreError"]

_MAX_FOUND = 80
_SHORT = reprlib.Repr()  # keyword arguments need Python 3.12
_SHORT.maxlevel, _SHORT.maxstring, _SHORT.maxother, _SHORT.maxlong = 3, _MAX_FOUND, _MAX_FOUND, 40


class EvalnbError(Exception):
    """Base class of every error evalnb raises on purpose."""


class InputError(EvalnbError, ValueError):
    """A source file or frame could not be imported.

    Parameters
    ----------
    source
        The file name (or ``"<frame>"`` for in-memory data).
    location
        Where in the source: ``"line 12"``, ``"$.dataset.inputs[3]"``, ``"record 5"``.
    field
        The field (key or column) at fault, or ``None`` when the record as a whole is wrong.
    expected
        What a valid input holds there.
    found
        What was found; long values are shortened.
    hint
        What to do about it.
    """

    def __init__(
        self,
        source: str,
        location: str | None,
        field: str | None,
        expected: str,
        found: str,
        hint: str = "",
    ) -> None:
        self.source = source
        self.location = location
        self.field = field
        self.expected = expected
        self.found = found
        self.hint = hint
        where = source if location is None else f"{source}, {location}"
        what = f"field {field!r}: " if field is not None else ""
        msg = f"{where}: {what}expected {expected}, found {found}"
        if hint:
            msg = f"{msg}. {hint}"
        super().__init__(msg)


class StoreError(EvalnbError):
    """A DuckDB lab store is missing, corrupt, locked too long or of an incompatible version."""


class StoreConflict(StoreError):
    """Another process changed a table this lab would overwrite with an older copy.

    Append-only tables (labels, thresholds) never conflict: their rows are merged. A table
    that is replaced whole (cases, outputs, scores, models) is written only when
    the store still holds the version this lab last read or wrote; otherwise nothing is
    written and this error names the table.
    """


class TableTooLarge(EvalnbError, MemoryError):
    """A table kept on disk as Parquet parts would not fit in memory, so it is not loaded.

    The message says how large it is, the budget it exceeds, and what works on disk.
    """


def describe(value: object) -> str:
    """Describe a found value for an error message: its JSON type and a short excerpt."""
    kind = _json_kind(value)
    if value is None or isinstance(value, bool):
        return kind
    # reprlib, not repr: a value may be nested 1,000 deep (RecursionError) or hold megabytes.
    text = _SHORT.repr(value)
    if len(text) > _MAX_FOUND:
        text = text[: _MAX_FOUND - 3] + "..."
    return f"{kind} {text}"


def _json_kind(value: object) -> str:
    kinds: list[tuple[type, str]] = [
        (bool, "boolean"),
        (int, "integer"),
        (float, "number"),
        (str, "string"),
        (list, "list"),
        (dict, "object"),
    ]
    if value is None:
        return "null"
    for typ, name in kinds:
        if isinstance(value, typ):
            return name
    return type(value).__name__
