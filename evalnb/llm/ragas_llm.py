"""evalnb's :class:`~evalnb.llm.client.LLMClient` as a ragas LLM (``evalnb[ragas]``).

ragas' collections metrics take an ``InstructorBaseRagasLLM``: ``agenerate(prompt,
response_model)`` returning a filled pydantic model. :func:`ragas_llm` adapts a client to it,
so ragas' LLM metrics run through evalnb's client — every call in its cache (a rerun, or a
run resumed after a crash, asks nothing twice), its retries, deadlines and key masking. The
prompt gets the response model's JSON Schema and the reply is validated against the model;
a reply that is not is an error the metric reports for that row.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from evalnb.llm.pacing import run_blocking
from evalnb.llm.parsed import parse_json

if TYPE_CHECKING:
    from evalnb.llm.client import LLMClient

__all__ = ["RAGAS_MISSING", "ragas_llm"]

RAGAS_MISSING = (
    "needs ragas, which is not installed in this environment. Where evalnb's dev tools are "
    "not installed: pip install 'evalnb[ragas]'. Beside them (the .venv that scripts/install "
    "builds) that install would break scripts/test: ragas' instructor pins rich<14 and "
    "import-linter needs rich>=14.2. Give ragas an environment of its own instead, from the "
    "repository root: python3 -m venv .venv-ragas && .venv-ragas/bin/pip install "
    "torch==2.13.0 && .venv-ragas/bin/pip install -e '.[ragas]'"
)
"""What a call that needs ragas says when it is missing (a command that works, both ways)."""

_ASK_JSON = (
    "\n\nReply with one JSON object only, no other text, that validates against this "
    "JSON Schema:\n{SCHEMA}"
)


def ragas_llm(client: LLMClient, *, json_mode: bool = True) -> Any:  # noqa: ANN401 - ragas' type
    """Return ``client`` as a ragas ``InstructorBaseRagasLLM`` (ragas must be installed).

    ``json_mode`` asks the endpoint for a JSON reply (``response_format``); turn it off for a
    server that rejects the parameter.
    """
    try:
        from ragas.llms.base import InstructorBaseRagasLLM  # noqa: PLC0415 - optional
    except ImportError:
        msg = f"ragas_llm {RAGAS_MISSING}"
        raise ImportError(msg) from None

    class _EvalnbLLM(InstructorBaseRagasLLM):  # type: ignore[misc]
        """An evalnb LLMClient behind ragas' LLM interface."""

        def __init__(self) -> None:
            self.client = client
            self.model = client.model
            self.params = {"response_format": {"type": "json_object"}} if json_mode else {}

        def __repr__(self) -> str:
            return f"ragas_llm({self.model!r} at {client.public_endpoint})"

        async def agenerate(self, prompt: str, response_model: type[Any]) -> Any:  # noqa: ANN401
            schema = json.dumps(response_model.model_json_schema(), ensure_ascii=False)
            ask = [{"role": "user", "content": prompt + _ASK_JSON.replace("{SCHEMA}", schema)}]
            (reply,) = await client.achat_many([ask], params=self.params)
            if reply.error is not None:
                msg = f"the LLM call failed: {reply.error}"
                raise RuntimeError(msg)
            parsed = parse_json(reply.content)
            if not parsed.ok:
                msg = f"the LLM's reply is not JSON: {parsed.note}"
                raise ValueError(msg)
            return response_model.model_validate(parsed.value)

        def generate(self, prompt: str, response_model: type[Any]) -> Any:  # noqa: ANN401
            return run_blocking(self.agenerate(prompt, response_model))

    return _EvalnbLLM()
