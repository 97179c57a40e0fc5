"""Every ranking aggregation method's one declaration: its names, colour, where its uncertainty comes from, its
hyper-parameters (with their defaults) and where its estimator lives — the ranking counterpart of
:mod:`stableval.aggregate.methods`.

Nothing here imports numpy or pandas: ``stableval ddx``, ``plot`` and ``nrp`` build their flags, help and usage
errors from these declarations alone, and an estimator's module is imported when the method is built
(:attr:`RankingMethod.estimator <stableval.aggregate.rankings.method.RankingMethod.estimator>`). Each estimator
reads its declaration (``METHOD = declared("pl")``, ``PARAMETERS = METHOD.params``; its ``__init__`` repeats the
defaults). The ranking registry (:mod:`stableval.aggregate.rankings.registry`) lists :data:`RANKING_METHODS` in
this order. To add a method, write its estimator module and its declaration below.

>>> [method.name for method in RANKING_METHODS][:2], declared("pl").param("prior_shape").default
(['irn', 'borda'], 2.0)
"""

from __future__ import annotations

from stableval._options import Option
from stableval.aggregate.rankings.method import RankingMethod

__all__ = ["PRIOR_SHAPE", "RANKING_METHODS", "SOLVERS", "declared"]

#: Plackett–Luce's ``solver`` values
SOLVERS = ("mm", "ilsr")

#: the Gamma prior shape of the Plackett–Luce models (shared by PL and Bayesian PL)
PRIOR_SHAPE = Option("prior_shape", float, "Shape a of the Gamma(a, 1) prior on every option's strength (the pool of "
                     "unnamed options included): a − 1 pseudo-choices won by each; 1 = maximum likelihood.",
                     default=2.0, ge=1)

#: every ranking method, in the order tables show them
RANKING_METHODS: tuple[RankingMethod, ...] = (
    RankingMethod(name="irn", label="IRN", title="Inverse rank normalisation (Liu et al. 2020)",
                  colour="#7f7f7f", estimator_at="stableval.aggregate.rankings.irn:IRN", default=True,
                  summary="Each ranking gives 1/g to the options of its g-th group; the sums, normalised."),
    RankingMethod(name="borda", label="Borda", title="Borda count, ties sharing positions (de Borda 1781)",
                  colour="#bcbd22", estimator_at="stableval.aggregate.rankings.borda:Borda",
                  summary="Each option scores the candidates ranked below it (ties and left-out candidates "
                          "share their positions); the sums, normalised."),
    RankingMethod(name="pl", label="PL",
                  title="Plackett–Luce, maximum a posteriori (Hunter 2004; Maystre & Grossglauser 2015)",
                  colour="#1f77b4", estimator_at="stableval.aggregate.rankings.plackett_luce:PlackettLuce",
                  summary="Each item's options get Plackett–Luce strengths (Gamma prior), fitted by MM or "
                          "I-LSR; the strengths, normalised.",
                  params=(
                      PRIOR_SHAPE,
                      Option("solver", str, "mm: Hunter's minorise–maximise steps; ilsr: iterative Luce spectral "
                             "ranking (maximum likelihood, prior_shape 1).", default="mm", choices=SOLVERS),
                      Option("max_iter", int, "Most iterations.", default=10_000, ge=1),
                      Option("tol", float, "Stop when no log strength moves more than this in one iteration.",
                             default=1e-9, gt=0),
                  )),
    RankingMethod(name="bayes-pl", label="Bayes-PL",
                  title="Bayesian Plackett–Luce, Gibbs sampler (Caron & Doucet 2012)", colour="#2ca02c",
                  estimator_at="stableval.aggregate.rankings.bayesian_pl:BayesianPlackettLuce", samples="posterior",
                  summary="Posterior samples of each item's Plackett–Luce plausibility under Gamma priors; "
                          "their mean.",
                  params=(
                      PRIOR_SHAPE,
                      Option("samples", int, "Posterior samples kept.", default=1000, ge=1),
                      Option("burn_in", int, "Gibbs sweeps discarded before the first sample.", default=200, ge=0),
                      Option("thin", int, "Keep every thin-th sweep.", default=1, ge=1),
                      Option("seed", int, "Random seed of the sampler (none: fresh randomness).", default=0, ge=0,
                             none_ok=True),
                  )),
    RankingMethod(name="rater-pl", label="Rater-PL",
                  title="Plackett–Luce with a reliability per rater (as Raman & Joachims 2014)",
                  colour="#d62728", estimator_at="stableval.aggregate.rankings.rater_pl:RaterPlackettLuce",
                  rater_model=True, draws_per_fit=1,
                  summary="Plackett–Luce scores per item and an inverse temperature per rater, so unreliable "
                          "raters count less; by maximum a posteriori.",
                  params=(
                      Option("prior_scale", float, "Standard deviation of the Normal(0, σ²) prior on every option's "
                             "score.", default=2.0, gt=0),
                      Option("reliability_shape", float, "Shape s of the Gamma(s, s) prior (mean 1) on every rater's "
                             "reliability; larger keeps the reliabilities nearer 1.", default=2.0, ge=1),
                      Option("max_iter", int, "Most L-BFGS iterations.", default=2000, ge=1),
                      Option("tol", float, "L-BFGS tolerance (gradient and relative change of the objective).",
                             default=1e-8, gt=0),
                  )),
)


def declared(name: str) -> RankingMethod:
    """The declaration of the ranking method called ``name`` (what its estimator reads)."""
    for method in RANKING_METHODS:
        if method.name == name:
            return method
    raise ValueError(f"no ranking method is declared as {name!r}; declared: "
                     f"{', '.join(m.name for m in RANKING_METHODS)}")
