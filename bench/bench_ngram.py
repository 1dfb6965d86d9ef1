"""BLEU, ROUGE and PII through ``evalnb.evaluate`` against the peers used the fastest way.

Usage: .venv/bin/python bench/bench_ngram.py [--pairs 20000] [--runs 3] [--corpus real]
       [--pii-texts 200000] [--no-cold]

Warm: each side is warmed up on 50 pairs, then timed as the median of ``--runs`` runs.
evalnb runs through its public API on a fresh lab every run (``evalnb.evaluate`` and its
``scores``); the lab is loaded (``evalnb.load`` of a frame) before each run, outside the
timing, as the peers get their lists of texts ready-made, and the loading time is printed.
The peers reuse one scorer object (``sacrebleu.metrics.BLEU``,
``rouge_score.RougeScorer``), as a user who knows them would. Cold: a fresh interpreter
per side (imports, reading the pairs from Parquet, scoring), median of three.

The pairs are real sentences (``evalnb_testkit/real_pairs.py``): the shipped docstrings'
(``--corpus real``), the installed packages' READMEs (``--corpus packages``) or a folder or
file of your own (``--corpus PATH``); ``--corpus synthetic`` draws them instead.
Prints seconds, the ratio and the largest difference from the peer over every pair.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

import numpy as np
import polars as pl
import sacrebleu
from rouge_score import rouge_scorer
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a
from sacrebleu.tokenizers.tokenizer_re import TokenizerRegexp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import evalnb
from bench.common import cold_seconds, evalnb_warm, ratios, warm_median, write_pairs
from evalnb.evaluation.families.text import leakage as lk
from evalnb.evaluation.families.text.leak_scan import EMAIL, SSN
from evalnb.text.synthetic import pairs
from evalnb_testkit.real_pairs import real_pairs

_ROUGE = ("rouge1", "rouge2", "rougeL")


def _frame(cands: list[str], refs: list[str] | None = None) -> pl.DataFrame:
    columns = {"prompt": [str(i) for i in range(len(cands))], "actual": cands}
    return pl.DataFrame(columns if refs is None else {**columns, "expected": refs})


def _warm_up(cands: list[str], refs: list[str], evaluator: str, **params: object) -> None:
    """Imports and compiled kernels, on a few pairs."""
    evalnb.evaluate(evalnb.load(_frame(cands, refs)), [evaluator], progress=False, **params)


Row = tuple[str, float, float, float, float]  # name, peer s, ours s, load s, max |diff|


def bleu_row(cands: list[str], refs: list[str], runs: int) -> Row:
    """Sacrebleu's sentence BLEU: a reused ``sacrebleu.metrics.BLEU`` against evalnb's."""
    bleu = sacrebleu.metrics.BLEU(effective_order=True)  # what sacrebleu.sentence_bleu builds

    def peer() -> np.ndarray:
        # sacrebleu remembers up to 65,536 tokenized lines: with the same texts every run,
        # the later runs would time a cache lookup. Each run starts empty, as ours does.
        Tokenizer13a.__call__.cache_clear()
        TokenizerRegexp.__call__.cache_clear()
        return np.array(
            [bleu.sentence_score(c, [r]).score / 100 for c, r in zip(cands, refs, strict=True)]
        )

    peer_s, theirs = warm_median(peer, runs)
    # The sacrebleu metric alone, as the peer computes BLEU alone (metrics=: neither H2O's
    # BLEU-1..4 nor chrF is computed; tokenizer="13a" is the sacrebleu-compatible setting).
    # tokenize="13a" is the peer's: evalnb's default picks a tokenizer by each row's
    # language (zh for Chinese), which sacrebleu does only when told the target language.
    ours_s, load_s, scores = evalnb_warm(
        _frame(cands, refs),
        "bleu",
        runs,
        tokenizer="13a",
        tokenize="13a",
        metrics={"bleu": ["sacrebleu"]},
    )
    diff = float(np.max(np.abs(scores["sacrebleu"].to_numpy() - theirs)))
    return ("sacrebleu (BLEU object reused)", peer_s, ours_s, load_s, diff)


def rouge_row(cands: list[str], refs: list[str], runs: int) -> Row:
    """ROUGE-1/2/L with the stemmer: a reused ``RougeScorer`` against evalnb's."""
    scorer = rouge_scorer.RougeScorer(list(_ROUGE), use_stemmer=True)  # H2O's setting

    def peer() -> list[dict[str, object]]:
        return [scorer.score(r, c) for c, r in zip(cands, refs, strict=True)]

    peer_s, theirs = warm_median(peer, runs)
    # Nothing is cached between runs: each stems its vocabulary afresh, as the peer does.
    ours_s, load_s, mine = evalnb_warm(_frame(cands, refs), "rouge", runs, use_stemmer=True)
    diff = max(
        float(np.max(np.abs(mine[k].to_numpy() - np.array([s[t].fmeasure for s in theirs]))))  # type: ignore[attr-defined]
        for k, t in zip(("rouge_1", "rouge_2", "rouge_l"), _ROUGE, strict=True)
    )
    return ("ROUGE-1/2/L, stemmer (RougeScorer reused)", peer_s, ours_s, load_s, diff)


def _re_loop(text: str) -> bool:
    """The peer: H2O's three patterns and allow-lists with Python ``re``, text by text."""
    return (
        any(
            m.group(0).partition("@")[0] not in lk._EMAIL_USERS
            and m.group(0).partition("@")[2] not in lk._EMAIL_DOMAINS
            for m in EMAIL.finditer(text)
        )
        or any(
            m.group(0).replace("-", "").replace(" ", "").replace(".", "") not in lk._TEST_CARDS
            for m in lk._CARD.finditer(text)
        )
        or any(m.group(0)[1:-1].replace("-", "") not in lk._TEST_SSNS for m in SSN.finditer(text))
    )


def _pii(cands: list[str], n: int, runs: int) -> Row:
    """PII leakage on ``n`` texts, a tenth of them carrying an e-mail, a card or an SSN."""
    rng = random.Random(7)
    texts = [cands[i % len(cands)] for i in range(n)]
    for i in rng.sample(range(n), n // 10):
        texts[i] += rng.choice(
            [
                " mail jane.smith@acme.com now",
                " card 4532 0151 2365 8463 ok",
                " ssn 123-45-6789 here",
            ]
        )
    peer_s, theirs = warm_median(lambda: [_re_loop(t) for t in texts], runs)
    frame = _frame(texts)
    ours_s, load_s, scores = evalnb_warm(frame, "pii_leakage", runs)
    mine = scores.sort("case_id")["model_passes"].to_numpy()
    found = dict(zip(frame["prompt"], theirs, strict=True))
    ids = evalnb.load(frame).rows().select("case_id", "prompt").sort("case_id")["prompt"]
    wrong = sum((v < 1) != found[p] for v, p in zip(mine, ids, strict=True))
    return (f"PII leakage, {n:,} texts (Python re loop)", peer_s, ours_s, load_s, float(wrong))


_COLD_OURS = """
import evalnb, polars as pl
f = pl.read_parquet(DATA).with_columns(prompt=pl.int_range(pl.len()).cast(pl.String))
evalnb.evaluate(evalnb.load(f), [{name!r}], progress=False, **{params!r}).scores
"""
_COLD_PEER = {
    "bleu": """
import sacrebleu, polars as pl
f = pl.read_parquet(DATA)
bleu = sacrebleu.metrics.BLEU(effective_order=True)
[bleu.sentence_score(c, [r]).score for c, r in zip(f["actual"], f["expected"])]
""",
    "rouge": """
import polars as pl
from rouge_score import rouge_scorer
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a
from sacrebleu.tokenizers.tokenizer_re import TokenizerRegexp
f = pl.read_parquet(DATA)
scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)
[scorer.score(r, c) for c, r in zip(f["actual"], f["expected"])]
""",
}


def main() -> None:
    """Print the warm table, then the cold one."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pairs", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--corpus",
        default="real",
        help="real (the shipped docstring sentences), packages (the installed packages' "
        "READMEs), synthetic, or a path to a .txt/.md file or folder of them",
    )
    parser.add_argument("--pii-texts", type=int, default=200_000)
    parser.add_argument("--no-cold", action="store_true")
    args = parser.parse_args()
    if args.corpus == "synthetic":
        cands, refs = pairs(args.pairs, seed=2026)
    else:
        source = "docstrings" if args.corpus == "real" else args.corpus
        cands, refs = real_pairs(args.pairs, seed=2026, source=source)
    _warm_up(cands[:50], refs[:50], "bleu", tokenizer="13a", sacrebleu=True)
    _warm_up(cands[:50], refs[:50], "rouge")
    _warm_up(cands[:50], refs[:50], "pii_leakage")
    rows = [
        bleu_row(cands, refs, args.runs),
        rouge_row(cands, refs, args.runs),
        _pii(cands, args.pii_texts, args.runs),
    ]
    print(
        f"pairs: {args.pairs:,} ({args.corpus}); warm, median of {args.runs} runs each; "
        "evalnb: evalnb.evaluate(...).scores on a fresh lab per run, load s its loading"
    )
    print(
        f"{'metric (peer)':<44}{'peer s':>8}{'ours s':>8}{'load s':>8}  {'ratio':<30}{'max |Δ|':>8}"
    )
    for name, p, o, load, d in rows:
        print(f"{name:<44}{p:>8.3f}{o:>8.3f}{load:>8.3f}  {ratios(p, o, load):<30}{d:>8.1e}")
    if args.no_cold:
        return
    data = write_pairs(cands, refs)
    print("cold: a fresh interpreter per side (imports + read Parquet + score), median of 3")
    for name, params in (("bleu", {"tokenizer": "13a", "sacrebleu": True}), ("rouge", {})):
        ours_s = cold_seconds(_COLD_OURS.format(name=name, params=params), data)
        peer_s = cold_seconds(_COLD_PEER[name], data)
        print(f"{name:<46}{peer_s:>9.2f}{ours_s:>9.2f}{peer_s / ours_s:>7.1f}x")


if __name__ == "__main__":
    main()
