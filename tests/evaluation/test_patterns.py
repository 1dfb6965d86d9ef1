"""User-supplied regexes: bounded before they compile, and in time while they search."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import textwrap

import polars as pl
import pytest

import evalnb
from evalnb.evaluation.families.text.condition import ConditionError, parse_condition
from evalnb.evaluation.families.text.condition_match import match_conditions
from evalnb.text.patterns import PatternError, SearchBudget, check_pattern, pattern_cost

_SLOW = r"^(\w+\s?)*$"  # backtracks exponentially on a long word followed by "!"


@pytest.mark.parametrize(
    ("pattern", "cost"),
    [
        ("abc", 3),
        ("a{3}b", 4),
        ("(ab){2,5}", 10),
        ("((a{10}){10}){10}", 1000),
        ("[{]{5}", 5),
        ("a{,3}", 3),
        (r"\d{4}[ -]?\d{4}", 9),
        ("x{", 2),
        ("(a|bc){4}", 12),
    ],
)
def test_pattern_cost_counts_unrolled_atoms(pattern: str, cost: int) -> None:
    assert pattern_cost(pattern) == cost


@pytest.mark.parametrize("pattern", ["a{4294967294}", "(a{1000}){1000}", "x" * 5000])
def test_huge_patterns_are_refused_before_compiling(pattern: str) -> None:
    with pytest.raises(PatternError, match="expected"):
        check_pattern(pattern)
    with pytest.raises(ConditionError, match=r"regexp .*expected"):
        parse_condition(f'"a" AND regexp("{pattern}")')


def test_huge_repeat_fails_fast_under_a_memory_limit() -> None:
    # The pattern that once compiled until 24 GB were gone: refused within 1 GB more memory.
    code = textwrap.dedent(
        """
        import resource, sys
        import polars as pl
        import evalnb
        lab = evalnb.load(pl.DataFrame({"prompt": ["p"], "actual": ["aaa"],
                                        "condition": ['regexp("a{4294967294}")']}))
        evalnb.evaluate(lab, ["bleu"], progress=False)  # every library loaded and warm
        with open("/proc/self/status") as status:
            kb = next(int(l.split()[1]) for l in status if l.startswith("VmSize:"))
        limit = kb * 1024 + (1 << 30)  # 1 GB more address space than already mapped
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        scores = evalnb.evaluate(lab, ["text_matching"], progress=False).scores
        print(scores["value"].to_list(), scores["detail"][0])
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    # the row is not scored, and says why (an invalid condition is a row's problem, not the run's)
    assert done.stdout.startswith("[None, None, None, None, None]"), done.stdout
    assert "4294967294" in done.stdout
    assert resource.getrlimit(resource.RLIMIT_AS)[0] == resource.RLIM_INFINITY  # parent untouched


def test_run_budget_stops_searching_and_says_why() -> None:
    budget = SearchBudget(per_search_s=0.05, per_run_s=0.2)
    texts = [f"{'a' * 40_000}{i}!" for i in range(20)]
    result = match_conditions(texts, [f'regexp("{_SLOW}")'] * 20, budget=budget)
    assert result.ok == [None] * 20
    assert budget.spent_s < 0.2 + 0.05 * 2  # the last search is cut to what was left
    assert "longer than 0.05 s" in str(result.error[0])
    assert "time budget of 0.2 s" in str(result.error[-1])


def test_text_matching_budget_is_per_run_and_unscored_rows_explain_why() -> None:
    n = 12
    lab = evalnb.load(
        pl.DataFrame(
            {
                "prompt": [str(i) for i in range(n)],
                "actual": [f"{'a' * 40_000}{i}!" for i in range(n)],
                "condition": [f'regexp("{_SLOW}")'] * n,
            }
        )
    )
    # At most three 0.05 s searches fit in 0.12 s, so the budget is the commonest reason the
    # warning gives, however loaded the machine.
    with pytest.warns(evalnb.NothingScoredWarning, match="time budget of 0.12 s"):
        scored = evalnb.evaluate(
            lab, ["text_matching"], progress=False, regex_timeout_s=0.05, regex_run_budget_s=0.12
        ).scores
    passes = scored.filter(pl.col("metric") == "model_passes")
    assert passes["value"].null_count() == n
    reasons = [json.loads(d)["reason"] for d in passes["detail"]]
    assert any("time budget of 0.12 s" in r for r in reasons)


def test_json_schema_patterns_are_bounded_too() -> None:
    schema = {
        "type": "object",
        "patternProperties": {_SLOW: {"type": "string"}},
        "additionalProperties": False,
    }
    frame = pl.DataFrame(
        {
            "prompt": ["a", "b", "c"],
            "actual": ['{"ok": "x"}', json.dumps({"a" * 40_000 + "!": "x"}), '{"no-way": 1}'],
        }
    )
    scored = evalnb.evaluate(
        evalnb.load(frame),
        ["json_schema_validity"],
        progress=False,
        json_schema=json.dumps(schema),
        regex_timeout_s=0.05,
    ).scores
    passes = scored.filter(pl.col("metric") == "model_passes")
    assert passes["value"].to_list() == [1.0, None, 0.0]
    message = json.loads(passes["detail"][2])["message"]
    assert "'no-way' does not match any of the regexes" in message
    huge = json.dumps({"type": "string", "pattern": "a{4294967294}"})
    with pytest.raises(ValueError, match="4294967294"):
        evalnb.evaluate(
            evalnb.load(frame), ["json_schema_validity"], progress=False, json_schema=huge
        )
