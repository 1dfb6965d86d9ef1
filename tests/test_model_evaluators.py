"""Model-backed evaluators on tiny models built here (the real ones cannot be downloaded)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import torch
from tokenizers import ByteLevelBPETokenizer
from transformers import (
    BertConfig,
    BertForSequenceClassification,
    BertTokenizerFast,
    GPT2Config,
    GPT2LMHeadModel,
    GPT2TokenizerFast,
)

import evalnb
from evalnb._hf import ModelUnavailable
from evalnb._sentences import split_sentences

_WORDS = [
    "the",
    "a",
    "cat",
    "dog",
    "sat",
    "on",
    "mat",
    "you",
    "are",
    "stupid",
    "idiot",
    "nice",
    "good",
    "bad",
    "answer",
    "is",
    "it",
    ".",
    ",",
    "!",
]


def _bert(folder: Path, labels: list[str], seed: int) -> Path:
    folder.mkdir()
    (folder / "vocab.txt").write_text(
        "\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *_WORDS])
    )
    BertTokenizerFast(vocab_file=str(folder / "vocab.txt")).save_pretrained(folder)
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=len(_WORDS) + 5, hidden_size=16, num_hidden_layers=1,
                        num_attention_heads=2, intermediate_size=32, num_labels=len(labels),
                        id2label=dict(enumerate(labels)), label2id={name: i for i, name in enumerate(labels)})  # fmt: skip
    BertForSequenceClassification(config).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("models")
    toxic = ["toxic", "severe_toxic", "obscene", "threat", "insult", "identity_hate"]
    gpt = root / "gpt"
    gpt.mkdir()
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator([" ".join(_WORDS)] * 20, vocab_size=300, min_frequency=1,
                            special_tokens=["<|endoftext|>"])  # fmt: skip
    tok = GPT2TokenizerFast(tokenizer_object=bpe._tokenizer, eos_token="<|endoftext|>")
    tok.save_pretrained(gpt)
    torch.manual_seed(0)
    GPT2LMHeadModel(GPT2Config(vocab_size=len(tok), n_positions=64, n_embd=16, n_layer=1,
                               n_head=2)).save_pretrained(gpt)  # fmt: skip
    return {
        "toxicity": _bert(root / "tox", toxic, 1),
        "hallucination": _bert(root / "hhem", ["hallucinated", "consistent"], 2),
        "fairness_bias": _bert(root / "bias", ["Non-biased", "Biased"], 3),
        "perplexity": gpt,
    }


def _lab() -> evalnb.Lab:
    return evalnb.load(pl.DataFrame({
        "prompt": ["p1", "p2", "p3", "p4"],
        "actual": ["you are stupid. the cat sat on the mat!", "nice answer.", "",
                   "MODEL HOST INTERNAL ERROR: x"],
        "error": [None, None, None, "MODEL HOST INTERNAL ERROR: x"],
        "context": [["the cat sat on the mat.", "a dog is bad"], ["good answer"], [], ["x"]],
    }))  # fmt: skip


def _direct_logits(folder: Path, first: list[str], second: list[str] | None = None) -> np.ndarray:
    tok = BertTokenizerFast.from_pretrained(folder)
    model = BertForSequenceClassification.from_pretrained(folder).eval()
    with torch.inference_mode():
        return model(**tok(first, second, padding=True, return_tensors="pt")).logits.numpy()


def _values(lab: evalnb.Lab, metric: str) -> list[float | None]:
    return lab.scores.filter(pl.col("metric") == metric)["value"].to_list()


def test_toxicity_is_max_over_sentences(models: dict[str, Path]) -> None:
    lab = evalnb.evaluate(_lab(), ["toxicity"], model=str(models["toxicity"]), progress=False)
    sentences = split_sentences(["you are stupid. the cat sat on the mat!"])[0]
    probs = 1 / (1 + np.exp(-_direct_logits(models["toxicity"], sentences)))
    got = _values(lab, "toxicity")
    assert got[0] == pytest.approx(probs[:, 0].max(), abs=1e-5)
    assert _values(lab, "identity_attack")[0] == pytest.approx(probs[:, 5].max(), abs=1e-5)
    assert got[2:] == [
        None,
        None,
    ]  # empty answer and host error are not scored (0.0 would be "best")


def test_hallucination_best_chunk(models: dict[str, Path]) -> None:
    lab = evalnb.evaluate(
        _lab(), ["hallucination"], model=str(models["hallucination"]), progress=False
    )
    answer = "you are stupid. the cat sat on the mat!"
    logits = _direct_logits(
        models["hallucination"], ["the cat sat on the mat.", "a dog is bad"], [answer] * 2
    )
    p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    got = _values(lab, "hallucination")
    assert got[0] == pytest.approx(p[:, 1].max(), abs=1e-5)
    assert got[2] is None  # no context
    assert got[3] == 0.0  # host error: worst value


def test_fairness_bias_normalisation(models: dict[str, Path]) -> None:
    lab = evalnb.evaluate(
        _lab(), ["fairness_bias"], model=str(models["fairness_bias"]), progress=False
    )
    logits = _direct_logits(models["fairness_bias"], ["nice answer."])
    p = np.exp(logits[0]) / np.exp(logits[0]).sum()
    expected = 0.5 + p[1] / 2 if p.argmax() == 1 else 0.5 - p[0] / 2
    assert _values(lab, "fairness_bias")[1] == pytest.approx(expected, abs=1e-5)


def test_perplexity_matches_the_model_loss(models: dict[str, Path]) -> None:
    lab = evalnb.evaluate(_lab(), ["perplexity"], model=str(models["perplexity"]), progress=False)
    tok = GPT2TokenizerFast.from_pretrained(models["perplexity"])
    model = GPT2LMHeadModel.from_pretrained(models["perplexity"]).eval()
    ids = tok("nice answer.", return_tensors="pt")["input_ids"]
    with torch.inference_mode():
        loss = model(input_ids=ids, labels=ids).loss.item()
    got = _values(lab, "perplexity")
    assert got[1] == pytest.approx(np.exp(loss), rel=1e-4)
    assert got[2:] == [1_234_567.89, 1_234_567.89]
    detail = lab.scores.filter(pl.col("metric") == "perplexity")["detail"][3]
    assert "host failed" in json.loads(detail)["reason"]


def test_missing_model_is_a_clear_error() -> None:
    with pytest.raises(
        ModelUnavailable,
        match=r"model 'unitary/toxic-bert' is not available.*model='<local folder>'",
    ):
        evalnb.evaluate(_lab(), ["toxicity"], progress=False)
