"""The facade's shape: one namespace per concern, each method its function with the lab bound."""

from __future__ import annotations

import inspect
import warnings

import polars as pl
import pytest

import evalnb
from evalnb.api.binding import Namespace, bound, namespace
from evalnb.api.lab import MOVED
from evalnb.calibration.recalibrate import recalibrate
from evalnb.lab.core import LabCore

_SPACES = {name: value for name, value in vars(evalnb.Lab).items() if isinstance(value, namespace)}


def _lab() -> evalnb.Lab:
    return evalnb.load(
        pl.DataFrame({"prompt": ["a", "b"], "expected": ["x", "y"], "actual": ["x", "z"]})
    )


def test_the_facade_keeps_its_caps() -> None:
    public = [n for n in dir(evalnb.Lab) if not n.startswith("_")]
    assert len(public) <= 60, len(public)
    assert len(evalnb.__all__) <= 70, len(evalnb.__all__)
    ours = [c for c in evalnb.Lab.__mro__ if c.__module__.startswith("evalnb.")]
    # Lab, LabCore and the store layer under it (SyncedTables): no mixin of a concern.
    assert [c.__name__ for c in ours] == ["Lab", "LabCore", "SyncedTables"]
    assert set(_SPACES) == {
        "judges",
        "calibration",
        "decisions",
        "curation",
        "languages",
        "robustness",
        "retrieval",
        "media",
    }


@pytest.mark.parametrize("space", sorted(_SPACES))
def test_every_namespace_method_goes_through_the_binding(space: str) -> None:
    cls = _SPACES[space].cls
    assert issubclass(cls, Namespace)
    own = {n: v for n, v in vars(cls).items() if not n.startswith("_")}
    assert own and all(isinstance(v, bound) for v in own.values()), own
    lab = _lab()
    for name, marker in own.items():
        method = getattr(getattr(lab, space), name)
        floor = marker.floor
        # The floor function's own signature, less the lab, and its own docstring.
        params = list(inspect.signature(floor).parameters)[1:]
        assert list(inspect.signature(method).parameters) == params, name
        assert method.__doc__ == floor.__doc__ and method.__doc__, name
        assert not floor.__module__.startswith("evalnb.api.namespaces"), name


def test_a_namespace_is_built_once_per_lab_and_never_crosses_to_a_copy() -> None:
    lab = _lab()
    assert lab.judges is lab.judges
    copy = lab.with_tables({"cases": lab.cases})
    assert copy.judges is not lab.judges and copy.judges.lab is copy
    with pytest.raises(AttributeError, match="namespace of the lab's methods"):
        lab.judges = None  # type: ignore[misc]


def test_a_bound_method_is_the_function_with_the_lab_first() -> None:
    lab = _lab()
    scored = evalnb.evaluate(lab, "text_matching", progress=False)
    scored.calibration.add_label(
        scored.cases["case_id"][0], "model", "text_matching", "exact_match", "pass", reviewer="r"
    )
    assert inspect.signature(scored.calibration.recalibrate) == inspect.signature(
        recalibrate
    ).replace(parameters=list(inspect.signature(recalibrate).parameters.values())[1:])
    assert isinstance(scored.calibration.lab, LabCore)


@pytest.mark.parametrize("old", sorted(MOVED))
def test_every_old_flat_name_warns_and_answers_with_its_namespace_method(old: str) -> None:
    lab = _lab()
    space, new = MOVED[old]
    with pytest.warns(DeprecationWarning, match=rf"lab\.{old} is now lab\.{space}\.{new}"):
        method = getattr(lab, old)
    assert method.__name__ == new and method.__doc__ == getattr(getattr(lab, space), new).__doc__


def test_the_two_old_calls_of_what_became_namespaces_still_answer() -> None:
    lab = _lab()
    with pytest.warns(DeprecationWarning, match=r"lab\.languages\.summary\(\)"):
        summary = lab.languages()
    assert summary.equals(lab.languages.summary())
    with pytest.warns(DeprecationWarning, match=r"lab\.curation\.view\(\)"):
        view = lab.curation()
    assert view.equals(lab.curation.view())


def test_a_name_that_never_was_is_an_attribute_error_without_a_warning() -> None:
    lab = _lab()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(AttributeError, match="no attribute 'recalibrat'"):
            lab.recalibrat  # noqa: B018 - the lookup is the test
        assert not hasattr(lab, "_private_probe")
