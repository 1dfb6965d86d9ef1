"""Prompt perturbators, deterministic for a seed.

Each perturbator maps ``(text, intensity, rng)`` to a new text. Rates follow H2O: the word
and comma perturbators edit every ``step``-th eligible token, the character ones
``int(len(text) * level)`` random positions. Unlike H2O (unseeded ``random``), every call
takes a seeded :class:`random.Random`, so a lab perturbed twice with one seed is identical.
"""

from __future__ import annotations

import random
import re
import string
from typing import TYPE_CHECKING

from evalnb.lab.errors import EvalnbError
from evalnb.text.language import NON_LATIN, UNSEGMENTED, language_name

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

__all__ = ["INTENSITIES", "PERTURBATORS", "char_level", "perturb_text", "unfit_for"]

INTENSITIES = ("very_low", "low", "medium", "high", "very_high", "extreme")
_CHAR_LEVEL: dict[str, tuple[float, float]] = {
    "very_low": (0.025, 0.055),
    "low": (0.1, 0.1),
    "medium": (0.25, 0.3),
    "high": (0.45, 0.6),
    "very_high": (0.7, 0.8),
    "extreme": (0.9, 1.0),
}
_WORD_P = {
    "comma": (0.1, 0.3, 0.5),
    "word_swap": (0.1, 0.3, 0.5),
    "synonym": (0.3, 0.5, 0.7),
    "antonym": (0.5, 0.7, 0.9),
}
_YZ_FRACTION = {"low": 0.3, "medium": 0.5, "high": 0.8}
_EXCLUDED_END = tuple(".,?!:;'\" ([{")
_RANDOM_CHARS = string.ascii_letters + string.digits + "\n" + string.punctuation
_RETRIES = 15
_QWERTY_ROWS = ("1234567890-", "qwertyuiop[", "asdfghjkl;'", "zxcvbnm,./")
_OCR: dict[str, Sequence[str]] = {
    "o": "0θØø",
    "0": "oOØθ",
    "m": ["rn", "nn", "vv"],
    "l": "1i|!",
    "1": "li|!",
    "i": "l1!|",
    "O": "0cdq",
    "e": "c",
    "a": "o",
    "s": "5$",
    "5": "sS",
    "b": "6h",
    "g": "9q",
    "9": "gq",
    "B": "8",
    "8": "B",
    "S": "5$",
    "z": "2",
    "Z": "2",
    "2": "zZ",
    "u": "v",
    "v": "u",
    "n": ["ri"],
    "c": "e",
    "t": "f",
    "f": "t",
    "h": "b",
    "d": "cl",
    "w": ["vv"],
    "D": "0",
    "I": "l1",
}


def _neighbours() -> dict[str, str]:
    """US-QWERTY keys around each key (same row ±1, the rows above and below)."""
    out: dict[str, str] = {}
    for r, row in enumerate(_QWERTY_ROWS):
        for c, key in enumerate(row):
            near = [row[c + d] for d in (-1, 1) if 0 <= c + d < len(row)]
            for other in (r - 1, r + 1):
                if 0 <= other < len(_QWERTY_ROWS):
                    line = _QWERTY_ROWS[other]
                    near += [line[c + d] for d in (-1, 0, 1) if 0 <= c + d < len(line)]
            out[key] = "".join(ch for ch in near if ch.isalnum())
    return out


_KEYBOARD = _neighbours()


def _level(intensity: str, rng: random.Random) -> float:
    low, high = _CHAR_LEVEL[intensity]
    return low if low == high else rng.uniform(low, high)


def char_level(intensity: str, rng: random.Random, length: int) -> int:
    """How many characters a character perturbator edits in a text of ``length``."""
    return int(length * _level(intensity, rng))


def _replace(text: str, intensity: str, rng: random.Random) -> str:
    chars = list(text)
    for i in rng.sample(range(len(chars)), char_level(intensity, rng, len(chars))):
        chars[i] = rng.choice(_RANDOM_CHARS)
    return "".join(chars)


def _insert(text: str, intensity: str, rng: random.Random) -> str:
    chars = list(text)
    for i in sorted(
        rng.sample(range(len(chars)), char_level(intensity, rng, len(chars))), reverse=True
    ):
        chars.insert(i, rng.choice(_RANDOM_CHARS))
    return "".join(chars)


def _delete(text: str, intensity: str, rng: random.Random) -> str:
    chars = list(text)
    for i in rng.sample(range(len(chars)), char_level(intensity, rng, len(chars))):
        chars[i] = "X"  # H2O marks deleted characters with X
    return "".join(chars)


def _alnum_edit(
    text: str, intensity: str, rng: random.Random, table: Mapping[str, Sequence[str]], name: str
) -> str:
    chars = list(text)
    where = [
        i for i, ch in enumerate(chars) if (ch.isalnum() and ch.lower() in table) or ch in table
    ]
    n = char_level(intensity, rng, len(chars))
    if n > len(where):
        msg = f"perturbator {name!r}: {n} edits asked for but only {len(where)} editable characters in {text!r}"
        raise EvalnbError(msg)
    for i in rng.sample(where, n):
        ch = chars[i]
        options = table.get(ch) or table.get(ch.lower()) or ch
        pick = rng.choice(list(options))
        chars[i] = pick.upper() if name == "keyboard_typos" and rng.random() < 0.5 else pick
    return "".join(chars)


def _typos(text: str, intensity: str, rng: random.Random) -> str:
    return _alnum_edit(text, intensity, rng, _KEYBOARD, "keyboard_typos")


def _ocr(text: str, intensity: str, rng: random.Random) -> str:
    return _alnum_edit(text, intensity, rng, _OCR, "ocr")


def _step(name: str, intensity: str) -> int:
    if intensity not in ("low", "medium", "high"):
        msg = f"perturbator {name!r} accepts intensity low, medium or high; got {intensity!r}"
        raise EvalnbError(msg)
    p = _WORD_P[name][("low", "medium", "high").index(intensity)]
    return max(1, round(1 / p))


def _comma(text: str, intensity: str, rng: random.Random) -> str:  # noqa: ARG001 - deterministic
    tokens = text.split(" ")
    step = _step("comma", intensity)
    if step > len(tokens):
        msg = f"perturbator 'comma': step {step} exceeds the {len(tokens)} token(s) of {text!r}"
        raise EvalnbError(msg)
    i = 0
    while i < len(tokens):
        if tokens[i] and not tokens[i].endswith(_EXCLUDED_END):
            tokens[i] += ","
            i += step
        else:
            i += 1
    return " ".join(tokens)


def _word_swap(text: str, intensity: str, rng: random.Random) -> str:  # noqa: ARG001
    tokens = text.split(" ")
    step = _step("word_swap", intensity)
    if step > len(tokens):
        msg = f"perturbator 'word_swap': step {step} exceeds the {len(tokens)} token(s) of {text!r}"
        raise EvalnbError(msg)
    i = 0
    while i + 1 < len(tokens):
        a, b = tokens[i], tokens[i + 1]
        if a and b and not a.endswith(_EXCLUDED_END) and not b.endswith(_EXCLUDED_END):
            tokens[i], tokens[i + 1] = b, a
            i += step
        else:
            i += 1
    return " ".join(tokens)


def _yz(text: str, intensity: str, rng: random.Random) -> str:  # noqa: ARG001
    if intensity not in _YZ_FRACTION:
        msg = f"perturbator 'qwerty_yz' accepts intensity low, medium or high; got {intensity!r}"
        raise EvalnbError(msg)
    k = round(1 / _YZ_FRACTION[intensity])
    seen = -1

    def swap(m: re.Match[str]) -> str:
        nonlocal seen
        seen += 1
        return "z" if seen % k == 0 else m.group(0)

    return re.sub("y", swap, text)


_PUNCT = re.compile(r"([^\w\s'-])")


def _lexical(kind: str) -> Callable[[str, str, random.Random], str]:
    def run(text: str, intensity: str, rng: random.Random) -> str:
        from evalnb.robustness.lexicon import lexicon  # noqa: PLC0415 - loads WordNet on first use

        lex = lexicon()
        table = lex.synonyms if kind == "synonym" else lex.antonyms
        step = _step(kind, intensity)
        tokens = _PUNCT.sub(r" \1 ", text).split()
        i = 0
        while i < len(tokens):
            word = tokens[i]
            options = sorted(w for w in table.get(word.lower(), ()) if w != word.lower())
            if (word.isalpha() or word.isdigit()) and lex.replaceable(word) and options:
                pick = rng.choice(options)
                tokens[i] = pick.capitalize() if word[0].isupper() else pick
                i += step
            else:
                i += 1
        return re.sub(r" ([^\w\s'-])", r"\1", " ".join(tokens))

    return run


def _base16(spaces: bool) -> Callable[[str, str, random.Random], str]:
    def run(text: str, intensity: str, rng: random.Random) -> str:  # noqa: ARG001
        hexed = text.encode("utf-8").hex().upper()
        if spaces:
            hexed = " ".join(hexed[i : i + 2] for i in range(0, len(hexed), 2))
        return f"The following question is encoded in base16 - answer in normal text: {hexed}"

    return run


PERTURBATORS: dict[str, Callable[[str, str, random.Random], str]] = {
    "copy": lambda text, intensity, rng: text,  # noqa: ARG005 - the control
    "comma": _comma,
    "word_swap": _word_swap,
    "qwerty_yz": _yz,
    "synonym": _lexical("synonym"),
    "antonym": _lexical("antonym"),
    "random_character_replacement": _replace,
    "random_character_insertion": _insert,
    "random_character_deletion": _delete,
    "keyboard_typos": _typos,
    "ocr": _ocr,
    "base16": _base16(spaces=False),
    "base16_spaces": _base16(spaces=True),
}


_WORDS_BY_SPACES = ("comma", "word_swap")
_LATIN_KEYBOARD = ("qwerty_yz", "keyboard_typos", "ocr")
_ENGLISH_LEXICON = ("synonym", "antonym")


def unfit_for(name: str, language: str | None) -> str | None:
    """Why perturbator ``name`` makes no sense for a text in ``language`` (None: it does).

    Commas and word swaps need words separated by spaces; QWERTY, typo and OCR confusions
    are those of the Latin alphabet; synonyms and antonyms come from the English WordNet.
    An unknown language is let through.
    """
    if language is None:
        return None
    lang = language_name(language)
    if name in _WORDS_BY_SPACES and language in UNSEGMENTED:
        return f"{name} needs words separated by spaces, and {lang} has none"
    if name in _LATIN_KEYBOARD and language in NON_LATIN:
        return f"{name} makes the slips of a Latin keyboard or scan, not of {lang} text"
    if name in _ENGLISH_LEXICON and language != "en":
        return f"{name} draws on the English WordNet, and the text is in {lang}"
    return None


def perturb_text(name: str, text: str, intensity: str = "medium", *, seed: int | str = 0) -> str:
    """Perturb one text; retried (15 times) until it differs, as H2O does.

    Examples
    --------
    >>> perturb_text("comma", "one two three four five six", "medium")
    'one, two three four, five six'
    >>> perturb_text("qwerty_yz", "yes you may say yay", "high")
    'zes zou maz saz zaz'
    """
    if name not in PERTURBATORS:
        msg = f"unknown perturbator {name!r}; expected one of {sorted(PERTURBATORS)}"
        raise EvalnbError(msg)
    level = intensity.lower()
    if level not in INTENSITIES:
        msg = f"unknown intensity {intensity!r}; expected one of {INTENSITIES}"
        raise EvalnbError(msg)
    rng = random.Random(f"{seed}:{name}:{level}:{text}")
    for _ in range(_RETRIES):
        out = PERTURBATORS[name](text, level, rng)
        if out != text or name == "copy":
            return out
    msg = (
        f"Perturbator '{name}' failed to produce perturbed text different from the original "
        f"text '{text}'. Try another intensity or perturbator."
    )
    raise EvalnbError(msg)
