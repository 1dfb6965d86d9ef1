"""Checking a calibration bundle: its schema, what a schema lets through, and its seal.

A bundle is read by monitors, reviewers' tools and other labs, often long after it was
exported; every reader goes through :func:`check_calibration`, which checks the JSON schema
(:data:`BUNDLE_SCHEMA`), then the values a schema cannot (non-finite or inverted numbers, a
metric listed twice), then the digest :func:`seal` put on the content when it was signed off:
a threshold edited by hand afterwards is refused.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import TYPE_CHECKING, Any, NoReturn

from evalnb.lab.errors import InputError

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "BUNDLE_SCHEMA",
    "FORMAT",
    "VERSION",
    "bundle_hash",
    "check_calibration",
    "seal",
    "validate_schema",
]

FORMAT, VERSION = "evalnb.calibration", 2
# Version 2 adds what monitoring needs: the evaluators with their versions and parameters,
# the accepted pass rate per metric and a reference sample of the lab's questions. Version 1
# bundles still read and apply to labs; a monitor asks for version 2.
_READABLE = (1, 2)
_NUM = {"type": ["number", "null"]}
BUNDLE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": [
        "format",
        "version",
        "evalnb_version",
        "created_at",
        "lab",
        "approval",
        "metrics",
        "judges",
    ],
    "properties": {
        "judge_cards": {
            "type": "array",
            "items": {"type": "object", "required": ["evaluator", "metric", "judge", "measures"]},
        },
        "format": {"const": FORMAT},
        "version": {"enum": list(_READABLE)},
        "evalnb_version": {"type": "string"},
        "created_at": {"type": "string"},
        "lab": {
            "type": "object",
            "required": ["content_hash", "cases", "outputs"],
            "properties": {
                "content_hash": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
                "cases": {"type": "integer"},
                "outputs": {"type": "integer"},
            },
        },
        "approval": {
            "type": ["object", "null"],
            "required": ["by", "at"],
            "properties": {
                "by": {"type": "string", "minLength": 1},
                "note": {"type": ["string", "null"]},
                "at": {"type": "string"},
            },
        },
        "metrics": {
            "type": "array",
            "items": {
                "type": "object",
                "required": [
                    "evaluator",
                    "metric",
                    "threshold",
                    "higher_is_better",
                    "n_labels",
                    "labels_per_reviewer",
                ],
                "properties": {
                    "evaluator": {"type": "string"},
                    "metric": {"type": "string"},
                    "threshold": {"type": "number"},
                    "higher_is_better": {"type": "boolean"},
                    "ci": {"type": "array", "items": _NUM},
                    "agreement": _NUM,
                    "kappa_before": _NUM,
                    "kappa_after": _NUM,
                    "n_labels": {"type": "integer"},
                    "labels_per_reviewer": {"type": "object"},
                    "corrected": {"type": "array"},
                    "accepted": _NUM,
                    "lab_pass_rate": _NUM,
                },
            },
        },
        "evaluators": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["id", "version", "params"],
                "properties": {
                    "id": {"type": "string", "minLength": 1},
                    "version": {"type": "string"},
                    "params": {"type": "object"},
                },
            },
        },
        "reference": {
            "type": ["object", "null"],
            "required": ["prompts", "topics"],
            "properties": {
                "prompts": {"type": "array", "items": {"type": "string"}},
                "topics": {"type": "array", "items": {"type": ["string", "null"]}},
            },
        },
        "judges": {
            "type": "array",
            "items": {
                "type": "object",
                "required": [
                    "version_id",
                    "evaluator",
                    "metric",
                    "system_prompt",
                    "examples",
                    "guidance",
                    "kappa_before",
                    "kappa_after",
                ],
            },
        },
    },
}


def _digest(bundle: Mapping[str, Any]) -> str:
    body = {k: v for k, v in bundle.items() if k != "digest"}
    return bundle_hash(body)


def seal(bundle: dict[str, Any]) -> dict[str, Any]:
    """Return ``bundle`` with the digest of its content (checked when it is read).

    A bundle is what was signed off: a threshold or a level edited by hand afterwards no
    longer matches the digest and is refused. Code that builds a bundle on purpose (a test,
    a migration) seals it again.
    """
    return {**{k: v for k, v in bundle.items() if k != "digest"}, "digest": _digest(bundle)}


def validate_schema(bundle: object, where: str) -> None:
    """Refuse ``bundle`` unless it has the shape of :data:`BUNDLE_SCHEMA` (the first error, by path)."""
    from jsonschema import Draft202012Validator  # noqa: PLC0415 - slow import, exports only

    errors = sorted(
        Draft202012Validator(BUNDLE_SCHEMA).iter_errors(bundle), key=lambda e: list(e.path)
    )
    if errors:
        path = "$." + ".".join(str(p) for p in errors[0].path)
        field = str(errors[0].path[-1]) if errors[0].path else None
        raise InputError(
            where,
            path,
            field,
            f"an evalnb calibration bundle, version {VERSION}",
            errors[0].message[:200],
            hint="Write one with lab.calibration.export(path)",
        )


def check_calibration(bundle: object, where: str) -> dict[str, Any]:
    """Check a bundle (a parsed file, or a dict in memory) by schema then by value; return it."""
    validate_schema(bundle, where)
    assert isinstance(bundle, dict)  # the schema says it is an object
    _check_values(bundle, where)
    digest = bundle.get("digest")
    if digest is not None and digest != _digest(bundle):
        raise InputError(
            where,
            "$.digest",
            "digest",
            "the digest of the bundle's content as exported",
            f"{str(digest)[:16]}… (the content was changed after export)",
            "A threshold or level edited by hand is not what was signed off: export the "
            "bundle again from the lab (lab.calibration.export)",
        )
    return dict(bundle)


def bundle_hash(bundle: Mapping[str, Any]) -> str:
    """SHA-256 of the bundle's canonical JSON: names the exact bundle a result was made with."""
    text = json.dumps(bundle, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _check_values(bundle: dict[str, Any], where: str) -> None:
    """Refuse what the schema lets through.

    Non-finite or inverted numbers, negative counts, a metric listed twice.
    """

    def refuse(path: str, field: str, expected: str, found: object) -> NoReturn:
        raise InputError(
            where,
            path,
            field,
            expected,
            repr(found)[:80],
            "Write the bundle again with lab.calibration.export(path)",
        )

    for name in ("cases", "outputs"):
        if bundle["lab"][name] < 0:
            refuse(f"$.lab.{name}", name, "a count >= 0", bundle["lab"][name])
    seen: set[tuple[str, str]] = set()
    for i, m in enumerate(bundle["metrics"]):
        at = f"$.metrics[{i}]"
        key = (m["evaluator"], m["metric"])
        if key in seen:
            refuse(at, "metric", "each (evaluator, metric) once", f"{key} again")
        seen.add(key)
        if not math.isfinite(m["threshold"]):
            refuse(f"{at}.threshold", "threshold", "a finite threshold", m["threshold"])
        if m["n_labels"] < 0:
            refuse(f"{at}.n_labels", "n_labels", "a count >= 0", m["n_labels"])
        for reviewer, count in m["labels_per_reviewer"].items():
            if not isinstance(count, int) or isinstance(count, bool) or count < 0:
                refuse(
                    f"{at}.labels_per_reviewer.{reviewer}",
                    "labels_per_reviewer",
                    "a count >= 0 per reviewer",
                    count,
                )
        ci = m.get("ci")
        if ci is not None:
            if len(ci) != 2:
                refuse(f"{at}.ci", "ci", "[low, high]", ci)
            low, high = ci
            if any(v is not None and not math.isfinite(v) for v in ci):
                refuse(f"{at}.ci", "ci", "finite bounds (or null)", ci)
            if low is not None and high is not None and low > high:
                refuse(f"{at}.ci", "ci", "low <= high", ci)
        for name in ("agreement", "kappa_before", "kappa_after", "accepted", "lab_pass_rate"):
            value = m.get(name)
            if value is not None and not math.isfinite(value):
                refuse(f"{at}.{name}", name, "a finite number (or null)", value)
        for name in ("accepted", "lab_pass_rate"):
            value = m.get(name)
            if value is not None and not 0 <= value <= 1:
                refuse(f"{at}.{name}", name, "a pass rate in [0, 1] (or null)", value)
