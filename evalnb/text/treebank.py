r"""NLTK's ``word_tokenize`` over whole columns: Punkt sentences, then the Treebank rules.

H2O's BLEU tokenizes with ``nltk.word_tokenize``: Punkt splits the text into sentences and
``NLTKWordTokenizer`` applies some thirty regex substitutions to each. Run in Python that
costs about 200 µs per text (NLTK now guards each regex against ReDoS), more than the BLEU
arithmetic. Here the substitutions run as Polars (Rust regex) passes over a column of
sentences. Rust regex has no look-arounds, so the one rule that needs them (a quote opening
a word) is rewritten as three passes with a marker, and ``$`` (which in Python also matches
before a final newline) is spelled out.

Two parts stay in Python, each only where it is needed:

* Punkt, for texts that contain a possible sentence break (a ``.``, ``?`` or ``!`` followed
  by punctuation or by white space and more text); any other text is one sentence;
* texts with characters outside printable ASCII and its white space, where Python's and
  Rust's ``\w``, ``\s`` and ``\b`` could disagree: NLTK's own tokenizer runs on those.

Property tests compare the result with NLTK on random texts built from the tokens the rules
act on.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

import polars as pl

from evalnb.text.sentences import split_sentences

if TYPE_CHECKING:
    from nltk.tokenize import NLTKWordTokenizer

__all__ = ["word_tokenize"]

# Printable ASCII and the white space Python and Rust agree on (not \x1c-\x1f, which Python
# counts as white space and Rust does not).
_SAFE = r"^[\t\n\x0b\x0c\r\x20-\x7e]*$"
# Where Punkt could end a sentence: a sentence-end character followed by punctuation, or by
# white space and another token (PunktLanguageVars' period context).
_MAY_BREAK = r"""[.?!](?:[)";}\]*:@'({\[!?]|\s+\S)"""
_MARK = "\x00"  # never in a safe text

# NLTKWordTokenizer's substitutions in order, for safe texts: rules that only act on
# non-ASCII characters are left out; "${n}" is Rust's group reference.
_STARTING_QUOTES = (
    (r"(`+)", " ${1} "),
    (r'^"', "``"),
    (r"(``)", " ${1} "),
    (r"""([ (\[{<])("|'{2})""", "${1} `` "),
    # (?i)(?<!\w)(\')(?!(?:re|ve|ll|m|t|s|d|n)\b)(?=\w) → "' ": mark every quote that opens
    # a word, unmark those whose word is one of the listed endings, turn marks into spaces.
    (r"(^|\W)'(\w)", "${1}'" + _MARK + "${2}"),
    ("'" + _MARK + r"((?i:re|ve|ll|m|t|s|d|n))\b", "'${1}"),
)
_PUNCTUATION = (
    (r"""([^.])(\.)([\])}>"' ]*)\s*$""", "${1} ${2} ${3} "),
    (r"([:,])([^\d])", " ${1} ${2}"),
    (r"([:,])(\n?)$", " ${1} ${2}"),
    (r"\.{2,}", " ${0} "),
    (r"[;@#$%&]", " ${0} "),
    (r"""([^.])(\.)([\])}>"']*)\s*$""", "${1} ${2}${3} "),
    (r"[?!]", " ${0} "),
    (r"([^'])' ", "${1} ' "),
    (r"[*]", " ${0} "),
    (r"[\]\[(){}<>]", " ${0} "),
    (r"--", " -- "),
)
_ENDING_QUOTES = (
    (r"''", " '' "),
    (r'"', " '' "),
    # \s+ → " ", without rewriting the single spaces (most matches, no change)
    (r"[\t\n\x0b\x0c\r ]{2,}|[\t\n\x0b\x0c\r]", " "),
    (r"([^' ])('[sS]|'[mM]|'[dD]|') ", "${1} ${2} "),
    (r"([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) ", "${1} ${2} "),
)
_PAIRS = (
    "(can)(not)",
    "(d)('ye)",
    "(gim)(me)",
    "(gon)(na)",
    "(got)(ta)",
    "(lem)(me)",
    "(more)('n)",
)
_CONTRACTIONS = (
    # MacIntyre's \b(x)(y)\b contractions in one pass (none can make or break another):
    # only the matched alternative's groups are non-empty.
    (
        r"(?i)\b(?:" + "|".join(_PAIRS) + r")\b",
        " "
        + "".join(f"${{{2 * k + 1}}}" for k in range(len(_PAIRS)))
        + " "
        + "".join(f"${{{2 * k + 2}}}" for k in range(len(_PAIRS)))
        + " ",
    ),
    (r"(?i)\b(wan)(na)(\s)", " ${1} ${2} ${3}"),  # (?=\s): the space is put back
    (r"(?i) ('t)(is)\b", " ${1} ${2} "),
    (r"(?i) ('t)(was)\b", " ${1} ${2} "),
)


@lru_cache(maxsize=1)
def _nltk_words() -> NLTKWordTokenizer:
    from nltk.tokenize import NLTKWordTokenizer  # noqa: PLC0415 - only for unsafe texts

    return NLTKWordTokenizer()


def _treebank(sentences: pl.Expr) -> pl.Expr:
    """Tokenize each (safe) sentence as ``NLTKWordTokenizer.tokenize`` does."""
    s = sentences
    for pattern, repl in _STARTING_QUOTES:
        s = s.str.replace_all(pattern, repl)
    s = s.str.replace_all(_MARK, " ", literal=True)
    for pattern, repl in _PUNCTUATION:
        s = s.str.replace_all(pattern, repl)
    s = pl.concat_str([pl.lit(" "), s, pl.lit(" ")])
    for pattern, repl in (*_ENDING_QUOTES, *_CONTRACTIONS):
        s = s.str.replace_all(pattern, repl)
    return s.str.extract_all(r"[^\t\n\x0b\x0c\r ]+").fill_null([])


def word_tokenize(texts: pl.Series) -> pl.Series:
    """Tokenize every text as ``nltk.word_tokenize`` (English) does; nulls read as empty.

    Examples
    --------
    >>> word_tokenize(pl.Series(["Don't panic. It's 3.5 km, isn't it?"])).to_list()
    [['Do', "n't", 'panic', '.', 'It', "'s", '3.5', 'km', ',', 'is', "n't", 'it', '?']]
    """
    unique = texts.fill_null("").unique(maintain_order=True).rename("text")
    kinds = (
        pl.DataFrame({"text": unique})
        .with_row_index("t")
        .with_columns(
            safe=pl.col("text").str.contains(_SAFE),
            breaks=pl.col("text").str.contains(_MAY_BREAK),
        )
    )
    # One row per sentence of a safe text: the text itself (right-stripped, as Punkt leaves
    # the last sentence) unless it may break, then Punkt's sentences.
    whole = kinds.filter(pl.col("safe") & ~pl.col("breaks")).select(
        "t", pl.col("text").str.strip_chars_end().alias("s")
    )
    split = kinds.filter(pl.col("safe") & pl.col("breaks"))
    sentences = pl.DataFrame(
        {"t": split["t"], "s": split_sentences(split["text"].to_list())},
        schema={"t": pl.UInt32, "s": pl.List(pl.String)},
    ).explode("s")
    safe = (
        pl.concat([whole, sentences.drop_nulls("s")])
        .with_row_index("order")
        .with_columns(tokens=_treebank(pl.col("s")))
        .sort("t", "order")
        .group_by("t", maintain_order=True)
        .agg(pl.col("tokens").list.explode(keep_nulls=False, empty_as_null=False))
    )
    unsafe = kinds.filter(~pl.col("safe"))
    words = _nltk_words()
    slow = pl.DataFrame(
        {
            "t": unsafe["t"],
            "tokens": [
                [w for s in sents for w in words.tokenize(s)]
                for sents in split_sentences(unsafe["text"].to_list())
            ],
        },
        schema={"t": pl.UInt32, "tokens": pl.List(pl.String)},
    )
    by_text = (
        kinds.select("t", "text")
        .join(pl.concat([safe, slow]), on="t", how="left")
        .with_columns(pl.col("tokens").fill_null([]))
    )
    lookup = pl.DataFrame({"text": texts.fill_null("")}).join(
        by_text.select("text", "tokens"), on="text", how="left", maintain_order="left"
    )
    return lookup["tokens"]
