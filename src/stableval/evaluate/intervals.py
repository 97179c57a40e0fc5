"""Confidence intervals, one implementation each: Wilson (proportions), Student t (means), percentile (bootstrap),
bootstrap-t (studentised bootstrap; Efron & Tibshirani 1993, ch. 12.5; Hall 1988).

>>> low, high = wilson_interval(656, 1284)
>>> round(float(low), 4), round(float(high), 4)
(0.4836, 0.5382)
>>> mean, sd, low, high, n = t_interval(np.array([1.0, 2.0, 3.0, np.nan]))
>>> round(low, 4), round(high, 4), n
(-0.4841, 4.4841, 3)
>>> percentile_interval(np.array([[1.0, np.nan], [2.0, np.nan], [3.0, np.nan]]), 0.5)
(array([1.5, nan]), array([2.5, nan]))
>>> studentised_interval(1.0, 0.5, np.array([-1.0, 0.0, 1.0, 2.0, 2.5]), 1.0, confidence=0.6)
(0.5, 1.5)
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from scipy.special import ndtri, stdtrit

__all__ = ["MeanInterval", "nan_quantile", "percentile_interval", "student_quantile", "studentised_interval",
           "t_interval", "welch_df", "wilson_interval"]


def wilson_interval(successes: float | np.ndarray, trials: float | np.ndarray,
                    confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Wilson (1927) score interval for a binomial proportion; NaN where ``trials`` is 0.

    E. B. Wilson (1927), "Probable inference, the law of succession, and statistical inference", JASA 22:209–212.
    """
    s = np.asarray(successes, dtype=float)
    n = np.asarray(trials, dtype=float)
    z = float(ndtri(0.5 + confidence / 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        p = s / n
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    low = np.where(n > 0, centre - half, np.nan)
    high = np.where(n > 0, centre + half, np.nan)
    return (low[()] if low.ndim == 0 else low), (high[()] if high.ndim == 0 else high)


class MeanInterval(NamedTuple):
    """Mean, standard deviation (ddof 1), Student-t interval for the mean and the count of finite values."""

    mean: float
    sd: float
    low: float
    high: float
    n: int


def t_interval(values: Any, confidence: float = 0.95) -> MeanInterval:
    """Mean ± t_{n-1} · s / sqrt(n) over the finite ``values`` (Student 1908); NaN where it is undefined
    (no finite value: everything NaN; one value: the sd and the interval NaN)."""
    data = np.asarray(values, dtype=float).ravel()
    finite = data[np.isfinite(data)]
    n = int(finite.size)
    if n == 0:
        return MeanInterval(np.nan, np.nan, np.nan, np.nan, 0)
    mean = float(finite.mean())
    if n == 1:
        return MeanInterval(mean, np.nan, np.nan, np.nan, 1)
    sd = float(finite.std(ddof=1))
    half = float(stdtrit(n - 1, 0.5 + confidence / 2.0)) * sd / float(np.sqrt(n))
    return MeanInterval(mean, sd, mean - half, mean + half, n)


def nan_quantile(values: Any, q: float, axis: int = 0) -> Any:
    """Quantile ``q`` of the finite values along ``axis`` (linear interpolation); NaN, without a warning, where
    there is none. A float for 1-d input, else an array without ``axis``."""
    data = np.moveaxis(np.asarray(values, dtype=float), axis, 0)
    flat = data.reshape(data.shape[0], -1)
    finite = np.isfinite(flat)
    out = np.full(flat.shape[1], np.nan)
    valid = finite.any(axis=0)
    if valid.any():
        out[valid] = np.nanquantile(np.where(finite[:, valid], flat[:, valid], np.nan), q, axis=0)
    if data.ndim == 1:
        return float(out[0])
    return out.reshape(data.shape[1:])


def percentile_interval(values: Any, confidence: float = 0.95, axis: int = 0) -> tuple[Any, Any]:
    """Central ``confidence`` percentile interval (Efron & Tibshirani 1993, ch. 13) of bootstrap draws along
    ``axis``, over the finite draws; NaN where there is none."""
    tail = (1.0 - confidence) / 2.0
    return nan_quantile(values, tail, axis), nan_quantile(values, 1.0 - tail, axis)


def student_quantile(confidence: float, df: float | np.ndarray) -> np.ndarray:
    """q with P(|T| <= q) = ``confidence`` for Student's t with ``df`` > 0 degrees of freedom (vectorised).

    >>> round(float(student_quantile(0.95, 9)), 4), round(float(student_quantile(0.95, 1e9)), 4)
    (2.2622, 1.96)
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    degrees = np.asarray(df, dtype=float)
    if np.any(~(degrees > 0)):
        raise ValueError("a Student t interval needs at least two values (df >= 1)")
    return np.asarray(stdtrit(degrees, 0.5 + confidence / 2.0))


def welch_df(se_a: Any, df_a: Any, se_b: Any, df_b: Any) -> np.ndarray:
    """Welch–Satterthwaite degrees of freedom of the difference of two independent estimates with standard errors
    ``se_a``, ``se_b`` on ``df_a``, ``df_b`` degrees of freedom (the larger of the two where both errors are 0).

    >>> float(welch_df(1.0, 9, 1.0, 9)), round(float(welch_df(1.0, 9, 0.1, 99)), 2)
    (18.0, 9.18)
    """
    va, vb = np.asarray(se_a, dtype=float) ** 2, np.asarray(se_b, dtype=float) ** 2
    dfa, dfb = np.asarray(df_a, dtype=float), np.asarray(df_b, dtype=float)
    denominator = va**2 / dfa + vb**2 / dfb
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(np.where(denominator > 0, (va + vb) ** 2 / denominator, np.maximum(dfa, dfb)))


def studentised_interval(estimate: float, se: float, replicate_estimates: Any, replicate_se: Any,
                         confidence: float = 0.95) -> tuple[float, float]:
    """The bootstrap-t interval ``[estimate − t*₍₁₋α/₂₎ · se, estimate − t*₍α/₂₎ · se]``, t* = (replicate estimate
    − estimate) / replicate standard error, from replicates of the estimate and of its standard error
    (``replicate_se``: an array, or one number). A replicate with a zero standard error (constant data) counts as
    t* = 0 if it equals the estimate, else ±∞; the quantiles are taken at the nearest replicate, so a bound is
    infinite only when more than the tail's share of replicates is such. A zero ``se`` gives the point.

    >>> studentised_interval(0.5, 0.0, np.array([0.5, 0.5]), np.array([0.0, 0.0]))
    (0.5, 0.5)
    """
    shift = np.asarray(replicate_estimates, dtype=float) - estimate
    scale = np.broadcast_to(np.asarray(replicate_se, dtype=float), shift.shape)
    positive = scale > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.where(positive, shift / np.where(positive, scale, 1.0),
                     np.where(shift == 0, 0.0, np.copysign(np.inf, shift)))
    if se == 0 or t.size == 0:
        return float(estimate), float(estimate)
    tail = (1.0 - confidence) / 2.0
    ordered = np.sort(t.ravel())  # the nearest order statistic by hand: np.quantile turns 0 · ∞ into NaN
    low_t, high_t = (ordered[int(np.rint(q * (ordered.size - 1)))] for q in (tail, 1.0 - tail))
    return float(estimate - high_t * se), float(estimate - low_t * se)
