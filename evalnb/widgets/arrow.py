"""The one place where Polars frames become Arrow IPC bytes for a widget trait."""

from __future__ import annotations

import io

import polars as pl

__all__ = ["to_ipc"]


def to_ipc(frame: pl.DataFrame) -> bytes:
    """Arrow IPC stream bytes of ``frame``; the widgets decode them with flechette.

    The oldest compat level writes plain (large) UTF-8 and list columns rather than the
    newer string-view layout, which keeps the bytes readable by any Arrow reader.
    """
    buf = io.BytesIO()
    frame.write_ipc_stream(buf, compat_level=pl.CompatLevel.oldest())
    return buf.getvalue()
