"""Test questions from a chunk with no LLM: plainer than a model's, but real and checkable.

Each generator reads one chunk's sentences and proposes questions whose expected answer is
taken from the chunk itself, with the sentence it rests on (``evidence``, always a verbatim
slice of the chunk). So every judge-free case can be checked against its source, and the
whole path from documents to a suite runs offline.

``cloze``
    A key sentence with its most specific term blanked (the word or quoted term that is
    rarest in the corpus); the answer is the term.
``definition``
    Sentences that define (``"X" shall mean Y``, ``X means Y``, ``X is defined as Y``,
    ``X refers to Y``, ``X is a Y``); the question asks what X means.
``section``
    "What does the section *H* of *doc* say about *term*?" for a chunk under a heading;
    the answer is the sentence of the section that holds the term.
``numeric``
    A sentence stating a number, with the number asked for.
``yes_no``
    A statement from the chunk, asked as true (answer "Yes") or negated on its auxiliary
    verb (``may`` ↔ ``may not``; answer "No", with the sentence as it stands).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import PurePath
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import random
    from collections.abc import Callable, Sequence

__all__ = ["JUDGE_FREE", "Candidate", "Chunk", "Context", "negate", "term_rarity"]


@dataclass(frozen=True)
class Chunk:
    """What a generator reads: a chunk, its sentences, and where it comes from."""

    chunk_id: str
    doc: str
    heading: str
    text: str
    sentences: tuple[str, ...]


@dataclass(frozen=True)
class Context:
    """What generators share: term rarity over the corpus, and the chunk's seeded draws."""

    rarity: dict[str, float]
    rng: random.Random


@dataclass(frozen=True)
class Candidate:
    """A proposed test case, with the chunk(s) it comes from.

    ``evidence`` holds the verbatim passages of those chunks the answer rests on; an
    ``answerable`` False case asks what its chunks do not say (its answer is a refusal).
    """

    prompt: str
    expected: str
    generator: str
    chunk_ids: tuple[str, ...]
    evidence: tuple[str, ...]
    answerable: bool = True


_WORD = re.compile(r"[A-Za-z][A-Za-z'-]{2,}")
_STOP = frozenset(
    (
        "the",
        "and",
        "for",
        "are",
        "but",
        "not",
        "you",
        "all",
        "any",
        "can",
        "her",
        "was",
        "one",
        "our",
        "out",
        "his",
        "has",
        "had",
        "how",
        "its",
        "may",
        "who",
        "did",
        "get",
        "him",
        "let",
        "put",
        "say",
        "she",
        "too",
        "use",
        "that",
        "with",
        "this",
        "from",
        "they",
        "will",
        "would",
        "there",
        "their",
        "what",
        "about",
        "which",
        "when",
        "make",
        "like",
        "than",
        "then",
        "them",
        "these",
        "some",
        "been",
        "have",
        "into",
        "more",
        "only",
        "other",
        "such",
        "also",
        "each",
        "shall",
        "must",
        "under",
        "upon",
        "where",
        "whether",
        "within",
        "without",
        "your",
        "yours",
        "those",
        "being",
        "between",
        "before",
        "after",
        "over",
        "same",
        "does",
        "made",
        "any",
        "either",
        "neither",
        "however",
    )
)
_NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?![\w])")
_QUOTED = re.compile(r"[\"“]([A-Za-z][^\"”\n]{1,59})[\"”]")  # a quoted term, on one line
_DEFINES = re.compile(
    r"^[\"“]?(?P<term>[A-Z][\w' -]{1,50}?)[\"”]?\s+(?:shall mean|means|is defined as|refers to)"
    r"\s+(?P<meaning>.{8,})$",
    re.DOTALL,
)
_IS_A = re.compile(
    r"^(?P<term>[A-Z][\w-]+(?: [\w-]+){0,3}) is (?P<meaning>(?:a|an) .{8,})$", re.DOTALL
)
_AUX = r"is|are|was|were|may|must|shall|will|can|could|should|would|does|do|did|has|have"
_NEGATED = re.compile(rf"\b({_AUX})\s+not\b", re.IGNORECASE)
_PLAIN_AUX = re.compile(rf"\b({_AUX})\b(?!\s+not\b)", re.IGNORECASE)
# Negations spelled without an auxiliary of _AUX before "not": "cannot", "need not".
_NEGATION_WORD = re.compile(r"\b(can)not\b|\b(need)\s+not\b", re.IGNORECASE)


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text) if w.lower() not in _STOP]


def term_rarity(texts: Sequence[str]) -> dict[str, float]:
    """Inverse document frequency of each content word over the chunks (``log(N / df)``)."""
    df: Counter[str] = Counter()
    for text in texts:
        df.update(set(_words(text)))
    n = max(len(texts), 1)
    return {w: math.log(n / c) for w, c in df.items()}


_DOC_SUFFIXES = (".pdf", ".md", ".markdown", ".html", ".htm", ".docx", ".txt")


def _doc_name(doc: str) -> str:
    """Name the document as a reader would: ``apache.pdf`` → apache, ``MPL-2.0`` kept."""
    path = PurePath(doc)
    return path.stem if path.suffix.lower() in _DOC_SUFFIXES else path.name


_RULE = re.compile(r"[-=_*#~.]{4,}")  # a ruled line or a dotted leader, not prose
_STARTS = re.compile(r"[\"“(]?[A-Z0-9]")  # a sentence's start (an opening quote allowed)
_CODE = re.compile(r"[=`{}\[\]#]|>>>|\w\(")  # assignments, brackets, calls: code, not prose


def _usable(sentence: str) -> bool:
    """Tell whether a question can quote the sentence.

    It must be prose of 6–45 words that starts and ends like a sentence (a chunk may start
    or end mid-sentence), not a table row or a ruled line.
    """
    words = sentence.split()
    if not 6 <= len(words) <= 45 or sentence.count("|") > 1 or _RULE.search(sentence):
        return False
    if _CODE.search(sentence):
        return False
    stripped = sentence.strip()
    if not (stripped[0].isupper() or stripped[0] in '"“(') or stripped[-1] not in ".!?;:":
        return False
    letters = sum(c.isalpha() for c in sentence)
    return letters > 0.6 * len(sentence.replace(" ", ""))


def _clean(sentence: str) -> str:
    return " ".join(sentence.split())


def _cloze(chunk: Chunk, ctx: Context) -> list[Candidate]:
    scored = []
    for s in chunk.sentences:
        if not _usable(s):
            continue
        quoted = _QUOTED.findall(s)
        words = [w for w in _WORD.findall(s) if w.lower() not in _STOP and len(w) >= 5]
        if quoted:
            term = quoted[0]
            weight = 10.0  # a term the author quoted is a key term
        elif words:
            term = max(words, key=lambda w: (ctx.rarity.get(w.lower(), 0.0), len(w)))
            weight = ctx.rarity.get(term.lower(), 0.0)
        else:
            continue
        scored.append((weight, s, term))
    if not scored:
        return []
    scored.sort(key=lambda t: -t[0])
    _, sentence, term = scored[0]
    blanked = _clean(sentence.replace(term, "_____", 1))
    prompt = f'Fill in the blank, from "{_doc_name(chunk.doc)}": {blanked}'
    return [Candidate(prompt, term, "cloze", (chunk.chunk_id,), (sentence,))]


def _definition(chunk: Chunk, ctx: Context) -> list[Candidate]:  # noqa: ARG001 - one signature
    out = []
    for s in chunk.sentences:
        text = _clean(s)
        match = _DEFINES.match(text) or _IS_A.match(text)
        if match is None:
            continue
        term = match["term"].strip()
        meaning = match["meaning"].strip().rstrip(".;")
        prompt = f'In "{_doc_name(chunk.doc)}", what does "{term}" mean?'
        out.append(Candidate(prompt, meaning, "definition", (chunk.chunk_id,), (s,)))
    return out


def _section(chunk: Chunk, ctx: Context) -> list[Candidate]:
    heading = chunk.heading.split(" › ")[-1].strip()
    if not heading:
        return []
    usable = [s for s in chunk.sentences if _usable(s)]
    if not usable:
        return []
    in_heading = set(_words(heading))
    words = {w for s in usable for w in _words(s) if w not in in_heading}
    if not words:
        return []
    term = max(sorted(words), key=lambda w: ctx.rarity.get(w, 0.0))
    sentence = next(s for s in usable if term in _words(s))
    prompt = f'What does the section "{heading}" of "{_doc_name(chunk.doc)}" say about "{term}"?'
    return [Candidate(prompt, _clean(sentence), "section", (chunk.chunk_id,), (sentence,))]


def _numeric(chunk: Chunk, ctx: Context) -> list[Candidate]:  # noqa: ARG001 - one signature
    for s in chunk.sentences:
        if not _usable(s):
            continue
        numbers = [
            m
            for m in _NUMBER.finditer(s)
            if not s[: m.start()].rstrip().endswith(("§", "Section", "section"))
        ]
        if not numbers:
            continue
        number = numbers[0]
        blanked = _clean(s[: number.start()] + "_____" + s[number.end() :])
        prompt = f'According to "{_doc_name(chunk.doc)}", what number fills the blank: {blanked}'
        return [Candidate(prompt, number.group(1), "numeric", (chunk.chunk_id,), (s,))]
    return []


def negate(sentence: str) -> str | None:
    """Return the sentence with its polarity flipped; None when it has no auxiliary.

    A sentence with a negation loses its first one ("is not" → "is", "cannot" → "can",
    "need not" → "must"); otherwise its first auxiliary gains a "not" ("may" → "may not").

    Examples
    --------
    >>> negate("You need not include anything that users can regenerate.")
    'You must include anything that users can regenerate.'
    >>> negate("The Licensor cannot revoke it.")
    'The Licensor can revoke it.'
    >>> negate("Each contributor may grant a licence.")
    'Each contributor may not grant a licence.'
    """
    found = [m for m in (_NEGATED.search(sentence), _NEGATION_WORD.search(sentence)) if m]
    if found:
        first = min(found, key=lambda f: f.start())
        kept = next(g for g in first.groups() if g)
        if kept.lower() == "need":  # "need not X" is "may omit X"; its opposite is "must X"
            kept = "Must" if kept[0].isupper() else "must"
        return sentence[: first.start()] + kept + sentence[first.end() :]
    if (m := _PLAIN_AUX.search(sentence)) is not None:
        return sentence[: m.end()] + " not" + sentence[m.end() :]
    return None


def _yes_no(chunk: Chunk, ctx: Context) -> list[Candidate]:
    usable = [s for s in chunk.sentences if _usable(s) and negate(s) is not None]
    if not usable:
        return []
    sentence = ctx.rng.choice(usable)
    name = _doc_name(chunk.doc)
    if ctx.rng.random() < 0.5:
        statement, expected = _clean(sentence), f"Yes. {_clean(sentence)}"
    else:
        statement = _clean(negate(sentence) or sentence)
        expected = f"No. {_clean(sentence)}"
    prompt = f'According to "{name}", is this true: "{statement}"'
    return [Candidate(prompt, expected, "yes_no", (chunk.chunk_id,), (sentence,))]


JUDGE_FREE: dict[str, Callable[[Chunk, Context], list[Candidate]]] = {
    "cloze": _cloze,
    "definition": _definition,
    "section": _section,
    "numeric": _numeric,
    "yes_no": _yes_no,
}
