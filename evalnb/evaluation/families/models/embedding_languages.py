"""What the embedding evaluators know of languages: one model per language, and coverage.

:class:`LanguageAwareEmbedding` is the base of the six embedding evaluators
(:mod:`~evalnb.evaluation.families.models.embedding`): its ``score`` checks the rows'
languages against the model's (:mod:`evalnb.models.languages`), warns where the model does
not cover them, and with ``model={"en": ..., "*": ...}`` scores each language's rows with
its own model through the subclass's ``score_rows``.
"""

from __future__ import annotations

import json
from abc import abstractmethod
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from evalnb.evaluation.base import Context, Evaluator, Param
from evalnb.evaluation.families.shared import EMBEDDING_MODEL
from evalnb.models.languages import (
    ALL_LANGUAGES,
    MULTILINGUAL_MODEL,
    model_languages,
    warn_uncovered,
)
from evalnb.models.resolve import used_model
from evalnb.text.language import LANGUAGE_NAMES, row_languages
from evalnb.text.multilingual import languages_by

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["EMBEDDING_MODELS", "LanguageAwareEmbedding"]


def _model_map(value: object) -> object:
    """Resolve a model name, or each model of a map of languages to models, to the one used."""
    if not isinstance(value, dict):
        return used_model(str(value))
    if "*" not in value:
        msg = (
            f"a per-language model map needs a '*' entry for the other languages; got keys "
            f"{sorted(value)}: e.g. model={{'en': 'all-MiniLM-L6-v2', '*': '{MULTILINGUAL_MODEL}'}}"
        )
        raise ValueError(msg)
    bad = [k for k in value if k != "*" and k not in LANGUAGE_NAMES]
    if bad or not all(isinstance(v, str) for v in value.values()):
        msg = (
            f"a per-language model map takes ISO 639-1 codes (or '*') to model names; got "
            f"{value!r}" + (f": {bad} are not language codes" if bad else "")
        )
        raise ValueError(msg)
    return {str(k): used_model(str(v)) for k, v in sorted(value.items())}


EMBEDDING_MODELS = Param(
    "model",
    object,
    default=EMBEDDING_MODEL.default,
    description="sentence-transformers model: name or local folder, or a map of languages to "
    "models, e.g. {'en': 'all-MiniLM-L6-v2', '*': '<multilingual model>'} (each case's "
    "language picks; the models used are recorded)",
    normalize=_model_map,
)
"""The model of the embedding evaluators: one model, or one per language."""


_COVERAGE_SAMPLE = 2_000


def _coverage_counts(rows: pl.DataFrame) -> tuple[dict[str | None, float], bool]:
    """Rows per language for the coverage warning, and whether they were estimated.

    Languages the rows carry are counted; the others are detected, where their script is not
    Latin, on a seeded sample of at most ``_COVERAGE_SAMPLE`` rows and scaled up: a warning
    needs proportions, and detecting a million distinct texts would cost more than a GPU
    takes to embed them.
    """
    given = (
        rows["language"].cast(pl.String)
        if "language" in rows.columns
        else pl.Series([None] * rows.height, dtype=pl.String)
    )
    counts: dict[str | None, float] = {
        lang: float(n) for lang, n in given.drop_nulls().value_counts().iter_rows()
    }
    missing = np.flatnonzero(given.is_null().to_numpy())
    if not missing.size:
        return counts, False
    pick = missing
    if missing.size > _COVERAGE_SAMPLE:
        pick = np.sort(np.random.default_rng(0).choice(missing, _COVERAGE_SAMPLE, replace=False))
    scale = missing.size / pick.size
    # Only a script other than Latin is trusted unasked: on Latin text the detector mistakes
    # English and made-up words for Occitan or Afrikaans, and a warning every English lab
    # raised would teach users to ignore it. A language set on the cases is always counted.
    found = row_languages(rows[pick], latin_is_enough=True)
    for lang, n in found.drop_nulls().value_counts().iter_rows():
        counts[lang] = counts.get(lang, 0.0) + n * scale
    return counts, scale > 1


class LanguageAwareEmbedding(Evaluator):
    """An embedding evaluator that knows its model's languages and takes one model per language.

    Rows in a language the model does not cover raise a :class:`LanguageCoverageWarning`
    naming how many and what to use; with ``model={"en": ..., "*": ...}`` each case's
    language picks its model, and each row's detail records the model that scored it.
    """

    @abstractmethod
    def score_rows(
        self, rows: pl.DataFrame, params: Mapping[str, object], ctx: Context
    ) -> pl.DataFrame:
        """Score ``rows`` with the one model ``params["model"]`` names."""

    def score(self, rows: pl.DataFrame, params: Mapping[str, object], ctx: Context) -> pl.DataFrame:
        """Score each language's rows with its model, warning where a model does not fit."""
        model = params["model"]
        if not isinstance(model, dict):
            covered = model_languages(str(model))
            if covered is not None and covered != ALL_LANGUAGES:
                counts, estimated = _coverage_counts(rows)
                warn_uncovered(self.id, str(model), counts, estimated=estimated)
            return self.score_rows(rows, params, ctx)
        languages = row_languages(rows)
        groups = languages_by(languages, lambda lang: str(model.get(lang or "*", model["*"])))
        parts = []
        for name, where in groups.items():
            part = rows[where]
            per_language = languages.gather(where).value_counts()
            warn_uncovered(self.id, name, dict(per_language.iter_rows()))
            scored = self.score_rows(part, {**params, "model": name}, ctx)
            note = json.dumps({"model": name})
            parts.append(scored.with_columns(pl.col("detail").fill_null(note)))
        return pl.concat(parts)
