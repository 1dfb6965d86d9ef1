"""Column word tokenization equals ``nltk.word_tokenize`` (NLTK's own code and data)."""

from __future__ import annotations

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from evalnb.text.synthetic import pairs
from evalnb.text.treebank import word_tokenize
from evalnb_testkit.budget import examples
from evalnb_testkit.nltk_reference import nltk_word_tokenize

# Tokens every rule acts on: quotes and apostrophes, contractions, sentence ends, numbers,
# brackets, dashes, white space of every kind, abbreviations, the non-ASCII quotes and dashes
# NLTK spaces, and characters the two regex engines read differently (NLTK's path): marks,
# \p{No}, a connector, case folds onto ASCII letters, a non-Latin digit, beyond the BMP.
_TOKENS = [
    "a",
    "Word",
    "it",
    "s",
    "re",
    "t",
    "'",
    "''",
    '"',
    "`",
    "``",
    "'s",
    "'re",
    "'t",
    "n't",
    "can",
    "not",
    "cannot",
    "wanna",
    "gonna",
    "'tis",
    "d'ye",
    "more'n",
    ".",
    "..",
    "...",
    "?",
    "!",
    ",",
    ":",
    ";",
    "@",
    "#",
    "$",
    "%",
    "&",
    "*",
    "-",
    "--",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "<",
    ">",
    "3",
    "3.5",
    "1,000",
    " ",
    "  ",
    "\n",
    "\t",
    "\x0b",
    "\r\n",
    "Mr.",
    "Dr.",
    "U.S.",
    "e.g.",
    "«",
    "»",
    "“",
    "”",
    "‘",
    "’",
    "„",
    "—",
    "–",
    "\u2012",
    "\u2015",
    "é",
    "\x1c",
    "\u00a0",
    "\u2009",
    "\u3000",
    "²",
    "½",
    "\u0301",
    "‿",
    "ſ",
    "\u212a",
    "İ",
    "ı",
    "٣",
    "𝟙",
    "漢",
]


def _check(texts: list[str]) -> None:
    reference = nltk_word_tokenize()
    assert word_tokenize(pl.Series(texts, dtype=pl.String)).to_list() == [
        reference(t) for t in texts
    ]


@settings(max_examples=examples(1500), deadline=None)
@given(st.lists(st.lists(st.sampled_from(_TOKENS), max_size=25).map("".join), max_size=6))
def test_equals_nltk_word_tokenize(texts: list[str]) -> None:
    _check(texts)


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.text(max_size=40), max_size=6))
def test_equals_nltk_on_arbitrary_text(texts: list[str]) -> None:
    _check(texts)


def test_known_cases_and_a_corpus() -> None:
    _check(
        [
            "Don't panic.",
            "Do not panic!",
            "\"Hi,\" she said. 'Tis the season -- isn't it?",
            "Good muffins cost $3.88\nin New York.  Please buy me\ntwo of them.\nThanks.",
            "",
            "   ",
            "end with colon:\n",
            "gimme 'em 'twas wanna go",
        ]
    )
    cands, refs = pairs(2000, seed=3)
    _check(cands + refs)


def test_nulls_and_repeats_keep_their_rows() -> None:
    out = word_tokenize(pl.Series(["a b.", None, "a b.", "c"])).to_list()
    assert out == [["a", "b", "."], [], ["a", "b", "."], ["c"]]


def test_plain_break_contexts_are_decided_as_punkt_decides() -> None:
    """The direct decision for "word. Next" and "word? Next" equals Punkt's own, including
    every abbreviation and collocation of the English parameters."""
    import random

    from punkt.data import english

    from evalnb.text.sentences import punkt_tokenizer

    decide = punkt_tokenizer().text_contains_sentbreak
    contexts = [
        f"{x}. {y}"
        for a, b in english.COLLOCATIONS
        for x in (a, a.capitalize())
        for y in (b, b.capitalize())
    ]
    contexts += [f"{a}. {n}" for a in english.ABBREV_TYPES for n in ("The", "the")]
    rng = random.Random(0)
    words = [
        "Mr",
        "etc",
        "inc",
        "No",
        "vs",
        "a",
        "I",
        "fig",
        "al",
        "system",
        "The",
        "the",
        "Edelman",
        "St",
        "Co",
        "It",
        "Jan",
        "pp",
        "OK",
        "Ltd",
        "approx",
        "3",
        "x2",
    ]
    contexts += [f"{rng.choice(words)}{rng.choice('.?!')} {rng.choice(words)}" for _ in range(3000)]
    # The next token with punctuation after its word: Punkt reads the word alone.
    contexts += [
        f"{rng.choice(words)}. {rng.choice(words)}{rng.choice([',', ';', ':', '!', '?', ')', '.', ''])}"
        for _ in range(3000)
    ]
    contexts += [f"{a}. {b}{p}" for a, b in english.COLLOCATIONS for p in (",", ")", ":")]
    assert [decide(c) for c in contexts] == [decide._slow.__wrapped__(c) for c in contexts]


@settings(max_examples=examples(1500), deadline=None)
@given(st.lists(st.sampled_from(_TOKENS), max_size=30).map("".join))
def test_sentences_equal_nltk_sent_tokenize(text: str) -> None:
    """Sentence splitting (with its shortcut for texts needing no realignment) is NLTK's."""
    import nltk

    from evalnb.text.sentences import split_sentences

    nltk_word_tokenize()  # installs the punkt_tab data NLTK loads
    expected = nltk.sent_tokenize(text) if text else []
    assert split_sentences([text]) == [expected]


# What real answers hold besides prose: URLs, numbers of every form, CJK, emoji, runs of
# punctuation, code.
_REAL_WORLD = [
    "https://example.com/a?b=c&d=e#f",
    "http://x.org.",
    "user@example.com",
    "3.14",
    "1,000,000",
    "-5",
    "1e-9",
    "12:30",
    "$3.88",
    "50%",
    "v2.0.1",
    "東京",
    "한국어",
    "日本語。",
    "「引用」",
    "😀",
    "👍🏽",
    "!!!",
    "?!",
    "...",
    "—",
    "((",
    "))",
    "''",
    "``",
    '"""',
    "f(x)",
    "a_b",
    "C++",
    "#tag",
    "@name",
    "e.g.,",
    "i.e.",
    "Mr.",
    " ",
    "\n\n",
    "\t",
    "word",
    "Word",
    "don't",
    "it's",
]


@settings(max_examples=examples(1500), deadline=None)
@given(st.lists(st.lists(st.sampled_from(_REAL_WORLD), max_size=30).map("".join), max_size=6))
def test_equals_nltk_on_urls_numbers_cjk_and_punctuation_runs(texts: list[str]) -> None:
    _check(texts)


@settings(max_examples=examples(1000), deadline=None)
@given(st.lists(st.sampled_from(_TOKENS + _REAL_WORLD), max_size=30).map("".join))
def test_the_compiled_rules_equal_nltks_on_a_sentence(text: str) -> None:
    """The kernel alone, on a sentence as Punkt hands it over (no strip, no split)."""
    from nltk.tokenize import NLTKWordTokenizer

    from evalnb.text.intern import joined_buffers
    from evalnb.text.treebank_rules import DONE, char_classes, treebank_block

    data, off = joined_buffers([pl.Series([text]).to_arrow()])
    out, lows, highs, status = treebank_block(data, off[:-1], off[1:], char_classes(), False)
    if status[0] == DONE:  # texts the engines read differently are NLTK's (checked above)
        tokens = bytes(out[lows[0] : highs[0]]).decode().split(" ")
        assert [t for t in tokens if t] == NLTKWordTokenizer().tokenize(text)


def test_real_documents_stay_on_the_compiled_path_and_equal_nltk() -> None:
    """The shipped sentences and the installed packages' READMEs (Markdown, code, URLs,
    tables): NLTK's result, and almost no text handed to NLTK's own tokenizer."""
    from evalnb.text.intern import joined_buffers
    from evalnb.text.treebank_rules import UNSAFE, char_classes, treebank_block
    from evalnb_testkit.real_pairs import real_pairs

    for source in ("docstrings", "packages"):
        cands, refs = real_pairs(1500, seed=3, source=source)
        _check(cands + refs)
        data, off = joined_buffers([pl.Series(cands + refs).to_arrow()])
        status = treebank_block(data, off[:-1], off[1:], char_classes(), True)[3]
        assert (status == UNSAFE).mean() < 0.02, source
