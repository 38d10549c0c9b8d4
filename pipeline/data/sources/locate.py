"""Finding a reader's file inside an extracted artifact, and refusing one that yields nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pipeline.errors import PipelineError

Row = dict[str, Any]


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
