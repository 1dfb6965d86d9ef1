"""Writing a file whole or not at all: a temporary file in the same folder, then a rename.

Every file evalnb writes for a user (reports, exports, archives, guardrail configs, CLI
outputs, a new lab store) goes through here, so a crash, a kill or a full disk leaves the
previous file as it was and no half-written file beside it. A temporary file left by a
process killed mid-write (nothing can remove it then) is removed by the next write of the
same file.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

from evalnb.lab.bounds import read_limited
from evalnb.lab.errors import InputError

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["atomic_path", "read_json", "sweep_temporaries", "write_atomic"]

# The permissions an ordinary open() would give; read once, because os.umask can only be
# read by setting it.
_UMASK = os.umask(0)
os.umask(_UMASK)


@contextlib.contextmanager
def atomic_path(target: str | Path) -> Iterator[Path]:
    """Yield a fresh path beside ``target``; when the block succeeds, rename it to ``target``.

    The yielded path does not exist yet (a DuckDB store must be created by DuckDB). On any
    error the temporary file (and a DuckDB ``.wal`` beside it) is removed and ``target``
    is left as it was; a full disk is reported as such, naming ``target``.
    """
    final = Path(target)
    _sweep(final)
    tmp = final.with_name(f".{final.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        yield tmp
        if not tmp.exists():
            msg = f"nothing was written to the temporary file for {final}"
            raise FileNotFoundError(msg)
        tmp.chmod(0o666 & ~_UMASK)
        tmp.replace(final)  # atomic on one file system: readers see the old or the new file
    except OSError as exc:
        if exc.errno == errno.ENOSPC:
            msg = f"no space left on the device writing {final}; free some space and retry (the previous file is unchanged)"
            raise OSError(errno.ENOSPC, msg) from exc
        raise
    finally:
        for leftover in (tmp, tmp.with_name(tmp.name + ".wal")):
            leftover.unlink(missing_ok=True)


def _sweep(final: Path) -> None:
    """Remove temporary files that writers of ``final`` killed mid-write left behind."""
    sweep_temporaries(final.parent, final.name)


def sweep_temporaries(folder: Path, names: str) -> None:
    """Remove the temporary files :func:`atomic_path` left in ``folder`` for targets ``names``.

    ``names`` is a glob of the targets' names (``"*.vec"`` for all of a folder's parts). A
    temporary file names its writer's process id; one whose process is gone can only be
    debris of a writer killed mid-write. A live process's file (another writer at work) is
    never touched.
    """
    for leftover in folder.glob(f".{names}.*.tmp*"):
        pid = leftover.name.rsplit(".tmp", 1)[0].rsplit(".", 2)[-2]
        if pid.isdigit() and not _alive(int(pid)):
            leftover.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def write_atomic(target: str | Path, data: str | bytes) -> Path:
    """Write ``data`` (text as UTF-8) to ``target`` whole, flushed to disk, or not at all."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    with atomic_path(target) as tmp, tmp.open("xb") as out:
        out.write(payload)
        out.flush()
        os.fsync(out.fileno())
    return Path(target)


def read_json(path: str | Path, expected: str, *, max_bytes: int = 64 * 2**20) -> object:
    """Parse the small JSON file at ``path``; anything wrong is an ``InputError`` naming it.

    A regular file of at most ``max_bytes`` (a device or a FIFO is refused, not read), UTF-8,
    well formed, nested less than Python's recursion limit, integers Python can hold.
    """
    where = str(path)
    data = read_limited(Path(path), max_bytes, hint=f"{expected} is small; is this the right file?")
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise InputError(
            where, f"byte {exc.start}", None, f"{expected} in UTF-8", exc.reason
        ) from None
    except json.JSONDecodeError as exc:
        raise InputError(where, f"line {exc.lineno}", None, expected, exc.msg) from None
    except RecursionError:
        raise InputError(where, None, None, f"{expected} nested < 1000 levels", "deeper") from None
    except ValueError as exc:  # an integer of more than 4,300 digits
        raise InputError(where, None, None, expected, str(exc)[:120]) from None
