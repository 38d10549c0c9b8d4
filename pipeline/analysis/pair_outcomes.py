"""What a model's two scores on a minimal pair count as: the one rule every stage uses.

A pair is won (1) when the acceptable sentence scores strictly higher, half won (0.5) on a
tie, lost (0) otherwise, so a scorer that cannot tell the sentences apart gets 50%, never
more. Numpy only: the report reads it without loading a model.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def pair_outcomes(good: Sequence[float], bad: Sequence[float]) -> np.ndarray:
    """(N,) of 1.0, 0.5 or 0.0 per pair."""
    good, bad = np.asarray(good, dtype=float), np.asarray(bad, dtype=float)
    return np.where(good > bad, 1.0, np.where(good == bad, 0.5, 0.0))


def win_rate(good: Sequence[float], bad: Sequence[float]) -> float:
    return float(pair_outcomes(good, bad).mean())
