"""A tolerant reader of judge replies that never guesses.

A judge asked for ``true`` or ``false`` answers ``**No**``, ``Answer: No``, a fenced ``No``,
``{"verdict": "no"}`` or a ``<think>`` block followed by ``No``. Each of these is read here
through a named, documented *salvage*, and the names are kept with the value so that a
report can say how many verdicts needed which. A reply that could mean two things
(``No, it is not; yes it is respectful.``) or none stays a parse failure: never a default.

Salvages, in the order they are tried:

``think_stripped``
    ``<think>…</think>`` (or ``<thinking>``) blocks removed; an unclosed block is a failure.
``fenced``
    the content of the one fenced block (```` ``` ````) of the reply.
``json_field``
    the verdict or score read from a JSON object's field (``verdict``, ``answer``, ``score``
    …) when free text was asked for; under a JSON contract that is the contract, not a salvage.
``json_in_text``
    the one JSON object inside prose around it; the prose is read too, and a reply whose
    prose names another class or score than its object (``No. {"verdict": "yes"}``)
    contradicts itself: a failure.
``trailing_comma`` / ``single_quotes``
    a JSON object with a comma before its closing bracket, or written as a Python literal.
``markdown``
    emphasis, headings and code marks around the answer removed.
``prefixed``
    a label before the answer (``Answer:``, ``Verdict -``, ``The final answer is``).
``synonym``
    yes/no ↔ true/false ↔ 1/0 for a two-valued verdict that uses one of these pairs, and
    pass/fail where the evaluator says which class passes.
``first_word``
    the answer's first word is a class word standing alone (``No, it is not``) and no other
    word names another class.
``last_word``
    the answer's last word is a class word and no other word names another class
    (``I would say false.``); a class word inside a sentence is never read.

A class word counts only where its sentence cannot mean the other class: it stands alone
(``No doubt, it is correct`` and ``no sexist language`` name no verdict), nothing earlier
in its sentence negates it (``I would not say yes``), no hedge weakens it (``probably
yes``), and a number is a class only when it is one exactly (``-1`` and ``0.5`` are no
``1`` or ``0``).

``number_in_text``
    the one score in a sentence (``Score: 8/10``, ``8 out of 10``, ``I'd rate it 7.``); a
    labelled score wins over counts in the prose (``2 of 10 facts are wrong. Score: 8`` is
    8), ``7½`` is 7.5 and a fraction with no exact decimal (``7⅓``) fails.
``scale_restated``
    the scale the prompt gave (``on a scale of 1 to 10``) removed before reading the score.

A score outside the asked range is a failure naming it, never clamped.
"""

from __future__ import annotations

import ast
import json
import re
import unicodedata
from typing import TYPE_CHECKING, Any

from evalnb.llm.class_words import class_word_verdict
from evalnb.llm.parsed import Parsed

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "READER_VERSION",
    "SALVAGES",
    "read_object",
    "read_score",
    "read_verdict",
]

READER_VERSION = "2026-12-01"
"""The reading rules' edition, in every judged score's fingerprint: raised when a reply that
read one way would now read another (the class-word rule of 2026-12-01 was such a change)."""

SALVAGES = (
    "think_stripped",
    "fenced",
    "json_field",
    "json_in_text",
    "trailing_comma",
    "single_quotes",
    "markdown",
    "prefixed",
    "synonym",
    "first_word",
    "last_word",
    "number_in_text",
    "scale_restated",
)
# Replies longer than this are not salvaged (a Python-literal parse of megabytes is slow).
_MAX_SALVAGE_CHARS = 100_000
_THINK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.S | re.I)
_THINK_OPEN = re.compile(r"<(?:think|thinking|reasoning)>", re.I)
_THINK_CLOSE = re.compile(r"</(?:think|thinking|reasoning)>", re.I)
_FENCE = re.compile(r"```[\w+-]*[ \t]*\n?(.*?)```", re.S)
_MARKS = re.compile(r"[*_`#>~]+")
_PREFIX = re.compile(
    r"^\s*(?:(?:the|my)\s+)?(?:final\s+)?(?:answer|verdict|decision|result|judg(?:e)?ment|label|"
    r"output|classification|response|rating|score|grade|evaluation)(?:\s+is)?\s*[:=\-–]?\s+",
    re.I,
)
_AFFIRM = ("yes", "true", "1")
_DENY = ("no", "false", "0")
_PASS_WORDS = ("pass", "passed", "passes")
_FAIL_WORDS = ("fail", "failed", "fails")
_VERDICT_FIELDS = (
    "verdict",
    "answer",
    "result",
    "label",
    "decision",
    "judgement",
    "judgment",
    "classification",
    "prediction",
    "output",
)
_SCORE_FIELDS = ("score", "rating", "grade", "value", "result", "answer")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.]*\d)")
_OUT_OF = re.compile(r"(-?\d+(?:\.\d+)?)\s*(?:/|out\s+of|of)\s*(\d+(?:\.\d+)?)", re.I)
# A score named as one: "Score: 8", "rating of 7/10", "I'd rate it 7", "I give it a 6".
_LABELLED = re.compile(
    r"\b(?:score|rating|grade|rate\s+(?:it|this)|give\s+(?:it|this)|rated)"
    r"(?:\s+(?:is|of|as|at))?\s*[:=\-–]?\s*(?:an?\s+)?"
    r"(-?\d+(?:\.\d+)?)(?![\d.]*\w)(?:\s*(?:/|out\s+of)\s*(\d+(?:\.\d+)?))?",
    re.I,
)
_FRACTION = re.compile(r"(\d*)\s?([\u00bc-\u00be\u2150-\u215e])")
_INEXACT_FRACTION = re.compile(r"[\u2150\u2151\u2153\u2154\u2159\u215a]")


def _strip_thinking(text: str, salvages: list[str]) -> str | Parsed:
    if _THINK_OPEN.search(text) or _THINK_CLOSE.search(text):
        stripped = _THINK.sub(" ", text)
        if _THINK_OPEN.search(stripped):
            return Parsed(None, False, text, "an unclosed <think> block: no answer after it")
        closing = list(_THINK_CLOSE.finditer(stripped))
        if closing:  # some chat templates eat the opening tag: the answer follows the last close
            stripped = stripped[closing[-1].end() :]
        salvages.append("think_stripped")
        return stripped
    return text


def _unfence(text: str, salvages: list[str]) -> str | Parsed:
    if "```" not in text:
        return text
    blocks = [b.strip() for b in _FENCE.findall(text)]
    if len(set(blocks)) > 1:
        return Parsed(None, False, text, f"{len(blocks)} different fenced blocks")
    if not blocks:
        return Parsed(None, False, text, "an unclosed fenced block")
    salvages.append("fenced")
    return str(blocks[0])


def _prepare(text: str | None) -> tuple[str, list[str]] | Parsed:
    raw = text or ""
    if not raw.strip():
        return Parsed(None, False, raw, "empty reply")
    if len(raw) > _MAX_SALVAGE_CHARS:
        return Parsed(None, False, raw, f"reply of {len(raw):,} characters, too long to read")
    salvages: list[str] = []
    step = _strip_thinking(raw, salvages)
    if isinstance(step, Parsed):
        return step
    step = _unfence(step, salvages)
    if isinstance(step, Parsed):
        return step
    if not step.strip():
        return Parsed(None, False, raw, "nothing but reasoning in the reply")
    return step.strip(), salvages


def _no_constant(name: str) -> float:
    msg = f"{name} is not a number JSON allows"
    raise ValueError(msg)


def _json_object(text: str, salvages: list[str]) -> dict[str, Any] | str | None:
    """Return the reply's outermost ``{…}`` object; None when there is none; a str: why not."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    body = text[start : end + 1]
    try:
        value = json.loads(body, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        value = _repaired(body, salvages)
        if value is None:
            return "invalid JSON"
    if not isinstance(value, dict):
        return "JSON that is not an object"
    return value


def _repaired(body: str, salvages: list[str]) -> Any:  # noqa: ANN401 - any JSON value
    no_trailing = re.sub(r",\s*([}\]])", r"\1", body)
    if no_trailing != body:
        try:
            value = json.loads(no_trailing, parse_constant=_no_constant)
        except (ValueError, RecursionError):
            pass
        else:
            salvages.append("trailing_comma")
            return value
    try:  # {'verdict': 'no'} or {"ok": True}: a Python literal, read without running code
        value = ast.literal_eval(no_trailing)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    if not isinstance(value, dict):
        return None
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return None  # sets, bytes, NaN: not a JSON value
    salvages.append("single_quotes")
    return value


def _field(obj: dict[str, Any], names: tuple[str, ...], preferred: str) -> tuple[str, Any] | str:
    lowered = {str(k).lower(): v for k, v in obj.items()}
    if preferred.lower() in lowered:
        return preferred, lowered[preferred.lower()]
    present = [n for n in names if n in lowered]
    if len(present) != 1:
        found = sorted(obj)[:8]
        return f"no single answer field in the JSON object (keys {found})"
    return present[0], lowered[present[0]]


def _json_answer(
    body: str,
    salvages: list[str],
    names: tuple[str, ...],
    field: str,
    *,
    contract_json: bool,
) -> tuple[str, Any, str] | str | None:
    """Return (field, value, the prose around the object) of the reply's JSON answer.

    None: no JSON; a str: why it could not be read. The prose is empty when the reply is
    the object alone; otherwise the caller reads it too, so that an object cannot overrule
    the sentence it sits in (``No. {"verdict": "yes"}`` contradicts itself).
    """
    obj = _json_object(body, salvages) if "{" in body else None
    if isinstance(obj, str):
        return obj if body.lstrip().startswith("{") else None
    if obj is None:
        return None
    got = _field(obj, names, field)
    if isinstance(got, str):
        return got
    if not contract_json or got[0] != field:
        salvages.append("json_field")
    prose = (body[: body.find("{")] + " " + body[body.rfind("}") + 1 :]).strip()
    if prose:
        salvages.append("json_in_text")
    return got[0], got[1], prose


def _word_map(
    classes: Mapping[str, Any], passing: object, salvages_ok: bool
) -> dict[str, tuple[str, bool]]:
    """Word → (class word, read through a synonym)."""
    words = {str(c).lower(): (str(c).lower(), False) for c in classes}
    if not salvages_ok or len(words) != 2:
        return words
    affirm = [w for w in words if w in _AFFIRM]
    deny = [w for w in words if w in _DENY]
    if len(affirm) == 1 and len(deny) == 1:
        for w in _AFFIRM:
            words.setdefault(w, (affirm[0], True))
        for w in _DENY:
            words.setdefault(w, (deny[0], True))
    if passing is not None:
        lookup = {str(c).lower(): v for c, v in classes.items()}
        good = [w for w, v in lookup.items() if v == passing]
        bad = [w for w, v in lookup.items() if v != passing]
        if len(good) == 1 and len(bad) == 1:
            for w in _PASS_WORDS:
                words.setdefault(w, (good[0], True))
            for w in _FAIL_WORDS:
                words.setdefault(w, (bad[0], True))
    return words


def read_verdict(
    text: str | None,
    classes: Mapping[str, Any],
    *,
    passing: object = None,
    field: str = "verdict",
    contract_json: bool = False,
    salvage: bool = True,
) -> Parsed:
    """Read a verdict: one of ``classes`` (reply word → value).

    Parameters
    ----------
    text
        The judge's reply.
    classes
        The class words the prompt offers, mapped to their values.
    passing
        The value that means *pass*, so that ``pass``/``fail`` can be read (None: never).
    field
        The JSON field the contract asks for.
    contract_json
        The reply was constrained to a JSON object: its field is not a salvage.
    salvage
        False reads only the exact contract (a bare class word, or the field).

    Returns
    -------
    Parsed
        ``value`` the class's value, ``salvages`` the salvages used; or a parse failure
        with the reason.
    """
    prepared = _prepare(text)
    if isinstance(prepared, Parsed):
        return prepared
    body, salvages = prepared
    raw = text or ""
    words = _word_map(classes, passing, salvage)
    answer = _json_answer(body, salvages, _VERDICT_FIELDS, field, contract_json=contract_json)
    if isinstance(answer, str):
        return Parsed(None, False, raw, answer)
    prose = ""
    if answer is not None:
        name, value, prose = answer
        if isinstance(value, bool):
            value = "true" if value else "false"
        if not isinstance(value, str | int | float):
            return Parsed(None, False, raw, f"field {name!r} holds {type(value).__name__}")
        body = str(value).strip()
    if not salvage:
        exact = body.strip().rstrip(".!").strip().lower()
        if exact in words and not salvages:
            return Parsed(classes_value(classes, words[exact][0]), True, raw)
        return Parsed(None, False, raw, f"{body[:40]!r} is not exactly a class word")
    plain = _MARKS.sub(" ", body)
    if plain.split() != body.split():
        salvages.append("markdown")
    unprefixed = _PREFIX.sub("", plain, count=1)
    if unprefixed != plain:
        salvages.append("prefixed")
    found = class_word_verdict(unprefixed, words, salvages)
    if isinstance(found, str):
        return Parsed(None, False, raw, found)
    word, through_synonym = found
    if prose:
        around = class_word_verdict(_PREFIX.sub("", _MARKS.sub(" ", prose), count=1), words, [])
        if isinstance(around, tuple) and around[0] != word:
            return Parsed(
                None,
                False,
                raw,
                f"reply contradicts itself: its text reads {around[0]!r}, its JSON {word!r}",
            )
    if through_synonym:
        salvages.append("synonym")
    return Parsed(classes_value(classes, word), True, raw, salvages=tuple(salvages))


def classes_value(classes: Mapping[str, Any], word: str) -> Any:  # noqa: ANN401
    """Return the value of class ``word`` (matched without regard to case)."""
    for c, v in classes.items():
        if str(c).lower() == word:
            return v
    msg = f"{word!r} is not one of the classes {list(classes)}"
    raise KeyError(msg)


def _number(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str) and re.fullmatch(r"\s*-?\d+(?:\.\d+)?\s*", value):
        return float(value)
    return None


def read_score(
    text: str | None,
    low: float,
    high: float,
    *,
    field: str = "score",
    contract_json: bool = False,
    salvage: bool = True,
) -> Parsed:
    """Read one score in ``[low, high]``; outside it, or several candidates, is a failure."""
    prepared = _prepare(text)
    if isinstance(prepared, Parsed):
        return prepared
    body, salvages = prepared
    raw = text or ""
    value: float | None = None
    answer = _json_answer(body, salvages, _SCORE_FIELDS, field, contract_json=contract_json)
    if isinstance(answer, str):
        return Parsed(None, False, raw, answer)
    if answer is not None:
        name, found, prose = answer
        value = _number(found)
        if value is None:
            return Parsed(None, False, raw, f"field {name!r} is not a number: {str(found)[:40]!r}")
        around = _score_in_text(prose, low, high, []) if prose else None
        if isinstance(around, float) and around != value:
            return Parsed(
                None,
                False,
                raw,
                f"reply contradicts itself: its text reads {around:g}, its JSON {value:g}",
            )
    elif re.fullmatch(r"-?\d+(?:\.\d+)?\.?", body):
        value = float(body.rstrip("."))
    elif not salvage:
        return Parsed(None, False, raw, "not a bare number")
    else:
        got_value = _score_in_text(body, low, high, salvages)
        if isinstance(got_value, str):
            return Parsed(None, False, raw, got_value)
        value = got_value
    if not low <= value <= high:
        return Parsed(None, False, raw, f"score {value:g} outside {low:g}…{high:g}")
    return Parsed(value, True, raw, salvages=tuple(salvages))


def _vulgar_fractions(text: str) -> str | None:
    """Write ``7½`` as ``7.5``; None when a fraction has no exact decimal (``7⅓``)."""

    def decimal(match: re.Match[str]) -> str:
        whole = int(match[1]) if match[1] else 0
        return f"{whole + unicodedata.numeric(match[2]):g}"

    if _INEXACT_FRACTION.search(text):
        return None
    return _FRACTION.sub(decimal, text)


def _score_in_text(body: str, low: float, high: float, salvages: list[str]) -> float | str:
    """Read the one score of a sentence; a labelled score (``Score: 8``) wins over counts."""
    plain = _MARKS.sub(" ", body)
    if plain.split() != body.split():
        salvages.append("markdown")
    exact = _vulgar_fractions(plain)
    if exact is None:
        return "a fraction with no exact decimal value (such as ⅓): no score the scale can hold"
    plain = exact
    scale = re.compile(
        rf"(?:(?:on\s+)?a\s+scale\s+(?:of|from)\s+|from\s+|between\s+|range\s+(?:of\s+)?)?"
        rf"\(?{_num(low)}\s*(?:to|-|–|and)\s*{_num(high)}\)?",
        re.I,
    )
    unscaled = scale.sub(" ", plain)
    if unscaled != plain:
        salvages.append("scale_restated")
    labelled = _LABELLED.findall(unscaled)
    if labelled:
        # "2 out of 10 facts are wrong. Score: 8": the count is prose, the label the score.
        out_of = {d for _, d in labelled if d and float(d) != high}
        if out_of:
            return f"a score out of {sorted(out_of)[0]}, the scale is {low:g}…{high:g}"
        values = {float(n) for n, _ in labelled}
        if len(values) != 1:
            return f"several labelled scores {sorted(values)}"
        salvages.append("number_in_text")
        return values.pop()
    ratios = _OUT_OF.findall(unscaled)
    if ratios:
        wanted = {float(n) for n, d in ratios if float(d) == high}
        others = {d for _, d in ratios if float(d) != high}
        if others:
            return f"a score out of {sorted(others)[0]}, the scale is {low:g}…{high:g}"
        if len(wanted) != 1:
            return f"several scores {sorted(wanted)}"
        salvages.append("number_in_text")
        return wanted.pop()
    numbers = {float(n) for n in _NUMBER.findall(unscaled)}
    if not numbers:
        return "no number"
    if len(numbers) > 1:
        return f"several numbers {sorted(numbers)[:5]}"
    if _PREFIX.match(unscaled):
        salvages.append("prefixed")
    salvages.append("number_in_text")
    return numbers.pop()


def _num(x: float) -> str:
    text = f"{x:g}"
    return re.escape(text) + (r"(?:\.0+)?" if "." not in text else "")


def read_object(text: str | None, schema: Mapping[str, Any] | None = None) -> Parsed:
    """Read the reply's JSON object (salvaged as above) and check it against ``schema``."""
    prepared = _prepare(text)
    if isinstance(prepared, Parsed):
        return prepared
    body, salvages = prepared
    raw = text or ""
    obj = _json_object(body, salvages)
    if obj is None:
        return Parsed(None, False, raw, "no JSON object")
    if isinstance(obj, str):
        return Parsed(None, False, raw, obj)
    if schema is not None:
        from evalnb.llm.parsed import schema_errors  # noqa: PLC0415 - jsonschema on demand

        problem = schema_errors(obj, dict(schema))
        if problem:
            return Parsed(None, False, raw, problem)
    stripped = body.strip()
    if not (stripped.startswith("{") and stripped.endswith("}")):
        salvages.append("json_in_text")
    return Parsed(obj, True, raw, salvages=tuple(salvages))
