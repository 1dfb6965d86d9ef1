"""The judge card on the real local judge: SmolLM2-135M through llama.cpp's server."""

from __future__ import annotations

import polars as pl
import pytest

import evalnb
from evalnb.judge_reliability.lights import COMPONENTS
from evalnb_testkit.paths import ROOT

pytestmark = pytest.mark.xdist_group("local_judge")  # one server per worker: these share it


def test_the_card_of_the_local_judge_has_every_component_and_says_what_it_found(
    local_judge: evalnb.LLMClient,
) -> None:
    lab = evalnb.load(ROOT / "data" / "demo_lab.json")
    # The same server, without the reply cache the other local-judge tests fill: every call
    # of the card is made here, whatever ran before it.
    judge = evalnb.local_judge(cache=False)
    assert judge.base_url == local_judge.base_url
    # Twelve answers, six of them asked again: every component, in about two minutes on two cores.
    card = lab.judges.card("binary_judge", judge=judge, n=12, seed=0, probes=6)
    print(card)
    assert set(card.frame["component"]) == set(COMPONENTS)
    # A 135M model: measured, not assumed; each measured row has its interval and light.
    measured = card.frame.filter(pl.col("flag") != "grey")
    assert measured.height >= 12
    assert (
        measured.filter(pl.col("ci_low").is_not_null())["flag"]
        .is_in(["green", "amber", "red", "info"])
        .all()
    )
    # the answers, then on six: two repeats, two paddings, five dummies, pairs in both orders
    assert card.calls >= 12 + 6 * 9
    assert card.frame.filter(pl.col("measure") == "parse success")["n"].item() > 0
