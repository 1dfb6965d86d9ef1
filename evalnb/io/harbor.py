"""Harbor rewards JSONL: each line one ``{name: reward}`` object or ``null``."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from evalnb.io.fields import Where, to_json

if TYPE_CHECKING:
    from evalnb.io.builder import LabBuilder
    from evalnb.io.source import Line

__all__ = ["EVALUATOR", "read_harbor"]

EVALUATOR = "harbor"


def read_harbor(lines: list[Line], source: str, builder: LabBuilder, *, model: str) -> None:
    """Add one case per reward line, with the reward as a score of evaluator ``harbor``.

    A ``null`` line is a task without a reward: its score is null with the reason in
    ``detail`` (Harbor's aggregation counts it as 0; the ``metric`` command does the same).
    """
    builder.info["format"] = "harbor"
    parsed: list[tuple[int, str | None, float | None]] = []
    for number, value in lines:
        where = Where(source, f"line {number}")
        if value is None:
            parsed.append((number, None, None))
            continue
        rec = where.record(value, "an object with exactly one key, or null")
        if len(rec) != 1:
            raise where.error(None, "exactly one key per reward object", value)
        ((key, _),) = rec.items()
        parsed.append((number, key, where.number(rec, key)))
    counts = Counter(name for _, name, _ in parsed if name is not None)
    default = counts.most_common(1)[0][0] if counts else "reward"
    for index, (number, name, reward) in enumerate(parsed):
        where = Where(source, f"line {number}")
        case_id = builder.add_case(
            {"case_id": f"task-{index}", "prompt": "", "test_id": source}, where, id_field="id"
        )
        builder.add_output({"case_id": case_id, "model": model, "actual": ""}, where, id_field="id")
        detail = None
        if name is None:
            detail = to_json({"reason": "reward line is null; Harbor counts it as 0"})
        elif reward is None:
            detail = to_json({"reason": "reward value is null; Harbor counts it as 0"})
        builder.add_imported_score(
            (case_id, model, 0),
            EVALUATOR,
            name or default,
            reward,
            detail,
            description="Reward recorded by a Harbor job for one task.",
        )
