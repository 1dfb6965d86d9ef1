"""Judge replies parsed, with parse failures kept as such, and prompts filled safely.

:func:`fill` fills a template (a custom one may name any field of the row, including a
source's user-defined fields: Tencent rows keep them in ``extra``), neutralising what it
puts in. Parsers return a :class:`Parsed` carrying the raw reply and whether it
could be read: an unreadable reply is a parse failure with no value — never a silent
default score, as the seed's parsers have (0, the minimum, or -1 sentinels).
"""

from __future__ import annotations

import functools
import json
import re
import string
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Parsed",
    "Trusted",
    "fill",
    "neutralise",
    "parse_json",
    "parse_json_schema",
    "parse_words",
    "schema_errors",
]


@dataclass(frozen=True)
class Parsed:
    """A judge reply read into a value; ``ok`` False means a parse failure (``value`` None)."""

    value: Any
    ok: bool
    raw: str
    note: str = ""
    salvages: tuple[str, ...] = ()
    """The salvages the reading needed (:mod:`evalnb.llm.reader`), in the order applied."""
    probability: float | None = None
    """The value read from token probabilities (P(pass), or the expected score), if asked."""


class Trusted(str):
    """Template text evalnb built itself (a section with its header), inserted as it is.

    Everything else :func:`fill` puts into a template is untrusted and neutralised.
    """

    __slots__ = ()


# A line that opens a section as the templates do ("[Reference answer]"), in a value: an
# answer must not open one of its own. Numbered brackets ("[1]") are left alone.
_HEADER = re.compile(r"^([ \t]*)\[(?=[^\]\n]*[A-Za-z])([^\]\n]{1,60})\]", re.M)
_TEMPLATE_TAG = re.compile(r"</?\s*([A-Za-z][\w-]*)[^<>]*>")


def neutralise(text: str, tags: set[str] | frozenset[str] = frozenset()) -> str:
    r"""Return untrusted ``text`` unable to write outside the place a template gives it.

    A line opening a section (``[Reference answer]``) is escaped (``\[Reference answer]``),
    and the template's own tags (``</answer>`` where the template wraps the answer in
    ``<answer>``) are written with angle quotes (``‹/answer›``): the judge reads the same
    words, but no answer can close its block or spoof a section after it.
    """
    out = _HEADER.sub(lambda m: f"{m[1]}\\[{m[2]}]", text)
    for tag in tags:
        out = re.sub(
            rf"<(\s*/?\s*{re.escape(tag)}\b[^<>]*)>",
            lambda m: f"\u2039{m[1]}\u203a",
            out,
            flags=re.I,
        )
    return out


def fill(template: str, fields: dict[str, Any]) -> str:
    """Fill ``{name}`` placeholders from ``fields``; a missing one is an error naming the rest.

    Values are inserted as text once (a brace inside an answer is not a placeholder), and
    every value but :class:`Trusted` text is :func:`neutralised <neutralise>` against the
    template's tags: the answers, questions and contexts filled in are data, never prompt.
    """
    names = {f for _, f, _, _ in string.Formatter().parse(template) if f}
    missing = sorted(names - set(fields))
    if missing:
        msg = (
            f"the prompt template uses {missing}, which this row does not have; available "
            f"fields: {sorted(fields)}"
        )
        raise KeyError(msg)
    tags = {t.lower() for t in _TEMPLATE_TAG.findall(template)}
    return template.format_map(
        {
            k: ""
            if v is None
            else v
            if isinstance(v, Trusted) or not isinstance(v, str)
            else neutralise(v, tags)
            for k, v in fields.items()
        }
    )


def parse_words(text: str | None, classes: dict[str, Any]) -> Parsed:
    """Exactly one distinct class word must occur (whole words, any case), else a failure."""
    raw = text or ""
    found = {w for w in re.findall(r"[a-z]+", raw.lower()) if w in classes}
    if len(found) != 1:
        note = "no class word" if not found else f"several class words {sorted(found)}"
        return Parsed(None, False, raw, note)
    word = found.pop()
    return Parsed(classes[word], True, raw)


def parse_json(text: str | None) -> Parsed:
    """Read the outermost ``{...}`` object of the reply (fenced or not); invalid JSON fails."""
    raw = text or ""
    start, end = raw.find("{"), raw.rfind("}")
    if start < 0 or end <= start:
        return Parsed(None, False, raw, "no JSON object")
    try:
        value = json.loads(raw[start : end + 1], parse_constant=_not_a_number)
    except json.JSONDecodeError as exc:
        return Parsed(None, False, raw, f"invalid JSON: {exc.msg}")
    except (ValueError, RecursionError) as exc:
        return Parsed(None, False, raw, f"invalid JSON: {exc}")
    if not isinstance(value, dict):
        return Parsed(None, False, raw, "JSON is not an object")
    return Parsed(value, True, raw)


def _not_a_number(name: str) -> float:
    # JSON has no NaN or Infinity; Python's reader takes them, and a verdict of NaN would be
    # stored as a missing value that parsed. A reply holding one is not understood.
    msg = f"{name} is not a number JSON allows"
    raise ValueError(msg)


@functools.lru_cache(maxsize=64)
def _validator(schema: str) -> Any:  # noqa: ANN401 - jsonschema's validators are untyped
    from jsonschema import Draft202012Validator  # noqa: PLC0415 - slow import, only when used

    return Draft202012Validator(json.loads(schema))


def parse_json_schema(text: str | None, schema: dict[str, Any]) -> Parsed:
    """Read the reply's JSON object (:func:`parse_json`) and check it against ``schema``.

    A reply that breaks the schema is a parse failure whose ``note`` starts with
    ``schema:`` and names the first place at fault.
    """
    parsed = parse_json(text)
    if not parsed.ok:
        return parsed
    problem = schema_errors(parsed.value, schema)
    if problem:
        return Parsed(None, False, parsed.raw, problem)
    return parsed


def schema_errors(value: object, schema: dict[str, Any]) -> str:
    """Return why ``value`` breaks ``schema`` (``schema: <place>: <message>``), or ``""``."""
    validator = _validator(json.dumps(schema, sort_keys=True))
    errors = sorted(validator.iter_errors(value), key=lambda e: list(e.path))
    if not errors:
        return ""
    where = "/".join(str(p) for p in errors[0].path) or "reply"
    return f"schema: {where}: {errors[0].message[:200]}"
