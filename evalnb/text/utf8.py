"""Character classes read straight from UTF-8 bytes, for the compiled text kernels."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numba import njit, prange

if TYPE_CHECKING:
    from collections.abc import Callable

CODE_POINTS = np.array([c for c in range(0x110000) if not 0xD800 <= c < 0xE000], dtype=np.uint32)
"""Every Unicode code point but the surrogates, in order."""


def code_points_matching(
    sub: Callable[[str, str, str], str], pattern: str, marker: str
) -> np.ndarray:
    """Return which of :data:`CODE_POINTS` a regex engine's ``pattern`` matches, one by one.

    ``sub`` is the engine's ``sub`` (``re.sub``, ``regex.sub``): every match in the string of
    all code points becomes ``marker``, a character the pattern does not match, and the
    result is compared as UTF-32. No match object is made per character: all of Unicode in
    about 20 ms a pattern, where ``finditer`` took ten times that.
    """
    text = CODE_POINTS.tobytes().decode("utf-32-le")
    marked = np.frombuffer(sub(pattern, marker, text).encode("utf-32-le"), dtype=np.uint32)
    hit: np.ndarray = (marked == ord(marker)) & (ord(marker) != CODE_POINTS)
    return hit


__all__ = [
    "NARROW",
    "SPACE_LEADS",
    "all_ascii",
    "char_ids",
    "decode_char",
    "encode_char",
    "space_width",
]


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


@njit(cache=True, inline="always")
def decode_char(data: np.ndarray, i: int) -> tuple[np.int64, int]:
    """Code point and byte width of the (valid UTF-8) character at ``data[i]``."""
    b = np.int64(data[i])
    if b < 0x80:
        return b, 1
    if b < 0xE0:
        return ((b & 0x1F) << 6) | (np.int64(data[i + 1]) & 0x3F), 2
    if b < 0xF0:
        return (
            ((b & 0x0F) << 12)
            | ((np.int64(data[i + 1]) & 0x3F) << 6)
            | (np.int64(data[i + 2]) & 0x3F)
        ), 3
    return (
        ((b & 0x07) << 18)
        | ((np.int64(data[i + 1]) & 0x3F) << 12)
        | ((np.int64(data[i + 2]) & 0x3F) << 6)
        | (np.int64(data[i + 3]) & 0x3F)
    ), 4


@njit(cache=True)
def all_ascii(data: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Whether each text ``data[offsets[t]:offsets[t + 1]]`` is ASCII alone (stops at the first other byte)."""
    out = np.ones(offsets.size - 1, dtype=np.bool_)
    for t in range(offsets.size - 1):
        for i in range(offsets[t], offsets[t + 1]):
            if data[i] >= 0x80:
                out[t] = False
                break
    return out


@njit(cache=True, inline="always")
def encode_char(out: np.ndarray, at: int, c: int) -> int:
    """Write code point ``c`` as UTF-8 at ``out[at]``; return where the next one goes."""
    if c < 0x80:
        out[at] = c
        return at + 1
    if c < 0x800:
        out[at] = 0xC0 | (c >> 6)
        out[at + 1] = 0x80 | (c & 0x3F)
        return at + 2
    if c < 0x10000:
        out[at] = 0xE0 | (c >> 12)
        out[at + 1] = 0x80 | ((c >> 6) & 0x3F)
        out[at + 2] = 0x80 | (c & 0x3F)
        return at + 3
    out[at] = 0xF0 | (c >> 18)
    out[at + 1] = 0x80 | ((c >> 12) & 0x3F)
    out[at + 2] = 0x80 | ((c >> 6) & 0x3F)
    out[at + 3] = 0x80 | (c & 0x3F)
    return at + 4


@njit(cache=True)
def append_utf8(
    out: np.ndarray, at: int, points: np.ndarray, n: int, cls: np.ndarray, space: int
) -> tuple[np.ndarray, int]:
    """Write ``points[:n]`` as UTF-8 from ``out[at]``, growing ``out`` when it must.

    A code point whose ``cls`` entry has the ``space`` bit is written as a space (the
    tokenizers' output: tokens separated by spaces alone). Returns the buffer and the end.
    """
    if at + 4 * n > out.size:  # a code point is at most four bytes
        grown = np.empty(2 * out.size + 4 * n, dtype=np.uint8)
        grown[:at] = out[:at]
        out = grown
    for k in range(n):
        point = int(points[k])
        at = encode_char(out, at, 32 if cls[point] & space else point)
    return out, at


# Code points below this keep their own id (code point + 1); the others are numbered in
# order of first sight after them, so Latin and Greek texts need no table at all.
NARROW = 1024


@njit(parallel=True, cache=True)
def char_ids(
    data: np.ndarray, lows: np.ndarray, highs: np.ndarray, wide_limit: int
) -> tuple[np.ndarray, np.ndarray, int]:
    """Ids of each text's characters, white space left out (as Python's ``str.split``).

    Text ``t`` is ``data[lows[t]:highs[t]]`` (valid UTF-8). A code point below
    :data:`NARROW` gets its value + 1; the others get ``NARROW + 1``, ``NARROW + 2``, ...
    in order of first sight, unless more than ``wide_limit`` distinct ones are found: then
    every character gets its code point + 1. Returns the ids (one text after another), each
    text's count and the largest id.

    One decoding pass in parallel writes each text's code points where its bytes begin (a
    text has no more characters than bytes); the wide characters are numbered in one
    sequential pass over the texts holding some; a last parallel pass packs the texts
    together and renumbers.
    """
    n = lows.size
    # int32 (code points fit): half the memory to fault in, and under glibc's 32 MB line
    # past which every allocation is a fresh mapping.
    points = np.empty(data.size, dtype=np.int32)
    kept = np.zeros(n, dtype=np.int64)
    widest = np.zeros(n, dtype=np.int64)  # each text's largest code point from NARROW on
    for t in prange(n):
        i, end, at, top = lows[t], highs[t], lows[t], np.int64(0)
        while i < end:
            gap = space_width(data, i, end)
            if gap:
                i += gap
                continue
            c, width = decode_char(data, i)
            points[at] = np.int32(c)
            at += 1
            top = max(top, c)
            i += width
        kept[t] = at - lows[t]
        widest[t] = top if top >= NARROW else 0
    code = np.zeros(widest.max() + 1 if n else 1, dtype=np.int32)
    seen = 0
    for t in range(n):
        if widest[t] == 0:
            continue
        for at in range(lows[t], lows[t] + kept[t]):
            c = points[at]
            if c >= NARROW and code[c] == 0:
                seen += 1
                code[c] = np.int32(NARROW + seen)
    raw = seen > wide_limit
    begins = np.zeros(n + 1, dtype=np.int64)
    begins[1:] = np.cumsum(kept)
    out = np.empty(begins[n], dtype=np.int32)
    tops = np.zeros(n, dtype=np.int64)
    for t in prange(n):
        top = np.int64(0)
        for k in range(kept[t]):
            c = np.int64(points[lows[t] + k])
            v = c + 1 if (c < NARROW or raw) else np.int64(code[c])
            out[begins[t] + k] = np.int32(v)
            top = max(top, v)
        tops[t] = top
    return out, kept, tops.max() if n else 0
