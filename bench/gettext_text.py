"""Real sentences in many languages for the language benches: Debian's gettext catalogs.

Every program Debian installs with translations leaves its messages, translated by people,
under ``/usr/share/locale/<lang>/LC_MESSAGES/*.mo``; the English originals are the
catalogs' message ids. The benches read them from the machine they run on (nothing is
shipped): how many sentences a language has depends on what the machine installed, and the
bench prints the count. Messages with format placeholders (``%s``, ``{0}``) are dropped,
white space is normalised, each text is kept once.
"""

from __future__ import annotations

import gettext
import re
from pathlib import Path

__all__ = ["LOCALES", "sentences"]

LOCALES = {
    "zh": "zh_CN",
    "ja": "ja",
    "ko": "ko",
    "fr": "fr",
    "de": "de",
    "ru": "ru",
    "ar": "ar",
    "hi": "hi",
}
"""ISO 639-1 code → the locale folder its catalogs are under."""

_PLACEHOLDER = re.compile(r"%|\{|\}|\$\(|<[a-z]")
_ROOT = Path("/usr/share/locale")


def _catalogs(locale: str) -> list[dict[object, object]]:
    out = []
    for path in sorted((_ROOT / locale / "LC_MESSAGES").glob("*.mo")):
        try:
            with path.open("rb") as fh:
                out.append(dict(gettext.GNUTranslations(fh)._catalog))
        except (OSError, UnicodeDecodeError):  # a catalog this Python cannot read
            continue
    return out


def sentences(language: str, *, min_chars: int = 6) -> list[str]:
    """Return the distinct translated messages of ``language`` (``en``: the originals)."""
    seen: dict[str, None] = {}
    locale = "fr" if language == "en" else LOCALES[language]
    for catalog in _catalogs(locale):
        for key, value in catalog.items():
            if not isinstance(key, str) or not isinstance(value, str) or not key:
                continue
            text = key if language == "en" else value
            if language != "en" and value == key:
                continue  # left untranslated
            text = " ".join(text.split())
            if len(text) >= min_chars and not _PLACEHOLDER.search(text):
                seen.setdefault(text, None)
    return list(seen)
