"""H2O's step alignment & completeness: extraction, the compiled DP against a direct one, and
procedures whose steps are copied, dropped, invented and reordered."""

from __future__ import annotations

import functools
import json
import random
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import evalnb
from evalnb.text.enumerations import enumerations
from evalnb.text.step_edits import edit_counts
from evalnb_testkit.llm_server import LoopbackLLM

PROCEDURE = """To reset your card PIN:
1. Log in to the mobile app.
2. Open the Cards tab.
3. Choose Reset PIN.
4. Enter the code we text you.
5. Type the new PIN twice."""
STEPS = [
    "Log in to the mobile app.",
    "Open the Cards tab.",
    "Choose Reset PIN.",
    "Enter the code we text you.",
    "Type the new PIN twice.",
]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (PROCEDURE, [STEPS]),
        (
            "a) Unplug it\nb) Wait ten seconds\nc) Plug it back in",
            [["Unplug it", "Wait ten seconds", "Plug it back in"]],
        ),
        ("Steps:\n\n1. Open\n\n2. Close", [["Open", "Close"]]),
        ("- milk\n- eggs\n  (fresh ones)\n- flour", [["milk", "eggs (fresh ones)", "flour"]]),
        ("Step 1: plug in\nStep 2: switch on", [["plug in", "switch on"]]),
        (
            "Do this: 1. Open the app. 2. Tap Send. 3. Confirm.",
            [["Open the app.", "Tap Send.", "Confirm."]],
        ),
        (
            "1. Open the app. 2. Tap Settings. 3. Tap Reset PIN.",
            [["Open the app.", "Tap Settings.", "Tap Reset PIN."]],
        ),  # a line that starts with 1.
        ("Intro\n1. Open the app. 2. Tap Send.\n\nMore text.", [["Open the app.", "Tap Send."]]),
        (
            "First, open the lid. Then pour the water. Finally, close it. Enjoy.",
            [["open the lid.", "pour the water.", "close it."]],
        ),
        ("Call 911. 3. That is not a list.", []),
        ("A. Smith wrote in 1999. Then he left.", []),
        ("7. Out of order\n8. still", []),
        ("Only one:\n1. step", []),
        (None, []),
    ],
)
def test_enumerations_are_found_and_non_lists_are_not(
    text: str | None, expected: list[list[str]]
) -> None:
    assert enumerations(text) == expected


def _direct(match: np.ndarray) -> tuple[int, int, int, int]:
    """A direct DP: the edit distance by recursion, then the same tie-breaking walk back."""
    n, m = match.shape

    @functools.cache
    def dist(i: int, j: int) -> int:
        if i == 0 or j == 0:
            return i + j
        return min(
            dist(i - 1, j - 1) + (0 if match[i - 1, j - 1] else 1),
            dist(i - 1, j) + 1,
            dist(i, j - 1) + 1,
        )

    i, j, ins, dele, sub, same = n, m, 0, 0, 0, 0
    while i or j:
        if i and j and dist(i, j) == dist(i - 1, j - 1) + (0 if match[i - 1, j - 1] else 1):
            same, sub = (same + 1, sub) if match[i - 1, j - 1] else (same, sub + 1)
            i, j = i - 1, j - 1
        elif i and dist(i, j) == dist(i - 1, j) + 1:
            dele, i = dele + 1, i - 1
        else:
            ins, j = ins + 1, j - 1
    assert ins + dele + sub == dist(n, m)
    return ins, dele, sub, same


def test_compiled_edit_counts_equal_a_direct_dp_on_random_matrices() -> None:
    rng = random.Random(5)
    mats = []
    for _ in range(400):
        n, m = rng.randint(0, 9), rng.randint(0, 9)
        density = rng.random()
        mats.append(
            np.array(
                [[rng.random() < density for _ in range(m)] for _ in range(n)], dtype=bool
            ).reshape(n, m)
        )
    flat = np.concatenate([a.ravel() for a in mats])
    got = edit_counts(
        flat, np.array([a.shape[0] for a in mats]), np.array([a.shape[1] for a in mats])
    )
    assert [tuple(r) for r in got.tolist()] == [_direct(a) for a in mats]
    with pytest.raises(ValueError, match="cells"):
        edit_counts(
            flat[:-1], np.array([a.shape[0] for a in mats]), np.array([a.shape[1] for a in mats])
        )


def _lab(answers: dict[str, str | None], contexts: list[str] | None = None) -> evalnb.Lab:
    n = len(answers)
    return evalnb.load(
        pl.DataFrame(
            {
                "prompt": ["How do I reset my PIN?"] * n,
                "model": list(answers),
                "actual": list(answers.values()),
                "context": [contexts or [PROCEDURE]] * n,
            }
        ),
        model="model",
    )


def _metrics(lab: evalnb.Lab) -> dict[str, dict[str, float | None]]:
    wide = lab.scores.pivot(on="metric", index="model", values="value")
    return {r.pop("model"): r for r in wide.to_dicts()}


def test_copied_dropped_invented_and_reordered_procedures() -> None:
    numbered = "\n".join(f"{i}. {s}" for i, s in enumerate(STEPS, 1))
    dropped = "\n".join(f"{i}. {s}" for i, s in enumerate(STEPS[:3] + STEPS[4:], 1))
    invented = [*STEPS[:2], "Call the branch manager for written approval.", *STEPS[2:]]
    swapped = [STEPS[1], STEPS[0], *STEPS[2:]]
    lab = _lab(
        {
            "copied": numbered,
            "bullets": "Here is how:\n" + "\n".join(f"- {s}" for s in STEPS),
            "dropped": dropped,
            "invented": "\n".join(f"{i}. {s}" for i, s in enumerate(invented, 1)),
            "swapped": "First, " + swapped[0] + " Then " + " Then ".join(swapped[1:]),
            "none": "Please call us, we will help.",
        }
    )
    got = _metrics(evalnb.evaluate(lab, ["step_alignment"], progress=False))
    counts = {
        m: (
            v["edits"],
            v["insertions"],
            v["deletions"],
            v["mismatches"],
            v["context_steps"],
            v["answer_steps"],
        )
        for m, v in got.items()
    }
    assert counts == {
        "copied": (0, 0, 0, 0, 5, 5),
        "bullets": (0, 0, 0, 0, 5, 5),
        "dropped": (1, 1, 0, 0, 5, 4),
        "invented": (1, 0, 1, 0, 5, 6),
        "swapped": (2, 0, 0, 2, 5, 5),
        "none": (5, 5, 0, 0, 5, 0),
    }
    spec = evalnb.evaluators().filter(pl.col("id") == "step_alignment").row(0, named=True)
    assert spec["primary"] == "edits"


def test_inline_lists_that_start_a_line_are_aligned() -> None:
    answer = "1. Open the app. 2. Tap Settings. 3. Tap Reset PIN."
    context = "1. Open the app. 2. Tap Send. 3. Enter the amount. 4. Confirm."
    lab = _lab({"inline": answer}, contexts=[context])
    got = _metrics(evalnb.evaluate(lab, ["step_alignment"], progress=False))["inline"]
    assert (got["context_steps"], got["answer_steps"]) == (4, 3)
    assert got["edits"] == got["insertions"] + got["deletions"] + got["mismatches"] < 4


def test_the_context_list_the_answer_follows_is_chosen_and_rows_without_one_are_unscored() -> None:
    other = "Opening hours:\n- Monday to Friday 9 to 5\n- Saturday 10 to 1"
    lab = _lab({"follows": PROCEDURE}, contexts=[other, "Intro text.", PROCEDURE])
    scored = evalnb.evaluate(lab, ["step_alignment"], progress=False)
    row = scored.scores.filter(metric="edits").row(0, named=True)
    assert row["value"] == 0
    assert json.loads(row["detail"])["aligned"]["context_chunk"] == 2
    plain = _lab({"a": PROCEDURE}, contexts=["We are open daily.", "No lists here."])
    with pytest.warns(evalnb.NothingScoredWarning):
        scored = evalnb.evaluate(plain, ["step_alignment"], progress=False)
    row = scored.scores.filter(metric="edits").row(0, named=True)
    assert row["value"] is None and "no enumerated steps" in row["detail"]


def _extractor(prompt: str) -> str:
    text = prompt.split("<<<\n", 1)[1].rsplit("\n>>>", 1)[0]
    if "BROKEN" in text:
        return "I cannot do that."
    found = enumerations(text) or (
        [[s.strip() + "." for s in text.split(";")]] if ";" in text else []
    )
    return json.dumps({"enumerations": found})


def test_llm_extraction_through_the_judge_counts_failures(tmp_path: Path) -> None:
    lab = _lab(
        {
            "semi": "Log in to the mobile app; open the Cards tab; choose Reset PIN; enter "
            "the code we text you; type the new PIN twice",
            "broken": "BROKEN reply",
        }
    )
    with LoopbackLLM(_extractor) as server:
        judge = evalnb.LLMClient(server.base_url, "extractor", cache=tmp_path / "c.duckdb")
        scored = evalnb.evaluate(
            lab, ["step_alignment"], extraction="llm", judge=judge, progress=False
        )
    got = _metrics(scored)
    assert got["semi"]["edits"] == 0 and got["semi"]["answer_steps"] == 5
    assert got["broken"]["edits"] is None
    detail = scored.scores.filter(model="broken", metric="edits")["detail"].item()
    assert "judge reply not understood" in detail
    params = json.loads(scored.scores.filter(model="semi", metric="edits")["params"].item())
    assert params["extraction"] == "llm" and params["judge_model"].startswith("extractor@")
    with pytest.raises(ValueError, match="needs an LLM judge"):
        evalnb.evaluate(lab, ["step_alignment"], extraction="llm", progress=False)
