"""STABLEVAL: Bayesian Dawid–Skene whose full posteriors give each response an expected credit.

Source: Bonagiri et al. (2026), "STABLEVAL: Disagreement-Aware and Stable Evaluation of AI Systems",
arXiv:2605.02122, Section 3 and Algorithm 1. Dirichlet(alpha_mu) on the class priors and Dirichlet(alpha_pi) on
each row of each rater's confusion matrix, fitted by MAP EM. Algorithm 1 starts from the hard majority vote (class
priors = the share of responses whose majority is each level, ties split) and near-identity confusion matrices
``(1 - epsilon) I + epsilon / K``, E-step first (``init="paper"``).

EM only finds a local optimum, and on some data Algorithm 1's start leads to a worse one than Dawid–Skene finds
(S_Adult: log-likelihood −36,394 against −36,272). So by default (``init="best"``) the model is fitted from several
starts — Algorithm 1's and the soft majority vote (as Dawid–Skene starts), the Dawid–Skene solution itself when
the prior is fixed above 1, and ``n_starts`` seeded random perturbations of the soft vote — and keeps the one with
the highest log posterior. ``starts_`` records every start.

The default confusion prior is learnt (``alpha_pi="pooled"``): each rater's confusion rows are shrunk towards the
crowd's by a strength learnt by empirical Bayes, so a rater with a handful of judgments is read through the
crowd's confusion matrix and a prolific one through their own. With a flat prior, sparse raters (a few judgments
each, or many levels) leave Dawid–Skene unidentified: each rater's matrix can absorb any labelling, and the fits
with the highest likelihood move away from the consensus (simulated raters with 2 judgments each: Dawid–Skene
0.68 against majority vote 0.78 accuracy; random starts found higher objectives and 0.61). Chosen by
leave-one-dataset-out selection over 16 labelled sets (``benchmarks/bench_accuracy.py``, docs/accuracy.md), with no
random starts (``n_starts=0``: on sparse raters they find the unidentified optima). ``alpha_pi=1`` is the flat
prior of the paper's experiments (plus ``init="paper"``: Algorithm 1), ``"auto"`` one symmetric concentration
learnt by empirical Bayes.

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

from collections.abc import Collection

import numpy as np

from stableval.aggregate._base import hard_distribution
from stableval.aggregate.em_fit import EMAggregator, EMStart
from stableval.aggregate.methods import LEARNT_PRIORS, declared

#: the declaration this estimator reads (its hyper-parameters: :attr:`Stableval.PARAMETERS`)
METHOD = declared("stableval")


class Stableval(EMAggregator):
    """MAP Dawid–Skene with Dirichlet priors (Bonagiri et al. 2026, Algorithm 1), fitted from several starts; its
    hyper-parameters are declared in :attr:`PARAMETERS`. A learnt ``alpha_pi`` (``"pooled"``, the default:
    :func:`~stableval.aggregate.em_priors.pooled_dirichlet`; ``"auto"``:
    :func:`~stableval.aggregate.em_priors.dirichlet_concentration`) is learnt from the flat fit (or, for sparse
    raters, from the vote shares: ``prior_from_``), the model fitted with it, the prior learnt again from that fit
    and the model fitted once more (:meth:`~stableval.aggregate.em_fit.EMAggregator.fit_from_starts`); it is
    recorded in ``alpha_pi_``. ``max_iter`` and ``tol`` apply per start, convergence on the log posterior.

    Attributes after ``fit``: as Dawid–Skene; ``objective_`` is the log posterior (log-likelihood + log prior,
    non-decreasing), ``log_likelihood_`` the marginal log-likelihood; ``start_`` the winning start and
    ``starts_`` every start's final objective, log-likelihood, iterations and convergence.
    """

    PARAMETERS = METHOD.params

    def __init__(
        self,
        alpha_mu: float = 1.01,
        alpha_pi: float | str = "pooled",
        epsilon: float = 0.1,
        init: str = "best",
        n_starts: int = 0,
        seed: int = 0,
        acceleration: str = "auto",
        max_iter: int = 500,
        tol: float = 1e-8,
    ) -> None:
        self._set_checked(alpha_mu=alpha_mu, alpha_pi=alpha_pi, epsilon=epsilon, init=init, n_starts=n_starts,
                          seed=seed, acceleration=acceleration, max_iter=max_iter, tol=tol)

    def dirichlet(self) -> tuple[float, float]:
        return self.alpha_mu, 1.0 if self.alpha_pi in LEARNT_PRIORS else float(self.alpha_pi)

    def learned_alpha_pi(self, rows: np.ndarray, groups: np.ndarray | None = None,
                         n_groups: int = 1) -> np.ndarray | None:
        """``alpha_pi="auto"``: (G,) the empirical-Bayes concentration of a symmetric Dirichlet over the confusion
        rows (:func:`~stableval.aggregate.em_priors.dirichlet_concentration`), at least 1 (below 1 the MAP update is not
        defined: the evidence asks for no smoothing). ``alpha_pi="pooled"``: (G, K, K), per group the
        hierarchical prior of :func:`~stableval.aggregate.em_priors.pooled_dirichlet` (every rater's rows shrunk towards
        the crowd's, by an empirical-Bayes strength)."""
        if self.alpha_pi not in LEARNT_PRIORS:
            return None
        from stableval.aggregate.em_priors import dirichlet_concentration, pooled_dirichlet

        k = rows.shape[1]
        if self.alpha_pi == "auto":
            if not len(rows):
                return np.ones(n_groups)
            return np.asarray(np.maximum(1.0, dirichlet_concentration(rows, groups, n_groups)))
        out = np.ones((n_groups, k, k))
        group_of_row = np.zeros(len(rows), dtype=np.int64) if groups is None else groups
        for g in range(n_groups):
            mine = rows[group_of_row == g]
            if len(mine):
                out[g] = pooled_dirichlet(mine, k)[0]
        return out

    def em_start(self, counts: np.ndarray) -> EMStart:
        """Algorithm 1's start (``init="paper"``)."""
        k = counts.shape[1]
        return EMStart(hard_distribution(counts, atol=0.0), (1.0 - self.epsilon) * np.eye(k) + self.epsilon / k)

    def em_starts(self, counts: np.ndarray, groups: np.ndarray | None = None, *, rows: np.ndarray | None = None,
                  names: Collection[str] | None = None) -> list[tuple[str, EMStart]]:
        """``paper``, ``soft``, ``ml`` (for ``init="best"`` all three — ``ml`` only when there is a confusion prior,
        alpha_pi > 1 — and ``random-1`` .. ``random-n``). ``rows``: the starts on those responses only, built
        there alone and equal to the full starts' rows (the random draws still follow the distinct vote rows of
        all of ``counts``); ``names``: only the starts named (in their usual order)."""
        every = ["paper", "soft", "ml"] if self.init == "best" else [self.init]
        if self.init == "best" and self.dirichlet()[1] == 1.0:  # no confusion prior: MAP EM from the soft vote
            every.remove("ml")                                  # is the same road
        if self.init == "best":
            every += [f"random-{number}" for number in range(1, self.n_starts + 1)]
        wanted = [name for name in every if names is None or name in names]
        votes = counts if rows is None else counts[rows]
        shares = (votes / np.maximum(votes.sum(axis=1, keepdims=True), 1.0)
                  if any(name != "paper" for name in wanted) else votes)
        chosen: list[tuple[str, EMStart]] = []
        patterns: list[tuple[int, np.ndarray]] = []  # the distinct vote rows, found once for every random start
        for name in wanted:
            if name == "paper":
                chosen.append((name, self.em_start(votes)))
            elif name in ("soft", "ml"):
                chosen.append((name, EMStart(shares, maximum_likelihood_first=name == "ml")))
            else:
                mixed = random_rows(counts, groups, (self.seed, int(name.split("-")[1])), patterns, rows=rows)
                mixed *= 0.5  # 0.5 · shares + 0.5 · noise, without temporaries
                mixed += 0.5 * shares
                chosen.append((name, EMStart(mixed, must_be_identified=True)))
        return chosen


def random_rows(counts: np.ndarray, groups: np.ndarray | None, seed: tuple[int, int],
                patterns: list[tuple[int, np.ndarray]] | None = None, *, rows: np.ndarray | None = None) -> np.ndarray:
    """One random distribution over levels per distinct row of label counts, drawn from ``seed`` so that nothing
    but the votes decides it: renaming or reordering items, raters or levels changes nothing (the draw of a level
    permutes with the level). Each cell's draw is an Exp(1) variate keyed by what the votes say of it — the row's
    counts sorted, the cell's own count and its level's total count — and each row is normalised (Dirichlet(1)
    where the keys differ); responses with the same votes get the same draw. Group by group (``groups`` sorted,
    one number per row), so a problem gets the same draws alone as inside a batch. ``patterns``: an empty list the
    distinct rows of each group are stored in (or, filled by an earlier call on the same counts, taken from).
    ``rows`` (without ``groups``): only those rows of the result, the same numbers as indexing the whole one.

    >>> random_rows(np.array([[2, 0], [0, 2], [2, 0]]), None, (0, 1)).round(3).tolist()
    [[0.231, 0.769], [0.564, 0.436], [0.231, 0.769]]
    >>> random_rows(np.array([[0, 2], [2, 0], [0, 2]]), None, (0, 1)).round(3).tolist()  # levels swapped
    [[0.769, 0.231], [0.436, 0.564], [0.769, 0.231]]
    """
    known = patterns if patterns is not None else []
    fill = not known
    if rows is not None and groups is not None:
        raise ValueError("random_rows: rows= is for one problem (groups=None)")
    if groups is None:  # one problem: no splitting, no copies
        if fill:
            known.append(_distinct_rows(counts))
        n_patterns, inverse = known[0]
        draws = _level_blind_draws(counts, n_patterns, inverse, seed)
        return np.asarray(draws[inverse if rows is None else inverse[rows]])
    out = np.empty(counts.shape)
    bounds = np.flatnonzero(np.diff(groups)) + 1
    for number, rows in enumerate(np.split(np.arange(counts.shape[0]), bounds)):
        if not rows.size:
            if fill:
                known.append((0, rows))
            continue
        if fill:
            known.append(_distinct_rows(counts[rows]))
        n_patterns, inverse = known[number]
        out[rows] = _level_blind_draws(counts[rows], n_patterns, inverse, seed)[inverse]
    return out


def _level_blind_draws(counts: np.ndarray, n_patterns: int, inverse: np.ndarray, seed: tuple[int, int]) -> np.ndarray:
    """(n_patterns, K) the draws of :func:`random_rows` for the distinct rows of ``counts`` (``inverse``: each row's
    distinct row): one Exp(1) variate per distinct key (row counts sorted, cell count, level total), handed out in
    the sorted order of the keys, each row normalised."""
    k = counts.shape[1]
    first = np.zeros(n_patterns, dtype=np.int64)
    first[inverse[::-1]] = np.arange(len(inverse))[::-1]  # one row of each distinct row
    distinct = np.rint(np.asarray(counts[first], dtype=float)).astype(np.int64)
    totals = np.rint(np.asarray(counts.sum(axis=0), dtype=float)).astype(np.int64)
    keys = np.column_stack([np.repeat(-np.sort(-distinct, axis=1), k, axis=0), distinct.ravel(),
                            np.tile(totals, n_patterns)])
    _, cell = np.unique(keys, axis=0, return_inverse=True)
    variates = np.random.default_rng(seed).exponential(size=int(cell.max(initial=-1)) + 1)[cell.ravel()]
    draws = variates.reshape(n_patterns, k)
    return np.asarray(draws / draws.sum(axis=1, keepdims=True))


def _distinct_rows(counts: np.ndarray) -> tuple[int, np.ndarray]:
    """(number of distinct rows, each row's index among them in lexicographic order), as ``np.unique(axis=0)``
    gives, but through one integer key per row when the counts fit (a 1-D sort: ~40x faster on 1e6 rows), and
    without sorting when the keys are few enough to mark in a table (vote counts: a handful of keys).

    >>> _distinct_rows(np.array([[2, 0], [0, 2], [2, 0], [1, 1]]))
    (3, array([2, 0, 2, 1]))
    """
    base = int(np.rint(counts.max(initial=0))) + 1  # the largest rounded count + 1 (rounding keeps the order)
    if np.rint(counts.min(initial=0)) < 0 or counts.shape[1] * np.log2(max(base, 2)) >= 62:
        patterns, inverse = np.unique(counts, axis=0, return_inverse=True)
        return len(patterns), inverse.ravel()
    key = np.zeros(len(counts), dtype=np.int64)  # base-``base`` digits, first column most significant (Horner)
    for level in range(counts.shape[1]):
        key *= base
        key += np.rint(counts[:, level]).astype(np.int64)
    largest = int(key.max(initial=0))
    if largest <= 4 * key.size + 1024:  # rank of each key among those present, by a table instead of a sort
        present = np.zeros(largest + 1, dtype=bool)
        present[key] = True
        rank = np.cumsum(present) - 1
        return int(rank[-1]) + 1 if key.size else 0, rank[key]
    keys, inverse = np.unique(key, return_inverse=True)
    return len(keys), inverse.ravel()
