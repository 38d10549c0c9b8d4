"""How the report writes a number: rounding, signs, intervals, counts and durations, decided
once for every table, figure and evidence sentence."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any


def text_or(value: Any, default: str) -> str:
    """A table's text field, or ``default`` where it is blank (an empty CSV field reads back as NaN)."""
    return value if isinstance(value, str) and value else default


# How many more digits a number that is not zero may take so that it does not read as zero.
MORE_DIGITS_NEAR_ZERO = 2


def number_text(value: float, digits: int = 1, signed: bool = False) -> str:
    """A rounded number with a typographic minus (and a plus when ``signed``). A number that rounds to
    zero takes up to two more digits, so that an interval's bound beside zero says on which side it
    lies: ``−0.03``, never ``−0.0`` beside a verdict that turns on that sign; one that is zero at those
    digits too (a spread of equal seeds, 1e-14 by float rounding) is written as zero."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    shown = digits
    while round(value, shown) == 0 and shown < digits + MORE_DIGITS_NEAR_ZERO:
        shown += 1
    if round(value, shown) == 0:
        value, shown = 0.0, digits
    text = f"{value:+.{shown}f}" if signed else f"{value:.{shown}f}"
    return text.replace("-", "−")


def interval_text(mean: float, low: float, high: float, signed: bool = False, digits: int = 1) -> str:
    """``+1.2 [−0.8, +3.2]``; a single seed has no interval and says so."""
    if math.isnan(mean):
        return "—"
    if math.isnan(low):
        return f"{number_text(mean, digits, signed)} (one seed, no CI)"
    return f"{number_text(mean, digits, signed)} [{number_text(low, digits, signed)}, {number_text(high, digits, signed)}]"


def plus_minus_text(mean: float, low: float, high: float, digits: int = 1) -> str:
    """``71.2 ± 1.3`` for a symmetric t-interval."""
    if math.isnan(mean):
        return "—"
    if math.isnan(low):
        return f"{number_text(mean, digits)} (1 seed)"
    return f"{number_text(mean, digits)} ± {number_text((high - low) / 2, digits)}"


def count_text(value: float) -> str:
    """1570000 -> ``1.6M``: parameter and token counts at a glance."""
    if math.isnan(value):
        return "—"
    for threshold, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= threshold:
            return f"{value / threshold:.3g}{suffix}"
    return f"{value:g}"


def percent_text(fraction: float) -> str:
    """0.25 -> ``25%``."""
    return "—" if math.isnan(fraction) else f"{100 * fraction:g}%"


def yardstick_text(run: Mapping[str, Any]) -> str:
    """The held-out yardstick of a pretraining row, or why it was not measured."""
    name, value = run["heldout_metric_name"].replace("_", " "), run["heldout_metric_value"]
    if math.isnan(value):
        return f"{name}: not measured"
    return f"{name} {number_text(value)}"


def steps_text(run: Mapping[str, Any]) -> str:
    """The steps a run trained: ``480``, or ``120–480`` for a second stage."""
    return f"{run['first_step']:,}–{run['trained_steps']:,}" if run["first_step"] else f"{run['trained_steps']:,}"


def duration_text(seconds: float) -> str:
    if math.isnan(seconds):
        return "—"
    if seconds < 60:
        return f"{seconds:.1f} s"
    if seconds < 3600:
        return f"{int(seconds // 60)} min {int(seconds % 60):02d} s"
    return f"{int(seconds // 3600)} h {int(seconds % 3600 // 60):02d} min"


def replacement_text(run: Mapping[str, Any]) -> str:
    """An MLM replacement rule as ``80/10/10``: [MASK] / random token / kept, in percent."""
    mask, random = run["mask_token_fraction"], run["random_token_fraction"]
    return f"{100 * mask:g}/{100 * random:g}/{100 * (1 - mask - random):g}"


def detectable_text(mde: float, needed: float, unit: str) -> str:
    """A minimum detectable effect, and for an undecided difference what would decide it:
    ``2.4`` (decided), ``2.4 (≥ 12 seeds)``, ``2.4 (no gap)`` (an observed difference of 0)."""
    if math.isnan(mde):
        return "—"
    if math.isnan(needed):
        return number_text(mde)
    return f"{number_text(mde)} ({'no gap' if math.isinf(needed) else f'≥ {int(needed):,} {unit}'})"


def variance_text(pretraining_seeds: float) -> str:
    """What an interval over these rows includes, for a note beside it."""
    if pretraining_seeds > 1:
        return (
            f"over {pretraining_seeds:g} pretraining seeds per arm (each the mean of its fine-tuning seeds): includes pretraining-seed "
            "variance"
        )
    return "over fine-tuning seeds of one pretraining run per arm: conditional on that run"
