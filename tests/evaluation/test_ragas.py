"""ragas inside evalnb: its datasets in and out, its metrics as evaluators, ours equal to its
own — run where evalnb and ragas both import (evalnb_testkit/ragas_env.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

import evalnb
from evalnb_testkit.ragas_env import run_with_ragas

ROOT = Path(__file__).resolve().parents[2]


def test_ragas_datasets_and_results_load_and_export_back() -> None:
    checked = run_with_ragas("ragas_bridge_data.py")
    assert checked == {
        "files": ["jsonl", "csv"],
        "round_trip": 3,
        "result_metrics": ["bleu_score", "exact_match", "rouge_score(mode=fmeasure)"],
        "multi_turn_steps": 4,  # user, the call, its result, the answer
        "csv_text_and_turns": [2, 8],
    }


def test_ragas_metric_objects_run_as_evaluators_with_their_own_values() -> None:
    checked = run_with_ragas("ragas_bridge_metrics.py")
    assert checked["collections"] == [
        "bleu_score",
        "chrf_score",
        "exact_match",
        "non_llm_string_similarity",
        "rouge_score",
        "string_present",
    ]
    assert checked["restale"] is True
    assert checked["llm"]["failed_row_reason"] == "ragas raised"  # type: ignore[index]
    assert checked["llm"]["values"] == [0.5, 0.0]  # type: ignore[index]


def test_our_vectorised_namesakes_equal_ragas_on_real_sentences() -> None:
    gaps = run_with_ragas("ragas_bridge_native.py", "300")
    # 6 ROUGE, BLEU, chrF, 2 string, 4 distances, 4 + 6 string-context (measures and
    # thresholds) and 2 id-context checks
    assert isinstance(gaps, dict)
    assert len(gaps) == 26
    assert {k: v for k, v in gaps.items() if v > 1e-9} == {}


def test_without_ragas_the_error_names_a_command_that_works() -> None:
    if importlib.util.find_spec("ragas") is not None:
        pytest.skip("ragas is installed here: the message is for environments without it")
    lab = evalnb.load(ROOT / "data" / "demo_lab.json")
    with pytest.raises(ImportError) as caught:
        lab.to_ragas()
    message = str(caught.value)
    assert message.startswith("to_ragas needs ragas")
    # Beside the dev tools the plain hint would break scripts/test: the message says so and
    # gives the environment of its own (its torch pinned first, as scripts/install does).
    assert "rich<14" in message and "python3 -m venv .venv-ragas" in message
    assert "torch==2.13.0" in message and "pip install -e '.[ragas]'" in message
