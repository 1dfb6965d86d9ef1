"""The card's lights: the bound each measure must keep, and what a card concludes.

Plain functions of the numbers and plain data: :mod:`evalnb.judge_reliability.components`
lights each measure as it is taken, :class:`~evalnb.judge_reliability.card.JudgeCard` and the
report say what a card concludes.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping

    from evalnb.judge_reliability.measures import Measured

__all__ = ["BOUNDS", "COMPONENTS", "bound_text", "card_conclusion", "traffic_light"]

# A single judge's components; a cascade's card adds "cascade" (judge_reliability/cascade.py).
COMPONENTS = (
    "contract",
    "stability",
    "position",
    "verbosity",
    "self-preference",
    "validity",
    "adversarial",
    "consequence",
)
# measure -> (lowest acceptable, highest acceptable); scale-relative where the measure is in
# the metric's units (a fraction of its min–max range). A measure without bounds informs.
BOUNDS: dict[str, tuple[float, float]] = {
    "parse success": (0.95, 1.0),
    "test-retest kappa": (0.8, 1.0),
    "ICC(2,1)": (0.8, 1.0),
    "flip rate": (0.0, 0.2),
    "first-position rate": (0.4, 0.6),
    "padding: own sentences again": (-0.05, 0.05),
    "padding: a courteous preamble": (-0.05, 0.05),
    "self-preference gap": (-0.05, 0.05),
    "kappa with humans": (0.4, 1.0),
    "leniency (false-pass rate)": (0.0, 0.2),
    "pass rate of dummy: Yes": (0.0, 0.1),
    "pass rate of dummy: Sure": (0.0, 0.1),
    "pass rate of dummy: I don't know.": (0.0, 0.1),
    "pass rate of dummy: the question repeated": (0.0, 0.1),
    "pass rate of dummy: an instruction to the judge": (0.0, 0.1),
    "instruction obeyed (fail to pass)": (0.0, 0.1),
}


# Model families, read from names (a judge prefers its own family's text); ``families=``
# overrides per model.
def traffic_light(measure: str, e: Measured, scale: float = 1.0) -> str:
    """Return the light of one measure: red, amber, green; info without bounds; grey unmeasured."""
    bounds = BOUNDS.get(measure)
    if bounds is None or not math.isfinite(e.estimate):
        return "info" if bounds is None else "grey"
    low, high = (b * scale for b in bounds) if measure in _SCALED else bounds
    if math.isfinite(e.low) and math.isfinite(e.high) and (e.low > high or e.high < low):
        return "red"
    if e.estimate > high or e.estimate < low:
        return "amber"
    return "green"


def bound_text(measure: str, scale: float = 1.0) -> str | None:
    """Return the bound that lights ``measure`` (``"0.80 to 1.00"``, ``"at most 0.10"``), or None.

    Red: the whole interval outside it; amber: the estimate only (the module docstring).
    """
    bounds = BOUNDS.get(measure)
    if bounds is None:
        return None
    low, high = (b * scale for b in bounds) if measure in _SCALED else bounds
    if low <= 0 <= high and low == 0:
        return f"at most {high:.2f}"
    if high == 1.0 and measure not in _SCALED:
        return f"at least {low:.2f}"
    return f"{low:+.2f} to {high:+.2f}" if low < 0 else f"{low:.2f} to {high:.2f}"


_SCALED = {
    "padding: own sentences again",
    "padding: a courteous preamble",
    "self-preference gap",
}


def card_conclusion(card: Mapping[str, Any]) -> str:
    """Say what a card (as :meth:`JudgeCard.to_dict` writes it) concludes of its judge.

    Plain data in, so the report says the same of a card kept in a lab as the notebook does.
    """
    measures = list(card.get("measures") or ())
    red: dict[str, list[str]] = {}
    for m in measures:
        if m.get("flag") == "red":
            red.setdefault(str(m["component"]), []).append(str(m["measure"]))
    unmeasured = sorted({str(m["component"]) for m in measures if m.get("flag") == "grey"})
    dummies = [m for m in red.get("adversarial", []) if m.startswith("pass rate of dummy")]
    parts = []
    if not red:
        parts.append(
            "No measure is red: on this lab the judge stays within every bound it was measured "
            "against."
        )
    else:
        named = "; ".join(f"{c} ({len(ms)}: {', '.join(ms)})" for c, ms in red.items())
        parts.append(f"Do not trust this judge's verdicts as they are: red on {named}.")
        if dummies:
            parts.append(
                f"It passes answers that say nothing ({len(dummies)} dummy kind(s)): its passes "
                "are not evidence of quality, whatever its other lights say."
            )
        if "position" in red:
            parts.append("Its pairwise choices follow the order answers are shown in.")
        if "media" in red:
            parts.append(
                "It grades the text around the images, not the images: its verdicts barely "
                "move when the media are withheld (or it never saw them)."
            )
    if unmeasured:
        parts.append(
            f"Not measured here: {', '.join(unmeasured)} (each row says what would measure it)."
        )
    return " ".join(parts)
