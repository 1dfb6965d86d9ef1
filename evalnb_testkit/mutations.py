"""Structural mutations of JSON documents, drawn by Hypothesis (the importers' fuzz)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

__all__ = ["mutate_tree"]

_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 10**12),
    st.floats(allow_nan=False),
    st.text(max_size=12),
    st.sampled_from(["", "INTERNAL ERROR: x", "REGEXP:(", "null", "[1]", "a\ud800b", "\U0001f600"]),
    # hostile values: numbers past int64 and float, separators str.splitlines would cut at
    st.sampled_from(
        [10**23, -(10**23), 10**400, 2**63, "a\u2028b\u2029c\u0085d", 'regexp("a{4294967294}")']
    ),
)
_json = st.recursive(
    _leaf,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=6,
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*prefix, i))
    return out


def mutate_tree(data: st.DataObject, doc: Any) -> Any:
    for _ in range(data.draw(st.integers(1, 3))):
        paths = _paths(doc)
        path = data.draw(st.sampled_from(paths))
        op = data.draw(st.sampled_from(["replace", "delete", "duplicate", "add_key", "empty"]))
        if not path:
            doc = data.draw(_json) if op == "replace" else doc
            continue
        parent = doc
        for step in path[:-1]:
            parent = parent[step]
        last = path[-1]
        if op == "replace":
            parent[last] = data.draw(_json)
        elif op == "delete":
            del parent[last]
        elif op == "duplicate" and isinstance(parent, list):
            parent.insert(last, json.loads(json.dumps(parent[last])))
        elif op == "add_key" and isinstance(parent[last], dict):
            parent[last][data.draw(st.text(max_size=10))] = data.draw(_json)
        elif op == "empty":
            parent[last] = (
                type(parent[last])() if isinstance(parent[last], list | dict | str) else None
            )
    return doc
