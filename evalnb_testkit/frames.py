"""Frames as the widgets send them to the browser."""

from __future__ import annotations

import io

import polars as pl

__all__ = ["from_ipc"]


def from_ipc(data: bytes) -> pl.DataFrame:
    """Read the Arrow IPC stream bytes a widget sends to the browser back into a frame."""
    return pl.read_ipc_stream(io.BytesIO(data))
