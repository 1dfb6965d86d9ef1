"""Connections to a DuckDB store, and the errors and retries around them.

A connection is opened for one short transaction, waits out another process's lock
(bounded), is retried after a transient short read, and its errors name the file and say
what to do.
"""

from __future__ import annotations

import os
import random
import time
from typing import TYPE_CHECKING, TypeVar

import duckdb

from evalnb.lab.errors import StoreError

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

__all__ = ["LOCK_WAIT_S", "connect", "reason", "retrying", "run"]

T = TypeVar("T")

LOCK_WAIT_S = 30.0
"""How long a write or read waits for another process's transaction (``EVALNB_LOCK_WAIT_S``)."""


def run(
    con: duckdb.DuckDBPyConnection, sql: str, params: list[object] | None = None
) -> list[tuple[object, ...]]:
    """Execute and fetch everything: DuckDB refuses new work while a result is unfetched."""
    return con.execute(sql, params).fetchall()


def connect(path: str | Path, *, read_only: bool) -> duckdb.DuckDBPyConnection:
    """Open the store, waiting (jittered backoff, bounded) while another process holds it.

    DuckDB lets one process write a file at a time; evalnb holds it only for the length of
    one short transaction, so waiting a little is always enough at human labelling speed.
    """
    wait = _lock_wait()
    deadline = time.monotonic() + wait
    delay = 0.002
    while True:
        try:
            return duckdb.connect(str(path), read_only=read_only)
        except duckdb.IOException as exc:
            if "lock" not in str(exc).lower():
                raise _open_error(path, exc) from exc
            if time.monotonic() >= deadline:
                msg = (
                    f"{path}: the lab store stayed locked by another process for {wait:g} s "
                    f"({exc}); expected short transactions. Close whatever holds it open (a "
                    "DuckDB shell, another program) or raise EVALNB_LOCK_WAIT_S."
                )
                raise StoreError(msg) from exc
            time.sleep(random.uniform(0, delay))
            delay = min(delay * 2, 0.1)
        except duckdb.Error as exc:
            raise _open_error(path, exc) from exc


def _open_error(path: str | Path, exc: duckdb.Error) -> StoreError:
    if "no space left" in str(exc).lower():
        return StoreError(f"{path}: could not write the lab store: {reason(exc)}")
    msg = f"{path}: cannot open as a DuckDB lab store ({exc}); expected a file written by evalnb"
    return StoreError(msg)


def reason(exc: duckdb.Error) -> str:
    """Return the DuckDB error as a user reads it (a full disk says to free space)."""
    text = str(exc)
    if "No space left" in text or "no space left" in text.lower():
        return f"no space left on the device ({text}); free some space and retry"
    return text


def retrying(attempt: Callable[[], T]) -> T:
    """Run ``attempt`` again while it fails on a transient short read of the store file.

    Seen under load with DuckDB 2.0 when another process was killed while it wrote the
    file: the next transaction or read may ask for a block past the file's end. A failed
    attempt committed nothing, so running it again (within the lock wait) is safe; a store
    that stays unreadable still fails, naming the file.
    """
    deadline = time.monotonic() + _lock_wait()
    delay = 0.01
    while True:
        try:
            return attempt()
        except StoreError as exc:
            if not _transient(exc.__cause__) or time.monotonic() >= deadline:
                raise
            time.sleep(random.uniform(0, delay))
            delay = min(delay * 2, 0.2)


def _lock_wait() -> float:
    return float(os.environ.get("EVALNB_LOCK_WAIT_S", LOCK_WAIT_S))


def _transient(exc: BaseException | None) -> bool:
    return isinstance(exc, duckdb.IOException) and "could not read enough bytes" in str(exc).lower()
