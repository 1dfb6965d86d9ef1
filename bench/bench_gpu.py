"""GPU throughput in one command, written to one JSON (issue 31).

Usage (on a machine with a CUDA GPU and evalnb installed with a CUDA torch):

    .venv/bin/python bench/bench_gpu.py [--sizes 200000 1000000] [--out bench_gpu.json]

1. Answer similarity end to end (``evalnb.evaluate(lab, ["answer_similarity"])``) with
   all-MiniLM-L6-v2 in bf16 through the model engine, on distinct sentences of 32 tokens
   and an empty embedding cache, at 200k and 1M pairs. Goals on an H100: ≥ 250,000
   sentences/s, 1M pairs in ≤ 10 s, evalnb within 80 % of its own forward pass.
2. The floors and ceilings on the same machine: the model's forward pass alone on
   pre-tokenized batches already on the GPU; the bf16 ceiling (measured matrix-product
   TFLOP/s ÷ the FLOPs of one 32-token sentence); ``SentenceTransformer.encode``; the
   per-sample pattern (two encode calls a pair, as ragas' ``SemanticSimilarity`` runs;
   goal: evalnb ≥ 1,000× it) and ragas itself when installed (``--ragas-pairs``).
3. GPU against CPU (a child process with ``CUDA_VISIBLE_DEVICES=""``) in items/s: the
   BERTScore-style token matching of ``validate_tests``, SummaC zero-shot, toxicity and
   perplexity. Without ``--nli-model`` SummaC uses a classifier of VitaminC's shape
   (ALBERT-xlarge), toxicity one of BERT-base's shape and perplexity a GPT-2-small-shaped
   LM, all with random weights built from their configurations (no download): their
   timings are real, their scores are not, and only timings are reported.
4. The GPU's peak memory.

Without a GPU it runs everything, smaller, on the CPU and says so. Meant to finish in ≤ 6
minutes on an H100.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TOKENS = 32  # MiniLM word pieces a sentence, [CLS] and [SEP] included


def sentences(n: int, seed: int) -> tuple[list[str], list[str]]:
    """``n`` distinct (answer, expected answer) pairs of 32 tokens each (cut by the tokenizer)."""
    import polars as pl  # noqa: PLC0415 - after the CUDA setting of a CPU child

    from bench.many_pairs import many_pairs  # noqa: PLC0415
    from evalnb.models.resolve import model_tokenizer  # noqa: PLC0415

    frame = many_pairs(int(n * 1.3) + 10, seed=seed).select(
        pl.format("{} {}: {}", pl.lit(seed), pl.int_range(pl.len()), c).alias(c)
        for c in ("actual", "expected")
    )
    tokenizer = model_tokenizer("all-MiniLM-L6-v2")

    def cut(texts: list[str]) -> list[str | None]:
        # The characters of the first TOKENS - 3 word pieces and a full stop: with [CLS] and
        # [SEP], TOKENS pieces. A text with fewer pieces gives None.
        out: list[str | None] = []
        for text, enc in zip(texts, tokenizer.encode_batch(texts), strict=True):
            spans = enc.offsets[: TOKENS - 3]
            out.append(text[: spans[-1][1]] + "." if len(spans) == TOKENS - 3 else None)
        return out

    pairs = [
        (a, r)
        for a, r in zip(
            cut(frame.to_series(0).to_list()), cut(frame.to_series(1).to_list()), strict=True
        )
        if a is not None and r is not None
    ]
    if len(pairs) < n:  # a few references are shorter: draw more
        more = sentences(n - len(pairs), seed + 1000)
        pairs += list(zip(*more, strict=True))
    return [a for a, _ in pairs[:n]], [r for _, r in pairs[:n]]


def answer_similarity(sizes: list[int], ragas_pairs: int, out: dict[str, object]) -> None:
    """End-to-end answer similarity at each size, then the floors and ceilings."""
    import numpy as np  # noqa: PLC0415
    import polars as pl  # noqa: PLC0415
    import torch  # noqa: PLC0415

    import evalnb  # noqa: PLC0415
    from evalnb.models.encoder import get_encoder  # noqa: PLC0415
    from evalnb.models.resolve import resolve_model  # noqa: PLC0415

    encoder = get_encoder("all-MiniLM-L6-v2")
    dtype = next(encoder._model.parameters()).dtype
    print(
        f"encoder: {encoder.model_id} on {encoder.device}, {dtype}, "
        f"{encoder.engine.token_budget:,} tokens a batch"
    )
    out["engine"] = {
        "device": encoder.device,
        "dtype": str(dtype),
        "token_budget": encoder.engine.token_budget,
    }

    def lab_of(a: list[str], r: list[str]) -> evalnb.Lab:
        return evalnb.load(
            pl.DataFrame({"prompt": [f"q{i}" for i in range(len(a))], "expected": r, "actual": a})
        )

    warm_a, warm_r = sentences(2_000, seed=2)  # other texts: the timed runs hit no memo
    evalnb.evaluate(
        lab_of(warm_a, warm_r), ["answer_similarity"], progress=False, model="all-MiniLM-L6-v2"
    )
    sync = torch.cuda.synchronize if torch.cuda.is_available() else (lambda: None)
    runs: list[dict[str, float]] = []
    out["answer_similarity"] = runs  # filled as each size is timed
    answers: list[str] = []
    refs: list[str] = []
    ours = None
    for k, n in enumerate(sizes):
        answers, refs = sentences(n, seed=10 + k)
        lab = lab_of(answers, refs)
        sync()
        start = time.perf_counter()
        ours = evalnb.evaluate(lab, ["answer_similarity"], progress=False, model="all-MiniLM-L6-v2")
        sync()
        seconds = time.perf_counter() - start
        runs.append({"pairs": n, "seconds": seconds, "sentences_per_s": 2 * n / seconds})
        print(
            f"evalnb answer_similarity {n:>9,} pairs {seconds:8.2f} s "
            f"{2 * n / seconds:>12,.0f} sentences/s (goal >= 250,000 on an H100)"
        )
    rate = runs[-1]["sentences_per_s"]
    cached_rerun(sizes[0], out, lab_of)

    texts = [*answers, *refs][:400_000]
    forward = _forward_floor(encoder, texts, sync)
    out["forward_floor_sentences_per_s"] = forward
    print(
        f"forward pass alone        {forward:>12,.0f} sentences/s (pre-tokenized, on the device; "
        f"evalnb at {rate / forward:.0%} of it, goal >= 80 %)"
    )
    ceiling = _bf16_ceiling(sync)
    out["ceiling"] = ceiling
    print(
        f"matrix-product ceiling    {ceiling['sentences_per_s']:>12,.0f} sentences/s "
        f"({ceiling['tflops']:.1f} TFLOP/s ÷ {ceiling['gflop_per_sentence']:.2f} GFLOP a "
        "sentence)"
    )
    raw = encoder._model
    sample = texts[:100_000]
    sync()
    start = time.perf_counter()
    raw.encode(sample, batch_size=2048, convert_to_numpy=True, show_progress_bar=False)
    sync()
    st_rate = len(sample) / (time.perf_counter() - start)
    out["sentence_transformers_encode_sentences_per_s"] = st_rate
    print(f"SentenceTransformer.encode {st_rate:>11,.0f} sentences/s (batch 2048)")
    few = 300
    start = time.perf_counter()
    for a, r in zip(answers[:few], refs[:few], strict=True):
        raw.encode([a], show_progress_bar=False)
        raw.encode([r], show_progress_bar=False)
    per_sample = 2 * few / (time.perf_counter() - start)
    out["per_sample_sentences_per_s"] = per_sample
    print(
        f"per-sample pattern        {per_sample:>12,.0f} sentences/s; evalnb "
        f"{rate / per_sample:,.0f}x (goal >= 1,000x)"
    )
    assert ours is not None
    out["ragas"] = _ragas(
        answers[:ragas_pairs],
        refs[:ragas_pairs],
        resolve_model("all-MiniLM-L6-v2")[0],
        rate,
        ours.scores.filter(pl.col("metric") == "answer_similarity")["value"].head(ragas_pairs),
    )
    _ = np


def cached_rerun(n: int, out: dict[str, object], lab_of: Callable[..., Any]) -> None:
    """The first size again in a fresh encoder: every vector read from the cache on disk."""
    import evalnb  # noqa: PLC0415
    from evalnb.models import encoder as enc_mod  # noqa: PLC0415

    first = enc_mod.get_encoder("all-MiniLM-L6-v2")
    if first._cache is not None:
        first._cache.flush()  # the first run's vectors are all on disk
    enc_mod.get_encoder.cache_clear()
    enc_mod.get_encoder("all-MiniLM-L6-v2")  # loaded before the clock starts
    answers, refs = sentences(n, seed=10)  # the first size's texts
    lab = lab_of(answers, refs)
    start = time.perf_counter()
    evalnb.evaluate(lab, ["answer_similarity"], progress=False, model="all-MiniLM-L6-v2")
    seconds = time.perf_counter() - start
    out["cached_rerun"] = {"pairs": n, "seconds": seconds, "sentences_per_s": 2 * n / seconds}
    print(
        f"cached rerun {n:>9,} pairs {seconds:8.2f} s {2 * n / seconds:>12,.0f} sentences/s "
        "(a fresh encoder: every vector from the cache on disk; goal >= 1M vectors/s)",
        flush=True,
    )


def _forward_floor(
    encoder: object, texts: list[str], sync: object, batches: list[dict[str, Any]] | None = None
) -> float:
    """Sentences/s of the model's forward pass alone, its batches tokenized and on the device."""
    import torch  # noqa: PLC0415

    engine = encoder.engine  # type: ignore[attr-defined]
    model = encoder._model  # type: ignore[attr-defined]
    if batches is None:
        batches = [engine.to_device(b.arrays) for b in engine.batches(texts)]
    with torch.inference_mode():
        model[0]({**batches[0], "modality": "text"})
        sync()  # type: ignore[operator]
        start = time.perf_counter()
        for tensors in batches:
            features = model[0]({**tensors, "modality": "text"})
            for module in list(model)[1:]:
                features = module(features)
        sync()  # type: ignore[operator]
    return len(texts) / (time.perf_counter() - start)


def compiled_floor(out: dict[str, object]) -> None:
    """The forward floor again with ``torch.compile`` (kept in the engine only if it gains).

    The same texts and batches as the plain floor; the compile itself (and a recompile for
    the last, narrower batch) is warmed up first and reported apart.
    """
    import torch  # noqa: PLC0415

    from evalnb.models.encoder import get_encoder  # noqa: PLC0415

    encoder = get_encoder("all-MiniLM-L6-v2")
    texts, more = sentences(200_000, seed=3)
    texts += more
    model = encoder._model
    # sentence-transformers 6 keeps the model in ``model`` (``auto_model`` is a read-only
    # property); earlier versions in ``auto_model``.
    slot = (
        "model"
        if isinstance(getattr(type(model[0]), "auto_model", None), property)
        else "auto_model"
    )
    plain = getattr(model[0], slot)
    sync = torch.cuda.synchronize if torch.cuda.is_available() else (lambda: None)
    batches = [encoder.engine.to_device(b.arrays) for b in encoder.engine.batches(texts)]
    results = {}
    for mode in ("default", "max-autotune-no-cudagraphs"):
        setattr(model[0], slot, torch.compile(plain, mode=mode, dynamic=False))
        try:
            start = time.perf_counter()
            with torch.inference_mode():
                for tensors in (batches[0], batches[-1]):
                    model[0]({**tensors, "modality": "text"})
            sync()
            compile_s = time.perf_counter() - start
            rate = _forward_floor(encoder, texts, sync, batches)
        finally:
            setattr(model[0], slot, plain)
        results[mode] = {"compile_s": compile_s, "sentences_per_s": rate}
        out["compiled_forward"] = results
        print(
            f"forward, torch.compile {mode:<27} {rate:>12,.0f} sentences/s "
            f"(compiled in {compile_s:.0f} s)",
            flush=True,
        )
    results["plain"] = {"sentences_per_s": _forward_floor(encoder, texts, sync, batches)}
    print(
        f"forward, plain (same texts)            {results['plain']['sentences_per_s']:>12,.0f}"
        " sentences/s",
        flush=True,
    )


def _bf16_ceiling(sync: object) -> dict[str, float]:
    """Measured matrix-product TFLOP/s (bf16 on a GPU, fp32 on a CPU) and what it allows."""
    import torch  # noqa: PLC0415

    cuda = torch.cuda.is_available()
    size = 8192 if cuda else 1024
    dtype = torch.bfloat16 if cuda else torch.float32
    a = torch.randn(size, size, device="cuda" if cuda else "cpu", dtype=dtype)
    b = torch.randn_like(a)
    a @ b
    sync()  # type: ignore[operator]
    reps = 50 if cuda else 5
    start = time.perf_counter()
    for _ in range(reps):
        a @ b
    sync()  # type: ignore[operator]
    tflops = 2 * size**3 * reps / (time.perf_counter() - start) / 1e12
    # MiniLM-L6: 6 layers of 384 wide, 1,536 in the feed-forward part; a 32-token sentence
    # costs 2 FLOPs a weight a token plus its attention (4 · L² · d a layer).
    layers, width, inner, length = 6, 384, 1536, TOKENS
    weights = layers * (4 * width * width + 2 * width * inner)
    gflop = (2 * weights * length + layers * 4 * length * length * width) / 1e9
    return {"tflops": tflops, "gflop_per_sentence": gflop, "sentences_per_s": tflops * 1e3 / gflop}


def _ragas(
    answers: list[str], refs: list[str], target: str, rate: float, ours: object
) -> dict[str, float] | None:
    import numpy as np  # noqa: PLC0415

    from bench.common import ragas_similarity  # noqa: PLC0415

    try:
        t_ragas, scores = ragas_similarity(answers, refs, target)
    except ImportError:
        print("ragas: not installed here (pip install 'evalnb[bench]' in its own environment)")
        return None
    theirs = np.array(scores)
    ragas_rate = 2 * len(answers) / t_ragas
    delta = float(np.abs(theirs - np.asarray(ours)).max())
    print(
        f"ragas SemanticSimilarity  {t_ragas:8.2f} s  {ragas_rate:>12,.0f} sentences/s on "
        f"{len(answers):,} pairs; evalnb/ragas {rate / ragas_rate:,.0f}x; max |Δ| {delta:.1e}"
    )
    return {
        "sentences_per_s": ragas_rate,
        "evalnb_ratio": rate / ragas_rate,
        "max_abs_delta": delta,
    }


def gpu_vs_cpu(args: argparse.Namespace, out: dict[str, object]) -> None:
    """The model-backed evaluators here (the GPU), then in a CPU-only child process."""
    here = _models(args.tokens_pairs, args.summac_pairs, args.items, args.nli_model)
    out["models"] = {"gpu": here}
    print(f"models on the GPU: {here}", flush=True)
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}
    command = [
        sys.executable,
        __file__,
        "--child-models",
        "--tokens-pairs",
        str(args.cpu_tokens_pairs),
        "--summac-pairs",
        str(args.cpu_summac_pairs),
        "--items",
        str(args.cpu_items),
        *(["--nli-model", args.nli_model] if args.nli_model else []),
    ]
    child = subprocess.run(
        command, env=env, capture_output=True, text=True, check=False, timeout=args.cpu_timeout
    )
    if child.returncode:
        msg = f"the CPU child failed ({child.returncode}): {child.stderr[-3000:]}"
        raise RuntimeError(msg)
    cpu = json.loads(child.stdout.strip().splitlines()[-1])
    for name, unit in UNITS.items():
        print(
            f"{name:<11} GPU {here[name]:>10,.1f} {unit}/s   CPU {cpu[name]:>10,.1f} {unit}/s   "
            f"GPU/CPU {here[name] / cpu[name]:,.1f}x"
        )
    out["models"] = {"gpu": here, "cpu": cpu}


UNITS = {"tokens": "cases", "summac": "summaries", "toxicity": "answers", "perplexity": "answers"}


def _models(
    token_pairs: int, summac_pairs: int, items: int, nli_model: str | None
) -> dict[str, float]:
    """Items/s of token matching, SummaC ZS, toxicity and perplexity on this process's device."""
    import numpy as np  # noqa: PLC0415
    import polars as pl  # noqa: PLC0415

    import evalnb  # noqa: PLC0415
    from evalnb.evaluation.families.models.summac import zs_score  # noqa: PLC0415
    from evalnb.evaluation.families.models.summarization import Summarization  # noqa: PLC0415
    from evalnb.models.hf import load_classifier  # noqa: PLC0415

    answers, sources = sentences(token_pairs, seed=5)
    lab = evalnb.load(
        pl.DataFrame(
            {
                "prompt": [f"q{i}" for i in range(token_pairs)],
                "expected": answers,
                "corpus": [[s, s] for s in sources],
            }
        )
    )
    evalnb.validate_tests(evalnb.load(lab.cases.head(50).drop("case_id")))  # warm
    start = time.perf_counter()
    evalnb.validate_tests(lab)
    rates = {"tokens": token_pairs / (time.perf_counter() - start)}

    work = Path(tempfile.mkdtemp(prefix="evalnb-gpu-models-"))
    folder = nli_model or _vitaminc_shaped(work / "nli")
    # A document of 6 sentences and a summary of 3: SummaC ZS scores each summary sentence
    # against every document sentence (18 NLI pairs a summary). Timed: the NLI pass and the
    # per-summary score, as the summarization evaluator runs them; its completeness metric
    # (a UMAP fit per document, CPU work either way) is left out of the comparison.
    first, second = sentences(summac_pairs * 3, seed=6)
    docs = [first[3 * i : 3 * i + 3] + second[3 * i : 3 * i + 3] for i in range(summac_pairs)]
    sums = [first[3 * i : 3 * i + 3] for i in range(summac_pairs)]
    clf = load_classifier(folder, "summarization")
    ok = np.ones(summac_pairs, dtype=bool)
    Summarization._images(clf, docs[:2], sums[:2], ok[:2])  # warm
    start = time.perf_counter()
    images = Summarization._images(clf, docs, sums, ok)
    [zs_score(images[i]) for i in range(summac_pairs)]
    rates["summac"] = summac_pairs / (time.perf_counter() - start)

    texts, more = sentences(items, seed=7)
    answers_lab = evalnb.load(
        pl.DataFrame(
            {
                "prompt": [f"q{i}" for i in range(items)],
                "actual": [f"{a} {b}" for a, b in zip(texts, more, strict=True)],
            }
        )
    )
    for name, model in (
        ("toxicity", _bert_base_shaped(work / "tox")),
        ("perplexity", _gpt2_shaped(work / "lm")),
    ):
        evalnb.evaluate(
            evalnb.load(
                answers_lab.cases.head(8).drop("case_id").with_columns(actual=pl.col("prompt"))
            ),
            [name],
            model=model,
            progress=False,
        )
        start = time.perf_counter()
        evalnb.evaluate(answers_lab, [name], model=model, progress=False)
        rates[name] = items / (time.perf_counter() - start)
    return rates


def _bert_base_shaped(folder: Path) -> str:
    """A 6-label toxicity classifier of BERT-base's shape, random weights, MiniLM's tokenizer."""
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast  # noqa: PLC0415

    from evalnb.models.resolve import resolve_model  # noqa: PLC0415

    BertTokenizerFast.from_pretrained(resolve_model("all-MiniLM-L6-v2")[0]).save_pretrained(folder)
    labels = ["toxicity", "severe_toxicity", "obscene", "threat", "insult", "identity_attack"]
    config = BertConfig(
        num_labels=6,
        id2label=dict(enumerate(labels)),
        label2id={k: i for i, k in enumerate(labels)},
        problem_type="multi_label_classification",
    )
    BertForSequenceClassification(config).save_pretrained(folder)
    return str(folder)


def _gpt2_shaped(folder: Path) -> str:
    """A causal LM of GPT-2 small's shape, random weights, MiniLM's tokenizer (no download)."""
    from transformers import BertTokenizerFast, GPT2Config, GPT2LMHeadModel  # noqa: PLC0415

    from evalnb.models.resolve import resolve_model  # noqa: PLC0415

    tokenizer = BertTokenizerFast.from_pretrained(resolve_model("all-MiniLM-L6-v2")[0])
    tokenizer.save_pretrained(folder)
    config = GPT2Config(
        vocab_size=tokenizer.vocab_size,
        n_positions=512,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.cls_token_id,
        eos_token_id=tokenizer.sep_token_id,
    )
    GPT2LMHeadModel(config).save_pretrained(folder)
    return str(folder)


def _vitaminc_shaped(folder: Path) -> str:
    """An NLI classifier of VitaminC's architecture (ALBERT-xlarge) with random weights."""
    from transformers import AlbertConfig, AlbertForSequenceClassification, BertTokenizerFast  # noqa: PLC0415

    from evalnb.models.resolve import resolve_model  # noqa: PLC0415

    tokenizer = BertTokenizerFast.from_pretrained(resolve_model("all-MiniLM-L6-v2")[0])
    tokenizer.save_pretrained(folder)
    config = AlbertConfig(
        vocab_size=tokenizer.vocab_size,
        embedding_size=128,
        hidden_size=2048,
        num_hidden_layers=24,
        num_attention_heads=16,
        intermediate_size=8192,
        num_labels=3,
        id2label={0: "entailment", 1: "neutral", 2: "contradiction"},
        label2id={"entailment": 0, "neutral": 1, "contradiction": 2},
    )
    AlbertForSequenceClassification(config).save_pretrained(folder)
    return str(folder)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes",
        type=int,
        nargs="+",
        default=None,
        help="answer-similarity pairs (default 200,000 and 1,000,000 on a GPU, 5,000 on a CPU)",
    )
    parser.add_argument("--ragas-pairs", type=int, default=2_000)
    parser.add_argument("--tokens-pairs", type=int, default=20_000)
    parser.add_argument("--summac-pairs", type=int, default=2_000)
    parser.add_argument("--items", type=int, default=20_000, help="toxicity/perplexity answers")
    parser.add_argument("--cpu-tokens-pairs", type=int, default=1_000)
    parser.add_argument("--cpu-summac-pairs", type=int, default=20)
    parser.add_argument("--cpu-items", type=int, default=200)
    parser.add_argument(
        "--compile",
        action="store_true",
        help="also time the forward floor under torch.compile (GPU only)",
    )
    parser.add_argument(
        "--cpu-timeout", type=float, default=240, help="seconds the CPU child may take"
    )
    parser.add_argument("--nli-model", default=None, help="a local NLI model folder for SummaC")
    parser.add_argument("--out", default="bench_gpu.json", help="where the JSON goes")
    parser.add_argument("--child-models", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    # Warnings (no NLI model for validate_tests, ragas' deprecations) are not the figures.
    warnings.simplefilter("ignore")
    os.environ["EVALNB_CACHE_DIR"] = tempfile.mkdtemp(prefix="evalnb-gpu-cache-")  # empty cache
    if args.child_models:
        print(json.dumps(_models(args.tokens_pairs, args.summac_pairs, args.items, args.nli_model)))
        return
    import torch  # noqa: PLC0415

    gpu = torch.cuda.is_available()
    device = torch.cuda.get_device_name(0) if gpu else "no GPU: every figure is a CPU one"
    print(f"device: {device}", flush=True)
    out: dict[str, object] = {"device": device, "torch": torch.__version__}
    started = time.perf_counter()

    def stage(name: str, work: Callable[[], None]) -> None:
        # Device time is scarce and a run is not easily repeated: a stage that fails is
        # recorded with its error and the others still run; the JSON is written after each.
        try:
            work()
        except Exception as exc:  # reported in the JSON and printed, not swallowed
            out.setdefault("errors", {})[name] = traceback.format_exc()  # type: ignore[index]
            print(f"{name} failed: {exc!r}", flush=True)
        out["seconds"] = time.perf_counter() - started
        Path(args.out).write_text(json.dumps(out, indent=1))

    stage(
        "answer_similarity",
        lambda: answer_similarity(
            args.sizes or ([200_000, 1_000_000] if gpu else [5_000]), args.ragas_pairs, out
        ),
    )
    if gpu:
        stage("models", lambda: gpu_vs_cpu(args, out))
        out["gpu_peak_memory_gb"] = torch.cuda.max_memory_allocated() / 1e9
        print(f"GPU peak memory {out['gpu_peak_memory_gb']:.2f} GB", flush=True)
        if args.compile:  # last: its compiled graphs would count in the peak above
            stage("compiled_forward", lambda: compiled_floor(out))
    else:

        def cpu_models() -> None:
            out["models"] = {"cpu": _models(200, 10, 100, args.nli_model)}
            print(f"models on the CPU: {out['models']}")

        stage("models", cpu_models)
    stage("done", lambda: None)
    print(f"written: {args.out} ({out['seconds']:.0f} s)")


if __name__ == "__main__":
    main()
