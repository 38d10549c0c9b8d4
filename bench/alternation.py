"""The order side-by-side measurements run in: the conditions as given on even repeats, reversed on
odd ones (A B, B A, ...), so each goes first as often as the others and a drift in the machine's load
over the run falls on all of them alike. Every bench that compares conditions takes its turns here."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def in_turn(conditions: Sequence[T], repeat: int) -> Sequence[T]:
    """``conditions`` in the order repeat number ``repeat`` runs them."""
    return conditions if repeat % 2 == 0 else conditions[::-1]
