"""Media: images, audio, video and documents in cases, answers and contexts.

``items.py`` turns bytes, ``data:`` URLs, local paths and remote URLs into content-addressed
items (the sha256 of the bytes is the id; what a file really is comes from its first bytes,
never from its name); ``table.py`` keeps them as the lab's ``media`` table; ``parts.py``
reads and writes the content parts of OpenAI chat messages and Inspect logs; ``policy.py``
says how an item is sent to a judge (resized by a stated rule that is part of the judge's
fingerprint).
"""
