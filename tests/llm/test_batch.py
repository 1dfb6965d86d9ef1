"""Batch mode: one file of calls, polled to its end; a restart finds its batch, never pays twice."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import evalnb
from evalnb_testkit.batch_server import LoopbackBatches


def _lab(n: int) -> evalnb.Lab:
    answers = [f"{'RIGHT' if i % 2 == 0 else 'WRONG'} answer {i}" for i in range(n)]
    return evalnb.load(
        pl.DataFrame({"prompt": [f"question {i}" for i in range(n)], "actual": answers})
    )


def _verdict(prompt: str) -> str:
    return "1" if "RIGHT" in prompt else "0"


def _client(server: LoopbackBatches, tmp_path: Path) -> evalnb.LLMClient:
    return evalnb.LLMClient(
        server.base_url, "batcher", cache=tmp_path / "c.duckdb", batch=True, batch_poll_s=0.01
    )


def test_a_run_goes_as_one_batch_and_its_replies_are_cached(tmp_path: Path) -> None:
    lab = _lab(12)
    with LoopbackBatches(_verdict) as server:
        scored = evalnb.evaluate(
            lab, "binary_judge", judge=_client(server, tmp_path), contract="free", progress=False
        )
        assert len(server.batches) == 1 and server.chat_calls == 0
        values = (
            scored.scores.filter(pl.col("metric") == "binary_judge")
            .sort("case_id")["value"]
            .to_list()
        )
        assert sorted(values) == [0.0] * 6 + [1.0] * 6
        again = evalnb.evaluate(
            lab, "binary_judge", judge=_client(server, tmp_path), contract="free", progress=False
        )
        assert len(server.batches) == 1  # every reply came from the cache
    assert again.scores["value"].null_count() == 0


def test_a_restart_polls_the_batch_it_submitted_instead_of_sending_another(tmp_path: Path) -> None:
    lab = _lab(8)
    with LoopbackBatches(_verdict) as server:
        server.hold = True  # the batch runs past the first process's patience
        waiting = evalnb.LLMClient(
            server.base_url,
            "batcher",
            cache=tmp_path / "c.duckdb",
            batch=True,
            batch_poll_s=0.01,
            batch_timeout_s=0.05,
        )
        with pytest.warns(evalnb.NothingScoredWarning, match="batch pending"):
            first = evalnb.evaluate(
                lab, "binary_judge", judge=waiting, contract="free", progress=False
            )
        rows = first.scores.filter(pl.col("metric") == "binary_judge")
        assert rows["value"].null_count() == 8
        assert rows["detail"].str.contains("batch pending").all()
        assert (tmp_path / "c.duckdb.batches.json").is_file()  # the batch id, kept
        server.hold = False
        second = evalnb.evaluate(
            first, "binary_judge", judge=_client(server, tmp_path), contract="free", progress=False
        )
        assert len(server.batches) == 1  # the same batch, collected: nothing paid twice
    done = second.scores.filter(pl.col("metric") == "binary_judge")
    assert done.height == 8 and done["value"].null_count() == 0
    assert not json_record(tmp_path)  # a collected batch is forgotten


def json_record(tmp_path: Path) -> dict[str, str]:
    import json

    return json.loads((tmp_path / "c.duckdb.batches.json").read_text())
