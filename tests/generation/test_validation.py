"""Test validation: scores of a case's expected answer against its source, outliers, exclusion."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import torch

import evalnb
from evalnb.models.encoder import get_encoder
from evalnb_testkit.corpus_docs import LICENSES
from evalnb_testkit.precision import EMBEDDING_TOL, MODEL_TOL

# Suites generated from a real corpus with the embedding model, end to end: the slow tier.
pytestmark = [
    pytest.mark.skipif(not LICENSES.is_dir(), reason="needs Debian's base-files"),
    pytest.mark.slow,
    pytest.mark.xdist_group(
        "generation_validation"
    ),  # its module fixture is built once: on one worker
]

UNRELATED = "Cats sleep for most of the afternoon while the rain keeps falling on Paris."


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, evalnb.Lab]:
    store = tmp_path_factory.mktemp("validation") / "lab.duckdb"
    corpus = evalnb.corpus(
        [LICENSES / "Apache-2.0", LICENSES / "GPL-3"], store=store, max_tokens=160
    )
    lab = evalnb.generate_tests(corpus, n=30, generators=["definition", "yes_no"])
    # one case whose expected answer has nothing to do with its source
    planted = lab.cases.with_columns(
        expected=pl.when(pl.int_range(pl.len()) == 0)
        .then(pl.lit([UNRELATED]))
        .otherwise("expected")
    )
    lab.replace_tables({"cases": planted})
    return store, lab


def _quiet(lab: evalnb.Lab, **kw: object) -> evalnb.Validation:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", evalnb.NothingScoredWarning)
        return evalnb.validate_tests(lab, **kw)  # type: ignore[arg-type]


def _greedy(a: np.ndarray, s: np.ndarray) -> tuple[float, float, float]:
    """BERTScore's greedy matching of two unit-row token matrices, directly (one pair)."""
    sim = a @ s.T
    p, r = float(sim.max(axis=1).mean()), float(sim.max(axis=0).mean())
    return p, r, 2 * p * r / (p + r)


def test_token_matching_is_greedy_cosine_over_the_encoders_tokens() -> None:
    encoder = get_encoder("all-MiniLM-L6-v2")
    answers = ["the union of the acting entity", "Paris.", "a", "An entity is not a union."]
    sources = [
        "Legal Entity shall mean the union of the acting entity and all other entities.",
        "The capital of France is Paris, on the Seine.",
        "Legal Entity shall mean the union of the acting entity and all other entities.",
        "x " * 40,
    ]
    raw = encoder._model.encode(
        answers + sources, output_value="token_embeddings", convert_to_numpy=False
    )
    units = []
    for t in raw:
        m = t[1:-1].float().cpu().numpy()  # drop [CLS] and [SEP]
        units.append(m / np.linalg.norm(m, axis=1, keepdims=True))
    # All pairs in one padded batch on the device, each against its own direct computation.
    got = encoder.token_scores(answers, sources)
    for i in range(len(answers)):
        want = _greedy(units[i], units[len(answers) + i])
        assert tuple(got[i]) == pytest.approx(want, abs=EMBEDDING_TOL)
    same = encoder.token_scores(sources[:1], sources[:1])[0]
    assert tuple(same) == pytest.approx((1.0, 1.0, 1.0), abs=EMBEDDING_TOL)
    # A text with no token: nothing to match, NaN rather than a number.
    assert np.isnan(encoder.token_scores([""], [sources[0]])).all()


def test_scores_are_kept_and_the_planted_case_is_the_outlier(
    suite: tuple[Path, evalnb.Lab],
) -> None:
    store, lab = suite
    with pytest.warns(evalnb.NothingScoredWarning, match="nli_entailment not computed.*nli_model="):
        validation = evalnb.validate_tests(lab)
    scores = validation.scores()
    assert scores.height == lab.cases.height
    planted = lab.cases["case_id"][0]
    worst = scores.sort("answer_source_cosine").row(0, named=True)
    assert worst["case_id"] == planted
    flagged = validation.outliers()
    assert planted in set(flagged["case_id"])
    assert flagged.filter(pl.col("case_id") == planted)["robust_z"].max() < -3
    kept = evalnb.open(store).table("validation")
    assert set(kept["metric"]) == {
        "answer_source_cosine",
        "token_precision",
        "token_recall",
        "token_f1",
    }
    assert kept.height == 4 * lab.cases.height
    _quiet(lab)  # again: replaced, not appended
    assert evalnb.open(store).table("validation").height == kept.height


def test_excluded_cases_leave_the_suite_and_the_reason_stays(
    suite: tuple[Path, evalnb.Lab], tmp_path: Path
) -> None:
    import shutil

    # Excluding writes the store: this test works on a copy, so the module's other tests
    # (in any order) still find the planted case.
    store = tmp_path / "lab.duckdb"
    shutil.copyfile(suite[0], store)
    lab = evalnb.open(store)
    validation = _quiet(lab)
    planted = lab.cases["case_id"][0]
    with pytest.raises(KeyError, match="no cases"):
        validation.exclude(["no-such-case"])
    after = validation.exclude([planted], reason="answer unrelated to its source")
    assert planted not in set(after.cases["case_id"])
    reopened = evalnb.open(store)
    assert planted not in set(reopened.cases["case_id"])
    detail = reopened.table("validation").filter(pl.col("case_id") == planted)["detail"]
    assert {json.loads(d)["excluded"] for d in detail} == {"answer unrelated to its source"}


def _tiny_nli(folder: Path) -> Path:
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    from evalnb.models.resolve import resolve_model

    vocab = Path(resolve_model("all-MiniLM-L6-v2")[0]) / "vocab.txt"
    tokenizer = BertTokenizerFast(vocab_file=str(vocab))
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=37,
        num_labels=3,
        id2label={0: "contradiction", 1: "entailment", 2: "neutral"},
        label2id={"contradiction": 0, "entailment": 1, "neutral": 2},
    )
    BertForSequenceClassification(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def test_nli_entailment_comes_from_the_local_model(
    suite: tuple[Path, evalnb.Lab], tmp_path: Path
) -> None:
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    _, lab = suite
    folder = _tiny_nli(tmp_path / "nli")
    rows = evalnb.validate_tests(lab, nli_model=str(folder)).lab.table("validation")
    nli = rows.filter(pl.col("metric") == "nli_entailment")
    assert nli.height == lab.cases.height
    case = lab.cases.row(1, named=True)
    tok = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForSequenceClassification.from_pretrained(folder).eval()
    with torch.inference_mode():
        logits = model(
            **tok(
                "\n\n".join(case["corpus"]),
                case["expected"][0],
                return_tensors="pt",
                truncation=True,
            )
        ).logits
    expected = torch.softmax(logits, dim=-1)[0, 1].item()
    got = nli.filter(pl.col("case_id") == case["case_id"])["value"][0]
    assert got == pytest.approx(expected, abs=MODEL_TOL)


def test_a_missing_nli_model_is_a_warning_not_a_failure(
    suite: tuple[Path, evalnb.Lab], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, lab = suite
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.warns(
        evalnb.NothingScoredWarning, match="nli_entailment not computed.*not available"
    ):
        validation = evalnb.validate_tests(lab, nli_model="org/nli-not-here")
    assert "nli_entailment" not in validation.scores().columns
