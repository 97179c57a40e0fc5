"""Confidence intervals for proportions.

>>> low, high = wilson_interval(656, 1284)
>>> round(float(low), 4), round(float(high), 4)
(0.4836, 0.5382)
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtri


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
