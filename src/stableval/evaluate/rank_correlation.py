"""Kendall's tau-b between score vectors, vectorised over any leading axes (one implementation for the project).

Kendall (1945), "The treatment of ties in ranking problems", Biometrika 33(3):239–251:
``tau_b = (concordant - discordant) / sqrt((n0 - n1)(n0 - n2))``, computed as ``sum(sx·sy) / sqrt(sum(sx²)·sum(sy²))``
over the signs of all pairwise differences. Scores are rounded to 12 decimals first, so floating-point noise never
breaks a tie. NaN where either vector is constant (tau-b undefined).

>>> import numpy as np
>>> kendall_tau_b(np.array([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]]), np.array([1.0, 2.0, 3.0])).tolist()
[1.0, -1.0]
>>> round(float(kendall_tau_b(np.array([1.0, 0.5, 0.0]), np.array([0.75, 0.75, 0.0]))), 4)
0.8165
"""

from __future__ import annotations

import numpy as np

#: scores are compared after rounding to this many decimals, so floating-point noise never breaks a tie
SCORE_DECIMALS = 12


def pair_signs(scores: np.ndarray) -> np.ndarray:
    """(..., A(A-1)/2) sign of score_i - score_j for every pair i < j along the last axis."""
    first, second = np.triu_indices(scores.shape[-1], k=1)
    rounded = np.round(scores, SCORE_DECIMALS)
    return np.asarray(np.sign(rounded[..., first] - rounded[..., second]))


def kendall_tau_b(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b between the last axes of ``x`` and ``y`` (broadcast); NaN where either is constant."""
    sx, sy = pair_signs(np.asarray(x, dtype=float)), pair_signs(np.asarray(y, dtype=float))
    numerator = (sx * sy).sum(axis=-1)
    denominator = np.sqrt((sx * sx).sum(axis=-1) * (sy * sy).sum(axis=-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1.0), np.nan))
