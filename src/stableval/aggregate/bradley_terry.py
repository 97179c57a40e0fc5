"""Bradley–Terry maximum likelihood from pairwise votes, with ties.

Model (Bradley & Terry 1952, "Rank analysis of incomplete block designs", Biometrika 39): agent i beats agent j
with probability ``pi_i / (pi_i + pi_j)``. Ties are handled in one of two ways:

* ``ties="half"`` (default): a tie counts as half a win for each side (as in Chatbot Arena's leaderboards).
  The log-likelihood is concave in ``theta = log pi``; it is maximised by Newton's method with the exact Hessian.
* ``ties="davidson"``: Davidson (1970), "On extending the Bradley–Terry model to accommodate ties in paired
  comparison experiments", JASA 65: P(i wins) = pi_i / D, P(tie) = nu sqrt(pi_i pi_j) / D with
  ``D = pi_i + pi_j + nu sqrt(pi_i pi_j)``; ``nu`` (the tie propensity) is estimated jointly, by Newton's method
  on (log pi, log nu) with a finite-difference Hessian of the exact gradient and a backtracking line search.

Strengths are identified up to a constant: they are reported with geometric mean 1, and as ratings on an Elo-like
scale, ``rating = base + scale * log10(pi / geometric mean)`` (scale 400, base 1000: a 400-point gap means 10:1
odds). The maximum-likelihood estimate exists only when every agent both won and lost (in the graph sense:
the "beats" graph is strongly connected, Zermelo 1929 / Ford 1957); otherwise ``prior`` adds that many virtual
ties between every pair of agents (a small regularisation), or fitting raises an error saying so.

>>> import numpy as np
>>> wins = np.array([[0, 3], [1, 0]], dtype=float)      # A beat B 3 times, B beat A once
>>> model = BradleyTerry().fit_counts(wins, np.zeros((2, 2)), ["A", "B"])
>>> round(float(model.strengths_[0] / model.strengths_[1]), 6)  # the MLE is the odds 3:1
3.0
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Self

import numpy as np

from stableval.aggregate.pairwise import PairwiseAggregator
from stableval.errors import InputError

TIE_MODELS = ("half", "davidson")


class BradleyTerry(PairwiseAggregator):
    """Bradley–Terry (optionally Davidson ties) by maximum likelihood.

    Args:
        ties: ``"half"`` (a tie is half a win for each side) or ``"davidson"`` (Davidson 1970 tie model).
        prior: virtual ties added between every pair of agents (0 = none); makes the estimate exist when some
            agent never lost or never won.
        scale: the rating scale, ``base + scale * log10(strength)``.
        base: the rating of an agent of strength 1 (the geometric mean).
        max_iter: at most this many Newton iterations.
        tol: stop when the largest gradient entry is below ``tol`` times the number of (weighted) votes.

    Attributes after fitting: ``agents_``, ``strengths_`` (geometric mean 1), ``ratings_``, ``tie_parameter_``
    (Davidson's nu; NaN for ``half``), ``log_likelihood_``, ``n_iter_``, ``converged_``, ``wins_`` (A, A) weighted
    wins of row over column (ties excluded), ``ties_`` (A, A) weighted ties.
    """

    def __init__(self, ties: str = "half", prior: float = 0.0, scale: float = 400.0, base: float = 1000.0,
                 max_iter: int = 100, tol: float = 1e-12) -> None:
        if ties not in TIE_MODELS:
            raise ValueError(f"ties={ties!r}; allowed: {', '.join(TIE_MODELS)}")
        if prior < 0:
            raise ValueError(f"prior must be >= 0, got {prior}")
        self.ties = ties
        self.prior = prior
        self.scale = scale
        self.base = base
        self.max_iter = max_iter
        self.tol = tol

    def fit_counts(self, wins: np.ndarray, ties: np.ndarray, agents: Sequence[str],
                   start: np.ndarray | None = None) -> Self:
        """Fit on (A, A) weighted win counts (row beat column) and symmetric tie counts."""
        wins = np.asarray(wins, dtype=float)
        ties = np.asarray(ties, dtype=float)
        n_agents = len(agents)
        if wins.shape != (n_agents, n_agents) or ties.shape != wins.shape:
            raise ValueError("wins and ties must be (A, A) matrices matching the agents")
        if n_agents < 2:
            raise InputError("need at least two agents to compare", value=list(agents), allowed="2 or more agents")
        ties_used = ties + self.prior * (1 - np.eye(n_agents))
        _check_connected(wins, ties_used, agents, self.ties)
        theta, nu, log_likelihood, n_iter, converged = _newton(wins, ties_used, self.ties, self.max_iter, self.tol,
                                                               start)
        self.agents_ = list(agents)
        self.wins_ = wins
        self.ties_ = ties
        self.strengths_ = np.exp(theta - theta.mean())
        self.ratings_ = self.base + self.scale * (theta - theta.mean()) / np.log(10.0)
        self.tie_parameter_ = nu
        self.log_likelihood_ = log_likelihood
        self.n_iter_ = n_iter
        self.converged_ = converged
        return self

    def win_probability(self) -> np.ndarray:
        """(A, A) model probability that row agent beats column agent (a Davidson tie counts as half)."""
        p = self.strengths_
        if self.ties == "half":
            prob = p[:, None] / (p[:, None] + p[None, :])
        else:
            s = np.sqrt(np.outer(p, p))
            d = p[:, None] + p[None, :] + self.tie_parameter_ * s
            prob = (p[:, None] + 0.5 * self.tie_parameter_ * s) / d
        np.fill_diagonal(prob, np.nan)
        return np.asarray(prob)


def _check_connected(wins: np.ndarray, ties: np.ndarray, agents: Sequence[str], model: str) -> None:
    """Raise when the MLE does not exist: some group of agents never lost (or tied) against the rest."""
    from scipy.sparse.csgraph import connected_components

    beats = (wins + ties) > 0  # a tie is half a win each way
    n_comp, labels = connected_components(beats, directed=True, connection="strong")
    if n_comp > 1:
        sizes = np.bincount(labels)
        loner = [agents[int(i)] for i in np.flatnonzero(labels == labels[np.argmin(sizes[labels])])]
        raise InputError(
            "the Bradley–Terry estimate does not exist: some agents never lost (or never won) against the others, "
            "so their strengths would be infinite",
            value=loner[:5], allowed="more votes between the groups, or prior=0.5 (CLI --prior 0.5), which adds "
                                     "half a virtual tie between every pair of agents")
    if model == "davidson" and ties.sum() == 0:
        raise InputError("the Davidson tie model needs at least one tie", value=0,
                         allowed="ties='half', or votes that contain ties")


def _log_likelihood(x: np.ndarray, wins: np.ndarray, ties: np.ndarray, model: str) -> tuple[float, np.ndarray]:
    """Log-likelihood and gradient in x = (theta_0..theta_{A-2}[, log nu]), theta_{A-1} = 0."""
    n = wins.shape[0]
    theta = np.append(x[: n - 1], 0.0)
    diff = theta[:, None] - theta[None, :]
    games = wins + wins.T + ties
    if model == "half":
        w = wins + 0.5 * ties
        p = 1.0 / (1.0 + np.exp(-diff))  # P(row beats column)
        with np.errstate(divide="ignore"):
            ll = float(np.sum(np.where(w > 0, w * np.log(p), 0.0)))
        grad = (w - games * p).sum(axis=1)
        return ll, grad[: n - 1]
    nu = np.exp(x[-1])
    # probabilities relative to the pair's geometric mean: pi_i / s = exp(diff / 2)
    up, down = np.exp(0.5 * diff), np.exp(-0.5 * diff)
    d = up + down + nu  # D / s
    iu = np.triu_indices(n, 1)
    ll = float(np.sum(wins * (0.5 * diff)) - np.sum(np.triu(games, 1)[iu] * np.log(d[iu]))
               + np.sum(np.triu(ties, 1)[iu] * np.log(nu)))
    grad_theta = (wins + 0.5 * ties - games * (up + 0.5 * nu) / d).sum(axis=1)
    grad_nu = float(np.sum(np.triu(ties, 1)) - np.sum(np.triu(games * nu / d, 1)))
    return ll, np.append(grad_theta[: n - 1], grad_nu)


def _hessian(x: np.ndarray, wins: np.ndarray, ties: np.ndarray, model: str) -> np.ndarray:
    n = wins.shape[0]
    if model == "half":
        theta = np.append(x, 0.0)
        p = 1.0 / (1.0 + np.exp(-(theta[:, None] - theta[None, :])))
        c = (wins + wins.T + ties) * p * p.T
        hess = c - np.diag(c.sum(axis=1))
        return np.asarray(hess[: n - 1, : n - 1])
    step = 1e-6
    cols = []
    for k in range(x.size):
        e = np.zeros_like(x)
        e[k] = step
        cols.append((_log_likelihood(x + e, wins, ties, model)[1] - _log_likelihood(x - e, wins, ties, model)[1])
                    / (2 * step))
    hess = np.column_stack(cols)
    return np.asarray(0.5 * (hess + hess.T))


def _newton(wins: np.ndarray, ties: np.ndarray, model: str, max_iter: int, tol: float,
            start: np.ndarray | None) -> tuple[np.ndarray, float, float, int, bool]:
    """Maximise the log-likelihood; returns (theta with last = 0, nu, log-likelihood, iterations, converged)."""
    n = wins.shape[0]
    x = np.zeros(n - 1 + (model == "davidson"))
    if start is not None:
        x[: n - 1] = start[: n - 1] - start[n - 1]
    if model == "davidson":
        games = wins + wins.T + ties
        x[-1] = np.log(max(ties.sum() / max(games.sum() - ties.sum(), 1e-12), 1e-6))
    ll, grad = _log_likelihood(x, wins, ties, model)
    converged = False
    iteration = 0
    for iteration in range(1, max_iter + 1):  # noqa: B007 - reported below
        if np.max(np.abs(grad)) <= tol * max(1.0, float(np.sum(wins) + np.sum(ties))):
            converged = True
            break
        hess = _hessian(x, wins, ties, model)
        try:
            step = np.linalg.solve(hess, -grad)
        except np.linalg.LinAlgError:
            step = grad / max(1.0, float(np.abs(grad).max()))
        if grad @ step <= 0:  # not an ascent direction (non-concave region): fall back to gradient ascent
            step = grad / max(1.0, float(np.abs(grad).max()))
        t = 1.0
        while t > 1e-12:
            new_ll, new_grad = _log_likelihood(x + t * step, wins, ties, model)
            if new_ll >= ll - 1e-12 * abs(ll):
                break
            t *= 0.5
        if t <= 1e-12:  # no further progress is possible in floating point
            converged = np.max(np.abs(grad)) <= 1e-8 * max(1.0, float(np.sum(wins) + np.sum(ties)))
            break
        x = x + t * step
        ll, grad = new_ll, new_grad
    theta = np.append(x[: n - 1], 0.0)
    nu = float(np.exp(x[-1])) if model == "davidson" else float("nan")
    return theta, nu, ll, iteration, converged
