"""NLTK's Porter stemmer (its default ``NLTK_EXTENSIONS`` mode), compiled, over a whole vocabulary.

rouge-score stems with ``nltk.stem.porter.PorterStemmer()``; at a few thousand distinct words
per lab, NLTK's rule lists of Python lambdas took 60 % of ROUGE's time (25 µs a word). This
module runs the same algorithm as one numba pass over the vocabulary's Arrow bytes (about 0.2
µs a word) and equals NLTK word for word (``tests/text/test_porter.py`` compares both on real
text and on words built from every suffix the rules name).

The kernel follows NLTK's structure step by step, so each rule can be read against
``nltk/stem/porter.py``: ``_apply`` is ``_apply_rule_list`` (the first rule whose suffix the
word ends with decides; a failed condition leaves the word), the condition codes name NLTK's
lambdas. Words are ASCII bytes: rouge-score keeps only ``[a-z0-9]`` before it stems, and
:func:`stem_words` refuses anything else rather than stem it differently from NLTK. NLTK's
table of irregular forms (``skies`` → ``sky``) is looked up before the kernel, as NLTK does.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from numba import njit

__all__ = ["IRREGULAR", "stem_words"]

IRREGULAR = {
    "sky": "sky",
    "skies": "sky",
    "dying": "die",
    "lying": "lie",
    "tying": "tie",
    "news": "news",
    "innings": "inning",
    "inning": "inning",
    "outings": "outing",
    "outing": "outing",
    "cannings": "canning",
    "canning": "canning",
    "howe": "howe",
    "proceed": "proceed",
    "exceed": "exceed",
    "succeed": "succeed",
}
"""NLTK's ``pool``: irregular forms it maps before any rule (``NLTK_EXTENSIONS`` only)."""

# Conditions on the stem left once a rule's suffix is cut (NLTK's lambdas by what they test).
_ANY, _M0, _M1, _ION, _LOGI, _LL = 0, 1, 2, 3, 4, 5


def _rules(*rules: tuple[str, str, int]) -> tuple[np.ndarray, ...]:
    """Pack ``(suffix, replacement, condition)`` rules into flat arrays the kernel reads."""
    suffixes = [s.encode() for s, _, _ in rules]
    replacements = [r.encode() for _, r, _ in rules]
    return (
        np.frombuffer(b"".join(suffixes), dtype=np.uint8).copy(),
        np.cumsum([0, *map(len, suffixes)]).astype(np.int64),
        np.frombuffer(b"".join(replacements), dtype=np.uint8).copy(),
        np.cumsum([0, *map(len, replacements)]).astype(np.int64),
        np.array([c for _, _, c in rules], dtype=np.int64),
    )


_STEP1A = _rules(("sses", "ss", _ANY), ("ies", "i", _ANY), ("ss", "ss", _ANY), ("s", "", _ANY))
_STEP2 = _rules(
    ("ational", "ate", _M0),
    ("tional", "tion", _M0),
    ("enci", "ence", _M0),
    ("anci", "ance", _M0),
    ("izer", "ize", _M0),
    ("bli", "ble", _M0),  # NLTK's mode takes "bli", the original "abli"
    ("alli", "al", _M0),
    ("entli", "ent", _M0),
    ("eli", "e", _M0),
    ("ousli", "ous", _M0),
    ("ization", "ize", _M0),
    ("ation", "ate", _M0),
    ("ator", "ate", _M0),
    ("alism", "al", _M0),
    ("iveness", "ive", _M0),
    ("fulness", "ful", _M0),
    ("ousness", "ous", _M0),
    ("aliti", "al", _M0),
    ("iviti", "ive", _M0),
    ("biliti", "ble", _M0),
    ("fulli", "ful", _M0),
    ("logi", "log", _LOGI),
)
_STEP3 = _rules(
    ("icate", "ic", _M0),
    ("ative", "", _M0),
    ("alize", "al", _M0),
    ("iciti", "ic", _M0),
    ("ical", "ic", _M0),
    ("ful", "", _M0),
    ("ness", "", _M0),
)
_STEP4 = _rules(
    *[
        (s, "", _ION if s == "ion" else _M1)
        for s in (
            *("al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment"),
            *("ent", "ion", "ou", "ism", "ate", "iti", "ous", "ive", "ize"),
        )
    ]
)
_STEP5B = _rules(("ll", "l", _LL))

_A, _E, _I, _O, _U, _Y = (ord(c) for c in "aeiouy")


@njit(cache=True, inline="always")
def _vowel(c: np.uint8) -> bool:
    return c in (_A, _E, _I, _O, _U)


@njit(cache=True)
def _consonant(w: np.ndarray, i: int) -> bool:
    """NLTK's ``_is_consonant``: a ``y`` is a consonant after a vowel or at the start."""
    if _vowel(w[i]):
        return False
    if w[i] == _Y:
        negate = False
        while i > 0 and w[i] == _Y:
            negate = not negate
            i -= 1
        return (not _vowel(w[i])) != negate
    return True


@njit(cache=True)
def _measure(w: np.ndarray, k: int) -> int:
    """NLTK's ``_measure`` of ``w[:k]``: the number of vowel-consonant joins, one pass."""
    m = 0
    before = True  # the flag of the letter before: consonant
    for i in range(k):
        if _vowel(w[i]):
            flag = False
        elif w[i] == _Y:
            flag = True if i == 0 else not before
        else:
            flag = True
        if flag and i > 0 and not before:
            m += 1
        before = flag
    return m


@njit(cache=True)
def _has_vowel(w: np.ndarray, k: int) -> bool:
    before = True
    for i in range(k):
        if _vowel(w[i]):
            return True
        flag = (True if i == 0 else not before) if w[i] == _Y else True
        if not flag:
            return True
        before = flag
    return False


@njit(cache=True)
def _double(w: np.ndarray, k: int) -> bool:
    return k >= 2 and w[k - 1] == w[k - 2] and _consonant(w, k - 1)


@njit(cache=True)
def _cvc(w: np.ndarray, k: int) -> bool:
    """NLTK's ``_ends_cvc`` (its mode also counts a two-letter vowel-consonant word)."""
    if (
        k >= 3
        and _consonant(w, k - 3)
        and not _consonant(w, k - 2)
        and _consonant(w, k - 1)
        and w[k - 1] not in (ord("w"), ord("x"), ord("y"))
    ):
        return True
    return k == 2 and not _consonant(w, 0) and _consonant(w, 1)


@njit(cache=True)
def _ends(w: np.ndarray, k: int, suffix: np.ndarray, lo: int, hi: int) -> bool:
    n = hi - lo
    if n > k:
        return False
    for j in range(n):  # noqa: SIM110 - a loop numba compiles; a generator it would not
        if w[k - n + j] != suffix[lo + j]:
            return False
    return True


@njit(cache=True)
def _apply(
    w: np.ndarray,
    k: int,
    suf: np.ndarray,
    suf_off: np.ndarray,
    rep: np.ndarray,
    rep_off: np.ndarray,
    cond: np.ndarray,
) -> int:
    """NLTK's ``_apply_rule_list``: the first rule whose suffix matches decides; new length."""
    for r in range(cond.size):
        if not _ends(w, k, suf, suf_off[r], suf_off[r + 1]):
            continue
        stem = k - (suf_off[r + 1] - suf_off[r])
        c = cond[r]
        if c == _M0:
            ok = _measure(w, stem) > 0
        elif c == _M1:
            ok = _measure(w, stem) > 1
        elif c == _ION:
            ok = _measure(w, stem) > 1 and w[stem - 1] in (ord("s"), ord("t"))
        elif c == _LOGI:
            ok = _measure(w, k - 3) > 0  # NLTK measures the word less "ogi"
        elif c == _LL:
            ok = _measure(w, k - 1) > 1  # and the word less its last "l"
        else:
            ok = True
        if not ok:
            return k
        for j in range(rep_off[r + 1] - rep_off[r]):
            w[stem + j] = rep[rep_off[r] + j]
        return int(stem + rep_off[r + 1] - rep_off[r])
    return k


@njit(cache=True)
def _step1b(w: np.ndarray, k: int) -> int:
    e, d, i = ord("e"), ord("d"), ord("i")
    if k >= 3 and w[k - 3] == i and w[k - 2] == e and w[k - 1] == d:  # NLTK's "ied"
        return k - 1 if k == 4 else k - 2  # "ie" for a word of four letters, else "i"
    if k >= 3 and w[k - 3] == e and w[k - 2] == e and w[k - 1] == d:
        return k - 1 if _measure(w, k - 3) > 0 else k
    if k >= 2 and w[k - 2] == e and w[k - 1] == d and _has_vowel(w, k - 2):
        k -= 2
    elif (
        k >= 3
        and w[k - 3] == i
        and w[k - 2] == ord("n")
        and w[k - 1] == ord("g")
        and _has_vowel(w, k - 3)
    ):
        k -= 3
    else:
        return k
    last = w[k - 1]
    if k >= 2 and (
        (w[k - 2] == _A and last == ord("t"))
        or (w[k - 2] == ord("b") and last == ord("l"))
        or (w[k - 2] == _I and last == ord("z"))
    ):
        w[k] = e
        return k + 1
    if _double(w, k):
        return k if last in (ord("l"), ord("s"), ord("z")) else k - 1
    if _measure(w, k) == 1 and _cvc(w, k):
        w[k] = e
        return k + 1
    return k


@njit(cache=True)
def _stem(w: np.ndarray, k: int) -> int:
    """Stem ``w[:k]`` in place (``w`` has room for growth); the stem's length."""
    ties = k == 4 and w[1] == _I and w[2] == _E and w[3] == ord("s")  # NLTK: "ties" -> "tie"
    k = 3 if ties else _apply(w, k, *_STEP1A)
    k = _step1b(w, k)
    if k >= 3 and w[k - 1] == _Y and _consonant(w, k - 2):  # step 1c, NLTK's condition
        w[k - 1] = _I
    if (
        k >= 4
        and w[k - 4] == _A
        and w[k - 3] == ord("l")
        and w[k - 2] == ord("l")
        and w[k - 1] == _I
        and _measure(w, k - 4) > 0
    ):
        k -= 2  # NLTK's "alli" -> "al", then step 2 again
    k = _apply(w, k, *_STEP2)
    k = _apply(w, k, *_STEP3)
    k = _apply(w, k, *_STEP4)
    if k >= 1 and w[k - 1] == _E:
        m = _measure(w, k - 1)
        if m > 1 or (m == 1 and not _cvc(w, k - 1)):
            k -= 1
    return _apply(w, k, *_STEP5B)


@njit(cache=True)
def _stem_all(
    data: np.ndarray, offsets: np.ndarray, min_len: int, skip: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    n = offsets.size - 1
    longest = 0
    for t in range(n):
        longest = max(longest, offsets[t + 1] - offsets[t])
    w = np.empty(longest + 8, dtype=np.uint8)  # a rule adds at most one letter at a time
    out = np.empty(data.size + n, dtype=np.uint8)
    out_off = np.zeros(n + 1, dtype=np.int64)
    at = 0
    for t in range(n):
        lo, hi = offsets[t], offsets[t + 1]
        k = hi - lo
        for j in range(k):
            w[j] = data[lo + j]
        if k >= min_len and k > 2 and not skip[t]:
            k = _stem(w, k)
        for j in range(k):
            out[at + j] = w[j]
        at += k
        out_off[t + 1] = at
    return out[:at], out_off


def stem_words(words: pa.Array, min_len: int = 3) -> pa.LargeStringArray:
    """Porter-stem every word of ``words`` as ``nltk.stem.porter.PorterStemmer().stem`` does.

    Parameters
    ----------
    words
        Lower-case ASCII words (a string array without nulls; a vocabulary, each word once).
    min_len
        Words shorter than this are kept as they are (rouge-score stems only words longer
        than three letters: ``min_len=4``). NLTK itself leaves words of two letters alone.

    Returns
    -------
    pa.LargeStringArray
        The stems, in the order of ``words``.

    Raises
    ------
    ValueError
        When a word holds a null, an upper-case letter or a byte outside ASCII: NLTK would
        lower-case it first, and the kernel stems bytes, not letters.
    """
    words = words.cast(pa.large_string())
    if words.null_count or pc.all(pc.string_is_ascii(words)).as_py() is False:
        raise ValueError(_NOT_WORDS)
    if pc.any(pc.match_substring_regex(words, "[A-Z]")).as_py() is True:
        raise ValueError(_NOT_WORDS)
    words = pa.concat_arrays([words]) if words.offset else words
    _, offsets_buf, data_buf = words.buffers()
    offsets = np.frombuffer(offsets_buf, dtype=np.int64)[: len(words) + 1]
    data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf else np.zeros(0, np.uint8)
    min_len = max(min_len, 3)  # NLTK leaves words of one or two letters as they are
    at = pc.index_in(words, _IRREGULAR_KEYS)
    irregular = pc.and_(pc.is_valid(at), pc.greater_equal(pc.utf8_length(words), min_len))
    skip = irregular.to_numpy(zero_copy_only=False)
    stems, stem_off = _stem_all(data, offsets - offsets[0], min_len, skip)
    out = pa.LargeStringArray.from_buffers(len(words), pa.py_buffer(stem_off), pa.py_buffer(stems))
    if skip.any():
        out = pc.if_else(irregular, pc.take(_IRREGULAR_VALUES, at), out)
    return out


_NOT_WORDS = (
    "stem_words expects lower-case ASCII words without nulls (rouge-score's tokens); found a "
    "null, an upper-case letter or a character outside ASCII; lower-case and split the text first"
)
_IRREGULAR_KEYS = pa.array(list(IRREGULAR), pa.large_string())
_IRREGULAR_VALUES = pa.array(list(IRREGULAR.values()), pa.large_string())
