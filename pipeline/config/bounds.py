"""The ranges the config's numbers take, as part of their types.

``Annotated[int, Bounds(low=1)]`` is an int that must be at least 1; :mod:`pipeline.strict`
refuses a value outside its range where the config sets it, naming the key and the value,
and :mod:`pipeline.schema` writes the range into config/schema.json. The aliases below
spell the ranges the config uses.
"""

from __future__ import annotations

import dataclasses
from typing import Annotated


@dataclasses.dataclass(frozen=True)
class Bounds:
    """The range a number must lie in: ``low`` / ``high`` inclusive unless ``*_open``."""

    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False

    def admits(self, value: float) -> bool:
        above = self.low is None or (value > self.low if self.low_open else value >= self.low)
        below = self.high is None or (value < self.high if self.high_open else value <= self.high)
        return above and below

    def describe(self) -> str:
        if self.high is None:
            return f"{'above' if self.low_open else 'at least'} {self.low:g}"
        left, right = "(" if self.low_open else "[", ")" if self.high_open else "]"
        return f"in {left}{self.low:g}, {self.high:g}{right}"


# The ranges the config's numbers take.
Count = Annotated[int, Bounds(low=1)]  # sizes, steps, batch sizes, examples: at least one
NonNegativeInt = Annotated[int, Bounds(low=0)]  # seeds, warmup steps, offsets
Positive = Annotated[float, Bounds(low=0, low_open=True)]  # learning rates, epsilons, norms
NonNegative = Annotated[float, Bounds(low=0)]  # weight decay, regularisation floors
Fraction = Annotated[float, Bounds(low=0, high=1)]  # shares, closed
ProperFraction = Annotated[float, Bounds(low=0, high=1, high_open=True)]  # shares below one: warmup, split fractions, AdamW betas
OpenFraction = Annotated[float, Bounds(low=0, high=1, low_open=True, high_open=True)]  # shares strictly between 0 and 1
