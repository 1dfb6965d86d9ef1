"""How a concern hangs on :class:`~evalnb.Lab`: a namespace of functions with the lab bound.

The contract. A concern's work is done by plain functions of its own subpackage whose first
parameter is the lab (``judge_card(lab, evaluator, ...)`` in :mod:`evalnb.judge_reliability`);
code below ``api`` calls them directly. ``lab.judges.card(...)`` *is* that function with the
lab bound: :class:`bound` makes the method on first access from the function itself, so its
signature (less the lab) and docstring are written once, where the work is, and the type
checker sees the function's own parameters (``Concatenate``). A namespace class holds only
``bound`` attributes (``tests/project/test_layout.py`` checks it); :class:`namespace` builds
it per lab on first use and caches it on that lab, as Polars' ``register_*_namespace``
descriptors do. Adding a concern: write its functions of the lab, list them in a
:class:`Namespace` subclass, attach it to ``Lab`` with ``namespace(...)`` — never a mixin.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from typing import TYPE_CHECKING, Any, Concatenate, Generic, ParamSpec, TypeVar, overload

if TYPE_CHECKING:
    from collections.abc import Callable

    from evalnb.lab.core import LabCore

__all__ = ["Namespace", "bound", "moved", "namespace", "old_call"]

P = ParamSpec("P")
R = TypeVar("R")
N = TypeVar("N", bound="Namespace")


class Namespace:
    """The methods of one concern, on one lab (``lab.<name>``); made by :class:`namespace`."""

    def __init__(self, lab: LabCore) -> None:
        self._lab = lab

    @property
    def lab(self) -> LabCore:
        """The lab these methods work on."""
        return self._lab

    def __repr__(self) -> str:
        names = ", ".join(n for n, v in type(self).__dict__.items() if isinstance(v, bound))
        return f"<{type(self).__name__} of a lab: {names}>"

    def __dir__(self) -> list[str]:
        return sorted(n for n, v in type(self).__dict__.items() if isinstance(v, bound))


class bound(Generic[P, R]):
    """A namespace attribute that is ``floor`` with the namespace's lab as first argument.

    ``via`` picks what the floor function takes instead of the lab itself (``labels``: the
    lab's labels table), for functions written over one table. ``load`` gives the floor
    function on first use instead (a widget: anywidget loads with the first one shown, not
    with ``import evalnb``).
    """

    def __init__(
        self,
        floor: Callable[Concatenate[Any, P], R] | None = None,
        *,
        via: Callable[[LabCore], object] | None = None,
        load: Callable[[], Callable[Concatenate[Any, P], R]] | None = None,
    ) -> None:
        if (floor is None) == (load is None):
            msg = "bound takes a floor function or a load function that returns it, not both"
            raise TypeError(msg)
        self._floor = floor
        self._load = load
        self.via = via
        self.name = ""

    @property
    def floor(self) -> Callable[Concatenate[Any, P], R]:
        """The function of the lab this attribute binds (loaded on first use with ``load``)."""
        if self._floor is None:
            assert self._load is not None
            self._floor = self._load()
        return self._floor

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, ns: None, owner: type | None = None) -> bound[P, R]: ...
    @overload
    def __get__(self, ns: Namespace, owner: type | None = None) -> Callable[P, R]: ...
    def __get__(
        self, ns: Namespace | None, owner: type | None = None
    ) -> bound[P, R] | Callable[P, R]:
        """Return the floor function with this namespace's lab bound (the class: this marker)."""
        if ns is None:
            return self
        first = ns.lab if self.via is None else self.via(ns.lab)
        floor = self.floor

        def method(*args: P.args, **kwargs: P.kwargs) -> R:
            return floor(first, *args, **kwargs)

        functools.update_wrapper(method, floor)
        method.__name__ = method.__qualname__ = self.name
        full = inspect.signature(floor)
        method.__signature__ = full.replace(parameters=list(full.parameters.values())[1:])  # type: ignore[attr-defined]
        return method


class namespace(Generic[N]):
    """``Lab.<name>``: builds the namespace ``cls`` for a lab on first use and keeps it there.

    A data descriptor (it refuses assignment), so a lab copied with its attributes (a new lab
    from :meth:`~evalnb.lab.synced.SyncedTables.with_tables`) builds its own namespace
    rather than reading the one bound to the lab it came from.
    """

    def __init__(self, cls: type[N]) -> None:
        self.cls = cls
        self.key = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.key = f"_namespace_{name}"

    @overload
    def __get__(self, lab: None, owner: type | None = None) -> type[N]: ...
    @overload
    def __get__(self, lab: LabCore, owner: type | None = None) -> N: ...
    def __get__(self, lab: LabCore | None, owner: type | None = None) -> type[N] | N:
        """Return this lab's namespace (the namespace class on the class)."""
        if lab is None:
            return self.cls
        kept = lab.__dict__.get(self.key)
        if not isinstance(kept, self.cls) or kept.lab is not lab:
            kept = self.cls(lab)
            lab.__dict__[self.key] = kept
        return kept

    def __set__(self, lab: LabCore, value: object) -> None:
        msg = f"{self.key.removeprefix('_namespace_')} is a namespace of the lab's methods; it cannot be set"
        raise AttributeError(msg)


def moved(lab: object, name: str, table: dict[str, tuple[str, str]]) -> object:
    """Return the namespace method an old flat name of ``Lab`` moved to, warning once per call.

    Raises ``AttributeError`` for a name that never existed, as attribute lookup does.
    """
    if name not in table:
        msg = f"{type(lab).__name__!r} object has no attribute {name!r}"
        raise AttributeError(msg)
    space, method = table[name]
    warnings.warn(
        f"lab.{name} is now lab.{space}.{method} (docs/reference/api.md, 'Where the methods went'); "
        "the flat name goes in the next release",
        DeprecationWarning,
        stacklevel=3,
    )
    return getattr(getattr(lab, space), method)


def old_call(old: str, new: str, floor: Callable[[LabCore], R], lab: LabCore) -> R:
    """Answer the old call ``lab.<old>()`` of what is now a namespace, warning it moved to ``new``."""
    warnings.warn(
        f"lab.{old}() is now lab.{new}(); the call goes in the next release",
        DeprecationWarning,
        stacklevel=3,
    )
    return floor(lab)
