"""GPU throughput in one command: answer similarity, BERTScore-style matching and SummaC.

Usage (on a machine with a CUDA GPU and evalnb installed with a CUDA torch):

    .venv/bin/python bench/bench_gpu.py [--pairs 200000] [--ragas-pairs 2000]

1. Answer similarity end to end (``evalnb.evaluate(lab, ["answer_similarity"])``) with
   all-MiniLM-L6-v2, which the encoder runs in bf16 at batch 256 on a GPU, on distinct
   sentences of about 32 tokens and an empty embedding cache. Issue 21's targets on an
   H100: ≥ 250k sentences/s, and ≥ 300× ragas ``SemanticSimilarity`` on the same machine
   (ragas is timed on ``--ragas-pairs`` pairs when it is installed: ``pip install
   'evalnb[bench]'`` in an environment of its own). The raw ``SentenceTransformer.encode``
   of the same texts in bf16 is printed as the floor.
2. The BERTScore-style token matching of test validation (``evalnb.validate_tests``) and
3. SummaC zero-shot faithfulness (the ``summarization`` evaluator) on the GPU and on the
   CPU (a child process with ``CUDA_VISIBLE_DEVICES=""``), as items/s and their ratio.
   SummaC needs an NLI model; without ``--nli-model`` one of VitaminC's shape
   (ALBERT-xlarge, random weights, built from its configuration, no download) is used: its
   timings are real, its scores are not, and only the timings are printed.

Without a GPU it runs everything on the CPU and says so.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TOKENS = 32  # MiniLM word pieces a sentence, [CLS] and [SEP] included


def sentences(n: int, seed: int) -> tuple[list[str], list[str]]:
    """``n`` distinct (answer, expected answer) pairs of 32 tokens each (cut by the tokenizer)."""
    import polars as pl  # noqa: PLC0415 - after the CUDA setting of a CPU child

    from bench.many_pairs import many_pairs  # noqa: PLC0415
    from evalnb.models.encoder import model_tokenizer  # noqa: PLC0415

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

    pairs = [(a, r) for a, r in zip(cut(frame.to_series(0).to_list()),
                                    cut(frame.to_series(1).to_list()), strict=True)
             if a is not None and r is not None]  # fmt: skip
    if len(pairs) < n:  # a few references are shorter: draw more
        more = sentences(n - len(pairs), seed + 1000)
        pairs += list(zip(*more, strict=True))
    return [a for a, _ in pairs[:n]], [r for _, r in pairs[:n]]


def answer_similarity(n: int, ragas_pairs: int) -> None:
    import numpy as np  # noqa: PLC0415
    import polars as pl  # noqa: PLC0415
    import torch  # noqa: PLC0415

    import evalnb  # noqa: PLC0415
    from evalnb.models.encoder import get_encoder, resolve_model  # noqa: PLC0415

    encoder = get_encoder("all-MiniLM-L6-v2")
    dtype = next(encoder._model.parameters()).dtype
    print(f"encoder: {encoder.model_id} on {encoder.device}, {dtype}, batch {encoder.batch_size}")
    answers, refs = sentences(n, seed=1)
    tokens = encoder._model.tokenizer(answers[:1000])["input_ids"]
    print(f"{n:,} pairs, {2 * n:,} distinct sentences, "
          f"{np.mean([len(t) for t in tokens]):.1f} tokens on average ([CLS], [SEP] included)")  # fmt: skip

    def lab_of(a: list[str], r: list[str]) -> evalnb.Lab:
        return evalnb.load(pl.DataFrame({"prompt": [f"q{i}" for i in range(len(a))],
                                         "expected": r, "actual": a}))  # fmt: skip

    warm_a, warm_r = sentences(2_000, seed=2)  # other texts: the timed run hits no memo
    evalnb.evaluate(lab_of(warm_a, warm_r), ["answer_similarity"], progress=False,
                    model="all-MiniLM-L6-v2")  # fmt: skip
    lab = lab_of(answers, refs)
    sync = torch.cuda.synchronize if torch.cuda.is_available() else (lambda: None)
    sync()
    start = time.perf_counter()
    ours = evalnb.evaluate(lab, ["answer_similarity"], progress=False, model="all-MiniLM-L6-v2")
    sync()
    t_ours = time.perf_counter() - start
    rate = 2 * n / t_ours
    print(f"evalnb answer_similarity  {t_ours:8.2f} s  {rate:>12,.0f} sentences/s "
          f"(target ≥ 250,000 on an H100)")  # fmt: skip

    raw = encoder._model
    texts = [*answers, *refs]
    sync()
    start = time.perf_counter()
    raw.encode(texts, batch_size=encoder.batch_size, convert_to_numpy=True, show_progress_bar=False)
    sync()
    t_raw = time.perf_counter() - start
    print(f"raw encode (floor)        {t_raw:8.2f} s  {len(texts) / t_raw:>12,.0f} sentences/s "
          f"(evalnb at {t_raw / t_ours:.0%} of it)")  # fmt: skip
    _ragas(answers[:ragas_pairs], refs[:ragas_pairs], resolve_model("all-MiniLM-L6-v2")[0], rate,
           ours.scores.filter(pl.col("metric") == "answer_similarity")["value"].head(ragas_pairs))  # fmt: skip


def _ragas(answers: list[str], refs: list[str], target: str, rate: float, ours: object) -> None:
    import numpy as np  # noqa: PLC0415

    from bench.common import ragas_similarity  # noqa: PLC0415

    try:
        t_ragas, scores = ragas_similarity(answers, refs, target)
    except ImportError:
        print("ragas: not installed here (pip install 'evalnb[bench]' in its own environment)")
        return
    theirs = np.array(scores)
    ragas_rate = 2 * len(answers) / t_ragas
    print(f"ragas SemanticSimilarity  {t_ragas:8.2f} s  {ragas_rate:>12,.0f} sentences/s on "
          f"{len(answers):,} pairs; evalnb/ragas {rate / ragas_rate:,.0f}x (target ≥ 300x); "
          f"max |Δ| {np.abs(theirs - np.asarray(ours)).max():.1e}")  # fmt: skip


def gpu_vs_cpu(args: argparse.Namespace) -> None:
    """BERTScore-style matching and SummaC here (the GPU), then in a CPU-only child process."""
    here = _models(args.tokens_pairs, args.summac_pairs, args.nli_model)
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}
    command = [sys.executable, __file__, "--child-models", "--tokens-pairs",
               str(args.cpu_tokens_pairs), "--summac-pairs", str(args.cpu_summac_pairs),
               *(["--nli-model", args.nli_model] if args.nli_model else [])]  # fmt: skip
    child = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    cpu = json.loads(child.stdout.strip().splitlines()[-1])
    for name, unit in (("tokens", "cases"), ("summac", "summaries")):
        print(f"{name:<7} GPU {here[name]:>10,.1f} {unit}/s   CPU {cpu[name]:>10,.1f} {unit}/s   "
              f"GPU/CPU {here[name] / cpu[name]:,.1f}x")  # fmt: skip


def _models(token_pairs: int, summac_pairs: int, nli_model: str | None) -> dict[str, float]:
    """Items/s of token matching (validate_tests) and SummaC ZS in this process's device."""
    import numpy as np  # noqa: PLC0415
    import polars as pl  # noqa: PLC0415

    import evalnb  # noqa: PLC0415
    from evalnb.evaluation.summac import zs_score  # noqa: PLC0415
    from evalnb.evaluation.summarization import Summarization  # noqa: PLC0415
    from evalnb.models.hf import load_classifier  # noqa: PLC0415

    answers, sources = sentences(token_pairs, seed=5)
    lab = evalnb.load(pl.DataFrame({"prompt": [f"q{i}" for i in range(token_pairs)],
                                    "expected": answers,
                                    "corpus": [[s, s] for s in sources]}))  # fmt: skip
    evalnb.validate_tests(evalnb.load(lab.cases.head(50).drop("case_id")))  # warm
    start = time.perf_counter()
    evalnb.validate_tests(lab)
    tokens = token_pairs / (time.perf_counter() - start)

    folder = nli_model or _vitaminc_shaped(Path(tempfile.mkdtemp(prefix="evalnb-nli-")))
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
    return {"tokens": tokens, "summac": summac_pairs / (time.perf_counter() - start)}


def _vitaminc_shaped(folder: Path) -> str:
    """An NLI classifier of VitaminC's architecture (ALBERT-xlarge) with random weights."""
    from transformers import AlbertConfig, AlbertForSequenceClassification, BertTokenizerFast  # noqa: PLC0415

    from evalnb.models.encoder import resolve_model  # noqa: PLC0415

    tokenizer = BertTokenizerFast.from_pretrained(resolve_model("all-MiniLM-L6-v2")[0])
    tokenizer.save_pretrained(folder)
    config = AlbertConfig(vocab_size=tokenizer.vocab_size, embedding_size=128, hidden_size=2048,
                          num_hidden_layers=24, num_attention_heads=16, intermediate_size=8192,
                          num_labels=3, id2label={0: "entailment", 1: "neutral", 2: "contradiction"},
                          label2id={"entailment": 0, "neutral": 1, "contradiction": 2})  # fmt: skip
    AlbertForSequenceClassification(config).save_pretrained(folder)
    return str(folder)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=None,
                        help="answer-similarity pairs (default 200,000 on a GPU, 5,000 on a CPU)")  # fmt: skip
    parser.add_argument("--ragas-pairs", type=int, default=2_000)
    parser.add_argument("--tokens-pairs", type=int, default=20_000)
    parser.add_argument("--summac-pairs", type=int, default=2_000)
    parser.add_argument("--cpu-tokens-pairs", type=int, default=1_000)
    parser.add_argument("--cpu-summac-pairs", type=int, default=20)
    parser.add_argument("--nli-model", default=None, help="a local NLI model folder for SummaC")
    parser.add_argument("--child-models", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    # Warnings (no NLI model for validate_tests, ragas' deprecations) are not the figures.
    warnings.simplefilter("ignore")
    os.environ["EVALNB_CACHE_DIR"] = tempfile.mkdtemp(prefix="evalnb-gpu-cache-")  # empty cache
    if args.child_models:
        print(json.dumps(_models(args.tokens_pairs, args.summac_pairs, args.nli_model)))
        return
    import torch  # noqa: PLC0415

    gpu = torch.cuda.is_available()
    print(
        f"device: {torch.cuda.get_device_name(0) if gpu else 'no GPU: every figure is a CPU one'}"
    )
    answer_similarity(args.pairs or (200_000 if gpu else 5_000), args.ragas_pairs)
    if gpu:
        gpu_vs_cpu(args)
    else:
        rates = _models(200, 10, args.nli_model)
        print(
            f"tokens {rates['tokens']:,.1f} cases/s, summac {rates['summac']:,.2f} summaries/s (CPU)"
        )


if __name__ == "__main__":
    main()
