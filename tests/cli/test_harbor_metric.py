"""`evalnb metric`: Harbor's metric protocol."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from evalnb.cli.harbor_metric import harbor_metrics
from evalnb.cli.main import main


def _run(tmp_path: Path, text: str, *extra: str) -> tuple[int, Path]:
    src = tmp_path / "rewards.jsonl"
    src.write_text(text)
    out = tmp_path / "metrics.json"
    return main(["metric", "-i", str(src), "-o", str(out), *extra]), out


def test_default_mean_counts_null_as_zero(tmp_path: Path) -> None:
    code, out = _run(tmp_path, '{"reward": 1}\nnull\n{"reward": 0.5}\n{"r": null}\n')
    assert code == 0
    assert json.loads(out.read_text()) == {"mean": 0.375}


def test_empty_file_gives_zero_mean_like_harbor(tmp_path: Path) -> None:
    code, out = _run(tmp_path, "")
    assert code == 0
    assert json.loads(out.read_text()) == {"mean": 0.0}


def test_more_than_one_key_is_an_error_naming_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = _run(tmp_path, '{"reward": 1}\n{"a": 1, "b": 0}\n')
    assert code == 2
    assert "line 2" in capsys.readouterr().err
    assert not out.exists()  # nothing written


def test_aggregates_ci_and_custom(tmp_path: Path) -> None:
    plugin = tmp_path / "my_agg.py"
    plugin.write_text("def top(values):\n    return {'best': max(values), 'n': len(values)}\n")
    sys.path.insert(0, str(tmp_path))
    try:
        code, out = _run(
            tmp_path,
            "".join(f'{{"reward": {v}}}\n' for v in [1, 0, 1, 1, 0, 1, 1, 1]),
            "--aggregate",
            "mean,pass_rate,count,my_agg:top",
            "--ci",
            "0.9",
            "--seed",
            "3",
        )
    finally:
        sys.path.remove(str(tmp_path))
    assert code == 0
    got = json.loads(out.read_text())
    assert got["mean"] == got["pass_rate"] == 0.75
    assert got["count"] == 8
    assert got["best"] == 1.0
    assert got["n"] == 8
    assert got["mean_ci_low"] <= 0.75 <= got["mean_ci_high"]
    assert "count_ci_low" not in got


def test_unknown_aggregate() -> None:
    with pytest.raises(ValueError, match="unknown aggregate 'avg'"):
        harbor_metrics([1.0], ["avg"])


def test_entry_point(tmp_path: Path) -> None:
    src = tmp_path / "r.jsonl"
    src.write_text('{"reward": 0.25}\n')
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "evalnb.cli.main",
            "metric",
            "-i",
            str(src),
            "-o",
            str(tmp_path / "o.json"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "o.json").read_text()) == {"mean": 0.25}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--ci", "5"], "--ci is a confidence level strictly between 0 and 1"),
        (["--ci", "-1"], "--ci is a confidence level strictly between 0 and 1"),
        (["--ci", "0.9", "--resamples", "0"], "--resamples is how many bootstrap resamples"),
        (["--pass-threshold", "inf"], "--pass-threshold must be a finite number"),
    ],
)
def test_bad_options_exit_2_and_write_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    src = tmp_path / "r.jsonl"
    src.write_text('{"r": 1}\n{"r": 0}\n')
    out = tmp_path / "o.json"
    assert main(["metric", "-i", str(src), "-o", str(out), *args]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def infinite(rewards: list[float]) -> float:
    return float("inf") if rewards else 0.0


def test_non_finite_numbers_are_errors_not_invalid_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "r.jsonl"
    out = tmp_path / "o.json"
    src.write_text('{"r": 1}\n{"r": NaN}\n')
    assert main(["metric", "-i", str(src), "-o", str(out)]) == 2
    assert "line 2: field 'r': expected a finite number" in capsys.readouterr().err
    src.write_text('{"r": 1}\n')
    aggregate = "test_harbor_metric:infinite"
    assert main(["metric", "-i", str(src), "-o", str(out), "--aggregate", aggregate]) == 2
    assert "are not finite numbers" in capsys.readouterr().err
    assert not out.exists()
