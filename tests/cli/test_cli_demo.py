"""The command line and the demo lab."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

import evalnb
from evalnb.api.demo import build_demo_lab
from evalnb.cli.main import main
from evalnb_testkit.paths import ROOT, SHARED, needs_shared


def test_demo_file_is_what_the_generator_makes(tmp_path: Path) -> None:
    fresh = build_demo_lab().export(tmp_path / "demo.json")
    assert fresh.read_text(encoding="utf-8") == (ROOT / "data" / "demo_lab.json").read_text(
        encoding="utf-8"
    ), "data/demo_lab.json is stale: run `python -m evalnb.api.demo data/demo_lab.json`"


def test_demo_lab_shape() -> None:
    lab = evalnb.load(ROOT / "data" / "demo_lab.json")
    assert lab.cases.height >= 300
    assert len(lab.models) == 3
    assert lab.cases.select("topic", "question_type").n_unique() >= 30
    perturbed = lab.cases.filter(pl.col("perturbation_of").is_not_null())
    assert perturbed.height > 0
    assert set(perturbed["perturbation_of"]) <= set(lab.cases["case_id"])
    assert (lab.outputs["context"].list.len() > 0).all()
    assert lab.outputs["error"].is_not_null().sum() > 0
    assert (lab.outputs["actual"] == "").sum() > 0
    assert lab.outputs["duration_s"].null_count() == 0
    assert lab.outputs["cost"].null_count() == 0


@pytest.mark.slow  # the whole demo: its lab, the embedding model, the report
def test_cli_demo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from evalnb.models.encoder import get_encoder

    get_encoder.cache_clear()  # the demo loads its model here, as in a fresh process
    assert main(["demo", "--out", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    out = captured.out
    assert "Loading weights" not in captured.err  # no model-loading progress bars
    assert "atlas-70b" in out
    assert "answers per model" in out
    assert evalnb.open(tmp_path / "demo_lab.duckdb").outputs.height == 1107
    # The report a newcomer opens: what to look at first, a decision, the judges' place.
    report = (tmp_path / "demo_report.html").read_text(encoding="utf-8")
    assert report.index("Look first") < report.index("<h2>Problems</h2>")
    assert "<h2>Decisions</h2>" in report and "atlas-70b vs breeze-8b" in report
    assert "<h2>Judge reliability</h2>" in report


@needs_shared
def test_cli_import_info_and_atomic_failure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "lab.duckdb"
    assert main(["import", str(SHARED / "pii_test_lab.json"), "--to", str(store)]) == 0
    assert main(["import", str(SHARED / "class_multi_test_lab.json"), "--to", str(store)]) == 0
    lab = evalnb.open(store)
    assert lab.outputs.height == 112 + 600
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"dataset": {"inputs": [{"input": 1}]}}))
    capsys.readouterr()
    assert main(["import", str(bad), "--to", str(store)]) == 2
    err = capsys.readouterr().err
    assert "$.dataset.inputs[0]: field 'input': expected a string, found integer 1" in err
    assert evalnb.open(store).equals(lab)
    # importing the same file again is idempotent: identical rows merge
    assert main(["import", str(SHARED / "pii_test_lab.json"), "--to", str(store)]) == 0
    assert evalnb.open(store).equals(lab)
    assert main(["info", str(store)]) == 0
    info = capsys.readouterr().out
    assert "outputs" in info and "712" in info


def test_cli_generic_mapping_and_entry_point(tmp_path: Path) -> None:
    csv = tmp_path / "t.csv"
    csv.write_text("q,a\nhello?,hi\n")
    store = tmp_path / "t.duckdb"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "evalnb.cli.main",
            "import",
            str(csv),
            "--to",
            str(store),
            "--map",
            "prompt=q",
            "--map",
            "actual=a",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert evalnb.open(store).outputs["actual"].to_list() == ["hi"]
    done = subprocess.run(
        [sys.executable, "-m", "evalnb.cli.main", "import", str(csv), "--to", str(store)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert "prompt column" in done.stderr


def test_cli_version_evaluate_and_catalog(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert (
        done.value.code == 0 and capsys.readouterr().out.strip() == f"evalnb {evalnb.__version__}"
    )
    csv = tmp_path / "answers.csv"
    csv.write_text("question,answer,reference\nWho wrote Hamlet?,Shakespeare did,Shakespeare\n")
    store = tmp_path / "lab.duckdb"
    # A source file needs a store for its scores.
    assert main(["evaluate", str(csv), "-e", "rouge"]) == 2
    assert "pass --to LAB.duckdb" in capsys.readouterr().err
    assert (
        main(
            [
                "evaluate",
                str(csv),
                "--to",
                str(store),
                "-e",
                "rouge",
                "-e",
                "bleu",
                "--set",
                "use_stemmer=true",
            ]
        )
        == 0
    )
    assert "evaluated rouge, bleu" in capsys.readouterr().out
    lab = evalnb.open(store)
    assert set(lab.scores["evaluator"]) == {"rouge", "bleu"}
    assert json.loads(lab.scores.filter(pl.col("evaluator") == "rouge")["params"][0])["use_stemmer"]
    # A store is scored in place; a bad parameter is refused and names it.
    assert main(["evaluate", str(store), "-e", "rouge", "--set", "nope"]) == 2
    assert "--set expects NAME=VALUE, got 'nope'" in capsys.readouterr().err
    assert main(["evaluators"]) == 0
    assert "pii_leakage" in capsys.readouterr().out


def test_cli_info_on_a_source_file_says_what_to_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    csv = tmp_path / "answers.csv"
    csv.write_text("question,answer\nq,a\n")
    assert main(["info", str(csv)]) == 2
    err = capsys.readouterr().err
    assert "is not an evalnb lab store" in err and f"evalnb import {csv} --to LAB.duckdb" in err
    assert "Catalog Error" not in err


def test_every_cli_option_has_help() -> None:
    import argparse

    from evalnb.cli.main import build_parser

    def walk(parser: argparse.ArgumentParser) -> list[str]:
        missing = []
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for child in action.choices.values():
                    missing += walk(child)
            elif action.help is None:
                missing.append(f"{parser.prog}: {action.dest}")
        return missing

    assert walk(build_parser()) == []


@pytest.mark.slow
def test_install_says_what_it_is_doing() -> None:
    """`bash scripts/demo` runs scripts/install first: each step is announced, then the result.

    On an installed checkout (the suite runs in one) every step is quick, so this runs it.
    """
    done = subprocess.run(
        ["bash", "scripts/install"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    steps = [line for line in done.stderr.splitlines() if line.startswith("[install]")]
    said = " / ".join(steps)
    for words in (
        "updating pip",
        "installing torch",
        "installing evalnb with its dependencies",
        "building the notebook widgets",
        "ready in",
    ):
        assert words in said, f"scripts/install never said {words!r}: {said}"
    assert steps[-1].startswith("[install] ready in")
    demo = (ROOT / "scripts" / "demo").read_text(encoding="utf-8")
    assert demo.index("[demo] installing") < demo.index("bash scripts/install")
    assert "source .venv/bin/activate" in demo  # evalnb is not on PATH until then


def test_cli_errors_speak_in_flags_and_name_what_is_wrong(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    several = tmp_path / "answers.csv"
    several.write_text("question,answer,llm,reference\nWhat is 2+2?,4,a,4\nWhat is 2+2?,four,b,4\n")
    store = str(tmp_path / "lab.duckdb")
    assert (
        main(["evaluate", str(several), "--to", store, "-e", "bleu", "--map", "prompt=question"])
        == 2
    )
    err = capsys.readouterr().err
    assert "answers.csv, line 3" in err and "'What is 2+2?'" in err
    assert "--map model=llm" in err and "load(" not in err
    assert not re.search(r"\bc[0-9a-f]{16}\b", err)  # no internal content hash
    assert (
        main(
            [
                "evaluate",
                str(several),
                "--to",
                store,
                "-e",
                "bleu",
                "--map",
                "prompt=question",
                "--map",
                "model=llm",
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert main(["info", store]) == 0
    table = capsys.readouterr().out.split("tables:\n", 1)[1].split("\nmodels:", 1)[0]
    assert len({line.index(" rows") for line in table.splitlines()}) == 1  # one column
    unmapped = tmp_path / "q.csv"
    unmapped.write_text("q,a\nx,y\n")
    assert main(["import", str(unmapped), "--to", str(tmp_path / "q.duckdb")]) == 2
    assert "--map prompt=COLUMN" in capsys.readouterr().err
    named = tmp_path / "lab.json"
    named.write_text("not json at all\n")
    assert main(["import", str(named), "--to", str(tmp_path / "j.duckdb")]) == 2
    err = capsys.readouterr().err
    assert "lab.json, line 1: expected JSON" in err and "prompt column" not in err
