"""Every aggregation method's one declaration: its names, colour, credit, where it runs, its hyper-parameters (with
their defaults) and where its estimator lives.

Nothing here imports numpy: the command line builds its ``--method`` / ``--param`` flags, their help and its usage
errors from these declarations alone, and an estimator's module is imported when the method is fitted
(:attr:`Method.estimator <stableval.aggregate.method.Method.estimator>`). Each estimator reads its declaration
(``METHOD = declared("ds")``, ``PARAMETERS = METHOD.params``); its ``__init__`` repeats the defaults, as
scikit-learn's estimators must, and refuses to build when they differ (:meth:`Estimator.declared_params
<stableval.aggregate._base.Estimator.declared_params>`). The registry (:mod:`stableval.aggregate.registry`) lists
:data:`METHODS` in this order. To add a method, write its estimator module and its declaration below.

>>> [method.name for method in METHODS][:3], declared("ds").param("max_iter").default
(['mv', 'ds', 'stableval'], 500)
"""

from __future__ import annotations

import math
from dataclasses import replace

from stableval._options import MAX_SEED, MAX_STARTS, Option
from stableval.aggregate.method import Method
from stableval.aggregate.parameters import ACCELERATION, MAX_ITER, TOL, em_settings
from stableval.aggregate.ties import describe_ties, tie_rules

__all__ = [
    "LEARNT_PRIORS",
    "MACE_FITS",
    "MACE_STARTS",
    "METHODS",
    "ORDINAL_INITS",
    "STABLEVAL_INITS",
    "TIE_POLICIES",
    "declared",
]

#: majority vote's tie rules (:mod:`stableval.aggregate.ties`; all but ``exclude``: every response gets a level)
TIE_POLICIES = tie_rules("split", "lowest", "highest", "random", "first")
#: STABLEVAL's ``init`` values
STABLEVAL_INITS = ("best", "paper", "soft", "ml")
#: STABLEVAL's ``alpha_pi`` values learnt from the data (empirical Bayes) instead of given
LEARNT_PRIORS = ("auto", "pooled")
#: MACE's ``method`` values: variational Bayes or smoothed maximum likelihood
MACE_FITS = ("vb", "em")
#: how MACE's restarts draw the spamming weights: from the votes (renaming levels changes nothing), or as crowd-kit
MACE_STARTS = ("label-blind", "crowdkit")
#: the ordinal raters' ``init`` values
ORDINAL_INITS = ("best", "soft", "hard")


_MAX_ITER, _TOL = em_settings()

#: every method, in the order tables and plots show them
METHODS: tuple[Method, ...] = (
    Method(
        name="mv", label="MV", title="Majority vote", colour="#7f7f7f",
        estimator_at="stableval.aggregate.majority_vote:MajorityVote", credit="hard", batch="stacked",
        rater_model=False, distributed=True, default=True,
        summary="The most frequent level per response; ties split the credit equally by default (or: first in file "
                "order, lowest, highest, random).",
        params=(
            Option("ties", str, f"What a tie for the most votes earns: {describe_ties(TIE_POLICIES)}.",
                   default="split", choices=TIE_POLICIES),
            Option("seed", int, "Seed of ties=random (the commands pass their --seed), and of ties=first where the "
                                "file order is unknown.", default=0, ge=0, le=MAX_SEED, none_ok=True),
        ),
    ),
    Method(
        name="ds", label="DS", title="Dawid–Skene", colour="#1f77b4",
        estimator_at="stableval.aggregate.dawid_skene:DawidSkene", credit="hard", batch="em", rater_model=True,
        distributed=True, default=True,
        summary="Dawid & Skene (1979) maximum-likelihood rater confusion matrices; a response earns the credit of "
                "its most probable level.",
        params=(_MAX_ITER, _TOL, replace(ACCELERATION, default="auto")),
    ),
    Method(
        name="stableval", label="STABLEVAL", title="STABLEVAL (Bayesian Dawid–Skene)", colour="#d62728",
        estimator_at="stableval.aggregate.stableval:Stableval", credit="soft", batch="em", rater_model=True,
        distributed=True, default=True, primary=True,
        summary="Bonagiri et al. (2026) MAP Dawid–Skene with Dirichlet priors, fitted from several starts; a "
                "response earns its posterior expected credit.",
        params=(
            Option("alpha_mu", float, "Dirichlet concentration on the class priors (1 = no prior; below 1 the MAP "
                                      "update is not defined).", default=1.01, ge=1),
            Option("alpha_pi", float, "Dirichlet concentration on every confusion row (1 = no prior, as the paper's "
                                      "experiments), or learnt from the data: pooled (a hierarchical prior that "
                                      "shrinks each rater's rows towards the crowd's by an empirical-Bayes strength: "
                                      "sparse raters a lot, prolific ones hardly) or auto (one symmetric "
                                      "concentration by empirical Bayes).", default="pooled", ge=1,
                   choices=LEARNT_PRIORS),
            Option("epsilon", float, "Off-diagonal mass of Algorithm 1's initial confusion matrices (1 − ε)I + ε/K.",
                   default=0.1, gt=0, lt=1),
            Option("init", str, "best (every start below plus n_starts random ones; the highest log posterior "
                                "wins), paper (Algorithm 1: hard-majority priors, near-identity confusion, E-step "
                                "first), soft (vote shares, M-step first, as Dawid–Skene) or ml (the Dawid–Skene "
                                "solution, then MAP EM).", default="best", choices=STABLEVAL_INITS,
                   aliases=(("majority", "paper"),)),
            Option("n_starts", int, "Random starts with init=best: the soft vote shares mixed half and half with a "
                                    "random distribution per response.", default=0, ge=0, le=MAX_STARTS,
                   size_bound=True),
            Option("seed", int, "Seed of the random starts.", default=0, ge=0, le=MAX_SEED),
            replace(ACCELERATION, default="auto", help=ACCELERATION.help + " With init=paper, none reproduces "
                                                                          "Algorithm 1 step by step."),
            replace(_MAX_ITER, help="Most EM iterations (E-steps) per start."),
            replace(_TOL, help="Stop when one EM step improves the log posterior by less than tol · max(1, "
                               "|log posterior|)."),
        ),
    ),
    Method(
        name="glad", label="GLAD", title="GLAD (Whitehill et al. 2009)", colour="#8c564b",
        estimator_at="stableval.aggregate.glad:GLAD", credit="hard", batch="each", rater_model=True,
        why_in_memory="its M-step fits one difficulty per response jointly with the raters' abilities, by conjugate "
                      "gradients over every judgment: it needs the judgments in memory, not counts summed over "
                      "partitions",
        summary="Whitehill et al. (2009) rater ability × response difficulty, EM with a conjugate-gradient M-step "
                "(crowd-kit's settings); diagnose adds each response's difficulty 1/beta.",
        params=(
            replace(MAX_ITER, default=100, help="Most EM iterations (0: the E-step of the start only, as crowd-kit "
                                                "allows).", ge=0),
            replace(TOL, default=1e-5, help="Stop when the mean expected log-likelihood per (judgment, level) "
                                            "improves by less than this (crowd-kit's criterion)."),
            Option("m_step_max_iter", int, "Most conjugate-gradient iterations per M-step.", default=25, ge=1),
            Option("m_step_tol", float, "Gradient tolerance of each M-step.", default=1e-2, gt=0),
            Option("ability_prior_mean", float, "Mean of the N(mean, 1) prior on every rater's ability α_r.",
                   default=1.0),
            Option("log_beta_prior_mean", float, "Mean of the N(mean, 1) prior on every response's log inverse "
                                                 "difficulty log β_i.", default=1.0),
        ),
    ),
    Method(
        name="mace", label="MACE", title="MACE (Hovy et al. 2013)", colour="#e377c2",
        estimator_at="stableval.aggregate.mace:MACE", credit="hard", batch="each", rater_model=True,
        why_in_memory="its variational updates run over every judgment's own spam-or-know posterior, from several "
                      "random restarts, not over the vote counts or Dawid-Skene E-step the partitions compute",
        summary="Hovy et al. (2013) rater competence and spamming distributions, variational Bayes with "
                "Beta/Dirichlet priors from random restarts (crowd-kit's settings).",
        params=(
            Option("n_restarts", int, "Random restarts; the highest marginal log-likelihood wins (restart j is "
                                      "seeded seed + j).", default=10, ge=1, le=MAX_STARTS,
                   size_bound=True),
            replace(_MAX_ITER, help="Most EM iterations (M-step then E-step) per restart (crowd-kit always runs "
                                    "50)."),
            replace(TOL, default=1e-7, help="Stop a restart when the marginal log-likelihood changes by less than "
                                            "tol · max(1, |ℓ|); 0 = always max_iter, as crowd-kit does."),
            Option("method", str, "vb (variational Bayes with the priors below, the paper's §2.2) or em (smoothed "
                                  "maximum likelihood).", default="vb", choices=MACE_FITS),
            Option("alpha", float, "Beta prior pseudo-count on spamming (vb).", default=0.5, gt=0),
            Option("beta", float, "Beta prior pseudo-count on knowing the answer (vb).", default=0.5, gt=0),
            Option("strategy_prior", float, "Symmetric Dirichlet pseudo-count on each spamming distribution ξ_r "
                                            "(vb).", default=10.0, gt=0),
            Option("smoothing", float, "Added to every expected count under em; none = 0.01/K (the paper's code and "
                                       "crowd-kit).", default=None, ge=0),
            Option("default_noise", float, "Random starts draw every weight uniformly from [1, 2 + noise) before "
                                           "normalising (crowd-kit's draw).", default=0.5, ge=0),
            Option("seed", int, "Seed of the random restarts.", default=0, ge=0, le=MAX_SEED),
            Option("start", str, "label-blind (each rater's spamming weights drawn per level from what the votes "
                                 "say of it — the rater's and the crowd's count of that level — so renaming or "
                                 "reordering the levels changes nothing) or crowdkit (crowd-kit's draw, level by "
                                 "level in code order, for parity with crowd-kit).", default="label-blind",
                   choices=MACE_STARTS),
        ),
    ),
    Method(
        name="ordinal", label="ORDINAL", title="Ordinal raters (ordered-probit Dawid–Skene)", colour="#8c564b",
        estimator_at="stableval.aggregate.ordinal:OrdinalRaters", credit="soft", batch="each", rater_model=True,
        distributed=True,
        summary="Dawid–Skene whose confusion rows are ordered-probit around the true level, with a leniency shift "
                "and a spread per rater (McKelvey & Zavoina 1975; Johnson 1996); a response earns its posterior "
                "expected credit.",
        params=(
            Option("shift_sd", float, "Prior sd of every rater's shift b_r, in levels (b_r ~ N(0, shift_sd²)).",
                   default=1.0, gt=0),
            Option("spread", float, "Prior median of every rater's spread s_r, in levels.", default=0.5, gt=0),
            Option("spread_sd", float, "Prior sd of log s_r (weak by default: a factor e either way is one sd).",
                   default=1.0, gt=0),
            Option("alpha_mu", float, "Dirichlet concentration on the class priors (1 = no prior; below 1 the MAP "
                                      "update is not defined).", default=1.01, ge=1),
            Option("strength", float, "Pseudo-judgments per confusion row pulling it towards the rater's "
                                      "ordered-probit row: inf = the purely parametric model, 0 = free rows (MAP "
                                      "Dawid–Skene), auto = chosen by empirical Bayes.", default="auto", ge=0,
                   le=math.inf, choices=("auto",), aliases=(("inf", math.inf),)),
            Option("init", str, "soft (vote shares, M-step first), hard (majority vote, ties split) or best (both; "
                                "the higher log posterior wins).", default="best", choices=ORDINAL_INITS),
            replace(_MAX_ITER, help="Most EM iterations (E-steps) per start and stage."),
            replace(_TOL, help="Stop when one EM step improves the log posterior by less than tol · max(1, "
                               "|log posterior|)."),
        ),
    ),
    Method(
        name="onecoin", label="OneCoin", title="One-coin Dawid–Skene", colour="#17becf",
        estimator_at="stableval.aggregate.one_coin:OneCoinDawidSkene", credit="hard", batch="each",
        rater_model=True, distributed=True,
        summary="Dawid–Skene with one accuracy per rater (the one-coin model of Zhang et al. 2016, as crowd-kit "
                "fits it); a response earns the credit of its most probable level.",
        params=(_MAX_ITER, _TOL),
    ),
    Method(
        name="wawa", label="Wawa", title="Wawa (worker agreement with aggregate)", colour="#bcbd22",
        estimator_at="stableval.aggregate.wawa:Wawa", credit="hard", batch="stacked", rater_model=False,
        distributed=True,
        summary="Majority vote weighted by each rater's agreement with the plain majority (crowd-kit's Wawa).",
    ),
    Method(
        name="zbs", label="ZBS", title="Zero-Based Skill", colour="#aec7e8",
        estimator_at="stableval.aggregate.zero_based_skill:ZeroBasedSkill", credit="hard", batch="each",
        rater_model=False, distributed=True,
        summary="A vote weighted by rater skills learnt by steps towards each rater's agreement with it (crowd-kit's "
                "ZeroBasedSkill).",
        params=(
            Option("n_iter", int, "Rounds of (weighted vote, skill step); all are run, as in crowd-kit (0: the "
                                  "plain vote).", default=100, ge=0),
            Option("lr_init", float, "First learning rate of the skill step skill += lr · (agreement − skill) (1 "
                                     "sets every skill to its agreement at once).", default=1.0, gt=0),
            Option("lr_steps_to_reduce", int, "The learning rate is reduced every this many rounds.", default=20,
                   ge=1),
            Option("lr_reduce_factor", float, "By this factor.", default=0.5, gt=0),
            Option("eps", float, "Every skill starts at 1/K + eps (K = distinct labels given).", default=1e-5),
        ),
    ),
)


def declared(name: str) -> Method:
    """The declaration of the method called ``name`` (what its estimator reads)."""
    for method in METHODS:
        if method.name == name:
            return method
    raise ValueError(f"no method is declared as {name!r}; declared: {', '.join(m.name for m in METHODS)}")
