"""Run by tests/evaluation/test_ragas.py with evalnb and ragas (evalnb_testkit/ragas_env.py): our vectorised
namesakes of ragas' judge-free metrics against ragas' own, row by row, on real sentences.
Prints the largest difference per metric as JSON."""

from __future__ import annotations

import asyncio
import json
import math
import random
import sys
import warnings

warnings.simplefilter("ignore")

from ragas import EvaluationDataset, SingleTurnSample  # noqa: E402
from ragas.metrics import (  # noqa: E402
    IDBasedContextPrecision,
    IDBasedContextRecall,
    NonLLMContextPrecisionWithReference,
    NonLLMContextRecall,
)
from ragas.metrics import NonLLMStringSimilarity as LegacySimilarity  # noqa: E402
from ragas.metrics._string import DistanceMeasure as LegacyMeasure  # noqa: E402
from ragas.metrics.collections import (  # noqa: E402
    BleuScore,
    CHRFScore,
    DistanceMeasure,
    ExactMatch,
    NonLLMStringSimilarity,
    RougeScore,
    StringPresence,
)

import evalnb  # noqa: E402
from evalnb_testkit.real_pairs import real_pairs  # noqa: E402

N = int(sys.argv[1]) if len(sys.argv) > 1 else 300
rng = random.Random(11)
cands, refs = real_pairs(N, seed=5)
cands[0], cands[1] = refs[0], "So: " + refs[1] + " Indeed."  # an exact match, a containment
cands[2] = ""  # an empty answer
cands[3] = cands[3].replace(" ", ". ", 2)  # several ". " segments, as ragas' BLEU splits them
refs[4] = "Ünïcödé text. " + refs[4]  # characters beyond ASCII for chrF
pool = [*refs, *cands]
samples = []
for i in range(N):
    reference_contexts = [refs[i], rng.choice(pool)]
    retrieved = [
        rng.choice([refs[i], cands[i], rng.choice(pool)]) for _ in range(rng.randint(1, 4))
    ]
    ids = [rng.choice(["a", "b", "c", 1, 2, "d"]) for _ in range(rng.randint(0, 4))]
    ref_ids = [rng.choice(["a", "b", 1, "e"]) for _ in range(rng.randint(1, 3))]
    samples.append(
        SingleTurnSample(
            user_input=f"q{i}",
            response=cands[i],
            reference=refs[i],
            retrieved_contexts=retrieved,
            reference_contexts=reference_contexts,
            retrieved_context_ids=ids,
            reference_context_ids=ref_ids,
        )
    )
samples.append(
    SingleTurnSample(
        user_input="no ids",
        response="x",
        reference="y",
        retrieved_contexts=["x"],
        reference_contexts=["y"],
        retrieved_context_ids=[],
        reference_context_ids=["a"],
    )
)
lab = evalnb.load(EvaluationDataset(samples=samples), model="rag")
order = [s.user_input for s in samples]


async def collections(metric: object) -> list[float]:
    return [
        (await metric.ascore(reference=s.reference, response=s.response)).value  # type: ignore[attr-defined]
        for s in samples
    ]


async def legacy(metric: object) -> list[float]:
    return [await metric.single_turn_ascore(s) for s in samples]  # type: ignore[attr-defined]


def ours(evaluator: str, **params: object) -> list[float | None]:
    scored = evalnb.evaluate(lab, [evaluator], progress=False, **params)
    got = scored.scores.join(scored.cases.select("case_id", "prompt"), on="case_id")
    by = dict(zip(got["prompt"], got["value"], strict=True))
    return [by[p] for p in order]


def worst(a: list[float | None], b: list[float]) -> float:
    gap = 0.0
    for x, y in zip(a, b, strict=True):
        y_nan = y is None or (isinstance(y, float) and math.isnan(y))
        if x is None or y_nan:
            assert x is None and y_nan, (x, y)
            continue
        gap = max(gap, abs(x - y))
    return gap


checks = {}
for rouge_type in ("rouge1", "rougeL"):
    for mode in ("fmeasure", "precision", "recall"):
        theirs = asyncio.run(collections(RougeScore(rouge_type=rouge_type, mode=mode)))
        checks[f"rouge_{rouge_type}_{mode}"] = worst(
            ours("ragas_rouge", rouge_type=rouge_type, mode=mode), theirs
        )
checks["bleu"] = worst(ours("ragas_bleu"), asyncio.run(collections(BleuScore())))
checks["chrf"] = worst(ours("ragas_chrf"), asyncio.run(collections(CHRFScore())))
checks["exact_match"] = worst(ours("ragas_exact_match"), asyncio.run(collections(ExactMatch())))
checks["string_presence"] = worst(
    ours("ragas_string_presence"), asyncio.run(collections(StringPresence()))
)
for measure in DistanceMeasure:
    theirs = asyncio.run(collections(NonLLMStringSimilarity(distance_measure=measure)))
    checks[f"similarity_{measure.value}"] = worst(
        ours("ragas_string_similarity", distance_measure=measure.value), theirs
    )
for measure in (LegacyMeasure.LEVENSHTEIN, LegacyMeasure.JARO_WINKLER):
    name = measure.value
    sim = LegacySimilarity(distance_measure=measure)
    checks[f"context_precision_{name}"] = worst(
        ours("ragas_context_precision", distance_measure=name),
        asyncio.run(legacy(NonLLMContextPrecisionWithReference(distance_measure=sim))),
    )
    recall = NonLLMContextRecall()
    recall.distance_measure = measure  # a property taking the measure, not an argument
    checks[f"context_recall_{name}"] = worst(
        ours("ragas_context_recall", distance_measure=name), asyncio.run(legacy(recall))
    )
for threshold in (0.2, 0.65, 0.9):  # the early-stopping distances keep every verdict
    precision = NonLLMContextPrecisionWithReference(threshold=threshold)
    checks[f"context_precision_at_{threshold}"] = worst(
        ours("ragas_context_precision", similarity_threshold=threshold),
        asyncio.run(legacy(precision)),
    )
    recall = NonLLMContextRecall(threshold=threshold)
    checks[f"context_recall_at_{threshold}"] = worst(
        ours("ragas_context_recall", similarity_threshold=threshold), asyncio.run(legacy(recall))
    )
checks["id_context_precision"] = worst(
    ours("ragas_id_context_precision"), asyncio.run(legacy(IDBasedContextPrecision()))
)
checks["id_context_recall"] = worst(
    ours("ragas_id_context_recall"), asyncio.run(legacy(IDBasedContextRecall()))
)
print(json.dumps(checks))
