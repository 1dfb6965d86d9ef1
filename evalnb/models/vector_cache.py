"""The persistent embedding cache: vectors by text digest, as immutable parts, lock-free.

Why Parquet parts and not one DuckDB table (the earlier design): a DuckDB file admits one
writing process, so a second notebook or a Ray worker either waited on the lock or ran
without the cache, and every vector went in and out as a Python list (about 20 µs each).
Here each write is a new immutable file (written to a temporary name, then renamed), so any
number of processes read and write at once without a lock; a read joins the wanted keys
with each part's (Polars) and gathers the rows found from a memory map of its vectors.
Writes run in a background thread, off the critical path.

A part is trusted only once checked: it must be a regular file (a FIFO or a device is never
opened for reading), of the size its header declares, its width the model's, its bytes
matching the CRC-32 its writer stored, and every vector finite. A part failing a check is
set aside (``.broken``) with a warning and its vectors are computed again, so the cache
never hands back a wrong vector and never fails a run. Each part is checked once per
process (parts are immutable). Temporary files of writers killed mid-write are swept.
When a model's folder holds more than ``_MERGE_AT`` parts, a write merges them into one.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import logging
import os
import queue
import stat
import threading
import uuid
import warnings
import zlib
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from evalnb.lab.files import atomic_path, sweep_temporaries

if TYPE_CHECKING:
    import polars as pl

__all__ = ["VectorCache", "VectorMemo", "gather_into", "key_scheme", "text_keys"]

_log = logging.getLogger(__name__)
_log.addHandler(logging.NullHandler())

_MERGE_AT = 24


# Two 64-bit hashes of a text make its 128-bit key. Polars hashes a whole column in Rust
# (a blake2b loop in Python cost 1 µs a text, the largest share of a cached rerun); its hash
# may change between Polars versions, so the version names the cache's folder: an upgrade
# starts a new cache rather than reading wrong vectors.
_SEEDS = (0x5EED_0001, 0x5EED_0002)


def text_keys(texts: pl.Series) -> pl.DataFrame:
    """Return the 128-bit keys of ``texts``: columns ``k0``, ``k1`` (UInt64), a row a text."""
    import polars as pl  # noqa: PLC0415

    texts = texts.cast(pl.String)
    return pl.DataFrame({"k0": texts.hash(seed=_SEEDS[0]), "k1": texts.hash(seed=_SEEDS[1])})


def key_scheme() -> str:
    """Name what the keys depend on besides the text: the Polars version hashing them."""
    import polars as pl  # noqa: PLC0415

    return f"polars-{pl.__version__}"


class CacheWarning(UserWarning):
    """The embedding cache could not be read or written; the run went on without it."""


class VectorCache:
    """Vectors of one model by text digest in ``folder/vectors/<model key>/*.vec``.

    Parameters
    ----------
    folder
        The cache folder (shared by every model and lab).
    model_id
        The model's identity; each model has a subfolder of its own.
    dim
        The model's embedding width, when known: a part of another width is set aside.
    """

    def __init__(self, folder: Path, model_id: str, dim: int | None = None) -> None:
        key = hashlib.sha1(f"{model_id}\x1f{key_scheme()}".encode()).hexdigest()[:16]
        self.path = Path(folder) / "vectors" / key
        self.model_id = model_id
        self.dim = dim
        self._pending: queue.Queue[tuple[bytes, np.ndarray] | None] = queue.Queue()
        self._writer: threading.Thread | None = None
        self._lock = threading.Lock()

    def parts(self) -> list[Path]:
        """List the parts now in the model's folder."""
        try:
            return sorted(self.path.glob("*" + _SUFFIX))
        except OSError:
            return []

    def lookup(self, keys: pl.DataFrame) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Find ``keys``: per part holding some, (their positions, the part's vectors, rows).

        The vectors are a memory map: gathering the rows found reads just those rows.
        """
        if keys.height == 0:
            return []
        wanted = keys.select("k0", "k1").with_row_index("i")
        found = []
        for path in self.parts():
            if wanted.height == 0:
                break
            part = self._open(path)
            if part is None:
                continue
            part_keys, vectors = part
            hits = wanted.join(part_keys.with_row_index("r"), on=["k0", "k1"], how="inner")
            hits = hits.sort("i")  # ascending positions: the copy into place runs forward
            if hits.height == 0:
                continue
            found.append(
                (
                    hits["i"].to_numpy().astype(np.int64),
                    vectors,
                    hits["r"].to_numpy().astype(np.int64),
                )
            )
            wanted = wanted.join(hits.select("i"), on="i", how="anti")
        return found

    def get(self, keys: pl.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        """Look ``keys`` up: (positions found, ascending; their vectors as one float32 matrix)."""
        found = self.lookup(keys)
        if not found:
            return np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32)
        index = np.concatenate([f[0] for f in found])
        order = np.argsort(index, kind="stable")
        out = np.empty((index.size, found[0][1].shape[1]), dtype=np.float32)
        at = 0
        for _, vectors, rows in found:
            gather_into(out, np.arange(at, at + rows.size), vectors, rows)
            at += rows.size
        return index[order], out[order] if len(found) > 1 else out

    def _open(self, path: Path) -> tuple[pl.DataFrame, np.ndarray] | None:
        """Map a checked part; a broken one is set aside (and said so), a vanished one skipped."""
        try:
            keys, vectors = _read_part(path, self.dim)
        except FileNotFoundError:
            return None  # merged away by another process meanwhile
        except (OSError, ValueError) as exc:
            self._warn(f"part {path.name} is broken ({exc}); set aside as {path.name}.broken")
            with contextlib.suppress(OSError):
                path.replace(path.with_name(path.name + ".broken"))
            return None
        return _key_frame(keys, vectors.shape[0]), vectors

    def put(self, keys: pl.DataFrame, vectors: np.ndarray) -> None:
        """Queue ``vectors`` (rows of ``keys``) for writing by the background writer."""
        if keys.height == 0:
            return
        with self._lock:
            if self._writer is None or not self._writer.is_alive():
                self._writer = threading.Thread(
                    target=self._drain, name="evalnb-vector-cache", daemon=True
                )
                self._writer.start()
                atexit.register(self.flush)
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        finite = np.isfinite(vectors).all(axis=1)
        if not finite.all():  # a model's NaN is not worth keeping: computed again next time
            keys, vectors = keys.filter(finite), vectors[finite]
        raw = np.ascontiguousarray(keys.select("k0", "k1").to_numpy(), dtype="<u8").tobytes()
        self._pending.put((raw, vectors))

    def flush(self) -> None:
        """Wait until every queued write is on disk."""
        self._pending.join()

    def _drain(self) -> None:
        while True:
            item = self._pending.get()
            try:
                if item is not None:
                    self._write(*item)
            except Exception as exc:
                self._warn(f"could not be written ({type(exc).__name__}: {exc})")
            finally:
                self._pending.task_done()

    def _write(self, keys: bytes, vectors: np.ndarray) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        sweep_temporaries(self.path, "*" + _SUFFIX)
        _atomic_part(self.path / f"{uuid.uuid4().hex}{_SUFFIX}", keys, vectors)
        files = self.parts()
        if len(files) > _MERGE_AT:
            self._merge(files)

    def _merge(self, files: list[Path]) -> None:
        """Merge the parts into one; another process may be merging too (both stay valid)."""
        key_parts, vector_parts = [], []
        for path in files:
            part = self._open(path)
            if part is not None:
                key_parts.append(part[0])
                vector_parts.append(np.asarray(part[1]))
        if not key_parts:
            return
        import polars as pl  # noqa: PLC0415

        keys = pl.concat(key_parts).with_row_index("r")
        first = keys.unique(["k0", "k1"], keep="first", maintain_order=True)["r"].to_numpy()
        vectors = np.concatenate(vector_parts)[first]
        raw = keys[first].select("k0", "k1").to_numpy().astype("<u8").tobytes()
        _atomic_part(self.path / f"{uuid.uuid4().hex}{_SUFFIX}", raw, vectors)
        for path in files:
            with contextlib.suppress(OSError):
                path.unlink()

    def _warn(self, what: str) -> None:
        message = f"embedding cache {self.path} {what}: the run goes on without it"
        warnings.warn(message, CacheWarning, stacklevel=3)
        _log.warning(message)


# A part: a 32-byte header (magic, dim, CRC-32 of the rest, count, zero), the keys (16 bytes
# each), the vectors (float32, count × dim). Raw bytes rather than Parquet: a read is a memory
# map, and a gather of the rows found is the only copy (Parquet's fixed-size lists decoded at
# ~250k vectors/s here; this reads over 1M/s). Parts of the first format (EVNBVEC1) carry no
# checksum: they are set aside like broken ones, and their vectors computed again.
_MAGIC = b"EVNBVEC2"
_SUFFIX = ".vec"
_HEAD = np.dtype(
    [("magic", "S8"), ("dim", "<u4"), ("crc", "<u4"), ("count", "<u8"), ("pad", "<u8")]
)
# Parts checked in this process: (name, size, modification time). A part is never rewritten
# in place, so one check a process is enough.
_CHECKED: set[tuple[str, int, int]] = set()
_CHECKED_LOCK = threading.Lock()


def _parse_head(head: bytes) -> tuple[bytes, int, int, int]:
    if len(head) != _HEAD.itemsize:
        msg = f"a header of {_HEAD.itemsize} bytes, found {len(head)}"
        raise ValueError(msg)
    rec = np.frombuffer(head, dtype=_HEAD)[0]
    return bytes(rec["magic"]), int(rec["dim"]), int(rec["crc"]), int(rec["count"])


def _read_part(path: Path, dim: int | None) -> tuple[bytes, np.ndarray]:
    """Return a part's keys and a memory map of its vectors, once every check holds.

    Raises ValueError (or OSError) naming the check that failed.
    """
    # Non-blocking, then checked by kind on the open file: a FIFO put in a part's place can
    # neither hang the open nor be read.
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fh.fileno())
        if not stat.S_ISREG(info.st_mode):
            msg = "not a regular file"
            raise ValueError(msg)
        magic, width, crc, count = _parse_head(fh.read(_HEAD.itemsize))
        expected = _HEAD.itemsize + count * (16 + 4 * width)
        if magic != _MAGIC or info.st_size != expected:
            msg = f"expected {expected} bytes with header {_MAGIC!r}"
            raise ValueError(msg)
        if dim is not None and width != dim:
            msg = f"vectors {width} wide, the model's are {dim}"
            raise ValueError(msg)
        keys = fh.read(16 * count)
        vectors = np.memmap(
            fh, dtype=np.float32, mode="r", offset=_HEAD.itemsize + 16 * count, shape=(count, width)
        )
        seen = (path.name, info.st_size, info.st_mtime_ns)
        with _CHECKED_LOCK:
            checked = seen in _CHECKED
        if not checked:
            body = zlib.crc32(keys)
            body = zlib.crc32(vectors.data.cast("B"), body)
            if body != crc:
                msg = "its bytes do not match their checksum"
                raise ValueError(msg)
            if not np.isfinite(vectors).all():
                msg = "it holds a vector that is not finite"
                raise ValueError(msg)
            with _CHECKED_LOCK:
                _CHECKED.add(seen)
    return keys, vectors


def _key_frame(raw: bytes, count: int) -> pl.DataFrame:
    """Digests as two unsigned 64-bit columns (Polars joins them fast; it has no 128-bit key)."""
    import polars as pl  # noqa: PLC0415

    pairs = np.frombuffer(raw, dtype="<u8", count=2 * count).reshape(count, 2)
    return pl.DataFrame({"k0": pairs[:, 0], "k1": pairs[:, 1]})


def _atomic_part(path: Path, keys: bytes, vectors: np.ndarray) -> None:
    """Write a part so that a reader sees all of it or nothing (lab/files.py's temp + rename)."""
    count, dim = vectors.shape
    body = np.ascontiguousarray(vectors, dtype="<f4")
    # The array's own buffer: tobytes() would copy it first (3 GB at 2M vectors of 384).
    data = body.data.cast("B")
    head = np.zeros(1, dtype=_HEAD)
    head["magic"], head["dim"], head["count"] = _MAGIC, dim, count
    head["crc"] = zlib.crc32(data, zlib.crc32(keys))
    with atomic_path(path) as tmp, tmp.open("xb") as fh:
        fh.write(head.tobytes())
        fh.write(keys)
        fh.write(data)
        info = os.fstat(fh.fileno())
    with _CHECKED_LOCK:  # written here: its bytes are known good
        _CHECKED.add((path.name, info.st_size, info.st_mtime_ns))


def gather_into(out: np.ndarray, where: np.ndarray, source: np.ndarray, rows: np.ndarray) -> None:
    """``out[where] = source[rows]`` with one copy when ``where`` is a run of rows.

    NumPy's fancy assignment gathers into a temporary, then scatters it; a run of ascending
    positions (the usual case: every text found) is filled in place by ``np.take``.
    """
    if where.size == 0:
        return
    first, last = int(where[0]), int(where[-1])
    if last - first + 1 == where.size and (where.size == 1 or bool((np.diff(where) == 1).all())):
        np.take(source, rows, axis=0, out=out[first : last + 1])
    else:
        out[where] = source[rows]


class VectorMemo:
    """Vectors this process computed, by key: one growing matrix and a frame of keys and rows.

    Vectors read from the persistent cache are not kept again (a memory map of the cache
    reads as fast); fresh ones are, since the cache writes them in the background and a
    next call may come first. Bounded: past ``limit_bytes`` it starts over.
    """

    def __init__(self, limit_bytes: int = 1 << 30) -> None:
        import polars as pl  # noqa: PLC0415

        self.limit_bytes = limit_bytes
        self._empty = pl.DataFrame(schema={"k0": pl.UInt64, "k1": pl.UInt64, "row": pl.Int64})
        self._keys = self._empty
        self.data = np.zeros((0, 0), dtype=np.float32)
        self._used = 0

    def lookup(self, keys: pl.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        """Return (positions in ``keys`` found here, ascending; their rows in :attr:`data`)."""
        if self._used == 0 or keys.height == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        hits = keys.with_row_index("i").join(self._keys, on=["k0", "k1"], how="inner").sort("i")
        return hits["i"].to_numpy().astype(np.int64), hits["row"].to_numpy()

    def add(self, keys: pl.DataFrame, vectors: np.ndarray) -> None:
        """Keep ``vectors`` (rows of ``keys``)."""
        import polars as pl  # noqa: PLC0415

        n, dim = vectors.shape
        if n == 0:
            return
        if (self._used + n) * dim * 4 > self.limit_bytes or self.data.shape[1] not in (0, dim):
            self._keys, self._used = self._empty, 0
            if n * dim * 4 > self.limit_bytes:
                return
        if self._used + n > self.data.shape[0] or self.data.shape[1] != dim:
            grown = np.empty((max(2 * (self._used + n), 1024), dim), dtype=np.float32)
            if self._used:
                grown[: self._used] = self.data[: self._used]
            self.data = grown
        self.data[self._used : self._used + n] = vectors
        rows = pl.Series("row", np.arange(self._used, self._used + n, dtype=np.int64))
        self._keys = pl.concat([self._keys, keys.select("k0", "k1").with_columns(rows)])
        self._used += n
