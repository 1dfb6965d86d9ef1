"""Edit distances of many pairs at once: WER and CER as jiwer counts them, ANLS as DocVQA does.

**WER, CER (jiwer 4's defaults).** jiwer's ``wer`` turns every run of two or more white-space
characters into one space, strips the ends and splits on the space; ``cer`` strips the ends
and takes every character (spaces too). Errors are the Levenshtein distance of the two token
sequences (substitutions + deletions + insertions); the rate is errors over the reference's
length, and for an empty reference jiwer's own convention: the insertions (the hypothesis'
length; 0 for two empty texts). No case or punctuation folding unless asked:
``normalize="standard"`` applies what jiwer's ``wer_standardize`` does before splitting for
WER, and case folding for CER. The normalisation runs in Python (its white space is Python's,
as jiwer's is); the distances run in rapidfuzz's C++, many pairs per call, each token an
integer code so a word costs one comparison.

**ANLS** (Biten et al., ICCV 2019, the DocVQA and ST-VQA metric): per reference, both texts
lower-cased, stripped and their white space collapsed; NL = distance / the longer length;
the similarity 1 − NL counts when NL < τ (0.5), else 0; the best over the references.
``convention="lmms_eval"`` computes lmms-eval's variant instead: the length from the texts
before normalisation, and a similarity of exactly 1 − τ kept.
"""

from __future__ import annotations

import re
import string

import numpy as np

__all__ = ["anls_scores", "char_errors", "word_errors"]

_RUNS = re.compile(r"\s\s+")
# jiwer's ExpandCommonEnglishContractions, in its order, and its Kaldi non-words.
_CONTRACTIONS = (
    (r"won't", "will not"),
    (r"can't", "can not"),
    (r"let's", "let us"),
    (r"n't", " not"),
    (r"'re", " are"),
    (r"'s", " is"),
    (r"'d", " would"),
    (r"'ll", " will"),
    (r"'t", " not"),
    (r"'ve", " have"),
    (r"'m", " am"),
)
_KALDI = re.compile(r"[<\[][^>\]]*[>\]]")
_ASCII_SPACE = str.maketrans(dict.fromkeys(string.whitespace, " "))


def _standard(text: str) -> str:
    """Return ``text`` as jiwer's ``wer_standardize`` leaves it before its default split."""
    text = text.lower()
    for short, long in _CONTRACTIONS:
        text = re.sub(short, long, text)
    text = _KALDI.sub("", text)
    return text.translate(_ASCII_SPACE)  # jiwer's RemoveWhiteSpace: string.whitespace only


def _words(text: str | None, *, standard: bool) -> list[str]:
    text = text or ""
    if standard:
        text = _standard(text)
    return [w for w in _RUNS.sub(" ", text).strip().split(" ") if w]


def _coded(sequences: list[list[str]], codes: dict[str, int]) -> list[list[int]]:
    return [[codes.setdefault(w, len(codes)) for w in seq] for seq in sequences]


def _distances(left: list[list[int]] | list[str], right: list[list[int]] | list[str]) -> np.ndarray:
    from rapidfuzz.distance import Levenshtein  # noqa: PLC0415 - its C++ loads when needed
    from rapidfuzz.process import cpdist  # noqa: PLC0415

    if not left:
        return np.zeros(0, dtype=np.int64)
    return np.asarray(cpdist(left, right, scorer=Levenshtein.distance, workers=-1), dtype=np.int64)


def _rates(errors: np.ndarray, lengths: np.ndarray, hyp_lengths: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = errors / lengths
    # jiwer: an empty reference's rate is its insertions (the hypothesis' length)
    return np.where(lengths == 0, hyp_lengths.astype(np.float64), rate)


def word_errors(
    references: list[str | None], hypotheses: list[str | None], *, normalize: str = "none"
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return each pair's WER, its edit count and its reference's word count."""
    standard = normalize == "standard"
    refs = [_words(t, standard=standard) for t in references]
    hyps = [_words(t, standard=standard) for t in hypotheses]
    codes: dict[str, int] = {}
    errors = _distances(_coded(refs, codes), _coded(hyps, codes))
    lengths = np.array([len(r) for r in refs], dtype=np.int64)
    hyp_lengths = np.array([len(h) for h in hyps], dtype=np.int64)
    return _rates(errors, lengths, hyp_lengths), errors, lengths


def char_errors(
    references: list[str | None], hypotheses: list[str | None], *, normalize: str = "none"
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return each pair's CER, its edit count and its reference's character count."""
    fold = normalize == "standard"
    refs = [((t or "").lower() if fold else (t or "")).strip() for t in references]
    hyps = [((t or "").lower() if fold else (t or "")).strip() for t in hypotheses]
    errors = _distances(refs, hyps)
    lengths = np.array([len(r) for r in refs], dtype=np.int64)
    hyp_lengths = np.array([len(h) for h in hyps], dtype=np.int64)
    return _rates(errors, lengths, hyp_lengths), errors, lengths


def _anls_norm(text: str) -> str:
    return " ".join(text.strip().lower().split())


def anls_scores(
    predictions: list[str | None],
    references: list[list[str]],
    *,
    threshold: float = 0.5,
    convention: str = "docvqa",
) -> np.ndarray:
    """Return each prediction's ANLS against its references (NaN where it has none)."""
    left: list[str] = []
    right: list[str] = []
    longest: list[int] = []
    owner: list[int] = []
    for i, (pred, refs) in enumerate(zip(predictions, references, strict=True)):
        p = pred or ""
        for ref in refs:
            a, b = _anls_norm(ref), _anls_norm(p)
            left.append(a)
            right.append(b)
            if convention == "lmms_eval":
                longest.append(max(len(ref.upper()), len(p.upper())))
            else:
                longest.append(max(len(a), len(b)))
            owner.append(i)
    out = np.full(len(predictions), np.nan)
    if not left:
        return out
    dist = _distances(left, right).astype(np.float64)
    size = np.asarray(longest, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        nl = np.where(size == 0, 0.0, dist / size)
    if convention == "lmms_eval":
        sim = 1.0 - nl
        sim = np.where(sim < threshold, 0.0, sim)
    else:
        sim = np.where(nl < threshold, 1.0 - nl, 0.0)
    who = np.asarray(owner)
    np.fmax.at(out, who, sim)
    return out
