"""Typed access to fields of parsed records, with errors that say where and what.

Importers never index a parsed record directly: they go through these helpers so that any
wrong type or missing field becomes an :class:`~evalnb.InputError` naming the file, the
place, the field, what was expected and what was found.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from evalnb.lab.errors import InputError, describe

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["MAX_COUNT", "MAX_SAMPLE", "Where"]

MAX_SAMPLE = 2**63 - 1  # samples are stored as Int64
# A count or an index read from an agent record (tokens, sample, epoch): exact as a float.
MAX_COUNT = 2**53


@dataclass(frozen=True)
class Where:
    """A place in a source: the file and a location inside it (JSON path, line, record)."""

    source: str
    location: str | None = None

    def at(self, suffix: str | int) -> Where:
        """Return the place of a child: a key (``.name``) or an index (``[3]``) of a JSON path."""
        base = self.location or "$"
        step = f"[{suffix}]" if isinstance(suffix, int) else f".{suffix}"
        return Where(self.source, base + step)

    def error(self, field: str | None, expected: str, found: object, hint: str = "") -> InputError:
        """Build the error for ``field`` here; ``found`` is the offending value."""
        return InputError(self.source, self.location, field, expected, describe(found), hint)

    def record(self, value: object, what: str = "a JSON object") -> Mapping[str, object]:
        """Return ``value`` as an object, or raise naming this place."""
        if not isinstance(value, dict):
            raise self.error(None, what, value)
        return value

    def require(self, obj: Mapping[str, object], key: str, expected: str) -> object:
        """Return ``obj[key]``, or raise when the key is missing."""
        if key not in obj:
            raise InputError(
                self.source,
                self.location,
                key,
                expected,
                "no such key",
                f"keys present: {sorted(obj)[:12]}",
            )
        return obj[key]

    def string(self, obj: Mapping[str, object], key: str, *, required: bool = False) -> str:
        """Return a string field; a missing or null optional field gives ``""``."""
        if required:
            value = self.require(obj, key, "a string")
        else:
            value = obj.get(key)
            if value is None:
                return ""
        if not isinstance(value, str):
            raise self.error(key, "a string", value)
        return value

    def opt_string(self, obj: Mapping[str, object], key: str) -> str | None:
        """Return a string field, ``None`` when missing or null."""
        value = obj.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            raise self.error(key, "a string or null", value)
        return value

    def strings(self, obj: Mapping[str, object], key: str, *, wrap: bool = False) -> list[str]:
        """Return a list-of-strings field; missing or null gives ``[]``.

        With ``wrap`` a single string is accepted and wrapped into a one-item list (H2O does
        this for ``categories``).
        """
        value = obj.get(key)
        if value is None:
            return []
        if wrap and isinstance(value, str):
            return [value]
        expected = "a list of strings" + (" or a string" if wrap else "")
        if not isinstance(value, list):
            raise self.error(key, expected, value)
        for i, item in enumerate(value):
            if not isinstance(item, str):
                msg = f"{key}[{i}]"
                raise self.at(key).error(msg, "a string", item)
        return value

    def number(self, obj: Mapping[str, object], key: str) -> float | None:
        """Return a finite number field, ``None`` when missing or null."""
        value = obj.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.error(key, "a number or null", value)
        try:
            result = float(value)
        except OverflowError:  # an integer of 309 digits or more
            result = math.inf
        if not math.isfinite(result):
            raise self.error(key, "a finite number", value)
        return result

    def count(self, obj: Mapping[str, object], key: str, *, minimum: int = 0) -> int | None:
        """Return a whole-number field of at least ``minimum`` (a count, an index), or ``None``.

        Bounded by ``MAX_COUNT`` (2**53, exact as a float and far inside Int64), so a number
        from a file never overflows the column it goes to.
        """
        value = self.number(obj, key)
        if value is None:
            return None
        if not value.is_integer() or not minimum <= value <= MAX_COUNT:
            raise self.error(key, f"a whole number from {minimum} to 2**53", obj.get(key))
        return int(value)

    def records(self, obj: Mapping[str, object], key: str) -> list[Mapping[str, object]]:
        """Return a required list-of-objects field (checked item by item)."""
        value = self.require(obj, key, "a list of objects")
        if not isinstance(value, list):
            raise self.error(key, "a list of objects", value)
        where = self.at(key)
        return [where.at(i).record(item) for i, item in enumerate(value)]


def to_json(value: object) -> str:
    """Serialise a parsed JSON value back to compact, key-order-preserving JSON text."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def json_or_none(value: object) -> str | None:
    """Serialise ``value`` unless it is ``None``."""
    return None if value is None else to_json(value)
