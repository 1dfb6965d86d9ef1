r"""NLTK's ``word_tokenize`` over whole columns: Punkt sentences, then the Treebank rules.

H2O's BLEU tokenizes with ``nltk.word_tokenize``: Punkt splits the text into sentences and
``NLTKWordTokenizer`` applies some thirty regex substitutions to each. Run in Python that
costs about 200 µs per text (NLTK now guards each regex against ReDoS), more than the BLEU
arithmetic. Here the substitutions run compiled (:mod:`evalnb.text.treebank_rules`) over
the columns' UTF-8 buffers, and the tokens go from there to the interner with no string of
Python in between. Two parts stay in Python, each only where it is needed:

* Punkt, for texts that contain a possible sentence break (a ``.``, ``?`` or ``!`` followed
  by punctuation or by white space and more text); its sentences go back to the kernel.
  Any other text is one sentence;
* texts holding a character on which Python's ``re`` and ``regex`` disagree (``\w``, ``\s``,
  ``\d``, or a case fold onto an ASCII letter; :func:`~evalnb.text.treebank_rules.char_classes`):
  NLTK's own tokenizer runs on those.

Each distinct text of those two kinds is handled once. Property tests compare the result
with NLTK on random texts built from the tokens the rules act on, and on arbitrary text.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np
import polars as pl
import pyarrow as pa

from evalnb.text.intern import (
    intern_buffers,
    joined_buffers,
    spans_in_blocks,
    spans_to_strings,
)
from evalnb.text.ngram import TokenIds
from evalnb.text.sentences import split_sentences
from evalnb.text.treebank_rules import BREAKS, UNSAFE, char_classes, treebank_block

if TYPE_CHECKING:
    from nltk.tokenize import NLTKWordTokenizer

__all__ = ["spaced_words", "treebank_spans", "treebank_token_ids", "word_tokenize"]


@lru_cache(maxsize=1)
def _nltk_words() -> NLTKWordTokenizer:
    from nltk.tokenize import NLTKWordTokenizer  # noqa: PLC0415 - only for unsafe texts

    return NLTKWordTokenizer()


def _whole_texts(data: np.ndarray, lows: np.ndarray, highs: np.ndarray) -> tuple[np.ndarray, ...]:
    """:func:`treebank_block` of whole texts, in a block per core (the kernel frees the GIL)."""
    return spans_in_blocks(treebank_block, data, lows, highs, char_classes(), True)


def _utf8(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """UTF-8 bytes and offsets of Python strings."""
    array = pa.array(texts, type=pa.large_string())
    return joined_buffers([array])


def _by_punkt(texts: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Spaced tokens of texts Punkt splits: each sentence through the kernel.

    The sentences' results are laid one after another with a space after each, so a
    text's result is the run of its sentences' results.
    """
    sentences = split_sentences(texts)
    data, offsets = _utf8([s for sents in sentences for s in sents])
    out, lows, highs, status = treebank_block(
        data, offsets[:-1], offsets[1:], char_classes(), False
    )
    if status.any():  # pragma: no cover - a sentence holds only its text's characters
        msg = "a Punkt sentence of a safe text was found unsafe; please report this text"
        raise AssertionError(msg)
    lengths = highs - lows
    packed = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    size = int(packed[-1])
    # Sentence k moves to packed[k] + k: one space (the buffer's fill) after each.
    spaced = np.full(size + lengths.size, 32, dtype=np.uint8)
    owner = np.repeat(np.arange(lengths.size), lengths)
    spaced[np.arange(size) + owner] = out[np.repeat(lows - packed[:-1], lengths) + np.arange(size)]
    counts = np.array([len(s) for s in sentences], dtype=np.int64)
    ends = np.cumsum(counts)
    starts = ends - counts
    begin = packed[:-1] + np.arange(lengths.size)  # each sentence's new start
    first = np.zeros(len(texts), dtype=np.int64)
    last = np.zeros(len(texts), dtype=np.int64)
    some = counts > 0
    first[some] = begin[starts[some]]
    last[some] = begin[ends[some] - 1] + lengths[ends[some] - 1]
    return spaced, first, last


def _by_nltk(texts: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Spaced tokens of texts the kernel does not read (NLTK's own tokenizer on them)."""
    words = _nltk_words()
    spaced = [
        " ".join(w for s in sents for w in words.tokenize(s)) for sents in split_sentences(texts)
    ]
    data, offsets = _utf8(spaced)
    return data, offsets[:-1], offsets[1:]


def treebank_spans(columns: list[pa.Array]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each text's ``nltk.word_tokenize`` tokens, separated by white space, as byte spans.

    Parameters
    ----------
    columns
        String arrays; their texts are numbered one after another (nulls read as empty).

    Returns
    -------
    data, lows, highs
        The tokens of text ``t`` are ``data[lows[t]:highs[t]]`` split on white space.
    """
    data, offsets = joined_buffers(columns)
    out, lows, highs, status = _whole_texts(data, offsets[:-1], offsets[1:])
    pieces = [out]
    for kind, handle in ((BREAKS, _by_punkt), (UNSAFE, _by_nltk)):
        where = np.flatnonzero(status == kind)
        if not where.size:
            continue
        # Each distinct text once: references repeat across the models of a lab.
        raw = [bytes(data[offsets[t] : offsets[t + 1]]) for t in where.tolist()]
        distinct = list(dict.fromkeys(raw))
        extra, first, last = handle([b.decode() for b in distinct])
        index = {b: k for k, b in enumerate(distinct)}
        pick = np.array([index[b] for b in raw], dtype=np.int64)
        shift = sum(p.size for p in pieces)
        lows[where] = first[pick] + shift
        highs[where] = last[pick] + shift
        pieces.append(extra)
    return (np.concatenate(pieces) if len(pieces) > 1 else out), lows, highs


def treebank_token_ids(columns: list[pl.Series]) -> TokenIds:
    """``nltk.word_tokenize`` of several columns, straight to shared token ids (BLEU's path)."""
    data, lows, highs = treebank_spans([c.to_arrow() for c in columns])
    # Tokens are separated by ASCII spaces: the kernel writes white space as spaces, and
    # NLTK's own tokens (unsafe texts) hold none.
    ids, offsets, vocab = intern_buffers(data, lows, highs, [c.len() for c in columns], spaces=True)
    return TokenIds(ids, tuple(offsets), vocab)


def spaced_words(texts: pl.Series) -> pl.Series:
    """Give each text's ``nltk.word_tokenize`` tokens separated by white space.

    NLTK's tokens hold no white space (its tokenizer ends with ``str.split``), so splitting
    the result on white space gives the tokens back. Nulls read as empty.
    """
    data, lows, highs = treebank_spans([texts.to_arrow()])
    return pl.Series(texts.name, spans_to_strings(data, lows, highs), dtype=pl.String)


def word_tokenize(texts: pl.Series) -> pl.Series:
    """Tokenize every text as ``nltk.word_tokenize`` (English) does; nulls read as empty.

    Examples
    --------
    >>> word_tokenize(pl.Series(["Don't panic. It's 3.5 km, isn't it?"])).to_list()
    [['Do', "n't", 'panic', '.', 'It', "'s", '3.5', 'km', ',', 'is', "n't", 'it', '?']]
    """
    return spaced_words(texts).str.extract_all(r"\S+").fill_null([]).rename(texts.name)
