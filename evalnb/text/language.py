"""Which language a text is in, and which scripts it is written in.

Detection is py3langid's (a naive Bayes model over byte n-grams of 97 languages, shipped in a
4.6 MB wheel): on 27,000 short real UI messages of nine languages it took 40 µs a text and
was right on 74-99 % of them (91-100 % when told the lab's languages); lingua, the other
well-kept offline detector, was 14 times slower, its wheel 96 MB, and not more accurate on
these texts (``bench/bench_languages.py`` measures both). Before the model, a text whose
letters are mostly Hangul is Korean, one with kana Japanese, and one of Han characters
without kana Chinese: scripts one language owns need no statistics.

Scripts also decide where a word-based metric means something at all: NLTK's and
rouge-score's tokenizers split on spaces and keep ``[a-z0-9]``, so a text in a script written
without spaces (Chinese, Japanese, Thai …) or outside the Latin alphabet gets no words.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from evalnb.text.intern import utf8_buffers
from evalnb.text.utf8 import all_ascii

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = [
    "LANGUAGE_NAMES",
    "NON_LATIN",
    "RELIABLE_LETTERS",
    "UNSEGMENTED",
    "detect_languages",
    "language_name",
    "latin_letter_share",
    "row_languages",
    "unsegmented_share",
]

LANGUAGE_NAMES = {
    "af": "Afrikaans",
    "am": "Amharic",
    "an": "Aragonese",
    "ar": "Arabic",
    "as": "Assamese",
    "az": "Azerbaijani",
    "be": "Belarusian",
    "bg": "Bulgarian",
    "bn": "Bengali",
    "br": "Breton",
    "bs": "Bosnian",
    "ca": "Catalan",
    "cs": "Czech",
    "cy": "Welsh",
    "da": "Danish",
    "de": "German",
    "dz": "Dzongkha",
    "el": "Greek",
    "en": "English",
    "eo": "Esperanto",
    "es": "Spanish",
    "et": "Estonian",
    "eu": "Basque",
    "fa": "Persian",
    "fi": "Finnish",
    "fo": "Faroese",
    "fr": "French",
    "ga": "Irish",
    "gl": "Galician",
    "gu": "Gujarati",
    "he": "Hebrew",
    "hi": "Hindi",
    "hr": "Croatian",
    "ht": "Haitian",
    "hu": "Hungarian",
    "hy": "Armenian",
    "id": "Indonesian",
    "is": "Icelandic",
    "it": "Italian",
    "ja": "Japanese",
    "jv": "Javanese",
    "ka": "Georgian",
    "kk": "Kazakh",
    "km": "Khmer",
    "kn": "Kannada",
    "ko": "Korean",
    "ku": "Kurdish",
    "ky": "Kyrgyz",
    "la": "Latin",
    "lb": "Luxembourgish",
    "lo": "Lao",
    "lt": "Lithuanian",
    "lv": "Latvian",
    "mg": "Malagasy",
    "mk": "Macedonian",
    "ml": "Malayalam",
    "mn": "Mongolian",
    "mr": "Marathi",
    "ms": "Malay",
    "mt": "Maltese",
    "my": "Burmese",
    "nb": "Norwegian Bokmål",
    "ne": "Nepali",
    "nl": "Dutch",
    "nn": "Norwegian Nynorsk",
    "no": "Norwegian",
    "oc": "Occitan",
    "or": "Odia",
    "pa": "Punjabi",
    "pl": "Polish",
    "ps": "Pashto",
    "pt": "Portuguese",
    "qu": "Quechua",
    "ro": "Romanian",
    "ru": "Russian",
    "rw": "Kinyarwanda",
    "se": "Northern Sami",
    "si": "Sinhala",
    "sk": "Slovak",
    "sl": "Slovenian",
    "sq": "Albanian",
    "sr": "Serbian",
    "sv": "Swedish",
    "sw": "Swahili",
    "ta": "Tamil",
    "te": "Telugu",
    "th": "Thai",
    "tl": "Tagalog",
    "tr": "Turkish",
    "ug": "Uyghur",
    "uk": "Ukrainian",
    "ur": "Urdu",
    "vi": "Vietnamese",
    "vo": "Volapük",
    "wa": "Walloon",
    "xh": "Xhosa",
    "zh": "Chinese",
    "zu": "Zulu",
}
"""English names of the ISO 639-1 codes detection gives (py3langid's 97 and a few more)."""

UNSEGMENTED = frozenset({"zh", "ja", "th", "lo", "km", "my", "bo", "dz"})
"""Languages written without spaces between words: a split on spaces finds no words."""

NON_LATIN = frozenset(
    {
        "zh",
        "ja",
        "ko",
        "th",
        "lo",
        "km",
        "my",
        "bo",
        "dz",
        "ru",
        "uk",
        "be",
        "bg",
        "mk",
        "sr",
        "kk",
        "ky",
        "mn",
        "el",
        "ar",
        "fa",
        "ur",
        "ps",
        "ug",
        "he",
        "hi",
        "mr",
        "ne",
        "bn",
        "as",
        "gu",
        "pa",
        "or",
        "ta",
        "te",
        "kn",
        "ml",
        "si",
        "am",
        "hy",
        "ka",
    }
)
"""Languages (of those detected) written in another alphabet than the Latin one."""

# Scripts written without spaces between words (Han, kana, Thai, Lao, Khmer, Myanmar,
# Tibetan). Polars' regex engine knows Unicode scripts by name.
_UNSEGMENTED_SCRIPT = (
    r"[\p{Han}\p{Hiragana}\p{Katakana}\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}\p{Tibetan}]"
)
_MAX_DETECT_CHARS = 2_000  # the model's verdict settles long before; bounds time per text
RELIABLE_LETTERS = 20
"""Fewer letters than this and the statistical model guesses ("a" is Afrikaans): a language
found on its own (a case without one) needs this many, unless its script tells."""


def language_name(code: str | None) -> str:
    """Return the English name of an ISO 639-1 code (the code itself when unknown)."""
    if code is None:
        return "an unknown language"
    return LANGUAGE_NAMES.get(code, code)


_COUNTED = {
    "letters": r"\p{L}",
    "hangul": r"\p{Hangul}",
    "kana": r"[\p{Hiragana}\p{Katakana}]",
    "han": r"\p{Han}",
    "latin": r"\p{Latin}",
    "unsegmented": _UNSEGMENTED_SCRIPT,
}


def _letters(texts: pl.Series, *counted: str) -> pl.DataFrame:
    """Letters of each text in the scripts ``counted`` names (all of them by default)."""
    t = pl.col("t")
    names = counted or tuple(_COUNTED)
    return pl.DataFrame({"t": texts.cast(pl.String).fill_null("")}).select(
        **{name: t.str.count_matches(_COUNTED[name]) for name in names}
    )


def _script_share(texts: pl.Series, script: str) -> np.ndarray:
    """Share of each text's letters in ``script``; a text all ASCII is read without regex."""
    texts = texts.cast(pl.String).fill_null("")
    ascii_only = all_ascii(*utf8_buffers(texts.to_arrow()))  # a byte test, not a regex
    out = np.zeros(texts.len())
    if script == "latin":  # ASCII letters are Latin: only texts with others need counting
        out[ascii_only] = 1.0
    rest = np.flatnonzero(~ascii_only)
    if rest.size:
        counts = _letters(texts.gather(rest), "letters", script)
        out[rest] = _share(counts[script], counts["letters"])
        if script == "latin":  # a text without letters is not "outside" the Latin alphabet
            out[rest[counts["letters"].to_numpy() == 0]] = 1.0
    return out


def _share(part: pl.Series, whole: pl.Series) -> np.ndarray:
    num = part.to_numpy().astype(np.float64)
    den = whole.to_numpy().astype(np.float64)
    out: np.ndarray = np.divide(num, den, out=np.zeros_like(num), where=den > 0)
    return out


def unsegmented_share(texts: pl.Series) -> np.ndarray:
    """Share of each text's letters in scripts written without spaces between words."""
    return _script_share(texts, "unsegmented")


def latin_letter_share(texts: pl.Series) -> np.ndarray:
    """Share of each text's letters in the Latin alphabet (rouge-score keeps their a-z).

    A text without letters counts as Latin: nothing in it is lost to rouge-score.
    """
    return _script_share(texts, "latin")


@lru_cache(maxsize=8)
def _identifier(candidates: tuple[str, ...] | None) -> Any:  # noqa: ANN401 - untyped library
    try:
        from py3langid.langid import MODEL_FILE, LanguageIdentifier  # noqa: PLC0415
    except ImportError as exc:  # pragma: no cover - a dependency of evalnb
        msg = "language detection needs py3langid: pip install py3langid"
        raise ImportError(msg) from exc
    ident = LanguageIdentifier.from_model_file(MODEL_FILE)
    if candidates:
        unknown = sorted(set(candidates) - set(ident.nb_classes))
        if unknown:
            msg = (
                f"languages {unknown} are not among the 97 the detector knows; expected "
                f"ISO 639-1 codes such as {sorted(ident.nb_classes)[:12]} …"
            )
            raise ValueError(msg)
        ident.set_languages(list(candidates))
    return ident


def detect_languages(
    texts: pl.Series, candidates: Iterable[str] | None = None, *, min_letters: int = 1
) -> pl.Series:
    """Return each text's language as an ISO 639-1 code (null for a text without letters).

    Parameters
    ----------
    texts
        The texts; each distinct one is classified once.
    candidates
        The languages the texts may be in (ISO 639-1 codes); a detector told them is more
        accurate on short texts. All 97 it knows by default.
    min_letters
        A text with fewer letters is null unless its script names its language (Hangul,
        kana, Han): on a word or two, the model's answer is a guess.

    Examples
    --------
    >>> detect_languages(pl.Series(["巴黎是法国的首都。", "Paris est la capitale.", "42"])).to_list()
    ['zh', 'fr', None]
    """
    texts = texts.cast(pl.String)
    distinct = texts.drop_nulls().unique(maintain_order=True)
    counts = _letters(distinct, "letters", "hangul", "kana", "han")
    letters = counts["letters"].to_numpy()
    hangul = _share(counts["hangul"], counts["letters"])
    kana = _share(counts["kana"], counts["letters"])
    cjk = _share(counts["kana"] + counts["han"], counts["letters"])
    han = _share(counts["han"], counts["letters"])
    allowed = None if candidates is None else tuple(sorted(set(candidates)))
    ident = None
    found: list[str | None] = []
    for i, text in enumerate(distinct.to_list()):
        if letters[i] == 0:
            found.append(None)
        elif hangul[i] >= 0.3 and _allowed("ko", allowed):
            found.append("ko")
        elif kana[i] > 0 and cjk[i] >= 0.3 and _allowed("ja", allowed):
            found.append("ja")
        elif han[i] >= 0.3 and kana[i] == 0 and _allowed("zh", allowed):
            found.append("zh")
        elif letters[i] < min_letters:
            found.append(None)
        else:
            ident = ident or _identifier(allowed)
            found.append(str(ident.classify(text[:_MAX_DETECT_CHARS])[0]))
    lookup = pl.DataFrame(
        {"t": distinct, "language": pl.Series(found, dtype=pl.String)},
        schema={"t": pl.String, "language": pl.String},
    )
    return (
        pl.DataFrame({"t": texts})
        .join(lookup, on="t", how="left", maintain_order="left")
        .get_column("language")
    )


def _allowed(code: str, allowed: tuple[str, ...] | None) -> bool:
    return allowed is None or code in allowed


def row_languages(
    rows: pl.DataFrame,
    *,
    latin_is_enough: bool = False,
    candidates: Iterable[str] | None = None,
) -> pl.Series:
    """Each row's language: its ``language`` column, else detected from the case's texts.

    A row without a language of its own is detected from its prompt and first expected
    answer (its answer when the case has neither), once per distinct text; with fewer than
    ``RELIABLE_LETTERS`` letters and no telling script, it stays null (unknown). With
    ``latin_is_enough``, a row whose texts have no letter outside the Latin alphabet is left
    null (no detection): for a caller whose choice only changes with the script (BLEU's
    tokenizer), an English lab then costs no detection at all. ``candidates`` are the
    languages the detector may answer (:func:`detect_languages`).
    """
    given = (
        rows["language"].cast(pl.String)
        if "language" in rows.columns
        else pl.Series([None] * rows.height, dtype=pl.String)
    )
    missing = given.is_null()
    if not missing.any():
        return given.alias("language")
    parts = [pl.col(c).cast(pl.String) for c in ("prompt",) if c in rows.columns]
    if "expected" in rows.columns:
        parts.append(pl.col("expected").list.first().cast(pl.String))
    case_text = (
        rows.select(pl.concat_str(parts, separator="\n", ignore_nulls=True).alias("t"))["t"]
        if parts
        else pl.Series([None] * rows.height, dtype=pl.String)
    )
    case_text = case_text.replace("", None)
    if "actual" in rows.columns:
        case_text = case_text.fill_null(rows["actual"])
    if latin_is_enough:
        other = case_text.fill_null("").str.contains(r"[\p{L}--\p{Latin}]").to_numpy()
        missing = missing & pl.Series(other)
        if not missing.any():
            return given.alias("language")
    detected = detect_languages(case_text.filter(missing), candidates, min_letters=RELIABLE_LETTERS)
    return given.clone().scatter(np.flatnonzero(missing.to_numpy()), detected).alias("language")


def case_languages(cases: pl.DataFrame, candidates: Iterable[str] | None = None) -> pl.Series:
    """Each case's language: its ``language`` column, else detected (nothing is written).

    Detected from the prompt and the first expected answer, as :func:`row_languages` does;
    ``lab.languages.set`` writes the detected ones to the lab.
    """
    columns = [c for c in _CASE_TEXT if c in cases.columns]
    return row_languages(cases.select(columns), candidates=candidates)


_CASE_TEXT = ("case_id", "prompt", "expected", "language")
