"""The study's model selection: the grid value (an LR, a C) with the best mean validation score.

One definition serves the sweep, which runs its remaining seeds at the LR the selection
seeds chose, and the report, which recomputes every choice from scores.json: the two
cannot disagree.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable


def best_on_validation(points: Iterable[tuple[float, float]]) -> float:
    """The value of the (value, validation score) points with the highest mean score over
    its points; a tie goes to the smallest value."""
    scores: dict[float, list[float]] = defaultdict(list)
    for value, validation in points:
        scores[value].append(validation)
    if not scores:
        raise ValueError("no grid points to choose from")
    return max(sorted(scores), key=lambda value: statistics.fmean(scores[value]))
