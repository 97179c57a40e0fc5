"""Confidence intervals, one implementation each: Wilson (proportions), Student t (means), percentile (bootstrap).

>>> low, high = wilson_interval(656, 1284)
>>> round(float(low), 4), round(float(high), 4)
(0.4836, 0.5382)
>>> mean, sd, low, high, n = t_interval(np.array([1.0, 2.0, 3.0, np.nan]))
>>> round(low, 4), round(high, 4), n
(-0.4841, 4.4841, 3)
>>> percentile_interval(np.array([[1.0, np.nan], [2.0, np.nan], [3.0, np.nan]]), 0.5)
(array([1.5, nan]), array([2.5, nan]))
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from scipy.special import ndtri, stdtrit

__all__ = ["MeanInterval", "nan_quantile", "percentile_interval", "t_interval", "wilson_interval"]


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
