"""Vectorized n-gram machinery.

sacrebleu's 13a tokenizer as Polars regex passes over a whole column, and clipped n-gram
match statistics for all (hypothesis, references) pairs at once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

__all__ = [
    "NgramStats", "flat_ngram_stats", "ngram_stats", "tokenize_13a", "tokenize_13a_many",
    "tokenize_nltk", "tokens_13a",
]  # fmt: skip

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
    return tokenize_13a_many(texts)[0]


def tokenize_13a_many(*columns: pl.Series) -> list[pl.Series]:
    """Tokenize several columns at once (Polars runs them side by side)."""
    frames = [pl.LazyFrame({"t": c.fill_null("")}).select(tokens_13a(pl.col("t"))) for c in columns]
    return [f.to_series() for f in pl.collect_all(frames)]


def tokenize_nltk(texts: pl.Series) -> pl.Series:
    """Tokenize like NLTK's ``word_tokenize`` (Punkt sentences, then NLTK's Treebank words).

    This is H2O's BLEU tokenization; it runs in Python, once per distinct text.

    Examples
    --------
    >>> tokenize_nltk(pl.Series(["Hello world. It's 3.5 km, isn't it?"])).to_list()
    [['Hello', 'world', '.', 'It', "'s", '3.5', 'km', ',', 'is', "n't", 'it', '?']]
    """
    from nltk.tokenize import NLTKWordTokenizer  # noqa: PLC0415

    from evalnb._sentences import split_sentences  # noqa: PLC0415

    words = NLTKWordTokenizer()
    values = texts.fill_null("").to_list()
    memo: dict[str, list[str]] = {}
    unique = list(dict.fromkeys(values))
    for text, sentences in zip(unique, split_sentences(unique), strict=True):
        memo[text] = [w for s in sentences for w in words.tokenize(s)]
    return pl.Series([memo[v] for v in values], dtype=pl.List(pl.String))


def tokens_13a(text: pl.Expr) -> pl.Expr:
    """Build the 13a tokenizer as an expression (usable inside ``list.eval``)."""
    # Python's str.split()/rstrip() treat \x1c-\x1f as whitespace; Rust's \s does not.
    s = text.fill_null("").str.replace_all(r"[\x1c-\x1f]", " ").str.strip_chars_end()
    for old, new in (("<skipped>", ""), ("-\n", ""), ("\n", " "), ("&quot;", '"'),
                     ("&amp;", "&"), ("&lt;", "<"), ("&gt;", ">")):  # fmt: skip
        s = s.str.replace_all(old, new, literal=True)
    s = pl.concat_str([pl.lit(" "), s, pl.lit(" ")])
    for pattern, repl in _13A_RULES:
        s = s.str.replace_all(pattern, repl)
    return s.str.extract_all(r"\S+").fill_null([])


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


def _ids(flat: pl.Series) -> np.ndarray:
    """Integer ids of a flat token column (equal strings, equal ids)."""
    return flat.cast(pl.Categorical).to_physical().to_numpy().astype(np.int64)


def _global_bits(ids: np.ndarray, max_order: int) -> int:
    """Bits per id when the whole vocabulary packs into 60-bit n-gram keys, else 0."""
    bits = max(1, int(ids.max(initial=0)).bit_length())
    return bits if bits * max_order <= 60 else 0


def _offsets(lengths: pl.Series) -> np.ndarray:
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
    from evalnb._ngram_kernel import clipped_counts  # noqa: PLC0415 - compiles on first use

    hyps = hyps.fill_null([])
    ref_lists = ref_lists.fill_null([])
    both = pl.concat([hyps.explode().drop_nulls(), ref_lists.explode().drop_nulls()])
    ids = _ids(both)
    n_hyp = int(hyps.list.len().sum())
    correct, total, closest = clipped_counts(
        ids[:n_hyp],
        _offsets(hyps.list.len()),
        ids[n_hyp:],
        _offsets(ref_lists.list.len()),
        np.concatenate([[0], np.cumsum(refs_per_pair, dtype=np.int64)]),
        max_order,
        _global_bits(ids, max_order),
    )
    if (correct[:, 0] < 0).any():
        worst = int(np.flatnonzero(correct[:, 0] < 0)[0])
        msg = (
            f"pair {worst} has too many distinct tokens to pack {max_order}-grams exactly; "
            "split the text or lower the n-gram order"
        )
        raise ValueError(msg)
    hyp_len = hyps.list.len().to_numpy().astype(np.int64)
    return NgramStats(hyp_len, closest, correct, total)
