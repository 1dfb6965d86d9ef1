"""Hostile texts for the leakage detectors: each about 1 MB, built to make a backtracking
regex engine retry from every character (shared by the tests and ``bench/bench_hostile.py``)."""

from __future__ import annotations

MB = 1_000_000


def adversarial_texts(size: int = MB) -> dict[str, str]:
    """Name → text of about ``size`` characters."""
    n = size
    return {
        "digits then @": "1" * n + "@",
        "@ then a long word": "a@" + "a" * n,
        "dots and dashes then @": ".-" * (n // 2) + "@x",
        "a@a. repeated": "a@a." * (n // 4),
        "e-mail-like words": "x.y@z.io " * (n // 9),
        "digits": "1" * n,
        "card-like groups": "1234 " * (n // 5),
        "SSN candidates, 0000 at line end": "a123456789b" * (n // 11) + "0000",
        "SSN candidates, one per line": "a123456789b\n" * (n // 12),
        "key-like groups": "AAAAA-" * (n // 6),
        "sk- repeated": " sk-" * (n // 4),
        "sk- then a long key": " sk-" + "a" * n,
        "BEGIN markers, no end": "-BEGIN CERTIFICATE-" * (n // 19),
        "dashes then BEGIN": "-" * n + "BEGIN CERTIFICATE",
        "BEGIN, long body, no end": "-BEGIN CERTIFICATE-\n" + "x" * n,
        "BEGIN, dashes in body, end": "-BEGIN CERTIFICATE-x" + "-" * n + "y-END CERTIFICATE-",
        "BEGIN/END pairs": "-BEGIN CERTIFICATE-\nab\n-END CERTIFICATE-\n" * (n // 40),
    }
