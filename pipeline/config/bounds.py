"""The ranges the config's numbers take, and what its lists must hold, as part of their types.

``Annotated[int, Bounds(low=1)]`` is an int that must be at least 1;
``Annotated[tuple[str, ...], NON_EMPTY]`` a list of at least one name, none twice.
:mod:`pipeline.strict` refuses a value outside its range (and any number that is not finite)
where the config sets it, naming the key and the value, and :mod:`pipeline.schema` writes the
range into config/schema.json. The aliases below spell the ranges the config uses.
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
        """Whether ``value`` lies in the range."""
        above = self.low is None or (value > self.low if self.low_open else value >= self.low)
        below = self.high is None or (value < self.high if self.high_open else value <= self.high)
        return above and below

    def violation(self, value: float) -> str | None:
        """What is wrong with ``value`` ("must be at least 1"); None when it is in range."""
        if self.admits(value):
            return None
        if self.high is not None and self.high >= INT_MAX and value > self.high:
            return f"must be at most {number(self.high)}"
        return f"must be {self.describe()}"

    def describe(self) -> str:
        """The range, in words; a bound that only guards against overflow (INT_MAX) goes unsaid."""
        if self.high is None or self.high >= INT_MAX:
            return f"{'above' if self.low_open else 'at least'} {number(self.low)}"
        left, right = "(" if self.low_open else "[", ")" if self.high_open else "]"
        return f"in {left}{number(self.low)}, {number(self.high)}{right}"


def number(value: float) -> str:
    """A bound as people write it: 2147483647, not 2.14748e+09; 0.001, 1e-08."""
    return str(int(value)) if float(value).is_integer() and abs(value) < 2**63 else f"{value:g}"


@dataclasses.dataclass(frozen=True)
class Items:
    """What a list must hold beyond its items' types: at least one item (``non_empty``) and,
    with ``distinct``, no item twice (a task, seed, size or learning rate listed twice would
    run twice and count twice)."""

    non_empty: bool = False
    distinct: bool = True


NON_EMPTY = Items(non_empty=True)  # at least one, none twice
DISTINCT = Items()  # none twice, perhaps none at all


# The ranges the config's numbers take. Integers stay below 2**31 (a C int; seeds plus their
# offsets then fit every generator the harness seeds), so no value fails late in a job.
INT_MAX = 2**31 - 1
Count = Annotated[int, Bounds(low=1, high=INT_MAX)]  # sizes, steps, batch sizes, examples: at least one
# Tokens of one sequence: the model's rotary tables and attention are sized by it, so 2**31 would
# pass the plan and die allocating in a job. 131,072 is Llama 3.1's context (the study's is 2,048).
MAX_SEQUENCE_TOKENS = 131_072
SequenceTokens = Annotated[int, Bounds(low=1, high=MAX_SEQUENCE_TOKENS)]
NonNegativeInt = Annotated[int, Bounds(low=0, high=INT_MAX)]  # seeds, warmup steps, offsets
# Optimizer steps of a pretraining run or budget: the study's longest is 42,000; ten million steps
# of its 2.36M tokens would be 24 trillion tokens, beyond any run the docs plan.
MAX_STEPS = 10_000_000
Steps = Annotated[int, Bounds(low=1, high=MAX_STEPS)]
# A backbone's dimensions: far beyond the 1B's (28 layers, 1,728 wide, FFN 5,120, 18 heads) and any
# open model's, small enough that a typo (10^5 layers x 10^6 wide) stops the plan, not a job's allocation.
Layers = Annotated[int, Bounds(low=1, high=1024)]
Width = Annotated[int, Bounds(low=1, high=65_536)]
Heads = Annotated[int, Bounds(low=1, high=1024)]
FeedForward = Annotated[int, Bounds(low=1, high=262_144)]
Positive = Annotated[float, Bounds(low=0, low_open=True)]  # epsilons, norms, regularisation
LearningRate = Annotated[float, Bounds(low=0, high=1, low_open=True)]  # AdamW's: above 1 every run diverges
NonNegative = Annotated[float, Bounds(low=0)]  # weight decay, regularisation floors
Fraction = Annotated[float, Bounds(low=0, high=1)]  # shares, closed
ProperFraction = Annotated[float, Bounds(low=0, high=1, high_open=True)]  # shares below one: warmup, split fractions, AdamW betas
OpenFraction = Annotated[float, Bounds(low=0, high=1, low_open=True, high_open=True)]  # shares strictly between 0 and 1
