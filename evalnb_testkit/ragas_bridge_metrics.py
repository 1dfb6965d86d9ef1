"""Run by tests/evaluation/test_ragas.py with evalnb and ragas (evalnb_testkit/ragas_env.py): ragas metrics as
evaluators. Every value evalnb stores must equal what the metric object itself returns for
that row; an LLM metric runs through evalnb's LLMClient (the loopback server plays the LLM),
cached so a rerun asks nothing. Prints what it checked as JSON."""

from __future__ import annotations

import asyncio
import json
import re
import sys
import tempfile
import warnings
from pathlib import Path

warnings.simplefilter("ignore")

import polars as pl  # noqa: E402
from ragas import SingleTurnSample  # noqa: E402
from ragas.metrics import BleuScore as LegacyBleu  # noqa: E402
from ragas.metrics.collections import (  # noqa: E402
    BleuScore,
    CHRFScore,
    ExactMatch,
    Faithfulness,
    NonLLMStringSimilarity,
    RougeScore,
    StringPresence,
)

import evalnb  # noqa: E402
from evalnb.llm.ragas_llm import ragas_llm  # noqa: E402
from evalnb_testkit.llm_server import LoopbackLLM  # noqa: E402
from evalnb_testkit.real_pairs import real_pairs  # noqa: E402

work = Path(tempfile.mkdtemp())
cands, refs_ = real_pairs(40, seed=3)  # real sentences of data/sentences, edited
cands[5] = refs_[5]  # an exact match, and a reference inside its answer
cands[6] = "Indeed: " + refs_[6] + " That is all."
frame = pl.DataFrame(
    {
        "prompt": [f"Question {i}?" for i in range(len(cands))],
        "expected": refs_,
        "actual": cands,
        "context": [[r, "An unrelated passage about weather."] for r in refs_],
    }
)
lab = evalnb.load(frame)
checked: dict[str, object] = {}


def ours(scored: evalnb.Lab, evaluator: str) -> list[float | None]:
    got = scored.scores.filter(pl.col("evaluator") == evaluator).join(
        scored.cases.select("case_id", "prompt"), on="case_id"
    )
    by_prompt = dict(zip(got["prompt"], got["value"], strict=True))
    return [by_prompt[p] for p in frame["prompt"]]


async def theirs(metric: object, **lists: list[object]) -> list[float]:
    n = len(next(iter(lists.values())))
    out = []
    for i in range(n):
        kwargs = {k: v[i] for k, v in lists.items()}
        if hasattr(metric, "single_turn_ascore") and not hasattr(metric, "ascore"):
            out.append(await metric.single_turn_ascore(SingleTurnSample(**kwargs)))  # type: ignore[attr-defined]
        else:
            result = await metric.ascore(**kwargs)  # type: ignore[attr-defined]
            out.append(result.value)
    return out


refs, resps = frame["expected"].to_list(), frame["actual"].to_list()
judge_free = [
    RougeScore(),
    BleuScore(),
    CHRFScore(),
    ExactMatch(),
    StringPresence(),
    NonLLMStringSimilarity(),
]
scored = evalnb.evaluate(lab, judge_free, progress=False)
for metric in judge_free:
    want = asyncio.run(theirs(metric, reference=refs, response=resps))
    got = ours(scored, f"ragas.{metric.name}")
    assert got == [float(w) for w in want], (metric.name, got[:3], want[:3])
checked["collections"] = sorted(m.name for m in judge_free)

legacy = LegacyBleu()
scored_legacy = evalnb.evaluate(lab, [legacy], progress=False)
want = asyncio.run(theirs(legacy, reference=refs, response=resps))
assert ours(scored_legacy, f"ragas.{legacy.name}") == [float(w) for w in want]
checked["legacy"] = legacy.name

# Scores are ordinary scores: thresholds, the leaderboard, the eye's rows, stale on change.
board = scored.leaderboard().filter(pl.col("evaluator") == "ragas.rouge_score")
mean = sum(ours(scored, "ragas.rouge_score")) / len(cands)  # type: ignore[arg-type]
assert board.height == 1 and abs(board["mean"].item() - mean) < 1e-12
params = json.loads(scored.scores.filter(pl.col("evaluator") == "ragas.rouge_score")["params"][0])
identity = json.loads(params["ragas_metric"])
assert identity["class"].endswith("RougeScore") and identity["settings"]["rouge_type"] == "rougeL"
other = evalnb.evaluate(scored, [RougeScore(rouge_type="rouge1")], progress=False)
changed = ours(other, "ragas.rouge_score")
want1 = asyncio.run(theirs(RougeScore(rouge_type="rouge1"), reference=refs, response=resps))
assert changed == [float(w) for w in want1]  # another setting: rescored, not reused
checked["restale"] = True

# An LLM metric through evalnb's client: the loopback server answers ragas' prompts.
_INPUT = re.compile(r"input: (\{.*?\n\})\nOutput:", re.S)


def llm(prompt: str) -> str:
    data = json.loads(_INPUT.findall(prompt)[-1])
    if '"title": "NLIStatementOutput"' in prompt:
        context = data["context"].lower()
        return json.dumps(
            {
                "statements": [
                    {
                        "statement": s,
                        "reason": "checked",
                        "verdict": int(
                            all(w in context for w in re.findall(r"\w+", s.lower())[:3])
                        ),
                    }
                    for s in data["statements"]
                ]
            }
        )
    if "BROKEN" in data["answer"]:
        return "no JSON here"
    return json.dumps({"statements": [s for s in re.split(r"(?<=\.)\s+", data["answer"]) if s]})


small = evalnb.load(
    pl.DataFrame(
        {
            "prompt": ["Capital of France?", "Largest ocean?", "Broken?"],
            "actual": [
                "Paris is the capital of France. It has the Louvre.",
                "The Pacific is the largest ocean.",
                "BROKEN answer.",
            ],
            "context": [["Paris is the capital of France."], ["The Atlantic is big."], ["x"]],
        }
    )
)
with LoopbackLLM(llm) as server:
    client = evalnb.LLMClient(server.base_url, "judge-model", cache=work / "cache.duckdb")
    faithful = Faithfulness(llm=ragas_llm(client, json_mode=False))
    scored_llm = evalnb.evaluate(small, [faithful], progress=False)
    calls = server.total_calls
    direct = asyncio.run(
        theirs(
            faithful,
            user_input=small.cases["prompt"].to_list()[:2],
            response=small.outputs["actual"].to_list()[:2],
            retrieved_contexts=small.outputs["context"].to_list()[:2],
        )
    )
    assert server.total_calls == calls  # the direct run was answered from evalnb's cache
    again = evalnb.evaluate(
        small.merge(evalnb.load(pl.DataFrame({"prompt": ["x"]}))), [faithful], progress=False
    )
    assert server.total_calls == calls  # nothing asked twice
got = scored_llm.scores.sort("case_id").join(small.cases.select("case_id", "prompt"), on="case_id")
values = dict(zip(got["prompt"], got["value"], strict=True))
assert [values["Capital of France?"], values["Largest ocean?"]] == direct
assert values["Broken?"] is None
reason = json.loads(got.filter(pl.col("prompt") == "Broken?")["detail"].item())["reason"]
assert "ragas raised" in reason and "not JSON" in reason
identity = json.loads(json.loads(got["params"][0])["ragas_metric"])
assert identity["llm"] == "judge-model"
checked["llm"] = {"values": direct, "failed_row_reason": "ragas raised"}

print(json.dumps(checked))
sys.exit(0)
