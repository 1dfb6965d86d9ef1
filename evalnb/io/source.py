"""Reading source files: bytes → text → JSON / JSONL / CSV records, with located errors."""

from __future__ import annotations

import codecs
import csv
import io
import json
import re
from typing import TYPE_CHECKING

from evalnb.io.fields import Where
from evalnb.lab.bounds import MAX_INPUT_BYTES, read_limited
from evalnb.lab.errors import InputError

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "Line",
    "check_json_text",
    "check_text",
    "decode_text",
    "jsonl_lines",
    "parse_json",
    "read_bytes",
    "read_csv",
    "read_jsonl",
    "read_text",
]

Line = tuple[int, object]
"""A parsed JSONL record and its 1-based line number."""

# JSON may spell a lone UTF-16 surrogate as an escape; Python accepts it but it is not text
# (it cannot be encoded, stored or shown). Only when an escape like this occurs do we walk
# the parsed document to find it.
SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")

_BOMS = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def read_bytes(path: Path) -> bytes:
    """Read a regular file whole and bounded (:mod:`evalnb.lab.bounds`); OS errors → InputError."""
    return read_limited(
        path,
        MAX_INPUT_BYTES,
        hint="keep a lab this large on disk (evalnb import --on-disk) or raise "
        "EVALNB_MAX_INPUT_BYTES",
    )


def read_text(path: Path) -> str:
    """Read and decode a text file (see :func:`decode_text`)."""
    return decode_text(read_bytes(path), str(path))


def decode_text(data: bytes, source: str) -> str:
    """Decode a file's bytes: UTF-8 (BOM optional), or UTF-16/32 when a BOM says so.

    Raises
    ------
    InputError
        On an empty file or bytes that are not valid in the encoding, naming the line.
    """
    encoding = "utf-8"
    for bom, name in _BOMS:
        if data.startswith(bom):
            encoding = name
            break
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(
            source,
            f"line {line}, byte {exc.start}",
            None,
            f"{encoding.upper()} text",
            f"bytes {data[exc.start : exc.end]!r} ({exc.reason})",
            "Re-save the file as UTF-8 (e.g. `iconv -f latin1 -t utf-8`).",
        ) from None
    if "\x00" in text:
        raise InputError(
            source,
            None,
            None,
            "text",
            "NUL bytes (a binary file?)",
            "Pass format= if this is Parquet.",
        )
    if not text.strip():
        raise InputError(source, None, None, "at least one record", "an empty file")
    return text


def parse_json(text: str, source: str) -> object:
    """Parse a JSON document, naming line and column of a syntax error."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            source, f"line {exc.lineno}, column {exc.colno}", None, "valid JSON", exc.msg
        ) from None
    except RecursionError:
        raise InputError(source, None, None, "JSON nested < 1000 levels", "deeper") from None
    except ValueError as exc:  # e.g. an integer of more than 4,300 digits
        raise InputError(source, None, None, "valid JSON", str(exc)[:200]) from None
    return check_json_text(doc, text, source)


def check_json_text(doc: object, text: str, source: str) -> object:
    """Return ``doc`` (parsed from ``text``) after rejecting lone surrogates in it."""
    if SURROGATE_ESCAPE.search(text):
        check_text(doc, Where(source, "$"))
    return doc


def check_text(value: object, where: Where) -> None:
    """Raise at the first string (key or value) holding a lone surrogate."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise where.error(
                None, "valid Unicode text", value, f"a lone surrogate at character {exc.start}"
            ) from None
    elif isinstance(value, list):
        for i, item in enumerate(value):
            check_text(item, where.at(i))
    elif isinstance(value, dict):
        for key, item in value.items():
            check_text(key, where)
            check_text(item, where.at(key))


def jsonl_lines(text: str) -> list[str]:
    r"""Split JSON Lines text at ``\n`` (``\r\n`` too) and nowhere else.

    Not ``str.splitlines``: it also splits at U+2028, U+2029, U+0085 and others, which JSON
    allows unescaped inside a string.
    """
    return [line.removesuffix("\r") for line in text.split("\n")]


def read_jsonl(text: str, source: str) -> list[Line]:
    """Parse JSON Lines: one JSON value per non-blank line."""
    out: list[Line] = []
    for number, raw in enumerate(jsonl_lines(text), start=1):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise InputError(
                source,
                f"line {number}, column {exc.colno}",
                None,
                "one JSON value per line",
                exc.msg,
            ) from None
        except RecursionError:
            raise InputError(source, f"line {number}", None, "JSON", "too deep") from None
        except ValueError as exc:  # e.g. an integer of more than 4,300 digits
            raise InputError(source, f"line {number}", None, "JSON", str(exc)[:200]) from None
        if SURROGATE_ESCAPE.search(raw):
            check_text(value, Where(source, f"line {number}"))
        out.append((number, value))
    return out


def read_csv(text: str, source: str) -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
    """Parse CSV with a header row; every row is returned with its 1-based line number."""
    # The csv module refuses fields over 128 KB by default (a long answer or context is
    # legitimate); the whole text is the natural bound of one field.
    if csv.field_size_limit() < len(text):
        csv.field_size_limit(len(text))
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        raise InputError(source, "line 1", None, "a header row", "nothing") from None
    except csv.Error as exc:
        raise InputError(source, "line 1", None, "CSV", str(exc)) from None
    seen: set[str] = set()
    for name in header:
        if name in seen:
            raise Where(source, "line 1").error(name, "unique column names", name)
        seen.add(name)
    rows: list[tuple[int, dict[str, str]]] = []
    start = 2
    try:
        for cells in reader:
            if cells and any(c.strip() for c in cells):
                if len(cells) != len(header):
                    raise InputError(
                        source,
                        f"line {start}",
                        None,
                        f"{len(header)} columns as in the header",
                        f"{len(cells)} columns",
                    )
                rows.append((start, dict(zip(header, cells, strict=True))))
            start = reader.line_num + 1
    except csv.Error as exc:
        raise InputError(source, f"line {reader.line_num}", None, "CSV", str(exc)) from None
    return header, rows
