"""Judge alignment against a real loopback judge whose verdicts follow the examples it is shown."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import evalnb
from evalnb_testkit.llm_server import LoopbackLLM

TEMPLATE = "Grade this answer.\n<<<{ACTUAL_OUTPUT}>>>\nReply true or false."


def _answer(prompt: str) -> str:
    return prompt.rsplit("<<<", 1)[1].split(">>>", 1)[0]


def learning_judge(prompt: str) -> str:
    """Plainly it passes long answers; shown graded examples, it grades as the humans do."""
    answer = _answer(prompt)
    if "[Human reviewers' verdict]" in prompt:
        return "true" if "licence" in answer else "false"
    return "true" if len(answer) > 40 else "false"


def stubborn_judge(prompt: str) -> str:
    """Examples or not, it passes long answers."""
    return "true" if len(_answer(prompt)) > 40 else "false"


def _lab() -> evalnb.Lab:
    rng = np.random.default_rng(0)
    rows = []
    for i in range(40):
        cites = i % 2 == 0  # the humans pass an answer that cites the licence
        pad = " and more words" * int(rng.integers(0, 4))
        rows.append(
            {
                "prompt": f"Question {i}?",
                "expected": "x",
                "actual": (f"Per the licence, item {i}" if cites else f"Item {i} is fine") + pad,
            }
        )
    return evalnb.load(pl.DataFrame(rows))


def _label(lab: evalnb.Lab) -> None:
    for r in lab.outputs.iter_rows(named=True):
        verdict = "pass" if "licence" in r["actual"] else "fail"
        lab.calibration.add_label(
            r["case_id"], r["model"], "byop", "model_passes", verdict, reviewer="ann"
        )


def test_an_aligned_judge_agrees_better_on_held_out_labels_and_can_be_rolled_back(
    tmp_path: Path,
) -> None:
    with LoopbackLLM(learning_judge, whole=True) as server:
        judge = evalnb.LLMClient(server.base_url, "judge", cache=tmp_path / "c.duckdb")
        lab = evalnb.evaluate(
            _lab(), ["byop"], judge=judge, progress=False, prompt_template=TEMPLATE
        )
        _label(lab)
        result = lab.judges.align("byop", "model_passes", judge=judge, folds=4, max_examples=4)
        assert result.kept and result.kappa_after > result.kappa_before + 0.5
        assert result.accuracy_after == 1.0 and result.n_labels == 40
        assert result.confusion_after["n"].sum() == result.confusion_before["n"].sum() == 40
        assert {e["verdict"] for e in result.examples} == {"pass", "fail"}
        versions = lab.judges.versions("byop")
        assert versions.height == 1 and versions["kept"].item()
        assert "[Human reviewers' verdict]" in versions["system_prompt"].item()
        plain = lab.scores.filter(pl.col("metric") == "model_passes")["value"].to_numpy()
        lab = lab.judges.apply_version("byop", result.version_id, judge=judge)
        aligned = (
            lab.verdicts()
            .filter(pl.col("metric") == "model_passes")
            .join(lab.outputs.select("case_id", "actual"), on="case_id")
        )
        assert (aligned["passed"] == aligned["actual"].str.contains("licence")).all()
        calls = server.total_calls
        lab = lab.judges.apply_version("byop", None, judge=judge)  # roll back: from the cache
        assert server.total_calls == calls
        assert np.array_equal(
            lab.scores.filter(pl.col("metric") == "model_passes")["value"].to_numpy(), plain
        )
        report = lab.judges.report().row(0, named=True)  # the judge report carries it too
        assert (
            report["n_labels"] == 40 and report["both_pass"] + report["judge_fail_human_pass"] == 20
        )
        agreement = lab.judges.agreement("byop", "model_passes")  # the confusion matrix
        cells = ("both_pass", "judge_pass_human_fail", "judge_fail_human_pass", "both_fail")
        assert sum(agreement[c] for c in cells) == 40
        assert agreement["both_pass"] + agreement["both_fail"] == round(result.accuracy_before * 40)
        bundle = lab.calibration.export(tmp_path / "judge.json", approved_by="ro")
        (judge_entry,) = json.loads(bundle.read_text())["judges"]
        assert judge_entry["version_id"] == result.version_id and judge_entry["examples"]
        assert "Aligned judge: byop / model_passes" in bundle.with_suffix(".md").read_text()
        production = evalnb.evaluate(
            _lab(), ["byop"], judge=judge, progress=False, prompt_template=TEMPLATE
        )
        evalnb.load_calibration(bundle, production)
        production = production.judges.apply_version("byop", result.version_id, judge=judge)
        moved = production.verdicts().filter(pl.col("metric") == "model_passes")
        moved = moved.join(production.outputs.select("case_id", "actual"), on="case_id")
        assert (moved["passed"] == moved["actual"].str.contains("licence")).all()
        with pytest.raises(KeyError, match="no aligned version"):
            lab.judges.apply_version("byop", "nope", judge=judge)


def test_a_version_that_does_not_help_is_recorded_but_not_kept(tmp_path: Path) -> None:
    with LoopbackLLM(stubborn_judge, whole=True) as server:
        judge = evalnb.LLMClient(server.base_url, "judge", cache=tmp_path / "c.duckdb")
        lab = evalnb.evaluate(
            _lab(), ["byop"], judge=judge, progress=False, prompt_template=TEMPLATE
        )
        _label(lab)
        result = lab.judges.align("byop", "model_passes", judge=judge, folds=4)
        assert not result.kept and result.kappa_after == pytest.approx(result.kappa_before)
        assert "not kept" in result.summary()
        assert lab.judges.versions()["kept"].to_list() == [False]
        few = evalnb.evaluate(
            _lab(), ["byop"], judge=judge, progress=False, prompt_template=TEMPLATE
        )
        with pytest.raises(ValueError, match="needs at least 8 labelled answers"):
            few.judges.align("byop", "model_passes", judge=judge, folds=4)
