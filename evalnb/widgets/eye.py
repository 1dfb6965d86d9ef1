"""The eval eye widget: drill down from problem domains to one test case.

The kernel keeps an :class:`~evalnb.transforms.EyeIndex` of the lab and sends the browser
only the current level: ring segments, the centre's bar chart, and at the model level the
dots of one (metric, model) — each as Arrow IPC bytes — plus one case for the side panel.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

import polars as pl
import traitlets

from evalnb.lab.verdicts import finite_or_none
from evalnb.text.language import language_name
from evalnb.transforms import (
    LEVELS,
    case_detail,
    check_path,
    compare_dots,
    eye_bars,
    eye_dots,
    eye_index,
    eye_nodes,
    path_titles,
    score_bins,
)
from evalnb.widgets.arrow import to_ipc
from evalnb.widgets.base import EvalWidget

if TYPE_CHECKING:
    from collections.abc import Mapping

    from evalnb.lab.core import LabCore
    from evalnb.transforms import EyeIndex

__all__ = ["Eye", "eye"]

# The tables the eye draws from: a new label or labelling batch must not rebuild its index.
_SHOWN = ("cases", "outputs", "scores", "metrics", "thresholds")


class Eye(EvalWidget):
    """Eval eye: a two-ring drill-down chart with a dot chart and a case panel.

    Levels: problem domains → evaluators → metrics → models → test cases. Segments are
    yellow when everything under them passes, grey with a red border and a problem count
    (coloured by the worst severity) otherwise. Hovering the centre shows a bar chart of
    metric × model means; the back control goes up one level.

    Synced traits
    -------------
    path : list of str
        The drill path ``[domain, evaluator, metric, model]``, cut at any depth. Set it
        from Python to move the view; invalid steps raise ``TraitError`` naming the options.
    selected_case : dict or None
        ``{"case_id", "model", "sample"}`` of the case shown in the side panel.
    compare : list of str
        ``[evaluator, metric]`` of a second metric to plot against at the model level
        (empty: no comparison).

    Examples
    --------
    >>> import evalnb, polars as pl
    >>> lab = evalnb.load(pl.DataFrame({"prompt": ["a", "b"], "expected": ["x y", "y"],
    ...                                 "actual": ["x y", "z"]}))
    >>> w = evalnb.eye(evalnb.evaluate(lab, ["rouge"], progress=False))
    >>> w.path = ["summarization", "rouge", "rouge_l"]
    >>> w.selection()["metric"].unique().to_list()
    ['rouge_l']
    """

    _bundle = "eye"
    path = traitlets.List(traitlets.Unicode()).tag(sync=True)
    """The drill path ``[domain, evaluator, metric, model]`` (any prefix)."""
    selected_case = traitlets.Dict(allow_none=True, default_value=None).tag(sync=True)
    """``{"case_id": str, "model": str, "sample": int}`` shown in the case panel, or None."""
    compare = traitlets.List(traitlets.Unicode()).tag(sync=True)
    """``[evaluator, metric]`` compared with the path's metric at the model level."""
    title = traitlets.Unicode("").tag(sync=True)
    """Heading shown above the chart."""
    language = traitlets.Unicode("").tag(sync=True)
    """Show only the cases of this language (ISO 639-1 code; "" for all)."""
    _languages: traitlets.List[dict[str, Any]] = traitlets.List().tag(sync=True)
    # Python → browser only: the current level's tables as Arrow IPC bytes and small JSON.
    _nodes = traitlets.Bytes(b"").tag(sync=True)
    _bars = traitlets.Bytes(b"").tag(sync=True)
    _dots = traitlets.Bytes(b"").tag(sync=True)
    _bins = traitlets.Bytes(b"").tag(sync=True)
    _level = traitlets.Dict().tag(sync=True)
    _case = traitlets.Dict(allow_none=True, default_value=None).tag(sync=True)

    def __init__(
        self, lab: LabCore, *, max_dots: int = 2000, seed: int = 0, **kwargs: object
    ) -> None:
        self._lab = lab
        self._seed = seed
        self._max_dots = max_dots
        self._case_languages = _languages_of(lab)
        chosen = str(kwargs.get("language") or "")
        self._index: EyeIndex = eye_index(lab, seed=seed, cases=self._cases_of(chosen))
        super().__init__(**kwargs)
        self._languages = _language_options(self._case_languages)
        self.observe(self._on_language, names=["language"])
        self.observe(self._on_path, names=["path"])
        self.observe(self._on_case, names=["selected_case"])
        self.observe(self._on_compare, names=["compare"])
        self._show_level()
        self._show_case()
        lab.watch(_SHOWN, weakref.WeakMethod(self.refresh))

    @traitlets.validate("path")
    def _valid_path(self, proposal: dict[str, Any]) -> list[str]:
        try:
            return check_path(self._index, list(proposal["value"]))
        except ValueError as err:
            raise traitlets.TraitError(str(err)) from None

    @traitlets.validate("selected_case")
    def _valid_case(self, proposal: dict[str, Any]) -> dict[str, Any] | None:
        value = proposal["value"]
        if value is None:
            return None
        missing = {"case_id", "model"} - set(value)
        if missing:
            msg = (
                f"selected_case needs keys case_id and model (sample optional); got {value!r}: "
                f"missing {sorted(missing)}"
            )
            raise traitlets.TraitError(msg)
        return {
            "case_id": str(value["case_id"]),
            "model": str(value["model"]),
            "sample": int(value.get("sample") or 0),
        }

    @traitlets.validate("compare")
    def _valid_compare(self, proposal: dict[str, Any]) -> list[str]:
        value = list(proposal["value"])
        if value and (len(value) != 2 or (value[0], value[1]) not in self._metric_keys()):
            msg = f"compare is [] or [evaluator, metric] of a scored metric; got {value!r}"
            raise traitlets.TraitError(msg)
        return value

    @traitlets.validate("language")
    def _valid_language(self, proposal: dict[str, Any]) -> str:
        value = str(proposal["value"] or "")
        known = set(self._case_languages["language"].drop_nulls().to_list())
        if value and value not in known:
            msg = f"language is '' (all) or one of the lab's {sorted(known)}; got {value!r}"
            raise traitlets.TraitError(msg)
        return value

    def _on_language(self, _change: dict[str, Any]) -> None:
        self.refresh()

    def _cases_of(self, language: str) -> pl.DataFrame | None:
        if not language:
            return None
        return self._case_languages.filter(pl.col("language") == language).select("case_id")

    def _metric_keys(self) -> set[tuple[str, str]]:
        return set(self._index.specs.select("evaluator", "metric").iter_rows())

    def refresh(self, lab: LabCore | None = None) -> None:
        """Re-read the lab (or show ``lab`` instead) and redraw the current level.

        The lab calls this itself after :meth:`evalnb.Lab.set_threshold`; pass the lab that
        :func:`evalnb.evaluate` returns to show new scores. A path that no longer exists is
        cut to its valid prefix.
        """
        if lab is not None and lab is not self._lab:
            self._lab = lab
            lab.watch(_SHOWN, weakref.WeakMethod(self.refresh))
        self._case_languages = _languages_of(self._lab)
        self._languages = _language_options(self._case_languages)
        if self.language and self.language not in set(self._case_languages["language"]):
            self.set_trait("language", "")  # the lab no longer holds that language
        self._index = eye_index(self._lab, seed=self._seed, cases=self._cases_of(self.language))
        keep: list[str] = []
        for step in self.path:
            try:
                keep = check_path(self._index, [*keep, step])
            except ValueError:
                break
        with self.hold_sync():
            if keep != list(self.path):
                self.path = keep  # the observer redraws
            else:
                self._show_level()
            self._show_case()

    def focus(self, evaluator: str, metric: str, case: Mapping[str, Any]) -> Eye:
        """Drill to ``evaluator``/``metric`` at ``case``'s model and show that case.

        ``case`` holds ``case_id`` and ``model`` (``sample`` optional), as
        :meth:`evalnb.judges.JudgeCard.worst` returns it. Returns the eye, to display.
        """
        domains = self._index.specs.filter(
            (pl.col("evaluator") == evaluator) & (pl.col("metric") == metric)
        )["domain"]
        if domains.is_empty():
            shown = sorted(f"{e}.{m}" for e, m in self._metric_keys())
            msg = (
                f"the eye has no scores of {evaluator}.{metric} to focus on; it shows "
                f"{shown}: score that metric first (evalnb.evaluate), or focus on one of these"
            )
            raise ValueError(msg)
        with self.hold_sync():
            self.path = [str(domains[0]), evaluator, metric, str(case["model"])]
            self.selected_case = dict(case)
        return self

    def _on_path(self, change: dict[str, Any]) -> None:
        old, new = list(change["old"]), list(change["new"])
        with self.hold_sync():
            # A comparison or a case belongs to one (metric, model): drop it when that changes.
            if old[:4] != new[:4]:
                self.compare = []
                if self.selected_case and (len(new) < 4 or self.selected_case["model"] != new[3]):
                    self.set_trait("selected_case", None)
            self._show_level()

    def _on_case(self, _change: dict[str, Any]) -> None:
        self._show_case()

    def _on_compare(self, _change: dict[str, Any]) -> None:
        with self.hold_sync():
            self._show_dots()

    def _show_level(self) -> None:
        path = list(self.path)
        specs = self._index.specs
        level: dict[str, Any] = {"depth": len(path), "titles": path_titles(self._index, path)}
        if len(path) >= 3:
            row = specs.filter(
                (pl.col("evaluator") == path[1]) & (pl.col("metric") == path[2])
            ).row(0, named=True)
            level.update(
                metric_title=row["title"] or path[2],
                description=row["description"] or "",
                threshold=finite_or_none(row["threshold"]),
                higher_is_better=row["higher_is_better"],
                min=finite_or_none(row["min"]),
                max=finite_or_none(row["max"]),
            )
        with self.hold_sync():
            self._nodes = to_ipc(eye_nodes(self._index, path))
            self._bars = to_ipc(eye_bars(self._index, path))
            self._level = level
            self._show_dots()

    def _show_dots(self) -> None:
        path = list(self.path)
        if len(path) < 4:
            self._dots, self._bins = b"", b""
            self._level = {**self._level, "compare_options": [], "n_total": 0, "n_shown": 0}
            return
        ev, metric, model = path[1], path[2], path[3]
        if self.compare:
            dots = compare_dots(
                self._index,
                ev,
                metric,
                model,
                (self.compare[0], self.compare[1]),
                max_dots=self._max_dots,
            )
        else:
            dots = eye_dots(self._index, ev, metric, model, max_dots=self._max_dots)
        bins = score_bins(self._index, ev, metric, model)
        options = [
            {"evaluator": e, "metric": m, "title": t or m}
            for (e, m, t) in self._index.specs.select("evaluator", "metric", "title").iter_rows()
            if (e, m, model) in self._index.parts and (e, m) != (ev, metric)
        ]
        compare_title = next(
            (o["title"] for o in options if [o["evaluator"], o["metric"]] == list(self.compare)),
            None,
        )
        self._dots, self._bins = to_ipc(dots), to_ipc(bins)
        self._level = {
            **self._level,
            "compare_options": options,
            "compare_title": compare_title,
            "n_total": int(bins["n"].sum()),
            "n_shown": dots.height,
        }

    def _show_case(self) -> None:
        sel = self.selected_case
        if not sel:
            self.set_trait("_case", None)
            return
        focus = (self.path[1], self.path[2]) if len(self.path) >= 3 else None
        self._case = case_detail(
            self._lab, self._index, sel["case_id"], sel["model"], sel["sample"], focus=focus
        )

    def selection(self) -> pl.DataFrame:
        """Rows under the current selection, with the case's prompt and the model's answer.

        The selected case's scores when a case is selected, else every verdict row under
        the drill path (all rows at the top level).
        """
        rows = self._index.verdicts  # a query: only the selected rows are collected
        sel = self.selected_case
        if sel:
            rows = rows.filter(
                (pl.col("case_id") == sel["case_id"])
                & (pl.col("model") == sel["model"])
                & (pl.col("sample") == sel["sample"])
            )
        else:
            for level, step in zip(LEVELS, self.path, strict=False):
                rows = rows.filter(pl.col(level) == step)
        picked = rows.collect()
        cases = self._lab.cases.select("case_id", "prompt", "expected")
        # Only the answers on show are read (the outputs may be kept on disk).
        outputs = (
            self._lab.scan("outputs")
            .select("case_id", "model", "sample", "actual")
            .join(
                picked.lazy().select("case_id", "model", "sample").unique(),
                on=["case_id", "model", "sample"],
                how="semi",
            )
            .collect()
        )
        return picked.join(cases, on="case_id", how="left").join(
            outputs, on=["case_id", "model", "sample"], how="left", maintain_order="left"
        )


def _languages_of(lab: LabCore) -> pl.DataFrame:
    """Each case's language as the lab holds it, for the eye's language menu.

    Not detected here: the eye opens on labs of millions of rows in a second or two, and
    detecting every case would cost more. ``lab.languages.set()`` fills the column.
    """
    return lab.cases.select("case_id", "language")


def _language_options(languages: pl.DataFrame) -> list[dict[str, Any]]:
    counts = (
        languages.drop_nulls("language").group_by("language").len().sort("len", descending=True)
    )
    return [
        {"code": code, "name": language_name(code), "n": int(n)} for code, n in counts.iter_rows()
    ]


def eye(lab: LabCore, *, max_dots: int = 2000, seed: int = 0, **traits: object) -> Eye:
    """Open the eval eye on ``lab`` (see :class:`Eye`); same as ``lab.eye()``."""
    return Eye(lab, max_dots=max_dots, seed=seed, **traits)
