"""Your own evaluator in ten lines (issue 56): the docs page runs, and the decorated function
is an evaluator end to end — evaluate, eye, labels and recalibration, bundle, monitor."""

from __future__ import annotations

import json
import re
import sys
import textwrap
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl
import pytest

import evalnb
from evalnb.evaluation import catalog
from evalnb.evaluation.base import registered, unregister
from evalnb.lab.errors import InputError
from evalnb.transforms import eye_index, eye_nodes

if TYPE_CHECKING:
    from collections.abc import Iterator

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "workflows" / "own-evaluator.md"
_FENCE = re.compile(r"^```python\n(.*?)^```$", re.DOTALL | re.MULTILINE)


@pytest.fixture(autouse=True)
def _forget_user_evaluators() -> Iterator[None]:
    """The catalog as it was: other tests list every evaluator and expect the built-ins."""
    before = set(catalog.all_evaluators())
    yield
    for name in set(registered()) - before:
        unregister(name)


def _lab(n: int = 40) -> evalnb.Lab:
    return evalnb.load(
        pl.DataFrame(
            {
                "prompt": [f"q{i}" for i in range(n)],
                "expected": [f"{i} apples" for i in range(n)],
                "actual": [("please, " if i % 3 else "") + f"{i} apples" for i in range(n)],
                "model": ["a" if i % 2 else "b" for i in range(n)],
            }
        )
    )


def test_the_docs_page_runs_both_ways_as_written() -> None:
    namespace: dict[str, object] = {"__name__": "__main__"}
    for code in _FENCE.findall(PAGE.read_text(encoding="utf-8")):
        exec(compile(code, str(PAGE), "exec"), namespace)
    lab = namespace["lab"]
    assert isinstance(lab, evalnb.Lab)
    got = {
        m: lab.scores.filter(pl.col("metric") == m).sort("case_id")["value"].to_list()
        for m in ("cites_a_figure", "polite", "words")
    }
    assert sorted(v for v in got["cites_a_figure"] if v is not None) == [0.0, 1.0]
    assert got["cites_a_figure"].count(None) == 1  # nothing to cite: unscored, with a reason
    assert sorted(got["polite"]) == [0.0, 0.0, 0.0] and len(got["words"]) == 3


def test_a_decorated_function_goes_everywhere_an_evaluator_goes(tmp_path: Path) -> None:
    @evalnb.evaluator(metrics="says_please", threshold=0.5)
    def says_please(rows: pl.DataFrame) -> pl.Series:
        return rows["actual"].str.contains("(?i)please").cast(pl.Float64)

    lab = evalnb.evaluate(_lab(), [says_please], progress=False)
    assert says_please.version.startswith("src-")
    assert not says_please.local_only  # an importable module's: Ray workers can import it
    assert "says_please" in evalnb.evaluators()["id"].to_list()
    nodes = eye_nodes(eye_index(lab), [])
    assert any(k[-1] == "says_please" for k in nodes["keys"].to_list())
    for row in lab.metric_scores("says_please", "says_please").iter_rows(named=True):
        verdict = "pass" if row["value"] == 1.0 else "fail"
        lab.calibration.add_label(
            row["case_id"], row["model"], "says_please", "says_please", verdict, reviewer="ann"
        )
    fit = lab.calibration.recalibrate("says_please", "says_please", n_boot=50)
    assert fit.kappa_after == 1.0
    path = lab.calibration.export(tmp_path / "bundle.json", approved_by="risk", accepted=0.5)
    bundle = json.loads(Path(path).read_text())
    (record,) = [e for e in bundle["evaluators"] if e["id"] == "says_please"]
    assert record["version"] == says_please.version
    evalnb.monitor(bundle, tmp_path / "m.duckdb")  # the same function: accepted

    @evalnb.evaluator(metrics="says_please", threshold=0.5)
    def says_please(rows: pl.DataFrame) -> pl.Series:
        return rows["actual"].str.contains("(?i)please|thanks").cast(pl.Float64)

    assert registered()["says_please"] is says_please  # the new definition replaced the old
    with pytest.raises(InputError, match=r"says_please at version src-"):
        evalnb.monitor(bundle, tmp_path / "m2.duckdb")  # scores would differ: refused


def test_what_a_function_returns_is_checked_and_named() -> None:
    @evalnb.evaluator(metrics="short")
    def short(rows: pl.DataFrame) -> list[float]:
        return [1.0]  # one value for forty rows

    with pytest.raises(ValueError, match=r"'short'.*1 value\(s\) of short for 40 rows"):
        evalnb.evaluate(_lab(), ["short"], progress=False)

    @evalnb.evaluator(metrics=["a", "b"])
    def two(rows: pl.DataFrame) -> pl.DataFrame:
        return pl.DataFrame({"a": [0.5] * rows.height})

    with pytest.raises(ValueError, match=r"without the column\(s\) \['b'\]"):
        evalnb.evaluate(_lab(), ["two"], progress=False)

    @evalnb.evaluator(metrics="big")
    def big(rows: pl.DataFrame) -> pl.Series:
        return pl.Series([7.0] * rows.height)

    with pytest.raises(ValueError, match="outside its value_range"):
        evalnb.evaluate(_lab(), ["big"], progress=False)

    @evalnb.evaluator(metrics="boom", per_row=True)
    def boom(row: dict[str, object]) -> float:
        raise KeyError("no such column")

    with pytest.raises(KeyError) as caught:
        evalnb.evaluate(_lab(), ["boom"], progress=False)
    assert any("evaluator 'boom'" in note for note in caught.value.__notes__)
    with pytest.raises(ValueError, match="an evaluator id is lower case"):
        evalnb.evaluator(metrics="x")(lambda rows: rows)  # a lambda has no usable name
    with pytest.raises(ValueError, match="built-in evaluator's id"):

        @evalnb.evaluator(metrics="rouge_l")
        def rouge(rows: pl.DataFrame) -> pl.Series:
            return rows["actual"].str.len_chars()


def test_the_catalog_finds_every_family_module_and_installed_entry_points(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    catalog.all_evaluators()
    families = ROOT / "evalnb" / "evaluation" / "families"
    for path in families.rglob("*.py"):
        if "@register" in path.read_text(encoding="utf-8"):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            assert name in sys.modules, f"{name} registers evaluators the catalog never imports"
    # A package installed with an entry point: found without being imported by hand.
    (tmp_path / "acme_metrics.py").write_text(
        textwrap.dedent(
            """
            import evalnb, polars as pl

            @evalnb.evaluator(metrics="acme_len", value_range=(0, 1e9))
            def acme_len(rows: pl.DataFrame) -> pl.Series:
                return rows["actual"].str.len_chars().cast(pl.Float64)
            """
        )
    )
    (tmp_path / "broken_metrics.py").write_text("raise RuntimeError('a plug-in bug')\n")
    info = tmp_path / "acme_metrics-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-metrics\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[evalnb.evaluators]\nacme = acme_metrics\nbroken = broken_metrics\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    catalog._load_catalog.cache_clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        found = catalog.all_evaluators()
    assert "acme_len" in found
    assert any("broken_metrics" in str(w.message) for w in caught)


def test_an_infinite_value_is_stored_null_with_the_reason() -> None:
    @evalnb.evaluator(metrics="ratio")
    def ratio(rows: pl.DataFrame) -> list[float]:
        return [
            float("inf") if i == 0 else (float("-inf") if i == 1 else 0.5)
            for i in range(rows.height)
        ]

    lab = evalnb.evaluate(_lab(), [ratio], progress=False)
    values = lab.scores.sort("case_id")["value"]
    assert values.null_count() == 2 and values.drop_nulls().to_list() == [0.5] * 38
    reasons = lab.scores.filter(pl.col("value").is_null())["detail"].to_list()
    assert all("not a finite number" in json.loads(r)["reason"] for r in reasons)
    board = lab.leaderboard()
    assert board.filter(pl.col("evaluator") == "ratio")["mean"].is_finite().all()


def test_a_redefined_function_rescores_instead_of_keeping_the_old_scores() -> None:
    @evalnb.evaluator(metrics="says_please")
    def says_please(rows: pl.DataFrame) -> pl.Series:
        return rows["actual"].str.contains("(?i)please").cast(pl.Float64)

    first = evalnb.evaluate(_lab(), [says_please], progress=False)
    assert first.scores["value"].sum() > 0

    @evalnb.evaluator(metrics="says_please")
    def says_please(rows: pl.DataFrame) -> pl.Series:
        return pl.Series([0.0] * rows.height)

    again = evalnb.evaluate(first, [says_please], progress=False)
    assert again.scores["value"].sum() == 0 and again.scores.height == first.scores.height
    assert json.loads(again.scores["params"][0])["@version"] == says_please.version


def test_a_version_changes_with_constants_and_helpers_it_reads() -> None:
    from evalnb.evaluation.custom import source_version

    def make(limit: int) -> object:
        return eval("lambda rows: rows > " + str(limit))  # no source to read: its byte code

    assert source_version(make(5)) != source_version(make(50))  # type: ignore[arg-type]
    scope: dict[str, object] = {"__name__": "user_module"}
    exec(
        "LIMIT = 5\ndef helper(x):\n    return x > LIMIT\ndef f(rows):\n    return helper(rows)",
        scope,
    )
    before = source_version(scope["f"])  # type: ignore[arg-type]
    scope["LIMIT"] = 50
    assert source_version(scope["f"]) != before  # type: ignore[arg-type]
    exec("def helper(x):\n    return x < LIMIT", scope)
    assert source_version(scope["f"]) not in (before,)  # type: ignore[arg-type]


def test_a_function_that_grows_its_input_in_place_stores_one_score_per_answer() -> None:
    @evalnb.evaluator(metrics="grown")
    def grown(rows: pl.DataFrame) -> pl.Series:
        rows.insert_column(rows.width, pl.Series("value", [9.0] * rows.height))
        return pl.Series([1.0] * rows.height)

    lab = evalnb.evaluate(_lab(), [grown], progress=False)
    assert lab.scores.height == 40 and lab.scores["value"].to_list() == [1.0] * 40
