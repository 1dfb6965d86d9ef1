"""People see the media (issue 76): the eye's case panel, the labeler's item, the report's
weakest rows and the weakness grid's media axis, each from the lab's media table."""

from __future__ import annotations

import base64
import io
from typing import TYPE_CHECKING

import polars as pl
from PIL import Image

import evalnb
from evalnb.media.access import MAX_PANEL_AUDIO_BYTES, panel_media
from evalnb.transforms.weakness import grid_cells, weakness_index
from evalnb_testkit import media_samples as ms

if TYPE_CHECKING:
    from pathlib import Path


def mixed_lab(tmp_path: Path) -> evalnb.Lab:
    (tmp_path / "big.png").write_bytes(ms.png((200, 10, 10), (900, 300)))
    n = 12
    frame = pl.DataFrame(
        {
            "case_id": [f"c{i}" for i in range(n)],
            "prompt": [f"question {i}" for i in range(n)],
            "media": [
                [str(tmp_path / "big.png")]
                if i % 3 == 0
                else [ms.data_url(ms.wav(), "audio/wav")]
                if i % 3 == 1
                else []
                for i in range(n)
            ],
            "expected": [["red"]] * n,
            "actual": ["red" if i % 3 else "blue" for i in range(n)],
        }
    )
    return evalnb.evaluate(evalnb.load(frame), ["ragas_exact_match"], progress=False)


def test_panels_get_small_thumbnails_and_playable_audio_made_here(tmp_path: Path) -> None:
    lab = mixed_lab(tmp_path)
    case = lab.cases.filter(pl.col("case_id") == "c0").row(0, named=True)
    (image,) = panel_media(lab, [("case", case["media"])])
    assert image["width"] == 900
    mime, payload = image["src"].split(";base64,")
    with Image.open(io.BytesIO(base64.b64decode(payload))) as thumb:
        assert thumb.size == (160, 53)
    assert mime == "data:image/jpeg"
    tone = lab.cases.filter(pl.col("case_id") == "c1")["media"].to_list()[0]
    (audio,) = panel_media(lab, [("case", tone)])
    assert audio["src"].startswith("data:audio/wav;base64,")
    assert MAX_PANEL_AUDIO_BYTES > 4000
    gone = panel_media(lab, [("answer", ["0" * 64])])
    assert gone[0]["kind"] == "missing"


def test_the_eye_and_the_labeler_carry_the_rows_media(tmp_path: Path) -> None:
    from evalnb.transforms.cases import case_detail
    from evalnb.transforms.eye import eye_index

    lab = mixed_lab(tmp_path)
    detail = case_detail(lab, eye_index(lab), "c0", "model")
    assert [m["role"] for m in detail["media"]] == ["case"]
    assert detail["media"][0]["src"].startswith("data:image/")
    labeler = evalnb.labeler(
        lab, "ragas_exact_match", "ragas_exact_match", reviewer="ann", n=12, strategy="random"
    )
    seen = []
    for position in range(12):
        labeler.go(position)
        assert labeler.item is not None
        seen.extend(m["kind"] for m in labeler.item["media"])
    assert sorted(set(seen)) == ["audio", "image"]


def test_the_report_embeds_thumbnails_of_the_weakest_rows(tmp_path: Path) -> None:
    html = mixed_lab(tmp_path).report().html
    assert "class='thumb' src='data:image/jpeg;base64," in html
    assert "http" not in html.split("class='thumb'")[1][:200]


def test_the_weakness_grid_takes_the_media_kind_as_an_axis(tmp_path: Path) -> None:
    lab = mixed_lab(tmp_path)
    idx = weakness_index(
        lab, "ragas_exact_match", "ragas_exact_match", axes=("media", "topic"), min_n=3
    )
    cells = grid_cells(idx).sort("topic")
    kinds = dict(zip(cells["topic"].cast(pl.String), cells["mean"], strict=True))
    assert kinds == {"audio": 1.0, "image": 0.0, "text only": 1.0}
