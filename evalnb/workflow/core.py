"""``evalnb.workflow``: H2O's MRM workflow as nine resumable, auditable steps in one store.

The workflow lives in one DuckDB file: the lab store (corpus, suite, answers, scores,
labels, thresholds) plus its audit trail, ``workflow_events`` (every parameter change, run,
failure, wait and approval, appended and never changed). Reopening the file resumes: a
finished step whose inputs did not change is not run again; a step killed half-way runs
again from the store (every step is idempotent on it).
"""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from evalnb.analysis.rendered import Report
from evalnb.api.corpus import Corpus
from evalnb.api.lab import Lab, open_lab
from evalnb.lab.files import write_atomic
from evalnb.lab.store import append_rows, is_store, read_store
from evalnb.monitoring.plan import monitoring_plan
from evalnb.workflow.prompt_extension import prompt_extension
from evalnb.workflow.report import workflow_html
from evalnb.workflow.review import review_surface, step_charts
from evalnb.workflow.state import BY_NAME, event_row, input_print, last_events, step_state
from evalnb.workflow.steps import STEPS, Run, StepWaiting
from evalnb.workflow.system import BASELINE, System

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from evalnb.llm.client import LLMClient

__all__ = ["Workflow", "workflow"]

_CONFIG = "workflow"


class Workflow:
    """The MRM workflow of one RAG system, kept in one DuckDB file (see :func:`workflow`).

    Attributes
    ----------
    path
        The store.
    system
        The system under test (None: steps that ask it say how to give one).
    llm
        The LLM for LLM generators, adversarial rewrites and judges (optional).
    """

    def __init__(
        self,
        path: str | Path,
        *,
        corpus: str | Path | Iterable[str | Path] | Corpus | None = None,
        system: object = None,
        system_name: str | None = None,
        llm: LLMClient | None = None,
        name: str | None = None,
        params: dict[str, dict[str, Any]] | None = None,
        who: str | None = None,
    ) -> None:
        self.path = Path(path)
        if self.path.exists() and not is_store(self.path):
            msg = f"{self.path} exists and is not an evalnb store; pass a new path or a workflow store"
            raise ValueError(msg)
        if not self.path.exists():
            Lab({}).save(self.path)
        self._lab = open_lab(self.path)
        config = self.config
        if isinstance(corpus, Corpus):  # chunks read already: the workflow keeps a copy
            if corpus.lab.path is None or Path(corpus.lab.path).resolve() != self.path.resolve():
                self._lab.replace_tables({"chunks": corpus.chunks})
            config["documents"] = []
        elif corpus is not None:
            docs = [corpus] if isinstance(corpus, (str, Path)) else list(corpus)
            config["documents"] = [str(Path(d).resolve()) for d in docs]
        if system is None and config.get("system", {}).get("kind") == "baseline":
            system = BASELINE
        self.system = System.of(system, system_name) if system is not None else None
        if self.system is not None:
            config["system"] = self.system.spec()
        config["name"] = name or config.get("name") or self.path.stem
        self.llm = llm
        self._write_config(config)
        for step, values in (params or {}).items():
            self.configure(step, who=who, **values)

    # -- configuration ---------------------------------------------------------------------
    @property
    def config(self) -> dict[str, Any]:
        """The workflow's stored settings: name, documents, system (never a key)."""
        found = self._lab.table("info").filter(pl.col("key") == _CONFIG)["value"].to_list()
        return dict(json.loads(found[-1])) if found else {}

    def _write_config(self, config: dict[str, Any]) -> None:
        info = self._lab.table("info").filter(pl.col("key") != _CONFIG)
        row = pl.DataFrame({"key": [_CONFIG], "value": [json.dumps(config, sort_keys=True)]})
        if config != self.config:
            self._lab.replace_tables({"info": pl.concat([info, row])})

    @property
    def lab(self) -> Lab:
        """The workflow's lab as the store holds it now (everyone's labels and decisions)."""
        self._lab = open_lab(self.path)
        return self._lab

    def params(self, step: str) -> dict[str, Any]:
        """Return the step's parameters: its defaults, updated by every :meth:`configure` since."""
        return self._params(step, self._events())

    def _params(self, step: str, events: pl.DataFrame) -> dict[str, Any]:
        spec = self._step(step)
        configured = last_events(events, step)["configured"]
        return (
            {**spec.defaults, **json.loads(configured["params"])}
            if configured
            else dict(spec.defaults)
        )

    def configure(self, step: str, *, who: str | None = None, **params: Any) -> dict[str, Any]:  # noqa: ANN401
        """Change a step's parameters (recorded); the step and those after it become stale."""
        spec = self._step(step)
        unknown = sorted(set(params) - set(spec.defaults))
        if unknown:
            msg = f"{step} has no parameters {unknown}; its parameters: {sorted(spec.defaults)}"
            raise KeyError(msg)
        current = self.params(step)
        merged = {**current, **params}
        if merged != current:  # reopening with the same parameters records nothing
            self._lab.append_rows(
                "workflow_events", event_row(step, "configured", params=merged, who=who)
            )
        return merged

    # -- running ---------------------------------------------------------------------------
    def status(self) -> pl.DataFrame:
        """One row per step: status, why, parameters, last run (when, how long, by whom), approval."""
        lab = self.lab  # one read of the store for the whole table
        events = lab.table("workflow_events")
        done: dict[str, bool] = {}
        rows = []
        for spec in STEPS:
            params = self._params(spec.name, events)
            state, why = step_state(spec.name, params, lab, events, done)
            done[spec.name] = state == "done"
            last = last_events(events, spec.name)
            fin, appr = last["finished"], last["approved"]
            approved = appr is not None and fin is not None and appr["run_id"] == fin["run_id"]
            rows.append(
                {
                    "step": spec.name,
                    "title": spec.title,
                    "status": state,
                    "why": why,
                    "depends_on": list(spec.depends),
                    "params": json.dumps(params, sort_keys=True),
                    "finished_at": fin["at"] if fin else None,
                    "duration_s": fin["duration_s"] if fin else None,
                    "ran_by": fin["who"] if fin else None,
                    "approved_by": appr["who"] if approved and appr else None,
                    "approval_note": appr["note"] if approved and appr else None,
                }
            )
        return pl.DataFrame(
            rows,
            schema={
                "step": pl.String,
                "title": pl.String,
                "status": pl.String,
                "why": pl.String,
                "depends_on": pl.List(pl.String),
                "params": pl.String,
                "finished_at": pl.Datetime("us", "UTC"),
                "duration_s": pl.Float64,
                "ran_by": pl.String,
                "approved_by": pl.String,
                "approval_note": pl.String,
            },
        )

    def next_step(self, skip: Iterable[str] = ()) -> str | None:
        """Return the first step, in order, that can run and is not done (None: none can).

        ``skip``: steps not to propose (those that just waited for people).
        """
        skipped = set(skip)
        for row in self.status().iter_rows(named=True):
            if row["status"] not in ("done", "blocked") and row["step"] not in skipped:
                return str(row["step"])
        return None

    def run(self, step: str | None = None, *, who: str | None = None) -> dict[str, Any]:
        """Run ``step`` (default: the next one) and return its findings.

        Refused while a step it depends on is not done. Every start, finish, failure or
        wait is recorded with the parameters, the inputs, the duration and ``who``.

        Raises
        ------
        StepWaiting
            When the step needs people first (calibration: labels); it is recorded.
        """
        status = self.status()
        if step is None:
            step = self.next_step()
            if step is None:
                return {"message": "every step is done"}
        self._step(step)
        blocked = [
            d
            for d in BY_NAME[step].depends
            if status.filter(pl.col("step") == d)["status"].item() != "done"
        ]
        if blocked:
            msg = f"{step} depends on {blocked}, which are not done; run them first (wf.run())"
            raise ValueError(msg)
        events = self._lab.table("workflow_events")  # as status() just read it
        params = self._params(step, events)
        inputs = input_print(step, params, self._lab, events)
        run_id = uuid.uuid4().hex[:12]
        self._lab.append_rows(
            "workflow_events",
            event_row(step, "started", run_id=run_id, params=params, inputs=inputs, who=who),
        )
        ctx = Run(
            self._lab,
            self.path,
            list(self.config.get("documents", [])),
            self.system,
            self.llm,
            self.params,
        )
        start = time.perf_counter()
        try:
            summary = BY_NAME[step].run(ctx, params)
        except StepWaiting as exc:
            self._record(step, "waiting", run_id, params, inputs, who, str(exc), start)
            raise
        except Exception as exc:
            self._record(
                step, "failed", run_id, params, inputs, who, f"{type(exc).__name__}: {exc}", start
            )
            raise
        self._lab = ctx.lab
        self._record(step, "finished", run_id, params, inputs, who, None, start, summary)
        return summary

    def _record(
        self,
        step: str,
        event: str,
        run_id: str,
        params: dict[str, Any],
        inputs: str,
        who: str | None,
        note: str | None,
        start: float,
        summary: dict[str, Any] | None = None,
    ) -> None:
        row = event_row(
            step,
            event,
            run_id=run_id,
            params=params,
            inputs=inputs,
            who=who,
            note=note,
            summary=summary,
            duration_s=time.perf_counter() - start,
        )
        append_rows(self.path, "workflow_events", row)

    def run_all(self, *, who: str | None = None) -> pl.DataFrame:
        """Run every step not done, in order; a step waiting for people is passed over.

        Steps that depend on a waiting step stay blocked; the others run. A failure stops
        the run (and is recorded).
        """
        waited: set[str] = set()
        while (step := self.next_step(skip=waited)) is not None:
            try:
                self.run(step, who=who)
            except StepWaiting:
                waited.add(step)
        return self.status()

    def approve(self, step: str, reviewer: str, note: str | None = None) -> None:
        """Record ``reviewer``'s sign-off of the step's last finished run (refused if not done)."""
        if not reviewer:
            msg = "an approval needs the reviewer's name"
            raise ValueError(msg)
        row = self.status().filter(pl.col("step") == self._step(step).name).row(0, named=True)
        if row["status"] != "done":
            msg = f"{step} is {row['status']} ({row['why']}); run it before approving it"
            raise ValueError(msg)
        finished = last_events(self._events(), step)["finished"]
        assert finished is not None
        self._lab.append_rows(
            "workflow_events",
            event_row(step, "approved", run_id=finished["run_id"], who=reviewer, note=note),
        )

    def summary(self, step: str) -> dict[str, Any]:
        """Return the findings of the step's last finished run ({} when it never finished)."""
        return self._summaries(self._events())[self._step(step).name]

    def _summaries(self, events: pl.DataFrame) -> dict[str, dict[str, Any]]:
        out = {}
        for spec in STEPS:
            finished = last_events(events, spec.name)["finished"]
            out[spec.name] = (
                json.loads(finished["summary"]) if finished and finished["summary"] else {}
            )
        return out

    # -- review and artifacts ------------------------------------------------------------------
    def review(self, step: str, *, reviewer: str | None = None) -> Any:  # noqa: ANN401 - a widget, chart or table
        """Return the step's review surface for the notebook.

        Topics: the topic table. Test generation and validation: the suite curator (with
        ``reviewer``; the validation outliers first), else the curation or validation
        table. Evaluation: the eval eye. Calibration: the labeler (needs ``reviewer``).
        Failure clustering: the cluster chart. Weakness: the topic × question type grid.
        Input variations: the flip chart. Adversarial inputs: the effect chart.
        """
        return review_surface(self, self._step(step).name, reviewer)

    def report(self, path: str | Path | None = None) -> Report:
        """Render the workflow report (HTML, self-contained); write it to ``path`` when given."""
        summaries = self._summaries(self._events())
        html = workflow_html(
            str(self.config.get("name")), self.config, self.status(), summaries, step_charts(self)
        )
        return Report.written(html, path)

    def artifacts(
        self,
        folder: str | Path,
        *,
        who: str | None = None,
        accepted: float | Mapping[str, float] | None = None,
    ) -> dict[str, Path]:
        """Write the hand-over files into ``folder``, each atomically.

        ``report.html`` (this workflow's report), ``system_prompt_extension.md`` (rules
        backed by the findings), ``corpus_patch.md`` (answers the metric failed and the
        reviewers passed) and ``guardrail.json`` (the calibrated thresholds); when a metric
        was calibrated, ``calibration.json`` (the bundle production is monitored with, its
        ``accepted`` pass rate the one signed off: see ``lab.calibration.export``) and
        ``monitoring_plan.md`` (what ongoing monitoring applies, and how to run it).
        """
        out = Path(folder)
        out.mkdir(parents=True, exist_ok=True)
        lab = self.lab
        summaries = self._summaries(lab.table("workflow_events"))
        paths = {
            "report": out / "report.html",
            "system_prompt_extension": out / "system_prompt_extension.md",
            "corpus_patch": out / "corpus_patch.md",
            "guardrail": out / "guardrail.json",
        }
        self.report(paths["report"])
        write_atomic(
            paths["system_prompt_extension"],
            prompt_extension(summaries, str(self.config.get("name"))),
        )
        lab.calibration.corpus_patch(paths["corpus_patch"])
        lab.calibration.guardrail_config(paths["guardrail"])
        calibrated = lab.current_thresholds().filter(pl.col("source") == "calibrated")
        if calibrated.height:
            paths["calibration"] = lab.calibration.export(
                out / "calibration.json", approved_by=who, accepted=accepted
            )
            paths["monitoring_plan"] = out / "monitoring_plan.md"
            bundle = json.loads(paths["calibration"].read_text(encoding="utf-8"))
            write_atomic(paths["monitoring_plan"], monitoring_plan(bundle))
        written = {k: str(p.resolve()) for k, p in paths.items()}
        self._lab.append_rows(
            "workflow_events", event_row("artifacts", "written", summary=written, who=who)
        )
        return paths

    def events(self) -> pl.DataFrame:
        """Return the audit trail: every configuration, run, failure, wait and approval, in order."""
        return self._events().sort("at")

    def _events(self) -> pl.DataFrame:
        # The audit trail alone: the whole lab is not read to know where the steps stand.
        return read_store(self.path, ("workflow_events",)).tables["workflow_events"]

    def _step(self, step: str) -> Any:  # noqa: ANN401 - a Step
        if step not in BY_NAME:
            msg = f"no workflow step {step!r}; the steps: {[s.name for s in STEPS]}"
            raise KeyError(msg)
        return BY_NAME[step]

    def __repr__(self) -> str:
        done = self.status()["status"].to_list().count("done")
        return f"<evalnb.Workflow {self.config.get('name')!r}: {done}/{len(STEPS)} steps done, {self.path}>"


def workflow(
    path: str | Path,
    *,
    corpus: str | Path | Iterable[str | Path] | Corpus | None = None,
    system: object = None,
    system_name: str | None = None,
    llm: LLMClient | None = None,
    name: str | None = None,
    params: dict[str, dict[str, Any]] | None = None,
    who: str | None = None,
) -> Workflow:
    """Open (or start) the MRM workflow kept in the DuckDB file ``path``.

    Parameters
    ----------
    path
        The workflow's store; created when missing, resumed when it exists.
    corpus
        The documents: a folder or files (PDF, Markdown, HTML, DOCX, text), read by the
        topic-modeling step; or an :class:`evalnb.Corpus` already read (its chunks are
        copied into the workflow's store).
    system
        The RAG system under test: an :class:`evalnb.LLMClient`, a function
        ``f(prompt) -> answer`` or ``-> (answer, contexts)`` (sync or async), or
        ``"retrieval-baseline"``. A function is not stored: pass it again when reopening.
    system_name
        The name a function's answers are recorded under (default: its name); an
        endpoint's answers are recorded under its model.
    llm
        An LLM for LLM test generators, adversarial rewrites and judge evaluators.
    name
        The workflow's name (default: the file's).
    params
        Step parameters to set, ``{step: {name: value}}`` (see :meth:`Workflow.params`).
    who
        Who sets them (recorded).
    """
    return Workflow(
        path,
        corpus=corpus,
        system=system,
        system_name=system_name,
        llm=llm,
        name=name,
        params=params,
        who=who,
    )
