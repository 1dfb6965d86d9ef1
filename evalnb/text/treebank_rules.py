r"""NLTK's Treebank word rules, compiled: every substitution of ``NLTKWordTokenizer`` in one kernel.

``NLTKWordTokenizer.tokenize`` runs some thirty regex substitutions over a sentence, one
after another, each a pass over the whole string; run as Polars passes over a column they
cost a copy of the column each and left BLEU at 60 % tokenizing. Here each substitution is a
small loop over the sentence's code points, written from its regex (each function below
names the pattern it is), and one numba kernel runs them in NLTK's order over every text of
a column, a sentence at a time in two scratch buffers that stay in cache. A rule runs on a
text only where a character it needs is in it (:data:`_NEEDS`): the rules before it insert
spaces, backquotes and apostrophes only, so the text's own characters decide. numba rather
than a Rust extension: the project's kernels are numba already (one toolchain, nothing to
build at install), and the loops are byte-level code numba compiles as C would.

The rules ask Python's ``re`` and ``regex`` (NLTK uses both) what ``\w``, ``\s`` and ``\d``
are; :func:`char_classes` asks both engines about every code point once per process, and a
text holding a character on which they disagree, or one that matches an ASCII letter
ignoring case without being one (the Kelvin sign, the long s), is handed back to NLTK's own
code (:data:`UNSAFE`). A text in which Punkt could end a sentence is handed back too
(:data:`BREAKS`): Punkt splits it, and the sentences come back here.

``tests/text/test_treebank.py`` compares the result with ``nltk.word_tokenize`` on texts
built from every token the rules act on and on arbitrary Unicode.
"""

from __future__ import annotations

import re
from functools import lru_cache

import numpy as np
import regex
from numba import njit

from evalnb.text.utf8 import CODE_POINTS, append_utf8, code_points_matching, decode_char

__all__ = ["BREAKS", "DONE", "UNSAFE", "char_classes", "treebank_block"]

DONE, BREAKS, UNSAFE = 0, 1, 2
"""A text's status after :func:`treebank_block`: tokenized, for Punkt first, for NLTK."""

_W, _S, _D, _BAD = 1, 2, 4, 8  # \w, \s, \d; engines disagree (or a case fold onto ASCII)


@lru_cache(maxsize=1)
def char_classes() -> np.ndarray:
    r"""Return each code point's ``\w``/``\s``/``\d`` bits as NLTK's regex engines see them.

    Every code point (surrogates aside) is asked of ``re`` and ``regex``; ``\s`` is also
    asked of ``str.isspace`` (``str.split``, which ends NLTK's tokenizer). A code point on
    which they disagree, or that matches ``(?i)[a-z]`` without being ASCII, gets the bad bit.
    Asking the engines, rather than writing the classes down, stays true as either
    upgrades its Unicode tables. About 0.15 s, once per process.
    """
    codes = CODE_POINTS.astype(np.int64)
    table = np.zeros(0x110000, dtype=np.uint8)
    bad = np.zeros(codes.size, dtype=bool)
    for bit, pattern, marker in ((_W, r"\w", " "), (_S, r"\s", "a"), (_D, r"\d", " ")):
        ours = code_points_matching(re.sub, pattern, marker)
        bad |= ours != code_points_matching(regex.sub, pattern, marker)
        if bit == _S:  # str.isspace: no white space lies past U+3000
            space = np.zeros(codes.size, dtype=bool)
            space[:0x3001] = [chr(c).isspace() for c in range(0x3001)]
            bad |= ours != space
        table[codes[ours]] |= bit
    folds = code_points_matching(re.sub, "(?i)[a-z]", "0")
    folds |= code_points_matching(regex.sub, "(?i)[a-z]", "0")
    bad |= folds & (codes >= 0x80)
    table[codes[bad]] |= _BAD
    table[0xD800:0xE000] = _BAD
    return table


# What a text must hold for a rule to be run on it (bits of the text's characters).
_OPEN, _DQ, _SQ, _DOT, _COLON, _SYM, _DASH, _MARK, _STAR, _BRACKET, _HYPHEN, _CLOSE, _TWICE = (
    1 << k for k in range(13)
)
# _TWICE: a doubled n, m or t (cannot, gimme, gonna, gotta, lemme, wanna); with _SQ (d'ye,
# more'n) what MacIntyre's contractions need.


def _needs_table() -> np.ndarray:
    """Each character's trigger bit (0 for most), for the code points up to ``„``."""
    table = np.zeros(0x201F, dtype=np.int64)
    for chars, bit in (
        ("«“‘„`", _OPEN),
        ('"', _DQ),
        ("'", _SQ),
        (".", _DOT),
        (":,", _COLON),
        (";@#$%&", _SYM),
        ("\u2012\u2013\u2014\u2015", _DASH),
        ("?!", _MARK),
        ("*", _STAR),
        ("][(){}<>", _BRACKET),
        ("-", _HYPHEN),
        ("»”’", _CLOSE),
    ):
        table[[ord(c) for c in chars]] = bit
    return table


_NEEDS = _needs_table()


@njit(cache=True, inline="always")
def _w(cls: np.ndarray, c: int) -> bool:
    return bool(cls[c] & _W)


@njit(cache=True, inline="always")
def _sp(cls: np.ndarray, c: int) -> bool:
    return bool(cls[c] & _S)


@njit(cache=True, inline="always")
def _lower(c: int) -> int:
    return c + 32 if 65 <= c <= 90 else c


@njit(cache=True, inline="always")
def _put3(dst: np.ndarray, m: int, c: int) -> int:
    """Write `` c `` (a character set apart by spaces)."""
    dst[m] = 32
    dst[m + 1] = c
    dst[m + 2] = 32
    return m + 3


@njit(cache=True)
def _opening_quotes(src: np.ndarray, n: int, dst: np.ndarray) -> int:
    r"""``([«“‘„]|[`]+)`` → `` \1 ``."""
    m, i = 0, 0
    while i < n:
        c = src[i]
        if c == 0xAB or c == 0x201C or c == 0x2018 or c == 0x201E:
            m = _put3(dst, m, c)
            i += 1
        elif c == 96:
            dst[m] = 32
            m += 1
            while i < n and src[i] == 96:
                dst[m] = 96
                m += 1
                i += 1
            dst[m] = 32
            m += 1
        else:
            dst[m] = c
            m += 1
            i += 1
    return m


@njit(cache=True)
def _leading_double_quote(src: np.ndarray, n: int, dst: np.ndarray) -> int:
    """``^"`` → ````` ``."""
    m = 0
    if n and src[0] == 34:
        dst[0] = 96
        dst[1] = 96
        m = 2
        dst[m : m + n - 1] = src[1:n]
        return m + n - 1
    dst[:n] = src[:n]
    return n


@njit(cache=True)
def _double_backquotes(src: np.ndarray, n: int, dst: np.ndarray) -> int:
    r"""``(``)`` → `` \1 ``."""
    m, i = 0, 0
    while i < n:
        if src[i] == 96 and i + 1 < n and src[i + 1] == 96:
            dst[m] = 32
            dst[m + 1] = 96
            dst[m + 2] = 96
            dst[m + 3] = 32
            m += 4
            i += 2
        else:
            dst[m] = src[i]
            m += 1
            i += 1
    return m


@njit(cache=True)
def _quote_after_opener(src: np.ndarray, n: int, dst: np.ndarray) -> int:
    r"""``([ \(\[{<])(\"|\'{2})`` → ``\1 `` ``."""
    m, i = 0, 0
    while i < n:
        c = src[i]
        if (c == 32 or c == 40 or c == 91 or c == 123 or c == 60) and i + 1 < n:
            q = src[i + 1]
            width = 1 if q == 34 else (2 if q == 39 and i + 2 < n and src[i + 2] == 39 else 0)
            if width:
                dst[m] = c
                dst[m + 1] = 32
                dst[m + 2] = 96
                dst[m + 3] = 96
                dst[m + 4] = 32
                m += 5
                i += 1 + width
                continue
        dst[m] = c
        m += 1
        i += 1
    return m


def _ascii(word: str) -> np.ndarray:
    return np.frombuffer(word.encode(), dtype=np.uint8).astype(np.int64)


_RE, _VE, _LL, _M, _T, _S_, _D_, _N = map(_ascii, ("re", "ve", "ll", "m", "t", "s", "d", "n"))
_CANNOT, _DYE, _GIMME, _GONNA, _GOTTA, _LEMME, _MOREN, _WANNA = map(
    _ascii, ("cannot", "d'ye", "gimme", "gonna", "gotta", "lemme", "more'n", "wanna")
)
_IS, _WAS = _ascii("is"), _ascii("was")
_LONG = tuple(map(_ascii, ("'ll", "'LL", "'re", "'RE", "'ve", "'VE", "n't", "N'T")))
_LL2, _LL3, _RE2, _RE3, _VE2, _VE3, _NT, _NT2 = _LONG


@njit(cache=True, inline="always")
def _has(src: np.ndarray, n: int, at: int, word: np.ndarray, fold: bool) -> bool:
    """``word`` (ASCII) at ``at``; with ``fold``, ignoring ASCII case (``(?i)``)."""
    if at + word.size > n:
        return False
    for j in range(word.size):
        c = src[at + j]
        if (_lower(c) if fold else c) != word[j]:
            return False
    return True


@njit(cache=True, inline="always")
def _word_is(src: np.ndarray, n: int, at: int, word: np.ndarray, cls: np.ndarray) -> bool:
    r"""``(?i)word\b`` at ``at`` (``word`` ASCII, ending in a letter)."""
    k = word.size
    return _has(src, n, at, word, True) and (at + k == n or not _w(cls, src[at + k]))


@njit(cache=True)
def _clitic(src: np.ndarray, n: int, at: int, cls: np.ndarray) -> bool:
    r"""``(?i)(?:re|ve|ll|m|t|s|d|n)\b`` at ``at``."""
    return (
        _word_is(src, n, at, _RE, cls)
        or _word_is(src, n, at, _VE, cls)
        or _word_is(src, n, at, _LL, cls)
        or _word_is(src, n, at, _M, cls)
        or _word_is(src, n, at, _T, cls)
        or _word_is(src, n, at, _S_, cls)
        or _word_is(src, n, at, _D_, cls)
        or _word_is(src, n, at, _N, cls)
    )


@njit(cache=True)
def _quote_opening_word(src: np.ndarray, n: int, dst: np.ndarray, cls: np.ndarray) -> int:
    r"""``(?i)(?<!\w)(\')(?!(?:re|ve|ll|m|t|s|d|n)\b)(?=\w)`` → ``\1 ``."""
    m = 0
    for i in range(n):
        c = src[i]
        dst[m] = c
        m += 1
        if (
            c == 39
            and (i == 0 or not _w(cls, src[i - 1]))
            and i + 1 < n
            and _w(cls, src[i + 1])
            and not _clitic(src, n, i + 1, cls)
        ):
            dst[m] = 32
            m += 1
    return m


@njit(cache=True, inline="always")
def _wide_closer(c: int) -> bool:
    r"""``[\]\)}>"\'»”’ ]``."""
    return (
        c == 93
        or c == 41
        or c == 125
        or c == 62
        or c == 34
        or c == 39
        or c == 32
        or c == 0xBB
        or c == 0x201D
        or c == 0x2019
    )


@njit(cache=True, inline="always")
def _closer(c: int) -> bool:
    r"""``[\]\)}>"\']``."""
    return c == 93 or c == 41 or c == 125 or c == 62 or c == 34 or c == 39


@njit(cache=True)
def _final_period(src: np.ndarray, n: int, cls: np.ndarray, wide: bool) -> int:
    r"""Apply a final-period rule; ``wide`` is the first (closers with a space, possessive).

    ``([^\.])(\.)([\]\)}>"\'»”’ ]*+)\s*$`` → ``\1 \2 \3 `` and
    ``([^\.])(\.)([\]\)}>"\']*)\s*$`` → ``\1 \2\3 ``. A match must reach the end
    through closers and white space, so its period is the one just before the closers that
    precede the trailing white space; there is at most one. Done in place: returns the
    new length ``m`` as ``~m`` (the convention of :func:`_step` for a result left in ``src``).
    """
    k = n
    while k > 0 and _sp(cls, src[k - 1]):
        k -= 1
    c0 = k
    while c0 > 0 and (_wide_closer(src[c0 - 1]) if wide else _closer(src[c0 - 1])):
        c0 -= 1
    p = c0 - 1
    if p < 1 or src[p] != 46 or src[p - 1] == 46:
        return ~n
    end = p + 1  # the closer run from the period on, as far as it reaches
    while end < n and (_wide_closer(src[end]) if wide else _closer(src[end])):
        end += 1
    # In place, the text before the period kept: " ." (" ") and the run move right.
    run = end - p - 1
    shift = 3 if wide else 2
    for j in range(run - 1, -1, -1):
        src[p + shift + j] = src[p + 1 + j]
    src[p] = 32
    src[p + 1] = 46
    if wide:
        src[p + 2] = 32
    src[p + shift + run] = 32
    return ~(p + shift + run + 1)


@njit(cache=True)
def _colon_comma(src: np.ndarray, n: int, dst: np.ndarray, cls: np.ndarray) -> int:
    r"""``([:,])([^\d])`` → `` \1 \2``."""
    m, i = 0, 0
    while i < n:
        c = src[i]
        if (c == 58 or c == 44) and i + 1 < n and (cls[src[i + 1]] & _D) == 0:
            dst[m] = 32
            dst[m + 1] = c
            dst[m + 2] = 32
            dst[m + 3] = src[i + 1]
            m += 4
            i += 2
        else:
            dst[m] = c
            m += 1
            i += 1
    return m


@njit(cache=True)
def _final_colon_comma(src: np.ndarray, n: int) -> int:
    r"""``([:,])$`` → `` \1 `` (Python's ``$``: at the end or before a final newline), in place."""
    at = -1
    if n and (src[n - 1] == 58 or src[n - 1] == 44):
        at = n - 1
    elif n >= 2 and src[n - 1] == 10 and (src[n - 2] == 58 or src[n - 2] == 44):
        at = n - 2
    if at < 0:
        return ~n
    if at == n - 2:
        src[n + 1] = 10
    src[at + 2] = 32
    src[at + 1] = src[at]
    src[at] = 32
    return ~(n + 2)


@njit(cache=True)
def _ellipsis(src: np.ndarray, n: int, dst: np.ndarray) -> int:
    r"""``\.{2,}`` → `` \g<0> `` (``~n``: unchanged, when no two periods meet)."""
    found = False
    for i in range(n - 1):
        if src[i] == 46 and src[i + 1] == 46:
            found = True
            break
    if not found:
        return ~n
    m, i = 0, 0
    while i < n:
        if src[i] != 46:
            dst[m] = src[i]
            m += 1
            i += 1
            continue
        j = i
        while j < n and src[j] == 46:
            j += 1
        if j - i >= 2:
            dst[m] = 32
            m += 1
        dst[m : m + j - i] = src[i:j]
        m += j - i
        if j - i >= 2:
            dst[m] = 32
            m += 1
        i = j
    return m


@njit(cache=True)
def _pairs(src: np.ndarray, n: int, dst: np.ndarray, c: int) -> int:
    """Two ``c`` in a row, left to right, set apart: ``--`` → `` -- ``, ``''`` → `` '' ``."""
    m, i = 0, 0
    while i < n:
        if src[i] == c and i + 1 < n and src[i + 1] == c:
            dst[m] = 32
            dst[m + 1] = c
            dst[m + 2] = c
            dst[m + 3] = 32
            m += 4
            i += 2
        else:
            dst[m] = src[i]
            m += 1
            i += 1
    return m


@njit(cache=True, inline="always")
def _in_set(c: int, which: int) -> bool:
    if which == 0:  # [;@#$%&]
        return c == 59 or c == 64 or c == 35 or c == 36 or c == 37 or c == 38
    if which == 1:  # [\u2012-\u2015]
        return 0x2012 <= c <= 0x2015
    if which == 2:  # [?!]
        return c == 63 or c == 33
    if which == 3:  # [*]
        return c == 42
    if which == 4:  # [\]\[\(\)\{\}\<\>]
        return (
            c == 93 or c == 91 or c == 40 or c == 41 or c == 123 or c == 125 or c == 60 or c == 62
        )
    return c == 0xBB or c == 0x201D or c == 0x2019  # ([»”’])


@njit(cache=True)
def _set_apart(src: np.ndarray, n: int, dst: np.ndarray, which: int) -> int:
    """Each character of a class → `` c `` (the rules ``[;@#$%&]``, ``[?!]``, ...)."""
    m = 0
    for i in range(n):
        c = src[i]
        if _in_set(c, which):
            m = _put3(dst, m, c)
        else:
            dst[m] = c
            m += 1
    return m


@njit(cache=True)
def _quote_space(src: np.ndarray, n: int, dst: np.ndarray) -> int:
    r"""``([^'])' `` → ``\1 ' ``."""
    m, i = 0, 0
    while i < n:
        c = src[i]
        if c != 39 and i + 2 < n and src[i + 1] == 39 and src[i + 2] == 32:
            dst[m] = c
            dst[m + 1] = 32
            dst[m + 2] = 39
            dst[m + 3] = 32
            m += 4
            i += 3
        else:
            dst[m] = c
            m += 1
            i += 1
    return m


@njit(cache=True)
def _double_quote(src: np.ndarray, n: int, dst: np.ndarray) -> int:
    """``"`` → `` '' ``."""
    m = 0
    for i in range(n):
        if src[i] == 34:
            dst[m] = 32
            dst[m + 1] = 39
            dst[m + 2] = 39
            dst[m + 3] = 32
            m += 4
        else:
            dst[m] = src[i]
            m += 1
    return m


@njit(cache=True)
def _one_space(src: np.ndarray, n: int, dst: np.ndarray, cls: np.ndarray) -> int:
    r"""``\s+`` → `` ``."""
    m, i = 0, 0
    while i < n:
        if _sp(cls, src[i]):
            while i < n and _sp(cls, src[i]):
                i += 1
            dst[m] = 32
        else:
            dst[m] = src[i]
            i += 1
        m += 1
    return m


@njit(cache=True)
def _clitic_s_m_d(src: np.ndarray, n: int, dst: np.ndarray) -> int:
    r"""``([^' ])('[sS]|'[mM]|'[dD]|') `` → ``\1 \2 ``."""
    m, i = 0, 0
    while i < n:
        c = src[i]
        if c != 39 and c != 32 and i + 2 < n and src[i + 1] == 39:
            x = src[i + 2]
            letter = x == 115 or x == 83 or x == 109 or x == 77 or x == 100 or x == 68
            if letter and i + 3 < n and src[i + 3] == 32:
                dst[m] = c
                dst[m + 1] = 32
                dst[m + 2] = 39
                dst[m + 3] = x
                dst[m + 4] = 32
                m += 5
                i += 4
                continue
            if x == 32:
                dst[m] = c
                dst[m + 1] = 32
                dst[m + 2] = 39
                dst[m + 3] = 32
                m += 4
                i += 3
                continue
        dst[m] = c
        m += 1
        i += 1
    return m


@njit(cache=True)
def _clitic_long(src: np.ndarray, n: int, dst: np.ndarray) -> int:
    r"""``([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) `` → ``\1 \2 ``."""
    m, i = 0, 0
    while i < n:
        c = src[i]
        if c != 39 and c != 32 and i + 4 < n and src[i + 4] == 32:
            a = i + 1
            if (
                _has(src, n, a, _LL2, False)
                or _has(src, n, a, _LL3, False)
                or _has(src, n, a, _RE2, False)
                or _has(src, n, a, _RE3, False)
                or _has(src, n, a, _VE2, False)
                or _has(src, n, a, _VE3, False)
                or _has(src, n, a, _NT, False)
                or _has(src, n, a, _NT2, False)
            ):
                dst[m] = c
                dst[m + 1] = 32
                dst[m + 2 : m + 5] = src[a : a + 3]
                dst[m + 5] = 32
                m += 6
                i += 5
                continue
        dst[m] = c
        m += 1
        i += 1
    return m


@njit(cache=True)
def _macintyre(src: np.ndarray, n: int, dst: np.ndarray, cls: np.ndarray) -> int:
    r"""MacIntyre's contractions, ``(?i)\b(can)(not)\b`` … ``(?i)\b(wan)(na)(?=\s)``.

    NLTK runs one substitution per pair, `` \1 \2 ``; here one pass tries them all at each
    word start. None can make or break another: each needs a whole word between word
    boundaries, and a split only puts spaces where a boundary was or inside its own word.
    """
    m, i = 0, 0
    while i < n:
        c = src[i]
        if _w(cls, c) and (i == 0 or not _w(cls, src[i - 1])):
            head, size = 0, 0
            low = _lower(c)
            if low == 99 and _word_is(src, n, i, _CANNOT, cls):
                head, size = 3, 6
            elif low == 100 and _word_is(src, n, i, _DYE, cls):
                head, size = 1, 4
            elif (
                low == 103
                and (
                    _word_is(src, n, i, _GIMME, cls)
                    or _word_is(src, n, i, _GONNA, cls)
                    or _word_is(src, n, i, _GOTTA, cls)
                )
            ) or (low == 108 and _word_is(src, n, i, _LEMME, cls)):
                head, size = 3, 5
            elif low == 109 and _word_is(src, n, i, _MOREN, cls):
                head, size = 4, 6
            elif (
                low == 119 and _has(src, n, i, _WANNA, True) and i + 5 < n and _sp(cls, src[i + 5])
            ):
                head, size = 3, 5
            if size:
                dst[m] = 32
                dst[m + 1 : m + 1 + head] = src[i : i + head]
                m += 1 + head
                dst[m] = 32
                dst[m + 1 : m + 1 + size - head] = src[i + head : i + size]
                m += 1 + size - head
                dst[m] = 32
                m += 1
                i += size
                continue
        dst[m] = c
        m += 1
        i += 1
    return m


@njit(cache=True)
def _tis_twas(src: np.ndarray, n: int, dst: np.ndarray, cls: np.ndarray) -> int:
    r"""``(?i) ('t)(is)\b`` and ``(?i) ('t)(was)\b`` → `` \1 \2 `` (one pass: disjoint)."""
    m, i = 0, 0
    while i < n:
        if src[i] == 32 and i + 2 < n and src[i + 1] == 39 and _lower(src[i + 2]) == 116:
            size = 2 if _word_is(src, n, i + 3, _IS, cls) else 0
            if not size and _word_is(src, n, i + 3, _WAS, cls):
                size = 3
            if size:
                dst[m] = 32
                dst[m + 1] = 39
                dst[m + 2] = src[i + 2]
                dst[m + 3] = 32
                dst[m + 4 : m + 4 + size] = src[i + 3 : i + 3 + size]
                m += 4 + size
                dst[m] = 32
                m += 1
                i += 3 + size
                continue
        dst[m] = src[i]
        m += 1
        i += 1
    return m


# The rules in NLTK's order, each with the characters a text needs for it to run.
_STEPS = np.array(
    [
        _OPEN,  # ([«“‘„]|[`]+)
        _DQ,  # ^"
        _OPEN | _DQ,  # (``)
        _DQ | _SQ,  # ([ \(\[{<])(\"|\'{2})
        _SQ,  # the quote opening a word
        _DOT,  # the final period, closers with a space
        _COLON,  # ([:,])([^\d])
        _COLON,  # ([:,])$
        _DOT,  # \.{2,}
        _SYM,  # [;@#$%&]
        _DASH,  # [\u2012-\u2015]
        _DOT,  # the final period
        _MARK,  # [?!]
        _SQ,  # ([^'])'
        _STAR,  # [*]
        _BRACKET,  # [\]\[\(\)\{\}\<\>]
        _HYPHEN,  # --
        _DQ | _SQ | _TWICE,  # " " + text + " " (for the rules that read spaces)
        _CLOSE,  # ([»”’])
        _SQ,  # ''
        _DQ,  # "
        _DQ | _SQ | _TWICE,  # \s+ (else white space becomes a space as the text is written)
        _DQ | _SQ,  # ([^' ])('[sS]|'[mM]|'[dD]|')
        _DQ | _SQ,  # ([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T)
        _SQ | _TWICE,  # MacIntyre's contractions
        _SQ,  # 'tis, 'twas
    ],
    dtype=np.int64,
)


@njit(cache=True)
def _step(k: int, src: np.ndarray, n: int, dst: np.ndarray, cls: np.ndarray) -> int:
    """Run rule ``k`` of :data:`_STEPS` from ``src[:n]`` into ``dst``; return the length.

    A rule that leaves its result in ``src`` (in place, or unchanged) returns ``~length``.
    """
    if k == 0:
        return _opening_quotes(src, n, dst)
    if k == 1:
        return _leading_double_quote(src, n, dst)
    if k == 2:
        return _double_backquotes(src, n, dst)
    if k == 3:
        return _quote_after_opener(src, n, dst)
    if k == 4:
        return _quote_opening_word(src, n, dst, cls)
    if k == 5 or k == 11:
        return _final_period(src, n, cls, k == 5)
    if k == 6:
        return _colon_comma(src, n, dst, cls)
    if k == 7:
        return _final_colon_comma(src, n)
    if k == 8:
        return _ellipsis(src, n, dst)
    if k == 9:
        return _set_apart(src, n, dst, 0)
    if k == 10:
        return _set_apart(src, n, dst, 1)
    if k == 12:
        return _set_apart(src, n, dst, 2)
    if k == 13:
        return _quote_space(src, n, dst)
    if k == 14:
        return _set_apart(src, n, dst, 3)
    if k == 15:
        return _set_apart(src, n, dst, 4)
    if k == 16:
        return _pairs(src, n, dst, 45)
    if k == 17:
        dst[0] = 32
        dst[1 : n + 1] = src[:n]
        dst[n + 1] = 32
        return n + 2
    if k == 18:
        return _set_apart(src, n, dst, 5)
    if k == 19:
        return _pairs(src, n, dst, 39)
    if k == 20:
        return _double_quote(src, n, dst)
    if k == 21:
        return _one_space(src, n, dst, cls)
    if k == 22:
        return _clitic_s_m_d(src, n, dst)
    if k == 23:
        return _clitic_long(src, n, dst)
    if k == 24:
        return _macintyre(src, n, dst, cls)
    return _tis_twas(src, n, dst, cls)


@njit(cache=True)
def _rules(
    a: np.ndarray, b: np.ndarray, n: int, has: np.int64, cls: np.ndarray
) -> tuple[bool, int]:
    """Run the rules a text needs on ``a[:n]`` in NLTK's order, between ``a`` and ``b``.

    Returns whether the result is in ``a`` (else ``b``) and its length, or a length of -1
    when a rule might not fit (no rule writes more than four characters for one it reads):
    the caller grows the buffers and runs the text again.
    """
    src, dst = a, b
    in_a = True
    for k in range(_STEPS.size):
        if not has & _STEPS[k]:
            continue
        if 4 * n + 8 > dst.size:
            return in_a, -1
        done = _step(k, src, n, dst, cls)
        if done < 0:
            n = ~done
        else:
            n = done
            src, dst, in_a = dst, src, not in_a
    return in_a, n


# Punkt's possible break: ``[.?!]`` followed by one of these, or by white space and more
# text (PunktLanguageVars' period context); a text without one is a single sentence.
_PUNKT_AFTER = np.zeros(0x201E, dtype=np.bool_)
_PUNKT_AFTER[[ord(c) for c in ")\";}]*:@'({[!?‘’“”«»"]] = True


@njit(cache=True, nogil=True)
def treebank_block(
    data: np.ndarray, lows: np.ndarray, highs: np.ndarray, cls: np.ndarray, whole: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Tokenize each text ``data[lows[t]:highs[t]]`` (UTF-8) as ``NLTKWordTokenizer`` does.

    Parameters
    ----------
    data, lows, highs
        The texts' bytes and each text's span.
    cls
        :func:`char_classes`.
    whole
        The texts are whole texts, as given to ``word_tokenize``: one that Punkt could split
        is not tokenized (:data:`BREAKS`), the others are right-stripped first (Punkt's one
        sentence); otherwise they are Punkt's sentences, tokenized as they are.

    Returns
    -------
    out, out_lows, out_highs, status
        The tokens of text ``t``, separated by spaces, are ``out[out_lows[t]:out_highs[t]]``
        when ``status[t]`` is :data:`DONE` (empty otherwise).
    """
    count = lows.size
    status = np.zeros(count, dtype=np.uint8)
    out_lows = np.zeros(count, dtype=np.int64)
    out_highs = np.zeros(count, dtype=np.int64)
    out = np.empty(2 * data.size + 16, dtype=np.uint8)
    at = 0
    cap = 256
    a = np.empty(cap, dtype=np.int32)
    b = np.empty(cap, dtype=np.int32)
    t = 0
    while t < count:
        i, end = lows[t], highs[t]
        if 4 * (end - i) + 8 > cap:
            cap = 4 * (end - i) + 8
            a = np.empty(cap, dtype=np.int32)
            b = np.empty(cap, dtype=np.int32)
        n, has, bad = 0, np.int64(0), False
        before = -1  # the character before, lower-cased
        mark, spaced, breaks = False, False, False  # Punkt's possible break (_may_break)
        while i < end:
            c, width = decode_char(data, i)
            kind = cls[c]
            if kind & _BAD:
                bad = True
                break
            a[n] = c
            if c < _NEEDS.size:
                has |= _NEEDS[c]
            low = _lower(int(c))
            if low == before and (low == 110 or low == 109 or low == 116):
                has |= _TWICE
            before = low
            if spaced:
                breaks |= not kind & _S
            elif mark:
                if c < _PUNKT_AFTER.size and _PUNKT_AFTER[c]:
                    breaks = True
                elif kind & _S:
                    spaced = True
            mark = c == 46 or c == 63 or c == 33
            n += 1
            i += width
        if bad:
            status[t] = UNSAFE
            t += 1
            continue
        if whole:
            if breaks:
                status[t] = BREAKS
                t += 1
                continue
            while n and _sp(cls, a[n - 1]):
                n -= 1
        in_a, n = _rules(a, b, n, has, cls)
        if n < 0:  # a rule might not have fit: larger buffers, the text again
            cap *= 4
            a = np.empty(cap, dtype=np.int32)
            b = np.empty(cap, dtype=np.int32)
            continue
        out_lows[t] = at
        out, at = append_utf8(out, at, a if in_a else b, n, cls, _S)
        out_highs[t] = at
        t += 1
    return out[:at], out_lows, out_highs, status
