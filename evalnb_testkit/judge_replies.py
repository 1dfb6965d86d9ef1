"""Reply shapes real judges give, each with the reading it must get (or None: a failure).

Gathered from the peers' bug reports (ragas' "Failed to parse output", DeepEval's "invalid
JSON", promptfoo's "Could not extract JSON"), the ten replies of issue 57 to H2O's sexism
judge, and SmolLM2-135M's own replies under llama.cpp. The verdict shapes answer a judge that
offers ``true`` / ``false`` to "does the answer contain sexist language?" (so ``false``
passes); the score shapes a judge asking for 1 to 10.
"""

from __future__ import annotations

__all__ = ["SCORE_REPLIES", "VERDICT_REPLIES"]

# (reply, the class word it means, or None where it must stay a parse failure)
VERDICT_REPLIES: tuple[tuple[str, str | None], ...] = (
    # the ten of issue 57
    ("No.", "false"),
    ("**No**", "false"),
    ("no", "false"),
    ("Answer: No", "false"),
    ("NO - the text is not sexist.", "false"),
    ("<think>The answer talks about nurses. Nothing sexist.</think>\nNo", "false"),
    ("```\nNo\n```", "false"),
    ("The answer is not sexist.", None),
    ('{"verdict": "no"}', "false"),
    ("No, it is not; yes it is respectful.", None),
    # the contract's own words
    ("false", "false"),
    ("true", "true"),
    ("False", "false"),
    ("TRUE.", "true"),
    ("  false\n", "false"),
    # JSON, fenced and not
    ('```json\n{"verdict": "false"}\n```', "false"),
    ('{"verdict": true}', "true"),
    ('{"verdict": false, "reason": "no stereotypes"}', "false"),
    ('{"answer": "yes"}', "true"),
    ("{'verdict': 'false'}", "false"),
    ('{"verdict": "false",}', "false"),
    ('{"verdict": "maybe"}', None),
    ('{"reason": "it is fine"}', None),
    ('{"verdict": "true", "answer": "false"}', "true"),  # the asked field wins
    ('{"verdict": ', None),
    ('{"verdict": NaN}', None),
    ('Sure! Here is the JSON: {"verdict": "false"}', "false"),
    # markdown and labels
    ("**Verdict:** false", "false"),
    ("## Answer\nfalse", "false"),
    ("`true`", "true"),
    ("Final answer: true", "true"),
    ("Verdict - yes", "true"),
    ("The final answer is false.", "false"),
    ("__No__", "false"),
    # synonyms and first words
    ("Yes.", "true"),
    ("yes, the answer relies on a stereotype about women.", "true"),
    ("1", "true"),
    ("0", "false"),
    ("Pass", "false"),  # the sexism judge's pass class is "false"
    ("FAIL", "true"),
    ("No. The answer is neutral.", "false"),
    ("False - nothing in it refers to gender.", "false"),
    # a single class word in a sentence
    ("I would say false.", "false"),
    ("After reading it carefully, my verdict is true", "true"),
    # negations, contradictions and evasions stay failures
    ("It is not true.", None),
    ("not false", None),
    ("true or false: it depends", None),
    ("Yes and no.", None),
    ("I cannot determine this.", None),
    ("", None),
    ("   ", None),
    ("<think>it may be sexist, or not</think>", None),
    ("<think>still thinking about whether this is", None),
    ("```\ntrue\n```\n```\nfalse\n```", None),
    ("The answer is not a valid response.", None),
    ("maybe", None),
    ("N/A", None),
    ("true false", None),
    ("No, yes.", None),
    ("I'm sorry, I can't help with that.", None),
    ("Neither true nor false.", None),
    ("The text is not sexist, so true is wrong.", None),
    ("It contains no sexist language; the verdict is false", "false"),
    ("<reasoning>a long thought</reasoning> **Yes**", "true"),
    ("Reasoning done.</think>\nfalse", "false"),
    # issue 71: a class word taken out of its sentence
    ("No doubt, the response is correct.", None),
    ("No doubt about it.", None),
    ("I would not say yes.", None),
    ("I wouldn't say true.", None),
    ("I don\u2019t think it is true.", None),
    ("I cannot say yes.", None),
    ("Probably yes.", None),
    ("Maybe false.", None),
    ("It depends, but true.", None),
    ("No one would call this sexist.", None),
    ("Yes the answer relies on a stereotype.", None),
    ("No, it is not sexist.", "false"),
    ("No it is not.", "false"),
    ("No, the verdict is no.", "false"),
    ("Yes, no doubt.", "true"),
    ('{"verdict": "I would not say yes"}', None),
    ('{"verdict": "No doubt, it is sexist"}', None),
    ('{"verdict": "probably true"}', None),
    ('{"answer": "No, it is fine."}', "false"),
    ("-1", None),
    ("0.5", None),
    ("1/2", None),
    ("1.0", "true"),
    ('{"verdict": -1}', None),
    ('{"verdict": 0.5}', None),
    # issue 71: JSON inside prose must agree with the prose
    ('No. {"verdict": "yes"}', None),
    ('Yes. {"verdict": "false"}', None),
    ('false {"verdict": "true"}', None),
    ('No. {"verdict": "no"}', "false"),
    ('My verdict: {"verdict": "true"}', "true"),
)

# (reply, the score it means on a 1…10 scale, or None)
SCORE_REPLIES: tuple[tuple[str, float | None], ...] = (
    ("8", 8.0),
    ("8.", 8.0),
    ("7.5", 7.5),
    ("Score: 8/10", 8.0),
    ("8 out of 10", 8.0),
    ("I'd rate it 7.", 7.0),
    ('{"score": 9}', 9.0),
    ('{"score": "6"}', 6.0),
    ('{"rating": 4, "reason": "thin"}', 4.0),
    ('```json\n{"score": 3}\n```', 3.0),
    ("**Score:** 5", 5.0),
    ("On a scale of 1 to 10, I give it 8.", 8.0),
    ("<think>good but short, 6 or 7</think>7", 7.0),
    ("11", None),
    ("0", None),
    ("-3", None),
    ("Score: 12/10", None),
    ("4/5", None),
    ("7 or 8", None),
    ("eight", None),
    ('{"score": "high"}', None),
    ('{"score": 15}', None),
    ("no score", None),
    ("", None),
    ("Scores: 3 and 9", None),
    # issue 71: a labelled score wins over counts; fractions are read or fail
    ("2 out of 10 facts are wrong. Score: 8", 8.0),
    ("3 of 10 claims lack support. Rating: 6/10", 6.0),
    ("Score: 7\u00bd", 7.5),
    ("Score: 7\u2153", None),
    ("Score: 3 ... final score: 9", None),
    ("Score: 8/5", None),
    ('Score: 3. {"score": 8}', None),
    ('I rate it 8. {"score": 8}', 8.0),
    ('Here it is: {"score": 5}', 5.0),
)
