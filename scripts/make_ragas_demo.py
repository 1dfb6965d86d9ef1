"""Write data/ragas_dataset.jsonl with ragas itself: 120 of the demo lab's cases as a ragas
team would hold them (one system's answers, their retrieved contexts and references).

Run where evalnb and ragas both import (evalnb_testkit/ragas_env.py's way):
    .venv/bin/python -c "import glob, runpy, sys; sys.path.append(glob.glob('.venv-peers/lib/python3*/site-packages')[0]); runpy.run_path('scripts/make_ragas_demo.py', run_name='__main__')"
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import polars as pl  # noqa: E402
from ragas import EvaluationDataset, SingleTurnSample  # noqa: E402

import evalnb  # noqa: E402

lab = evalnb.load(ROOT / "data" / "demo_lab.json")
model = sorted(set(lab.outputs["model"]))[0]
rows = (
    lab.outputs.filter(pl.col("model") == model, pl.col("error").is_null())
    .join(lab.cases, on="case_id")
    .filter(pl.col("perturbation_of").is_null())
    .sort("case_id")
    .head(120)
)
samples = [
    SingleTurnSample(
        user_input=r["prompt"],
        response=r["actual"],
        reference=r["expected"][0],
        retrieved_contexts=list(r["context"]),
    )
    for r in rows.iter_rows(named=True)
]
EvaluationDataset(samples=samples).to_jsonl(str(ROOT / "data" / "ragas_dataset.jsonl"))
print(f"wrote data/ragas_dataset.jsonl: {len(samples)} samples of {model}")
