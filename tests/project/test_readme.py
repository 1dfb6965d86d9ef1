"""Every Python block of the README runs, top to bottom, as a reader would run it.

The blocks share one namespace, as cells of one notebook do, and run in a temporary folder
holding what the README names: ``data/demo_lab.json``, an ``answers.csv``, a ``docs/``
folder of real documents. The chat endpoints it names (``http://localhost:8000/v1`` and
``:8001``) are served by loopback chat servers whose addresses replace them. A block is left
out only where an HTML comment right above it says why (``<!-- readme-test: skip (...) -->``);
the one human step, labelling in the labeler, is done by a scripted reviewer.
"""

from __future__ import annotations

import json
import re
import shutil
import warnings
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pytest

import evalnb
from evalnb_testkit.llm_server import LoopbackLLM

ROOT = Path(__file__).resolve().parents[2]
_FENCE = re.compile(r"^```python\n(.*?)^```$", re.DOTALL | re.MULTILINE)
_SKIP = re.compile(r"<!-- readme-test: skip \((?P<why>[^)]+)\) -->\s*$")
# The only blocks allowed to skip, each for a reason no test machine can meet.
_MAY_SKIP = {"needs a multi-node Ray cluster; tests/evaluation/test_ray_engine.py runs a local one"}


@dataclass(frozen=True)
class Block:
    line: int  # where the code starts in README.md
    code: str
    skip: str | None  # the reason given above it, if any


def readme_blocks(text: str) -> list[Block]:
    """The README's fenced Python blocks, in order, with any skip reason given above them."""
    blocks = []
    for m in _FENCE.finditer(text):
        before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        skip = _SKIP.search(before)
        line = text.count("\n", 0, m.start(1)) + 1
        blocks.append(Block(line, m.group(1), skip.group("why") if skip else None))
    return blocks


def test_the_block_reader_finds_blocks_and_their_skip_reasons() -> None:
    text = (
        "# t\n```python\nx = 1\n```\n<!-- readme-test: skip (no cluster) -->\n```python\ny\n```\n"
    )
    assert readme_blocks(text) == [Block(3, "x = 1\n", None), Block(7, "y\n", "no cluster")]


def _reviewer_labels(lab: evalnb.Lab) -> None:
    """What a reviewer does in the labeler: pass an answer that holds the expected words."""
    rows = lab.calibration.sample("rouge", "rouge_l", n=40, strategy="random")
    for r in rows.iter_rows(named=True):
        expected = set((r["expected"] or [""])[0].lower().split())
        shared = len(expected & set((r["actual"] or "").lower().split()))
        verdict = "pass" if shared >= 0.6 * max(len(expected), 1) else "fail"
        lab.calibration.add_label(
            r["case_id"], r["model"], "rouge", "rouge_l", verdict, reviewer="ann"
        )


def _judge(prompt: str) -> str:
    """A judge that finds one claim of two supported and says yes to a yes/no question."""
    if '"claims"' in prompt:
        return json.dumps(
            {"claims": [{"claim": "a", "supported": True}, {"claim": "b", "supported": False}]}
        )
    return "true"


def _folder(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    shutil.copy(ROOT / "data" / "demo_lab.json", tmp_path / "data" / "demo_lab.json")
    demo = evalnb.load(ROOT / "data" / "demo_lab.json")
    rows = demo.outputs.join(demo.cases, on="case_id").head(30)
    rows.select(question="prompt", answer="actual", llm="model").write_csv(tmp_path / "answers.csv")
    (tmp_path / "docs").mkdir()
    for name in ("Apache-2.0.txt", "MPL-2.0.txt"):
        shutil.copy(ROOT / "data" / "corpus" / name, tmp_path / "docs" / name)


def test_every_python_block_of_the_readme_runs_top_to_bottom(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocks = readme_blocks((ROOT / "README.md").read_text(encoding="utf-8"))
    assert len(blocks) >= 8
    assert {b.skip for b in blocks if b.skip} <= _MAY_SKIP
    _folder(tmp_path)
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "readme"}
    with (
        warnings.catch_warnings(),  # shown to a reader, as they would be; not errors here
        LoopbackLLM(_judge) as judge,
        LoopbackLLM(
            lambda prompt: "The licence allows redistribution.",
            extra=lambda prompt: {"contexts": ["You may redistribute copies."]},
        ) as host,
    ):
        warnings.simplefilter("default")
        urls = {
            "http://localhost:8000/v1": judge.base_url,
            "http://localhost:8001/v1": host.base_url,
        }
        for block in blocks:
            if block.skip:
                continue
            code = block.code
            for named, served in urls.items():
                code = code.replace(named, served)
            if "evalnb.labeler(" in code:
                _reviewer_labels(namespace["lab"])  # type: ignore[arg-type]
            exec(compile(code, f"README.md:{block.line}", "exec"), namespace)
    # What the blocks promise, checked on what they left behind.
    lab, suite = namespace["lab"], namespace["suite"]
    assert isinstance(lab, evalnb.Lab) and isinstance(suite, evalnb.Lab)
    assert (tmp_path / "report.html").is_file() and (tmp_path / "suite.json").is_file()
    assert namespace["report"].path.resolve() == tmp_path / "report.html"  # type: ignore[attr-defined]
    assert (tmp_path / "calibration.json").is_file() and (tmp_path / "handover").is_dir()
    answered = namespace["answered"]
    assert isinstance(answered, evalnb.Lab)
    assert set(answered.outputs["model"]) == {"model-a", "model-b"}
    judged = answered.scores.filter(pl.col("evaluator") == "faithfulness")
    assert judged.height > 0 and judged["value"].is_not_null().all()
