"""clip_score on a tiny CLIP built here (issue 76): the cosine transformers computes, CLIPScore's
2.5 · max(cos, 0), the image on the right side of each row, reasons for rows without one."""

from __future__ import annotations

import io
import json
from typing import TYPE_CHECKING

import numpy as np
import polars as pl
import pytest

import evalnb
from evalnb.models.clip import load_clip
from evalnb.models.hf import ModelUnavailable
from evalnb_testkit import media_samples as ms
from evalnb_testkit.tiny_clip import tiny_clip

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def clip_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_clip(tmp_path_factory.mktemp("clip") / "tiny-clip")


def transformers_cosine(folder: Path, images: list[bytes], texts: list[str]) -> np.ndarray:
    import torch
    import transformers
    from PIL import Image

    net = transformers.CLIPModel.from_pretrained(str(folder)).eval()
    proc = transformers.CLIPProcessor.from_pretrained(str(folder))
    pil = [Image.open(io.BytesIO(b)).convert("RGB") for b in images]
    batch = proc(text=texts, images=pil, return_tensors="pt", padding=True)
    with torch.no_grad():
        out = net(**batch)
        return (out.logits_per_image.diag() / net.logit_scale.exp()).numpy()


def test_clip_score_is_hessels_formula_on_transformers_cosine(
    tmp_path: Path, clip_folder: Path
) -> None:
    red, blue = ms.png((220, 20, 20)), ms.jpeg((20, 20, 220))
    (tmp_path / "r.png").write_bytes(red)
    (tmp_path / "b.jpg").write_bytes(blue)
    frame = pl.DataFrame(
        {
            "case_id": ["a", "b", "c", "d"],
            "prompt": ["describe", "describe", "describe", "draw a red square"],
            "image": [str(tmp_path / "r.png"), str(tmp_path / "b.jpg"), None, None],
            "answer_media": [None, None, None, str(tmp_path / "r.png")],
            "actual": ["a red square", "a blue square", "no image here", "here"],
        }
    )
    lab = evalnb.evaluate(
        evalnb.load(frame), ["clip_score"], progress=False, model=str(clip_folder)
    )
    got = {(r["case_id"], r["metric"]): r for r in lab.scores.iter_rows(named=True)}
    cos = transformers_cosine(
        clip_folder, [red, blue, red], ["a red square", "a blue square", "draw a red square"]
    )
    for case, expected in zip(["a", "b", "d"], cos, strict=True):
        assert got[(case, "image_text_similarity")]["value"] == pytest.approx(
            float(expected), abs=1e-5
        )
        assert got[(case, "clip_score")]["value"] == pytest.approx(
            2.5 * max(float(expected), 0), abs=1e-5
        )
    assert got[("c", "clip_score")]["value"] is None
    assert json.loads(got[("c", "clip_score")]["detail"])["reason"] == "the case has no image"


def test_each_distinct_image_is_embedded_once(clip_folder: Path) -> None:
    clip = load_clip(str(clip_folder))
    vectors = clip.images([ms.png(), ms.png(), ms.jpeg()])
    assert vectors.shape[0] == 3
    assert np.array_equal(vectors[0], vectors[1])
    assert np.linalg.norm(vectors, axis=1) == pytest.approx([1, 1, 1], abs=1e-5)


def test_a_model_that_is_not_here_fails_fast_and_says_what_to_pass(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailable, match="could not be loaded"):
        load_clip(str(tmp_path / "no-such-clip"))
    with pytest.raises(ModelUnavailable, match="open_clip"):
        load_clip("open_clip:ViT-B-32:laion2b_s34b_b79k")
