"""The retriever measured like IR: trec_eval's measures equal pytrec_eval's per query.

The labs come from TREC files, BEIR folders and ranx-style dicts; the measures through
``evalnb.evaluate(lab, "retrieval")`` equal ``pytrec_eval`` (trec_eval itself, compiled)
on graded qrels with ties, unjudged and negative grades and queries without relevant
documents.
"""

from __future__ import annotations

import asyncio
import json
import random
import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import pytrec_eval

import evalnb
from evalnb.evaluation.families.retrieval.evaluator import MEASURES
from evalnb.lab.errors import InputError
from evalnb.transforms import grid_cells, weakness_index


def _pytrec_measures() -> set[str]:
    """pytrec_eval's names for MEASURES: ``P.1,5,10,20`` asks for exactly those cut-offs."""
    cuts: dict[str, list[str]] = {}
    plain = set()
    for name in MEASURES:
        family, _, k = name.rpartition("_")
        if k.isdigit():
            cuts.setdefault(family, []).append(k)
        else:
            plain.add(name)
    return plain | {f"{family}.{','.join(ks)}" for family, ks in cuts.items()}


_FAMILIES = _pytrec_measures()


def _random_lab(rng: random.Random) -> tuple[dict, dict]:
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(rng.randint(1, 8)):
        qid = f"q{q}"
        judged = {
            f"d{rng.randint(0, 30)}": rng.choice([-1, 0, 0, 1, 1, 2, 3])
            for _ in range(rng.randint(0, 25))
        }
        # pytrec_eval never returns on a query whose every grade is negative (its loop over
        # the relevance levels): such queries are tested apart, below.
        if judged and max(judged.values()) >= 0:
            qrels[qid] = judged
        ranked = {
            f"d{rng.randint(0, 40)}": float(rng.choice([1, 2, 3, rng.random()]))
            for _ in range(rng.randint(0, 30))
        }
        if ranked:
            run[qid] = ranked
    return qrels, run


def _ours(qrels: dict, runs: dict[str, dict]) -> pl.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", evalnb.NothingScoredWarning)
        lab = evalnb.evaluate(evalnb.load(runs, qrels=qrels), "retrieval", progress=False)
    return lab.scores


def test_every_measure_equals_pytrec_eval_per_query() -> None:
    rng = random.Random(7)
    worst, compared = 0.0, 0
    for _ in range(150):
        qrels, run = _random_lab(rng)
        if not qrels or not run:
            continue
        theirs = pytrec_eval.RelevanceEvaluator(qrels, _FAMILIES).evaluate(run)
        scores = _ours(qrels, {"sys": run})
        for row in scores.filter(pl.col("value").is_not_null()).iter_rows(named=True):
            expected = theirs[row["case_id"]][row["metric"]]
            worst = max(worst, abs(row["value"] - expected))
            compared += 1
        # trec_eval leaves out the queries without qrels; evalnb says why for each.
        unscored = scores.filter(pl.col("value").is_null())
        assert set(unscored["case_id"]).isdisjoint(theirs)
        assert unscored["detail"].str.contains("no relevance judgments").all()
    assert compared > 10_000
    assert worst < 1e-9


def test_ties_rank_by_document_id_descending_and_the_given_rank_is_not_used(tmp_path: Path) -> None:
    run = tmp_path / "run.txt"
    # Equal scores: trec_eval puts "b" before "a"; the rank field says the opposite.
    run.write_text("q1 Q0 a 1 1.0 sys\nq1 Q0 b 2 1.0 sys\nq1 Q0 c -3 0.5 sys\n", encoding="utf-8")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 b 1\n", encoding="utf-8")
    lab = evalnb.evaluate(evalnb.load(run, qrels=qrels), "retrieval", progress=False)
    value = lab.scores.filter(pl.col("metric") == "recip_rank")["value"].item()
    theirs = pytrec_eval.RelevanceEvaluator({"q1": {"b": 1}}, {"recip_rank"}).evaluate(
        {"q1": {"a": 1.0, "b": 1.0, "c": 0.5}}
    )
    assert value == theirs["q1"]["recip_rank"] == 1.0
    assert lab.table("retrievals")["rank"].to_list() == [1, 2, -3]  # kept as given


def test_a_query_with_only_negative_grades_scores_zero() -> None:
    scores = _ours({"q1": {"a": -1, "b": -2}}, {"sys": {"q1": {"a": 2.0, "b": 1.0}}})
    assert scores["value"].to_list() == [0.0] * len(MEASURES)


@pytest.mark.parametrize(
    ("text", "field", "expected"),
    [
        ("q1 Q0 d1 1 2.0\n", None, "6 fields"),
        ("q1 Q0 d1 1 high sys\n", "score", "a finite number"),
        ("q1 Q0 d1 first 2.0 sys\n", "rank", "an integer"),
        ("q1 Q0 d1 1 2.0 sys\nq1 Q0 d1 2 1.0 sys\n", "docid", "each document once"),
    ],
)
def test_a_bad_run_names_the_file_line_and_field(
    tmp_path: Path, text: str, field: str | None, expected: str
) -> None:
    path = tmp_path / "run.txt"
    path.write_text("q0 Q0 d0 1 3.0 sys\n" + text, encoding="utf-8")
    with pytest.raises(InputError, match=expected) as caught:
        evalnb.load(path, format="trec_run")
    assert caught.value.source == str(path) and caught.value.field == field
    assert caught.value.location is not None and caught.value.location.startswith("line")


def test_bad_qrels_name_the_line(tmp_path: Path) -> None:
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 1.0 sys\n", encoding="utf-8")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 relevant\n", encoding="utf-8")
    with pytest.raises(InputError, match="an integer") as caught:
        evalnb.load(run, qrels=qrels)
    assert (caught.value.location, caught.value.field) == ("line 2", "relevance")


def test_several_tags_are_several_retrievers_and_decide_compares_them(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    lines, grades = [], []
    for q in range(120):
        relevant = [f"d{q}_{j}" for j in range(3)]
        grades += [f"q{q} 0 {d} {1 + j % 2}" for j, d in enumerate(relevant)]
        pool = relevant + [f"d{q}_x{j}" for j in range(20)]
        for tag, skill in (("bm25", 0.3), ("dense", 1.0)):
            scores = rng.normal(size=len(pool)) + skill * np.array([d in relevant for d in pool])
            lines += [
                f"q{q} Q0 {d} {i + 1} {s:.6f} {tag}"
                for i, (d, s) in enumerate(zip(pool, scores, strict=True))
            ]
    (tmp_path / "run.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "qrels.txt").write_text("\n".join(grades) + "\n", encoding="utf-8")
    lab = evalnb.load(tmp_path / "run.txt", qrels=tmp_path / "qrels.txt")
    assert lab.models == ["bm25", "dense"]
    lab = evalnb.evaluate(
        lab, "retrieval", metrics={"retrieval": ["ndcg_cut_10", "recall_10"]}, progress=False
    )
    decision = lab.decisions.decide("bm25", "dense", metrics=["retrieval.ndcg_cut_10"], cluster="")
    assert decision.verdict == "better"
    board = lab.leaderboard().filter(pl.col("metric") == "ndcg_cut_10").sort("model")
    assert board["ci_low"][1] > board["mean"][0]  # dense's interval above bm25's mean


def test_a_run_and_qrels_written_back_read_as_the_same_lab(tmp_path: Path) -> None:
    run = {"bm25": {"q1": {"a": 2.0, "b": 1.5}, "q2": {"c": 0.25}}, "dense": {"q1": {"b": 3.0}}}
    qrels = {"q1": {"a": 1, "b": 2}, "q2": {"c": 0}}
    lab = evalnb.load(run, qrels=qrels)
    written = lab.retrieval.export(tmp_path / "run.txt", tmp_path / "qrels.txt")
    back = evalnb.load(written[0], qrels=written[1])
    key = ["case_id", "model", "doc_id"]
    for table in ("retrievals", "qrels"):
        ours = (
            lab.table(table)
            .drop("rank", "source", strict=False)
            .sort(key if table == "retrievals" else ["case_id", "doc_id"])
        )
        theirs = (
            back.table(table)
            .drop("rank", "source", strict=False)
            .sort(key if table == "retrievals" else ["case_id", "doc_id"])
        )
        assert ours.equals(theirs), table
    stored = evalnb.open(lab.save(tmp_path / "lab.duckdb"))
    assert stored.table("retrievals").equals(lab.table("retrievals"))
    assert stored.table("qrels").equals(lab.table("qrels"))


def test_a_beir_folder_loads_its_queries_qrels_and_corpus(tmp_path: Path) -> None:
    (tmp_path / "qrels").mkdir()
    (tmp_path / "corpus.jsonl").write_text(
        "".join(
            json.dumps({"_id": f"d{i}", "title": f"T{i}", "text": f"text {i}"}) + "\n"
            for i in range(3)
        ),
        encoding="utf-8",
    )
    (tmp_path / "queries.jsonl").write_text(
        json.dumps({"_id": "q1", "text": "what is one?"})
        + "\n"
        + json.dumps({"_id": "q9", "text": "unjudged"})
        + "\n",
        encoding="utf-8",
    )
    (tmp_path / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\nq1\td1\t2\n", encoding="utf-8"
    )
    lab = evalnb.load(tmp_path)
    assert lab.cases.select("case_id", "prompt").rows() == [("q1", "what is one?")]
    assert lab.table("qrels").select("case_id", "doc_id", "relevance").rows() == [("q1", "d1", 2)]
    assert lab.table("chunks")["chunk_id"].to_list() == ["d0", "d1", "d2"]
    with pytest.raises(InputError, match=r"qrels/dev\.tsv"):
        evalnb.load(tmp_path, split="dev")


def test_attribution_tells_retrieval_misses_from_unused_documents() -> None:
    cases = ["hit_pass", "hit_fail", "miss_fail", "unjudged_fail"]
    run = {"rag": {c: {f"{c}_rel" if c.startswith("hit") else f"{c}_other": 1.0} for c in cases}}
    qrels = {c: {f"{c}_rel": 1} for c in cases[:3]}
    lab = evalnb.load(run, qrels=qrels)
    answers = lab.outputs.with_columns(actual=pl.col("case_id"))
    expected = [["hit_pass"], ["other"], ["other"], ["other"]]
    lab = lab.with_tables(
        {"outputs": answers, "cases": lab.cases.with_columns(expected=pl.Series(expected))}
    )
    lab = evalnb.evaluate(lab, "text_matching", progress=False)
    metric = lab.metrics.filter(pl.col("primary") & (pl.col("evaluator") == "text_matching"))[
        "metric"
    ][0]
    got = dict(
        lab.retrieval.attribution("text_matching", metric, k=10)
        .select("case_id", "attribution")
        .rows()
    )
    assert got == {
        "hit_pass": "passed",
        "hit_fail": "retrieved_unused",
        "miss_fail": "retrieval_miss",
        "unjudged_fail": "no_qrels",
    }
    summary = lab.retrieval.attribution_summary("text_matching", metric)
    assert summary.select("retrieval_miss", "retrieved_unused", "miss_share").row(0) == (1, 1, 0.5)
    assert 0 < summary["miss_ci_low"][0] < 0.5 < summary["miss_ci_high"][0] < 1


def test_the_pool_holds_every_retrievers_top_k_not_yet_graded() -> None:
    run = {
        "a": {"q1": {"x": 3.0, "y": 2.0, "z": 1.0}},
        "b": {"q1": {"w": 3.0, "x": 2.0}},
    }
    lab = evalnb.load(run, qrels={"q1": {"x": 1}})
    pool = lab.retrieval.pool(k=2)
    assert pool.select("doc_id", "models").rows() == [("w", ["b"]), ("y", ["a"])]
    lab.retrieval.add_grade("q1", "w", 3, reviewer="ann")
    assert lab.retrieval.pool(k=2)["doc_id"].to_list() == ["y"]
    assert lab.table("qrels").filter(pl.col("doc_id") == "w")["source"].item() == "reviewer:ann"
    with pytest.raises(ValueError, match="a grade is one of"):
        lab.retrieval.add_grade("q1", "y", 5, reviewer="ann")


def test_a_retriever_under_test_runs_on_every_case_and_its_failures_are_data() -> None:
    lab = evalnb.load(
        pl.DataFrame(
            {"case_id": ["a", "b", "c", "d"], "prompt": ["alpha", "beta", "gamma", "delta"]}
        )
    )
    lab = lab.with_tables(
        {
            "qrels": pl.DataFrame(
                {"case_id": ["a", "b"], "doc_id": ["alpha-1", "beta-2"], "relevance": [1, 2]}
            )
        }
    )

    def lexical(question: str) -> list[object]:
        if question == "gamma":
            raise RuntimeError("index offline")
        if question == "delta":
            return ["x", "x"]  # a document twice: refused, said
        return [f"{question}-{i}" for i in range(1, 4)]

    async def dense(question: str) -> list[tuple[str, float]]:
        if question == "delta":
            await asyncio.sleep(5)  # past its timeout
        return [(f"{question}-2", 0.9), (f"{question}-1", 0.5)]

    lab = evalnb.run_retriever(lab, lexical, name="lexical", k=2)
    lab = evalnb.run_retriever(lab, dense, name="dense", timeout_s=0.5)
    errors = dict(
        lab.outputs.filter(pl.col("error").is_not_null())
        .select(pl.concat_str("model", "case_id", separator="/"), "error")
        .rows()
    )
    assert errors.keys() == {"lexical/c", "lexical/d", "dense/d"}
    assert "index offline" in errors["lexical/c"] and "twice" in errors["lexical/d"]
    assert "longer than 0.5 s" in errors["dense/d"]
    assert (
        lab.table("retrievals").filter(pl.col("model") == "lexical").height == 4
    )  # k=2, two cases
    asked: list[str] = []
    again = evalnb.run_retriever(lab, lambda q: asked.append(q) or lexical(q), name="lexical", k=2)
    # Rankings kept are not asked again; the failed cases are (a rerun resumes and retries).
    assert sorted(asked) == ["delta", "gamma"]
    assert again.table("retrievals").equals(lab.table("retrievals"))
    assert again.outputs.height == lab.outputs.height
    scored = evalnb.evaluate(
        lab, "retrieval", metrics={"retrieval": ["recip_rank"]}, progress=False
    )
    values = dict(
        scored.scores.filter(pl.col("value").is_not_null())
        .select(pl.concat_str("model", "case_id", separator="/"), "value")
        .rows()
    )
    assert values == {"lexical/a": 1.0, "lexical/b": 0.5, "dense/a": 0.5, "dense/b": 1.0}


def test_ranx_names_give_ranx_numbers_per_query() -> None:
    from ranx import Qrels, Run, evaluate

    from evalnb.evaluation.families.retrieval.evaluator import RANX

    rng = random.Random(3)
    qrels, run = {}, {}
    for q in range(200):
        graded = {
            f"d{rng.randint(0, 40)}": rng.choice([0, 1, 2, 3]) for _ in range(rng.randint(1, 15))
        }
        graded[f"sure{q}"] = 1  # ranx needs a relevant document per query
        qrels[f"q{q}"] = graded
        # Continuous scores: no ties, where the two orders of equal scores could differ.
        run[f"q{q}"] = {f"d{rng.randint(0, 60)}": rng.random() for _ in range(rng.randint(1, 40))}
    peer = Run(run)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba's type-safety notes from ranx's kernels
        evaluate(Qrels(qrels), peer, list(RANX), return_mean=False)
    scores = evalnb.evaluate(evalnb.load({"sys": run}, qrels=qrels), "ranx", progress=False).scores
    assert set(scores["metric"]) == set(RANX)
    worst = max(
        abs(value - peer.scores[metric][case])
        for case, metric, value in scores.select("case_id", "metric", "value").iter_rows()
    )
    assert worst < 1e-12


def test_the_weakness_grid_takes_retrieval_as_an_axis() -> None:
    topics = ["billing", "travel"] * 10
    run = {"rag": {f"q{i}": {f"q{i}-rel" if i % 2 == 0 else f"q{i}-other": 1.0} for i in range(20)}}
    qrels = {f"q{i}": {f"q{i}-rel": 1} for i in range(20)}
    lab = evalnb.load(run, qrels=qrels)
    lab = lab.with_tables(
        {
            "cases": lab.cases.with_columns(topic=pl.Series(topics), expected=pl.lit(["yes"])),
            "outputs": lab.outputs.with_columns(
                actual=pl.when(pl.col("case_id").str.extract(r"(\d+)").cast(pl.Int64) % 2 == 0)
                .then(pl.lit("yes"))
                .otherwise(pl.lit("no"))
            ),
        }
    )
    lab = evalnb.evaluate(lab, "text_matching", progress=False)
    lab.weakness("text_matching", "model_passes", axes=("retrieval", "topic"), min_n=5)  # draws
    index = weakness_index(lab, "text_matching", "model_passes", axes=("retrieval", "topic"))
    cells = grid_cells(index).select("topic", "question_type", "n").sort("topic")
    assert cells.rows() == [
        ("nothing relevant in top 10", "travel", 10),
        ("relevant in top 10", "billing", 10),
    ]


def _attributed_lab() -> evalnb.Lab:
    """30 RAG answers: on 'travel' retrieval misses and every answer fails; 'billing' mixed."""
    topics = ["billing", "travel", "travel"] * 10
    found = {f"q{i}": topics[i] == "billing" for i in range(30)}
    run = {"rag": {q: {f"{q}-rel" if hit else f"{q}-other": 1.0} for q, hit in found.items()}}
    qrels = {q: {f"{q}-rel": 1} for q in found}
    lab = evalnb.load(run, qrels=qrels)
    passes = {q: hit and int(q[1:]) % 2 == 0 for q, hit in found.items()}
    return evalnb.evaluate(
        lab.with_tables(
            {
                "cases": lab.cases.with_columns(topic=pl.Series(topics), expected=pl.lit(["yes"])),
                "outputs": lab.outputs.with_columns(
                    actual=pl.col("case_id").replace_strict(
                        {q: "yes" if p else "no" for q, p in passes.items()}
                    )
                ),
            }
        ),
        ["text_matching", "retrieval"],
        progress=False,
    )


def test_insights_name_the_failures_that_are_retrieval_misses() -> None:
    proportion = pytest.importorskip("statsmodels.stats.proportion")
    lab = _attributed_lab()
    told = lab.insights().filter(pl.col("description").str.contains("are retrieval misses"))
    texts = told["description"].to_list()
    # overall: 20 travel misses + 5 billing failures with the document retrieved
    overall = told.filter(~pl.col("description").str.contains(" where "))
    assert overall.height == 1 and overall["value"][0] == pytest.approx(20 / 25)
    low, high = proportion.proportion_confint(20, 25, method="wilson")
    assert f"(95 % CI {100 * low:.0f} %–{100 * high:.0f} %)" in overall["description"][0]
    assert sorted(overall["case_ids"][0]) == sorted(f"q{i}" for i in range(30) if i % 3 != 0)
    # the travel slice is all misses (its lower bound is above one half); billing has none
    assert any("where topic is 'travel'" in t for t in texts)
    assert not any("'billing'" in t for t in texts)
    # the retrieval evaluator's own measures are never attributed
    assert set(told["evaluator"]) == {"text_matching"}
    assert "Improve retrieval" in overall["actions_description"][0]
    assert json.loads(lab.insights_json())[-1]["insight_type"] == "retrieval"


def test_the_report_has_a_retrieval_section(tmp_path: Path) -> None:
    lab = _attributed_lab()
    lab.retrieval.add_grade("q0", "q0-rel", 2, reviewer="ann")
    html = lab.report(tmp_path / "r.html").html
    section = html.split("<h2>Retrieval</h2>", 1)[1].split("<h2>", 1)[0]
    assert "Measures per retriever" in section and "ndcg_cut_10" in section
    assert "reviewers" in section and "given (qrels file" in section
    assert "retrieval_miss" in section and "text_matching" in section
    assert "retrieval misses" in html.split("<h2>Insights</h2>", 1)[1].split("<h2>", 1)[0]
    plain = evalnb.load(pl.DataFrame({"case_id": ["a"], "prompt": ["p"]}))
    assert "<h2>Retrieval</h2>" not in plain.report().html  # no rankings, no section


def test_the_eyes_case_detail_carries_the_ranking_in_trec_order() -> None:
    lab = evalnb.load(
        {"a": {"q1": {"x": 3.0, "y": 2.0, "z": 2.0}}}, qrels={"q1": {"x": 1, "w": 3, "y": 0}}
    )
    lab = lab.with_tables(
        {"chunks": pl.DataFrame({"chunk_id": ["x", "y"], "text": ["ex " * 400, "why"]})}
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", evalnb.NothingScoredWarning)
        lab = evalnb.evaluate(lab, "retrieval", progress=False)
    from evalnb.transforms.cases import MAX_DOCUMENT_CHARS, ranking_of

    got = ranking_of(lab, lab.cases.row(0, named=True), lab.outputs.row(0, named=True))
    assert got is not None
    # equal scores rank by document id, descending: z before y
    assert [(d["rank"], d["doc_id"], d["grade"]) for d in got["documents"]] == [
        (1, "x", 1),
        (2, "z", None),
        (3, "y", 0),
    ]
    assert len(got["documents"][0]["text"]) == MAX_DOCUMENT_CHARS
    assert got["documents"][1]["text"] is None
    assert (got["n_ranked"], got["n_relevant"], got["missed"]) == (
        3,
        2,
        [{"doc_id": "w", "grade": 3}],
    )
    plain = evalnb.load(pl.DataFrame({"prompt": ["p"], "actual": ["a"]}))
    assert (
        ranking_of(plain, plain.cases.row(0, named=True), plain.outputs.row(0, named=True)) is None
    )


def test_a_hash_never_decides_a_grade(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ids whose hashes all collide under the first seed still get their own grades."""
    rng = random.Random(11)
    qrels, run = _random_lab(rng)
    while not qrels or not run:
        qrels, run = _random_lab(rng)
    expected = _ours(qrels, {"r": run})
    real = pl.Series.hash

    def colliding(self: pl.Series, seed: int = 0, *args: object) -> pl.Series:
        if seed == 0:  # every id the same hash: each match must be confirmed, then rehashed
            return pl.Series(self.name, np.zeros(self.len(), dtype=np.uint64))
        return real(self, seed, *args)

    monkeypatch.setattr(pl.Series, "hash", colliding)
    got = _ours(qrels, {"r": run})
    assert (
        got.sort("case_id", "metric")["value"].to_list()
        == expected.sort("case_id", "metric")["value"].to_list()
    )
