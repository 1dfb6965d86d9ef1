"""A cascade of judges: the guarantee holds over seeds, the routing is real, failures are data.

The guarantee is checked on simulated judges whose accuracy and confidence are known (the
thresholds come from :func:`fixed_sequence_threshold`, the rows routed as the cascade routes
them); the cascade itself runs end to end on two loopback judges that answer with token
probabilities, a cheap one that knows when it is unsure and a strong one.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import evalnb
from evalnb.judge_reliability.cascade import GRID, fixed_sequence_threshold
from evalnb_testkit.llm_server import LoopbackLLM
from evalnb_testkit.tiered_judges import cheap_judge as _cheap
from evalnb_testkit.tiered_judges import strong_judge as _strong


def _simulated_tier(
    rng: np.random.Generator, truth: np.ndarray, informative: bool, accurate: float
):
    """A judge's verdicts and confidences: informative ones are right as often as they say."""
    n = truth.size
    if informative:
        sure = rng.random(n) < 0.62
        conf = np.where(sure, rng.uniform(0.9, 1.0, n), rng.uniform(0.5, 0.7, n))
        right = rng.random(n) < np.where(sure, conf, conf - 0.17)
    else:  # confidence says nothing of being right
        conf = rng.uniform(0.5, 1.0, n)
        right = rng.random(n) < accurate
    return np.where(right, truth, ~truth), conf


def _route(rng, truth, tiers, thresholds):
    """Each row kept by the first tier confident on it; -1 where none is (abstained)."""
    kept_by = np.full(truth.size, -1)
    verdict = np.zeros(truth.size, dtype=bool)
    for i, (informative, accurate) in enumerate(tiers):
        v, c = _simulated_tier(rng, truth, informative, accurate)
        take = (kept_by == -1) & (c >= thresholds[i])
        kept_by[take], verdict[take] = i, v[take]
    return kept_by, verdict


def _calibrate(rng, tiers, n, target, delta):
    truth = rng.random(n) < 0.6
    reach = np.ones(n, dtype=bool)
    thresholds = []
    for informative, accurate in tiers:
        v, c = _simulated_tier(rng, truth, informative, accurate)
        found = fixed_sequence_threshold(
            c[reach], v[reach] == truth[reach], target=target, delta=delta / len(tiers)
        )
        thresholds.append(found["threshold"])
        reach &= c < found["threshold"]
    return thresholds


@pytest.mark.parametrize("informative", [True, False])
def test_the_guarantee_holds_in_at_least_1_minus_delta_of_seeds(informative: bool) -> None:
    target, delta, seeds = 0.9, 0.1, 200
    tiers = [(informative, 0.75), (True, 0.95)]
    held, strong_share = 0, []
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        thresholds = _calibrate(rng, tiers, 400, target, delta)
        truth = rng.random(20_000) < 0.6
        kept_by, verdict = _route(rng, truth, tiers, thresholds)
        kept = kept_by >= 0
        held += bool(kept.sum() == 0 or (verdict[kept] == truth[kept]).mean() >= target)
        strong_share.append((kept_by != 0).mean())  # rows the strong judge was asked
    assert held / seeds >= 1 - delta
    if informative:  # a cheap judge that knows when it is sure spares most strong calls
        assert np.mean(strong_share) <= 0.45
    else:  # confidence that says nothing: the cheap tier keeps nothing
        assert np.mean(strong_share) == pytest.approx(1.0, abs=0.02)


def test_fixed_sequence_testing_stops_at_the_first_threshold_it_cannot_certify() -> None:
    conf = np.array([0.999] * 50 + [0.95] * 50 + [0.6] * 50)
    agree = np.array([True] * 50 + [True] * 48 + [False] * 2 + [False] * 50)
    found = fixed_sequence_threshold(conf, agree, target=0.9, delta=0.05)
    assert found["threshold"] in GRID and 0.6 < found["threshold"] <= 0.95
    assert found["n"] == 100 and found["agreement"] == pytest.approx(0.98)
    nothing = fixed_sequence_threshold(conf, np.zeros(150, dtype=bool), target=0.9, delta=0.05)
    assert math.isinf(nothing["threshold"]) and nothing["n"] == 0


# -- end to end, on loopback judges ---------------------------------------------------------


def _lab(n: int = 80) -> evalnb.Lab:
    rows = []
    for i in range(n):
        kind = "easy" if i % 3 else "hard"
        right = i % 2 == 0
        rows.append(
            {
                "case_id": f"c{i}",
                "prompt": f"question {i}",
                "actual": f"{'the correct answer' if right else 'a wrong reply'} ({kind}, {'odd' if i % 4 == 1 else 'even'})",
                "truth": right,
            }
        )
    return evalnb.load(pl.DataFrame(rows).drop("truth")), {r["case_id"]: r["truth"] for r in rows}


def _labelled(lab: evalnb.Lab, truth: dict[str, bool]) -> evalnb.Lab:
    for case_id, right in truth.items():
        lab.calibration.add_label(
            case_id,
            lab.models[0],
            "binary_judge",
            "binary_judge",
            "pass" if right else "fail",
            reviewer="ann",
        )
    return lab


def test_a_calibrated_cascade_routes_rows_and_reports_per_tier(tmp_path: Path) -> None:
    lab, truth = _lab()
    lab = _labelled(lab, truth)
    with LoopbackLLM(raw=_cheap) as cheap_server, LoopbackLLM(raw=_strong) as strong_server:
        cheap = evalnb.LLMClient(cheap_server.base_url, "cheap", cache=tmp_path / "a.duckdb")
        strong = evalnb.LLMClient(strong_server.base_url, "strong", cache=tmp_path / "b.duckdb")
        judge = evalnb.cascade([cheap, strong], target=0.9, delta=0.2)
        with pytest.raises(ValueError, match="not calibrated"):
            evalnb.evaluate(lab, "binary_judge", judge=judge, progress=False)
        judge = judge.calibrate(lab, "binary_judge", assume_random=True)
        cal = judge.calibration
        assert cal is not None and cal["labels"] == 80 and len(cal["tiers"]) == 2
        forecast = judge.estimate(lab)
        assert forecast["model"].to_list() == ["cheap", "strong", "strong alone"]
        strong_share = forecast.filter(pl.col("model") == "strong").row(0, named=True)
        assert strong_share["share_low"] < strong_share["share"] < strong_share["share_high"] < 1
        assert strong_share["share"] == pytest.approx(cal["tiers"][1]["reached"] / 80)
        first = cal["tiers"][0]
        assert first["kept"] > 0 and first["agreement"] >= 0.9
        scored = evalnb.evaluate(lab, "binary_judge", judge=judge, progress=False)
        # the rows escalated when calibrating are escalated again: their replies are cached
        strong_calls = strong_server.total_calls
    details = {
        r["case_id"]: json.loads(r["detail"])
        for r in scored.scores.filter(pl.col("metric") == "binary_judge").iter_rows(named=True)
    }
    tiers = {c: d.get("tier") for c, d in details.items()}
    # the easy answers stay with the cheap judge; the strong one sees only what it escalated
    assert all(tiers[f"c{i}"] == 0 for i in range(80) if i % 3)
    assert strong_calls == sum(1 for t in tiers.values() if t != 0) < 80
    for d in details.values():
        assert d["cascade"][0]["model"] == "cheap"
        if d.get("tier") == 1:
            assert [step["kept"] for step in d["cascade"]] == [False, True]
    kept = scored.scores.filter(
        (pl.col("metric") == "binary_judge") & pl.col("value").is_not_null()
    )
    agree = [(v >= 0.5) == truth[c] for c, v in zip(kept["case_id"], kept["value"], strict=True)]
    assert np.mean(agree) >= 0.9
    report = scored.judges.cascade_report("binary_judge")
    assert report["tier"].to_list() == [0, 1]
    assert report["rows_reached"].to_list()[0] == 80
    assert report["rows_kept"].sum() + report["rows_abstained"].sum() == 80
    assert report["cost"].dtype == pl.Float64 and (report["labelled"] > 0).all()
    # another calibration is another judge: its thresholds are in the scoring key
    assert judge.identity in scored.scores["params"][0]


def test_votes_give_confidence_to_a_judge_without_probabilities(tmp_path: Path) -> None:
    lab, truth = _lab(30)
    lab = _labelled(lab, truth)
    with LoopbackLLM(lambda p: "1" if "correct answer" in p else "0") as server:
        client = evalnb.LLMClient(server.base_url, "plain", cache=tmp_path / "c.duckdb")
        judge = evalnb.cascade([client], confidence="votes", votes=3, target=0.8, delta=0.2)
        judge = judge.calibrate(lab, "binary_judge", assume_random=True)
        asked = server.total_calls
        scored = evalnb.evaluate(lab, "binary_judge", judge=judge, progress=False)
        assert server.total_calls - asked == 3 * 30  # three fresh replies a row
    details = [json.loads(d) for d in scored.scores["detail"]]
    assert {d["confidence"] for d in details} == {1.0}  # a deterministic judge always agrees
    assert all(d["tier"] == 0 for d in details)


def test_a_cascade_is_asked_plainly() -> None:
    client = evalnb.LLMClient("http://127.0.0.1:9/v1", "x")
    with pytest.raises(ValueError, match="target and delta"):
        evalnb.cascade([client], target=1.5)
    with pytest.raises(ValueError, match="confidence"):
        evalnb.cascade([client], confidence="self-report")
    with pytest.raises(ValueError, match="odd number"):
        evalnb.cascade([client], votes=4)
    lab, _ = _lab(5)
    with pytest.raises(ValueError, match="labels of binary_judge/binary_judge drawn at random"):
        evalnb.cascade([client]).calibrate(lab, "binary_judge")
    with pytest.raises(ValueError, match="not an LLM judge"):
        evalnb.cascade([client]).calibrate(lab, "rouge")


def test_every_judged_score_carries_a_fingerprint_and_decide_checks_it(tmp_path: Path) -> None:
    rows = [
        {"case_id": f"c{i}", "prompt": f"q{i}", "actual": "the correct answer"} for i in range(12)
    ]
    both = pl.concat([pl.DataFrame(rows).with_columns(model=pl.lit(m)) for m in ("a", "b")])
    lab = evalnb.load(both, model="model")
    with LoopbackLLM(raw=_strong) as server:
        cold = evalnb.LLMClient(server.base_url, "strong", cache=tmp_path / "c.duckdb")
        warm = cold.with_settings(params={"temperature": 0.9})
        scored = evalnb.evaluate(lab, "binary_judge", judge=cold, progress=False)
        prints = {json.loads(d)["fingerprint"]["id"] for d in scored.scores["detail"]}
        assert len(prints) == 1
        fingerprint = json.loads(scored.scores["detail"][0])["fingerprint"]
        assert fingerprint["model"] == "strong" and fingerprint["decoding"] == {"temperature": 0}
        assert (
            fingerprint["contract"]
            and fingerprint["reader"]
            and "binary_judge@" in fingerprint["evaluator"]
        )
        # another decoding is another judge: its key differs, so the rows are judged again
        again = evalnb.evaluate(scored, "binary_judge", judge=warm, progress=False)
        assert again.scores["params"][0] != scored.scores["params"][0]
    # one system's scores from each judge: decide refuses, naming what differs
    mixed = scored.with_tables(
        {
            "scores": pl.concat(
                [
                    scored.scores.filter(pl.col("model") == "a"),
                    again.scores.filter(pl.col("model") == "b").with_columns(
                        params=pl.lit(scored.scores["params"][0])
                    ),
                ]
            )
        }
    )
    with pytest.raises(ValueError, match=r"decoding: .*temperature"):
        mixed.decisions.decide("a", "b", cluster="")
    allowed = mixed.decisions.decide("a", "b", cluster="", mixed_judges="allow")
    assert any("judge fingerprints" in n for n in allowed.notes)
    assert scored.decisions.decide("a", "b", cluster="").verdict  # one judge: compared


def test_the_card_of_a_cascade_measures_the_cascade(tmp_path: Path) -> None:
    lab, truth = _lab(90)
    lab = _labelled(lab, truth)
    with LoopbackLLM(raw=_cheap) as low, LoopbackLLM(raw=_strong) as high:
        cheap = evalnb.LLMClient(low.base_url, "cheap", prices=(0.0, 0.0), cache=tmp_path / "a")
        strong = evalnb.LLMClient(high.base_url, "strong", prices=(2.5, 10.0), cache=tmp_path / "b")
        judge = evalnb.cascade([cheap, strong], target=0.95, delta=0.2)
        judge = judge.calibrate(lab, "binary_judge", assume_random=True)
        card = lab.judges.card("binary_judge", judge=judge, n=90, probes=6, repeats=2)
    rows = card.frame.filter(pl.col("component") == "cascade")
    measures = rows["measure"].to_list()
    assert measures[:2] == ["calibration: random labels", "cascade coverage"]
    guarantee = rows.filter(pl.col("measure") == "calibration: random labels").row(0, named=True)
    assert guarantee["n"] == 90 and "with probability >= 0.8" in guarantee["note"]
    assert "agreement with humans, tier 0 (cheap)" in measures
    tier0 = rows.filter(pl.col("measure") == "agreement with humans, tier 0 (cheap)").row(
        0, named=True
    )
    assert tier0["bound"] == "0.95 to 1" and tier0["flag"] in ("green", "amber")
    cost = rows.filter(pl.col("measure") == "cost against the strongest judge alone")["estimate"][0]
    assert 0 < cost < 1  # the cascade asked the strong judge less than it alone would
    assert card.judge == "strong"  # the other components asked the strongest judge


def test_pairwise_takes_a_cascade_and_says_what_it_was_calibrated_for(tmp_path: Path) -> None:
    lab, truth = _lab(30)
    lab = _labelled(lab, truth)
    both = lab.with_tables(
        {"outputs": pl.concat([lab.outputs, lab.outputs.with_columns(model=pl.lit("other"))])}
    )
    with LoopbackLLM(raw=_strong) as server:
        client = evalnb.LLMClient(server.base_url, "strong", cache=tmp_path / "c.duckdb")
        judge = evalnb.cascade([client], target=0.8, delta=0.2).calibrate(
            lab, "binary_judge", assume_random=True
        )
        with pytest.raises(
            ValueError, match="calibrated for 'binary_judge', not 'comparative_judge'"
        ):
            evalnb.judges.pairwise(both, lab.models[0], "other", judge)


def test_rows_no_tier_was_sure_of_go_to_a_reviewer(tmp_path: Path) -> None:
    lab, truth = _lab(60)
    lab = _labelled(lab, truth)
    with LoopbackLLM(raw=_cheap) as server:
        cheap = evalnb.LLMClient(server.base_url, "cheap", cache=tmp_path / "c.duckdb")
        judge = evalnb.cascade([cheap], target=0.95, delta=0.2).calibrate(
            lab, "binary_judge", assume_random=True
        )
        fresh, _ = _lab(60)  # the same answers, unlabelled: what a reviewer would now label
        assert judge.calibration is not None and judge.calibration["tiers"][0]["kept"] > 0
        scored = evalnb.evaluate(fresh, "binary_judge", judge=judge, progress=False)
    left = scored.scores.filter(pl.col("value").is_null())
    assert left.height > 0
    batch = scored.calibration.sample("binary_judge", "binary_judge", n=5, strategy="abstained")
    assert batch.height == 5 and set(batch["case_id"]) <= set(left["case_id"])
    assert set(batch["design"]) == {"abstained"}
    w = evalnb.labeler(
        scored, "binary_judge", "binary_judge", reviewer="ann", n=5, strategy="abstained"
    )
    assert w.item is not None and w.item["case_id"] in set(left["case_id"])
