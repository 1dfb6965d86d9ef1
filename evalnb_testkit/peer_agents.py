"""Run by tests/io/test_agents.py in the peers' environment (.venv-peers: ragas, DeepEval).

Reads conversations as JSON lines ``{"calls": [[name, args, output]], "ref": [[name, args]]}``
on stdin and prints, per line, the peers' own scores of them as JSON.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import warnings

# DeepEval builds an OpenAI client when a metric is made, though tool correctness without
# available_tools never calls it; telemetry stays off.
os.environ.setdefault("OPENAI_API_KEY", "sk-not-used-by-tool-correctness")
os.environ["DEEPEVAL_TELEMETRY_OPT_OUT"] = "YES"
warnings.simplefilter("ignore")

from deepeval.metrics import ToolCorrectnessMetric  # noqa: E402
from deepeval.test_case import LLMTestCase, ToolCallParams  # noqa: E402
from deepeval.test_case import ToolCall as DeepEvalCall  # noqa: E402
from ragas.messages import AIMessage, HumanMessage, ToolMessage  # noqa: E402
from ragas.messages import ToolCall as RagasCall  # noqa: E402
from ragas.metrics.collections import ToolCallAccuracy, ToolCallF1  # noqa: E402

# Each metric is made once: DeepEval builds an OpenAI client (and loads the CA bundle) for
# every metric object, 57 of the 73 s that 300 conversations took when made per case. A
# metric's measure() sets its score from the case alone.
RAGAS = (
    ("accuracy_strict", ToolCallAccuracy(strict_order=True)),
    ("accuracy_flexible", ToolCallAccuracy(strict_order=False)),
    ("f1", ToolCallF1()),
)
DEEPEVAL = tuple(
    (
        f"{mode}_{'args' if args else 'noargs'}",
        ToolCorrectnessMetric(
            include_reason=False,
            should_exact_match=exact,
            should_consider_ordering=ordering,
            evaluation_params=[ToolCallParams.INPUT_PARAMETERS] if args else [],
        ),
    )
    for mode, exact, ordering in (
        ("names", False, False),
        ("exact", True, False),
        ("ordering", False, True),
    )
    for args in (False, True)
)


def ragas_scores(calls: list[list[object]], ref: list[list[object]]) -> dict[str, float]:
    turns: list[object] = [HumanMessage(content="go")]
    for name, args, output in calls:
        turns.append(AIMessage(content="", tool_calls=[RagasCall(name=name, args=args)]))
        turns.append(ToolMessage(content=str(output)))
    expected = [RagasCall(name=name, args=args) for name, args in ref]
    return {
        key: asyncio.run(metric.ascore(user_input=turns, reference_tool_calls=expected)).value
        for key, metric in RAGAS
    }


def deepeval_scores(calls: list[list[object]], ref: list[list[object]]) -> dict[str, float]:
    called = [DeepEvalCall(name=n, input_parameters=a, output=o) for n, a, o in calls]
    expected = [DeepEvalCall(name=n, input_parameters=a) for n, a in ref]
    case = LLMTestCase(
        input="go", actual_output="done", tools_called=called, expected_tools=expected
    )
    out = {}
    for key, metric in DEEPEVAL:
        metric.measure(case)
        out[key] = metric.score
    return out


for line in sys.stdin:
    case = json.loads(line)
    print(
        json.dumps(
            {
                **ragas_scores(case["calls"], case["ref"]),
                **deepeval_scores(case["calls"], case["ref"]),
            }
        )
    )
