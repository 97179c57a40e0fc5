"""Empirical-Bayes Dirichlet priors learnt from a first fit's expected confusion counts.

STABLEVAL's ``alpha_pi="auto"`` (one symmetric concentration for every confusion row,
:func:`dirichlet_concentration`) and ``alpha_pi="pooled"`` (every rater's rows shrunk towards the crowd's,
:func:`pooled_dirichlet`), and the ordinal model's prior strength, search the grids declared here.

>>> rows = np.array([[9.0, 1.0], [1.0, 9.0]])
>>> float(dirichlet_concentration(rows)[0]) < 1.0
True
"""

from __future__ import annotations

import numpy as np

__all__ = ["CONCENTRATIONS", "STRENGTHS", "dirichlet_concentration", "pooled_dirichlet", "refined_argmax"]

#: the concentrations :func:`dirichlet_concentration` chooses among (log-spaced, 0.0025 to 400)
CONCENTRATIONS = np.exp(np.linspace(np.log(0.0025), np.log(400.0), 241))


#: the prior strengths (pseudo-judgments) :func:`pooled_dirichlet` chooses among (log-spaced, 0.01 to 10,000)
STRENGTHS = np.exp(np.linspace(np.log(0.01), np.log(1e4), 241))


def pooled_dirichlet(rows: np.ndarray, n_levels: int) -> tuple[np.ndarray, np.ndarray]:
    """A hierarchical (empirical-Bayes) prior that shrinks every rater's confusion row towards the crowd's.

    ``rows`` (R·K, K) are the expected confusion counts of a fit, one row per (rater, true level). For each true level c
    the crowd's row m_c is the pooled counts normalised, and the strength s_c (in pseudo-judgments) maximises the
    Dirichlet-multinomial evidence of the raters' rows under Dirichlet(s_c m_c) (Minka 2000, with the mean fixed;
    searched on :data:`STRENGTHS` and refined between its points, :func:`refined_argmax`; cf. the hierarchical
    Dawid–Skene models of Paun et al. 2018, TACL 6). Returns (alpha (K, K) = 1 + s_c m_c per row, strengths (K,)). With
    these alphas the MAP row of a rater with n judgments of class c is ``(n_c + s_c m_c) / (N_c + s_c)``: a few
    judgments are pulled towards the crowd's row, hundreds barely move.

    >>> rows = np.array([[19.0, 1.0], [1.0, 19.0],   # a careful rater: 20 judgments per class
    ...                  [12.0, 8.0], [7.0, 13.0],   # a careless one
    ...                  [2.0, 0.0], [0.0, 1.0]])    # a newcomer with 3 judgments, all right
    >>> alpha, strength = pooled_dirichlet(rows, 2)
    >>> (alpha - 1).round(2).tolist(), strength.round(1).tolist()
    ([[4.6, 1.25], [1.66, 6.83]], [5.9, 8.5])
    >>> ((rows[4] + alpha[0] - 1) / (rows[4] + alpha[0] - 1).sum()).round(2).tolist()  # the newcomer's MAP row
    [0.84, 0.16]
    """
    from scipy.special import gammaln

    k = n_levels
    per_level = rows.reshape(-1, k, k)  # (R, true, given)
    crowd = per_level.sum(axis=0)
    mean = crowd / np.maximum(crowd.sum(axis=1, keepdims=True), 1e-300)  # (K, K) m_c
    strengths = np.ones(k)
    for c in range(k):
        counts = per_level[:, c, :]
        used = counts.sum(axis=1) > 0
        counts, m = counts[used], mean[c]
        cells = m > 0  # cells the crowd never uses carry no counts either
        if not counts.size or cells.sum() < 2:
            continue
        s = STRENGTHS[:, None]
        a = s * m[cells][None, :]  # (grid, cells)
        evidence = (counts.shape[0] * gammaln(s[:, 0]) - gammaln(counts.sum(axis=1)[None, :] + s).sum(axis=1)
                    + (gammaln(counts[:, cells][None] + a[:, None, :]) - gammaln(a)[:, None, :]).sum(axis=(1, 2)))
        strengths[c] = refined_argmax(STRENGTHS, evidence)
    return 1.0 + strengths[:, None] * mean, strengths


def refined_argmax(grid: np.ndarray, values: np.ndarray) -> float:
    """The maximiser of ``values`` over the log-spaced ``grid``, refined between the grid's points by the vertex of
    the parabola (in log grid) through the best point and its two neighbours: a strength that moves continuously
    with the data, so rounding (one E-step kernel or another) cannot flip it a whole grid step.

    >>> grid = np.exp(np.linspace(0.0, 4.0, 5))
    >>> round(float(np.log(refined_argmax(grid, -(np.log(grid) - 1.7) ** 2))), 6)  # the true maximum, off the grid
    1.7
    """
    best = int(np.argmax(values))
    if best == 0 or best == len(grid) - 1:
        return float(grid[best])
    left, middle, right = values[best - 1], values[best], values[best + 1]
    curvature = left - 2.0 * middle + right
    if not curvature < 0:
        return float(grid[best])
    step = np.log(grid[best + 1]) - np.log(grid[best])
    offset = 0.5 * (left - right) / curvature  # in grid steps, within (−1/2, 1/2]
    return float(np.exp(np.log(grid[best]) + offset * step))


def dirichlet_concentration(rows: np.ndarray, groups: np.ndarray | None = None, n_groups: int = 1) -> np.ndarray:
    """(G,) empirical-Bayes concentration of a symmetric Dirichlet over confusion rows: the beta maximising the
    Dirichlet-multinomial evidence of the expected counts ``rows`` (M, K) — one confusion row of one rater each —
    summed per group (Minka 2000, "Estimating a Dirichlet distribution"; the evidence of row n is
    ``lgamma(K beta) - lgamma(n + K beta) + sum_o [lgamma(n_o + beta) - lgamma(beta)]``). Searched on the
    log-spaced grid :data:`CONCENTRATIONS` (steps of about 4%); rows without counts carry no evidence.

    >>> sharp = np.array([[9.0, 1.0, 0.0], [0.0, 9.0, 1.0], [1.0, 0.0, 9.0]])   # raters right 90% of the time
    >>> diffuse = np.array([[5.0, 4.0, 6.0], [6.0, 5.0, 4.0], [4.0, 6.0, 5.0]])  # labels unrelated to the truth
    >>> dirichlet_concentration(sharp).round(2).tolist(), dirichlet_concentration(diffuse).round(2).tolist()
    ([0.26], [400.0])
    """
    from scipy.special import gammaln

    groups = np.zeros(len(rows), dtype=np.int64) if groups is None else groups
    k = rows.shape[1]
    totals = rows.sum(axis=1)
    used = totals > 0
    rows, totals, groups = rows[used], totals[used], groups[used]
    beta = CONCENTRATIONS[:, None, None]
    per_row = (gammaln(k * beta[..., 0]) - gammaln(totals[None, :] + k * beta[..., 0])
               + (gammaln(rows[None] + beta) - gammaln(beta)).sum(axis=2))  # (grid, M)
    evidence = np.stack([np.bincount(groups, weights=values, minlength=n_groups) for values in per_row])
    return np.asarray(CONCENTRATIONS[evidence.argmax(axis=0)])
