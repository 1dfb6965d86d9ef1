"""Judges that see the media (issue 76): the request a judge's server receives carries the
image bytes, the probe learns whether the server takes images, and ``media=`` decides what
happens where it does not."""

from __future__ import annotations

import base64
import hashlib
import io
import json
from typing import TYPE_CHECKING

import polars as pl
import pytest
from PIL import Image

import evalnb
from evalnb.evaluation.engine import NothingScoredWarning
from evalnb.media.policy import MediaPolicy
from evalnb_testkit import media_samples as ms
from evalnb_testkit.llm_server import LoopbackLLM

if TYPE_CHECKING:
    from pathlib import Path

RED = ms.png((220, 20, 20), (16, 12))


def image_lab(tmp_path: Path) -> evalnb.Lab:
    (tmp_path / "red.png").write_bytes(RED)
    (tmp_path / "blue.png").write_bytes(ms.png((20, 20, 220)))
    frame = pl.DataFrame(
        {
            "prompt": ["Which colour is the square?", "Which colour is the square?"],
            "image": [str(tmp_path / "red.png"), str(tmp_path / "blue.png")],
            "actual": ["red", "red"],
            "context": [["a square"], ["a square"]],
        }
    )
    return evalnb.load(frame)


def colour_of(url: str) -> str:
    data = base64.b64decode(url.split(",", 1)[1])
    with Image.open(io.BytesIO(data)) as img:
        r, _, b = img.convert("RGB").getpixel((3, 1))
    return "red" if r > b else "blue"


def seeing_judge(prompt: str, media: list[str]) -> str:
    """Says faithful only when the answer names the colour it sees."""
    seen = colour_of(media[0]) if media else None
    answer = prompt.rsplit("[ANSWER]\n", 1)[-1].split("\n", 1)[0].strip()
    return json.dumps({"faithful": seen == answer})


def test_the_judge_receives_the_image_bytes_and_grades_what_it_sees(tmp_path: Path) -> None:
    lab = image_lab(tmp_path)
    with LoopbackLLM(seeing=seeing_judge) as server:
        judge = evalnb.LLMClient(base_url=server.base_url, model="vlm", cache=tmp_path / "c.duckdb")
        out = evalnb.evaluate(lab, ["multimodal_faithfulness"], judge=judge, progress=False)
        assert judge.capabilities().images is True
        sent = [u for call in server.media_seen for u in call]
    scores = out.scores.sort("case_id")
    by_image = dict(
        zip(
            out.table("cases")["case_id"],
            [m[0] for m in out.table("cases")["media"].to_list()],
            strict=True,
        )
    )
    red_id = hashlib.sha256(RED).hexdigest()
    for row in scores.iter_rows(named=True):
        detail = json.loads(row["detail"])
        assert detail["media"]["sent"] == [by_image[row["case_id"]]]
        assert detail["fingerprint"]["media"] == MediaPolicy().name
        assert row["value"] == (1.0 if by_image[row["case_id"]] == red_id else 0.0)
    # the very bytes kept (small images go unresized)
    assert any(base64.b64decode(u.split(",", 1)[1]) == RED for u in sent)


def test_a_text_only_server_auto_judges_text_and_says_so_required_refuses(tmp_path: Path) -> None:
    lab = image_lab(tmp_path)
    with LoopbackLLM(lambda _p: '{"faithful": true}', vision=False) as server:
        judge = evalnb.LLMClient(
            base_url=server.base_url, model="text", cache=tmp_path / "c.duckdb"
        )
        auto = evalnb.evaluate(lab, ["multimodal_faithfulness"], judge=judge, progress=False)
        assert judge.capabilities().images is False
        assert "refused an image part" in judge.capabilities().notes["images"]
        assert server.media_seen == []
        with pytest.warns(NothingScoredWarning, match="never judges a text shadow"):
            strict = evalnb.evaluate(
                lab, ["multimodal_faithfulness"], judge=judge, progress=False, media="required"
            )
    for row in auto.scores.iter_rows(named=True):
        detail = json.loads(row["detail"])
        assert row["value"] == 1.0
        assert detail["media"]["sent"] == []
        assert "takes no images" in next(iter(detail["media"]["left_out"].values()))
        assert "media" not in detail["fingerprint"]
    mine = strict.scores.filter(pl.col("params").str.contains('"media": "required"'))
    assert mine.height == 2
    for row in mine.iter_rows(named=True):
        assert row["value"] is None
        assert "never judges a text shadow" in json.loads(row["detail"])["reason"]


def test_media_none_withholds_and_a_text_lab_keeps_its_scoring_key(tmp_path: Path) -> None:
    lab = image_lab(tmp_path)
    with LoopbackLLM(seeing=seeing_judge) as server:
        judge = evalnb.LLMClient(base_url=server.base_url, model="vlm", cache=tmp_path / "c.duckdb")
        out = evalnb.evaluate(
            lab, ["multimodal_faithfulness"], judge=judge, progress=False, media="none"
        )
        assert server.media_seen == []
        plain = evalnb.load(pl.DataFrame({"prompt": ["q"], "actual": ["a"], "context": [["c"]]}))
        text = evalnb.evaluate(plain, ["multimodal_faithfulness"], judge=judge, progress=False)
    detail = json.loads(out.scores["detail"][0])
    assert detail["media"]["left_out"]
    # at its default the media parameter stays out of the key: text labs keep their scores
    assert '"media"' not in text.scores["params"][0]
    assert "media" not in json.loads(text.scores["detail"][0])


def test_large_images_are_resized_by_the_stated_rule() -> None:
    big = ms.png((5, 200, 5), (3000, 1500))
    item = {
        "media_id": "x",
        "kind": "image",
        "mime": "image/png",
        "data": big,
        "width": 3000,
        "height": 1500,
    }
    prepared = MediaPolicy(max_side=512).prepare([item])
    url = prepared.parts[0]["image_url"]["url"]
    assert url.startswith("data:image/jpeg;base64,")
    with Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))) as img:
        assert img.size == (512, 256)
    video = {"media_id": "v", "kind": "video", "mime": "video/mp4", "data": b"...", "status": "ok"}
    cut = {
        "media_id": "c",
        "kind": "image",
        "mime": "image/png",
        "status": "unavailable",
        "reason": "cut",
    }
    left = MediaPolicy().prepare([video, cut]).left_out
    assert "not sent to judges" in left["v"]
    assert left["c"] == "cut"


@pytest.mark.parametrize("n", [10])
def test_at_most_max_items_go_with_one_request(n: int) -> None:
    items = [
        {
            "media_id": str(i),
            "kind": "image",
            "mime": "image/png",
            "data": RED,
            "width": 16,
            "height": 12,
        }
        for i in range(n)
    ]
    prepared = MediaPolicy(max_items=8).prepare(items)
    assert len(prepared.sent) == 8
    assert set(prepared.left_out) == {"8", "9"}


def card_lab(tmp_path: Path) -> evalnb.Lab:
    """Forty colour questions: half the answers name the colour shown, half the other one.

    Forty, so that no flip at all puts the interval's top under the floor of 0.1."""
    colours = {"red": (220, 20, 20), "blue": (20, 20, 220)}
    rows = []
    for i in range(40):
        shown = "red" if i % 2 else "blue"
        path = tmp_path / f"{i}.png"
        path.write_bytes(ms.png(colours[shown], (16 + i, 12)))
        said = shown if i % 4 < 2 else ("blue" if shown == "red" else "red")
        rows.append(
            {
                "case_id": f"q{i}",
                "prompt": "Which colour is the square?",
                "image": str(path),
                "actual": said,
                "context": ["a square"],
            }
        )
    return evalnb.load(pl.DataFrame(rows))


@pytest.mark.parametrize("looks", [True, False])
def test_the_card_flags_a_judge_that_grades_text_and_not_one_that_looks(
    tmp_path: Path, looks: bool
) -> None:
    lab = card_lab(tmp_path)

    def text_only(prompt: str, media: list[str]) -> str:
        del media
        return json.dumps({"faithful": True})

    with LoopbackLLM(seeing=seeing_judge if looks else text_only) as server:
        judge = evalnb.LLMClient(base_url=server.base_url, model="vlm", cache=tmp_path / "c.duckdb")
        card = lab.judges.card("multimodal_faithfulness", judge=judge, n=40, probes=40, repeats=2)
    rows = card.frame.filter(pl.col("component") == "media")
    assert rows.height == 1
    row = rows.row(0, named=True)
    assert row["measure"] == "verdict flip rate without media"
    if looks:
        assert row["flag"] == "green"
        assert row["estimate"] > 0.3
    else:
        assert row["flag"] == "red"
        assert "grading text" in row["note"]
        assert "grades the text around the images" in card.conclusion


def test_deepevals_statement_judges_count_what_is_not_no(tmp_path: Path) -> None:
    lab = image_lab(tmp_path)

    def statements(prompt: str, media: list[str]) -> str:
        assert media  # the picture went with the question
        key, text = ("statements", "statement") if "[QUESTION]" in prompt else ("claims", "claim")
        verdicts = ["yes", "idk", "no", "no"] if colour_of(media[0]) == "blue" else ["yes"]
        return json.dumps({key: [{text: f"s{i}", "verdict": v} for i, v in enumerate(verdicts)]})

    with LoopbackLLM(seeing=statements) as server:
        judge = evalnb.LLMClient(base_url=server.base_url, model="vlm", cache=tmp_path / "c.duckdb")
        out = evalnb.evaluate(
            lab,
            ["multimodal_answer_relevancy", "multimodal_faithfulness_deepeval"],
            judge=judge,
            progress=False,
        )
    blue = hashlib.sha256(ms.png((20, 20, 220))).hexdigest()
    blue_case = out.cases.filter(pl.col("media").list.first() == blue)["case_id"][0]
    for row in out.scores.iter_rows(named=True):
        assert row["value"] == (0.5 if row["case_id"] == blue_case else 1.0)
