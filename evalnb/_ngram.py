"""Vectorized n-gram machinery.

sacrebleu's 13a tokenizer as Polars regex passes over a whole column, and clipped n-gram
match statistics for all (hypothesis, references) pairs at once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

__all__ = ["NgramStats", "ngram_stats", "tokenize_13a", "tokens_13a"]

# mteval-v13a as sacrebleu implements it (tokenizer_13a.py + tokenizer_re.py), one Polars
# pass per rule. Rust regex and Python `re` agree on these patterns: no look-arounds, and
# leftmost-first, non-overlapping replacement in both.
_13A_RULES = (
    (r"([\{-~\[-\x60 -&\(-\+:-@/])", " ${1} "),
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
    return pl.select(tokens_13a(pl.lit(texts.fill_null("")))).to_series()


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


def _long(tokens: pl.Series, pair: pl.Series, side: pl.Series) -> pl.DataFrame:
    frame = pl.DataFrame({"pair": pair, "side": side, "tok": tokens})
    frame = frame.with_columns(length=pl.col("tok").list.len())
    return frame.with_columns(pos=pl.int_ranges(pl.col("length"))).explode(["tok", "pos"])


def ngram_stats(hyps: pl.Series, refs: pl.Series, max_order: int = 4) -> NgramStats:
    """Clipped n-gram statistics of every pair, counts clipped by the maximum over references.

    ``hyps`` is a ``List(String)`` column of hypothesis tokens, ``refs`` a
    ``List(List(String))`` column of reference token lists (one or more per pair).
    """
    n_pairs = len(hyps)
    pair_idx = pl.Series("pair", np.arange(n_pairs, dtype=np.uint32))
    ref_frame = (
        pl.DataFrame({"pair": pair_idx, "refs": refs})
        .with_columns(side=pl.int_ranges(pl.col("refs").list.len()))
        .explode(["refs", "side"])
        .drop_nulls("side")
    )
    hyp_long = _long(hyps, pair_idx, pl.Series("side", np.full(n_pairs, -1, dtype=np.int64)))
    ref_long = _long(ref_frame["refs"], ref_frame["pair"], ref_frame["side"].cast(pl.Int64))
    both = pl.concat([hyp_long, ref_long]).drop_nulls("tok")
    both = both.with_columns(t0=pl.col("tok").cast(pl.Categorical).to_physical())
    shifted = [pl.col("t0").shift(-k).alias(f"t{k}") for k in range(1, max_order)]
    both = both.with_columns(shifted)
    grams = []
    for n in range(1, max_order + 1):
        keys = [f"t{k}" if k < n else None for k in range(max_order)]
        grams.append(
            both.filter(pl.col("pos") + n <= pl.col("length")).select(
                "pair",
                "side",
                pl.lit(n, dtype=pl.Int8).alias("n"),
                *[
                    pl.col(k) if k else pl.lit(None, dtype=pl.UInt32).alias(f"t{i}")
                    for i, k in enumerate(keys)
                ],
            )
        )
    counts = pl.concat(grams).group_by(pl.all()).len("cnt")
    key = ["pair", "n", *[f"t{k}" for k in range(max_order)]]
    hyp = counts.filter(pl.col("side") == -1).drop("side")
    ref = counts.filter(pl.col("side") >= 0).group_by(key).agg(pl.col("cnt").max().alias("rc"))
    matched = hyp.join(ref, on=key, how="left", nulls_equal=True).with_columns(
        clip=pl.min_horizontal("cnt", pl.col("rc").fill_null(0))
    )
    per = matched.group_by("pair", "n").agg(pl.col("clip").sum(), pl.col("cnt").sum())
    correct = np.zeros((n_pairs, max_order), dtype=np.int64)
    total = np.zeros((n_pairs, max_order), dtype=np.int64)
    rows, orders = per["pair"].to_numpy(), per["n"].to_numpy().astype(np.int64) - 1
    correct[rows, orders] = per["clip"].to_numpy()
    total[rows, orders] = per["cnt"].to_numpy()
    hyp_len = hyps.list.len().fill_null(0).to_numpy().astype(np.int64)
    return NgramStats(hyp_len, _closest(hyp_len, ref_frame, n_pairs), correct, total)


def _closest(hyp_len: np.ndarray, ref_frame: pl.DataFrame, n_pairs: int) -> np.ndarray:
    """Sacrebleu's closest reference length: smallest |hyp - ref|, ties to the shorter."""
    lens = ref_frame.select("pair", ref_len=pl.col("refs").list.len().cast(pl.Int64))
    lens = lens.with_columns(hyp=pl.Series(hyp_len[lens["pair"].to_numpy()]))
    best = (
        lens.with_columns(diff=(pl.col("hyp") - pl.col("ref_len")).abs())
        .sort("pair", "diff", "ref_len")
        .group_by("pair", maintain_order=True)
        .first()
    )
    out = np.zeros(n_pairs, dtype=np.int64)
    out[best["pair"].to_numpy()] = best["ref_len"].to_numpy()
    return out
