"""Reading a source incrementally: what is new since the last run, and only that.

A folder of the OpenTelemetry Collector's file exporter output holds one file being written
and, once rotated, older ones under other names. A file is known by its first line (its
identity: renaming it on rotation changes nothing) and read from its checkpoint: the byte
offset of the last complete line committed, with a hash of the bytes just before it. A file
that no longer matches its checkpoint (truncated, rewritten) is read again from its start;
the trace ids already held make that harmless. A line still being written (no newline yet)
waits for the next run.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

import orjson

from evalnb.io.fields import Where
from evalnb.lab.errors import InputError

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

__all__ = [
    "CHUNK_BYTES",
    "MAX_LINE_BYTES",
    "Checkpoint",
    "Chunk",
    "chunks",
    "file_identity",
    "source_files",
]

MAX_LINE_BYTES = int(os.environ.get("EVALNB_MAX_LINE_BYTES", 64 << 20))
"""The longest line read (one export request); raise it with EVALNB_MAX_LINE_BYTES."""
CHUNK_BYTES = 32 * 2**20
"""Bytes of a file read, parsed, scored and committed at a time (bounds the memory)."""
_TAIL = 4096
_PATTERNS = ("*.json", "*.jsonl", "*.ndjson")


@dataclass(frozen=True)
class Checkpoint:
    """Where a file was read up to: its offset, the hash of the bytes before it, lines read."""

    offset: int
    tail_hash: str
    lines: int


@dataclass(frozen=True)
class Chunk:
    """Complete lines of a file from ``start`` to ``end`` (bytes), the first being ``line``."""

    source: str
    path: Path
    start: int
    end: int
    line: int
    data: bytes

    def records(self) -> Iterator[tuple[Where, object]]:
        """Each non-blank line parsed, with its place (file and line number)."""
        for i, raw in enumerate(self.data.split(b"\n")):
            if not raw.strip():
                continue
            where = Where(str(self.path), f"line {self.line + i}")
            if len(raw) > MAX_LINE_BYTES:
                raise where.error(
                    None, f"a line of at most {MAX_LINE_BYTES:,} bytes", f"{len(raw):,} bytes"
                )
            try:
                value = _parse(raw)
            except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as err:
                expected = "one JSON object (an OTLP export request)"
                raise where.error(None, expected, str(err)) from None
            yield where, value

    def checkpoint(self) -> Checkpoint:
        """Return the checkpoint after this chunk (the last bytes hashed, the lines counted)."""
        return Checkpoint(
            self.end, _tail_hash(self.path, self.end), self.line + self.data.count(b"\n")
        )


def _parse(raw: bytes) -> object:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        # What orjson refuses and the standard library takes (integers past 64 bits), or
        # the standard library's error, which names the position.
        return json.loads(raw)


def source_files(folder: Path) -> list[Path]:
    """List the exporter's files in a folder, oldest first (by modification time, then name)."""
    found = {p for pattern in _PATTERNS for p in folder.glob(pattern) if p.is_file()}
    return sorted(found, key=lambda p: (p.stat().st_mtime_ns, p.name))


def file_identity(path: Path) -> str | None:
    """Return the hash of a file's first complete line (None while it has none)."""
    with path.open("rb") as fh:
        head = fh.readline(MAX_LINE_BYTES + 1)
    if not head.endswith(b"\n"):
        return None
    return hashlib.sha256(head).hexdigest()


def _tail_hash(path: Path, offset: int) -> str:
    with path.open("rb") as fh:
        fh.seek(max(0, offset - _TAIL))
        return hashlib.sha256(fh.read(min(offset, _TAIL))).hexdigest()


def chunks(path: Path, source: str, done: Checkpoint | None) -> Iterator[Chunk]:
    """Yield the complete lines after the checkpoint, a chunk of about ``CHUNK_BYTES`` at a time."""
    size = path.stat().st_size
    start, line = 0, 1
    if done is not None and done.offset <= size and _tail_hash(path, done.offset) == done.tail_hash:
        start, line = done.offset, done.lines + 1
    with path.open("rb") as fh:
        fh.seek(start)
        pending = b""
        while True:
            block = fh.read(CHUNK_BYTES)
            if not block:
                return
            data = pending + block
            cut = data.rfind(b"\n")
            if cut < 0:
                if len(data) > MAX_LINE_BYTES:
                    where = Where(str(path), f"line {line}")
                    raise InputError(
                        str(path),
                        where.location,
                        None,
                        f"a line of at most {MAX_LINE_BYTES:,} bytes",
                        f"more than {len(data):,} bytes without a newline",
                    )
                pending = data
                continue
            whole, pending = data[: cut + 1], data[cut + 1 :]
            yield Chunk(source, path, start, start + len(whole), line, whole)
            start += len(whole)
            line += whole.count(b"\n")
