"""Bounds on a zip's members before any is inflated: one zip-bomb policy for every reader.

A member is inflated in memory (and a document then parsed, several times its size again),
so the declared sizes are checked first: their total against a cap, and each large member's
compression ratio (deflated text shrinks 5-20 times; 1000:1 is a bomb).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalnb.lab.errors import InputError

if TYPE_CHECKING:
    import zipfile
    from collections.abc import Iterable

__all__ = ["MAX_RATIO", "check_members", "read_member"]

MAX_RATIO = 200
_RATIO_FROM = 1 << 20  # tiny members may compress absurdly well; they cannot hurt


def check_members(
    infos: Iterable[zipfile.ZipInfo], source: str, *, max_total: int, total_hint: str
) -> None:
    """Raise :class:`~evalnb.InputError` naming ``source`` if the members inflate too far."""
    total = 0
    for info in infos:
        total += info.file_size
        ratio = info.file_size / max(info.compress_size, 1)
        if info.file_size > _RATIO_FROM and ratio > MAX_RATIO:
            raise InputError(
                source,
                None,
                info.filename,
                f"a compression ratio under {MAX_RATIO}:1",
                f"{ratio:,.0f}:1 ({info.file_size:,} bytes unzipped)",
                "This looks like a zip bomb; it was not inflated",
            )
    if total > max_total:
        raise InputError(
            source,
            None,
            None,
            f"at most {max_total:,} bytes unzipped",
            f"{total:,} bytes",
            total_hint,
        )


def read_member(zf: zipfile.ZipFile, member: str, source: str) -> bytes:
    """Inflate ``member`` whole, stopping as soon as it passes its declared size.

    :func:`check_members` bounds the sizes the zip declares; a member can declare 100 bytes
    and inflate to gigabytes (its CRC fails only at the end). Read a chunk at a time, no
    byte past the declared size is kept.
    """
    info = zf.getinfo(member)
    chunks, total = [], 0
    with zf.open(info) as stream:
        while chunk := stream.read(1 << 20):
            total += len(chunk)
            if total > info.file_size:
                raise InputError(
                    source,
                    None,
                    member,
                    f"a member that inflates to the {info.file_size:,} bytes it declares",
                    f"more than {info.file_size:,} bytes",
                    "The zip is damaged or hostile; it was not inflated further",
                )
            chunks.append(chunk)
    return b"".join(chunks)
