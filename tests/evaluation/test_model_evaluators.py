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
from evalnb.models.hf import ModelUnavailable
from evalnb.text.sentences import split_sentences
from evalnb_testkit.paths import ROOT
from evalnb_testkit.precision import MODEL_REL, MODEL_TOL

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
    config = BertConfig(
        vocab_size=len(_WORDS) + 5,
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        num_labels=len(labels),
        id2label=dict(enumerate(labels)),
        label2id={name: i for i, name in enumerate(labels)},
    )
    BertForSequenceClassification(config).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("models")
    toxic = ["toxic", "severe_toxic", "obscene", "threat", "insult", "identity_hate"]
    gpt = root / "gpt"
    gpt.mkdir()
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(
        [" ".join(_WORDS)] * 20, vocab_size=300, min_frequency=1, special_tokens=["<|endoftext|>"]
    )
    tok = GPT2TokenizerFast(tokenizer_object=bpe._tokenizer, eos_token="<|endoftext|>")
    tok.save_pretrained(gpt)
    torch.manual_seed(0)
    GPT2LMHeadModel(
        GPT2Config(vocab_size=len(tok), n_positions=256, n_embd=16, n_layer=1, n_head=2)
    ).save_pretrained(gpt)
    return {
        "toxicity": _bert(root / "tox", toxic, 1),
        "hallucination": _bert(root / "hhem", ["hallucinated", "consistent"], 2),
        "fairness_bias": _bert(root / "bias", ["Non-biased", "Biased"], 3),
        "perplexity": gpt,
    }


def _lab() -> evalnb.Lab:
    return evalnb.load(
        pl.DataFrame(
            {
                "prompt": ["p1", "p2", "p3", "p4"],
                "actual": [
                    "you are stupid. the cat sat on the mat!",
                    "nice answer.",
                    "",
                    "MODEL HOST INTERNAL ERROR: x",
                ],
                "error": [None, None, None, "MODEL HOST INTERNAL ERROR: x"],
                "context": [
                    ["the cat sat on the mat.", "a dog is bad"],
                    ["good answer"],
                    [],
                    ["x"],
                ],
            }
        )
    )


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
    assert got[0] == pytest.approx(probs[:, 0].max(), abs=MODEL_TOL)
    assert _values(lab, "identity_attack")[0] == pytest.approx(probs[:, 5].max(), abs=MODEL_TOL)
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
    assert got[0] == pytest.approx(p[:, 1].max(), abs=MODEL_TOL)
    assert got[2] is None  # no context
    assert got[3] == 0.0  # host error: worst value


def test_fairness_bias_normalisation(models: dict[str, Path]) -> None:
    lab = evalnb.evaluate(
        _lab(), ["fairness_bias"], model=str(models["fairness_bias"]), progress=False
    )
    logits = _direct_logits(models["fairness_bias"], ["nice answer."])
    p = np.exp(logits[0]) / np.exp(logits[0]).sum()
    expected = 0.5 + p[1] / 2 if p.argmax() == 1 else 0.5 - p[0] / 2
    assert _values(lab, "fairness_bias")[1] == pytest.approx(expected, abs=MODEL_TOL)


def test_perplexity_matches_the_model_loss(models: dict[str, Path]) -> None:
    lab = evalnb.evaluate(_lab(), ["perplexity"], model=str(models["perplexity"]), progress=False)
    tok = GPT2TokenizerFast.from_pretrained(models["perplexity"])
    model = GPT2LMHeadModel.from_pretrained(models["perplexity"]).eval()
    ids = tok("nice answer.", return_tensors="pt")["input_ids"]
    with torch.inference_mode():
        loss = model(input_ids=ids, labels=ids).loss.item()
    got = _values(lab, "perplexity")
    assert got[1] == pytest.approx(np.exp(loss), rel=MODEL_REL)
    assert got[2:] == [1_234_567.89, 1_234_567.89]
    detail = lab.scores.filter(pl.col("metric") == "perplexity")["detail"][3]
    assert "host failed" in json.loads(detail)["reason"]


def test_missing_model_is_a_clear_error() -> None:
    with pytest.raises(
        ModelUnavailable,
        match=r"model 'unitary/toxic-bert' is not available.*model='<local folder>'",
    ):
        evalnb.evaluate(_lab(), ["toxicity"], progress=False)


def _direct_anll(folder: Path, prefix: str, continuation: str) -> float:
    tok = GPT2TokenizerFast.from_pretrained(folder)
    model = GPT2LMHeadModel.from_pretrained(folder).eval()
    head, tail = tok(prefix)["input_ids"], tok(continuation)["input_ids"]
    ids = torch.tensor([head + tail])
    with torch.inference_mode():
        logp = torch.log_softmax(model(input_ids=ids).logits[0], dim=-1)
    return -float(np.mean([logp[len(head) + k - 1, t].item() for k, t in enumerate(tail)]))


def test_gptscore_translation_averages_both_directions(models: dict[str, Path]) -> None:
    lab = evalnb.load(
        pl.DataFrame(
            {
                "prompt": ["p", "q"],
                "expected": ["the cat sat.", "x"],
                "actual": ["a cat is on the mat.", "  "],
            }
        )
    )
    lab = evalnb.evaluate(
        lab, ["gptscore_translation"], model=str(models["perplexity"]), progress=False
    )
    pre = "Rewrite the following text with its core information and consistent facts: {} In other words,"
    want = (
        _direct_anll(models["perplexity"], pre.format("the cat sat."), " a cat is on the mat.")
        + _direct_anll(models["perplexity"], pre.format("a cat is on the mat."), " the cat sat.")
    ) / 2
    got = _values(lab, "accuracy")
    assert got[0] == pytest.approx(want, rel=MODEL_REL)
    assert got[1] is None  # blank answer: not scored, with a reason
    assert {"accuracy", "fluency", "multidimensional_quality_metrics"} <= set(lab.scores["metric"])


def test_gptscore_with_an_encoder_decoder_lm(models: dict[str, Path], tmp_path: Path) -> None:
    from transformers import BartConfig, BartForConditionalGeneration

    tok = GPT2TokenizerFast.from_pretrained(models["perplexity"])
    tok.save_pretrained(tmp_path)
    torch.manual_seed(4)
    config = BartConfig(
        vocab_size=len(tok),
        d_model=16,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=32,
        decoder_ffn_dim=32,
        max_position_embeddings=128,
        pad_token_id=0,
        bos_token_id=0,
        eos_token_id=0,
        decoder_start_token_id=0,
    )
    BartForConditionalGeneration(config).save_pretrained(tmp_path)
    lab = evalnb.load(
        pl.DataFrame(
            {"prompt": ["the dog sat on the mat. it is good."], "actual": ["the dog sat."]}
        )
    )
    lab = evalnb.evaluate(lab, ["gptscore_summary"], model=str(tmp_path), progress=False)
    model = BartForConditionalGeneration.from_pretrained(tmp_path).eval()
    src = tok(
        "Generate a coherent summary for the following text: "
        "the dog sat on the mat. it is good. Tl;dr",
        return_tensors="pt",
    )["input_ids"]
    tgt = tok(" the dog sat.", return_tensors="pt")["input_ids"]
    with torch.inference_mode():
        loss = model(input_ids=src, labels=tgt).loss.item()
    assert _values(lab, "coherence")[0] == pytest.approx(loss, rel=MODEL_REL)


def test_gptscore_qa_scores_answer_yes(models: dict[str, Path]) -> None:
    lab = evalnb.load(pl.DataFrame({"prompt": ["is the cat good?"], "actual": ["it is good."]}))
    lab = evalnb.evaluate(lab, ["gptscore_qa"], model=str(models["perplexity"]), progress=False)
    prefix = (
        "Answer the question based on the conversation between a human and AI.\n"
        "Question: Are the responses of AI fluently written? (a) Yes. (b) No.\n"
        "Conversation: Human: is the cat good?\nAI: it is good.\n"
    )
    want = _direct_anll(models["perplexity"], prefix, "Answer: Yes")
    assert _values(lab, "fluency")[0] == pytest.approx(want, rel=MODEL_REL)
    assert len(set(lab.scores["metric"])) == 8


_DOC = (
    "The cat sat on the mat all day. The dog is a good dog indeed. It is nice and good today. "
    "The answer is bad, you see. A dog sat on a cat mat. The mat is nice and the cat is good. "
    "It is a bad answer, the dog said. Good cats are nice on mats."
)


def _nli_and_weights(models: dict[str, Path], tmp_path: Path) -> tuple[Path, Path]:
    nli = _bert(tmp_path / "nli", ["entailment", "neutral", "contradiction"], 5)
    torch.manual_seed(6)
    state = {
        "mlp.weight": torch.randn(1, 23),
        "mlp.bias": torch.randn(1),
        "layer_final.weight": torch.randn(2, 3),
        "layer_final.bias": torch.randn(2),
    }
    torch.save(state, tmp_path / "conv.bin")
    return nli, tmp_path / "conv.bin"


@pytest.mark.slow  # a model loaded, or processes racing: the slow tier
def test_summarization_faithfulness_and_completeness(
    models: dict[str, Path], tmp_path: Path
) -> None:
    nli, conv = _nli_and_weights(models, tmp_path)
    summary = "The cat sat on the mat all day. The dog is a good dog indeed."
    lab = evalnb.load(
        pl.DataFrame(
            {
                "prompt": [_DOC, _DOC, "Too short.", _DOC],
                "actual": [summary, _DOC, summary, "One sentence only."],
                "model": ["a", "b", "a", "c"],
            }
        )
    )
    lab = evalnb.evaluate(
        lab,
        ["summarization"],
        nli_model=str(nli),
        conv_weights=str(conv),
        model="all-MiniLM-L6-v2",
        progress=False,
    )
    doc, summ = split_sentences([_DOC, summary], min_chars=10)
    logits = _direct_logits(nli, [d for d in doc for _ in summ], [s for _ in doc for s in summ])
    image = (np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True))[:, 0].reshape(
        len(doc), len(summ)
    )
    assert _values(lab, "faithfulness_zs")[0] == pytest.approx(
        image.max(axis=0).mean(), abs=MODEL_TOL
    )
    # SummaC-Conv by the book: np.histogram per summary sentence, linear, mean, softmax
    state = torch.load(conv, weights_only=True)
    bins = [
        0.0,
        0.01,
        0.02,
        0.03,
        0.04,
        0.07,
        0.13,
        0.37,
        0.90,
        0.91,
        0.92,
        0.93,
        0.94,
        0.95,
        0.955,
        0.96,
        0.965,
        0.97,
        0.975,
        0.98,
        0.985,
        0.99,
        0.995,
        1.0,
    ]
    hist = np.array(
        [np.histogram(image[:, j], bins=bins, range=(0, 1))[0] for j in range(len(summ))]
    )
    mean = (hist @ state["mlp.weight"].numpy()[0] + state["mlp.bias"].item()).mean()
    logit = (
        state["layer_final.weight"].numpy() @ np.full(3, mean) + state["layer_final.bias"].numpy()
    )
    want = np.exp(logit[1]) / np.exp(logit).sum()
    assert _values(lab, "faithfulness_conv")[0] == pytest.approx(want, abs=MODEL_TOL)
    complete = _values(lab, "completeness")
    assert complete[1] == pytest.approx(1.0)  # the document summarises itself completely
    assert 0.0 <= complete[0] < 1.0
    assert complete[2:] == [None, None]
    why = [
        json.loads(d)["reason"]
        for d in lab.scores.filter(pl.col("metric") == "completeness")["detail"][2:]
    ]
    assert why[0].startswith("document (prompt) too short")
    assert why[1].startswith("summary too short")


@pytest.mark.slow  # a model loaded, or processes racing: the slow tier
def test_summarization_without_conv_weights_says_so(
    models: dict[str, Path], tmp_path: Path
) -> None:
    nli, _ = _nli_and_weights(models, tmp_path)
    lab = evalnb.load(
        pl.DataFrame({"prompt": [_DOC], "actual": ["The cat sat on the mat. The dog is good."]})
    )
    lab = evalnb.evaluate(
        lab, ["summarization"], nli_model=str(nli), model="all-MiniLM-L6-v2", progress=False
    )
    row = lab.scores.filter(pl.col("metric") == "faithfulness_conv").row(0, named=True)
    assert row["value"] is None
    assert "conv_weights" in json.loads(row["detail"])["reason"]
    with pytest.raises(ModelUnavailable, match="SummaC-Conv weights not found"):
        evalnb.evaluate(
            lab,
            ["summarization"],
            nli_model=str(nli),
            model="all-MiniLM-L6-v2",
            conv_weights=str(tmp_path / "nope.bin"),
            progress=False,
        )


def _tiny_t5(folder: Path) -> Path:
    """A one-layer T5 with a word-level tokenizer: the foundation of the HHEM-shaped model."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast, T5Config

    words = ["<pad>", "</s>", "<unk>", "premise:", "hypothesis:", *_WORDS]
    word_level = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    word_level.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    PreTrainedTokenizerFast(
        tokenizer_object=word_level, pad_token="<pad>", eos_token="</s>", unk_token="<unk>"
    ).save_pretrained(folder)
    T5Config(
        vocab_size=len(words),
        d_model=16,
        d_ff=32,
        d_kv=8,
        num_layers=1,
        num_heads=2,
        pad_token_id=0,
        eos_token_id=1,
        decoder_start_token_id=0,
    ).save_pretrained(folder)
    return folder


def _hhem(root: Path) -> Path:
    """A model folder shaped like HHEM's repository: weights, config, its own code, no tokenizer."""
    import importlib.util
    import shutil
    import sys

    foundation = _tiny_t5(root / "foundation")
    folder = root / "hhem"
    folder.mkdir()
    code = ROOT / "evalnb_testkit" / "hhem_code"
    for name in ("configuration_hhem.py", "modeling_hhem.py"):
        shutil.copy(code / name, folder / name)
    # Build the weights with the same code, imported as the package the loader will make.
    package = "hhem_test_build"
    spec = importlib.util.spec_from_file_location(
        package, folder / "__init__.py", submodule_search_locations=[str(folder)]
    )
    assert spec is not None
    sys.modules[package] = importlib.util.module_from_spec(spec)
    modeling = importlib.import_module(f"{package}.modeling_hhem")
    config_mod = importlib.import_module(f"{package}.configuration_hhem")
    torch.manual_seed(5)
    model = modeling.HHEMTestForSequenceClassification(
        config_mod.HHEMTestConfig(foundation=str(foundation))
    )
    torch.nn.init.normal_(model.t5.classifier.weight, std=3.0)  # outputs that differ by input
    model.save_pretrained(folder)
    config = json.loads((folder / "config.json").read_text())
    config["auto_map"] = {
        "AutoConfig": "configuration_hhem.HHEMTestConfig",
        "AutoModelForSequenceClassification": "modeling_hhem.HHEMTestForSequenceClassification",
    }
    (folder / "config.json").write_text(json.dumps(config))
    return folder


def test_hallucination_loads_an_hhem_shaped_model_with_its_own_code(tmp_path: Path) -> None:
    """HHEM needs trust_remote_code and its foundation's tokenizer; the score is its predict."""
    from transformers import AutoModelForSequenceClassification

    folder = _hhem(tmp_path)
    lab = evalnb.evaluate(_lab(), ["hallucination"], model=str(folder), progress=False)
    reference = AutoModelForSequenceClassification.from_pretrained(
        folder, trust_remote_code=True
    ).eval()
    answer = "you are stupid. the cat sat on the mat!"
    p = reference.predict([("the cat sat on the mat.", answer), ("a dog is bad", answer)])
    got = _values(lab, "hallucination")
    assert got[0] == pytest.approx(float(p.max()), abs=MODEL_TOL)
    assert got[1] == pytest.approx(
        float(reference.predict([("good answer", "nice answer.")])[0]), abs=MODEL_TOL
    )
    with pytest.raises(
        ModelUnavailable, match=r"ships its own Python code.*trust_remote_code=True"
    ):
        evalnb.evaluate(
            _lab(), ["hallucination"], model=str(folder), trust_remote_code=False, progress=False
        )


def test_hhem_without_its_foundation_names_what_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _hhem(tmp_path)
    config = json.loads((folder / "config.json").read_text())
    config["foundation"] = "google/flan-t5-base"  # not in this machine's cache
    (folder / "config.json").write_text(json.dumps(config))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(
        ModelUnavailable, match=r"is not available .*builds on .google/flan-t5-base."
    ):
        evalnb.evaluate(_lab(), ["hallucination"], model=str(folder), progress=False)


def test_fairness_bias_runs_an_onnx_export_as_h2o_does(tmp_path: Path) -> None:
    """H2O runs the bias model as an ONNX export: a folder with model.onnx runs on ONNX Runtime,
    and gives what the PyTorch model it was exported from gives."""
    import warnings

    from transformers import (
        DistilBertConfig,
        DistilBertForSequenceClassification,
        DistilBertTokenizerFast,
    )

    onnx_dir = tmp_path / "onnx"
    onnx_dir.mkdir()
    (tmp_path / "vocab.txt").write_text(
        "\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *_WORDS])
    )
    tok = DistilBertTokenizerFast(vocab_file=str(tmp_path / "vocab.txt"))
    torch.manual_seed(6)
    config = DistilBertConfig(
        vocab_size=len(_WORDS) + 5,
        dim=16,
        hidden_dim=32,
        n_layers=1,
        n_heads=2,
        max_position_embeddings=64,
        id2label={0: "Non-biased", 1: "Biased"},
        label2id={"Non-biased": 0, "Biased": 1},
    )
    model = DistilBertForSequenceClassification(config).eval()
    torch.nn.init.normal_(model.classifier.weight, std=3.0)  # outputs that differ by input
    enc = tok(["the cat sat on the mat"], return_tensors="pt")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the exporter's tracing notes
        torch.onnx.export(
            model,
            (enc["input_ids"], enc["attention_mask"]),
            str(onnx_dir / "model.onnx"),
            input_names=["input_ids", "attention_mask"],
            output_names=["logits"],
            dynamo=False,
            dynamic_axes={
                "input_ids": {0: "b", 1: "s"},
                "attention_mask": {0: "b", 1: "s"},
                "logits": {0: "b"},
            },
        )
    config.save_pretrained(onnx_dir)
    tok.save_pretrained(onnx_dir)
    lab = evalnb.evaluate(_lab(), ["fairness_bias"], model=str(onnx_dir), progress=False)
    texts = ["you are stupid. the cat sat on the mat!", "nice answer."]
    with torch.inference_mode():
        logits = model(**tok(texts, padding=True, return_tensors="pt")).logits.numpy()
    p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    expected = np.where(p.argmax(axis=1) == 1, 0.5 + p.max(axis=1) / 2, 0.5 - p.max(axis=1) / 2)
    assert _values(lab, "fairness_bias")[:2] == pytest.approx(expected.tolist(), abs=MODEL_TOL)
    assert len(set(np.round(expected, 4))) == 2  # the two answers score differently
