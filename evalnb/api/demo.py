"""A realistic, deterministic demo lab: a bank's RAG assistant answered by three models.

Run ``python -m evalnb.api.demo data/demo_lab.json`` to regenerate ``data/demo_lab.json``; the
test suite checks that the committed file is exactly what this module produces.
"""

from __future__ import annotations

import random
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalnb.api.lab import Lab
from evalnb.io.builder import LabBuilder
from evalnb.io.fields import Where, to_json

__all__ = ["build_demo_lab"]

_SEED = 20261122
_CORPUS = "https://docs.example.com/northwind-bank/{topic}.pdf"


@dataclass(frozen=True)
class _Attr:
    name: str
    low: float
    high: float
    fmt: str  # how a value is written, e.g. "${:,.0f}" or "{:.1f}%"


_TOPICS: dict[str, tuple[list[str], list[_Attr]]] = {
    "cards": (
        ["Classic card", "Gold card", "Platinum card", "Student card", "Business card"],
        [
            _Attr("annual fee", 0, 450, "${:,.0f}"),
            _Attr("foreign transaction fee", 0, 3, "{:.1f}%"),
            _Attr("cashback rate", 0.5, 3, "{:.1f}%"),
            _Attr("credit limit", 500, 25000, "${:,.0f}"),
        ],
    ),
    "loans": (
        ["personal loan", "car loan", "home equity loan", "student loan", "green energy loan"],
        [
            _Attr("APR", 3, 19, "{:.2f}%"),
            _Attr("maximum term", 12, 360, "{:.0f} months"),
            _Attr("origination fee", 0, 5, "{:.1f}%"),
            _Attr("minimum amount", 1000, 50000, "${:,.0f}"),
        ],
    ),
    "accounts": (
        [
            "Everyday Checking",
            "Premium Checking",
            "High-Yield Savings",
            "Youth Savings",
            "Joint Account",
        ],
        [
            _Attr("monthly fee", 0, 25, "${:,.0f}"),
            _Attr("minimum balance", 0, 5000, "${:,.0f}"),
            _Attr("interest rate", 0, 4.5, "{:.2f}%"),
            _Attr("free ATM withdrawals", 2, 20, "{:.0f} per month"),
        ],
    ),
    "travel_insurance": (
        ["Basic plan", "Plus plan", "Family plan", "Annual Multi-Trip plan", "Backpacker plan"],
        [
            _Attr("medical cover", 50000, 5000000, "${:,.0f}"),
            _Attr("baggage cover", 500, 5000, "${:,.0f}"),
            _Attr("maximum trip length", 14, 365, "{:.0f} days"),
            _Attr("excess", 0, 500, "${:,.0f}"),
        ],
    ),
    "security": (
        [
            "one-time passcode",
            "card freeze",
            "biometric login",
            "fraud alert",
            "password reset link",
        ],
        [
            _Attr("validity", 1, 60, "{:.0f} minutes"),
            _Attr("lockout threshold", 3, 10, "{:.0f} failed attempts"),
            _Attr("support response time", 1, 48, "{:.0f} hours"),
        ],
    ),
    "mortgages": (
        [
            "fixed-rate mortgage",
            "adjustable-rate mortgage",
            "first-home mortgage",
            "jumbo mortgage",
            "bridge loan",
        ],
        [
            _Attr("rate", 2.5, 9, "{:.2f}%"),
            _Attr("minimum down payment", 3, 25, "{:.0f}%"),
            _Attr("closing time", 14, 60, "{:.0f} days"),
            _Attr("prepayment penalty", 0, 3, "{:.1f}%"),
        ],
    ),
}

_ACTIONS = (
    ("apply for", "online banking"),
    ("cancel", "the mobile app"),
    ("upgrade", "online banking"),
    ("close", "a branch appointment"),
)
_MISSING = ("Diamond", "Titanium", "Emerald", "Carbon", "Obsidian")
_QTYPES = ("factoid", "yes_no", "comparison", "procedural", "definition", "out_of_scope")


@dataclass(frozen=True)
class _Model:
    name: str
    skill: float  # chance of a correct answer when the context holds the fact
    weak: tuple[str, str]  # a (topic, question type) cell where it fails far more often
    latency: float  # median seconds
    price: float  # dollars per 1k tokens


_MODELS = (
    _Model("atlas-70b", 0.9, ("security", "procedural"), 4.0, 0.0100),
    _Model("breeze-8b", 0.75, ("loans", "comparison"), 1.6, 0.0020),
    _Model("comet-mini", 0.6, ("travel_insurance", "yes_no"), 0.7, 0.0004),
)
_PERTURBATIONS = (("keyboard_typos", "medium"), ("comma", "low"), ("word_swap", "low"))


def _facts(rng: random.Random) -> dict[str, dict[tuple[str, str], str]]:
    facts: dict[str, dict[tuple[str, str], str]] = {}
    for topic, (products, attrs) in _TOPICS.items():
        facts[topic] = {
            (p, a.name): a.fmt.format(rng.uniform(a.low, a.high)) for p in products for a in attrs
        }
    return facts


def _question(
    rng: random.Random, topic: str, qtype: str, facts: dict[tuple[str, str], str]
) -> tuple[str, str, str, str]:
    """(prompt, expected, the fact sentence a retriever should find, text-matching condition)."""
    products, attrs = _TOPICS[topic]
    p, attr = rng.choice(products), rng.choice(attrs)
    value = facts[(p, attr.name)]
    fact = f"The {attr.name} of the {p} is {value}."
    if qtype == "factoid":
        return f"What is the {attr.name} of the {p}?", fact, fact, f'"{value}"'
    if qtype == "yes_no":
        other = facts[(rng.choice([q for q in products if q != p]), attr.name)]
        if other == value or rng.random() < 0.5:
            return f"Is the {attr.name} of the {p} {value}?", f"Yes, it is {value}.", fact, '"Yes"'
        return f"Is the {attr.name} of the {p} {other}?", f"No, it is {value}.", fact, '"No"'
    if qtype == "comparison":
        q = rng.choice([x for x in products if x != p])
        v2 = facts[(q, attr.name)]
        both = f"{fact} The {attr.name} of the {q} is {v2}."
        return (
            f"Which has the higher {attr.name}, the {p} or the {q}?",
            f"The {p} has {value} and the {q} has {v2}.",
            both,
            f'"{value}" AND "{v2}"',
        )
    if qtype == "procedural":
        # A numbered procedure, in the documents and the expected answer alike, so that
        # step_alignment has steps to align (the answers copy, drop or miss them).
        action, channel = rng.choice(_ACTIONS)
        steps = (
            f"Sign in to {channel}.",
            "Open Products.",
            f"Choose the {p}.",
            "Confirm with your passcode.",
        )
        text = f"To {action} the {p}: " + " ".join(f"{i}. {s}" for i, s in enumerate(steps, 1))
        return f"How do I {action} the {p}?", text, text, f'"{channel}"'

    if qtype == "definition":
        text = f"The {attr.name} is a term of every {topic.replace('_', ' ')} product."
        return f"What does {attr.name} mean for the {p}?", text, f"{text} {fact}", f'"{attr.name}"'
    missing = f"{rng.choice(_MISSING)} {products[0].split()[-1]}"
    return (
        f"What is the {attr.name} of the {missing}?",
        f"The documents do not describe a {missing}.",
        fact,
        '"do not"',
    )


def _answer(rng: random.Random, model: _Model, case: dict[str, Any], found: bool) -> str:
    expected, topic, qtype = case["expected"][0], case["topic"], case["question_type"]
    chance = model.skill * (1.0 if found else 0.35)
    if (topic, qtype) == model.weak:
        chance *= 0.3
    if rng.random() < chance:
        closing = f"{expected} Let me know if you need anything else."
        if qtype == "procedural":  # the last step forgotten, a common slip in procedures
            closing = expected.rsplit(" 4. ", 1)[0]
        answer: str = rng.choice(
            [expected, f"According to the documents, {expected[0].lower()}{expected[1:]}", closing]
        )
        return answer
    roll = rng.random()
    if roll < 0.25:
        return "I'm sorry, I could not find that information in the provided documents."
    wrong = rng.choice(["$95", "12.5%", "30 days", "$1,000", "4.75%", "48 months"])
    if roll < 0.8:
        return f"The answer is {wrong}, as stated in the product terms."
    return f"{expected} It also includes free lounge access and a {wrong} welcome bonus."


def _perturb(rng: random.Random, prompt: str, kind: str) -> str:
    chars = list(prompt)
    if kind == "comma":
        words = prompt.split(" ")
        i = rng.randrange(1, len(words))
        words[i - 1] += ","
        return " ".join(words)
    if kind == "word_swap":
        words = prompt.split(" ")
        i = rng.randrange(1, len(words) - 1)
        words[i], words[i + 1] = words[i + 1], words[i]
        return " ".join(words)
    for _ in range(max(1, len(chars) // 25)):
        i = rng.randrange(len(chars) - 1)
        chars[i], chars[i + 1] = chars[i + 1], chars[i]
    return "".join(chars)


def build_demo_lab(n_per_cell: int = 9, n_perturbed: int = 45) -> Lab:
    """Build the demo lab.

    6 topics × 6 question types × ``n_per_cell`` cases, plus ``n_perturbed`` perturbed
    copies, each answered by three models (with durations, costs, retrieval misses, empty
    answers and host errors).
    """
    rng = random.Random(_SEED)
    facts = _facts(rng)
    b = LabBuilder()
    cases: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for topic in _TOPICS:
        doc = _CORPUS.format(topic=topic)
        for qtype in _QTYPES:
            made = 0
            while made < n_per_cell:
                prompt, expected, fact, condition = _question(rng, topic, qtype, facts[topic])
                if (prompt, expected) in seen:  # a repeated draw would be the same case
                    continue
                seen.add((prompt, expected))
                made += 1
                case: dict[str, Any] = {
                    "test_id": topic,
                    "prompt": prompt,
                    "expected": [expected],
                    "condition": condition,
                    "categories": ["question_answering"],
                    "topic": topic,
                    "question_type": qtype,
                    "corpus": [doc],
                    "_fact": fact,
                }
                cases.append(case)
    for original in rng.sample(cases, n_perturbed):
        kind, intensity = rng.choice(_PERTURBATIONS)
        copy: dict[str, Any] = dict(original, prompt=_perturb(rng, original["prompt"], kind))
        copy["categories"] = ["question_answering", "perturbed", f"perturbed_by:{kind}:{intensity}"]
        copy.update(perturbation=kind, perturbation_intensity=intensity, _of=original)
        cases.append(copy)
    answers: dict[tuple[str | None, str], str] = {}
    for case in cases:
        fact = case.pop("_fact")
        original = case.pop("_of", None)
        if original is not None:
            case["perturbation_of"] = original["case_id"]
        case_id = b.add_case(case, _where(), id_field="key")
        for model in _MODELS:
            # A robust model answers a perturbed prompt as it answered the original.
            before = answers.get((case.get("perturbation_of"), model.name))
            reuse = before if before is not None and rng.random() < 0.8 else None
            answers[(case_id, model.name)] = _add_output(
                rng, b, model, case, case_id, fact, facts[case["topic"]], reuse
            )
    for model in _MODELS:
        meta = {
            "key": model.name,
            "name": model.name,
            "llm_model_name": model.name,
            "model_type": "openai_compatible",
            "price_per_1k_tokens": model.price,
        }
        b.add_model(model.name, model.name, to_json(meta))
    b.info.update(
        name="Northwind Bank assistant (demo)",
        description="Synthetic RAG test lab generated by evalnb.api.demo (seeded).",
    )
    return Lab(b.frames())


def _add_output(
    rng: random.Random,
    b: LabBuilder,
    model: _Model,
    case: dict[str, Any],
    case_id: str,
    fact: str,
    facts: dict[tuple[str, str], str],
    reuse: str | None,
) -> str:
    # The retriever returns three chunks: usually the right fact among related ones.
    related = [f"The {a} of the {p} is {v}." for (p, a), v in rng.sample(sorted(facts.items()), 3)]
    context = [c for c in related if c != fact][:2]
    found = rng.random() < 0.85
    if found:
        context.insert(rng.randrange(3), fact)
    else:
        context.append(
            f"Northwind Bank {case['topic'].replace('_', ' ')} terms, section "
            f"{rng.randint(1, 40)}: fees and limits may change with 30 days notice."
        )
    roll = rng.random()
    error = None
    if roll < 0.015:
        error = "MODEL HOST INTERNAL ERROR: upstream timeout after 30.0 s"
        actual, duration, cost = error, 30.0, 0.0
    else:
        actual = reuse if reuse is not None else ""
        if reuse is None and roll >= 0.027:
            actual = _answer(rng, model, case, found)
        duration = round(rng.lognormvariate(0, 0.35) * model.latency, 3)
        tokens = (len(case["prompt"]) + sum(map(len, context)) + len(actual)) / 4
        cost = round(tokens / 1000 * model.price, 6)
    b.add_output(
        {
            "case_id": case_id,
            "model": model.name,
            "actual": actual,
            "context": context,
            "duration_s": duration,
            "cost": cost,
            "error": error,
        },
        _where(),
        id_field="key",
    )
    return actual


def _where() -> Where:
    return Where("evalnb.api.demo")


if __name__ == "__main__":
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "data/demo_lab.json")
    build_demo_lab().export(out)
    print(f"wrote {out}")
