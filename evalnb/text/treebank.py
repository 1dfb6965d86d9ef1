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
* texts holding a character on which Python's ``re`` or ``regex`` and Rust's regex disagree (``\w``,
  ``\s``, ``\d`` or case folding onto an ASCII letter; found by asking both engines about
  every character of the Basic Multilingual Plane once per process), or a character beyond
  it: NLTK's own tokenizer runs on those.

Property tests compare the result with NLTK on random texts built from the tokens the rules
act on, and on arbitrary text.
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np
import polars as pl
import regex

from evalnb.text.sentences import split_sentences

if TYPE_CHECKING:
    from nltk.tokenize import NLTKWordTokenizer

__all__ = ["spaced_words", "word_tokenize"]

# Where Punkt could end a sentence: a sentence-end character followed by punctuation, or by
# white space and another token (PunktLanguageVars' period context).
_MAY_BREAK = r"""[.?!](?:[)";}\]*:@'({\[!?‘’“”«»]|\s+\S)"""
_MARK = "\x00"  # never in a safe text

# NLTKWordTokenizer's substitutions in order, for safe texts; "${n}" is Rust's group
# reference.
_STARTING_QUOTES = (
    (r"([«“‘„]|`+)", " ${1} "),
    (r'^"', "``"),
    (r"(``)", " ${1} "),
    (r"""([ (\[{<])("|'{2})""", "${1} `` "),
    # (?i)(?<!\w)(\')(?!(?:re|ve|ll|m|t|s|d|n)\b)(?=\w) → "' ": mark every quote that opens
    # a word, unmark those whose word is one of the listed endings, turn marks into spaces.
    (r"(^|\W)'(\w)", "${1}'" + _MARK + "${2}"),
    ("'" + _MARK + r"((?i:re|ve|ll|m|t|s|d|n))\b", "'${1}"),
)
_PUNCTUATION = (
    # NLTK's run here is possessive (*+); followed by \s*$ that changes no match.
    (r"""([^.])(\.)([\])}>"'»”’ ]*)\s*$""", "${1} ${2} ${3} "),
    (r"([:,])([^\d])", " ${1} ${2}"),
    (r"([:,])(\n?)$", " ${1} ${2}"),
    (r"\.{2,}", " ${0} "),
    (r"[;@#$%&]", " ${0} "),
    (r"[\u2012-\u2015]", " ${0} "),
    (r"""([^.])(\.)([\])}>"']*)\s*$""", "${1} ${2}${3} "),
    (r"[?!]", " ${0} "),
    (r"([^'])' ", "${1} ' "),
    (r"[*]", " ${0} "),
    (r"[\]\[(){}<>]", " ${0} "),
    (r"--", " -- "),
)
_ENDING_QUOTES = (
    (r"([»”’])", " ${1} "),
    (r"''", " '' "),
    (r'"', " '' "),
    # \s+ → " ", without rewriting the single spaces (most matches, no change)
    (r"\s{2,}|[\s&&[^ ]]", " "),
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


# What a rule's match needs in the *original* text, whatever the rules before it did: the
# rules before a rule only insert spaces, backquotes (from '"') and apostrophes (from '"'),
# so a rule whose trigger is absent from every text of a column cannot match there and is
# not run (each pass costs a copy of the column; most texts hold no bracket, no dash, no
# "gonna"). The trigger is asked of the same engine as the rule, case folding and all.
_TRIGGERS: dict[str, str | None] = {
    _STARTING_QUOTES[0][0]: "[«“‘„`]",
    _STARTING_QUOTES[1][0]: '"',
    _STARTING_QUOTES[2][0]: '[`"]',
    _STARTING_QUOTES[3][0]: "[\"']",
    _STARTING_QUOTES[4][0]: "'",
    _STARTING_QUOTES[5][0]: "'",
    _PUNCTUATION[0][0]: "[.]",
    _PUNCTUATION[1][0]: "[:,]",
    _PUNCTUATION[2][0]: "[:,]",
    _PUNCTUATION[3][0]: "[.][.]",
    _PUNCTUATION[4][0]: "[;@#$%&]",
    _PUNCTUATION[5][0]: "[\u2012-\u2015]",
    _PUNCTUATION[6][0]: "[.]",
    _PUNCTUATION[7][0]: "[?!]",
    _PUNCTUATION[8][0]: "'",
    _PUNCTUATION[9][0]: "[*]",
    _PUNCTUATION[10][0]: "[\\]\\[(){}<>]",
    _PUNCTUATION[11][0]: "--",
    _ENDING_QUOTES[0][0]: "[»”’]",
    _ENDING_QUOTES[1][0]: "''",
    _ENDING_QUOTES[2][0]: '"',
    _ENDING_QUOTES[3][0]: None,  # the spaces the rules inserted: always
    _ENDING_QUOTES[4][0]: "[\"']",
    _ENDING_QUOTES[5][0]: "[\"']",
    _CONTRACTIONS[0][0]: "(?i)cannot|d'ye|gimme|gonna|gotta|lemme|more'n",
    _CONTRACTIONS[1][0]: "(?i)wanna",
    _CONTRACTIONS[2][0]: "(?i)'tis",
    _CONTRACTIONS[3][0]: "(?i)'twas",
}


def rules_needed(texts: pl.Series) -> frozenset[str]:
    """Return the rules (by pattern) that may match some text of ``texts``."""
    asked = {t for t in _TRIGGERS.values() if t is not None}
    found = texts.to_frame("t").select(
        **{f"r{i}": pl.col("t").str.contains(t).any() for i, t in enumerate(sorted(asked))}
    )
    present = {t for i, t in enumerate(sorted(asked)) if found[f"r{i}"][0]}
    return frozenset(p for p, t in _TRIGGERS.items() if t is None or t in present)


@lru_cache(maxsize=1)
def _safe() -> str:
    r"""Build the pattern of texts on which both regex engines read the rules alike.

    Every character of the Basic Multilingual Plane (surrogates aside) is asked, of Python's
    ``re`` and ``regex`` (NLTK runs its rules with both) and of Polars' Rust regex, whether it is ``\w``, ``\s`` and ``\d`` and whether it
    matches an ASCII letter ignoring case (the contraction rules are case-insensitive).
    Characters where the two agree form the class; ``\x00`` (the marker) is left out. The
    two engines' Unicode tables differ in version and in a few definitions (Python's ``\w``
    takes ``\p{No}``, Rust's takes marks; Python counts ``\x1c``-``\x1f`` as white space),
    so asking both is the only check that stays true as either is upgraded.
    """
    codes = np.array([c for c in range(1, 0x10000) if not 0xD800 <= c < 0xE000])
    chars = [chr(c) for c in codes]
    text = "".join(chars)
    where = {code: i for i, code in enumerate(codes)}
    tests = (r"\w", r"\s", r"\d", r"(?i)[a-z]")
    agree = np.ones(codes.size, dtype=bool)
    column = pl.Series(chars)
    for test in tests:
        rust = column.str.contains(f"^{test}$").to_numpy()
        for engine in (re, regex):  # NLTK runs most rules with regex, contractions with re
            python = np.zeros(codes.size, dtype=bool)
            python[[where[ord(m.group())] for m in engine.finditer(test, text)]] = True
            agree &= python == rust
    # Ranges of agreeing characters, as \x{..} escapes Rust reads in a class.
    edges = np.flatnonzero(np.diff(np.concatenate([[0], agree.astype(np.int8), [0]])))
    ranges = "".join(
        f"\\x{{{codes[a]:x}}}-\\x{{{codes[b - 1]:x}}}"
        for a, b in zip(edges[::2], edges[1::2], strict=True)
    )
    return f"^[{ranges}]*$"


@lru_cache(maxsize=1)
def _nltk_words() -> NLTKWordTokenizer:
    from nltk.tokenize import NLTKWordTokenizer  # noqa: PLC0415 - only for unsafe texts

    return NLTKWordTokenizer()


def _treebank(sentences: pl.Expr, needed: frozenset[str] | None = None) -> pl.Expr:
    """Tokenize each (safe) sentence as ``NLTKWordTokenizer.tokenize`` does.

    The tokens come out separated by white space (with some to spare at the ends). Only the
    rules in ``needed`` run (:func:`rules_needed` of the texts the sentences come from);
    None runs them all.
    """
    s = sentences
    for pattern, repl in _STARTING_QUOTES:
        if needed is None or pattern in needed:
            s = s.str.replace_all(pattern, repl)
    if needed is None or _STARTING_QUOTES[4][0] in needed:
        s = s.str.replace_all(_MARK, " ", literal=True)
    for pattern, repl in _PUNCTUATION:
        if needed is None or pattern in needed:
            s = s.str.replace_all(pattern, repl)
    s = pl.concat_str([pl.lit(" "), s, pl.lit(" ")])
    for pattern, repl in (*_ENDING_QUOTES, *_CONTRACTIONS):
        if needed is None or pattern in needed:
            s = s.str.replace_all(pattern, repl)
    return s


def _punkt_sentences(kinds: pl.DataFrame) -> tuple[list[int], list[str]]:
    """Split the safe texts that may break with Punkt: each sentence with its text's index.

    Flat (text, sentence) columns: Polars builds a nested column from Python lists one inner
    list at a time, which costs more than the tokenization.
    """
    split = kinds.filter(pl.col("safe") & pl.col("breaks"))
    owner: list[int] = []
    sentence: list[str] = []
    for t, sents in zip(split["t"], split_sentences(split["text"].to_list()), strict=True):
        owner += [t] * len(sents)
        sentence += sents
    return owner, sentence


def spaced_words(texts: pl.Series) -> pl.Series:
    """Give each text's ``nltk.word_tokenize`` tokens separated by white space.

    NLTK's tokens hold no white space (its tokenizer ends with ``str.split``), so splitting
    the result on white space gives the tokens back; BLEU hands it straight to the compiled
    interner (:class:`evalnb.text.ngram.TokenIds`), with no list of small strings built.
    Nulls read as empty.
    """
    frame = pl.DataFrame({"text": texts.fill_null("")})
    # Each distinct text once: references repeat across the models of a lab.
    kinds = (
        frame.unique("text", maintain_order=True)
        .with_row_index("t")
        .with_columns(
            safe=pl.col("text").str.contains(_safe()),
            breaks=pl.col("text").str.contains(_MAY_BREAK),
        )
    )
    needed = rules_needed(kinds.filter(pl.col("safe"))["text"])
    # A safe text that cannot break is one sentence: Punkt would only right-strip it.
    whole = (
        kinds.lazy()
        .filter(pl.col("safe") & ~pl.col("breaks"))
        .select("t", spaced=_treebank(pl.col("text").str.strip_chars_end(), needed))
    )
    # Polars runs those passes without the GIL while Punkt (Python) splits the other texts.
    with ThreadPoolExecutor(max_workers=1) as pool:
        whole_done = pool.submit(whole.collect)
        owner, sentence = _punkt_sentences(kinds)
        whole = whole_done.result().lazy()
    sentences = (
        pl.LazyFrame({"t": owner, "s": sentence}, schema={"t": pl.UInt32, "s": pl.String})
        .group_by("t", maintain_order=True)
        .agg(spaced=_treebank(pl.col("s"), needed).str.join(" "))
    )
    unsafe = kinds.filter(~pl.col("safe"))
    words = _nltk_words()
    slow = pl.LazyFrame(
        {
            "t": unsafe["t"],
            "spaced": [
                " ".join(w for s in sents for w in words.tokenize(s))
                for sents in split_sentences(unsafe["text"].to_list())
            ],
        },
        schema={"t": pl.UInt32, "spaced": pl.String},
    )
    by_text = (
        pl.concat([whole, sentences, slow])
        .join(kinds.lazy().select("t", "text"), on="t", how="right")
        .select("text", pl.col("spaced").fill_null(""))
    )
    return (
        frame.lazy().join(by_text, on="text", how="left", maintain_order="left").collect()["spaced"]
    )


def word_tokenize(texts: pl.Series) -> pl.Series:
    """Tokenize every text as ``nltk.word_tokenize`` (English) does; nulls read as empty.

    Examples
    --------
    >>> word_tokenize(pl.Series(["Don't panic. It's 3.5 km, isn't it?"])).to_list()
    [['Do', "n't", 'panic', '.', 'It', "'s", '3.5', 'km', ',', 'is', "n't", 'it', '?']]
    """
    return spaced_words(texts).str.extract_all(r"\S+").fill_null([]).rename(texts.name)
