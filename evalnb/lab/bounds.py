"""The bounded-input layer: every reader of a user's file reads it through here.

A file is read only when it is a regular file (a device, a FIFO or a socket is refused by
name: ``/dev/zero`` has size 0 and never ends, a FIFO blocks forever), and its bytes are
counted while they are read rather than trusted from ``stat``. The structure budgets of
documents and archives (members, headings, table cells, elements, nesting) live here too,
so the docs' limits table has one source. Each refusal is an :class:`~evalnb.InputError`
naming the file and the budget, and saying how to raise it.
"""

from __future__ import annotations

import errno
import os
import stat
import zipfile
import zlib
from typing import TYPE_CHECKING

from evalnb.lab.errors import InputError

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "MAX_ARCHIVE_MEMBERS",
    "MAX_INPUT_BYTES",
    "MAX_OBJECT_SAMPLES",
    "MAX_RESOLVED_CHARS",
    "ZIP_FAULTS",
    "kind_of",
    "read_limited",
    "require_regular",
    "within",
]

# A lab file (JSON, JSONL, CSV, Parquet, archive) read whole: above this, keep the lab on
# disk (``evalnb import --on-disk``) or raise EVALNB_MAX_INPUT_BYTES.
MAX_INPUT_BYTES = int(os.environ.get("EVALNB_MAX_INPUT_BYTES", 8 << 30))
# Texts a file refers to by reference (Inspect's ``attachment://``), resolved: what a log
# may expand to in all, in characters, so that a large text referred to many times cannot
# multiply the memory a small file takes. Raise it with EVALNB_MAX_RESOLVED_CHARS.
MAX_RESOLVED_CHARS = int(os.environ.get("EVALNB_MAX_RESOLVED_CHARS", 1 << 30))
# Members of a zip (an evalnb archive or a DOCX): H2O's archive layout has a few dozen.
# Samples read from one in-memory dataset object (a ragas EvaluationDataset or anything of
# its shape): user code may yield without end. Raise it with EVALNB_MAX_OBJECT_SAMPLES.
MAX_OBJECT_SAMPLES = int(os.environ.get("EVALNB_MAX_OBJECT_SAMPLES", 2_000_000))
MAX_ARCHIVE_MEMBERS = int(os.environ.get("EVALNB_MAX_ARCHIVE_MEMBERS", 10_000))

# What zipfile raises on a damaged or unsupported member, past the central directory: a bad
# header or CRC, a ZIP64 it cannot read, a compression it lacks, a stream cut short, a corrupt
# deflate stream (found by the fuzz), a member that needs a password. Every zip reader turns
# these into an InputError naming the file.
ZIP_FAULTS: tuple[type[Exception], ...] = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    NotImplementedError,
    EOFError,
    zlib.error,
    RuntimeError,
)

_KINDS = (
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a directory"),
)


def kind_of(mode: int) -> str:
    """Name the kind of file ``mode`` describes ("a regular file", "a FIFO", ...)."""
    for test, name in _KINDS:
        if test(mode):
            return name
    return "a regular file" if stat.S_ISREG(mode) else "a special file"


def require_regular(path: Path) -> os.stat_result:
    """Return ``path``'s status, or raise InputError unless it is a regular file."""
    try:
        info = path.stat()
    except FileNotFoundError:
        raise InputError(str(path), None, None, "an existing file", "no such file") from None
    except OSError as exc:
        raise InputError(
            str(path), None, None, "a readable file", exc.strerror or str(exc)
        ) from None
    if not stat.S_ISREG(info.st_mode):
        raise InputError(
            str(path),
            None,
            None,
            "a regular file",
            kind_of(info.st_mode),
            "devices, pipes and sockets are never read",
        )
    return info


def read_limited(path: Path, limit: int, *, hint: str) -> bytes:
    """Read a regular file whole, refusing it past ``limit`` bytes counted while reading.

    Opened without blocking and checked again once open, so a file swapped for a FIFO
    between the check and the open is refused rather than waited on.
    """
    require_regular(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise InputError(
            str(path), None, None, "a readable file", exc.strerror or str(exc)
        ) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise InputError(str(path), None, None, "a regular file", kind_of(mode))
        chunks, total = [], 0
        while True:
            chunk = os.read(fd, min(1 << 24, limit + 1 - total))
            if not chunk:
                break
            total += len(chunk)
            chunks.append(chunk)
            if total > limit:
                raise InputError(
                    str(path),
                    None,
                    None,
                    f"at most {limit:,} bytes",
                    "more (counted while reading)",
                    hint,
                )
        return b"".join(chunks)
    except OSError as exc:
        if exc.errno == errno.EISDIR:
            raise InputError(str(path), None, None, "a file", "a directory") from None
        raise InputError(
            str(path), None, None, "a readable file", exc.strerror or str(exc)
        ) from None
    finally:
        os.close(fd)


def within(path: Path, root: Path) -> bool:
    """Whether ``path``, symbolic links resolved, lies inside the folder ``root``."""
    try:
        path.resolve(strict=True).relative_to(root.resolve(strict=True))
    except (ValueError, OSError):
        return False
    return True
