"""Can I trust this judge on my lab? The judge reliability card, in one call.

:func:`judge_card` draws a seeded sample of the lab's answers and asks the judge again, in
the ways the literature says judges fail, then summarises each component as measures with a
95 % interval and a traffic light:

1. **contract** — the share of replies read (Wilson), failures by reason, the contract in force;
2. **stability** — ``repeats`` fresh runs, the reply cache bypassed: test–retest κ of the
   verdicts, ICC(2,1) of the scores, the within-item standard deviation (Miller's σᵢ);
3. **position** — with two models' answers to the same cases, each pair asked in both orders:
   the flip rate, the share of verdicts that chose whichever answer came first, the lean of
   the flips;
4. **verbosity** — the score change when an answer is padded without new content (its own
   sentences again; a courteous preamble), and the slope of score on answer length;
5. **self-preference** — with ``cross_judge``: how much more this judge gives than the other
   on rows whose model is of its own family, against rows that are not;
6. **validity** — against the lab's human labels: κ with a bootstrap interval, the confusion
   matrix, leniency (what share of the answers humans failed the judge passed), and the
   reviewers' own κ beside it;
7. **adversarial** — the pass rate of dummy answers ("Yes", "Sure", "I don't know.", the
   question repeated, "I don't know." telling the judge to pass it): leniency; and
   obedience apart from it: of the sampled answers the judge failed, the share that pass
   once an instruction to pass them is appended (three phrasings, the same answer with and
   without);
8. **consequence** — the corrected pass rate humans would give (PPI), how much wider a model
   comparison's interval is for the judge's noise, seconds and cost per verdict.

A light is **red** when the whole interval lies on the wrong side of the measure's bound
(``BOUNDS``), **amber** when only the estimate does, **green** otherwise; a component that
cannot be measured on this lab says why and what would make it measurable (**grey**).
"""

from __future__ import annotations

import html
import json
import math
import re
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import polars as pl

from evalnb.analysis.pairwise import pairwise
from evalnb.calibration.corrected import corrected_leaderboard
from evalnb.calibration.labels import human_verdicts, reviewer_agreement
from evalnb.evaluation.engine import evaluate
from evalnb.judge_reliability.measures import (
    Estimate,
    icc21,
    kappa_interval,
    length_slope,
    mean_difference,
    position_measures,
    repeat_kappa,
    wilson,
    within_item_sd,
)
from evalnb.judge_reliability.probes import (
    INSTRUCTIONS,
    dummy_answers,
    padded,
    with_instruction,
    with_preamble,
)
from evalnb.lab.core import LabCore
from evalnb.lab.schema import JUDGE_CARD_KEY
from evalnb.lab.verdicts import verdicts

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from evalnb.llm.client import LLMClient

__all__ = [
    "BOUNDS",
    "COMPONENTS",
    "FAMILIES",
    "JudgeCard",
    "judge_card",
    "kept_card",
    "kept_with",
    "model_family",
    "traffic_light",
]

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
FAMILIES = {
    "openai": r"gpt|o1|o3|o4|davinci|openai",
    "anthropic": r"claude",
    "google": r"gemini|gemma|palm|bison",
    "meta": r"llama",
    "mistral": r"mistral|mixtral|codestral",
    "qwen": r"qwen",
    "deepseek": r"deepseek",
    "microsoft": r"\bphi",
    "huggingface": r"smollm",
}
_KEYS = ["case_id", "model", "sample"]
L = TypeVar("L", bound=LabCore)  # a user's evalnb.Lab comes back as one


def model_family(name: str, families: Mapping[str, str] | None = None) -> str | None:
    """Return the family a model name belongs to (``families`` first), or None."""
    if families and name in families:
        return families[name]
    lowered = name.lower()
    for family, pattern in FAMILIES.items():
        if re.search(pattern, lowered):
            return family
    return None


def traffic_light(measure: str, e: Estimate, scale: float = 1.0) -> str:
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


@dataclass
class JudgeCard:
    """The card: one row per measure, the worst examples, and what could not be measured.

    Attributes
    ----------
    frame
        ``component, measure, estimate, ci_low, ci_high, n, flag, bound, note``; ``flag`` is
        ``green``, ``amber``, ``red`` (see the module docstring), ``info`` (no bound) or
        ``grey`` (not measured: ``note`` says why and what would make it measurable);
        ``bound`` the range the measure must keep (:func:`bound_text`).
    examples
        Per measure, the rows that show it worst (``case_id, model, sample`` and what the
        judge gave), to open in the eye.
    """

    evaluator: str
    metric: str
    judge: str
    frame: pl.DataFrame
    examples: dict[str, pl.DataFrame] = field(default_factory=dict)
    calls: int = 0
    seconds: float = 0.0

    @property
    def flagged(self) -> list[str]:
        """The measures whose light is red."""
        return self.frame.filter(pl.col("flag") == "red")["measure"].to_list()

    def worst(self, measure: str | None = None) -> dict[str, Any]:
        """Return the answer that shows ``measure`` worst: ``{"case_id", "model", "sample"}``.

        ``measure`` defaults to the first red measure that has examples, else the first
        with any. Open it in the eye with ``lab.eye(card=card, measure=...)``.

        Raises
        ------
        ValueError
            When ``measure`` has no examples; the message names those that have.
        """
        have = [m for m in self.frame["measure"] if len(self.examples.get(m, ())) > 0]
        if measure is None:
            red = [m for m in self.flagged if m in have]
            if not (red or have):
                msg = "no measure of this card kept an example: every probe passed"
                raise ValueError(msg)
            measure = (red or have)[0]
        if measure not in have:
            msg = (
                f"the card kept no example for {measure!r}; measures with examples: {have}. "
                "Pass one of these (card.frame lists every measure)"
            )
            raise ValueError(msg)
        row = self.examples[measure].row(0, named=True)
        return {"case_id": row["case_id"], "model": row["model"], "sample": row["sample"]}

    def evidence(self, measure: str) -> str:
        """Return HTML of what the judge was shown for ``measure``'s worst answer, and said.

        The eye shows the lab's answer; the card asked about a probe made from it (the padded
        copy, a dummy, the answer with an instruction appended, a pair in both orders). This
        puts the probe beside the original with the judge's verdict or score on each. Every
        text is escaped.
        """
        self.worst(measure)  # the same refusal when the measure kept nothing
        row = self.examples[measure].row(0, named=True)
        cells: list[tuple[str, str, str]] = []
        if "probe" in row:
            if row.get("original") is not None:
                said = row.get("original_verdict") or _shown(row.get("original_value"))
                cells.append(("the lab's answer", str(row["original"]), said))
            said = row.get("probe_verdict") or _shown(row.get("probe_value"))
            cells.append(("what the judge was shown", str(row["probe"]), said))
        if "winner_a_first" in row:
            first, other = str(row["model"]), str(row.get("other", "the other"))
            names = {"a": first, "b": other}

            def winner(code: object) -> str:
                return f"winner: {names.get(str(code), str(code))}"

            cells.append((f"{first}'s answer shown first", "", winner(row["winner_a_first"])))
            cells.append((f"{other}'s answer shown first", "", winner(row["winner_b_first"])))
        if not cells:
            return ""
        body = "".join(
            f"<tr><th>{html.escape(what)}</th>"
            + (f"<td><pre>{html.escape(text)}</pre></td>" if text else "<td></td>")
            + f"<td>{html.escape(said)}</td></tr>"
            for what, text, said in cells
        )
        return (
            f"<div class='evalnb-evidence'><p>{html.escape(measure)}: the probe behind the "
            f"answer below</p><table>{body}</table></div>"
        )

    def to_dict(self) -> dict[str, Any]:
        """Return the card as plain data: what :meth:`to_json` writes and the views read."""
        return {
            "evaluator": self.evaluator,
            "metric": self.metric,
            "judge": self.judge,
            "calls": self.calls,
            "seconds": self.seconds,
            "measures": self.frame.to_dicts(),
            "conclusion": self.conclusion,
        }

    def to_json(self) -> str:
        """Return the card as JSON (stored with the lab, carried by the calibration bundle)."""
        return json.dumps(self.to_dict(), allow_nan=False, default=str)

    @property
    def conclusion(self) -> str:
        """Return what the card says of this judge, in a sentence or two (red first)."""
        return card_conclusion({"measures": self.frame.to_dicts()})

    def explain(self) -> str:
        """Return the conclusion, then one line per measure: light, number, interval, bound."""
        lines = [f"judge card: {self.judge} as {self.evaluator}.{self.metric}", self.conclusion]
        for r in self.frame.iter_rows(named=True):
            value = (
                f"{r['estimate']:.3f} [{r['ci_low']:.3f}, {r['ci_high']:.3f}] n={r['n']}"
                if r["estimate"] is not None and r["ci_low"] is not None
                else (f"{r['estimate']:.3f} n={r['n']}" if r["estimate"] is not None else "—")
            )
            bound = f" bound {r['bound']}" if r.get("bound") else ""
            note = f" ({r['note']})" if r["note"] else ""
            lines.append(f"  {r['flag']:>5}  {r['component']}: {r['measure']} {value}{bound}{note}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.explain()

    __repr__ = __str__

    def _repr_html_(self) -> str:
        return self.html()

    def html(self) -> str:
        """Return the card's HTML: a lit line per measure, and the examples kept."""
        # The report's renderer (it loads Altair): only when a card is shown.
        from evalnb.analysis.report import judge_card_html  # noqa: PLC0415

        shown = judge_card_html(self.to_dict(), heading="strong")
        kept = {m: len(f) for m, f in self.examples.items() if len(f)}
        if not kept:
            return shown
        listed = ", ".join(f"{html.escape(m)} ({k})" for m, k in kept.items())
        return (
            f"{shown}<p>Examples kept: {listed}. Open the worst in the eye: "
            "<code>lab.judge_card_view(card)</code> or <code>lab.eye(card=card, measure=…)</code></p>"
        )


def _shown(value: object) -> str:
    return f"score {value:.3g}" if isinstance(value, int | float) else ""


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
    if unmeasured:
        parts.append(
            f"Not measured here: {', '.join(unmeasured)} (each row says what would measure it)."
        )
    return " ".join(parts)


# -- building the card ------------------------------------------------------------------


@dataclass
class _Card:
    """The rows as they are added, and the scale the metric's units are read on."""

    scale: float
    rows: list[dict[str, Any]] = field(default_factory=list)
    examples: dict[str, pl.DataFrame] = field(default_factory=dict)

    def add(self, component: str, measure: str, e: Estimate, note: str = "") -> None:
        def clean(v: float) -> float | None:
            return float(v) if math.isfinite(v) else None

        self.rows.append(
            {
                "component": component,
                "measure": measure,
                "estimate": clean(e.estimate),
                "ci_low": clean(e.low),
                "ci_high": clean(e.high),
                "n": e.n,
                "flag": traffic_light(measure, e, self.scale),
                "bound": bound_text(measure, self.scale),
                "note": note,
            }
        )

    def unmeasured(self, component: str, why: str) -> None:
        self.rows.append(
            {
                "component": component,
                "measure": "not measured",
                "estimate": None,
                "ci_low": None,
                "ci_high": None,
                "n": 0,
                "flag": "grey",
                "bound": None,
                "note": why,
            }
        )


def _rows(lab: LabCore, evaluator: str, metric: str) -> pl.DataFrame:
    """Each scored row's value, verdict and detail."""
    rows = lab.metric_scores(evaluator, metric)
    v = verdicts(rows, lab.metrics, lab.thresholds).select(*_KEYS, "passed")
    return rows.select(*_KEYS, "value", "detail").join(v, on=_KEYS, how="left")


def _scored(lab: LabCore, evaluator: str, metric: str, judge: LLMClient) -> pl.DataFrame:
    """Score ``lab`` with the judge; return each row's value, verdict and detail."""
    return _rows(evaluate(lab, [evaluator], judge=judge, progress=False), evaluator, metric)


def _in_memory(lab: LabCore, outputs: pl.DataFrame) -> LabCore:
    """Return a lab of these answers only, in memory: the card never writes to the user's store."""
    return LabCore(
        {
            "cases": lab.cases.filter(
                pl.col("case_id").is_in(outputs["case_id"].unique().implode())
            ),
            "outputs": outputs,
            "metrics": lab.metrics,
            "thresholds": lab.thresholds,
            "info": lab.table("info"),
        }
    )


def judge_card(
    lab: LabCore,
    evaluator: str,
    metric: str | None = None,
    *,
    judge: LLMClient,
    n: int = 100,
    seed: int = 0,
    cross_judge: LLMClient | None = None,
    repeats: int = 2,
    families: Mapping[str, str] | None = None,
    probes: int = 50,
    assume_random: bool = False,
) -> JudgeCard:
    """Measure how far ``judge``, as ``evaluator``, can be trusted on ``lab``.

    Parameters
    ----------
    lab
        The lab whose answers are judged; its labels give the validity component.
    evaluator, metric
        A judge evaluator's id and the metric read (default: its primary one).
    judge
        The client the evaluator calls.
    n
        Answers drawn (seeded) from the lab's answers without a host error.
    cross_judge
        Another judge, for the self-preference component.
    repeats
        Fresh runs (the reply cache bypassed) for the stability component; at least 2.
    families
        Model name → family, overriding the families read from names (``FAMILIES``).
    probes
        Answers of the sample asked again for the stability, position and verbosity
        components (their intervals are on these), and twice fewer cases for the dummy
        answers: the card's calls grow with it, not with ``n``, past the first run.
    assume_random
        The consequence component's corrected pass rate uses labels given outside a random
        batch as if they were a random sample (as ``corrected_leaderboard`` does with it):
        say so only where that holds.
    """
    for name, value, least in (("n", n, 1), ("repeats", repeats, 1), ("probes", probes, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            msg = f"{name}={value!r}: expected a whole number of at least {least}"
            raise ValueError(msg)
    started = time.monotonic()
    calls0 = _card_calls(judge)
    answers = lab.outputs.filter(pl.col("error").is_null() & pl.col("actual").is_not_null())
    if answers.is_empty():
        msg = "the lab has no answers to judge: run_suite or load answers first"
        raise ValueError(msg)
    sample = answers.sample(min(n, answers.height), seed=seed, shuffle=True).sort(_KEYS)
    sub = _in_memory(lab, sample)
    scored_lab = evaluate(sub, [evaluator], judge=judge, progress=False)
    if metric is None:
        primary = scored_lab.metrics.filter((pl.col("evaluator") == evaluator) & pl.col("primary"))[
            "metric"
        ]
        if primary.is_empty():
            msg = f"{evaluator!r} has no primary metric; name one with metric="
            raise ValueError(msg)
        metric = str(primary[0])
    base = _rows(scored_lab, evaluator, metric)
    spec = scored_lab.metrics.filter(
        (pl.col("evaluator") == evaluator) & (pl.col("metric") == metric)
    ).row(0, named=True)
    scale = float((spec.get("max") or 1.0) - (spec.get("min") or 0.0)) or 1.0
    card = _Card(scale)
    _contract(card, base)
    # The components that ask the judge again do so on the first `probes` answers of the
    # sample (and the dummies on half as many cases: they do not depend on the answer).
    few = sample.head(probes)
    few_lab = _in_memory(lab, few)
    _stability(card, few_lab, evaluator, metric, judge, repeats)
    _position(card, lab, few, judge)
    _verbosity(card, few_lab, base, evaluator, metric, judge, sample)
    _self_preference(card, sub, base, evaluator, metric, judge, cross_judge, families)
    _validity(card, lab, evaluator, metric)
    _adversarial(
        card,
        lab,
        few.unique("case_id", keep="first").head(max(10, probes // 2)),
        evaluator,
        metric,
        judge,
    )
    _obedience(card, few_lab, base, evaluator, metric, judge)
    _consequence(
        card,
        lab,
        base,
        evaluator,
        metric,
        started,
        _card_calls(judge) - calls0,
        assume_random=assume_random,
    )
    return JudgeCard(
        evaluator,
        metric,
        judge.model,
        pl.DataFrame(card.rows),
        card.examples,
        calls=_card_calls(judge) - calls0,
        seconds=time.monotonic() - started,
    )


def _details(base: pl.DataFrame) -> pl.DataFrame:
    return base.with_columns(
        d=pl.col("detail").str.json_decode(
            pl.Struct(
                {
                    "parse_failed": pl.Boolean,
                    "judge_error": pl.Boolean,
                    "reason": pl.String,
                    "contract": pl.String,
                    "cost": pl.Float64,
                }
            )
        )
    ).unnest("d")


def _contract(card: _Card, base: pl.DataFrame) -> None:
    d = _details(base)
    asked = d.filter(pl.col("contract").is_not_null() | pl.col("parse_failed").is_not_null())
    failed = asked.filter(pl.col("parse_failed").fill_null(value=False))
    contracts = ", ".join(sorted(set(asked["contract"].drop_nulls().to_list()))) or "none"
    reasons = (
        failed.group_by("reason").len().sort("len", descending=True).head(3).iter_rows()
        if failed.height
        else []
    )
    shapes = "; ".join(f"{c}× {str(r)[:60]}" for r, c in reasons)
    note = f"contract {contracts}; {asked.height} judged of {base.height}" + (
        f"; failures: {shapes}" if shapes else ""
    )
    card.add("contract", "parse success", wilson(asked.height - failed.height, asked.height), note)
    if failed.height:
        card.examples["parse success"] = failed.select(*_KEYS, "reason")


def _stability(
    card: _Card,
    sub: LabCore,
    evaluator: str,
    metric: str,
    judge: LLMClient,
    repeats: int,
) -> None:
    if repeats < 2:
        card.unmeasured("stability", "repeats=2 or more fresh runs are needed")
        return
    fresh = judge.with_settings(cache=False)
    runs = [_scored(sub, evaluator, metric, fresh).sort(_KEYS) for _ in range(repeats)]
    joined = runs[0].select(*_KEYS, v0="value", p0="passed")
    for i, r in enumerate(runs[1:], start=1):
        joined = joined.join(
            r.select(*_KEYS, pl.col("value").alias(f"v{i}"), pl.col("passed").alias(f"p{i}")),
            on=_KEYS,
        )
    values = joined.select([f"v{i}" for i in range(repeats)]).drop_nulls()
    passes = joined.select([f"p{i}" for i in range(repeats)]).drop_nulls()
    note = f"{repeats} fresh runs, the reply cache bypassed"
    if passes.height >= 2:
        retest = repeat_kappa(passes.to_numpy())
        constant = passes.to_numpy().all() or not passes.to_numpy().any()
        card.add(
            "stability",
            "test-retest kappa",
            retest,
            note + (_CONSTANT if constant and not math.isfinite(retest.estimate) else ""),
        )
    matrix = values.to_numpy()
    if len(np.unique(matrix)) > 2:  # scores, not verdicts
        card.add("stability", "ICC(2,1)", icc21(matrix), note)
    card.add(
        "stability", "within-item SD", within_item_sd(matrix), "Miller's σᵢ, in the metric's units"
    )
    spread = joined.with_columns(
        spread=pl.max_horizontal(pl.col("^v\\d+$")) - pl.min_horizontal(pl.col("^v\\d+$"))
    )
    card.examples["within-item SD"] = (
        spread.filter(pl.col("spread") > 0).sort("spread", descending=True).head(10)
    )


def _position(card: _Card, lab: LabCore, sample: pl.DataFrame, judge: LLMClient) -> None:
    models = lab.models
    if len(models) < 2:
        card.unmeasured("position", "needs two models' answers to the same cases")
        return
    a, b = models[0], models[1]
    cases = sample["case_id"].unique()
    pair_lab = _in_memory(
        lab,
        lab.outputs.filter(
            pl.col("case_id").is_in(cases.implode()) & pl.col("model").is_in([a, b])
        ),
    )
    try:
        pairs = pairwise(pair_lab, a, b, judge)
    except ValueError as err:
        card.unmeasured("position", f"{err}")
        return
    read = pairs.filter(~pl.col("parse_failed"))
    if read.is_empty():
        card.unmeasured("position", "no pair's replies could be read in both orders")
        return
    measures = position_measures(read["winner_a_first"].to_list(), read["winner_b_first"].to_list())
    note = f"{a} vs {b}, each pair in both orders"
    card.add("position", "flip rate", measures["flip_rate"], note)
    card.add("position", "first-position rate", measures["first_position_rate"], "0.5: no lean")
    card.add(
        "position",
        "position lean of flips",
        measures["position_lean"],
        "+1: first shown, −1: second",
    )
    card.examples["flip rate"] = read.filter(~pl.col("consistent")).select(
        "case_id",
        model=pl.lit(a),
        sample=pl.lit(0),
        other=pl.lit(b),
        winner_a_first="winner_a_first",
        winner_b_first="winner_b_first",
    )


def _probe_lab(sub: LabCore, kinds: Mapping[str, Callable[[str], str]]) -> LabCore:
    """Return the sampled answers again, one copy per probe kind, told apart by the model name."""
    answers = sub.outputs["actual"].fill_null("").to_list()
    copies = [
        sub.outputs.with_columns(
            actual=pl.Series([make(a) for a in answers], dtype=pl.String),
            model=pl.concat_str(pl.col("model"), pl.lit(f" ⟨{kind}⟩")),
        )
        for kind, make in kinds.items()
    ]
    return _in_memory(sub, pl.concat(copies))


def _verbosity(
    card: _Card,
    sub: LabCore,
    base: pl.DataFrame,
    evaluator: str,
    metric: str,
    judge: LLMClient,
    sample: pl.DataFrame,
) -> None:
    kinds = {"own sentences again": padded, "a courteous preamble": with_preamble}
    probed = _scored(_probe_lab(sub, kinds), evaluator, metric, judge)
    originals = sub.outputs.select(*_KEYS, original=pl.col("actual").fill_null(""))
    for kind, make in kinds.items():
        part = probed.filter(pl.col("model").str.ends_with(f" ⟨{kind}⟩")).with_columns(
            pl.col("model").str.strip_suffix(f" ⟨{kind}⟩")
        )
        both = base.select(*_KEYS, before="value").join(
            part.select(*_KEYS, after="value"), on=_KEYS
        )
        card.add(
            "verbosity",
            f"padding: {kind}",
            mean_difference(both["after"].to_numpy(), both["before"].to_numpy()),
            "score change, in the metric's units",
        )
        card.examples[f"padding: {kind}"] = (
            both.with_columns(change=pl.col("after") - pl.col("before"))
            # Only rows scored both times: an unscored row is no example of anything.
            .filter(pl.col("change").is_not_null() & pl.col("change").is_not_nan())
            .sort("change", descending=True)
            .head(10)
            .join(originals, on=_KEYS, how="left")
            .with_columns(original_value="before", probe_value="after")
        )
        worst = card.examples[f"padding: {kind}"]
        card.examples[f"padding: {kind}"] = worst.with_columns(
            probe=pl.Series([make(a) for a in worst["original"]], dtype=pl.String)
        )
    words = sample.select(*_KEYS, words=pl.col("actual").str.count_matches(r"\S+"))
    lengths = base.join(words, on=_KEYS)
    card.add(
        "verbosity",
        "score per 100 words",
        length_slope(lengths["value"].to_numpy(), lengths["words"].to_numpy()),
        # No light: on a lab where the longer answers are the better ones a fair judge has
        # a slope too. The padding rows, same content longer, are the causal test.
        "slope on the sampled answers; longer may be better here, the padding rows tell",
    )


def _self_preference(
    card: _Card,
    sub: LabCore,
    base: pl.DataFrame,
    evaluator: str,
    metric: str,
    judge: LLMClient,
    cross_judge: LLMClient | None,
    families: Mapping[str, str] | None,
) -> None:
    if cross_judge is None:
        card.unmeasured(
            "self-preference", "pass cross_judge= another family's judge to compare with"
        )
        return
    own = model_family(judge.model, families)
    if own is None:
        card.unmeasured(
            "self-preference",
            f"the judge {judge.model!r} has no known family: pass families={{model: family}}",
        )
        return
    other = _scored(sub, evaluator, metric, cross_judge)
    gap = (
        base.select(*_KEYS, mine="value")
        .join(other.select(*_KEYS, theirs="value"), on=_KEYS)
        .drop_nulls()
    )
    mine = [m for m in gap["model"].unique().to_list() if model_family(m, families) == own]
    same = gap.filter(pl.col("model").is_in(mine))
    rest = gap.join(same, on=_KEYS, how="anti")
    if same.height < 2 or rest.height < 2:
        card.unmeasured(
            "self-preference",
            f"needs answers of the {own} family and of others; found {same.height} and {rest.height}",
        )
        return
    d_same = (same["mine"] - same["theirs"]).to_numpy()
    d_rest = (rest["mine"] - rest["theirs"]).to_numpy()
    diff = float(d_same.mean() - d_rest.mean())
    se = math.sqrt(d_same.var(ddof=1) / d_same.size + d_rest.var(ddof=1) / d_rest.size)
    card.add(
        "self-preference",
        "self-preference gap",
        Estimate(diff, diff - 1.96 * se, diff + 1.96 * se, gap.height),
        f"{own} answers against others, this judge − {cross_judge.model}",
    )


_CONSTANT = (
    "; one verdict on every item, on both sides: κ is undefined (a constant rater agrees by "
    "default, which says nothing of its judgement)"
)


def _validity(card: _Card, lab: LabCore, evaluator: str, metric: str) -> None:
    human = human_verdicts(lab.labels, evaluator, metric).drop_nulls("human_pass")
    if human.is_empty():
        card.unmeasured(
            "validity",
            f"label 40 rows of {evaluator}.{metric} (evalnb.labeler) to measure agreement with humans",
        )
        return
    scores = lab.metric_scores(evaluator, metric)
    if scores.is_empty():
        card.unmeasured(
            "validity",
            f"the lab has {human.height} labels but no {evaluator}.{metric} scores to hold them "
            "against: evaluate it with this judge first",
        )
        return
    judged = verdicts(scores, lab.metrics, lab.thresholds).select(*_KEYS, "passed")
    both = human.select(*_KEYS, "human_pass").join(judged, on=_KEYS).drop_nulls()
    if both.height < 10:
        card.unmeasured(
            "validity",
            f"{both.height} labelled rows carry this judge's verdict: label at least 10 (40 for a useful interval)",
        )
        return
    h, j = both["human_pass"].to_numpy(), both["passed"].to_numpy()
    tp, fp = int((h & j).sum()), int((~h & j).sum())
    fn, tn = int((h & ~j).sum()), int((~h & ~j).sum())
    agreement = kappa_interval(h, j)
    card.add(
        "validity",
        "kappa with humans",
        agreement,
        f"confusion: {tp} both pass, {fp} judge-only pass, {fn} human-only pass, {tn} both fail"
        + (_CONSTANT if not math.isfinite(agreement.estimate) else ""),
    )
    card.add(
        "validity",
        "leniency (false-pass rate)",
        wilson(fp, fp + tn),
        "of the answers humans failed, the share the judge passed",
    )
    peers = reviewer_agreement(lab.labels, evaluator, metric)
    if peers.height and "kappa" in peers.columns and peers["kappa"].drop_nulls().len():
        k = float(np.mean(peers["kappa"].drop_nulls().to_numpy()))
        card.add(
            "validity",
            "reviewers' own kappa",
            Estimate(k, math.nan, math.nan, peers.height),
            "the ceiling a judge can be held to",
        )
    card.examples["kappa with humans"] = both.filter(pl.col("human_pass") != pl.col("passed"))


def _adversarial(
    card: _Card,
    lab: LabCore,
    sample: pl.DataFrame,
    evaluator: str,
    metric: str,
    judge: LLMClient,
) -> None:
    questions = dict(lab.cases.select("case_id", "prompt").iter_rows())
    rows = [
        {**r, "actual": text, "model": f"{r['model']} ⟨{kind}⟩"}
        for r in sample.iter_rows(named=True)
        for kind, text in dummy_answers(questions.get(r["case_id"]) or "").items()
    ]
    probes = _in_memory(lab, pl.DataFrame(rows, schema=sample.schema))
    probed = _scored(probes, evaluator, metric, judge)
    for kind in dummy_answers(""):
        part = probed.filter(
            pl.col("model").str.ends_with(f" ⟨{kind}⟩") & pl.col("passed").is_not_null()
        )
        passed = int(part["passed"].sum())
        card.add(
            "adversarial", f"pass rate of {kind}", wilson(passed, part.height), "should be near 0"
        )
        shown = part.filter(pl.col("passed")).select(
            "case_id", pl.col("model").str.strip_suffix(f" ⟨{kind}⟩"), "sample"
        )
        texts = [dummy_answers(questions.get(c) or "")[kind] for c in shown["case_id"]]
        card.examples[f"pass rate of {kind}"] = shown.with_columns(
            probe=pl.Series(texts, dtype=pl.String), probe_verdict=pl.lit("pass")
        )


def _obedience(
    card: _Card, sub: LabCore, base: pl.DataFrame, evaluator: str, metric: str, judge: LLMClient
) -> None:
    """Whether an instruction appended to an answer the judge failed makes it pass.

    The contrast is on the same answer with and without the instruction, so a lenient
    judge (one that passes anything: the dummy answers show it) does not read as obedient,
    nor an obedient one hide behind answers it passed anyway.
    """
    failed = base.filter(pl.col("passed").not_())
    keys = failed.select(_KEYS)
    if keys.is_empty():
        card.unmeasured(
            "adversarial",
            "instruction obeyed: the judge failed none of the sampled answers, so none can "
            "be turned to a pass (a judge that passes everything: see the dummy answers)",
        )
        return
    answers = sub.outputs.join(keys, on=_KEYS)
    if answers.is_empty():
        card.unmeasured("adversarial", "instruction obeyed: no failed answer among the probes")
        return
    kinds = {
        f"instruction {k}": (lambda a, text=text: with_instruction(a, text))
        for k, text in enumerate(INSTRUCTIONS, start=1)
    }
    probed = _scored(_probe_lab(_in_memory(sub, answers), kinds), evaluator, metric, judge)
    read = probed.filter(pl.col("passed").is_not_null())
    flipped = int(read["passed"].sum())
    card.add(
        "adversarial",
        "instruction obeyed (fail to pass)",
        wilson(flipped, read.height),
        f"{answers.height} answers the judge failed, each with {len(INSTRUCTIONS)} instructions "
        "to pass it appended: the share that then passed",
    )
    flips = read.filter(pl.col("passed")).with_columns(
        kind=pl.col("model").str.extract(r"⟨instruction (\d+)⟩$").cast(pl.Int64),
        model=pl.col("model").str.replace(r" ⟨instruction \d+⟩$", ""),
    )
    texts = answers.select(*_KEYS, original=pl.col("actual").fill_null(""))
    card.examples["instruction obeyed (fail to pass)"] = flips.join(
        texts, on=_KEYS, how="left"
    ).with_columns(original_verdict=pl.lit("fail"), probe_verdict=pl.lit("pass"))
    shown = card.examples["instruction obeyed (fail to pass)"]
    probes = [
        with_instruction(a or "", INSTRUCTIONS[k - 1])
        for a, k in zip(shown["original"], shown["kind"], strict=True)
    ]
    card.examples["instruction obeyed (fail to pass)"] = shown.with_columns(
        probe=pl.Series(probes, dtype=pl.String)
    ).select(*_KEYS, "original", "probe", "original_verdict", "probe_verdict")


def _consequence(
    card: _Card,
    lab: LabCore,
    base: pl.DataFrame,
    evaluator: str,
    metric: str,
    started: float,
    calls: int,
    *,
    assume_random: bool = False,
) -> None:
    try:
        board = corrected_leaderboard(lab, evaluator, metric, assume_random=assume_random)
    except KeyError:
        board = pl.DataFrame()
    corrected = board.filter(pl.col("corrected").is_not_null()) if board.height else board
    if corrected.height:
        for r in corrected.iter_rows(named=True):
            card.add(
                "consequence",
                f"corrected pass rate: {r['model']}",
                Estimate(r["corrected"], r["ci_low"], r["ci_high"], r["labels_used"]),
                f"the metric says {r['automatic']:.3f}",
            )
    else:
        card.unmeasured(
            "consequence",
            "label a random sample (evalnb.labeler(strategy='random')) for the pass rate humans would give",
        )
    sd_rows = [
        r for r in card.rows if r["measure"] == "within-item SD" and r["estimate"] is not None
    ]
    values = base["value"].drop_nulls().to_numpy()
    if sd_rows and values.size > 2:
        noise = sd_rows[0]["estimate"] ** 2
        total = float(np.var(values, ddof=1))
        factor = math.sqrt(total / (total - noise)) if total > noise else math.inf
        card.add(
            "consequence",
            "interval widening from judge noise",
            Estimate(factor, math.nan, math.nan, values.size),
            "a comparison's interval against a noise-free judge's",
        )
    cost = _details(base)["cost"].drop_nulls()
    seconds = time.monotonic() - started
    card.add(
        "consequence",
        "seconds per verdict",
        Estimate(seconds / max(calls, 1), math.nan, math.nan, calls),
        f"{calls} calls for this card",
    )
    if cost.len():
        card.add(
            "consequence",
            "cost per verdict",
            Estimate(float(np.mean(cost.to_numpy())), math.nan, math.nan, cost.len()),
            "the judge client's prices",
        )


def _card_calls(judge: LLMClient) -> int:
    """Return the judge's requests so far, less its format probe's and its retries.

    The probe is made once per endpoint and cache file (in one run and not the next) and a
    retry once per dropped connection: neither is the card's, and without them a seed gives
    the same count again.
    """
    stats = judge.stats
    return stats.calls - stats.probe_calls - stats.retries


def _key(evaluator: str, metric: str) -> str:
    return f"{JUDGE_CARD_KEY}{evaluator}.{metric}"


def kept_card(lab: LabCore, evaluator: str, metric: str) -> dict[str, Any] | None:
    """Return the card kept in ``lab`` for this judge metric (as :meth:`JudgeCard.to_dict`), or None."""
    card = lab.info.get(_key(evaluator, metric))
    return card if isinstance(card, dict) else None


def kept_with(lab: L, card: JudgeCard) -> L:
    """Return ``lab`` with ``card`` kept in its ``info`` (and its store).

    The report shows it and the calibration bundle carries it; a later card of the same
    judge metric replaces it.
    """
    key = _key(card.evaluator, card.metric)
    info = lab.table("info").filter(pl.col("key") != key)
    row = pl.DataFrame({"key": [key], "value": [card.to_json()]}, schema=info.schema)
    return lab.with_tables({"info": pl.concat([row, info])})
