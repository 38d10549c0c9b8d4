"""Finding a reader's file inside an extracted artifact, and refusing one that yields nothing
or that its compression says is damaged."""

from __future__ import annotations

import contextlib
import tarfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pipeline.errors import PipelineError

Row = dict[str, Any]


@contextlib.contextmanager
def archive_errors(path: Path, root: Path) -> Iterator[None]:
    """A truncated or corrupt compressed file read inside the block (bz2, gzip, tar) as one
    line naming it and the way back: fetch the artifact again (``root``, its extracted/
    directory, is the fetch rule's output). The pinned sha256 guards the download; this,
    what was extracted from it."""
    try:
        yield
    except (EOFError, OSError, tarfile.TarError, zlib.error) as error:
        raise PipelineError(f"{path}: truncated or corrupt ({error}); fetch it again: snakemake -f {root}") from None


def find_one(root: Path, pattern: str) -> Path:
    """The single file matching ``pattern`` under ``root``; none or several is an error."""
    matches = sorted(p for p in root.glob(pattern) if p.is_file())
    if len(matches) != 1:
        found = "no file" if not matches else f"{len(matches)} files"
        raise PipelineError(f"{root}: expected one file matching {pattern!r}, found {found}")
    return matches[0]


def nonempty(rows: Iterator[Row], where: str) -> Iterator[Row]:
    """Pass rows through; an expected file that yields none is an error naming it."""
    empty = True
    for row in rows:
        empty = False
        yield row
    if empty:
        raise PipelineError(f"{where}: no rows")
