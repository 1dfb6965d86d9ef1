"""Which languages an embedding model covers, and the warning when a lab strays outside them.

A model's languages come from its model card (the ``language:`` list in the front matter of
the ``README.md`` beside its weights, as the Hugging Face hub writes it), else from a list of
well-known models kept here. all-MiniLM-L6-v2, evalnb's packaged model, is English: its
cosine for two unrelated Chinese sentences (0.55) is above the one for an English paraphrase
pair's translation. Scoring a language the model does not cover warns with the number of
rows and the multilingual model to use instead.
"""

from __future__ import annotations

import re
import warnings
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "ALL_LANGUAGES",
    "MULTILINGUAL_MODEL",
    "LanguageCoverageWarning",
    "model_languages",
    "warn_uncovered",
]

ALL_LANGUAGES = frozenset({"*"})
"""A model declared multilingual without a list (LaBSE, bge-m3 …): no warning."""

MULTILINGUAL_MODEL = "sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2"
"""What the warning suggests: 50+ languages, the size of MiniLM-L12 (loaded from the hub)."""

_PARAPHRASE_MULTILINGUAL = frozenset(
    {
        "ar",
        "bg",
        "ca",
        "cs",
        "da",
        "de",
        "el",
        "en",
        "es",
        "et",
        "fa",
        "fi",
        "fr",
        "gl",
        "gu",
        "he",
        "hi",
        "hr",
        "hu",
        "hy",
        "id",
        "it",
        "ja",
        "ka",
        "ko",
        "ku",
        "lt",
        "lv",
        "mk",
        "mn",
        "mr",
        "ms",
        "my",
        "nb",
        "nl",
        "pl",
        "pt",
        "ro",
        "ru",
        "sk",
        "sl",
        "sq",
        "sr",
        "sv",
        "th",
        "tr",
        "uk",
        "ur",
        "vi",
        "zh",
    }
)
_ENGLISH = frozenset({"en"})
# Names without the organisation, lower-cased: what a well-known model covers when its card
# is not at hand (a model named by hub id and loaded elsewhere).
_DECLARED: dict[str, frozenset[str]] = {
    "all-minilm-l6-v2": _ENGLISH,
    "all-minilm-l12-v2": _ENGLISH,
    "all-mpnet-base-v2": _ENGLISH,
    "bge-small-en-v1.5": _ENGLISH,
    "bge-base-en-v1.5": _ENGLISH,
    "bge-large-en-v1.5": _ENGLISH,
    "gte-small": _ENGLISH,
    "e5-small-v2": _ENGLISH,
    "paraphrase-multilingual-minilm-l12-v2": _PARAPHRASE_MULTILINGUAL,
    "paraphrase-multilingual-mpnet-base-v2": _PARAPHRASE_MULTILINGUAL,
    "distiluse-base-multilingual-cased-v2": _PARAPHRASE_MULTILINGUAL,
    "labse": ALL_LANGUAGES,
    "bge-m3": ALL_LANGUAGES,
    "multilingual-e5-small": ALL_LANGUAGES,
    "multilingual-e5-base": ALL_LANGUAGES,
    "multilingual-e5-large": ALL_LANGUAGES,
}


class LanguageCoverageWarning(UserWarning):
    """Rows are in a language the embedding model was not trained on: their scores mislead."""


def _card_languages(card: Path) -> frozenset[str] | None:
    """Read the ``language:`` of a model card's front matter (``None`` when it has none)."""
    try:
        text = card.read_text(encoding="utf-8", errors="replace")[:20_000]
    except OSError:
        return None
    match = re.match(r"---\s*\n(.*?)\n---", text, re.DOTALL)
    if not match:
        return None
    lines = match.group(1).splitlines()
    found: list[str] = []
    for i, line in enumerate(lines):
        key = re.match(r"language:\s*(.*)$", line)
        if not key:
            continue
        inline = key.group(1).strip()
        if inline:
            found = [v.strip(" '\"") for v in inline.strip("[]").split(",")]
        else:
            for item in lines[i + 1 :]:
                entry = re.match(r"\s*-\s*(\S+)", item)
                if not entry:
                    break
                found.append(entry.group(1).strip("'\""))
        break
    codes = {f.lower().split("-")[0].split("_")[0] for f in found if f}
    if not codes:
        return None
    return ALL_LANGUAGES if "multilingual" in codes else frozenset(codes)


@lru_cache(maxsize=64)
def model_languages(model: str) -> frozenset[str] | None:
    """Return the languages ``model`` covers (ISO 639-1), ``ALL_LANGUAGES``, or ``None``.

    ``model`` is a model's identity as scores record it: a local folder (its card is read),
    or a hub name (its card in the local Hugging Face cache, else the list of well-known
    models). ``None``: nothing says, and nothing is warned.
    """
    folder = Path(model.removeprefix("path:")).expanduser()
    if folder.is_dir():
        found = _card_languages(folder / "README.md")
        if found is not None:
            return found
    else:
        try:
            from huggingface_hub import snapshot_download  # noqa: PLC0415

            cached = Path(snapshot_download(model, local_files_only=True))
        except Exception:  # not cached here, or not a hub name at all
            cached = None
        if cached is not None:
            found = _card_languages(cached / "README.md")
            if found is not None:
                return found
    return _DECLARED.get(
        folder.name.lower() if folder.is_dir() else model.rsplit("/", 1)[-1].lower()
    )


def uncovered(model: str, counts: Mapping[str | None, float]) -> dict[str, float]:
    """Rows per language ``model`` does not cover (languages unknown are not counted)."""
    covered = model_languages(model)
    if covered is None or covered == ALL_LANGUAGES:
        return {}
    return {lang: n for lang, n in counts.items() if lang is not None and lang not in covered and n}


def warn_uncovered(
    evaluator: str, model: str, counts: Mapping[str | None, float], *, estimated: bool = False
) -> dict[str, float]:
    """Warn when rows are in languages ``model`` does not cover; return those rows' counts.

    ``counts`` holds rows per language; ``estimated`` says they were scaled up from a sample.
    """
    missing = uncovered(model, counts)
    if missing:
        n = round(sum(missing.values()))
        about = "about " if estimated else ""
        listed = ", ".join(f"{lang} ({about}{round(c)})" for lang, c in sorted(missing.items()))
        covered = sorted(model_languages(model) or ())
        message = (
            f"{evaluator}: {about}{n} row(s) are in languages the embedding model {model} "
            f"does not cover ({', '.join(covered[:8])}): {listed}; their similarities are not "
            f"meaningful. Use a multilingual model for them, e.g. "
            f"model={{'en': '{model}', '*': '{MULTILINGUAL_MODEL}'}}, or a local folder."
            + (" (Counted on a sample of the rows.)" if estimated else "")
        )
        warnings.warn(message, LanguageCoverageWarning, stacklevel=3)
    return missing
