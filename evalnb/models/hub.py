"""Whether the Hugging Face hub can be asked for a model, decided in seconds.

Offline, ``from_pretrained`` retries the hub for about 23 s before it gives up. A model that
is not in the local cache is only looked for on the hub after :func:`hub_blocker` found no
reason not to: ``HF_HUB_OFFLINE`` (or ``TRANSFORMERS_OFFLINE``) set, or the hub's endpoint
not answering one HTTP request within :data:`PROBE_SECONDS`. The request goes through
``urllib``, so the proxies of ``HTTPS_PROXY`` and friends are used as the hub client would.
"""

from __future__ import annotations

import contextlib
import os
import time
import urllib.error
import urllib.request
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["PROBE_SECONDS", "endpoint", "hub_blocker", "offline_advice", "quiet_loading"]

PROBE_SECONDS = 3.0
_REMEMBER_SECONDS = 60.0  # one probe serves the evaluators of one run
_probes: dict[str, tuple[float, str | None]] = {}


@contextlib.contextmanager
def quiet_loading() -> Iterator[None]:
    """Load models without transformers' progress bars ("Loading weights ... 103/103").

    A load from the local cache takes a fraction of a second; a bar for it in a notebook
    or the demo's summary is noise. Restored afterwards, so a user's own setting stands.
    """
    from transformers.utils import logging as hf_logging  # noqa: PLC0415 - heavy import

    shown = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if shown:
            hf_logging.enable_progress_bar()


def endpoint() -> str:
    """Return the hub's address (``HF_ENDPOINT``, as huggingface_hub reads it)."""
    return os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")


def _set(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() not in ("", "0", "false", "no", "off")


def _probe(url: str) -> str | None:
    request = urllib.request.Request(url, method="HEAD")
    try:
        with urllib.request.urlopen(request, timeout=PROBE_SECONDS):
            return None
    except urllib.error.HTTPError:
        return None  # it answered: the hub is there, whatever it thought of a HEAD on /
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        return f"the hub at {url} did not answer within {PROBE_SECONDS:g} s ({reason})"


def hub_blocker() -> str | None:
    """Why the hub cannot be asked now (``None``: it can). Probes at most once a minute."""
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        if _set(name):
            return f"{name} is set"
    url = endpoint()
    now = time.monotonic()
    seen = _probes.get(url)
    if seen is None or now - seen[0] > _REMEMBER_SECONDS:
        seen = (now, _probe(url))
        _probes[url] = seen
    return seen[1]


def offline_advice(name: str) -> str:
    """Say what to do when ``name`` is not cached and the hub cannot be reached."""
    return (
        f"Pass model='<local folder>' holding a copy of it (on a machine with hub access: "
        f"`hf download {name} --local-dir <folder>`), or point HF_HOME at a Hugging Face "
        "cache that has it."
    )
