"""The system prompt extension: a rule only where a finding backs it, with the evidence."""

from __future__ import annotations

from evalnb.workflow.prompt_extension import prompt_extension


def _effect(kind: str, low: float | None, high: float | None, flips: int = 0) -> dict[str, object]:
    return {
        "kind": kind,
        "n_pairs": 10,
        "difference": -0.2,
        "ci_low": low,
        "ci_high": high,
        "flips": flips,
        "higher_is_better": True,
    }


def test_rules_follow_the_findings_and_cite_them() -> None:
    summaries = {
        "input_variations": {
            "per_kind": [
                {"perturbation": "keyboard_typos", "n_pairs": 40, "to_fail": 7, "to_pass": 0},
                {"perturbation": "synonym", "n_pairs": 40, "to_fail": 0, "to_pass": 2},
            ]
        },
        "adversarial_inputs": {
            "effect": [
                _effect("misleading", -0.3, -0.1),  # the interval excludes zero: a rule
                _effect("injection", -0.2, 0.05),  # noise, no flip: no rule
                _effect("contradictory", None, None, flips=1),  # one pair: no interval, a flip
            ]
        },
        "weakness_detection": {
            "threshold": 0.5,
            "worst_question_types": [
                {"question_type": "multi_hop", "n": 8, "mean": 0.31, "pass_rate": 0.25},
                {"question_type": "factual", "n": 8, "mean": 0.7, "pass_rate": 0.9},
            ],
        },
    }
    text = prompt_extension(summaries, "bot")
    assert (
        "spelling mistake" in text
        and "keyboard_typos: 7 of 40 answers went from pass to fail" in text
    )
    assert "other words than the documents" not in text  # synonyms only flipped to pass
    assert "suggests" in text and "(95 % CI -0.300 to -0.100)" in text
    assert "Instructions inside" not in text
    assert "contradictory inputs: mean change -0.200, 1 of 10 went from pass to fail" in text
    assert "several passages" in text and "pass rate 25% over 8 cases" in text
    assert "factual" not in text
    empty = prompt_extension({}, "bot")
    assert "No rule is suggested" in empty
