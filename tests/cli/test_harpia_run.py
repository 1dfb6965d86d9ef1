"""`evalnb harpia`: HarpIA's headless metric run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sacrebleu

from evalnb.cli.main import main

_DOC = {
    "instances": [
        {
            "id": "1",
            "input": "Eu gosto de gatos.",
            "actual-output": "I like cats.",
            "expected-output": ["I adore cats.", "I like cats."],
        },
        {
            "id": "2",
            "input": "Está chovendo.",
            "actual-output": "It rains now.",
            "expected-output": ["It is raining."],
        },
    ],
    "metrics": [
        {"id": "bleu", "enable": True, "parameters": {"smooth_method": "floor", "sacrebleu": True}},
        {"id": "rouge", "enable": True, "parameters": {"use_stemmer": False}},
        {"id": "answer_similarity", "enable": False, "parameters": {}},
    ],
}


def _run(tmp_path: Path, doc: object) -> tuple[int, Path, Path]:
    src = tmp_path / "in.json"
    src.write_text(json.dumps(doc))
    out, log = tmp_path / "out.json", tmp_path / "log.jsonl"
    return main(["harpia", str(src), "-o", str(out), "--log", str(log)]), out, log


def test_outputs_and_log(tmp_path: Path) -> None:
    code, out, log = _run(tmp_path, _DOC)
    assert code == 0
    outputs = json.loads(out.read_text())
    assert [o["metric"] for o in outputs] == ["bleu", "rouge"]  # the disabled one is skipped
    bleu = outputs[0]
    assert bleu["parameters"] == {"smooth_method": "floor", "sacrebleu": True}
    assert bleu["elapsed time"] >= 0
    per_instance = [
        sacrebleu.sentence_bleu(
            i["actual-output"], i["expected-output"], smooth_method="floor"
        ).score
        / 100
        for i in _DOC["instances"]  # type: ignore[index]
    ]
    assert bleu["score"]["sacrebleu"] == pytest.approx(sum(per_instance) / 2)
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    assert len(lines) == 4
    assert lines[0]["instance_id"] == "1"
    assert lines[0]["result"]["bleu_1"] == 1.0  # best of the two references


@pytest.mark.parametrize(
    ("metric", "pattern"),
    [
        ({"id": "bertscore-x", "enable": True}, "unknown evaluator 'bertscore-x'"),
        (
            {"id": "bleu", "enable": True, "parameters": {"smooth_method": "magic"}},
            "must be one of",
        ),
    ],
)
def test_bad_metric_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], metric: dict[str, object], pattern: str
) -> None:
    doc = dict(_DOC, metrics=[_DOC["metrics"][0], metric])  # type: ignore[index]
    code, out, log = _run(tmp_path, doc)
    assert code == 2
    assert pattern in capsys.readouterr().err
    assert not out.exists()
    assert not log.exists()
