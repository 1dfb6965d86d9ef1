"""The text-matching condition language: lexing, precedence, errors, constraints."""

from __future__ import annotations

import json

import pytest

from evalnb import ConditionError
from evalnb.evaluation.families.text.condition import (
    And,
    Group,
    Not,
    Or,
    Regexp,
    Text,
    constraints_to_condition,
    parse_condition,
)
from evalnb.evaluation.families.text.condition_match import match_conditions
from evalnb.text.patterns import SearchBudget


def test_precedence_not_and_or() -> None:
    a, b, c = Text("a"), Text("b"), Text("c")
    assert parse_condition('"a" OR "b" AND "c"') == Or((a, And((b, c))))
    assert parse_condition('NOT "a" AND "b"') == And((Not(a), b))
    assert parse_condition('"a" AND NOT "b"') == And((a, Not(b)))
    assert parse_condition('("Rio" OR "rio") AND NOT "Real"') == And(
        (Group(Or((Text("Rio"), Text("rio")))), Not(Text("Real")))
    )
    # Runs of one operator are one node; NOTs in a row one counted node.
    assert parse_condition('"a" AND "b" AND "c" OR "a"') == Or((And((a, b, c)), a))
    assert parse_condition('NOT NOT NOT "a"') == Not(a, 3)
    assert parse_condition('NOT ("a" OR NOT "b")') == Not(Group(Or((a, Not(b)))))


@pytest.mark.parametrize(
    ("condition", "text", "holds"),
    [
        (" AND ".join(['"x"'] * 1_500), "x", True),  # 1,500 ANDed terms
        (" AND ".join(['"x"'] * 1_500) + ' AND "y"', "x", False),
        ("NOT " * 5_000 + '"x"', "x", True),  # 5,000 NOTs: an even number cancels out
        ("NOT " * 5_001 + '"x"', "x", False),
        (" OR ".join(f'"w{i}"' for i in range(50_000)), "w49999", True),  # a 50,000-term OR
        ("(" * 100 + '"x"' + ")" * 100, "x", True),  # as deep as allowed
    ],
)
def test_long_conditions_evaluate_without_recursion(condition: str, text: str, holds: bool) -> None:
    result = match_conditions([text], [condition])
    assert result.ok == [holds]
    assert result.error == [None]


def test_parentheses_too_deep_are_a_condition_error_naming_the_limit() -> None:
    with pytest.raises(ConditionError, match="expected parentheses nested at most 100 deep"):
        parse_condition("(" * 3_000 + '"x"' + ")" * 3_000)


def test_thousands_of_constraints_score_every_row() -> None:
    import polars as pl

    import evalnb

    constraints = [f"term{i}" for i in range(2_000)]
    frame = pl.DataFrame(
        {
            "prompt": ["q1", "q2", "q3"],
            "actual": [" ".join(constraints), "term0 only", "x"],
            "constraints": [json.dumps(constraints)] * 2 + [None],
            "condition": [None, None, "(" * 3_000 + '"x"' + ")" * 3_000],
        }
    )
    lab = evalnb.evaluate(evalnb.load(frame), ["text_matching"], progress=False)
    values = lab.scores.filter(pl.col("metric") == lab.scores["metric"][0])
    assert values["value"].to_list()[:2] == [1.0, 0.0]
    # The third row's condition is refused with the reason; the other rows are scored.
    assert values["value"][2] is None and "nested at most 100 deep" in values["detail"][2]


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
