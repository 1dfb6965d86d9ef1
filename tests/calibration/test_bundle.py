"""The calibration bundle: written checked, read back, applied to another lab or refused."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

import evalnb
from evalnb_testkit.labs import calibrated_lab, synthetic_lab


def test_a_bundle_round_trips_and_sets_the_thresholds_of_another_lab(tmp_path: Path) -> None:
    lab = calibrated_lab()
    path = lab.calibration.export(tmp_path / "cal.json", approved_by="risk-owner", note="<ok>")
    bundle = json.loads(path.read_text())
    assert bundle["format"] == "evalnb.calibration" and bundle["evalnb_version"]
    (m,) = bundle["metrics"]
    assert (m["evaluator"], m["metric"], m["n_labels"]) == ("ev", "score", 40)
    assert m["labels_per_reviewer"] == {"ann": 40} and m["ci"][0] <= m["threshold"] <= m["ci"][1]
    assert m["corrected"][0]["labels_used"] == 40
    assert bundle["approval"]["by"] == "risk-owner" and len(bundle["lab"]["content_hash"]) == 64
    summary = path.with_suffix(".md").read_text()
    assert "Approved by **risk-owner**" in summary and "corrected pass rate" in summary
    other, _ = synthetic_lab(500, seed=9)  # production answers of the same evaluator
    evalnb.load_calibration(path, other)
    spec = other.metric_spec("ev", "score")
    assert spec["threshold"] == pytest.approx(m["threshold"])
    assert (
        other.current_thresholds().filter(pl.col("metric") == "score")["source"].item()
        == "calibrated"
    )
    # The same lab gives the same content hash; another lab another one.
    again = json.loads(lab.calibration.export(tmp_path / "again.json").read_text())
    assert again["lab"]["content_hash"] == bundle["lab"]["content_hash"]
    assert again["approval"] is None


def test_a_mismatched_lab_or_a_broken_file_is_refused_with_what_is_wrong(tmp_path: Path) -> None:
    lab = calibrated_lab()
    path = lab.calibration.export(tmp_path / "cal.json")
    other, _ = synthetic_lab(100, seed=2)
    other = evalnb.Lab(
        {t: other.table(t) for t in ("cases", "outputs")}
        | {
            "scores": other.scores.with_columns(metric=pl.lit("other")),
            "metrics": other.metrics.with_columns(metric=pl.lit("other")),
        }
    )
    with pytest.raises(ValueError, match=r"does not score \[\('ev', 'score'\)\]"):
        evalnb.load_calibration(path, other)
    flipped, _ = synthetic_lab(100, seed=2, higher=False)
    with pytest.raises(ValueError, match="point the other way"):
        evalnb.load_calibration(path, flipped)
    broken = json.loads(path.read_text())
    del broken["metrics"][0]["threshold"]
    (tmp_path / "broken.json").write_text(json.dumps(broken))
    with pytest.raises(
        evalnb.InputError, match=r"broken\.json, \$\.metrics\.0: .*'threshold' is a required"
    ):
        evalnb.load_calibration(tmp_path / "broken.json", lab)
    (tmp_path / "text.json").write_text("{not json")
    with pytest.raises(evalnb.InputError, match=r"text\.json, line 1"):
        evalnb.load_calibration(tmp_path / "text.json", lab)
    fresh, _ = synthetic_lab(100)
    with pytest.raises(ValueError, match="nothing calibrated in this lab"):
        fresh.calibration.export(tmp_path / "none.json")


def test_agreement_reads_as_a_reliability_table_and_a_kappa_interval() -> None:
    lab = calibrated_lab()
    table = lab.calibration.reliability("ev", "score", bins=5)
    assert table["n"].sum() == 40 and table.height == 5
    assert (table["ci_low"] <= table["human_pass_rate"]).all()
    assert (table["human_pass_rate"] <= table["ci_high"]).all()
    rates = table["human_pass_rate"].to_list()
    assert rates[0] == 0.0 and rates[-1] == 1.0  # humans pass by score: a rising line
    cal = lab.calibration.recalibrate("ev", "score", apply=False)
    assert cal.kappa_ci[0] <= cal.kappa_after <= cal.kappa_ci[1] <= 1.0
    assert "κ" in cal.summary() and "CI" in cal.summary()
    spec = lab.calibration.reliability_chart("ev", "score").to_dict()
    assert len(spec["layer"]) == 3  # intervals, line, threshold


def test_the_report_shows_how_the_metric_agrees_with_the_reviewers() -> None:
    lab = calibrated_lab()
    html = lab.report().html
    section = html.split("<h2>Human calibration</h2>", 1)[1].split("<h2>", 1)[0]
    assert "<h3>ev / score</h3>" in section and "Cohen&#x27;s κ" in section
    assert "95 % CI" in section and "<svg" in section and "human_pass_rate" in section
