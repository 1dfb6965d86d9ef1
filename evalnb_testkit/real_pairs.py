"""(candidate, reference) pairs of real English sentences, for the n-gram benchmarks.

The sentences come from a corpus that ships in the repository (``data/sentences``: the prose
of Python's standard-library docstrings, technical documentation with names, numbers,
quotes and abbreviations, under the PSF License; ``data/sentences/README.md`` says how it
was made), or from elsewhere (``source``), split by Punkt. A reference is one or two consecutive sentences; its candidate
is the reference edited at a per-pair rate with words of the same text, or now and then
another passage. About 4,400 distinct sentences give every pair a distinct candidate;
references repeat, as they do across the models of a lab.
"""

from __future__ import annotations

import functools
import importlib.metadata
import random
from pathlib import Path
from typing import TYPE_CHECKING, cast

from evalnb.text.sentences import split_sentences
from evalnb.text.synthetic import edit

if TYPE_CHECKING:
    from email.message import Message

__all__ = ["SENTENCES", "real_pairs"]

SENTENCES = Path(__file__).resolve().parents[1] / "data" / "sentences"


def _package_texts() -> list[str]:
    """The long descriptions (READMEs) of the Python packages installed here, once each."""
    found: dict[str, None] = {}
    for dist in importlib.metadata.distributions():
        body = cast("Message", dist.metadata).get_payload()
        if isinstance(body, str) and len(body) > 1_000:
            found.setdefault(body)
    return sorted(found)


def _folder_texts(where: Path) -> list[str]:
    files = [where] if where.is_file() else sorted([*where.glob("*.txt"), *where.glob("*.md")])
    files = [f for f in files if not f.name.startswith("LICENSE")]
    if not files:
        msg = f"expected a sentence corpus in {where}; found no .txt or .md file there" + (
            ": restore it from git, or rebuild it with scripts/make_sentences.py"
            if where == SENTENCES
            else ""
        )
        raise FileNotFoundError(msg)
    return [f.read_text(encoding="utf-8", errors="replace") for f in files]


@functools.cache
def _sentences(source: str = "docstrings") -> list[str]:
    texts = (
        _package_texts()
        if source == "packages"
        else _folder_texts(SENTENCES if source == "docstrings" else Path(source))
    )
    paragraphs = [p for text in texts for p in text.split("\n\n")]
    sentences = [
        " ".join(s.split()) for s in split_sentences([p.strip() for p in paragraphs]) for s in s
    ]
    return [s for s in sentences if 6 <= len(s.split()) <= 60]


def real_pairs(n: int, seed: int = 0, source: str = "docstrings") -> tuple[list[str], list[str]]:
    """Return ``n`` (candidates, references) of real sentences, deterministic for ``seed``.

    ``source`` says whose sentences: ``"docstrings"`` (the corpus shipped in
    ``data/sentences``), ``"packages"`` (the READMEs of the Python packages installed on this
    machine: Markdown with code, URLs, tables and lists, what varies by machine), or a path
    to a ``.txt``/``.md`` file or a folder of them.
    """
    rng = random.Random(seed)
    sentences = _sentences(source)
    vocab = sorted({w for s in sentences for w in s.split()})
    cands, refs = [], []
    for _ in range(n):
        i = rng.randrange(len(sentences) - 1)
        ref = sentences[i] if rng.random() < 0.7 else f"{sentences[i]} {sentences[i + 1]}"
        roll = rng.random()
        if roll < 0.05:
            cand = rng.choice(sentences)
        else:
            cand = " ".join(edit(rng, ref.split(), vocab))
            if roll < 0.25:
                cand += " " + rng.choice(sentences)
        cands.append(cand)
        refs.append(ref)
    return cands, refs
