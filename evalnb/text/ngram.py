"""Vectorized n-gram machinery.

sacrebleu's 13a tokenizer as Polars regex passes over a whole column, and clipped n-gram
match statistics for all (hypothesis, references) pairs at once.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from evalnb.text.mteval13a import REPLACEMENTS_13A

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "NgramStats",
    "TokenIds",
    "flat_ngram_stats",
    "id_ngram_stats",
    "ids_13a",
    "ids_13a_segments",
    "ngram_stats",
    "spaced_13a",
    "tokenize_13a",
    "tokens_13a",
]

# mteval-v13a as sacrebleu implements it (tokenizer_13a.py + tokenizer_re.py), one Polars
# pass per rule. Rust regex and Python `re` agree on these patterns: no look-arounds, and
# leftmost-first, non-overlapping replacement in both.
_13A_RULES = (
    # sacrebleu's class also holds the space (the range " -&"); padding a space with spaces
    # changes no token, and leaving it out makes this pass 8x faster.
    (r"[\{-~\[-\x60!-&\(-\+:-@/]", " $0 "),
    (r"([^0-9])([\.,])", "${1} ${2} "),
    (r"([\.,])([^0-9])", " ${1} ${2}"),
    (r"([0-9])(-)", "${1} ${2} "),
)


def tokenize_13a(texts: pl.Series) -> pl.Series:
    """Tokenize like ``sacrebleu``'s ``13a`` tokenizer (after its ``rstrip``), per text.

    Examples
    --------
    >>> tokenize_13a(pl.Series(["Hello, world!  It costs $1,000.5-2."])).to_list()
    [['Hello', ',', 'world', '!', 'It', 'costs', '$', '1,000.5', '-', '2', '.']]
    """
    return pl.DataFrame({"t": texts.fill_null("")}).select(tokens_13a(pl.col("t"))).to_series()


def ids_13a(*columns: pl.Series) -> TokenIds:
    """Tokenize several columns like :func:`tokenize_13a`, straight to shared token ids.

    The hot path of BLEU: the 13a rules and the split run compiled over the columns' UTF-8
    buffers while tokens are interned (:mod:`evalnb.text.rules13a`), with no list of strings
    and no rewritten copy of the texts in between.
    """
    from evalnb.text.intern import intern_buffers, joined_buffers  # noqa: PLC0415 - compiles
    from evalnb.text.rules13a import replaced_13a  # noqa: PLC0415 - on first use

    data, lows, highs = replaced_13a(*joined_buffers([c.to_arrow() for c in columns]))
    counts = [c.len() for c in columns]
    ids, offs, vocab = intern_buffers(data, lows, highs, counts, rules13a=True)
    return TokenIds(ids, tuple(offs), vocab)


def ids_13a_segments(
    hyps: pl.Series, refs: pl.Series, separator: str
) -> tuple[TokenIds, np.ndarray]:
    """:func:`ids_13a` of each hypothesis's first segment and of every reference segment.

    Segments are ``str.split(separator)``'s, read where they lie in the columns' buffers
    (:func:`evalnb.text.segments.segment_spans`); a null reads as empty. Returns the ids
    (column 0 the hypotheses' first segments, column 1 every reference segment, in order)
    and how many segments each reference has.
    """
    from evalnb.text.intern import intern_buffers, joined_buffers  # noqa: PLC0415 - compiles
    from evalnb.text.rules13a import replaced_13a_spans  # noqa: PLC0415 - on first use
    from evalnb.text.segments import segment_spans  # noqa: PLC0415 - on first use

    n = hyps.len()
    if refs.len() != n:
        msg = f"hypotheses and references must be as many; got {n} and {refs.len()}"
        raise ValueError(msg)
    data, offsets = joined_buffers([hyps.to_arrow(), refs.to_arrow()])
    h_lo, h_hi, _ = segment_spans(data, offsets[: n + 1], separator, first_only=True)
    r_lo, r_hi, counts = segment_spans(data, offsets[n:], separator)
    data, lows, highs = replaced_13a_spans(
        data, np.concatenate([h_lo, r_lo]), np.concatenate([h_hi, r_hi])
    )
    ids, offs, vocab = intern_buffers(data, lows, highs, [n, int(counts.sum())], rules13a=True)
    return TokenIds(ids, tuple(offs), vocab), counts


def tokens_13a(text: pl.Expr) -> pl.Expr:
    """Build the 13a tokenizer as an expression (usable inside ``list.eval``)."""
    return spaced_13a(text).str.extract_all(r"\S+").fill_null([])


def _replaced_13a(text: pl.Expr) -> pl.Expr:
    """Python's ``rstrip`` (as sacrebleu does) and 13a's character replacements (before its rules)."""
    # Python's str.split()/rstrip() treat \x1c-\x1f as whitespace; Rust's \s does not.
    # They become spaces before the strip, which must come first: "-\n" at the very end of a
    # text is stripped to "-", not replaced by nothing.
    s = text.fill_null("").str.replace_all(r"[\x1c-\x1f]", " ").str.strip_chars_end()
    for old, new in REPLACEMENTS_13A:
        s = s.str.replace_all(old, new, literal=True)
    return s


def spaced_13a(text: pl.Expr, *, padded: bool = True) -> pl.Expr:
    """Apply the 13a replacements and rules: the tokens, separated by white space.

    ``padded=False`` applies the rules alone, to the text as it is: sacrebleu's ``zh``
    tokenizer ends with them (``TokenizerRegexp``), without 13a's replacements and padding.
    """
    s = pl.concat_str([pl.lit(" "), _replaced_13a(text), pl.lit(" ")]) if padded else text
    for pattern, repl in _13A_RULES:
        s = s.str.replace_all(pattern, repl)
    return s


@dataclass(frozen=True)
class TokenIds:
    """Tokens of several columns as dense integer ids: equal tokens, equal ids.

    ``ids[offsets[c][i]:offsets[c][i + 1]]`` are the tokens of text ``i`` of column ``c``;
    ``vocab[k]`` is the token of id ``k`` when known.
    """

    ids: np.ndarray
    offsets: tuple[np.ndarray, ...]
    vocab: pa.LargeStringArray | None = None

    @classmethod
    def split(cls, columns: list[pl.Series]) -> TokenIds:
        """Split white-space separated texts (nulls read as empty) into shared ids."""
        from evalnb.text.intern import intern_tokens  # noqa: PLC0415 - compiles on first use

        ids, offsets, vocab = intern_tokens([c.to_arrow() for c in columns])
        return cls(ids, tuple(offsets), vocab)

    def lists(self, column: int) -> list[list[str]]:
        """Give the tokens of ``column`` back as strings (for checks and debugging)."""
        if self.vocab is None:
            msg = "these token ids were built without their vocabulary; use TokenIds.split"
            raise ValueError(msg)
        words = np.asarray(self.vocab.to_pylist(), dtype=object)
        off = self.offsets[column]
        return [words[self.ids[a:b]].tolist() for a, b in itertools.pairwise(off)]


@dataclass(frozen=True)
class NgramStats:
    """sacrebleu's sufficient statistics, per pair.

    Hypothesis length, closest reference length, and for n = 1..N the clipped matches and
    the hypothesis n-gram count.
    """

    hyp_len: np.ndarray
    ref_len: np.ndarray
    correct: np.ndarray  # shape (pairs, N)
    total: np.ndarray  # shape (pairs, N)


def column_ids(flat: pl.Series) -> np.ndarray:
    """Integer ids of a flat token column (equal strings, equal ids)."""
    return flat.cast(pl.Categorical).to_physical().to_numpy().astype(np.int64)


def row_offsets(lengths: pl.Series) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(lengths.fill_null(0).to_numpy(), dtype=np.int64)])


def ngram_stats(hyps: pl.Series, refs: pl.Series, max_order: int = 4) -> NgramStats:
    """Clipped n-gram statistics of every pair, counts clipped by the maximum over references.

    ``hyps`` is a ``List(String)`` column of hypothesis tokens, ``refs`` a
    ``List(List(String))`` column of reference token lists (zero or more per pair).
    """
    refs = refs.fill_null([])
    return flat_ngram_stats(
        hyps, refs.explode().drop_nulls(), refs.list.len().to_numpy(), max_order
    )


def flat_ngram_stats(
    hyps: pl.Series, ref_lists: pl.Series, refs_per_pair: np.ndarray, max_order: int = 4
) -> NgramStats:
    """Compute :func:`ngram_stats` with the references given flat.

    ``ref_lists`` holds one token list per reference, the first ``refs_per_pair[0]``
    belonging to pair 0, and so on.
    """
    hyps = hyps.fill_null([])
    ref_lists = ref_lists.fill_null([])
    ids = column_ids(pl.concat([hyps.explode().drop_nulls(), ref_lists.explode().drop_nulls()]))
    hyp_off = row_offsets(hyps.list.len())
    ref_off = row_offsets(ref_lists.list.len()) + hyp_off[-1]
    return id_ngram_stats(
        TokenIds(ids, (hyp_off, ref_off)),
        refs_per_pair,
        max_order,
    )


def id_ngram_stats(tokens: TokenIds, refs_per_pair: np.ndarray, max_order: int = 4) -> NgramStats:
    """Clipped n-gram statistics from token ids: column 0 the hypotheses, 1 the references.

    Pair ``i`` has the next ``refs_per_pair[i]`` texts of column 1 as its references.
    """
    from evalnb.text.ngram_kernel import clipped_counts  # noqa: PLC0415 - compiles on first use

    hyp_off, ref_off = tokens.offsets
    correct, total, closest = clipped_counts(
        tokens.ids,
        hyp_off[:-1],
        hyp_off[1:],
        ref_off[:-1],
        ref_off[1:],
        np.concatenate([[0], np.cumsum(refs_per_pair, dtype=np.int64)]),
        max_order,
    )
    return NgramStats(np.diff(hyp_off), closest, correct, total)
