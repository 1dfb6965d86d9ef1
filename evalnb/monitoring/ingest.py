"""Reading a source incrementally: what is new since the last run, and only that.

A folder of the OpenTelemetry Collector's file exporter output holds one file being written
and, once rotated, older ones under other names. A file is known by its first line (its
identity: renaming it on rotation changes nothing) and read from its checkpoint: the byte
offset of the last complete line committed, with a hash of the bytes just before it. A file
that no longer matches its checkpoint (truncated, rewritten) is read again from its start;
the trace ids already held make that harmless. A line still being written (no newline yet)
waits for the next run.

A line that cannot be read — torn by a collector killed mid-write (the next export is then
glued to its half: that export is read from where it begins), not JSON, longer than
:data:`MAX_LINE_BYTES` (skipped to its newline without holding it in memory) — is
**quarantined**: reported with its file, line and reason, and reading goes on past it. A file
that is not JSON lines at all (a gzip archive named ``.json``) is quarantined whole. The trace
ids still legible in such a line are kept with it (:attr:`Bad.traces`): a trace that lost
spans there is quarantined too rather than scored from the spans that were read.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import orjson

from evalnb.io.fields import Where

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from evalnb.monitoring.traffic import SpanBatch

__all__ = [
    "CHUNK_BYTES",
    "MAX_LINE_BYTES",
    "Bad",
    "Checkpoint",
    "Chunk",
    "chunks",
    "drop_damaged",
    "file_identity",
    "not_json_lines",
    "source_files",
]

MAX_LINE_BYTES = int(os.environ.get("EVALNB_MAX_LINE_BYTES", 64 << 20))
"""The longest line read (one export request); raise it with EVALNB_MAX_LINE_BYTES."""
CHUNK_BYTES = 32 * 2**20
"""Bytes of a file read, parsed, scored and committed at a time (bounds the memory)."""
_TAIL = 4096
_PATTERNS = ("*.json", "*.jsonl", "*.ndjson")
_PREVIEW = 120
# Where an OTLP export request begins: a torn line's second half starts at one of these.
_STARTS = (b'{"resourceSpans"', b'{"resource_spans"')
# Magic numbers of files that are not text: gzip, zstd, bzip2, zip, xz.
_BINARY = (b"\x1f\x8b", b"\x28\xb5\x2f\xfd", b"BZh", b"PK\x03\x04", b"\xfd7zXZ")


@dataclass(frozen=True)
class Bad:
    """A line that could not be read: its number, why, and its first bytes (as text)."""

    line: int
    reason: str
    preview: str
    traces: tuple[str, ...] = ()
    """Trace ids named in the unread bytes: those traces lost spans there, and a request
    made of their other spans would be scored as if it were whole."""


# A trace id in bytes that could not be parsed (OTLP's traceId, the SDK's trace_id).
_TRACE_ID = re.compile(rb'"(?:traceId|trace_id)"\s*:\s*"([^"\\]{1,128})"')


def _trace_ids(raw: bytes) -> tuple[str, ...]:
    found = dict.fromkeys(m.decode("utf-8", "replace") for m in _TRACE_ID.findall(raw))
    return tuple(found)


def _preview(raw: bytes) -> str:
    return raw[:_PREVIEW].decode("utf-8", "replace")


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
    skipped: tuple[Bad, ...] = ()
    """Lines before or in this chunk skipped unread (longer than the limit)."""

    def parse(self) -> tuple[list[tuple[Where, object]], list[Bad]]:
        """Each readable line parsed, with its place; and the lines that could not be."""
        good: list[tuple[Where, object]] = []
        bad = list(self.skipped)
        for i, raw in enumerate(self.data.split(b"\n")):
            if not raw.strip():
                continue
            number = self.line + i
            where = Where(str(self.path), f"line {number}")
            if len(raw) > MAX_LINE_BYTES:
                bad.append(Bad(number, f"longer than {MAX_LINE_BYTES:,} bytes", _preview(raw)))
                continue
            try:
                good.append((where, _parse(raw)))
                continue
            except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as err:
                reason = f"not one JSON object ({str(err)[:120]})"
            # A collector killed mid-line, restarted: its next export glued to the half.
            cut = max(raw.rfind(start) for start in _STARTS)
            if cut > 0:
                try:
                    good.append((where, _parse(raw[cut:])))
                    reason = f"a torn line: {cut:,} bytes before an export that was read"
                    raw = raw[:cut]
                except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
                    pass
            bad.append(Bad(number, reason, _preview(raw), _trace_ids(raw)))
        return good, bad

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
    """Return the hash of a file's first complete line (None while it has none).

    A first line past :data:`MAX_LINE_BYTES` is known by its first mebibyte instead (it
    will be quarantined, not waited for).
    """
    with path.open("rb") as fh:
        head = fh.readline(MAX_LINE_BYTES + 1)
    if len(head) > MAX_LINE_BYTES:
        return "long:" + hashlib.sha256(head[: 1 << 20]).hexdigest()
    if not head.endswith(b"\n"):
        return None
    return hashlib.sha256(head).hexdigest()


def not_json_lines(path: Path) -> str | None:
    """Why a file cannot be JSON lines (compressed, an archive), or None when it may be."""
    with path.open("rb") as fh:
        head = fh.read(8)
    if head.startswith(_BINARY):
        kind = "gzip" if head.startswith(b"\x1f\x8b") else "compressed or archived"
        return (
            f"a {kind} file, not JSON lines: decompress it into the folder (or have the "
            "collector write plain JSON lines)"
        )
    return None


def _tail_hash(path: Path, offset: int) -> str:
    with path.open("rb") as fh:
        fh.seek(max(0, offset - _TAIL))
        return hashlib.sha256(fh.read(min(offset, _TAIL))).hexdigest()


def chunks(path: Path, source: str, done: Checkpoint | None) -> Iterator[Chunk]:
    """Yield the complete lines after the checkpoint, a chunk of about ``CHUNK_BYTES`` at a time.

    A line past :data:`MAX_LINE_BYTES` is skipped to its newline (never held whole) and
    named in the next chunk's ``skipped``.
    """
    size = path.stat().st_size
    start, line = 0, 1
    if done is not None and done.offset <= size and _tail_hash(path, done.offset) == done.tail_hash:
        start, line = done.offset, done.lines + 1
    skipped: list[Bad] = []
    skipping = False  # inside an overlong line: its bytes are dropped up to its newline
    with path.open("rb") as fh:
        fh.seek(start)
        pending = b""
        while True:
            block = fh.read(CHUNK_BYTES)
            if not block:
                if skipped:  # the checkpoint moves past what was skipped
                    yield Chunk(source, path, start, start, line - 1, b"", tuple(skipped))
                return
            if skipping:
                cut = block.find(b"\n")
                if cut < 0:
                    start += len(block)
                    continue
                start, line, skipping = start + cut + 1, line + 1, False
                block = block[cut + 1 :]
            data = pending + block
            cut = data.rfind(b"\n")
            if cut < 0:
                if len(data) > MAX_LINE_BYTES:
                    reason = f"longer than {MAX_LINE_BYTES:,} bytes (skipped to its end)"
                    skipped.append(Bad(line, reason, _preview(data)))
                    start, pending, skipping = start + len(data), b"", True
                    continue
                pending = data
                continue
            whole, pending = data[: cut + 1], data[cut + 1 :]
            yield Chunk(source, path, start, start + len(whole), line, whole, tuple(skipped))
            skipped = []
            start += len(whole)
            line += whole.count(b"\n")


def drop_damaged(batch: SpanBatch, bad: list[Bad]) -> list[str]:
    """Take out of ``batch`` the traces that lost spans in unread lines; say so in ``bad``.

    A trace split over two exports, one of them torn, would otherwise be scored from the
    half that was read (its retrieval or its answer missing) and counted among the traces
    held. Spans of such a trace that arrive in a later file still cannot be told apart.
    """
    lost = {t: b.line for b in bad for t in b.traces}
    damaged = sorted(set(lost) & set(batch.traces))
    for trace in damaged:
        spans = batch.traces.pop(trace)
        bad.append(
            Bad(
                lost[trace],
                f"trace {trace[:64]}: {len(spans)} span(s) read, others were on line "
                f"{lost[trace]}, which could not be read: not scored as if whole",
                "",
            )
        )
    return damaged
