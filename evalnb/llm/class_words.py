"""Where a class word in a judge's reply is its verdict, and where it is not.

The words of a reply are read as a sentence is: "No doubt, the response is correct" names
no verdict, "I would not say yes" negates the one it names, "probably yes" hedges it, and a
number is a class only when it is one exactly ("-1" and "0.5" are no "1" or "0").
:func:`class_word_verdict` is the one rule; :mod:`evalnb.llm.reader` applies it to every
reply and JSON field it reads.
"""

from __future__ import annotations

import re

__all__ = ["class_word_verdict"]

# Words, whole numbers (a sign, decimals, fractions and units stay part of the number, so
# "-1" and "0.5" are never the class "1" or "0") and the punctuation that ends a mention.
_TOKEN = re.compile(
    r"[-+]?\d+(?:[.,/:]\d+)*(?:%|[a-z]+)?|[a-z]+(?:'[a-z]+)?|[.;!?\n]|[,:()\-\u2013\u2014\"]"
)
_SENTENCE_END = frozenset({".", ";", "!", "?", "\n"})
_STANDALONE_AFTER = frozenset(
    {".", ";", "!", "?", "\n", ",", ":", "(", ")", "-", "\u2013", "\u2014", '"'}
)
# After yes/no, a pronoun starts the sentence that restates it ("No it is not", "Yes it does").
_RESTATING = frozenset({"it", "this", "that", "i", "he", "she", "they", "there", "we"})
_NEGATIONS = frozenset(
    {"not", "no", "never", "neither", "nor", "cannot", "nothing", "hardly", "without"}
)
# "no doubt" and "no question" affirm: they negate nothing that follows.
_AFFIRMING_NO = frozenset({"doubt", "doubts", "question", "wonder"})
_HEDGES = frozenset(
    {
        "maybe",
        "perhaps",
        "probably",
        "possibly",
        "likely",
        "unlikely",
        "might",
        "may",
        "unsure",
        "uncertain",
        "arguably",
        "partially",
        "partly",
        "somewhat",
        "depends",
        "seemingly",
        "presumably",
    }
)


def _class_token(token: str) -> str:
    """Return a number token as the class word it equals exactly (``1.0`` → ``1``)."""
    if not (token[:1].isdigit() or token[:1] in "+-"):
        return token
    try:
        value = float(token)
    except ValueError:  # 1,000 / 1/2 / 50% / 3rd: a number, but no class
        return token
    return str(int(value)) if value.is_integer() and value >= 0 else token


def _negation_at(tokens: list[str], j: int) -> bool:
    token = tokens[j]
    if token.endswith("n't"):
        return True
    if token not in _NEGATIONS:
        return False
    following = tokens[j + 1] if j + 1 < len(tokens) else ""
    # "No doubt" affirms; a standalone "No," is the verdict itself, not a negation of the rest.
    return not (token == "no" and (following in _AFFIRMING_NO or following in _STANDALONE_AFTER))


def _sentence(tokens: list[str], i: int) -> tuple[int, int]:
    start = i
    while start > 0 and tokens[start - 1] not in _SENTENCE_END:
        start -= 1
    end = i
    while end + 1 < len(tokens) and tokens[end + 1] not in _SENTENCE_END:
        end += 1
    return start, end


def _mention_problem(tokens: list[str], i: int) -> str | None:
    """Why the class word at ``i`` cannot be read as the verdict, or None."""
    start, end = _sentence(tokens, i)
    for j in range(start, i):
        if _negation_at(tokens, j):
            return f"a class word negated: {' '.join(tokens[j : i + 1])!r}"
    hedges = sorted({t for t in tokens[start : end + 1] if t in _HEDGES})
    if hedges:
        return f"a hedged verdict ({hedges[0]!r}): it could mean either class"
    return None


def class_word_verdict(
    text: str, words: dict[str, tuple[str, bool]], salvages: list[str]
) -> tuple[str, bool] | str:
    """Read the one class the words name, where no reading of the sentence names another.

    A class word is a *mention* of the verdict only where it stands alone (followed by the
    end, punctuation or, after yes/no, a pronoun that restates it): "No doubt, it is correct"
    and "no sexist language" mention no verdict. Every class word, mention or not, must name
    the same class ("Yes and no" names two), and a mention may be neither negated earlier in
    its sentence ("I would not say yes") nor hedged ("probably yes").
    """
    tokens = _TOKEN.findall(text.lower().replace("\u2019", "'"))
    classed = [_class_token(t) for t in tokens]
    word_positions = [i for i, t in enumerate(tokens) if t[-1:].isalnum() or t[-1:] == "%"]
    if not word_positions:
        return "no words"
    hits = [
        (i, words[t])
        for i, t in enumerate(classed)
        if t in words and not (t == "no" and tokens[i + 1 : i + 2] in (["doubt"], ["question"]))
    ]
    if not hits:
        numbers = [t for t in tokens if t[-1:].isalnum() and not t[:1].isalpha()]
        if numbers:
            return f"{numbers[0]!r} is a number but not exactly one of the classes"
        return "no class word"
    kinds = {h[1][0] for h in hits}
    if len(kinds) > 1:
        named = sorted({classed[i] for i, _ in hits})
        return f"could mean two things: {named}"
    mentions = [
        (i, found)
        for i, found in hits
        if i + 1 == len(tokens)
        or tokens[i + 1] in _STANDALONE_AFTER
        or (classed[i] in {"yes", "no"} and tokens[i + 1] in _RESTATING)
    ]
    if not mentions:
        i = hits[0][0]
        return f"a class word used as another word: {' '.join(tokens[i : i + 2])!r}"
    for i, _ in mentions:
        problem = _mention_problem(tokens, i)
        if problem is not None:
            return problem
    if len(word_positions) == 1:
        return mentions[0][1]
    if mentions[0][0] == word_positions[0]:
        salvages.append("first_word")
        return mentions[0][1]
    if mentions[-1][0] != word_positions[-1]:
        return "a class word inside a sentence, not its first or last word"
    salvages.append("last_word")
    return mentions[-1][1]
