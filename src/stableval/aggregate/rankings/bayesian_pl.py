"""Bayesian Plackett–Luce: posterior samples of every item's plausibility, by Gibbs sampling.

The model of :mod:`~stableval.aggregate.rankings.plackett_luce` (the same choices, ties and pool) with independent
Gamma(a, b) priors on the strengths, sampled by the data-augmentation Gibbs sampler of Caron & Doucet (2012),
"Efficient Bayesian inference for generalized Bradley–Terry models", Journal of Computational and Graphical
Statistics 21(1):174–196 (their Plackett–Luce sampler), the sampler Stutz et al. (2023), arXiv:2307.02191, use for the
dermatology annotations. Each sweep draws

* a latent time per choice e from its set's total strength: Z_e ~ Exponential(rate Λ_e), Λ_e = Σ_{j∈S_e} λ_j;
* every strength from its conjugate conditional: λ_j ~ Gamma(a + w_j, b + Σ_{e∋j} Z_e), w_j the choices j wins;
* each item's total strength afresh from its prior, Gamma(m a, b) for m candidates (the likelihood does not see
  the scale, so this step leaves the posterior unchanged and stops the scale from drifting, as Caron & Doucet
  suggest).

The normalised strengths of the sweeps after ``burn_in`` (every ``thin``-th) are the posterior samples of each
item's plausibility (``sample_plausibility_``); their mean is ``plausibility_``. Under a flat prior and much data
the posterior mean approaches the maximum-likelihood estimate (tested).

>>> from stableval.data.rankings import Rankings
>>> rankings = Rankings.from_records([(None, "q", ["a", "b"])] * 20 + [(None, "q", ["b", "a"])] * 10)
>>> fit = BayesianPlackettLuce(prior_shape=1, samples=2000, seed=0).fit(rankings)
>>> fit.sample_plausibility_.shape, round(float(fit.plausibility_[0]), 1)      # posterior mean of a ≈ 2/3
((2000, 2), 0.7)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stableval.aggregate.rankings.base import RankingAggregator
from stableval.aggregate.rankings.choices import ChoiceEvents, Slots, choice_events
from stableval.aggregate.rankings.methods import declared
from stableval.aggregate.rankings.plackett_luce import warm_start
from stableval.data.rankings import Rankings

__all__ = ["METHOD", "BayesianPlackettLuce", "gibbs_plausibility"]


def gibbs_plausibility(events: ChoiceEvents, slots: Slots, *, prior_shape: float, samples: int, burn_in: int,
                       thin: int, rng: np.random.Generator, start: np.ndarray | None = None) -> np.ndarray:
    """(samples, K) posterior samples of the normalised strengths (float32), after ``burn_in`` sweeps, keeping
    every ``thin``-th."""
    k = slots.n_slots
    wins = np.bincount(events.winner, minlength=k).astype(float)
    counts = np.diff(slots.offsets)
    shape = prior_shape + wins
    total_shape = prior_shape * counts
    strength = slots.normalise(np.ones(k) if start is None else np.asarray(start, dtype=float))
    strength = strength * np.repeat(rng.gamma(total_shape), counts)
    out = np.empty((samples, k), dtype=np.float32)
    kept = 0
    sweep = 0
    while kept < samples:
        latent = rng.exponential(1.0 / events.set_sums(strength))
        rate = 1.0 + np.bincount(events.member_slot, weights=latent[events.member_event], minlength=k)
        strength = rng.gamma(shape) / rate
        normalised = slots.normalise(strength)
        strength = normalised * np.repeat(rng.gamma(total_shape), counts)
        sweep += 1
        if sweep > burn_in and (sweep - burn_in) % thin == 0:
            out[kept] = normalised
            kept += 1
    return out


#: the declaration this estimator reads (its hyper-parameters: :attr:`BayesianPlackettLuce.PARAMETERS`)
METHOD = declared("bayes-pl")


class BayesianPlackettLuce(RankingAggregator):
    """Posterior samples of Plackett–Luce plausibilities (Gibbs sampler of Caron & Doucet 2012).

    Args:
        prior_shape: Gamma(a, 1) prior shape on each strength (1: the flat-most conjugate prior).
        samples: posterior samples kept. burn_in: sweeps discarded first. thin: keep every thin-th sweep.
        seed: random seed (None: fresh randomness).

    Attributes after fitting: ``sample_plausibility_`` (samples, K) float32; ``plausibility_`` their mean.
    """

    pooled = True
    PARAMETERS = METHOD.params

    def __init__(self, prior_shape: float = 2.0, samples: int = 1000, burn_in: int = 200, thin: int = 1,
                 seed: int | None = 0) -> None:
        self._set_checked(prior_shape=prior_shape, samples=samples, burn_in=burn_in, thin=thin, seed=seed)

    def _fit(self, rankings: Rankings, slots: Slots, start: RankingAggregator | None) -> np.ndarray:
        events = choice_events(rankings, slots)
        self.sample_plausibility_ = gibbs_plausibility(
            events, slots, prior_shape=self.prior_shape, samples=self.samples, burn_in=self.burn_in, thin=self.thin,
            rng=np.random.default_rng(self.seed), start=warm_start(start, slots, rankings))
        return slots.normalise(self.sample_plausibility_.mean(axis=0, dtype=np.float64))

    def summary(self) -> dict[str, Any]:
        return {"samples": self.samples, "burn_in": self.burn_in, "thin": self.thin}
