"""Linear-time scans that give exactly the matches of H2O's leakage patterns.

Three of H2O's patterns backtrack quadratically on hostile text when run with
``finditer``: the e-mail pattern retries from every character of a long word that precedes
an ``@`` (``'1' * 80_000 + '@'``: 24 s), the SSN look-ahead rescans the rest of the line at
every candidate, and the PEM pattern's lazy body runs to the end of the text from every
``-BEGIN CERTIFICATE-`` without an end marker (29 s). Each scan below starts the search only
where a match can start, and each part of the text is read a bounded number of times. The
results are those of ``pattern.finditer`` on the original pattern (property-tested against
it), in time linear in the length of the text.
"""

from __future__ import annotations

import re

__all__ = ["email_matches", "pem_matches", "ssn_matches"]

# H2O's patterns, kept verbatim: they define the matches.
EMAIL = re.compile(r"[\w\.-]+@[\w\.-]+\.\w+")
SSN = re.compile(r"[^\d](?!000|.+0{4})(?:\d{9}|\d{3}-\d{2}-\d{4})[^\d]")
PEM = re.compile(r"(-+BEGIN CERTIFICATE-+)[\n]?((.|\n)*?)[\n]?(-+END CERTIFICATE-+)")

_WORD_RUN = re.compile(r"[\w\.-]+")  # the e-mail's character class, as maximal runs
_SSN_CANDIDATE = re.compile(r"[^\d](?:\d{9}|\d{3}-\d{2}-\d{4})[^\d]")  # SSN less its look-ahead
_DASHES = re.compile(r"-*")
_BEGIN, _END = "BEGIN CERTIFICATE", "END CERTIFICATE"


def email_matches(text: str) -> list[str]:
    r"""Return ``[m.group(0) for m in EMAIL.finditer(text)]`` in linear time.

    A match is a run of ``[\w.-]`` that ends at an ``@``, then the domain. Whether the domain
    matches does not depend on where in the run the match starts, so if the run's first
    character (or the search position, inside a run) does not start a match, no character
    of the run does: one attempt per run that ends at an ``@``, each reading that run and the
    one after the ``@``.
    """
    out: list[str] = []
    pos = 0
    for run in _WORD_RUN.finditer(text):
        end = run.end()
        if end <= pos or not text.startswith("@", end):
            continue
        found = EMAIL.match(text, max(run.start(), pos))
        if found is not None:
            out.append(found.group(0))
            pos = found.end()
    return out


def ssn_matches(text: str) -> list[str]:
    """Return ``[m.group(0) for m in SSN.finditer(text)]`` in linear time.

    ``(?!000|.+0{4})`` rescans the rest of the line at every candidate; here a candidate is
    found with the look-ahead left out and then checked directly (no "000" next, no "0000"
    later on the same line, from the last "0000" of that line found once per line),
    retrying one character further when it fails.
    """
    out: list[str] = []
    pos, line_end, last_zeros = 0, -1, -1
    while (m := _SSN_CANDIDATE.search(text, pos)) is not None:
        p = m.start() + 1
        if p > line_end:  # a new line: its end and its last "0000", once
            line_start = text.rfind("\n", max(line_end, 0), p) + 1
            line_end = text.find("\n", p)
            line_end = len(text) if line_end < 0 else line_end
            last_zeros = text.rfind("0000", line_start, line_end)
        if text.startswith("000", p) or last_zeros >= p + 1:
            pos = m.start() + 1
            continue
        out.append(m.group(0))
        pos = m.end()
    return out


def _dash_run_end(text: str, pos: int) -> int:
    found = _DASHES.match(text, pos)
    return pos if found is None else found.end()


def pem_matches(text: str) -> list[str]:
    r"""Return ``[m.group(0) for m in PEM.finditer(text)]`` in linear time.

    The match span follows from the pattern's priorities without running its lazy body:
    the first ``-+`` starts at the dash run before ``BEGIN CERTIFICATE``; the second takes
    the whole dash run after it (greedy) and ``[\n]?`` a newline; the lazy body then ends at
    the first ``-END CERTIFICATE-`` after that, and the last ``-+`` takes its dash run. Only
    when no such end marker follows does the engine give back a dash of the second run, which
    matters just when that run is directly followed by ``END CERTIFICATE-``.
    """
    out: list[str] = []
    pos, no_end_from = 0, len(text) + 1
    while (b := text.find(_BEGIN, pos)) >= 0:
        start = pos + len(text[pos:b].rstrip("-"))
        after = b + len(_BEGIN)
        if start == b or not text.startswith("-", after):
            pos = b + 1  # no dash before or after: no match starts at this marker
            continue
        run_end = _dash_run_end(text, after)
        body = run_end + 1 if text.startswith("\n", run_end) else run_end
        d = -1 if body >= no_end_from else text.find("-" + _END + "-", body)
        if d < 0:
            no_end_from = min(no_end_from, body)  # and from any later position, never again
        if d >= 0:
            end = _dash_run_end(text, d + 1 + len(_END))
        elif run_end - after >= 2 and text.startswith(_END + "-", run_end):
            end = _dash_run_end(text, run_end + len(_END))
        else:
            pos = b + 1
            continue
        out.append(text[start:end])
        pos = end
    return out
