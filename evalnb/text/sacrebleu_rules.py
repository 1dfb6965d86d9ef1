r"""sacrebleu's ``zh`` and ``intl`` tokenizers, compiled: one kernel over a column's UTF-8 bytes.

sacrebleu runs both as Python: ``zh`` loops over every character to space out the Chinese
ones, then applies 13a's four regular expressions (``TokenizerRegexp``); ``intl`` applies
three ``regex`` substitutions on Unicode classes. As Polars passes they cost a copy of the
column each, and Rust's Unicode tables are not the ``regex`` module's (a version apart,
the results differ on new characters). Here each rule is a loop over code points, run in
sacrebleu's order by :func:`sacrebleu_block`, and the Unicode classes ``intl`` asks about
(``\p{N}``, ``\p{P}``, ``\p{S}``) are read from a table built by asking ``regex`` itself
about every code point (:func:`intl_classes`), so they are sacrebleu's whatever either
side's Unicode version. White space is Python's ``str.split``'s (``str.isspace``), written
as spaces. ``tests/text/test_languages.py`` compares both with sacrebleu's own tokenizers.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import regex
from numba import njit

from evalnb.text.utf8 import CODE_POINTS, append_utf8, code_points_matching, decode_char

__all__ = ["INTL", "ZH", "intl_classes", "sacrebleu_block", "zh_ranges_table"]

ZH, INTL = 0, 1
"""Which tokenizer :func:`sacrebleu_block` runs."""

_N, _P, _SYMBOL, _SPACE, _HAN = 1, 2, 4, 8, 16


@lru_cache(maxsize=1)
def intl_classes() -> np.ndarray:
    r"""Return each code point's bits: ``\p{N}``, ``\p{P}``, ``\p{S}`` (``regex``), space, zh.

    The space bit is ``str.isspace`` (what ``str.strip`` and ``str.split`` remove); the zh
    bit is the characters sacrebleu's ``zh`` tokenizer sets apart
    (:func:`zh_ranges_table`).
    """
    codes = CODE_POINTS.astype(np.int64)
    table = np.zeros(0x110000, dtype=np.uint8)
    for bit, pattern in ((_N, r"\p{N}"), (_P, r"\p{P}"), (_SYMBOL, r"\p{S}")):
        table[codes[code_points_matching(regex.sub, pattern, " ")]] |= bit
    table[[c for c in range(0x3001) if chr(c).isspace()]] |= _SPACE  # none lies beyond
    table |= zh_ranges_table() * _HAN
    return table


# Code points sacrebleu's zh tokenizer spaces out. Its table compares one character with
# two-character strings ('\u20000' is '\u2000' + '0'), so what it actually matches is
# this; tests/text/test_languages.py checks every code point against sacrebleu's own function.
ZH_RANGES = (
    (0x2001, 0x2A6D),
    (0x2E80, 0x2FDF),
    (0x2FF0, 0x303F),
    (0x3100, 0x312F),
    (0x31A0, 0x31EF),
    (0x3200, 0x4DB5),
    (0x4E00, 0x9FBB),
    (0xF900, 0xFA2D),
    (0xFA30, 0xFA6A),
    (0xFA70, 0xFAD9),
    (0xFE10, 0xFE1F),
    (0xFE30, 0xFE4F),
    (0xFF00, 0xFFEF),
)


def zh_ranges_table() -> np.ndarray:
    """Whether sacrebleu's ``zh`` tokenizer sets each code point apart (as 0/1)."""
    table = np.zeros(0x110000, dtype=np.uint8)
    for a, b in ZH_RANGES:
        table[a : b + 1] = 1
    return table


@njit(cache=True, inline="always")
def _digit(c: int) -> bool:
    return 48 <= c <= 57


@njit(cache=True, inline="always")
def _ascii_symbol(c: int) -> bool:
    r"""``[\{-\~\[-\` -\&\(-\+\:-\@\/]``: 13a's first rule, the space left out.

    Padding a space with spaces changes no token, and leaving it out keeps the text short.
    """
    return (
        (0x7B <= c <= 0x7E)
        or (0x5B <= c <= 0x60)
        or (0x21 <= c <= 0x26)
        or (0x28 <= c <= 0x2B)
        or (0x3A <= c <= 0x40)
        or c == 0x2F
    )


@njit(cache=True)
def _pad_where(src: np.ndarray, n: int, dst: np.ndarray, cls: np.ndarray, kind: int) -> int:
    r"""Each character of a class set apart: `` c `` (zh's characters; 13a's; intl's \p{S})."""
    m = 0
    for i in range(n):
        c = src[i]
        if (
            (kind == 0 and cls[c] & _HAN)
            or (kind == 1 and _ascii_symbol(c))
            or (kind == 2 and cls[c] & _SYMBOL)
        ):
            dst[m] = 32
            dst[m + 1] = c
            dst[m + 2] = 32
            m += 3
        else:
            dst[m] = c
            m += 1
    return m


@njit(cache=True)
def _pairs(src: np.ndarray, n: int, dst: np.ndarray, cls: np.ndarray, rule: int) -> int:
    r"""Apply a two-character rule, left to right: the pair rewritten, the scan past it.

    0: ``([^0-9])([\.,])`` → ``\1 \2 ``; 1: ``([\.,])([^0-9])`` → `` \1 \2``;
    2: ``([0-9])(-)`` → ``\1 \2 ``; 3: ``(\P{N})(\p{P})`` → ``\1 \2 ``;
    4: ``(\p{P})(\P{N})`` → `` \1 \2``.
    """
    m, i = 0, 0
    while i < n:
        c = src[i]
        if i + 1 < n:
            d = src[i + 1]
            if rule == 0:
                hit = not _digit(c) and (d == 46 or d == 44)
            elif rule == 1:
                hit = (c == 46 or c == 44) and not _digit(d)
            elif rule == 2:
                hit = _digit(c) and d == 45
            elif rule == 3:
                hit = not cls[c] & _N and bool(cls[d] & _P)
            else:
                hit = bool(cls[c] & _P) and not cls[d] & _N
            if hit:
                if rule == 1 or rule == 4:  # " \1 \2"
                    dst[m] = 32
                    dst[m + 1] = c
                    dst[m + 2] = 32
                    dst[m + 3] = d
                else:  # "\1 \2 "
                    dst[m] = c
                    dst[m + 1] = 32
                    dst[m + 2] = d
                    dst[m + 3] = 32
                m += 4
                i += 2
                continue
        dst[m] = c
        m += 1
        i += 1
    return m


# Each tokenizer's rules in sacrebleu's order: below 10 a class set apart (_pad_where's
# kinds), from 10 on a two-character rule (_pairs' rules + 10).
_ZH_STEPS = np.array([0, 1, 10, 11, 12], dtype=np.int64)
_INTL_STEPS = np.array([13, 14, 2], dtype=np.int64)


@njit(cache=True)
def _rules(
    a: np.ndarray, b: np.ndarray, n: int, cls: np.ndarray, tokenizer: int
) -> tuple[bool, int]:
    """Run the tokenizer's rules on ``a[:n]`` in sacrebleu's order, between ``a`` and ``b``.

    Returns whether the result is in ``a`` and its length, or -1 when a rule might not fit
    (no rule writes more than three characters for one it reads).
    """
    steps = _ZH_STEPS if tokenizer == ZH else _INTL_STEPS
    src, dst, in_a = a, b, True
    for step in steps:
        if 3 * n + 8 > dst.size:
            return in_a, -1
        n = _pad_where(src, n, dst, cls, step) if step < 10 else _pairs(src, n, dst, cls, step - 10)
        src, dst, in_a = dst, src, not in_a
    return in_a, n


@njit(cache=True, nogil=True)
def sacrebleu_block(
    data: np.ndarray, lows: np.ndarray, highs: np.ndarray, cls: np.ndarray, tokenizer: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Tokenize each text ``data[lows[t]:highs[t]]`` as sacrebleu's BLEU does with ``zh``/``intl``.

    As sacrebleu's BLEU, a text is right-stripped first (``zh`` strips both ends itself).
    Returns the output bytes and each text's span: its tokens separated by spaces.
    """
    count = lows.size
    out_lows = np.zeros(count, dtype=np.int64)
    out_highs = np.zeros(count, dtype=np.int64)
    out = np.empty(4 * data.size + 16, dtype=np.uint8)
    at = 0
    cap = 64
    a = np.empty(cap, dtype=np.int32)
    b = np.empty(cap, dtype=np.int32)
    t = 0
    while t < count:
        i, end = lows[t], highs[t]
        if 3 * (end - i) + 8 > cap:
            cap = 3 * (end - i) + 8
            a = np.empty(cap, dtype=np.int32)
            b = np.empty(cap, dtype=np.int32)
        n = 0
        while i < end:
            c, width = decode_char(data, i)
            a[n] = c
            n += 1
            i += width
        while n and cls[a[n - 1]] & _SPACE:
            n -= 1
        if tokenizer == ZH:  # zh strips both ends
            start = 0
            while start < n and cls[a[start]] & _SPACE:
                start += 1
            for k in range(start, n):
                a[k - start] = a[k]
            n -= start
        in_a, n = _rules(a, b, n, cls, tokenizer)
        if n < 0:  # a rule might not have fit: larger buffers, the text again
            cap *= 4
            a = np.empty(cap, dtype=np.int32)
            b = np.empty(cap, dtype=np.int32)
            continue
        out_lows[t] = at
        out, at = append_utf8(out, at, a if in_a else b, n, cls, _SPACE)
        out_highs[t] = at
        t += 1
    return out[:at], out_lows, out_highs
