"""Seeded hash splits: where a row group (a BBC article, a corpus document) belongs.

A split decided by hashing a name, rather than by shuffling the rows, depends on nothing
but that name, the fractions and the seed. So every BBC task, with the same fractions and
seed, puts an article in the same split (an article is test in every task or in none, and
decontamination removes the same pretraining documents for all of them), and adding or
dropping other rows never moves a group.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

SplitOf = Callable[[str], str]  # a group -> "train", "validation" or "test"


def uniform(seed: int, name: str) -> float:
    """A seeded hash of ``name``, uniform on [0, 1)."""
    digest = hashlib.sha256(f"{seed}\0{name}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


@dataclass(frozen=True)
class GroupSplit:
    """``test_fraction`` of the groups for test, ``validation_fraction`` of the rest for validation."""

    test_fraction: float
    validation_fraction: float
    seed: int

    def __call__(self, group: str) -> str:
        u = uniform(self.seed, group)
        if u < self.test_fraction:
            return "test"
        if u < self.test_fraction + (1 - self.test_fraction) * self.validation_fraction:
            return "validation"
        return "train"
