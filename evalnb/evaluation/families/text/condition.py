"""The text-matching condition language of H2O Eval Studio.

A condition is a boolean expression over quoted substrings and ``regexp("...")`` operands
joined by ``AND``, ``OR`` and ``NOT`` with parentheses, e.g.
``("Rio" OR "rio") AND regexp("15,?969 [Mm]il") AND NOT "Real"``. Tokens are separated by
single spaces, as in H2O. Regular expressions have Python ``re`` syntax; they are bounded in size before they
compile and run under time limits (:mod:`evalnb.text.patterns`), so a user's pattern
cannot hang the process or exhaust its memory.
"""

from __future__ import annotations

from dataclasses import dataclass

import regex

from evalnb.lab.errors import EvalnbError
from evalnb.text.patterns import PatternError, compile_pattern

__all__ = [
    "And",
    "ConditionError",
    "Node",
    "Not",
    "Or",
    "Regexp",
    "Text",
    "constraints_to_condition",
    "parse_condition",
]

_KEYWORDS = {"AND", "OR", "NOT"}
_END = "AND, OR or the end of the condition"
_OPERAND = 'an operand ("...", regexp("...") or "(")'
_CLOSE = "')' (unbalanced parentheses)"
_QUOTE = regex.compile(r"(?<!\\)([\"'])")


class ConditionError(EvalnbError, ValueError):
    """A text-matching condition or constraint list that cannot be parsed."""


@dataclass(frozen=True)
class Text:
    """A quoted operand: true when the (unescaped-as-is) text occurs in the answer."""

    value: str

    def render(self) -> str:
        """Render as in the condition."""
        return f'"{self.value}"'


@dataclass(frozen=True)
class Regexp:
    """A ``regexp("...")`` operand: true when the pattern is found anywhere in the answer."""

    pattern: str

    def render(self) -> str:
        """Render as in the condition."""
        return f'regexp("{self.pattern}")'


@dataclass(frozen=True)
class Not:
    """Negation, ``times`` times over (``NOT NOT x`` is one node, not a chain of them)."""

    operand: Node
    times: int = 1

    def render(self) -> str:
        """Render as in the condition."""
        return "NOT " * self.times + self.operand.render()


@dataclass(frozen=True)
class And:
    """Conjunction of any number of operands (short-circuit, left to right)."""

    operands: tuple[Node, ...]

    def render(self) -> str:
        """Render as in the condition."""
        return " AND ".join(o.render() for o in self.operands)


@dataclass(frozen=True)
class Or:
    """Disjunction of any number of operands (short-circuit, left to right)."""

    operands: tuple[Node, ...]

    def render(self) -> str:
        """Render as in the condition."""
        return " OR ".join(o.render() for o in self.operands)


@dataclass(frozen=True)
class Group:
    """A parenthesised sub-expression."""

    inner: Node

    def render(self) -> str:
        """Render as in the condition."""
        return f"({self.inner.render()})"


@dataclass(frozen=True)
class Empty:
    """The empty condition: always true."""

    def render(self) -> str:
        """Render as in the condition."""
        return ""


Node = Text | Regexp | Not | And | Or | Group | Empty


def _closing_quote(text: str, start: int) -> int:
    """Index of the first ``"`` at or after ``start`` not preceded by a backslash, or -1."""
    i = text.find('"', start)
    while i > 0 and text[i - 1] == "\\":
        i = text.find('"', i + 1)
    return i


def _tokens(condition: str) -> list[tuple[str, str]]:
    """Split into (kind, value) tokens: LP, RP, KW, TEXT, RE."""
    pieces = condition.split(" ") if condition else []
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(pieces):
        piece = pieces[i]
        if piece == "":
            msg = (
                f"condition {condition!r}: empty token at word {i + 1}; expected tokens "
                "separated by single spaces (two spaces in a row, or a leading/trailing space?)"
            )
            raise ConditionError(msg)
        while piece.startswith("("):
            out.append(("LP", "("))
            piece = piece[1:]
        if piece in _KEYWORDS:
            out.append(("KW", piece))
            i += 1
            continue
        kind, prefix = ("RE", 'regexp("') if piece.startswith('regexp("') else ("TEXT", '"')
        if not piece.startswith(prefix):
            msg = (
                f"condition {condition!r}: unexpected token {piece!r}; expected a quoted "
                'string "...", regexp("..."), AND, OR, NOT or parentheses (keywords are '
                "upper case)"
            )
            raise ConditionError(msg)
        # A quoted operand may span several space-separated pieces: join until it closes.
        joined = piece
        end = _closing_quote(joined, len(prefix))
        while end < 0 and i + 1 < len(pieces):
            i += 1
            joined = f"{joined} {pieces[i]}"
            end = _closing_quote(joined, len(prefix))
        if end < 0:
            msg = (
                f"condition {condition!r}: unterminated string starting at {piece!r} "
                "(possibly unpaired quotation marks)"
            )
            raise ConditionError(msg)
        out.append((kind, joined[len(prefix) : end]))
        rest = joined[end + 1 :]
        if kind == "RE":
            if not rest.startswith(")"):
                msg = f"condition {condition!r}: regexp(...) is not closed after {joined!r}"
                raise ConditionError(msg)
            rest = rest[1:]
        if rest.strip(")"):
            msg = (
                f"condition {condition!r}: unexpected text {rest!r} after a quoted operand "
                "(possibly unpaired quotation marks)"
            )
            raise ConditionError(msg)
        out.extend(("RP", ")") for _ in rest)
        i += 1
    return out


# Parentheses nested deeper than this are refused: every other shape (thousands of ANDed or
# ORed terms, long NOT chains) parses into a flat node, so walking a parsed condition never
# goes deeper than about three frames a level of parentheses.
MAX_NESTING = 100


@dataclass
class _Frame:
    """One level of parentheses being parsed: its OR terms, the AND run, pending NOTs."""

    ors: list[Node]
    ands: list[Node]
    nots: int = 0

    def run(self) -> Node:
        """Return the AND run read since the last OR, as one node."""
        return self.ands[0] if len(self.ands) == 1 else And(tuple(self.ands))

    def close(self) -> Node:
        """Return the whole level, as one node."""
        terms = [*self.ors, self.run()]
        return terms[0] if len(terms) == 1 else Or(tuple(terms))


class _Parser:
    """A flat parser with an explicit stack: NOT binds tightest, then AND, then OR.

    No recursion, so a condition's length never meets Python's recursion limit; ANDs and
    ORs in a row become one n-ary node and NOTs in a row one counted node.
    """

    def __init__(self, condition: str) -> None:
        self.condition = condition
        self.tokens = _tokens(condition)
        self.pos = 0

    def _fail(self, expected: str) -> ConditionError:
        token = self.tokens[self.pos] if self.pos < len(self.tokens) else None
        found = "the end of the condition" if token is None else repr(token[1])
        return ConditionError(f"condition {self.condition!r}: expected {expected}, found {found}")

    def _leaf(self, kind: str, value: str) -> Node:
        if kind == "TEXT":
            return Text(value)
        try:
            compile_pattern(value)
        except PatternError as exc:
            msg = f"condition {self.condition!r}: {exc}"
            raise ConditionError(msg) from None
        return Regexp(value)

    def parse(self) -> Node:
        if not self.tokens:
            return Empty()
        stack = [_Frame([], [])]
        operand = True  # what comes next: an operand, or an operator
        for at, (kind, value) in enumerate(self.tokens):
            self.pos = at  # where an error points
            frame = stack[-1]
            if operand:
                if (kind, value) == ("KW", "NOT"):
                    frame.nots += 1
                elif kind in ("TEXT", "RE"):
                    frame.ands.append(_negated(self._leaf(kind, value), frame))
                    operand = False
                elif kind == "LP":
                    if len(stack) > MAX_NESTING:
                        msg = (
                            f"condition {self.condition[:80]!r}...: expected parentheses "
                            f"nested at most {MAX_NESTING} deep, found deeper; flatten it"
                        )
                        raise ConditionError(msg)
                    stack.append(_Frame([], []))
                else:
                    raise self._fail(_OPERAND)
            elif (kind, value) == ("KW", "AND"):
                operand = True
            elif (kind, value) == ("KW", "OR"):
                frame.ors.append(frame.run())
                frame.ands = []
                operand = True
            elif kind == "RP" and len(stack) > 1:
                stack.pop()
                parent = stack[-1]
                parent.ands.append(_negated(Group(frame.close()), parent))
            else:
                raise self._fail(_CLOSE if len(stack) > 1 else _END)
        self.pos = len(self.tokens)
        if operand:
            raise self._fail(_OPERAND)
        if len(stack) > 1:
            raise self._fail(_CLOSE)
        return stack[0].close()


def _negated(node: Node, frame: _Frame) -> Node:
    """``node`` under the NOTs that precede it in ``frame`` (then cleared)."""
    times, frame.nots = frame.nots, 0
    return Not(node, times) if times else node


def parse_condition(condition: str) -> Node:
    """Parse a condition; an empty one is always true.

    Raises
    ------
    ConditionError
        Saying which token is wrong and what was expected there.

    Examples
    --------
    >>> parse_condition('"a" OR "b" AND NOT regexp("c+")').render()
    '"a" OR "b" AND NOT regexp("c+")'
    """
    return _Parser(condition).parse()


def constraints_to_condition(constraints: object) -> str:
    """Turn H2O ``constraints`` into a condition.

    Strings are AND-ed; a list is a parenthesised OR group; ``REGEXP:`` marks a regex.

    Examples
    --------
    >>> constraints_to_condition([["a", "b"], "REGEXP:^c"])
    '("a" OR "b") AND regexp("^c")'
    """
    if not isinstance(constraints, list):
        msg = f"constraints must be a list of strings or lists of strings, got {constraints!r}"
        raise ConditionError(msg)
    parts: list[str] = []
    for item in constraints:
        if isinstance(item, str):
            parts.append(_operand(item))
        elif isinstance(item, list) and all(isinstance(x, str) for x in item):
            parts.append("(" + " OR ".join(_operand(x) for x in item) + ")")
        else:
            msg = f"a constraint must be a string or a list of strings, got {item!r}"
            raise ConditionError(msg)
    return " AND ".join(parts)


def _operand(text: str) -> str:
    if text.startswith("REGEXP:"):
        return f'regexp("{text[len("REGEXP:") :]}")'
    # A quote inside the text would end the operand: escape it so the parser keeps it whole.
    escaped: str = _QUOTE.sub(r"\\\1", text)
    return f'"{escaped}"'
