"""The ten kinds of test question an LLM writes from a corpus: task, reply schema, rendering.

Each kind has its own instruction and its own JSON reply schema (no key missing, none
extra, each typed). Answerable kinds must quote their ``evidence`` word for word from the
source(s) given, so every expected answer can be traced to text of the corpus; the reply
parser in :mod:`evalnb.generation.llm_generators` checks that.

``factual``
    A question answered by a statement of the source.
``boolean``
    A yes/no question; the answer asked for (yes or no) is drawn per call, so a suite holds
    both.
``multiple_choice``
    A question with four options, one correct; the prompt lists them as A–D.
``multi_hop``
    A question answerable only by combining a fact of one chunk with a fact of another
    (one quote from each).
``inference``
    A question whose answer follows from the source by a short step of reasoning without
    being stated.
``comparison``
    How two things described in two chunks differ or agree.
``numerical``
    A question whose answer is a number (a count, an amount, a duration, a version).
``conditional``
    A question that sets a condition (*if*, *when*, *unless*) its answer depends on.
``ambiguity``
    A question with two readings the source answers differently; the expected answer
    names both and answers each.
``unanswerable``
    A question on the source's subject that the source does not answer; the expected
    answer declines and says what is missing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import random
    from collections.abc import Callable

__all__ = ["LLM_KINDS", "LLMKind", "describe_keys"]

Reply = dict[str, Any]


@dataclass(frozen=True)
class LLMKind:
    """One kind of generated question.

    Attributes
    ----------
    name
        The generator's name (the cases' ``question_type``).
    task
        The instruction; ``{answer}`` is filled from :attr:`draw` when it has one.
    keys
        Each reply key with what it must hold (shown to the model, in this order).
    schema
        The reply's JSON schema.
    example
        A reply of the right shape (shown as the format, not the content).
    render
        Reply → (test prompt, expected answer).
    sources
        How many chunks the model reads (1, or 2 for questions spanning chunks).
    evidence_per_source
        Whether quote *i* must come from source *i* (multi-hop), rather than from any.
    answerable
        False for questions the corpus does not answer (no evidence; a refusal expected).
    draw
        Per-call choices filled into :attr:`task`, drawn from the call's seeded generator.
    """

    name: str
    task: str
    keys: dict[str, str]
    schema: dict[str, Any]
    example: Reply
    render: Callable[[Reply], tuple[str, str]]
    sources: int = 1
    evidence_per_source: bool = False
    answerable: bool = True
    draw: Callable[[random.Random], dict[str, str]] | None = None


_TEXT: dict[str, Any] = {"type": "string", "minLength": 1, "maxLength": 2000}
_QUESTION: dict[str, Any] = {"type": "string", "minLength": 10, "maxLength": 1000}
_QUESTION_KEY = (
    "the question, self-contained: it names what it is about (no 'the text', 'the source')"
)
_EVIDENCE_KEY = "a list of passages copied word for word from the source(s) that support the answer"


def _evidence(lo: int, hi: int) -> dict[str, Any]:
    return {"type": "array", "items": _TEXT, "minItems": lo, "maxItems": hi}


def _object(**properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def _qa(reply: Reply) -> tuple[str, str]:
    return str(reply["question"]), str(reply["answer"])


def _boolean(reply: Reply) -> tuple[str, str]:
    return str(reply["question"]), f"{reply['answer']}. {reply['explanation']}"


_LETTERS = "ABCD"


def _choice(reply: Reply) -> tuple[str, str]:
    options = "\n".join(
        f"{letter}) {text}" for letter, text in zip(_LETTERS, reply["options"], strict=True)
    )
    prompt = f"{reply['question']}\n{options}\nAnswer with the letter of the correct option."
    index = _LETTERS.index(reply["correct"])
    return prompt, f"{reply['correct']}) {reply['options'][index]}"


def _refusal(reply: Reply) -> tuple[str, str]:
    missing = str(reply["missing"]).rstrip(".")
    return str(reply["question"]), (
        f"The documents do not answer this question; they do not say {missing}."
    )


def _yes_or_no(rng: random.Random) -> dict[str, str]:
    return {"answer": rng.choice(("Yes", "No"))}


def _kinds() -> dict[str, LLMKind]:
    qa_keys = {
        "question": _QUESTION_KEY,
        "answer": "the correct answer, in one or two sentences",
        "evidence": _EVIDENCE_KEY,
    }
    kinds = [
        LLMKind(
            "factual",
            "Write one question whose answer is stated plainly in the source, and that answer.",
            qa_keys,
            _object(question=_QUESTION, answer=_TEXT, evidence=_evidence(1, 3)),
            {"question": "Which …?", "answer": "…", "evidence": ["…"]},
            _qa,
        ),
        LLMKind(
            "boolean",
            "Write one yes/no question about the source whose correct answer is {answer}.",
            {
                "question": _QUESTION_KEY,
                "answer": 'exactly "Yes" or "No"',
                "explanation": "one sentence saying why, from the source",
                "evidence": _EVIDENCE_KEY,
            },
            _object(
                question=_QUESTION,
                answer={"enum": ["Yes", "No"]},
                explanation=_TEXT,
                evidence=_evidence(1, 3),
            ),
            {"question": "Does …?", "answer": "No", "explanation": "…", "evidence": ["…"]},
            _boolean,
            draw=_yes_or_no,
        ),
        LLMKind(
            "multiple_choice",
            "Write one multiple-choice question about the source with four options, exactly "
            "one of them correct and the other three plausible but wrong.",
            {
                "question": _QUESTION_KEY,
                "options": "a list of four distinct options",
                "correct": 'the letter of the correct option: "A", "B", "C" or "D"',
                "evidence": _EVIDENCE_KEY,
            },
            _object(
                question=_QUESTION,
                options={
                    "type": "array",
                    "items": _TEXT,
                    "minItems": 4,
                    "maxItems": 4,
                    "uniqueItems": True,
                },
                correct={"enum": list(_LETTERS)},
                evidence=_evidence(1, 3),
            ),
            {
                "question": "Which …?",
                "options": ["…", "…", "…", "…"],
                "correct": "B",
                "evidence": ["…"],
            },
            _choice,
        ),
        LLMKind(
            "multi_hop",
            "Write one question that can only be answered by combining a fact from Source 1 "
            "with a fact from Source 2; neither source alone answers it.",
            {
                **qa_keys,
                "evidence": "two passages copied word for word: the first from "
                "Source 1, the second from Source 2",
            },
            _object(question=_QUESTION, answer=_TEXT, evidence=_evidence(2, 2)),
            {"question": "…?", "answer": "…", "evidence": ["… (Source 1)", "… (Source 2)"]},
            _qa,
            sources=2,
            evidence_per_source=True,
        ),
        LLMKind(
            "inference",
            "Write one question whose answer is not stated in so many words but follows from "
            "the source by a short step of reasoning; the answer gives that reasoning briefly.",
            qa_keys,
            _object(question=_QUESTION, answer=_TEXT, evidence=_evidence(1, 4)),
            {"question": "Why …?", "answer": "…", "evidence": ["…", "…"]},
            _qa,
        ),
        LLMKind(
            "comparison",
            "Write one question asking how two things described in the sources differ or "
            "agree, and the answer that compares them.",
            {
                **qa_keys,
                "evidence": "two to four passages copied word for word from the "
                "sources, covering both things compared",
            },
            _object(question=_QUESTION, answer=_TEXT, evidence=_evidence(2, 4)),
            {"question": "How does … differ from …?", "answer": "…", "evidence": ["…", "…"]},
            _qa,
            sources=2,
        ),
        LLMKind(
            "numerical",
            "Write one question whose answer is a number given in the source (a count, an "
            "amount, a duration, a date or a version), and that answer with its unit.",
            {**qa_keys, "answer": "the number, with its unit if it has one"},
            _object(
                question=_QUESTION, answer={**_TEXT, "pattern": "[0-9]"}, evidence=_evidence(1, 3)
            ),
            {"question": "How many …?", "answer": "30 days", "evidence": ["…"]},
            _qa,
        ),
        LLMKind(
            "conditional",
            "Write one question that sets a condition (If …, When …, Unless …) on which its "
            "answer depends according to the source, and that answer.",
            {
                "question": _QUESTION_KEY,
                "condition": "the condition, as stated in the question",
                "answer": "the answer under that condition",
                "evidence": _EVIDENCE_KEY,
            },
            _object(question=_QUESTION, condition=_TEXT, answer=_TEXT, evidence=_evidence(1, 3)),
            {"question": "If …, what …?", "condition": "If …", "answer": "…", "evidence": ["…"]},
            _qa,
        ),
        LLMKind(
            "ambiguity",
            "Write one question that is ambiguous as asked: it has two readings that the source "
            "answers differently. The answer names both readings and answers each.",
            {
                "question": _QUESTION_KEY,
                "readings": "the two readings of the question",
                "answer": "an answer that names both readings and answers each",
                "evidence": _EVIDENCE_KEY,
            },
            _object(
                question=_QUESTION,
                readings={"type": "array", "items": _TEXT, "minItems": 2, "maxItems": 3},
                answer=_TEXT,
                evidence=_evidence(1, 4),
            ),
            {
                "question": "…?",
                "readings": ["…", "…"],
                "answer": "If you mean …, …; if …, …",
                "evidence": ["…"],
            },
            _qa,
        ),
        LLMKind(
            "unanswerable",
            "Write one question that a reader of the source could plausibly ask about its "
            "subject but that the source does not answer, and say what information is missing.",
            {
                "question": _QUESTION_KEY,
                "missing": "what the source would have to say to answer it (a noun phrase)",
            },
            _object(question=_QUESTION, missing=_TEXT),
            {"question": "What …?", "missing": "the …"},
            _refusal,
            answerable=False,
        ),
    ]
    return {k.name: k for k in kinds}


LLM_KINDS: dict[str, LLMKind] = _kinds()


def describe_keys(kind: LLMKind) -> str:
    """Return the reply format shown to the model: each key and what it holds, then an example."""
    lines = [f'- "{key}": {what}' for key, what in kind.keys.items()]
    example = json.dumps(kind.example, ensure_ascii=False)
    return "\n".join([*lines, f"Format example (not content): {example}"])
