"""BLEU against sacrebleu (sentence BLEU) and NLTK (H2O's per-order BLEU) on every pair."""

from __future__ import annotations

import random
import warnings

import numpy as np
import polars as pl
import pyarrow as pa
import pytest
import sacrebleu
from hypothesis import given, settings
from hypothesis import strategies as st
from nltk.translate.bleu_score import sentence_bleu as nltk_bleu
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

import evalnb
from evalnb.evaluation.families.text.bleu import sentence_bleu, single_order_bleu
from evalnb.text.ngram import (
    TokenIds,
    id_ngram_stats,
    ids_13a,
    ids_13a_segments,
    ngram_stats,
    tokenize_13a,
)
from evalnb.text.synthetic import ADVERSARIAL, pairs
from evalnb_testkit.budget import examples
from evalnb_testkit.nltk_reference import nltk_word_tokenize


def _corpus() -> tuple[list[str], list[list[str]]]:
    cands, refs = pairs(1500, seed=7)
    rng = random.Random(3)
    multi = [[r] if rng.random() < 0.7 else [r, rng.choice(refs)] for r in refs]
    adv = list(ADVERSARIAL)
    for a in adv:  # every adversarial string as candidate and as reference
        cands.append(a)
        multi.append([rng.choice(adv), "the model answer"])
        cands.append(rng.choice(adv) + " the model")
        multi.append([a])
    return cands, multi


def test_tokenizer_is_sacrebleu_13a() -> None:
    cands, refs = pairs(3000, seed=1)
    texts = cands + refs + list(ADVERSARIAL)
    tok = Tokenizer13a()
    assert tokenize_13a(pl.Series(texts)).to_list() == [tok(t.rstrip()).split() for t in texts]


def test_token_ids_are_13a_tokens() -> None:
    # The hot path (13a rules, then a compiled split and interning) against sacrebleu, for a
    # column needing the character replacements and a plain one that skips them.
    cands, refs = pairs(3000, seed=1)
    tok = Tokenizer13a()
    mixed = [*cands, *ADVERSARIAL, "\u00a0nbsp\u2003em\u3000ideo\x1cfs", "", None]
    tokens = ids_13a(pl.Series(mixed), pl.Series(refs))
    assert tokens.lists(0) == [tok((t or "").rstrip()).split() for t in mixed]
    assert tokens.lists(1) == [tok(t.rstrip()).split() for t in refs]
    words = tokens.vocab.to_pylist() if tokens.vocab is not None else []
    assert len(set(words)) == len(words) == int(tokens.ids.max()) + 1  # one id per distinct token


def test_id_statistics_equal_list_statistics() -> None:
    cands, multi = _corpus()
    flat = [r for refs in multi for r in refs]
    counts = np.array([len(r) for r in multi])
    by_ids = id_ngram_stats(ids_13a(pl.Series(cands), pl.Series(flat)), counts)
    by_lists = ngram_stats(
        tokenize_13a(pl.Series(cands)),
        pl.Series([tokenize_13a(pl.Series(r)).to_list() for r in multi]),
    )
    for field in ("hyp_len", "ref_len", "correct", "total"):
        assert np.array_equal(getattr(by_ids, field), getattr(by_lists, field)), field


@pytest.mark.parametrize("smooth", ["exp", "floor", "add-k", "none"])
def test_sentence_bleu_matches_sacrebleu_on_every_pair(smooth: str) -> None:
    cands, refs = _corpus()
    hyp = tokenize_13a(pl.Series(cands))
    ref_tok = pl.Series([tokenize_13a(pl.Series(r)).to_list() for r in refs])
    ours = sentence_bleu(ngram_stats(hyp, ref_tok), smooth)
    theirs = np.array(
        [
            sacrebleu.sentence_bleu(c, r, smooth_method=smooth).score / 100
            for c, r in zip(cands, refs, strict=True)
        ]
    )
    assert np.max(np.abs(ours - theirs)) <= 1e-9


def test_single_order_bleu_matches_nltk() -> None:
    cands, refs = _corpus()
    hyp = tokenize_13a(pl.Series(cands))
    ref_lists = [tokenize_13a(pl.Series(r)).to_list() for r in refs]
    stats = ngram_stats(hyp, pl.Series(ref_lists))
    for n in range(1, 5):
        weights = tuple(1.0 if k == n - 1 else 0.0 for k in range(4))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # NLTK warns on zero counts
            theirs = np.array(
                [
                    nltk_bleu(r, h, weights=weights) if h and any(r) else 0.0
                    for h, r in zip(hyp.to_list(), ref_lists, strict=True)
                ]
            )
        assert np.max(np.abs(single_order_bleu(stats, n) - theirs)) <= 1e-9


def test_evaluator_rows_references_and_errors() -> None:
    frame = pl.DataFrame(
        {
            "prompt": ["a", "b", "c", "d"],
            "expected": [
                ["the cat is on the mat", "there is a cat"],
                ["a b"],
                [],
                ["Hello world."],
            ],
            "actual": ["the cat sat on the mat", "a b c", "x", "MODEL HOST INTERNAL ERROR: x"],
            "error": [None, None, None, "MODEL HOST INTERNAL ERROR: x"],
        }
    )
    lab = evalnb.evaluate(evalnb.load(frame), ["bleu"], progress=False, sacrebleu=True)
    wide = lab.scores.pivot(on="metric", index="case_id", values="value")
    assert wide["sacrebleu"][0] == pytest.approx(
        sacrebleu.sentence_bleu(
            "the cat sat on the mat", ["the cat is on the mat", "there is a cat"]
        ).score
        / 100
    )
    assert wide["bleu_1"].to_list()[2:] == [None, 0.0]  # no reference: not computable
    assert lab.metrics.filter(pl.col("primary"))["metric"].to_list() == ["bleu_1"]
    lower = evalnb.evaluate(evalnb.load(frame), ["bleu"], lowercase=True, progress=False)
    assert lower.scores["params"][0] != lab.scores["params"][0]
    # By default only H2O's orders are scored; the leaderboard shows no empty sacrebleu.
    assert set(lower.scores["metric"]) == {"bleu_1", "bleu_2", "bleu_3", "bleu_4"}
    assert "sacrebleu" not in set(lower.leaderboard(n_boot=50)["metric"])


def test_large_vocabulary_uses_per_pair_ids() -> None:
    # Over 2**15 distinct tokens: n-gram keys are packed from per-pair ids instead.
    rng = random.Random(5)
    words = [f"w{i}" for i in range(40000)]
    cands = [" ".join(rng.choices(words, k=20)) for _ in range(2500)]
    refs = [" ".join(c.split()[:10] + rng.choices(words, k=8)) for c in cands]
    hyp = tokenize_13a(pl.Series(cands))
    stats = ngram_stats(hyp, pl.Series([[t] for t in tokenize_13a(pl.Series(refs)).to_list()]))
    ours = sentence_bleu(stats)
    theirs = np.array(
        [sacrebleu.sentence_bleu(c, [r]).score / 100 for c, r in zip(cands, refs, strict=True)]
    )
    assert np.max(np.abs(ours - theirs)) <= 1e-9


def _h2o_bleu(actual: str, expected: str, n: int) -> float:
    """H2O's BLEU-n, transcribed from h2o-sonar: NLTK word_tokenize on both texts, then
    sentence_bleu with one-hot weights and no smoothing (NLTK itself, its own data)."""
    tokenize = nltk_word_tokenize()
    weights = tuple(1.0 if k == n - 1 else 0.0 for k in range(4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NLTK warns on zero counts
        return float(nltk_bleu([tokenize(expected)], tokenize(actual), weights=weights))


def test_bleu_n_default_is_h2o_nltk_bleu() -> None:
    cands, refs = pairs(400, seed=9)
    cands += ["Don't panic.", "Mr. Smith paid $3.50. He left!", "", '"Quoted," she said -- twice.']
    refs += [
        "Do not panic!",
        "Mr. Smith paid 3.50 dollars. Then he left.",
        "x",
        "She said it twice.",
    ]
    frame = pl.DataFrame(
        {
            "prompt": [str(i) for i in range(len(cands))],
            "actual": cands,
            "expected": [[r] for r in refs],
        }
    )
    lab = evalnb.evaluate(evalnb.load(frame), ["bleu"], progress=False)
    for n in range(1, 5):
        theirs = np.array([_h2o_bleu(c, r, n) for c, r in zip(cands, refs, strict=True)])
        ours = np.array(lab.scores.filter(pl.col("metric") == f"bleu_{n}")["value"].to_list())
        assert np.max(np.abs(ours - theirs)) <= 1e-9
    first = lab.scores.filter(pl.col("metric") == "bleu_1")["value"].to_list()
    assert first[400] == pytest.approx(0.5)  # the example: 0.239 with 13a tokens


def test_13a_tokens_stay_available_under_a_parameter() -> None:
    frame = pl.DataFrame(
        {"prompt": ["a"], "actual": ["Don't panic."], "expected": [["Do not panic!"]]}
    )
    lab = evalnb.evaluate(evalnb.load(frame), ["bleu"], tokenizer="13a", progress=False)
    value = lab.scores.filter(pl.col("metric") == "bleu_1")["value"][0]
    hyp = tokenize_13a(pl.Series(["Don't panic."])).to_list()[0]
    ref = tokenize_13a(pl.Series(["Do not panic!"])).to_list()[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert value == pytest.approx(nltk_bleu([ref], hyp, weights=(1, 0, 0, 0)), abs=1e-9)


def test_token_ids_worst_case_density() -> None:
    # One-byte texts hold the most tokens per byte the id buffer must fit.
    texts = ["a"] * 2000 + ["b c d e"] * 10 + ["é", "", " "] * 300
    assert ids_13a(pl.Series(texts)).lists(0) == [t.split() for t in texts]


_SPACES = "".join(chr(c) for c in range(0x3001) if chr(c).isspace())


@settings(max_examples=examples(300), deadline=None)
@given(
    st.lists(
        st.text(
            alphabet=st.sampled_from(_SPACES) | st.characters(exclude_categories=("Cs",)),
            max_size=12,
        )
    )
)
def test_split_agrees_with_python_split(texts: list[str]) -> None:
    # The compiled splitter's white space is Python's str.split's, Unicode included.
    assert TokenIds.split([pl.Series(texts, dtype=pl.String)]).lists(0) == [
        t.split() for t in texts
    ]


# What the 13a rules and replacements act on, some digits, letters, multi-byte characters.
_13A_ALPHABET = ".,-'0123456789ab/:@{~[`!&(+<>;\"\n\x1c\u00e9\u00a0\u2003\u4e2d "


@settings(max_examples=examples(400), deadline=None)
@given(
    st.lists(
        st.text(alphabet=_13A_ALPHABET, max_size=16)
        | st.sampled_from(
            ["<skipped>", "&quot;x&amp;", "a-\nb", "1.,2", "x.,.y", "3--4", ".5", "5."]
        ),
        max_size=8,
    )
)
def test_compiled_13a_rules_agree_with_sacrebleu(texts: list[str]) -> None:
    # Each rule's byte scan against sacrebleu's regexes, on texts dense in what they match.
    tok = Tokenizer13a()
    assert ids_13a(pl.Series(texts, dtype=pl.String)).lists(0) == [
        tok(t.rstrip()).split() for t in texts
    ]


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.text(alphabet=_13A_ALPHABET, max_size=16), max_size=8))
def test_column_13a_rules_agree_with_sacrebleu(texts: list[str]) -> None:
    # The Polars expression (used where tokens are wanted as lists) on the same texts.
    tok = Tokenizer13a()
    assert tokenize_13a(pl.Series(texts, dtype=pl.String)).to_list() == [
        tok(t.rstrip()).split() for t in texts
    ]


@pytest.mark.parametrize("rules13a", [True, False])
def test_interning_in_blocks_gives_the_single_thread_ids(rules13a: bool) -> None:
    from evalnb.text.intern import joined_buffers, split_intern, split_intern_serial
    from evalnb.text.rules13a import replaced_13a

    # Enough distinct tokens that every block's table and the merge's grow several times;
    # words shared between blocks and words first seen in a late block.
    rng = np.random.default_rng(7)
    words = np.array([f"w{i}" for i in range(30_000)] + ["$1,000.5-2", "«é»", "a&b", "x<y", "!!"])
    texts = [
        " ".join(rng.choice(words[: 1000 + 29 * i], size=rng.integers(0, 40))) + "\n"
        for i in range(1_000)
    ]
    texts[500] = ""
    data, lows, highs = replaced_13a(*joined_buffers([pa.array(texts)]))
    want = split_intern_serial(data, lows, highs, rules13a)
    for blocks in (2, 3, 7):
        got = split_intern(data, lows, highs, rules13a, blocks=blocks)
        for a, b in zip(want, got, strict=True):
            assert np.array_equal(a, b)


@settings(max_examples=examples(200), deadline=None)
@given(
    st.lists(st.one_of(st.none(), st.text(alphabet=". aé\n", max_size=12)), max_size=12),
    st.sampled_from([". ", ".", "é.", ".."]),
)
def test_segments_are_str_split(texts: list[str | None], separator: str) -> None:
    from evalnb.text.intern import joined_buffers
    from evalnb.text.segments import segment_spans

    data, offsets = joined_buffers([pa.array(texts, type=pa.string())])
    raw = data.tobytes()
    lows, highs, counts = segment_spans(data, offsets, separator)
    got = [raw[a:b].decode() for a, b in zip(lows.tolist(), highs.tolist(), strict=True)]
    want = [seg for t in texts for seg in (t or "").split(separator)]
    assert got == want
    assert counts.tolist() == [len((t or "").split(separator)) for t in texts]
    lows, highs, counts = segment_spans(data, offsets, separator, first_only=True)
    firsts = [raw[a:b].decode() for a, b in zip(lows.tolist(), highs.tolist(), strict=True)]
    assert firsts == [(t or "").split(separator)[0] for t in texts]
    assert counts.tolist() == [1] * len(texts)


def test_segment_ids_equal_the_split_columns_ids() -> None:
    cands, refs = pairs(2000, seed=4)
    cands = [c.replace(" ", ". ", 2) for c in cands] + ["", "a. ", ". b", "x &amp;\n. y<z"]
    refs = [r.replace(" ", ". ", 3) for r in refs] + ["c. d. e", "", "f. ", "<g>. &h"]
    hyps, references = pl.Series(cands), pl.Series(refs)
    tokens, counts = ids_13a_segments(hyps, references, ". ")
    split = references.str.split(". ")
    want = ids_13a(hyps.str.split(". ").list.first(), split.explode())
    assert counts.tolist() == split.list.len().to_list()
    assert tokens.lists(0) == want.lists(0)
    assert tokens.lists(1) == want.lists(1)


# Python 3.12+ warns that forking a process with threads may deadlock: this test forks on
# purpose, to check that the child does not use its parent's (threadless) pool.
@pytest.mark.filterwarnings("ignore:.*multi-threaded.*fork.*:DeprecationWarning")
def test_a_forked_child_interns_with_threads_of_its_own() -> None:
    import multiprocessing

    from evalnb.text.intern import joined_buffers, split_intern, split_intern_serial

    texts = [f"word{i % 977} other{i % 13}, more." for i in range(30_000)]
    data, offsets = joined_buffers([pa.array(texts)])
    lows, highs = offsets[:-1], offsets[1:]
    want = split_intern_serial(data, lows, highs, True)[0]
    assert np.array_equal(split_intern(data, lows, highs, True, blocks=2)[0], want)  # pool made
    with multiprocessing.get_context("fork").Pool(1) as pool:
        got = pool.apply_async(split_intern, (data, lows, highs, True, 2)).get(timeout=60)
    assert np.array_equal(got[0], want)
