"""The token-budget trend: a least-squares line in log10(tokens), and the budget at which it
leaves the interval half-width measured at the largest budget."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from pipeline.analysis.budget_trend import fit_trend


def points(effects: list[float], half_width: float, tokens: tuple[float, ...] = (1e5, 1e6, 1e7)) -> pd.DataFrame:
    rows = []
    for t, effect in zip(tokens, effects):
        low, high = effect - half_width, effect + half_width
        rows.append(
            {
                "tokens": t,
                "effect_mean": effect,
                "effect_low": low,
                "effect_high": high,
                "side": "above" if low > 0 else "below" if high < 0 else "spans",
            }
        )
    return pd.DataFrame(rows)


def test_a_rising_effect_is_extrapolated_to_where_it_clears_the_half_width():
    # effect = -4 + 1 x log10(tokens): 1, 2, 3 at 1e5, 1e6, 1e7; half-width 4 -> reaches +4 at 1e8.
    fit = fit_trend(points([1.0, 2.0, 3.0], 4.0), 0.95)
    assert fit["slope_per_decade"] == pytest.approx(1.0) and fit["intercept"] == pytest.approx(-4.0)
    assert fit["tokens_to_decide"] == pytest.approx(1e8)
    assert fit["final_side"] == "spans" and fit["trend"].startswith("extrapolated")


def test_a_falling_effect_is_extrapolated_to_the_negative_side():
    # effect = 4 - 2 x log10(tokens) ... -6, -8, -10 with half-width 12: reaches -12 at 1e8.
    fit = fit_trend(points([-6.0, -8.0, -10.0], 12.0), 0.95)
    assert fit["tokens_to_decide"] == pytest.approx(1e8)


def test_a_decided_effect_needs_no_budget_and_two_points_fit_no_line():
    decided = fit_trend(points([5.0, 6.0, 7.0], 1.0), 0.95)
    assert decided["trend"] == "decided at the largest budget measured" and math.isnan(decided["tokens_to_decide"])
    two = fit_trend(points([1.0, 2.0], 4.0, (1e5, 1e6)), 0.95)
    assert two["trend"] == "too few budgets to fit" and math.isnan(two["slope_per_decade"])


def test_a_flat_or_shrinking_effect_gets_no_budget():
    flat = fit_trend(points([2.0, 2.0, 2.0], 4.0), 0.95)
    assert flat["trend"].startswith("flat") and math.isnan(flat["tokens_to_decide"])
    slow = fit_trend(points([1.0, 1.001, 1.002], 40.0), 0.95)
    assert slow["trend"].startswith("flat") and math.isnan(slow["tokens_to_decide"])
    # effect = 8 - 1 x log10(tokens) falls through zero: the line leaves the interval on the negative side, at 1e13.
    shrinking = fit_trend(points([3.0, 2.0, 1.0], 5.0), 0.95)
    assert shrinking["tokens_to_decide"] == pytest.approx(10**13)
