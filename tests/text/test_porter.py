"""The compiled Porter stemmer equals NLTK's ``PorterStemmer().stem`` word for word."""

from __future__ import annotations

import random
import re

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nltk.stem import porter

from evalnb.text.porter import IRREGULAR, stem_words
from evalnb.text.synthetic import pairs
from evalnb_testkit.budget import examples

_NLTK = porter.PorterStemmer()
# Every suffix a rule of the five steps names, and the letters their conditions read
# (vowels, y in both roles, the doubles, w/x/y of *o, l/s/z of step 1b).
_SUFFIXES = [
    "sses",
    "ies",
    "ss",
    "s",
    "eed",
    "ed",
    "ing",
    "at",
    "bl",
    "iz",
    "y",
    "ational",
    "tional",
    "enci",
    "anci",
    "izer",
    "bli",
    "abli",
    "alli",
    "entli",
    "eli",
    "ousli",
    "ization",
    "ation",
    "ator",
    "alism",
    "iveness",
    "fulness",
    "ousness",
    "aliti",
    "iviti",
    "biliti",
    "fulli",
    "logi",
    "icate",
    "ative",
    "alize",
    "iciti",
    "ical",
    "ful",
    "ness",
    "al",
    "ance",
    "ence",
    "er",
    "ic",
    "able",
    "ible",
    "ant",
    "ement",
    "ment",
    "ent",
    "ion",
    "sion",
    "tion",
    "ou",
    "ism",
    "ate",
    "iti",
    "ous",
    "ive",
    "ize",
    "e",
    "ll",
    "lli",
    "ied",
    "yy",
    "ye",
    "yi",
]
_LETTERS = "aeiouybcdlstzwxgnmr"


def _built_words(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    words = set()
    while len(words) < n:
        stem = "".join(rng.choice(_LETTERS) for _ in range(rng.randint(0, 6)))
        word = stem + "".join(rng.choice(_SUFFIXES) for _ in range(rng.randint(0, 3)))
        if word:
            words.add(word)
    return sorted(words)


def _assert_nltk(words: list[str], min_len: int = 3) -> None:
    ours = stem_words(pa.array(words), min_len=min_len).to_pylist()
    theirs = [_NLTK.stem(w) if len(w) >= min_len else w for w in words]
    wrong = [(w, a, b) for w, a, b in zip(words, ours, theirs, strict=True) if a != b]
    assert not wrong, wrong[:10]


def test_every_word_of_real_text_and_of_every_rule_stems_as_nltk() -> None:
    cands, refs = pairs(2000, seed=3)
    real = sorted({w for t in cands + refs for w in re.sub("[^a-z0-9]+", " ", t.lower()).split()})
    edge = ["y", "yy", "yyyy", "ay", "ties", "tied", "died", "sky", "a1b2", "1234", "e", "ll"]
    _assert_nltk(real + _built_words(40_000, seed=1) + list(IRREGULAR) + edge)


def test_rouge_scores_only_words_longer_than_three_letters() -> None:
    words = ["ties", "tie", "ran", "runs", "skies", "sky", "news", "agreed"]
    _assert_nltk(words, min_len=4)
    assert stem_words(pa.array(words), min_len=4).to_pylist()[:4] == ["tie", "tie", "ran", "run"]


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.text(alphabet=_LETTERS + "0123456789", min_size=1, max_size=14), max_size=40))
def test_any_word_stems_as_nltk(words: list[str]) -> None:
    _assert_nltk(words)


def test_a_vocabulary_of_one_long_word_and_of_none() -> None:
    _assert_nltk(["y" * 5000 + "ational", "a" * 10_000 + "sses"])
    assert stem_words(pa.array([], pa.string())).to_pylist() == []


@pytest.mark.parametrize("word", ["Running", "naïve", None])
def test_words_it_would_stem_unlike_nltk_are_refused(word: str | None) -> None:
    with pytest.raises(ValueError, match="lower-case ASCII words without nulls"):
        stem_words(pa.array(["ok", word]))
