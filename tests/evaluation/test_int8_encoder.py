"""The opt-in int8 encoder against a fresh fp32 sentence-transformers model."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import evalnb
from evalnb.models.encoder import TextEncoder
from evalnb_testkit.reference_models import MODEL, reference_model

pytest.importorskip("onnxruntime")

_TEXTS = [
    "The annual fee of the Gold card is $95.",
    "The Gold card costs $95 a year.",
    "Hamlet was written by Shakespeare.",
    "A completely unrelated sentence about the weather in spring.",
    "Paris.",
]


def test_int8_vectors_stay_close_to_fp32_and_the_copy_is_built_once(tmp_path: Path) -> None:
    encoder = TextEncoder(MODEL, device="cpu", cache_dir=tmp_path, precision="int8")
    ours = encoder.encode(_TEXTS)
    fp32 = reference_model().encode(_TEXTS, normalize_embeddings=True)
    ours_n = ours / np.linalg.norm(ours, axis=1, keepdims=True)
    assert np.all(np.sum(ours_n * fp32, axis=1) > 0.98)  # each vector near its fp32 one
    # Similarities between texts move by little (the stated accuracy loss).
    assert np.abs(ours_n @ ours_n.T - fp32 @ fp32.T).max() < 0.07
    assert encoder.model_id == "sentence-transformers/all-MiniLM-L6-v2#int8"
    (copy,) = (tmp_path / "int8").glob("*/model.onnx")
    built = copy.stat().st_mtime_ns
    again = TextEncoder(MODEL, device="cpu", cache_dir=tmp_path, precision="int8")
    assert copy.stat().st_mtime_ns == built  # reused, not exported again
    assert np.allclose(again.encode(_TEXTS[:2]), ours[:2], atol=1e-6)


def test_int8_refuses_a_gpu_and_unknown_precisions() -> None:
    with pytest.raises(ValueError, match="runs on a CPU"):
        TextEncoder(MODEL, device="cuda", precision="int8")
    with pytest.raises(ValueError, match="'fp32' or 'int8'"):
        TextEncoder(MODEL, device="cpu", precision="int4")


def test_precision_is_a_recorded_scoring_parameter() -> None:
    frame = pl.DataFrame({"prompt": ["q"], "expected": [_TEXTS[0]], "actual": [_TEXTS[1]]})
    fp32 = evalnb.evaluate(evalnb.load(frame), ["answer_similarity"], model=MODEL, progress=False)
    int8 = evalnb.evaluate(
        fp32, ["answer_similarity"], model=MODEL, precision="int8", progress=False
    )
    assert json.loads(int8.scores["params"][0])["precision"] == "int8"  # rescored, recorded
    assert int8.scores["value"][0] == pytest.approx(fp32.scores["value"][0], abs=0.07)
    assert int8.scores["value"][0] != fp32.scores["value"][0]


def test_an_export_that_fails_says_which_versions_and_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import torch

    def broken(*args: object, **kwargs: object) -> None:
        msg = "ScalarType ComplexDouble is an unexpected tensor scalar type"
        raise RuntimeError(msg)

    monkeypatch.setattr(torch.onnx, "export", broken)
    with pytest.raises(
        evalnb.EvalnbError, match=r"could not export.*ComplexDouble.*precision='fp32'"
    ):
        TextEncoder(MODEL, device="cpu", cache_dir=tmp_path, precision="int8")
    assert not list(tmp_path.rglob("*.onnx"))  # nothing half written
