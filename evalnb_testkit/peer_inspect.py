"""Run by tests/io/test_agents.py in the peers' environment (.venv-peers: Inspect AI).

Runs a real Inspect eval, offline: a scripted model API (two agents, so two logs) calls a
weather tool that fails for one city, over two epochs, scored by Inspect's ``match`` and by
a scorer returning a dict. Writes the JSON logs under ``argv[1]`` and prints, as JSON, what
Inspect itself says of every sample: its tool calls, final completion and scores as floats
(Inspect's own ``value_to_float``).
"""

from __future__ import annotations

import json
import sys
import warnings

warnings.simplefilter("ignore")

from inspect_ai import Task  # noqa: E402
from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.dataset import Sample  # noqa: E402
from inspect_ai.log import read_eval_log  # noqa: E402
from inspect_ai.model import (  # noqa: E402
    ChatCompletionChoice,
    ChatMessageAssistant,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    modelapi,
)
from inspect_ai.scorer import Score, Target, match, mean, scorer, value_to_float  # noqa: E402
from inspect_ai.solver import TaskState, generate, use_tools  # noqa: E402
from inspect_ai.tool import ToolCall, ToolError, tool  # noqa: E402


@tool
def weather():  # type: ignore[no-untyped-def]
    async def execute(city: str, unit: str = "C") -> str:
        """Report the weather of a city.

        Args:
            city: The city.
            unit: C or F.
        """
        if city == "Atlantis":
            msg = f"no weather station in {city}"
            raise ToolError(msg)
        return f"sunny, 21 {unit} in {city}"

    return execute


@modelapi(name="scripted")
class Scripted(ModelAPI):
    """Agent a asks the tool once; agent b asks twice (a loop) in Fahrenheit."""

    def __init__(self, model_name, base_url=None, api_key=None, config=GenerateConfig(), **_):  # type: ignore[no-untyped-def]  # noqa: B008
        super().__init__(model_name, base_url, api_key, [], config)

    async def generate(self, input, tools, tool_choice, config):  # type: ignore[no-untyped-def]  # noqa: A002
        results = [m for m in input if m.role == "tool"]
        city = next(m for m in input if m.role == "user").text.split()[-1].strip("?")
        wanted = 1 if self.model_name == "agent-a" else 2
        unit = "C" if self.model_name == "agent-a" else "F"
        if len(results) < wanted:
            call = ToolCall(
                id=f"call_{len(results)}",
                function="weather",
                arguments={"city": city, "unit": unit},
            )
            msg = ChatMessageAssistant(content="", tool_calls=[call], model=self.model_name)
        else:
            last = results[-1]
            text = f"Sorry: {last.error.message}" if last.error else f"It is {last.text}."
            msg = ChatMessageAssistant(content=text, model=self.model_name)
        return ModelOutput(
            model=self.model_name,
            choices=[ChatCompletionChoice(message=msg, stop_reason="stop")],
            usage=ModelUsage(input_tokens=12, output_tokens=6, total_tokens=18),
        )


@scorer(metrics={"mentions_city": [mean()], "polite": [mean()]})
def checks():  # type: ignore[no-untyped-def]
    async def score(state: TaskState, target: Target) -> Score:
        text = state.output.completion
        city = state.input_text.split()[-1].strip("?")
        return Score(
            value={"mentions_city": city in text, "polite": "C" if "Sorry" in text else "P"},
            explanation=f"checked {len(text)} characters",
        )

    return score


def main() -> None:
    cities = ["Paris", "Lima", "Atlantis"]
    task = Task(
        dataset=[
            Sample(input=f"What is the weather in {c}?", target=f"sunny, 21 C in {c}", id=c.lower())
            for c in cities
        ],
        solver=[use_tools(weather()), generate()],
        scorer=[match(location="any"), checks()],
        epochs=2,
    )
    expected = []
    for agent in ("agent-a", "agent-b"):
        (log,) = inspect_eval(
            task, model=f"scripted/{agent}", log_format="json", log_dir=sys.argv[1], display="none"
        )
        log = read_eval_log(log.location)
        to_float = value_to_float()
        for s in log.samples or []:
            scores = {}
            for name, sc in (s.scores or {}).items():
                if isinstance(sc.value, dict):
                    scores.update({f"{name}/{k}": to_float(v) for k, v in sc.value.items()})
                else:
                    scores[name] = to_float(sc.value)
            calls = [
                (c.function, c.arguments)
                for m in s.messages
                if m.role == "assistant"
                for c in m.tool_calls or []
            ]
            errors = [m.error.message for m in s.messages if m.role == "tool" and m.error]
            expected.append(
                {
                    "file": log.location,
                    "model": log.eval.model,
                    "id": str(s.id),
                    "epoch": s.epoch,
                    "completion": s.output.completion,
                    "scores": scores,
                    "calls": calls,
                    "tool_errors": errors,
                    "messages": len(s.messages),
                }
            )
    print(json.dumps(expected))


if __name__ == "__main__":
    main()
