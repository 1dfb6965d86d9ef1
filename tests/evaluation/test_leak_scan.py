"""The linear-time leakage scans give exactly the matches of H2O's patterns."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from evalnb.evaluation.families.text.leak_scan import (
    EMAIL,
    PEM,
    SSN,
    email_matches,
    pem_matches,
    ssn_matches,
)
from evalnb_testkit.budget import examples


def _texts(tokens: list[str]) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(tokens), max_size=40).map("".join)


_SSN_TOKENS = [
    "0",
    "00",
    "000",
    "0000",
    "1",
    "12",
    "123",
    "-",
    "45",
    "6789",
    " ",
    "\n",
    "x",
    "999999999",
]
_EMAIL_TOKENS = ["a", "b1", "_", ".", "-", "@", " ", "\n", "é", "²", "+", "x.y", "@a.b", ".c"]
_PEM_TOKENS = [
    "-",
    "--",
    "\n",
    "x",
    "BEGIN CERTIFICATE",
    "END CERTIFICATE",
    "BEGIN",
    "END",
    " CERTIFICATE",
    "-BEGIN CERTIFICATE-",
    "-END CERTIFICATE-",
]


@settings(max_examples=examples(800), deadline=None)
@given(_texts(_SSN_TOKENS))
def test_ssn_scan_equals_h2o_pattern(text: str) -> None:
    assert ssn_matches(text) == [m.group(0) for m in SSN.finditer(text)]


@settings(max_examples=examples(1500), deadline=None)
@given(_texts(_EMAIL_TOKENS))
def test_email_scan_equals_h2o_pattern(text: str) -> None:
    assert email_matches(text) == [m.group(0) for m in EMAIL.finditer(text)]


@settings(max_examples=examples(1500), deadline=None)
@given(_texts(_PEM_TOKENS))
def test_pem_scan_equals_h2o_pattern(text: str) -> None:
    assert pem_matches(text) == [m.group(0) for m in PEM.finditer(text)]


def test_scans_on_known_cases() -> None:
    assert email_matches("a@b.c-d@e.f and x@y") == ["a@b.c", "-d@e.f"]
    text = "-BEGIN CERTIFICATE--END CERTIFICATE- x -END CERTIFICATE--"
    assert pem_matches(text) == [text]  # the greedy dashes win: the match runs to the last end
    assert pem_matches("--BEGIN CERTIFICATE--END CERTIFICATE-") == [
        "--BEGIN CERTIFICATE--END CERTIFICATE-"
    ]
    assert pem_matches("-BEGIN CERTIFICATE-END CERTIFICATE-") == []
    assert ssn_matches("a123456789b 0000\nc123456789d") == ["c123456789d"]
