"""Where a word-based metric of another tool means nothing: "not meaningful for <language>".

H2O's BLEU tokenizes with NLTK, which splits words on spaces; rouge-score keeps only
``a``-``z`` and ``0``-``9``. Their numbers are kept exactly as those tools compute them, and on
a case whose text gives them no words they would be a silent 0: there the row stays
unscored and its detail says why and what to use instead.
"""

from __future__ import annotations

import json

import numpy as np
import polars as pl

from evalnb.text.language import (
    detect_languages,
    language_name,
    latin_letter_share,
    unsegmented_share,
)

__all__ = ["not_meaningful"]

_NO_SPACES = (
    "{tool} splits words on spaces, and {name} puts none between its words: not meaningful "
    "for {name}; score it with bleu's sacrebleu=True (sacrebleu's tokenizer for {name}), "
    "chrF or rouge_multilingual"
)
_NOT_LATIN = (
    "{tool} keeps only the letters a-z and the digits 0-9, and {name} is not written in "
    "the Latin alphabet: "
    "not meaningful for {name}; score it with rouge_multilingual, chrF or bleu's "
    "sacrebleu=True"
)


def not_meaningful(rows: pl.DataFrame, tool: str, *, latin_only: bool = False) -> dict[int, str]:
    """Rows where ``tool``'s tokens mean nothing, each with its detail JSON.

    A row is judged by its first expected answer (its answer when it has none): more than
    half its letters in scripts written without spaces, or with ``latin_only`` (rouge-score)
    fewer than half of them in the Latin alphabet. The language named is the row's ``language`` when
    set, else the one detected from that text.
    """
    text = rows["expected"].list.first().cast(pl.String).fill_null(rows["actual"])
    flagged = latin_letter_share(text) < 0.5 if latin_only else unsegmented_share(text) >= 0.5
    where = np.flatnonzero(flagged)
    if not where.size:
        return {}
    given = (
        rows["language"].gather(where).cast(pl.String)
        if "language" in rows.columns
        else pl.Series([None] * where.size, dtype=pl.String)
    )
    languages = given.fill_null(detect_languages(text.gather(where)))
    template = _NOT_LATIN if latin_only else _NO_SPACES
    langs = languages.to_list()
    # One reason per language, not per row: a Chinese lab has a million such rows.
    reasons = {
        lang: json.dumps(
            {"reason": template.format(tool=tool, name=language_name(lang)), "language": lang},
            ensure_ascii=False,
        )
        for lang in set(langs)
    }
    return {int(i): reasons[lang] for i, lang in zip(where, langs, strict=True)}
