"""Procedure steps in text: numbered, lettered and bulleted lists, and "First … Then …" prose.

:func:`enumerations` returns every enumeration of a text (two steps or more), each a list of
step texts in order, markers removed:

* list lines: ``1.`` / ``1)`` / ``(1)`` / ``Step 1:``, ``a.`` / ``a)`` / ``(a)``, and
  ``-`` / ``*`` / ``•`` bullets; numbers and letters must follow each other (1, 2, 3 or
  a, b, c), so a stray "3." or "A. Smith" does not start a list. An indented line continues
  the step above it; blank lines may separate the items of a numbered or lettered list;
* inline lists in one paragraph: "1. Open the app. 2. Tap Send. 3. Confirm.";
* sequences of sentences led by "First", "Then", "Next", "After that", "Finally" …, starting
  with "First" (or "To begin") and holding two such sentences or more.

Bounded: at most ``MAX_STEPS`` steps per text, ``MAX_STEP_CHARS`` characters per step.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field

__all__ = ["MAX_STEPS", "MAX_STEP_CHARS", "enumerations"]

MAX_STEPS, MAX_STEP_CHARS = 200, 600

_NUMBERED = re.compile(r"^\s*(?:step\s+)?\(?(\d{1,3})(?:[.):]|\s+[-–—])\s*(?=\S)(.*)$", re.I)
_LETTERED = re.compile(r"^\s*\(?([a-z])[.)]\s+(?=\S)(.*)$", re.I)
_BULLET = re.compile(r"^\s*[-*•‣◦▪]\s+(?=\S)(.*)$")
_INLINE = re.compile(r"(?:^|(?<=\s))\(?(\d{1,2})[.)]\s+(?=\S)")
_SEQUENCE = re.compile(
    r"^(first(?:ly)?|to (?:begin|start)|second(?:ly)?|third(?:ly)?|next|then|after that|"
    r"afterwards|subsequently|once (?:that is|this is) done|finally|lastly)\b[,:]?\s*",
    re.I,
)
_STARTS = ("first", "firstly", "to begin", "to start")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
_EMPHASIS = re.compile(r"[*_`]{1,3}")


@dataclass
class _List:
    kind: str  # "number", "letter" or "bullet"
    last: int  # the last number or letter index
    # Each step as its pieces (its line, then its continuation lines), joined once at the
    # end: growing one string line by line would copy it every line (quadratic).
    steps: list[list[str]] = field(default_factory=list)


def _clean(text: str) -> str:
    text = " ".join(_EMPHASIS.sub("", text).split())
    return text[:MAX_STEP_CHARS]


def _item(line: str, open_list: _List | None) -> tuple[str, int, str] | None:
    """Classify a line as a list item: (kind, index, text), or None."""
    m = _NUMBERED.match(line)
    if m:
        return "number", int(m.group(1)), m.group(2)
    m = _LETTERED.match(line)
    if m:
        index = ord(m.group(1).lower()) - ord("a") + 1
        # "I." or "A." opens a lettered list only as its first item (a, b, c ...)
        continues = open_list is not None and open_list.kind == "letter"
        if index == 1 or continues:
            return "letter", index, m.group(2)
    m = _BULLET.match(line)
    if m:
        return "bullet", 0, m.group(1)
    return None


def _list_enumerations(text: str) -> list[list[str]]:
    found: list[list[str]] = []
    current: _List | None = None
    blank = False

    def close() -> None:
        nonlocal current
        if current is not None and len(current.steps) >= 2:
            found.append([_clean(" ".join(s)) for s in current.steps])
        current = None

    for line in text.splitlines():
        if not line.strip():
            blank = True
            continue
        item = _item(line, current)
        if item is not None:
            kind, index, body = item
            follows = (
                current is not None
                and current.kind == kind
                and (kind == "bullet" or index == current.last + 1)
            )
            if follows and not (blank and kind == "bullet"):
                assert current is not None
                current.steps.append([body])
                current.last = index
            elif kind == "bullet" or index == 1:
                close()
                current = _List(kind, index, [[body]])
            else:  # "7." out of sequence: not a list item
                close()
        elif current is not None and line[:1].isspace() and not blank:
            current.steps[-1].append(line.strip())  # an indented continuation
        else:
            close()
        blank = False
        if current is not None and len(current.steps) > MAX_STEPS:
            current.steps = current.steps[:MAX_STEPS]
    close()
    return found


def _inline_enumerations(text: str) -> list[list[str]]:
    """Numbered steps inside a paragraph: "1. Do this. 2. Do that."."""
    found = []
    for paragraph in re.split(r"\n\s*\n", text):
        flat = " ".join(paragraph.split())
        marks = list(_INLINE.finditer(flat))
        # Keep the marks that count 1, 2, 3 ... from the first "1".
        run: list[re.Match[str]] = []
        for m in marks:
            if int(m.group(1)) == len(run) + 1:
                run.append(m)
        # Two numbered lines or more are a list the line reader read; one line that starts
        # with "1." and goes on "2. ... 3. ..." is an inline list all the same.
        if len(run) < 2 or sum(1 for line in paragraph.splitlines() if _NUMBERED.match(line)) > 1:
            continue
        steps = [flat[a.end() : b.start()] for a, b in itertools.pairwise(run)]
        steps.append(flat[run[-1].end() :])
        found.append([_clean(s) for s in steps[:MAX_STEPS]])
    return found


def _sequence_enumerations(text: str) -> list[list[str]]:
    """Sentences led by First / Then / Next / Finally ..., starting with "First"."""
    found = []
    for paragraph in re.split(r"\n\s*\n", text):
        run: list[str] = []
        for sentence in _SENTENCE.split(" ".join(paragraph.split())):
            m = _SEQUENCE.match(sentence)
            if m and (run or m.group(1).lower() in _STARTS):
                run.append(sentence[m.end() :])
            elif run:
                if len(run) >= 2:
                    found.append([_clean(s) for s in run[:MAX_STEPS]])
                run = []
        if len(run) >= 2:
            found.append([_clean(s) for s in run[:MAX_STEPS]])
    return found


def enumerations(text: str | None) -> list[list[str]]:
    """Return the text's enumerations (lists of two steps or more), in order of kind.

    List lines first, then inline numbered lists, then "First … Then …" sequences.
    """
    if not text:
        return []
    out = _list_enumerations(text) + _inline_enumerations(text) + _sequence_enumerations(text)
    return [[s for s in e if s] for e in out if sum(1 for s in e if s) >= 2]
