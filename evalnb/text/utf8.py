"""Character classes read straight from UTF-8 bytes, for the compiled text kernels."""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["SPACE_LEADS", "space_width"]


def _leads() -> np.ndarray:
    table = np.zeros(256, dtype=np.bool_)
    table[[9, 10, 11, 12, 13, 0x1C, 0x1D, 0x1E, 0x1F, 0x20]] = True
    table[[0xC2, 0xE1, 0xE2, 0xE3]] = True  # first bytes of the wider white space
    return table


SPACE_LEADS = _leads()  # the bytes white space may begin with (see space_width)


@njit(cache=True, inline="always")
def space_width(data: np.ndarray, i: int, end: int) -> int:
    r"""Byte length of the white space character at ``data[i]`` (0 when it is not one).

    White space as Python's ``str.split`` and Rust's ``\s`` (Unicode White_Space) see it.
    """
    b = np.int64(data[i])
    if b < 0x80:
        return 1 if b == 32 or (b >= 9 and b <= 13) or (b >= 0x1C and b <= 0x1F) else 0
    return _wide_space_width(data, i, end, b)


@njit(cache=True, inline="always")
def _wide_space_width(data: np.ndarray, i: int, end: int, b: np.int64) -> int:
    if b == 0xC2 and i + 1 < end:
        c = data[i + 1]
        return 2 if c == 0x85 or c == 0xA0 else 0
    if (b != 0xE1 and b != 0xE2 and b != 0xE3) or i + 2 >= end:
        return 0
    c, d = np.int64(data[i + 1]), np.int64(data[i + 2])
    if b == 0xE1:  # U+1680
        return 3 if c == 0x9A and d == 0x80 else 0
    if b == 0xE3:  # U+3000
        return 3 if c == 0x80 and d == 0x80 else 0
    if c == 0x80 and ((d >= 0x80 and d <= 0x8A) or d == 0xA8 or d == 0xA9 or d == 0xAF):
        return 3  # U+2000..200A, U+2028, U+2029, U+202F
    return 3 if c == 0x81 and d == 0x9F else 0  # U+205F
