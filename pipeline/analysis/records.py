"""Checking a JSON record read from another stage's output: every key present with its type.

The report's inputs are files that other stages (or a person) wrote; a malformed one fails
here with one line naming the file and the dotted key, instead of a pandas traceback three
tables later.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pipeline.errors import PipelineError

NUMBER = (int, float)
OPTIONAL_NUMBER = (int, float, type(None))
OPTIONAL_INT = (int, type(None))
OPTIONAL_STR = (str, type(None))


def validated(
    record: Any, fields: Mapping[str, Any], path: str | Path, prefix: str = "", choices: Mapping[str, Sequence[str]] | None = None
) -> dict[str, Any]:
    """Check that ``record`` is an object with every key of ``fields`` of its type, and
    that each key of ``choices`` holds one of its allowed values.

    ``fields`` maps a key to a type or tuple of types (bool never passes for a number).
    The error names the file and the dotted key, e.g. ``scores.json: missing key
    'grid[2].test'``.
    """
    if not isinstance(record, dict):
        raise PipelineError(f"{path}: {prefix.rstrip('.') or 'the top level'} should be a JSON object")
    for key, kind in fields.items():
        where = f"{prefix}{key}"
        if key not in record:
            raise PipelineError(f"{path}: missing key {where!r}")
        value = record[key]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            names = " or ".join("null" if k is type(None) else k.__name__ for k in kinds)
            raise PipelineError(f"{path}: key {where!r} should be {names}, got {value!r:.60}")
    for key, allowed in (choices or {}).items():
        if record[key] not in allowed:
            raise PipelineError(f"{path}: key {prefix + key!r} should be one of {', '.join(map(repr, allowed))}, got {record[key]!r:.60}")
    return record
