"""ragas inside evalnb: its datasets in and out, its metrics as evaluators, ours equal to its
own — run where evalnb and ragas both import (tests/ragas_env.py)."""

from __future__ import annotations

from tests.ragas_env import run_with_ragas


def test_ragas_datasets_and_results_load_and_export_back() -> None:
    checked = run_with_ragas("ragas_bridge_data.py")
    assert checked == {
        "files": ["jsonl", "csv"], "round_trip": 3,
        "result_metrics": ["bleu_score", "exact_match", "rouge_score(mode=fmeasure)"],
        "multi_turn_steps": 4,  # user, the call, its result, the answer
    }  # fmt: skip
