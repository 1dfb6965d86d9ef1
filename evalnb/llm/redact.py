"""Credentials out of everything evalnb keeps: errors, scores, reports, logs, the cache.

A host's error body may echo the key it refused (``401: invalid key sk-...``), a base URL
may carry ``user:KEY@``, and a query string ``?key=...``. Errors are redacted where they
are made (so scores, reports and logs only ever see the redacted text) and URLs are stored
in their public form.
"""

from __future__ import annotations

import base64
import json
import re
from urllib.parse import parse_qsl, quote, quote_plus, urlencode, urlsplit, urlunsplit

__all__ = ["MASK", "SECRET_PARAMS", "Redactor", "public_url", "url_secrets"]

MASK = "***"
_MIN_SECRET = 6  # shorter "keys" ("none", "x") would mask ordinary words

# Query parameters that hold credentials in the APIs we talk to (Azure SAS, Google, tokens).
SECRET_PARAMS = {
    "key",
    "api-key",
    "api_key",
    "apikey",
    "token",
    "access_token",
    "sig",
    "signature",
    "code",
    "password",
    "secret",
}
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]{0,20}://)[^/\s@?#]{1,512}@")
_AUTH = re.compile(r"(?i)\b(bearer|basic)(\s+)[A-Za-z0-9._~+/=-]{6,}")
_PARAM = re.compile(
    r"(?i)([?&](?:" + "|".join(map(re.escape, sorted(SECRET_PARAMS))) + r")=)[^&\s#\"']+"
)
# Key shapes of common providers (OpenAI/Anthropic sk-…, Hugging Face hf_…, GitHub, Google).
_KEY_SHAPES = re.compile(
    r"\b(?:sk-[A-Za-z0-9_-]{8,}|hf_[A-Za-z0-9]{8,}|gh[pousr]_[A-Za-z0-9]{16,}|AIza[0-9A-Za-z_-]{20,})"
)


def public_url(url: str) -> str:
    """Return ``url`` without credentials: user info dropped, secret query values masked.

    Examples
    --------
    >>> public_url("https://me:sk-abc123@llm.example.com/v1?key=s3cret&v=2")
    'https://***@llm.example.com/v1?key=***&v=2'
    >>> public_url("http://localhost:8000/v1")
    'http://localhost:8000/v1'
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return Redactor(()).redact(url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{MASK}@{netloc.rsplit('@', 1)[1]}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(k.lower() in SECRET_PARAMS for k, _ in pairs):
            masked = [(k, MASK if k.lower() in SECRET_PARAMS else v) for k, v in pairs]
            query = urlencode(masked, safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


class Redactor:
    """Masks known secrets and credential-shaped text in messages.

    Parameters
    ----------
    secrets
        Values to mask wherever they occur (the API key, the URL's password). Values shorter
        than 6 characters are ignored.
    """

    def __init__(self, secrets: tuple[str | None, ...]) -> None:
        known = {s for s in secrets if s and len(s) >= _MIN_SECRET}
        # A host may echo a key encoded: URL-encoded, JSON-escaped or in base64 (at any of
        # the three byte alignments inside a longer base64 text). Each form is masked too.
        forms = {f for s in known for f in _encodings(s) if len(f) >= _MIN_SECRET}
        self.secrets = tuple(sorted(forms, key=len, reverse=True))

    def redact(self, text: str) -> str:
        """Return ``text`` with every secret and credential-shaped token masked.

        Examples
        --------
        >>> Redactor(("k-123456",)).redact("HTTP 401: bad key k-123456 (Bearer k-123456)")
        'HTTP 401: bad key *** (Bearer ***)'
        """
        for secret in self.secrets:
            text = text.replace(secret, MASK)
        text = _USERINFO.sub(rf"\1{MASK}@", text)
        text = _AUTH.sub(rf"\1\2{MASK}", text)
        text = _PARAM.sub(rf"\1{MASK}", text)
        return _KEY_SHAPES.sub(MASK, text)


def _encodings(secret: str) -> set[str]:
    """Return the forms in which ``secret`` may be echoed back."""
    raw = secret.encode("utf-8")
    forms = {
        secret,
        quote(secret, safe=""),
        quote_plus(secret),
        json.dumps(secret)[1:-1],
        json.dumps(secret, ensure_ascii=False)[1:-1],
        json.dumps(secret)[1:-1].replace("/", "\\/"),
    }
    for lead in range(3):
        # Base64 of the secret after `lead` other bytes: the characters that depend on the
        # secret alone are those from the first full group after the lead to the last
        # full group of the secret.
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            text = encode(b"\0" * lead + raw).decode("ascii")
            start = 0 if lead == 0 else 4
            end = ((lead + len(raw)) // 3) * 4
            core = text[start:end]
            if core:
                forms.add(core)
    return forms


def url_secrets(url: str) -> tuple[str | None, ...]:
    """Return the credentials a URL carries (password, user name, secret query values)."""
    try:
        parts = urlsplit(url)
        pairs = parse_qsl(parts.query, keep_blank_values=True)
    except ValueError:
        return ()
    values = tuple(v for k, v in pairs if k.lower() in SECRET_PARAMS)
    return (parts.password, parts.username, *values)
