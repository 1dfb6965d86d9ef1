"""Media in labs (issue 76): read from every peer's shape, kept once, persisted, written back.

Each format's example is loaded, its media checked against the bytes that went in (the id is
the sha256), then exported and loaded again: the same case ids, texts and media ids.
"""

from __future__ import annotations

import base64
import hashlib
import json
from typing import TYPE_CHECKING

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import evalnb
from evalnb.media import items
from evalnb.media.items import OPENINFERENCE_CUT, MediaRefused, from_bytes, from_reference
from evalnb_testkit import media_samples as ms

if TYPE_CHECKING:
    from pathlib import Path


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


RED, BLUE = ms.png((220, 20, 20)), ms.jpeg((20, 20, 220))
TONE = ms.wav(0.25)


def chat_records(tmp_path: Path) -> list[dict[str, object]]:
    (tmp_path / "red.png").write_bytes(RED)
    audio = base64.b64encode(TONE).decode()
    return [
        {
            "id": "colour",
            "model": "vlm",
            "messages": [
                {"role": "system", "content": "Answer in one word."},
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "Which colour is this?"},
                        {"type": "image_url", "image_url": {"url": "red.png"}},
                        {
                            "type": "image_url",
                            "image_url": {"url": ms.data_url(BLUE, "image/jpeg")},
                        },
                    ],
                },
                {"role": "assistant", "content": "red and blue"},
            ],
        },
        {
            "id": "tone",
            "model": "vlm",
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "What do you hear?"},
                        {"type": "input_audio", "input_audio": {"data": audio, "format": "wav"}},
                        {"type": "image_url", "image_url": {"url": "red.png"}},
                    ],
                },
                {"role": "assistant", "content": "a tone"},
            ],
        },
    ]


def write_jsonl(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_openai_parts_become_media_once_each_with_what_the_bytes_say(tmp_path: Path) -> None:
    lab = evalnb.load(write_jsonl(tmp_path / "chat.jsonl", chat_records(tmp_path)))
    cases = lab.table("cases").sort("case_id")
    media = lab.table("media")
    assert cases["media"].to_list() == [[sha(RED), sha(BLUE)], [sha(TONE), sha(RED)]]
    assert cases["prompt"].to_list() == ["Which colour is this?", "What do you hear?"]
    assert media.height == 3  # the red image, referred to twice, is kept once
    rows = {r["media_id"]: r for r in media.iter_rows(named=True)}
    assert rows[sha(RED)]["mime"] == "image/png"
    assert (rows[sha(RED)]["width"], rows[sha(RED)]["height"]) == (16, 12)
    assert rows[sha(BLUE)]["kind"] == "image"
    assert rows[sha(BLUE)]["mime"] == "image/jpeg"
    assert rows[sha(TONE)]["kind"] == "audio"
    assert rows[sha(TONE)]["seconds"] == pytest.approx(0.25)
    assert rows[sha(RED)]["data"] == RED
    # another image is another case, though the text is the same
    other = chat_records(tmp_path)[:1]
    other[0]["messages"][1]["content"][1]["image_url"]["url"] = ms.data_url(  # type: ignore[index]
        ms.png((0, 200, 0)), "image/png"
    )
    other[0]["id"] = None
    first = chat_records(tmp_path)[:1]
    first[0]["id"] = None
    both = evalnb.load(write_jsonl(tmp_path / "two.jsonl", first + other))
    assert both.table("cases").height == 2


@pytest.mark.parametrize("fmt", ["agent_chat", "inspect"])
def test_an_export_loads_back_with_the_same_media_and_text(tmp_path: Path, fmt: str) -> None:
    lab = evalnb.load(write_jsonl(tmp_path / "chat.jsonl", chat_records(tmp_path)))
    path = lab.export(tmp_path / ("back.jsonl" if fmt == "agent_chat" else "back.json"), fmt)
    again = evalnb.load(path)
    for table, key in (("cases", ["case_id"]), ("outputs", ["case_id", "model", "sample"])):
        a, b = lab.table(table).sort(key), again.table(table).sort(key)
        cols = ["case_id", "prompt", "media", "system"] if table == "cases" else [*key, "actual"]
        assert a.select(cols).equals(b.select(cols)), table
    # the same rows but where a file was read from (the export carries the bytes)
    kept = lab.table("media").drop("uri").sort("media_id")
    assert again.table("media").drop("uri").sort("media_id").equals(kept)


def test_an_answer_with_an_image_round_trips(tmp_path: Path) -> None:
    drawn = ms.png((10, 160, 10), (20, 20))
    rec = {
        "id": "draw",
        "model": "painter",
        "messages": [
            {"role": "user", "content": "Draw a green square."},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Here it is."},
                    {"type": "image_url", "image_url": {"url": ms.data_url(drawn, "image/png")}},
                ],
            },
        ],
    }
    lab = evalnb.load(write_jsonl(tmp_path / "a.jsonl", [rec]))
    assert lab.table("outputs")["media"].to_list() == [[sha(drawn)]]
    assert lab.table("outputs")["actual"].to_list() == ["Here it is."]
    again = evalnb.load(lab.export(tmp_path / "b.jsonl", "agent_chat"))
    assert again.table("outputs")["media"].to_list() == [[sha(drawn)]]


def test_inspect_content_parts_are_media(tmp_path: Path) -> None:
    log = {
        "version": 2,
        "status": "success",
        "eval": {"task": "vqa", "model": "openai/gpt-4o"},
        "samples": [
            {
                "id": 1,
                "epoch": 1,
                "input": "x",
                "target": "red",
                "messages": [
                    {
                        "role": "user",
                        "content": [
                            {"type": "text", "text": "Colour?"},
                            {"type": "image", "image": ms.data_url(RED, "image/png")},
                            {
                                "type": "audio",
                                "audio": ms.data_url(TONE, "audio/wav"),
                                "format": "wav",
                            },
                            {
                                "type": "document",
                                "document": ms.data_url(ms.pdf(), "application/pdf"),
                            },
                        ],
                    },
                    {
                        "role": "assistant",
                        "content": [
                            {"type": "reasoning", "reasoning": "it is red"},
                            {"type": "text", "text": "red"},
                        ],
                    },
                ],
                "scores": {},
            }
        ],
    }
    path = tmp_path / "log.json"
    path.write_text(json.dumps(log), encoding="utf-8")
    lab = evalnb.load(path)
    assert lab.table("cases")["media"].to_list() == [[sha(RED), sha(TONE), sha(ms.pdf())]]
    kinds = dict(lab.table("media").select("media_id", "kind").iter_rows())
    assert kinds[sha(ms.pdf())] == "document"
    assert lab.table("outputs")["actual"].to_list() == ["red"]


def test_deepeval_images_and_ragas_image_contexts(tmp_path: Path) -> None:
    (tmp_path / "chart.png").write_bytes(RED)
    frame = pl.DataFrame(
        {
            "prompt": ["What does the chart show?"],
            "image": [json.dumps([{"url": "chart.png", "local": True}])],
            "actual": ["a red bar"],
        }
    )
    csv = tmp_path / "de.csv"
    frame.write_csv(csv)
    lab = evalnb.load(csv)
    assert lab.table("cases")["media"].to_list() == [[sha(RED)]]

    class MLLMImage:  # DeepEval's shape, as an object
        def __init__(self, url: str, *, local: bool) -> None:
            self.url, self.local = url, local

    objs = evalnb.load(
        pl.DataFrame({"prompt": ["q"], "actual": ["a"]}).with_columns(
            pl.Series("image", [[ms.data_url(BLUE, "image/jpeg")]])
        )
    )
    assert objs.table("cases")["media"].to_list() == [[sha(BLUE)]]
    assert MLLMImage("x", local=False).url == "x"

    rec = {
        "user_input": "Summarise the figure",
        "response": "rising",
        "retrieved_contexts": ["The figure shows sales.", str(tmp_path / "chart.png")],
    }
    ragas = write_jsonl(tmp_path / "ragas.jsonl", [rec])
    got = evalnb.load(ragas).table("outputs")
    assert got["context"].to_list() == [["The figure shows sales."]]
    assert got["context_media"].to_list() == [[sha(RED)]]


def test_hugging_face_image_and_audio_columns_from_parquet(tmp_path: Path) -> None:
    image = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    table = pa.table(
        {
            "question": ["colour?", "sound?"],
            "image": pa.array(
                [{"bytes": RED, "path": "red.png"}, {"bytes": BLUE, "path": "blue.jpg"}], image
            ),
            "answer": ["red", "blue"],
        }
    )
    path = tmp_path / "hf.parquet"
    pq.write_table(table, path)
    lab = evalnb.load(path)
    assert lab.table("cases").sort("prompt")["media"].to_list() == [[sha(RED)], [sha(BLUE)]]


def test_openinference_image_attributes_and_the_32000_character_cut() -> None:
    big = ms.png((1, 2, 3), (200, 200))
    url = ms.data_url(big, "image/png")
    cut = (url + "A" * OPENINFERENCE_CUT)[:OPENINFERENCE_CUT]
    item = items.from_data_url(cut)
    assert item.status == "unavailable"
    assert "32,000" in (item.reason or "")
    assert item.data is None
    whole = items.from_data_url(url)
    assert whole.status == "ok"
    assert whole.media_id == sha(big)


def test_openinference_spans_carry_their_images() -> None:
    from evalnb.io.span_messages import llm_messages

    attrs = {
        "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.contents.0.message_content.type": "text",
        "llm.input_messages.0.message.contents.0.message_content.text": "What is it?",
        "llm.input_messages.0.message.contents.1.message_content.type": "image",
        "llm.input_messages.0.message.contents.1.message_content.image.image.url": ms.data_url(
            RED, "image/png"
        ),
    }
    (msg,) = llm_messages(attrs, "input")
    assert msg["content"][0] == {"type": "text", "text": "What is it?"}
    assert msg["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")


def test_what_is_not_what_it_says_is_refused_naming_the_record(tmp_path: Path) -> None:
    (tmp_path / "fake.png").write_text("not an image at all", encoding="utf-8")
    (tmp_path / "ok.png").write_bytes(RED)
    frame = pl.DataFrame({"prompt": ["a", "b"], "image": ["ok.png", "fake.png"]})
    path = tmp_path / "t.csv"
    frame.write_csv(path)
    with pytest.raises(evalnb.InputError) as err:
        evalnb.load(path)
    assert err.value.location == "line 3"
    assert err.value.field == "image"
    assert "not what the name or mime says" in str(err.value)
    with pytest.raises(evalnb.InputError, match="readable media file"):
        evalnb.load(pl.DataFrame({"prompt": ["a"], "image": [str(tmp_path / "missing.png")]}))
    with pytest.raises(MediaRefused, match="an image as the source says"):
        from_bytes(TONE, declared="image/png")
    with pytest.raises(MediaRefused, match="scheme 'ftp'"):
        from_reference("ftp://example.org/x.png")
    broken = RED[:20] + b"\x00" * 40 + RED[60:]
    with pytest.raises(MediaRefused, match="decodes"):
        from_bytes(broken)


def test_bounds_per_item_and_per_lab(monkeypatch: pytest.MonkeyPatch) -> None:
    from evalnb.media import table

    monkeypatch.setattr(items, "MAX_MEDIA_BYTES", 100)
    with pytest.raises(MediaRefused, match="at most 100 bytes"):
        from_bytes(TONE)
    monkeypatch.setattr(items, "MAX_MEDIA_BYTES", 20 << 20)
    monkeypatch.setattr(table, "MAX_LAB_MEDIA_BYTES", len(RED) + 10)
    frame = pl.DataFrame(
        {
            "prompt": ["a", "b"],
            "image": [ms.data_url(RED, "image/png"), ms.data_url(BLUE, "image/jpeg")],
        }
    )
    with pytest.raises(evalnb.InputError, match="bytes of media in one lab"):
        evalnb.load(frame)


def test_a_remote_url_is_kept_never_fetched_and_a_cut_image_is_unavailable() -> None:
    remote = from_reference("https://example.org/cat.jpg?size=2")
    assert (remote.status, remote.kind, remote.mime, remote.data) == (
        "remote",
        "image",
        "image/jpeg",
        None,
    )
    half = from_bytes(RED[: len(RED) // 2 + 10])
    assert half.status == "unavailable"
    assert half.data is None


def test_media_persist_in_the_lab_file(tmp_path: Path) -> None:
    lab = evalnb.load(write_jsonl(tmp_path / "chat.jsonl", chat_records(tmp_path)))
    back = evalnb.open(lab.save(tmp_path / "lab.duckdb"))
    assert back.table("media").equals(lab.table("media"))
    assert (
        back.table("cases")
        .sort("case_id")["media"]
        .equals(lab.table("cases").sort("case_id")["media"])
    )
