"""Means with Student-t confidence intervals, and linear combinations of them.

The study reports the seed mean of each fine-tuning score with a 95% CI; the report
does the same and compares objectives with Welch's unequal-variance interval. Every
quantity the report derives (a family average, a difference, a difference of
differences) is a linear combination of independent seed means, so one function,
:func:`linear_combination`, propagates standard errors and uses the
Welch-Satterthwaite degrees of freedom for all of them.

scipy is not a dependency: the t quantile is computed here from the regularized
incomplete beta function (continued fraction, Numerical Recipes 6.4) and bisection,
exact to ~1e-10 for any confidence level and any (also fractional) degrees of freedom.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pipeline.errors import PipelineError


def _continued_fraction(a: float, b: float, x: float) -> float:
    """Lentz's evaluation of the incomplete beta continued fraction."""
    tiny, epsilon = 1e-300, 1e-15
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    result = d
    for m in range(1, 500):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            result *= c * d
        if abs(c * d - 1.0) < epsilon:
            break
    return result


def _regularized_beta(x: float, a: float, b: float) -> float:
    """I_x(a, b), the CDF of a Beta(a, b) variable at ``x``."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _continued_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _continued_fraction(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` degrees of freedom (``inf``: the normal)."""
    if math.isinf(df):
        return 0.5 * (1.0 + math.erf(t / math.sqrt(2.0)))
    tail = 0.5 * _regularized_beta(df / (df + t * t), df / 2.0, 0.5)
    return 1.0 - tail if t > 0 else tail


@functools.cache
def t_critical(confidence: float, df: float) -> float:
    """The two-sided critical value: P(|T| <= value) = ``confidence``.

    Cached: every interval's low and high ask for it, and most share a few df values
    (seeds − 1, and the Welch df of families of equally noisy tasks).
    """
    if not 0.0 < confidence < 1.0:
        raise PipelineError(f"confidence must lie strictly between 0 and 1, got {confidence}")
    if not df > 0:
        return math.nan
    target = (1.0 + confidence) / 2.0
    low, high = 0.0, 1.0
    while t_cdf(high, df) < target:
        low, high = high, high * 2.0
    for _ in range(200):
        middle = (low + high) / 2.0
        low, high = (middle, high) if t_cdf(middle, df) < target else (low, middle)
        if high - low < 1e-12 * max(1.0, high):
            break
    return (low + high) / 2.0


@dataclass(frozen=True)
class Estimate:
    """A mean with its standard error and degrees of freedom.

    ``std_error`` is NaN when there is a single observation: the interval is then
    undefined, not zero, and every comparison built on it stays undecided.
    """

    mean: float
    std_error: float
    df: float
    confidence: float

    @property
    def half_width(self) -> float:
        if self.std_error == 0.0:
            return 0.0
        return t_critical(self.confidence, self.df) * self.std_error

    @property
    def low(self) -> float:
        return self.mean - self.half_width

    @property
    def high(self) -> float:
        return self.mean + self.half_width

    @classmethod
    def undefined(cls, confidence: float) -> Estimate:
        """No estimate at all (e.g. no run to compare with): every column is NaN."""
        return cls(math.nan, math.nan, 0.0, confidence)

    @staticmethod
    def column_names(prefix: str = "") -> list[str]:
        return [f"{prefix}{name}" for name in ("mean", "std_error", "df", "low", "high")]

    def columns(self, prefix: str = "") -> dict[str, float]:
        """The estimate as CSV columns; :meth:`from_columns` reads them back."""
        values = (self.mean, self.std_error, self.df, self.low, self.high)
        return dict(zip(self.column_names(prefix), values))

    @classmethod
    def from_columns(cls, row: object, confidence: float, prefix: str = "") -> Estimate:
        """Rebuild an estimate from a table row (a mapping or a pandas row)."""
        get = row.__getitem__  # type: ignore[attr-defined]
        return cls(float(get(f"{prefix}mean")), float(get(f"{prefix}std_error")), float(get(f"{prefix}df")), confidence)


def mean_interval(values: Sequence[float], confidence: float) -> Estimate:
    """Sample mean with a t-interval: mean ± t(n-1) * s / sqrt(n)."""
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        raise ValueError("mean_interval needs at least one value")
    if data.size == 1:
        return Estimate(float(data[0]), math.nan, 0.0, confidence)
    return Estimate(float(data.mean()), float(data.std(ddof=1) / math.sqrt(data.size)), float(data.size - 1), confidence)


def linear_combination(weights: Sequence[float], estimates: Sequence[Estimate]) -> Estimate:
    """sum(w_i * mean_i) for independent estimates, with Welch-Satterthwaite df.

    Variance: sum(w_i^2 se_i^2). Degrees of freedom: that variance squared over
    sum((w_i^2 se_i^2)^2 / df_i). With weights (1, -1) this is Welch's interval for a
    difference; with weights 1/k it is the average of k task means, whose standard
    error is sqrt(sum se_i^2) / k.
    """
    if len(weights) != len(estimates) or not estimates:
        raise ValueError("linear_combination needs one weight per estimate")
    confidence = estimates[0].confidence
    if any(e.confidence != confidence for e in estimates):
        raise ValueError("cannot combine estimates made at different confidence levels")
    parts = [w * w * e.std_error**2 for w, e in zip(weights, estimates)]
    variance = sum(parts)
    mean = sum(w * e.mean for w, e in zip(weights, estimates))
    if math.isnan(variance):
        return Estimate(mean, math.nan, 0.0, confidence)
    denominator = sum(p * p / e.df for p, e in zip(parts, estimates) if p > 0)
    df = variance * variance / denominator if denominator > 0 else math.inf
    return Estimate(mean, math.sqrt(variance), df, confidence)


def difference(first: Estimate, second: Estimate) -> Estimate:
    """first − second with Welch's interval."""
    return linear_combination((1.0, -1.0), (first, second))


def average(estimates: Sequence[Estimate]) -> Estimate:
    """The unweighted mean of independent estimates (e.g. a task family)."""
    return linear_combination([1.0 / len(estimates)] * len(estimates), estimates)


def ci_side(estimate: Estimate) -> str:
    """Where a difference's CI lies: "above" or "below" 0, "spans" 0, or "undefined"
    (a single seed). Every named winner, better/worse verdict and crossing is read from this."""
    if math.isnan(estimate.low):
        return "undefined"
    return "above" if estimate.low > 0 else "below" if estimate.high < 0 else "spans"


def minimum_detectable_effect(estimate: Estimate, power: float = 0.8) -> float:
    """The smallest true effect a two-sided test at ``estimate.confidence`` would detect with
    probability ``power``, given the estimate's standard error and degrees of freedom:
    (t_{1-α/2} + t_{power}) · se. Below it, "no difference resolved" is what to expect
    even when a difference exists. NaN where the estimate has no standard error."""
    if math.isnan(estimate.std_error) or not estimate.df > 0:
        return math.nan
    # t_critical is two-sided: at confidence 2·power − 1 it is the one-sided power quantile.
    return (t_critical(estimate.confidence, estimate.df) + t_critical(2 * power - 1, estimate.df)) * estimate.std_error


def replicates_to_detect(estimate: Estimate, replicates: int, power: float = 0.8) -> float:
    """How many replicates per arm (instead of ``replicates``) would bring the minimum
    detectable effect down to the observed |mean|, the standard error shrinking as
    1/sqrt(n) and the variance staying as observed. Conservative: the t quantiles are
    kept at the current degrees of freedom. inf for an observed effect of 0; NaN without a
    standard error."""
    mde = minimum_detectable_effect(estimate, power)
    if math.isnan(mde):
        return math.nan
    if estimate.mean == 0:
        return math.inf
    return float(max(replicates, math.ceil(replicates * (mde / abs(estimate.mean)) ** 2)))
