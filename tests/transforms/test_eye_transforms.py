"""Eye transforms and widget state on a hand-built lab (no browser)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest
import traitlets
from polars.testing import assert_frame_equal

import evalnb
from evalnb.transforms import (
    case_detail,
    check_path,
    compare_dots,
    eye_bars,
    eye_dots,
    eye_index,
    eye_nodes,
    score_bins,
)
from evalnb.widgets.arrow import to_ipc
from evalnb_testkit.frames import from_ipc

ROOT = Path(__file__).resolve().parents[2]
ROUGE_L = {"A": [0.9, 0.8, 0.7, 0.6], "B": [0.1, 0.2, 0.3, 0.4]}
ROUGE_1 = {"A": [1.0] * 4, "B": [0.6] * 4}
SENTENCES = json.dumps(
    {
        "sentences": [
            {"text": "Paris.", "groundedness": 0.9},
            {"text": "Rome is big.", "groundedness": 0.1},
        ]
    }
)


def _metric(ev: str, metric: str, domain: str, primary: bool) -> dict[str, object]:
    return {
        "evaluator": ev,
        "metric": metric,
        "domain": domain,
        "title": metric.upper(),
        "description": f"about {metric}",
        "min": 0.0,
        "max": 1.0,
        "higher_is_better": True,
        "default_threshold": 0.5,
        "primary": primary,
    }


def _lab() -> evalnb.Lab:
    cases = pl.DataFrame(
        {
            "case_id": [f"c{i}" for i in range(4)],
            "prompt": [f"question {i}" for i in range(4)],
            "expected": [["Paris."]] * 4,
        }
    )
    outputs = pl.DataFrame(
        [
            {
                "case_id": f"c{i}",
                "model": m,
                "sample": 0,
                "actual": "Paris. Rome is big.",
                "context": ["Paris is in France."],
                "cost": 0.01 * i,
                "duration_s": 1.0 + i,
            }
            for m in "AB"
            for i in range(4)
        ]
    )
    scores = []
    for m in "AB":
        for i in range(4):
            base = {"case_id": f"c{i}", "model": m, "sample": 0, "params": "{}"}
            scores += [
                {
                    **base,
                    "evaluator": "rouge",
                    "metric": "rouge_l",
                    "value": ROUGE_L[m][i],
                    "detail": SENTENCES if (m, i) == ("A", 0) else None,
                },
                {**base, "evaluator": "rouge", "metric": "rouge_1", "value": ROUGE_1[m][i]},
                {**base, "evaluator": "pii_leakage", "metric": "model_passes", "value": 1.0},
            ]
    metrics = pl.DataFrame(
        [
            _metric("rouge", "rouge_l", "summarization", True),
            _metric("rouge", "rouge_1", "summarization", False),
            _metric("pii_leakage", "model_passes", "privacy", True),
        ]
    )
    return evalnb.Lab(
        {"cases": cases, "outputs": outputs, "scores": pl.DataFrame(scores), "metrics": metrics}
    )


def _keys(nodes: pl.DataFrame, ring: int) -> list[str]:
    return nodes.filter(pl.col("ring") == ring)["keys"].list.join("/").to_list()


def test_top_level_rings_status_and_problem_counts() -> None:
    lab = _lab()
    idx = eye_index(lab)
    top = eye_nodes(idx, [])
    assert _keys(top, 1) == ["privacy", "summarization"]  # H2O's domain order
    assert _keys(top, 2) == ["privacy/pii_leakage", "summarization/rouge"]
    by_id = {r["id"]: r for r in top.iter_rows(named=True)}
    assert by_id["1:summarization"]["passed"] is False  # model B's mean ROUGE-L is 0.25 < 0.5
    assert by_id["1:privacy"]["passed"] is True
    found = lab.problems().filter(pl.col("evaluator") == "rouge")
    assert by_id["2:summarization/rouge"]["n_problems"] == found.height >= 1
    assert by_id["2:summarization/rouge"]["severity"] == found["severity"][0]
    privacy = lab.problems().filter(pl.col("evaluator") == "pii_leakage")
    assert by_id["1:privacy"]["n_problems"] == privacy.height  # only "too few test cases"
    assert set(privacy["problem_type"]) <= {"accuracy"}  # H2O types it so


def test_lower_levels_and_centre_bars() -> None:
    idx = eye_index(_lab())
    ev = eye_nodes(idx, ["summarization", "rouge"])
    assert _keys(ev, 1) == ["rouge_1", "rouge_l"]
    assert _keys(ev, 2) == ["rouge_1/A", "rouge_1/B", "rouge_l/A", "rouge_l/B"]
    metric = eye_nodes(idx, ["summarization", "rouge", "rouge_l"])
    inner = metric.filter(pl.col("ring") == 1).select("keys", "label", "value", "passed")
    assert inner.to_dicts() == [
        {"keys": ["A"], "label": "0.750", "value": pytest.approx(0.75), "passed": True},
        {"keys": ["B"], "label": "0.250", "value": pytest.approx(0.25), "passed": False},
    ]
    selected = eye_nodes(idx, ["summarization", "rouge", "rouge_l", "B"])
    assert selected.filter(pl.col("selected"))["keys"].list.join("/").to_list() == ["B", "B"]
    bars = eye_bars(idx, [])  # primary metrics only
    assert sorted(bars.select("group", "model", "value").rows()) == [
        ("MODEL_PASSES", "A", 1.0),
        ("MODEL_PASSES", "B", 1.0),
        ("ROUGE_L", "A", pytest.approx(0.75)),
        ("ROUGE_L", "B", pytest.approx(0.25)),
    ]
    assert eye_bars(idx, ["summarization", "rouge"])["group"].unique().sort().to_list() == [
        "ROUGE_1",
        "ROUGE_L",
    ]


def test_dots_sample_bins_and_compare() -> None:
    idx = eye_index(_lab())
    dots = eye_dots(idx, "rouge", "rouge_l", "A")
    assert dots["value"].to_list() == [0.6, 0.7, 0.8, 0.9]
    assert dots["passed"].to_list() == [True] * 4
    assert eye_dots(idx, "rouge", "rouge_l", "A", max_dots=2)["value"].to_list() == [0.6, 0.8]
    bins = score_bins(idx, "rouge", "rouge_l", "B", n_bins=2)
    assert bins["n"].to_list() == [2, 2] and bins["high"][-1] == 0.4 and bins["n_passed"].sum() == 0
    both = compare_dots(idx, "rouge", "rouge_l", "B", ("rouge", "rouge_1"))
    assert both["other"].to_list() == [0.6] * 4
    with pytest.raises(KeyError, match="no scores"):
        eye_dots(idx, "rouge", "rouge_l", "Z")


def test_case_detail_and_paths() -> None:
    lab = _lab()
    idx = eye_index(lab)
    c = case_detail(lab, idx, "c0", "A", focus=("rouge", "rouge_l"))
    assert c["prompt"] == "question 0" and c["expected"] == ["Paris."]
    assert [m["metric"] for m in c["metrics"]] == ["rouge_l", "rouge_1", "model_passes"]
    assert c["metrics"][0]["value"] == 0.9 and c["metrics"][0]["passed"] is True
    assert c["sentences"]["items"] == [
        {"text": "Paris.", "score": 0.9},
        {"text": "Rome is big.", "score": 0.1},
    ]
    assert c["cost"] == 0.0 and c["duration_s"] == 1.0 and c["context"] == ["Paris is in France."]
    with pytest.raises(KeyError, match="no output of model"):
        case_detail(lab, idx, "c9", "A")
    assert check_path(idx, ["privacy"]) == ["privacy"]
    with pytest.raises(ValueError, match=r"not a domain under \[\]; expected one of \['privacy'"):
        check_path(idx, ["retrieval"])
    with pytest.raises(ValueError, match="at most 4 steps"):
        check_path(idx, ["a"] * 5)


def test_widget_state_follows_path_case_compare_and_thresholds(tmp_path: Path) -> None:
    lab = _lab()
    lab.save(tmp_path / "lab.duckdb")
    w = evalnb.eye(lab)
    idx = eye_index(lab)
    assert_frame_equal(from_ipc(w._nodes), eye_nodes(idx, []))
    w.path = ["summarization", "rouge", "rouge_l", "B"]
    assert_frame_equal(from_ipc(w._dots), eye_dots(idx, "rouge", "rouge_l", "B"))
    assert w._level["threshold"] == 0.5 and w._level["n_total"] == 4
    assert w._level["titles"] == ["Summarization", "ROUGE", "ROUGE_L", "B"]
    w.compare = ["rouge", "rouge_1"]
    assert from_ipc(w._dots)["other"].to_list() == [0.6] * 4
    w.selected_case = {"case_id": "c2", "model": "B"}
    assert w._case is not None and w._case["prompt"] == "question 2"
    assert w.selection()["metric"].to_list() == ["rouge_l", "rouge_1", "model_passes"]
    with pytest.raises(traitlets.TraitError, match="expected one of"):
        w.path = ["nowhere"]
    with pytest.raises(traitlets.TraitError, match="missing"):
        w.selected_case = {"model": "B"}
    with pytest.raises(traitlets.TraitError, match="compare is"):
        w.compare = ["rouge"]
    # Moving to another model drops the comparison and the other model's case.
    w.path = ["summarization", "rouge", "rouge_l", "A"]
    assert w.compare == [] and w.selected_case is None
    # A new threshold redraws the open widget without re-scoring.
    lab.set_threshold("rouge", "rouge_l", 0.2)
    assert w._level["threshold"] == 0.2
    w.path = ["summarization"]
    assert from_ipc(w._nodes).filter(pl.col("id") == "1:rouge")["passed"].to_list() == [True]
    assert evalnb.open(tmp_path / "lab.duckdb").current_thresholds().filter(
        pl.col("metric") == "rouge_l"
    )["threshold"].to_list() == [0.2]
    with pytest.raises(TypeError, match="unknown argument"):
        evalnb.Eye(lab, colour="red")


def test_ipc_round_trip_keeps_types() -> None:
    frame = eye_nodes(eye_index(_lab()), [])
    assert_frame_equal(from_ipc(to_ipc(frame)), frame)


def test_front_end_has_no_network_urls() -> None:
    """No CDN: every bundle and source may name only the SVG namespace."""
    files = [
        *ROOT.joinpath("widgets", "src").glob("*.js"),
        *ROOT.joinpath("evalnb", "static").glob("*.js"),
    ]
    assert any(f.parent.name == "static" and f.name == "eye.js" for f in files), "bundle not built"
    for f in files:
        urls = set(re.findall(r"https?://[^\s\"'`)]+", f.read_text(encoding="utf-8")))
        assert urls <= {"http://www.w3.org/2000/svg"}, (f, urls)


def test_widgets_hand_anywidget_their_bundle_as_a_file() -> None:
    """anywidget reads ``_esm``/``_css`` paths itself, and watches them under ANYWIDGET_HMR=1
    (``npm run dev`` rebuilds them): the hot reload needs a path, not the text."""
    from evalnb.widgets.base import static_file

    for cls, bundle in ((evalnb.Eye, "eye"), (evalnb.Weakness, "weakness")):
        esm, css = cls.__dict__["_esm"], cls.__dict__["_css"]
        assert type(esm).__name__ == type(css).__name__ == "FileContents"
        assert str(esm) == static_file(f"{bundle}.js").read_text(encoding="utf-8")
        assert str(css) == static_file(f"{bundle}.css").read_text(encoding="utf-8")


def test_a_node_with_nothing_scored_is_its_own_state_not_passed() -> None:
    frame = pl.DataFrame(
        {
            "prompt": ["q1", "q2", "q3"],
            "expected": [None, None, None],  # ROUGE has nothing to compare with: unscored
            "actual": ["a", "b", "c"],
            "condition": ['"a"', '"b"', '"x"'],
        }
    )
    with pytest.warns(UserWarning, match="scored none"):
        lab = evalnb.evaluate(evalnb.load(frame), ["rouge", "text_matching"], progress=False)
    idx = eye_index(lab)
    by_id = {r["id"]: r for r in eye_nodes(idx, []).iter_rows(named=True)}
    rouge = next(r for k, r in by_id.items() if k.endswith("/rouge"))
    assert rouge["passed"] is None and rouge["value"] is None
    assert rouge["not_scored"] is not None and "not scored here" in rouge["not_scored"]
    matched = next(r for k, r in by_id.items() if k.endswith("/text_matching"))
    assert matched["passed"] is not None and matched["not_scored"] is None
    source = (ROOT / "widgets" / "src" / "eye.js").read_text()
    assert "url(#ee-hatch)" in source and "d.not_scored" in source  # drawn hatched, explained


def test_a_metric_titled_as_its_evaluator_is_no_doubled_crumb() -> None:
    from evalnb.evaluation.base import unregister
    from evalnb.transforms import path_titles

    @evalnb.evaluator(metrics="polite", title="Polite")
    def polite(rows: pl.DataFrame) -> pl.Series:
        return rows["actual"].str.contains("please").cast(pl.Float64)

    try:
        lab = evalnb.load(pl.DataFrame({"prompt": ["q"], "expected": ["a"], "actual": ["please"]}))
        lab = evalnb.evaluate(lab, [polite], progress=False)
        titles = path_titles(eye_index(lab), ["generation", "polite", "polite"])
    finally:
        unregister("polite")
    assert titles[1:] == ["Polite", "Polite (metric)"]
