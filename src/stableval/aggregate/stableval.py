"""STABLEVAL: Bayesian Dawid–Skene whose full posteriors give each response an expected credit.

Source: Bonagiri et al. (2026), "STABLEVAL: Disagreement-Aware and Stable Evaluation of AI Systems",
arXiv:2605.02122, Section 3 and Algorithm 1. Dirichlet(alpha_mu) on the class priors and Dirichlet(alpha_pi) on
each row of each rater's confusion matrix; MAP EM initialised from the hard majority vote (class priors = the
share of responses whose majority is each level, ties split) and near-identity confusion matrices
``(1 - epsilon) I + epsilon / K``; the E-step comes first.

Default priors are weak (``alpha_mu = alpha_pi = 1.01``): on well-identified data the posteriors stay close to
maximum likelihood (Dawid–Skene), while a rater's never-seen confusion cells stay away from exact zeros.
Stronger priors (e.g. ``alpha_pi = 2``) pull sparse raters towards uniform confusion rows and are worth it when
most raters judge only a handful of responses.

>>> import pandas as pd
>>> from stableval.data.table import AnnotationTable
>>> frame = pd.DataFrame({"item": [1, 1, 1, 2, 2, 2], "agent": "A", "rater": list("abcabc"),
...                       "label": [1, 1, 0, 0, 0, 0]})
>>> table = AnnotationTable.from_frame(frame, levels=("no", "yes"))
>>> model = Stableval().fit(table)
>>> model.posteriors_.argmax(axis=1).tolist(), bool(model.converged_)
([1, 0], True)
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from stableval.aggregate.dawid_skene import GoldLabels, _EMAggregator, gold_codes
from stableval.aggregate.em import run_em, vote_counts
from stableval.aggregate.majority_vote import MajorityVote
from stableval.data.table import AnnotationTable

INITS = ("majority", "soft")


class Stableval(_EMAggregator):
    """MAP Dawid–Skene with Dirichlet priors (Algorithm 1 of the STABLEVAL paper).

    Args:
        alpha_mu: Dirichlet concentration on the class priors (>= 1; 1 = no prior).
        alpha_pi: Dirichlet concentration on every confusion-matrix row (>= 1; 1 = no prior).
        epsilon: off-diagonal mass of the near-identity initial confusion matrices (0 < epsilon < 1).
        init: ``"majority"`` (Algorithm 1: hard majority vote priors + near-identity confusion, E-step first)
            or ``"soft"`` (as Dawid–Skene: soft vote shares, M-step first).
        max_iter, tol: as for :class:`~stableval.aggregate.DawidSkene`; convergence is on the log posterior.

    Attributes after ``fit``: as Dawid–Skene; ``objective_`` is the log posterior (log-likelihood + log prior,
    non-decreasing), ``log_likelihood_`` the marginal log-likelihood at each step.
    """

    def __init__(
        self,
        alpha_mu: float = 1.01,
        alpha_pi: float = 1.01,
        epsilon: float = 0.1,
        init: str = "majority",
        max_iter: int = 500,
        tol: float = 1e-8,
    ) -> None:
        if alpha_mu < 1 or alpha_pi < 1:
            raise ValueError(f"alpha_mu and alpha_pi must be >= 1 (got {alpha_mu}, {alpha_pi}): "
                             "below 1 the MAP update is not defined")
        if not 0 < epsilon < 1:
            raise ValueError(f"epsilon must be in (0, 1), got {epsilon}")
        if init not in INITS:
            raise ValueError(f"init={init!r}; allowed: {', '.join(INITS)}")
        self.alpha_mu = alpha_mu
        self.alpha_pi = alpha_pi
        self.epsilon = epsilon
        self.init = init
        self.max_iter = max_iter
        self.tol = tol

    def fit(self, table: AnnotationTable, gold: GoldLabels | None = None) -> Stableval:
        """Fit on a table; ``gold`` optionally clamps known responses ({(item, agent): level})."""
        return self.fit_matrix(table.response_matrix(), table.n_raters, table.n_levels,
                               gold=gold_codes(table, gold))

    def fit_matrix(self, X: sp.csr_matrix, n_raters: int, n_levels: int,
                   gold: np.ndarray | None = None) -> Stableval:
        """Fit on a response matrix directly (used by the refit bootstrap)."""
        k = n_levels
        common = dict(n_raters=n_raters, n_levels=k, alpha_mu=self.alpha_mu, alpha_pi=self.alpha_pi,
                      max_iter=self.max_iter, tol=self.tol, gold=gold)
        if self.init == "soft":
            counts = vote_counts(X, k)
            shares = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1.0)
            result = run_em(X, init_posteriors=np.ascontiguousarray(shares.T), **common)  # type: ignore[arg-type]
        else:
            hard = MajorityVote(ties="split").fit_matrix(X, k).posteriors_
            priors = hard.mean(axis=0) if hard.shape[0] else np.full(k, 1.0 / k)
            identity = (1.0 - self.epsilon) * np.eye(k) + self.epsilon / k
            confusion = np.broadcast_to(identity, (n_raters, k, k)).copy()
            result = run_em(X, init_params=(priors, confusion), **common)  # type: ignore[arg-type]
        self._store(result)
        return self
