"""Only the metrics asked for are computed (issue 60): ``evaluate(..., metrics={id: [...]})``."""

from __future__ import annotations

import polars as pl
import pytest

import evalnb
from evalnb.evaluation.catalog import get_evaluator


def _lab() -> evalnb.Lab:
    frame = pl.DataFrame(
        {
            "prompt": [f"q{i}" for i in range(5)],
            "expected": [[f"the answer is {i} apples"] for i in range(4)] + [[]],
            "actual": ["the answer is 0 apples", "an answer: 1 apple", "no idea", "4", "x"],
        }
    )
    return evalnb.evaluate(evalnb.load(frame), ["rouge"], progress=False)


def _values(lab: evalnb.Lab, metric: str) -> list[float | None]:
    return lab.scores.filter(pl.col("metric") == metric).sort("case_id")["value"].to_list()


def test_asked_metrics_alone_are_stored_and_equal_the_full_run() -> None:
    full = evalnb.evaluate(_lab(), ["bleu"], progress=False, sacrebleu=True)
    only = evalnb.evaluate(_lab(), ["bleu"], progress=False, metrics={"bleu": ["sacrebleu"]})
    assert set(only.scores.filter(pl.col("evaluator") == "bleu")["metric"]) == {"sacrebleu"}
    assert _values(only, "sacrebleu") == _values(full, "sacrebleu")
    chrf = evalnb.evaluate(_lab(), ["bleu"], progress=False, bleu={"metrics": ["chrf"]})
    assert set(chrf.scores.filter(pl.col("evaluator") == "bleu")["metric"]) == {"chrf"}
    assert _values(chrf, "chrf") == _values(full, "chrf")
    # the default output is what the docs promise: H2O's four, sacrebleu's two when asked
    plain = evalnb.evaluate(_lab(), ["bleu"], progress=False)
    assert set(plain.scores.filter(pl.col("evaluator") == "bleu")["metric"]) == {
        f"bleu_{n}" for n in range(1, 5)
    }
    assert len(set(full.scores.filter(pl.col("evaluator") == "bleu")["metric"])) == 6


def test_unasked_kernels_do_not_run(monkeypatch: pytest.MonkeyPatch) -> None:
    from evalnb.evaluation.families.text import bleu as bleu_module

    def refuse(*_: object) -> object:
        raise AssertionError("chrF ran although only sacrebleu was asked for")

    monkeypatch.setattr(bleu_module, "_chrf_scores", refuse)
    evalnb.evaluate(_lab(), ["bleu"], progress=False, metrics={"bleu": ["sacrebleu"]})
    assert get_evaluator("bleu").kernels({"metrics": ("sacrebleu",)}) == {"sacrebleu"}


def test_asking_for_more_later_rescores_and_unknown_names_are_refused() -> None:
    some = evalnb.evaluate(_lab(), ["bleu"], progress=False, metrics={"bleu": ["bleu_1"]})
    more = evalnb.evaluate(some, ["bleu"], progress=False)  # every default metric now
    assert set(more.scores.filter(pl.col("evaluator") == "bleu")["metric"]) == {
        f"bleu_{n}" for n in range(1, 5)
    }
    with pytest.raises(ValueError, match=r"bleu: metrics names some of its metrics"):
        evalnb.evaluate(_lab(), ["bleu"], progress=False, metrics={"bleu": ["bleu_9"]})
    with pytest.raises(ValueError, match="not among the evaluators run"):
        evalnb.evaluate(_lab(), ["bleu"], progress=False, metrics={"rouge": ["rouge_l"]})
