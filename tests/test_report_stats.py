"""The report's statistics against hand-computed values and textbook t tables."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from pipeline.analysis import zero_shot
from pipeline.analysis.stats import (
    Estimate,
    average,
    difference,
    mean_interval,
    minimum_detectable_effect,
    replicates_to_detect,
    t_critical,
)
from pipeline.errors import PipelineError


@pytest.mark.parametrize(
    ("confidence", "df", "expected"),
    [
        (0.95, 1, 12.7062),
        (0.95, 2, 4.3027),
        (0.95, 4, 2.7764),
        (0.95, 10, 2.2281),
        (0.95, 30, 2.0423),
        (0.99, 5, 4.0321),
        (0.90, 3, 2.3534),
        (0.95, math.inf, 1.9600),
    ],
)
def test_t_critical_matches_the_t_table(confidence: float, df: float, expected: float) -> None:
    assert t_critical(confidence, df) == pytest.approx(expected, abs=1e-4)


def test_t_critical_rejects_a_confidence_outside_0_1() -> None:
    with pytest.raises(PipelineError, match="confidence"):
        t_critical(1.5, 3)


def test_mean_interval_of_1_2_3() -> None:
    estimate = mean_interval([1.0, 2.0, 3.0], 0.95)
    # s = 1, n = 3: 2 ± t(0.975, 2) * 1 / sqrt(3)
    assert estimate.mean == 2.0
    assert estimate.df == 2
    assert estimate.half_width == pytest.approx(4.302653 / math.sqrt(3), abs=1e-5)
    assert (estimate.low, estimate.high) == pytest.approx((2 - 2.484138, 2 + 2.484138), abs=1e-5)


def test_a_single_seed_has_no_interval() -> None:
    estimate = mean_interval([71.2], 0.95)
    assert estimate.mean == 71.2 and math.isnan(estimate.low) and math.isnan(estimate.high)


def test_identical_seeds_give_a_zero_width_interval() -> None:
    estimate = mean_interval([5.0, 5.0, 5.0], 0.95)
    assert (estimate.low, estimate.high) == (5.0, 5.0)


def test_welch_difference() -> None:
    a, b = mean_interval([1, 2, 3, 4], 0.95), mean_interval([2, 4, 6], 0.95)
    gap = difference(a, b)
    # var(a) = 5/3, se_a^2 = 5/12; var(b) = 4, se_b^2 = 4/3; se^2 = 1.75
    # df = 1.75^2 / ((5/12)^2 / 3 + (4/3)^2 / 2) = 3.0625 / 0.946759 = 3.23472
    assert gap.mean == -1.5
    assert gap.std_error == pytest.approx(math.sqrt(1.75))
    assert gap.df == pytest.approx(3.0625 / ((5 / 12) ** 2 / 3 + (4 / 3) ** 2 / 2))
    assert gap.df == pytest.approx(3.23472, abs=1e-5)
    assert gap.half_width == pytest.approx(t_critical(0.95, gap.df) * math.sqrt(1.75))


def test_average_propagates_standard_errors() -> None:
    tasks = [Estimate(70.0, 0.3, 2.0, 0.95), Estimate(80.0, 0.4, 2.0, 0.95)]
    family = average(tasks)
    assert family.mean == 75.0
    assert family.std_error == pytest.approx(math.sqrt(0.3**2 + 0.4**2) / 2)  # sqrt(sum se_i^2) / k
    # Welch-Satterthwaite: (sum v_i)^2 / sum(v_i^2 / df_i), v_i = se_i^2 / k^2
    v = [0.3**2 / 4, 0.4**2 / 4]
    assert family.df == pytest.approx(sum(v) ** 2 / sum(x * x / 2 for x in v))


def test_a_difference_with_an_undefined_side_is_undefined() -> None:
    gap = difference(mean_interval([1.0], 0.95), mean_interval([1.0, 2.0], 0.95))
    assert math.isnan(gap.low)


def test_estimate_columns_round_trip() -> None:
    estimate = mean_interval([1.0, 2.0, 4.0], 0.9)
    columns = estimate.columns("test_")
    assert set(columns) == {"test_mean", "test_std_error", "test_df", "test_low", "test_high"}
    assert Estimate.from_columns(columns, 0.9, "test_") == estimate


def test_minimum_detectable_effect_is_the_sum_of_the_two_t_quantiles_times_the_standard_error() -> None:
    # df 4, 95%: t_0.975 = 2.776; 80% power: t_0.8 = 0.941 (a t table)
    estimate = Estimate(mean=1.0, std_error=2.0, df=4.0, confidence=0.95)
    assert minimum_detectable_effect(estimate) == pytest.approx((2.7764 + 0.9410) * 2.0, abs=1e-3)
    assert math.isnan(minimum_detectable_effect(Estimate(1.0, math.nan, 0.0, 0.95)))


def test_replicates_to_detect_scales_with_the_squared_ratio_of_mde_to_effect() -> None:
    estimate = Estimate(mean=1.0, std_error=1.0, df=4.0, confidence=0.95)
    mde = minimum_detectable_effect(estimate)
    assert replicates_to_detect(estimate, 3) == math.ceil(3 * mde**2)
    assert replicates_to_detect(Estimate(10.0, 1.0, 4.0, 0.95), 3) == 3  # already detectable
    assert replicates_to_detect(Estimate(0.0, 1.0, 4.0, 0.95), 3) == math.inf


def pairs_of(outcomes: list[float]) -> pd.DataFrame:
    """Minimal-pair outcomes (1 won, 0 lost, ½ tied) as the scoring stage writes them."""
    return pd.DataFrame({"pair_id": range(len(outcomes)), "outcome": outcomes})


def test_a_model_winning_every_one_of_few_pairs_is_not_certain_of_it() -> None:
    """14 of 14 pairs won: 100 points, but not ± 0 (the plain t-interval's, from a sample without spread);
    Agresti and Coull's standard error, at 16 of 18: t(13) x sqrt(16/18 x 2/18 / 18) = 2.160 x 7.41 points."""
    won = zero_shot.accuracy(pairs_of([1.0] * 14), 0.95)
    assert won.mean == 100.0 and won.half_width == pytest.approx(t_critical(0.95, 13) * 100 * math.sqrt(16 / 18 * 2 / 18 / 18))
    # two models winning the same 14 pairs: a difference of 0, not known to be 0 (Agresti and Min: half a pair per outcome)
    same = zero_shot.paired_difference(pairs_of([1.0] * 14), pairs_of([1.0] * 14), 0.95)
    assert same.mean == 0.0 and same.half_width == pytest.approx(t_critical(0.95, 13) * 100 / 16) and same.low < 0 < same.high


def test_the_pseudo_counts_never_narrow_an_interval_and_leave_a_large_sample_s_as_it_was() -> None:
    """399 pairs, 375 won, and a second model ahead on 40 and behind on 10: within 3% of the plain t-intervals, never
    under them; 14 pairs split evenly between the two models (the plain interval at its widest): the plain one exactly."""
    outcomes = [1.0] * 375 + [0.0] * 24
    plain = mean_interval([100.0 * outcome for outcome in outcomes], 0.95)
    won = zero_shot.accuracy(pairs_of(outcomes), 0.95)
    assert won.mean == plain.mean and plain.half_width <= won.half_width <= 1.03 * plain.half_width
    first, second = [1.0] * 40 + [0.0] * 10 + [1.0] * 349, [0.0] * 40 + [1.0] * 10 + [1.0] * 349
    plain = mean_interval([100.0 * (a - b) for a, b in zip(first, second)], 0.95)
    paired = zero_shot.paired_difference(pairs_of(first), pairs_of(second), 0.95)
    assert paired.mean == plain.mean and plain.half_width <= paired.half_width <= 1.03 * plain.half_width
    split, other = [1.0] * 7 + [0.0] * 7, [0.0] * 7 + [1.0] * 7
    plain = mean_interval([100.0 * (a - b) for a, b in zip(split, other)], 0.95)
    assert zero_shot.paired_difference(pairs_of(split), pairs_of(other), 0.95) == plain
