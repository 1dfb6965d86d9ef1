"""The model engine: token-budget batches, the tokenizing thread, the persistent vector cache."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from sentence_transformers import SentenceTransformer
from transformers import AutoTokenizer

from evalnb.models import vector_cache
from evalnb.models.encoder import TextEncoder
from evalnb.models.engine import (
    Engine,
    cpu_token_budget,
    device_name,
    prefetch,
    prefetch_all,
)
from evalnb.models.resolve import resolve_model
from evalnb.models.staging import Staging
from evalnb.models.vector_cache import CacheWarning, VectorCache, text_keys
from evalnb_testkit.precision import EMBEDDING_TOL

MODEL = "all-MiniLM-L6-v2"
TEXTS = [
    "The annual fee of the Gold card is $95.",
    "",
    "  leading and trailing spaces  ",
    "Ünïcödé — “quotes” and emoji 😀 stay as they are.",
    "word " * 400,  # past the model's 256 tokens: truncated as sentence-transformers does
    "Paris.",
    "The annual fee of the Gold card is $95.",  # twice
    *(f"sentence number {i} of a longer list, with {'more ' * (i % 7)}words" for i in range(60)),
]


@pytest.fixture(scope="module")
def tokenizer() -> object:
    return AutoTokenizer.from_pretrained(resolve_model(MODEL)[0])


def test_batches_cover_every_text_once_within_the_token_budget(tokenizer: object) -> None:
    engine = Engine(tokenizer, "cpu", max_length=256, token_budget=512)
    seen: list[int] = []
    for batch in engine.batches(TEXTS):
        ids, mask = batch.arrays["input_ids"], batch.arrays["attention_mask"]
        assert ids.shape == mask.shape
        assert ids.shape[0] == 1 or ids.size <= 512  # one row may exceed it alone
        assert (mask.sum(axis=1) == batch.lengths).all()
        seen += batch.index.tolist()
        for row, i in enumerate(batch.index):
            want = tokenizer(TEXTS[i], truncation=True, max_length=256)["input_ids"]  # type: ignore[operator]
            assert ids[row, : batch.lengths[row]].tolist() == want
            assert (ids[row, batch.lengths[row] :] == engine.pad_id).all()
    assert sorted(seen) == list(range(len(TEXTS)))


def test_pairs_carry_their_segment_ids_and_are_truncated_longest_first(tokenizer: object) -> None:
    engine = Engine(tokenizer, "cpu", max_length=32, token_budget=4096)
    first = ["a premise " * 30, "short premise", "x"]
    second = ["a hypothesis", "a hypothesis " * 30, "y"]
    got = {}
    for batch in engine.batches(first, second, type_ids=True):
        for row, i in enumerate(batch.index):
            n = batch.lengths[row]
            got[int(i)] = (
                batch.arrays["input_ids"][row, :n].tolist(),
                batch.arrays["token_type_ids"][row, :n].tolist(),
            )
    for i, (a, b) in enumerate(zip(first, second, strict=True)):
        want = tokenizer(a, b, truncation=True, max_length=32)  # type: ignore[operator]
        assert got[i] == (want["input_ids"], want["token_type_ids"])


def test_cpu_batches_narrow_as_the_model_grows() -> None:
    sizes = [(8, 0), (32, 1), (128, 2), (384, 6), (768, 12), (4096, 32)]
    budgets = [cpu_token_budget(h, layers) for h, layers in sizes]
    assert budgets == sorted(budgets, reverse=True)
    assert budgets[0] == budgets[1] == 65_536  # next to no arithmetic: few, wide batches
    assert cpu_token_budget(384, 6) == 4_096  # MiniLM: the measured best on two cores
    assert budgets[-1] == 4_096


def digests(texts: list[str]) -> pl.DataFrame:
    return text_keys(pl.Series(texts))


def test_the_producer_hands_its_error_over_and_stops_with_the_consumer() -> None:
    def failing() -> object:
        yield 1
        msg = "tokenizer exploded"
        raise RuntimeError(msg)

    items = prefetch(failing())
    assert next(items) == 1
    with pytest.raises(RuntimeError, match="tokenizer exploded"):
        next(items)

    produced = []
    stopped = threading.Event()

    def endless() -> object:
        try:
            i = 0
            while True:
                produced.append(i)
                yield i
                i += 1
        finally:
            stopped.set()

    consumer = prefetch(endless(), depth=2)
    assert [next(consumer) for _ in range(3)] == [0, 1, 2]
    consumer.close()  # the consumer stops early: so does the producer, within its queue's depth
    assert len(produced) <= 3 + 2 + 2


def test_several_producers_share_the_chunks_and_every_batch_is_staged_whole(
    tokenizer: object,
) -> None:
    one = Engine(tokenizer, "cpu", max_length=256, token_budget=512)
    want = {
        int(i): batch.arrays["input_ids"][row, : batch.lengths[row]].tolist()
        for batch in one.batches(TEXTS)
        for row, i in enumerate(batch.index)
    }
    several = Engine(tokenizer, "cpu", max_length=256, token_budget=512)
    several.chunk_size, several.producers = 8, 3  # 9 chunks of 8 texts over 3 producers
    staging = Staging("cpu", slots=2)
    got: dict[int, list[int]] = {}
    sent = []
    for batch in several.batches(TEXTS):
        tensors = staging.send({**batch.arrays, "index": batch.index})
        sent.append((batch, tensors))
        for row, i in enumerate(batch.index):
            assert int(i) not in got
            got[int(i)] = batch.arrays["input_ids"][row, : batch.lengths[row]].tolist()
    assert got == want
    assert len(several._tokenizers) == 3  # a tokenizer each
    # Every staged batch still holds its own values after the buffers were reused.
    for batch, tensors in sent:
        assert tensors.keys() == {*batch.arrays, "index"}
        assert tensors["index"].tolist() == batch.index.tolist()
        for key, value in batch.arrays.items():
            assert tensors[key].shape == value.shape
            assert np.array_equal(tensors[key].numpy(), value)


def test_the_first_failing_producer_stops_them_all() -> None:
    stopped = threading.Event()

    def endless() -> object:
        try:
            while True:
                yield 0
        finally:
            stopped.set()

    def failing() -> object:
        yield 1
        msg = "second tokenizer exploded"
        raise RuntimeError(msg)

    items = prefetch_all([endless(), failing()], depth=2)
    with pytest.raises(RuntimeError, match="second tokenizer exploded"):
        list(itertools.islice(items, 1_000_000))
    assert stopped.wait(5)


def test_the_encoder_equals_sentence_transformers(tmp_path: Path) -> None:
    reference = SentenceTransformer(resolve_model(MODEL)[0], device="cpu")
    want = reference.encode(TEXTS, batch_size=16)
    encoder = TextEncoder(MODEL, cache_dir=tmp_path, token_budget=300)  # many small batches
    got = encoder.encode(TEXTS)
    assert got.shape == want.shape
    assert np.abs(got - want).max() <= EMBEDDING_TOL
    assert np.array_equal(got[0], got[6])  # a text given twice is one vector
    # The GPU's way through the engine (two producers, every batch and its positions sent
    # in one staged copy) gives the same vectors.
    staged = TextEncoder(MODEL, cache_dir=None, token_budget=300)
    staged.engine.producers, staged.engine.chunk_size = 2, 16
    staged.engine._staging = Staging("cpu")
    assert np.abs(staged.encode(TEXTS) - got).max() <= 1e-6


def test_vectors_come_back_from_the_cache_in_a_new_encoder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = TextEncoder(MODEL, cache_dir=tmp_path)
    vectors = first.encode(TEXTS[:10])
    assert first._cache is not None
    first._cache.flush()
    second = TextEncoder(MODEL, cache_dir=tmp_path)

    def no_model(texts: list[str]) -> np.ndarray:
        msg = f"the model ran on {len(texts)} texts the cache holds"
        raise AssertionError(msg)

    monkeypatch.setattr(second, "_embed", no_model)
    assert np.array_equal(second.encode(TEXTS[:10][::-1]), vectors[::-1])


def test_a_broken_part_is_set_aside_and_the_run_goes_on(tmp_path: Path) -> None:
    cache = VectorCache(tmp_path, "model-x")
    keys = digests(["a", "b", "c"])
    cache.put(keys, np.eye(3, dtype=np.float32))
    cache.flush()
    (part,) = cache.parts()
    part.write_bytes(part.read_bytes()[:-5])  # a torn write from an older tool, say
    with pytest.warns(CacheWarning, match="broken"):
        found, got = cache.get(keys)
    assert found.size == 0 and got.size == 0
    assert not cache.parts() and part.with_name(part.name + ".broken").is_file()


def test_an_unwritable_cache_warns_and_does_not_fail(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder should be")
    cache = VectorCache(blocker, "model-x")
    cache.put(digests(["a"]), np.ones((1, 4), dtype=np.float32))
    with pytest.warns(CacheWarning, match="could not be written"):
        cache.flush()
    assert cache.get(digests(["a"]))[0].size == 0


def test_many_parts_merge_into_one_and_keep_every_vector(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vector_cache, "_MERGE_AT", 4)
    cache = VectorCache(tmp_path, "model-x")
    rng = np.random.default_rng(0)
    texts = [f"t{i}" for i in range(60)]
    vectors = rng.standard_normal((60, 8)).astype(np.float32)
    for start in range(0, 60, 10):
        cache.put(digests(texts[start : start + 10]), vectors[start : start + 10])
    cache.put(digests(texts[:5]), vectors[:5])  # written twice: kept once
    cache.flush()
    assert len(cache.parts()) <= 4
    found, got = cache.get(digests(texts))
    assert found.tolist() == list(range(60))
    assert np.array_equal(got, vectors)


def test_processes_write_one_cache_at_once(tmp_path: Path) -> None:
    code = (
        "import sys, numpy as np; from pathlib import Path\n"
        "import polars as pl\n"
        "from evalnb.models.vector_cache import VectorCache, text_keys\n"
        "c = VectorCache(Path(sys.argv[1]), 'shared-model'); k = int(sys.argv[2])\n"
        "for r in range(30):\n"
        "    texts = [f'{k}-{r}-{i}' for i in range(20)]\n"
        "    c.put(text_keys(pl.Series(texts)), np.full((20, 4), k, dtype=np.float32))\n"
        "c.flush()\n"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", code, str(tmp_path), str(k)]) for k in range(3)
    ]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0]
    cache = VectorCache(tmp_path, "shared-model")
    for k in range(3):
        texts = [f"{k}-{r}-{i}" for r in range(30) for i in range(20)]
        found, got = cache.get(digests(texts))
        assert found.size == len(texts) and (got == k).all()


def test_a_device_that_is_not_here_is_refused_clearly(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    monkeypatch.setenv("EVALNB_DEVICE", "cuda")
    with pytest.raises(ValueError, match="sees no CUDA GPU; unset EVALNB_DEVICE"):
        device_name()
    monkeypatch.setenv("EVALNB_DEVICE", "tpu")
    with pytest.raises(ValueError, match="'cpu', 'cuda' or 'cuda:N', got 'tpu'"):
        device_name()
    monkeypatch.delenv("EVALNB_DEVICE")
    assert device_name() == "cpu"
    assert os.environ.get("EVALNB_DEVICE") is None


def test_replicas_share_the_texts_and_agree_with_one_model(tmp_path: Path) -> None:
    # Two CPU replicas stand in for two GPUs: the same sharing, threads and gathering.
    one = TextEncoder(MODEL, cache_dir=None)
    two = TextEncoder(MODEL, cache_dir=None, replicas=["cpu"])
    assert len(two._replicas) == 1
    texts = [t for t in TEXTS if t] * 2 + [f"extra text {i}" for i in range(30)]
    assert np.abs(two.encode(texts) - one.encode(texts)).max() <= EMBEDDING_TOL
    # On the device the replicas' vectors land in the same places.
    shuffled = [f"other text {i}" for i in range(40)] + texts[:5]
    on_device = TextEncoder(MODEL, cache_dir=None, replicas=["cpu"]).encode_on_device(shuffled)
    assert np.abs(on_device.numpy() - one.encode(shuffled)).max() <= EMBEDDING_TOL
