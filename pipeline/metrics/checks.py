"""The input check every metric shares.

A metric gets one prediction per reference, in the same order. Unequal lengths mean the
caller paired the wrong lists (or dropped rows), and an empty split has no score at all, so
both are errors rather than a silent 0 or a division by zero.
"""

from __future__ import annotations

from collections.abc import Sequence


def check_pairs(metric: str, predictions: Sequence, references: Sequence) -> None:
    if len(predictions) != len(references) or not references:
        raise ValueError(f"{metric} needs equal, non-empty inputs (got {len(predictions)} and {len(references)})")
