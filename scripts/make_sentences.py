"""Write data/sentences/python-docstrings.txt: real English prose for the tests and benchmarks.

The text is the prose of the docstrings of a fixed list of Python standard-library modules
(technical documentation with names, numbers, quotes and abbreviations, as a lab's
references are), one paragraph per block: code examples, doctests, tables and field lists
are left out. Python's documentation is under the PSF License Agreement, which allows
copying and derivative works provided its notice is kept: the script copies Python's
LICENSE beside the text. ``bench/real_pairs.py`` reads the file; run this script only to
rebuild it (the text depends on the Python version, so it is committed, not made at run time):

    .venv/bin/python scripts/make_sentences.py
"""

from __future__ import annotations

import importlib
import inspect
import re
import shutil
import sys
import sysconfig
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

OUT = Path(__file__).resolve().parents[1] / "data" / "sentences"
MODULES = [
    "argparse",
    "asyncio",
    "base64",
    "bisect",
    "calendar",
    "collections",
    "concurrent.futures",
    "configparser",
    "contextlib",
    "csv",
    "dataclasses",
    "datetime",
    "decimal",
    "difflib",
    "email",
    "enum",
    "fractions",
    "functools",
    "gzip",
    "hashlib",
    "heapq",
    "http.client",
    "inspect",
    "io",
    "ipaddress",
    "itertools",
    "json",
    "logging",
    "mailbox",
    "math",
    "multiprocessing",
    "os",
    "pathlib",
    "pickle",
    "queue",
    "random",
    "re",
    "shutil",
    "socket",
    "sqlite3",
    "statistics",
    "string",
    "subprocess",
    "tarfile",
    "tempfile",
    "textwrap",
    "threading",
    "time",
    "typing",
    "unittest",
    "urllib.parse",
    "uuid",
    "warnings",
    "zipfile",
    "zoneinfo",
    "smtplib",
    "ftplib",
    "imaplib",
    "poplib",
    "locale",
    "gettext",
    "codecs",
    "struct",
    "array",
    "weakref",
    "copy",
    "pprint",
    "traceback",
    "sched",
    "selectors",
    "signal",
    "mmap",
    "optparse",
    "getopt",
    "shlex",
    "glob",
    "fnmatch",
    "filecmp",
    "netrc",
    "plistlib",
    "wave",
    "colorsys",
    "html.parser",
    "xml.dom.minidom",
    "tokenize",
    "ast",
    "dis",
    "pdb",
    "profile",
    "timeit",
    "trace",
    "doctest",
    "pydoc",
]
# A paragraph that ends like a field list or a code lead-in, or is mostly calls, is not prose.
_NOT_PROSE = re.compile(r"[=:]$")


def _docstrings(obj: object, seen: set[int], depth: int = 0) -> Iterator[str]:
    """The docstrings of a module, its public classes and functions, and their methods."""
    doc = inspect.getdoc(obj)
    if doc and id(obj) not in seen:
        seen.add(id(obj))
        yield doc
    if depth >= 2 or not hasattr(obj, "__dict__"):
        return
    home = getattr(obj, "__name__", "").split(".")[0]
    for name, member in sorted(vars(obj).items()):
        if name.startswith("_") or not (
            inspect.isclass(member)
            or inspect.isfunction(member)
            or inspect.ismethoddescriptor(member)
        ):
            continue
        if depth == 0 and not str(getattr(member, "__module__", "") or "").startswith(home):
            continue  # re-exported from another module: documented there
        yield from _docstrings(member, seen, depth + 1)


def paragraphs() -> list[str]:
    """The prose paragraphs of the modules' docstrings, each on one line, first seen first."""
    seen: set[int] = set()
    out: list[str] = []
    for name in MODULES:
        for doc in _docstrings(importlib.import_module(name), seen):
            for block in doc.split("\n\n"):
                lines = block.splitlines()
                if not lines or any(line.startswith((" ", "\t", ">>>", "...")) for line in lines):
                    continue  # code, a doctest or an indented list
                text = " ".join(line.strip() for line in lines)
                if len(text.split()) >= 6 and text.count("(") <= 6 and not _NOT_PROSE.search(text):
                    out.append(text)
    return list(dict.fromkeys(out))


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    text = "\n\n".join(paragraphs()) + "\n"
    (OUT / "python-docstrings.txt").write_text(text, encoding="utf-8")
    licence = Path(sysconfig.get_paths()["stdlib"]) / "LICENSE.txt"
    shutil.copyfile(licence, OUT / "LICENSE-Python.txt")
    print(
        f"wrote {OUT / 'python-docstrings.txt'} ({len(text):,} characters) from Python "
        f"{sys.version.split()[0]}, and Python's LICENSE"
    )


if __name__ == "__main__":
    main()
