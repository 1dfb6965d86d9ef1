"""H2O test suites and test labs: every reference file imports, round-trips and re-exports."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import evalnb
from evalnb_testkit.paths import SHARED, needs_shared

# file → (format, cases, models, outputs); counts checked by hand against the JSON.
EXPECTED = {
    "ci_llm_test_suite.json": ("h2o_suite", 3, 0, 0),
    "ci_rag_test_suite-no-OR-constraints.json": ("h2o_suite", 3, 0, 0),
    "sr1107_test_suite_small.json": ("h2o_suite", 3, 0, 0),
    # 200 questions, but two of the first model's rows carry another expected output.
    "class_multi_test_lab.json": ("h2o_lab", 202, 3, 600),
    "doc_text_matching_regexps.json": ("h2o_lab", 11, 1, 11),
    "dummy_stereotype_test_lab_small.json": ("h2o_lab", 7, 2, 7),
    # one prompt appears twice with expected 'good' and 'bad': two cases.
    "dummy_summarization_test_lab_small.json": ("h2o_lab", 6, 2, 6),
    "dummy_translation_test_lab_small.json": ("h2o_lab", 3, 2, 6),
    "pii_test_lab.json": ("h2o_lab", 8, 14, 112),
    "sensitive_data_test_lab.json": ("h2o_lab", 8, 14, 112),
}


@needs_shared
def test_every_reference_file_is_known() -> None:
    assert sorted(p.name for p in SHARED.glob("*.json")) == sorted(EXPECTED)


@needs_shared
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_import_counts(name: str) -> None:
    fmt, n_cases, n_models, n_outputs = EXPECTED[name]
    path = SHARED / name
    assert evalnb.detect_format(path) == fmt
    lab = evalnb.load(path)
    assert (lab.cases.height, len(lab.models), lab.outputs.height) == (
        n_cases,
        n_models,
        n_outputs,
    )
    assert lab.cases["case_id"].is_unique().all()
    assert lab.outputs.select("case_id", "model", "sample").is_unique().all()
    assert set(lab.outputs["case_id"]) <= set(lab.cases["case_id"])


@needs_shared
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_save_open_and_export_round_trip(name: str, tmp_path: Path) -> None:
    lab = evalnb.load(SHARED / name)
    reopened = evalnb.open(lab.save(tmp_path / "lab.duckdb"))
    for table in evalnb.TABLES:
        assert_frame_equal(reopened.table(table), lab.table(table))
    again = evalnb.load(lab.export(tmp_path / "lab.json"))
    # A suite exported as a lab is a conversion: its `info` says h2o_lab afterwards.
    tables = ["cases", "outputs", "models"] + (["info"] if EXPECTED[name][0] == "h2o_lab" else [])
    for table in tables:
        assert_frame_equal(again.table(table), lab.table(table))


@needs_shared
@pytest.mark.parametrize("name", sorted(n for n, e in EXPECTED.items() if e[0] == "h2o_suite"))
def test_a_suite_exports_as_a_suite(name: str, tmp_path: Path) -> None:
    lab = evalnb.load(SHARED / name)
    path = lab.export(tmp_path / "suite.json", format="h2o_suite")
    original = json.loads((SHARED / name).read_text(encoding="utf-8"))
    written = json.loads(path.read_text(encoding="utf-8"))
    # a test with no key gets the id the importer gave it
    keys = [t.get("key", f"test-{i}") for i, t in enumerate(original["tests"])]
    assert [t["key"] for t in written["tests"]] == keys
    assert [len(t["test_cases"]) for t in written["tests"]] == [
        len(t["test_cases"]) for t in original["tests"]
    ]
    again = evalnb.load(path)
    # the whole case table comes back, and so does the suite's own metadata
    assert_frame_equal(again.cases, lab.cases)
    assert again.info == lab.info


@needs_shared
def test_suite_fields() -> None:
    lab = evalnb.load(SHARED / "ci_rag_test_suite-no-OR-constraints.json")
    first = lab.cases.row(0, named=True)
    assert first["case_id"] == "d981bf23-9790-4c5e-905e-2ab56cba7ece"
    assert first["test_id"] == "da503caf-a2dc-4c0a-b5f7-618bebd7860d"
    assert json.loads(first["constraints"]) == ["REGEXP:15?,969 [Mm]illion"]
    assert first["expected"] == ["Brazil revenue was 15,969 million."]
    assert first["corpus"][0].endswith("Coca-Cola-FEMSA-Results-1Q23-vf-2.pdf")
    assert lab.cases["test_id"].n_unique() == 2


@needs_shared
def test_lab_fields_conditions_and_internal_errors() -> None:
    lab = evalnb.load(SHARED / "doc_text_matching_regexps.json")
    assert lab.cases["condition"].null_count() == 0
    assert lab.cases["case_id"][0] == "e807b41e-873f-441c-8db2-ef085081b435"
    assert lab.outputs["duration_s"].null_count() == 0
    extra = lab.info["extra"]
    assert isinstance(extra, dict)
    assert "docs_cache" in extra  # unknown top-level keys are kept
    pii = evalnb.load(SHARED / "pii_test_lab.json")
    errors = pii.outputs.filter(pl.col("error").is_not_null())
    assert errors.height > 0
    assert errors["actual"].str.starts_with("INTERNAL ERROR").all()
    assert pii.model_table["key"].n_unique() == 14


def _perturbed_lab(tmp_path: Path) -> Path:
    base = {
        "input": "What is 2+2?",
        "expected_output": "4",
        "actual_output": "4",
        "model_key": "m1",
        "categories": ["qa"],
        "key": "orig",
    }
    perturbed = dict(
        base,
        input="What is 2+2 ?",
        key="pert",
        categories=[
            "qa",
            "perturbed",
            "perturbed_by:h2o_sonar.utils.perturbations.CommaPerturbator:low",
        ],
        relationships=[
            {"type": "perturbation_source", "target": "orig", "target_type": "test_case"}
        ],
        my_field={"x": 1},
    )
    doc = {
        "name": "p",
        "dataset": {"inputs": [base, perturbed]},
        "models": [{"key": "m1", "name": "M1", "llm_model_name": "m-one"}],
        "custom": 1,
    }
    path = tmp_path / "perturbed.json"
    path.write_text(json.dumps(doc))
    return path


def test_relationships_map_to_perturbation_of(tmp_path: Path) -> None:
    lab = evalnb.load(_perturbed_lab(tmp_path))
    pert = lab.cases.filter(pl.col("case_id") == "pert").row(0, named=True)
    assert pert["perturbation_of"] == "orig"
    assert pert["perturbation"] == "h2o_sonar.utils.perturbations.CommaPerturbator"
    assert pert["perturbation_intensity"] == "low"
    assert lab.models == ["m-one"]
    out = lab.outputs.filter(pl.col("case_id") == "pert").row(0, named=True)
    assert json.loads(out["extra"]) == {"my_field": {"x": 1}}
    assert lab.info["extra"] == {"custom": 1}
    again = evalnb.load(lab.export(tmp_path / "again.json"))
    for table in ("cases", "outputs", "models", "info"):
        assert_frame_equal(again.table(table), lab.table(table))
