"""The text-matching condition language: lexing, precedence, errors, constraints."""

from __future__ import annotations

import pytest

from evalnb import ConditionError
from evalnb.evaluation.condition import (
    And,
    Group,
    Not,
    Or,
    Regexp,
    Text,
    constraints_to_condition,
    parse_condition,
)
from evalnb.evaluation.condition_match import match_conditions
from evalnb.text.patterns import SearchBudget


def test_precedence_not_and_or() -> None:
    assert parse_condition('"a" OR "b" AND "c"') == Or(Text("a"), And(Text("b"), Text("c")))
    assert parse_condition('NOT "a" AND "b"') == And(Not(Text("a")), Text("b"))
    assert parse_condition('"a" AND NOT "b"') == And(Text("a"), Not(Text("b")))
    assert parse_condition('("Rio" OR "rio") AND NOT "Real"') == And(
        Group(Or(Text("Rio"), Text("rio"))), Not(Text("Real"))
    )


def test_quoted_strings_with_spaces_parens_and_escapes() -> None:
    assert parse_condition('"model risk management"') == Text("model risk management")
    assert parse_condition('("a b)")') == Group(Text("a b)"))
    assert parse_condition(r'"say \"hi\""') == Text(r"say \"hi\"")
    assert parse_condition('regexp("15,?969 [Mm]il")') == Regexp("15,?969 [Mm]il")
    assert parse_condition("") is not None


@pytest.mark.parametrize(
    ("condition", "pattern"),
    [
        ('"a"  AND "b"', "empty token"),
        ('"a" and "b"', "unexpected token 'and'"),
        ("15,969", "unexpected token '15,969'"),
        ('"abc', "unpaired quotation marks"),
        ('"a" "b"', "expected AND, OR or the end"),
        ('"a" AND', "expected an operand"),
        ('AND "a"', "expected an operand"),
        ('("a" OR "b"', "unbalanced parentheses"),
        ('"a")', "expected AND, OR or the end"),
        ('regexp("(")', "invalid regexp"),
        ('regexp("a"', "regexp\\(\\.\\.\\.\\) is not closed"),
    ],
)
def test_syntax_errors(condition: str, pattern: str) -> None:
    with pytest.raises(ConditionError, match=pattern):
        parse_condition(condition)


def test_constraints_to_condition() -> None:
    assert constraints_to_condition(["Mexico", "27,229", "million"]) == (
        '"Mexico" AND "27,229" AND "million"'
    )
    assert constraints_to_condition([["a", "b"], "c"]) == '("a" OR "b") AND "c"'
    assert constraints_to_condition(["REGEXP:^A.*"]) == 'regexp("^A.*")'
    assert constraints_to_condition(['say "hi"']) == r'"say \"hi\""'
    with pytest.raises(ConditionError, match="a constraint must be a string"):
        constraints_to_condition([1])


def test_failing_part_reporting() -> None:
    cond = '"conceptual soundness" AND "ongoing monitoring" AND "outcomes analysis"'
    result = match_conditions(["conceptual soundness, Ongoing monitoring"], [cond])
    assert result.ok == [False]
    assert result.failed_part == ['"ongoing monitoring"']
    result = match_conditions(["x"], ['("a" OR "b") AND "x"'])
    assert result.failed_part == ['("a" OR "b")']
    result = match_conditions(["a b"], ['"a" AND NOT "b"'])
    assert result.failed_part == ['NOT "b"']


def test_quoted_constraint_matches_after_unescaping() -> None:
    # H2O never matches a constraint holding a quote (it compares the escaped text); we do.
    cond = constraints_to_condition(['say "hi"'])
    assert match_conditions(['they say "hi" here'], [cond]).ok == [True]


def test_regexp_timeout_gives_no_verdict() -> None:
    slow = r'regexp("^(\w+\s?)*$")'
    result = match_conditions(
        ["a" * 50000 + "!"], [slow], budget=SearchBudget(per_search_s=0.05, per_run_s=10.0)
    )
    assert result.ok == [None]
    assert result.error[0] is not None
    assert "longer than 0.05 s" in result.error[0]


def test_vectorized_groups_match_scalar_semantics() -> None:
    texts = ["alpha beta", "beta", "gamma", "", "Alpha"]
    conds = ['"alpha" AND "beta"', '"beta" AND "beta"', '"x" AND "y"', 'NOT "q"', '"alpha"']
    assert match_conditions(texts, conds).ok == [True, True, False, True, False]
