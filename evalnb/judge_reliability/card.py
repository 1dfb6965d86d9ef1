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
   comparison's interval is for the judge's noise, seconds and cost per verdict;
9. **cascade** — for a cascade of judges (:mod:`evalnb.judge_reliability.cascade`): coverage,
   each tier's agreement with the labels on what it kept (lit against the cascade's target),
   the share the strongest judge saw, and the cost against the strongest judge alone.

A light is **red** when the whole interval lies on the wrong side of the measure's bound
(``BOUNDS``), **amber** when only the estimate does, **green** otherwise; a component that
cannot be measured on this lab says why and what would make it measurable (**grey**).
"""

from __future__ import annotations

import html
import json
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import polars as pl

from evalnb.evaluation.engine import evaluate
from evalnb.judge_reliability.adversarial import measure_adversarial, measure_obedience
from evalnb.judge_reliability.cascade import Cascade
from evalnb.judge_reliability.cascade_report import measure_cascade
from evalnb.judge_reliability.components import (
    KEYS,
    CardRows,
    card_calls,
    in_memory,
    measure_consequence,
    measure_contract,
    measure_position,
    measure_self_preference,
    measure_stability,
    measure_validity,
    measure_verbosity,
    scored_rows,
)
from evalnb.judge_reliability.lights import card_conclusion
from evalnb.judge_reliability.media_blind import has_media, measure_media_blind
from evalnb.lab.core import LabCore
from evalnb.lab.schema import JUDGE_CARD_KEY

if TYPE_CHECKING:
    from collections.abc import Mapping

    from evalnb.llm.client import LLMClient

__all__ = ["JudgeCard", "judge_card", "kept_card", "kept_with"]

L = TypeVar("L", bound=LabCore)  # a user's evalnb.Lab comes back as one


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
            "<code>lab.judges.card_view(card)</code> or <code>lab.eye(card=card, measure=…)</code></p>"
        )


def _shown(value: object) -> str:
    return f"score {value:.3g}" if isinstance(value, int | float) else ""


def judge_card(
    lab: LabCore,
    evaluator: str,
    metric: str | None = None,
    *,
    judge: LLMClient | Cascade,
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
        The client the evaluator calls, or a calibrated cascade (:func:`evalnb.cascade`):
        then the components that ask again ask its strongest judge, and a **cascade**
        component measures the cascade (coverage, each tier's agreement with the labels
        against its target, the share the strongest judge saw, its cost against the
        strongest judge alone).
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
    cascade = judge if isinstance(judge, Cascade) else None
    # A cascade's card: the components that ask again ask its strongest judge (the one whose
    # habits stand behind the verdicts it was unsure of), and the cascade component measures
    # the cascade itself.
    judge = judge.strongest if isinstance(judge, Cascade) else judge
    calls0 = card_calls(judge)
    answers = lab.outputs.filter(pl.col("error").is_null() & pl.col("actual").is_not_null())
    if answers.is_empty():
        msg = "the lab has no answers to judge: run_suite or load answers first"
        raise ValueError(msg)
    sample = answers.sample(min(n, answers.height), seed=seed, shuffle=True).sort(KEYS)
    sub = in_memory(lab, sample)
    scored_lab = evaluate(sub, [evaluator], judge=judge, progress=False)
    if metric is None:
        primary = scored_lab.metrics.filter((pl.col("evaluator") == evaluator) & pl.col("primary"))[
            "metric"
        ]
        if primary.is_empty():
            msg = f"{evaluator!r} has no primary metric; name one with metric="
            raise ValueError(msg)
        metric = str(primary[0])
    base = scored_rows(scored_lab, evaluator, metric)
    spec = scored_lab.metrics.filter(
        (pl.col("evaluator") == evaluator) & (pl.col("metric") == metric)
    ).row(0, named=True)
    scale = float((spec.get("max") or 1.0) - (spec.get("min") or 0.0)) or 1.0
    card = CardRows(scale)
    measure_contract(card, base)
    # The components that ask the judge again do so on the first `probes` answers of the
    # sample (and the dummies on half as many cases: they do not depend on the answer).
    few = sample.head(probes)
    few_lab = in_memory(lab, few)
    measure_stability(card, few_lab, evaluator, metric, judge, repeats)
    measure_position(card, lab, few, judge)
    measure_verbosity(card, few_lab, base, evaluator, metric, judge, sample)
    measure_self_preference(card, sub, base, evaluator, metric, judge, cross_judge, families)
    measure_validity(card, lab, evaluator, metric)
    measure_adversarial(
        card,
        lab,
        few.unique("case_id", keep="first").head(max(10, probes // 2)),
        evaluator,
        metric,
        judge,
    )
    measure_obedience(card, few_lab, base, evaluator, metric, judge)
    if has_media(few_lab):  # a lab with images: does the judge look at them?
        measure_media_blind(card, few_lab, evaluator, metric, judge)
    if cascade is not None:
        measure_cascade(card, lab, in_memory(lab, sample), evaluator, metric, cascade)
    measure_consequence(
        card,
        lab,
        base,
        evaluator,
        metric,
        started,
        card_calls(judge) - calls0,
        assume_random=assume_random,
    )
    return JudgeCard(
        evaluator,
        metric,
        judge.model,
        pl.DataFrame(card.rows),
        card.examples,
        calls=card_calls(judge) - calls0,
        seconds=time.monotonic() - started,
    )


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
