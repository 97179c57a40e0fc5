"""Prediction-powered Bradley–Terry: pairwise votes of a few people and of LLM judges, one ranking with valid intervals.

Boyeau, Angelopoulos, Yosef, Malik & Jordan (2024), "AutoEval done right: using synthetic data for model
evaluation" (arXiv:2403.07008), rank models from pairwise comparisons by fitting the Bradley–Terry model
(Bradley & Terry 1952) as a logistic regression with prediction-powered inference: the people's votes are the gold
outcomes, an LLM judge's verdicts the predictions. The estimator is PPI++ M-estimation (Angelopoulos, Duchi & Zrnic
2023, "PPI++: Efficient prediction-powered inference", arXiv:2311.01453): with ``x = e_a − e_b`` (agent a against
agent b, the last agent's strength fixed at 0) and the logistic loss ``ℓ(θ; x, y) = −y xᵀθ + log(1 + exp(xᵀθ))``,

    θ̂ = argmin  λ/N Σ_unlabelled ℓ(θ; x, ŷ) + 1/n Σ_labelled [ℓ(θ; x, y) − λ ℓ(θ; x, ŷ)]

(convex for λ in [0, 1]; solved by Newton's method), with the sandwich covariance
``H⁻¹ (n/N · Cov(λ ∇ℓ(ŷ) unlabelled) + Cov(∇ℓ(y) − λ ∇ℓ(ŷ) labelled)) H⁻¹ / n`` and λ tuned to minimise its trace,
re-estimated once at the tuned estimate — the recipe of the authors' package ``ppi_py`` (``ppi_logistic_ci``), which
the tests check.

The unit is a **comparison**: one (item, pair of agents). Its people's outcome ``y`` is the share of the people's
votes on it won by the pair's first agent (a tie counts ½), its judge outcome ``ŷ`` the same over the LLM judges'
verdicts. Comparisons both kinds voted on are labelled, those only judges voted on unlabelled; comparisons only
people voted on count in the people-only ratings, not in PPI. Ratings are on the Elo-like scale of
:class:`~stableval.aggregate.BradleyTerry` (``1000 + 400 · log10`` of the strength over the geometric mean), with
normal (CLT) intervals; rank intervals and P(a ranks above b) come from ``draws`` samples of the estimate's normal
approximation (a parametric bootstrap).

>>> import pandas as pd
>>> from stableval.data import pairwise_from_frame
>>> rng = np.random.default_rng(0)
>>> strength = {"A": 1.0, "B": 0.0, "C": -1.0}
>>> rows = []
>>> for i in range(300):
...     a, b = rng.choice(list(strength), 2, replace=False)
...     p = 1 / (1 + np.exp(strength[b] - strength[a]))
...     rows.append((f"q{i}", a, b, "judge", "a" if rng.random() < min(1.0, p + 0.1) else "b"))
...     if i < 80:
...         rows.append((f"q{i}", a, b, "alice", "a" if rng.random() < p else "b"))
>>> votes = pairwise_from_frame(pd.DataFrame(rows, columns=["item", "agent_a", "agent_b", "rater", "winner"]))
>>> board = ppi_bradley_terry(votes, {"alice": "human", "judge": "llm"}, draws=200)
>>> board.ratings["agent"].tolist(), int(board.ratings["both"].iloc[0] > 0)
(['A', 'B', 'C'], 1)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from scipy.special import expit, ndtr

from stableval._json import jsonable, matrix, records
from stableval.console import Displayed
from stableval.data.pairwise import PairwiseTable
from stableval.data.raters import RaterInfo
from stableval.errors import InputError
from stableval.evaluate.ppi import normal_quantile
from stableval.evaluate.scores import competition_ranks, win_probabilities
from stableval.wording import plural

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console

__all__ = ["MIN_COMPARISONS", "LogisticFit", "PPIPairwise", "comparisons", "ppi_bradley_terry", "ppi_logistic"]

#: the fewest comparisons both people and judges must have voted on
MIN_COMPARISONS = 10
#: Elo-like scale of the ratings (as :class:`~stableval.aggregate.BradleyTerry`)
SCALE, BASE = 400.0, 1000.0


@dataclass(frozen=True)
class LogisticFit:
    """A (prediction-powered) logistic regression: coefficients, their covariance and the weight λ.

    Attributes:
        theta: (d,) coefficients.
        covariance: (d, d) covariance of ``theta`` (already divided by n).
        lam: the power-tuning weight used (0: the people-only, classical fit).
        n_iter: Newton iterations of the last fit.
    """

    theta: np.ndarray
    covariance: np.ndarray
    lam: float
    n_iter: int

    def interval(self, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        """Normal intervals of every coefficient."""
        half = normal_quantile(confidence) * np.sqrt(np.diag(self.covariance))
        return self.theta - half, self.theta + half


def _newton(x: np.ndarray, y: np.ndarray, yhat: np.ndarray, x_rest: np.ndarray, yhat_rest: np.ndarray, lam: float,
            max_iter: int = 100, tol: float = 1e-12) -> tuple[np.ndarray, int]:
    """The minimiser of the rectified logistic loss (convex for λ in [0, 1])."""
    n, n_rest = len(y), max(len(yhat_rest), 1)

    def loss(theta: np.ndarray) -> float:
        eta, eta_rest = x @ theta, x_rest @ theta
        soft, soft_rest = np.logaddexp(0.0, eta), np.logaddexp(0.0, eta_rest)
        return float(lam / n_rest * np.sum(soft_rest - yhat_rest * eta_rest)
                     + np.sum(soft - y * eta) / n - lam / n * np.sum(soft - yhat * eta))

    theta = np.zeros(x.shape[1])
    current = loss(theta)
    iteration = 0
    for iteration in range(1, max_iter + 1):  # noqa: B007 - reported
        p, p_rest = expit(x @ theta), expit(x_rest @ theta)
        grad = lam / n_rest * x_rest.T @ (p_rest - yhat_rest) + x.T @ (p - y) / n - lam / n * x.T @ (p - yhat)
        if np.max(np.abs(grad)) <= tol:
            break
        hess = (lam / n_rest * (x_rest * (p_rest * (1 - p_rest))[:, None]).T @ x_rest
                + (1 - lam) / n * (x * (p * (1 - p))[:, None]).T @ x)
        step = np.linalg.lstsq(hess, -grad, rcond=None)[0]
        t = 1.0
        while t > 1e-10:
            candidate = loss(theta + t * step)
            if candidate <= current + 1e-4 * t * float(grad @ step):
                break
            t *= 0.5
        if t <= 1e-10:
            break
        theta, current = theta + t * step, candidate
    return theta, iteration


def _statistics(theta: np.ndarray, x: np.ndarray, y: np.ndarray, yhat: np.ndarray, x_rest: np.ndarray,
                yhat_rest: np.ndarray, use_rest: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per-comparison gradients (people, judge on labelled, judge on unlabelled) and the inverse Hessian."""
    n, n_rest = len(y), len(yhat_rest)
    p, p_rest = expit(x @ theta), expit(x_rest @ theta)
    if use_rest:
        hess = ((x_rest * (p_rest * (1 - p_rest))[:, None]).T @ x_rest + (x * (p * (1 - p))[:, None]).T @ x) / (
            n + n_rest)
    else:
        hess = (x * (p * (1 - p))[:, None]).T @ x / n
    return (x * (p - y)[:, None], x * (p - yhat)[:, None], x_rest * (p_rest - yhat_rest)[:, None],
            np.linalg.inv(hess))


def _tuned(grads: np.ndarray, grads_hat: np.ndarray, grads_rest: np.ndarray, inverse: np.ndarray) -> float:
    """λ minimising the trace of the sandwich covariance (PPI++), clipped to [0, 1]."""
    n, n_rest = len(grads), len(grads_rest)
    centred, centred_hat = grads - grads.mean(axis=0), grads_hat - grads_hat.mean(axis=0)
    cross = (centred.T @ centred_hat + centred_hat.T @ centred) / n
    spread = np.atleast_2d(np.cov(np.concatenate([grads_hat, grads_rest]).T))
    denominator = 2 * (1 + n / n_rest) * np.trace(inverse @ spread @ inverse)
    lam = np.trace(inverse @ cross @ inverse) / denominator if denominator > 0 else 0.0
    return float(np.clip(lam, 0.0, 1.0))


def ppi_logistic(x: np.ndarray, y: np.ndarray, yhat: np.ndarray, x_rest: np.ndarray, yhat_rest: np.ndarray, *,
                 lam: float | None = None) -> LogisticFit:
    """Prediction-powered logistic regression without intercept (PPI++; see the module docstring).

    Args:
        x: (n, d) features of the labelled units; ``y`` their gold outcomes in [0, 1], ``yhat`` the predictions.
        x_rest: (N, d) features of the unlabelled units, ``yhat_rest`` their predictions.
        lam: the power-tuning weight (``None``: tuned, then re-tuned once at the tuned estimate; 0: classical).

    >>> x = np.array([[1.0], [-1.0], [1.0], [-1.0]])
    >>> fit = ppi_logistic(x, np.array([1.0, 0.0, 1.0, 1.0]), np.array([1.0, 0.0, 1.0, 1.0]), x, np.ones(4), lam=0)
    >>> round(float(fit.theta[0]), 4)  # classical (λ = 0): the +1 side won 3 of 4, so θ = log 3
    1.0986
    """
    x, x_rest = np.asarray(x, dtype=float), np.asarray(x_rest, dtype=float)
    y, yhat, yhat_rest = (np.asarray(a, dtype=float) for a in (y, yhat, yhat_rest))
    if lam is None:
        first, _ = _newton(x, y, yhat, x_rest, yhat_rest, 1.0)
        lam_one = _tuned(*_statistics(first, x, y, yhat, x_rest, yhat_rest, True))
        second, _ = _newton(x, y, yhat, x_rest, yhat_rest, lam_one)
        lam = _tuned(*_statistics(second, x, y, yhat, x_rest, yhat_rest, True))
    theta, n_iter = _newton(x, y, yhat, x_rest, yhat_rest, lam)
    grads, grads_hat, grads_rest, inverse = _statistics(theta, x, y, yhat, x_rest, yhat_rest, lam != 0)
    d = x.shape[1]
    rest = np.atleast_2d(np.cov((lam * grads_rest).T)).reshape(d, d) if len(grads_rest) > 1 else np.zeros((d, d))
    own = np.atleast_2d(np.cov((grads - lam * grads_hat).T)).reshape(d, d)
    n = len(y)
    sandwich = inverse @ (n / max(len(yhat_rest), 1) * rest + own) @ inverse / n
    return LogisticFit(theta=theta, covariance=sandwich, lam=float(lam), n_iter=n_iter)


def comparisons(votes: PairwiseTable, kinds: Mapping[str, str]) -> tuple[pd.DataFrame, list[str]]:
    """One row per (item, pair of agents): ``item, first, second`` (agent codes, first < second), ``people`` and
    ``judge`` (share of that kind's votes won by ``first``, ties ½, vote weights respected; NaN where none), and the
    vote counts ``people_votes, judge_votes``; and the agent names. ``kinds`` maps rater names to ``human``/``llm``."""
    frame = votes.frame
    agents = sorted(set(frame["agent_a"]) | set(frame["agent_b"]))
    code = {name: i for i, name in enumerate(agents)}
    a = frame["agent_a"].map(code).to_numpy(dtype=np.int64)
    b = frame["agent_b"].map(code).to_numpy(dtype=np.int64)
    winner = frame["winner"].to_numpy(dtype=object)
    share_a = np.where(winner == "a", 1.0, np.where(winner == "tie", 0.5, 0.0))
    share = np.where(a < b, share_a, 1.0 - share_a)
    kind = frame["rater"].astype(str).map(dict(kinds)).to_numpy(dtype=object)
    weight = frame["weight"].to_numpy(dtype=float) if "weight" in frame.columns else np.ones(len(frame))
    cells = pd.DataFrame({"item": frame["item"].astype(str).to_numpy(), "first": np.minimum(a, b),
                          "second": np.maximum(a, b), "kind": kind, "won": share * weight, "weight": weight,
                          "votes": 1})
    cells = cells[np.isin(kind, ("human", "llm"))]
    grouped = cells.groupby(["item", "first", "second", "kind"], sort=True)[["won", "weight", "votes"]].sum()
    grouped["share"] = grouped["won"] / grouped["weight"].where(grouped["weight"] > 0)
    wide = grouped[["share", "votes"]].unstack("kind")
    out = pd.DataFrame(index=wide.index)
    for name, kind_name in (("people", "human"), ("judge", "llm")):
        out[name] = wide[("share", kind_name)] if ("share", kind_name) in wide.columns else np.nan
        votes_of = wide[("votes", kind_name)] if ("votes", kind_name) in wide.columns else 0
        out[f"{name}_votes"] = pd.Series(votes_of, index=out.index).fillna(0).astype(np.int64)
    return out.reset_index(), agents


def _design(first: np.ndarray, second: np.ndarray, n_agents: int) -> np.ndarray:
    """(n, A − 1): +1 for the first agent, −1 for the second; the last agent's column dropped (its strength 0)."""
    x = np.zeros((len(first), n_agents))
    x[np.arange(len(first)), first] = 1.0
    x[np.arange(len(first)), second] = -1.0
    return x[:, :-1]


def _ratings(fit: LogisticFit, n_agents: int) -> tuple[np.ndarray, np.ndarray]:
    """Ratings (Elo-like scale, geometric mean strength at 1000) and their covariance, from a fit with the last
    agent fixed at 0."""
    theta = np.append(fit.theta, 0.0)
    full = np.zeros((n_agents, n_agents))
    full[:-1, :-1] = fit.covariance
    centre = np.eye(n_agents) - 1.0 / n_agents
    factor = SCALE / np.log(10.0)
    return BASE + factor * (centre @ theta), factor**2 * centre @ full @ centre.T


@dataclass(frozen=True)
class PPIPairwise(Displayed):
    """Result of :func:`ppi_bradley_terry`.

    Attributes:
        ratings: one row per agent, best PPI rating first: ``agent``; for each of ``people``, ``judge`` and
            ``ppi``: ``_rating``, ``_ci_low``, ``_ci_high`` (normal intervals, rating points); ``ppi_se``;
            ``comparisons`` (the agent's comparisons any kind voted on), ``both`` (of them labelled);
            ``rank, rank_low, rank_high`` (PPI; intervals from the normal draws), ``people_rank``, ``judge_rank``.
        differences: one row per pair (the better first): ``agent, other, difference`` (PPI rating points),
            ``ci_low, ci_high``, ``p_beats`` (P(agent's strength above other's), normal approximation) and
            ``win_probability`` (the fitted P(agent wins a comparison against other)).
        win_probability: agents × agents, P(row ranks above column) over the draws.
        settings: λ, comparison counts, draws, seed, confidence.
        notes: what was left out and why.
    """

    ratings: pd.DataFrame
    differences: pd.DataFrame
    win_probability: pd.DataFrame
    settings: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: settings, notes, ratings, differences, win probabilities."""
        return {"settings": jsonable(self.settings), "notes": list(self.notes), "ppi_ratings": records(self.ratings),
                "differences": records(self.differences), "win_probability": matrix(self.win_probability)}

    def to_frame(self) -> pd.DataFrame:
        """The per-agent ratings (CSV)."""
        return self.ratings

    def render(self, console: Console) -> None:
        """People-only, judge-only and PPI ratings side by side."""
        from rich import box
        from rich.table import Table

        from stableval.markup import literal

        s = self.settings
        percent = round(s["confidence"] * 100)
        console.print(f"\n[bold]Prediction-powered Bradley–Terry[/] (Boyeau et al. 2024): "
                      f"{s['both']:,} comparisons voted on by people and judges, {s['judge_only']:,} by judges only, "
                      f"{s['people_only']:,} by people only; λ = {s['lam']:.2f}")
        table = Table(box=box.SIMPLE_HEAVY, show_edge=False)
        for name in ("Agent", f"People only [{percent}% CI]", f"Judge only [{percent}% CI]",
                     f"PPI++ [{percent}% CI]", "Width PPI/people", "PPI rank"):
            table.add_column(name, justify="left" if name == "Agent" else "right")
        row: Any
        for row in self.ratings.itertuples(index=False):
            cells = [f"{getattr(row, f'{k}_rating'):.0f} [{getattr(row, f'{k}_ci_low'):.0f}, "
                     f"{getattr(row, f'{k}_ci_high'):.0f}]" for k in ("people", "judge", "ppi")]
            ratio = (row.ppi_ci_high - row.ppi_ci_low) / (row.people_ci_high - row.people_ci_low)
            rank = f"{row.rank}" + (f" ({row.rank_low}–{row.rank_high})" if row.rank_low != row.rank_high else "")
            table.add_row(literal(str(row.agent)), *cells, f"{ratio:.2f}", rank)
        console.print(table)
        console.print(f"Ratings: 1000 + 400·log10(strength / geometric mean); {percent}% normal intervals; rank "
                      f"intervals from {s['draws']:,} draws of the estimate (seed {s['seed']}). Judge-only "
                      "intervals ignore the judge's bias.")
        for note in self.notes:
            console.print(f"note: {literal(note)}")


def ppi_bradley_terry(votes: PairwiseTable, raters: RaterInfo | Mapping[str, str], *, lam: float | None = None,
                      draws: int = 1000, seed: int | None = 0, confidence: float = 0.95,
                      min_comparisons: int = MIN_COMPARISONS) -> PPIPairwise:
    """People-only, judge-only and prediction-powered Bradley–Terry ratings of every agent, side by side.

    Args:
        votes: pairwise votes of people and LLM judges (criteria, if any, are pooled).
        raters: the raters' kinds: a :class:`~stableval.data.raters.RaterInfo` or a mapping name → ``human``/``llm``.
        lam: the power-tuning weight (``None``: tuned, PPI++; 1: plain PPI).
        draws: samples of the estimate's normal approximation for rank intervals (0 = none).
        seed: of the draws.
        confidence: of the intervals.
        min_comparisons: the fewest comparisons both kinds must have voted on.
    """
    if draws < 0:
        raise ValueError(f"draws must be >= 0, got {draws}")
    kinds = (dict(zip(map(str, raters.raters), map(str, raters.kind), strict=True))
             if isinstance(raters, RaterInfo) else {str(k): str(v) for k, v in raters.items()})
    table, agents = comparisons(votes, kinds)
    n_agents = len(agents)
    has_people, has_judge = table["people"].notna().to_numpy(), table["judge"].notna().to_numpy()
    labelled, rest, people_only = has_people & has_judge, has_judge & ~has_people, has_people & ~has_judge
    if labelled.sum() < min_comparisons or not rest.any():
        raise InputError(f"too few comparisons for prediction-powered Bradley–Terry: {int(labelled.sum()):,} voted "
                         f"on by people and LLM judges (the minimum is {min_comparisons}), {int(rest.sum()):,} by "
                         "judges only (at least 1)", file=votes.source, value=int(labelled.sum()),
                         allowed=f"at least {min_comparisons} (item, agent pair) comparisons with votes of both kinds, "
                                 "and some with judge verdicts only")
    first, second = table["first"].to_numpy(), table["second"].to_numpy()
    x = _design(first, second, n_agents)
    y, yhat = table["people"].to_numpy(float), table["judge"].to_numpy(float)
    try:
        ppi = ppi_logistic(x[labelled], y[labelled], yhat[labelled], x[rest], yhat[rest], lam=lam)
        human = ppi_logistic(x[has_people], y[has_people], y[has_people], x[:0], yhat[:0], lam=0.0)
        machine = ppi_logistic(x[has_judge], yhat[has_judge], yhat[has_judge], x[:0], yhat[:0], lam=0.0)
    except np.linalg.LinAlgError:
        raise InputError("the Bradley–Terry strengths are not identified: some agents were never compared with the "
                         "others", file=votes.source, allowed="comparisons that connect every agent") from None
    z = normal_quantile(confidence)
    out = pd.DataFrame({"agent": agents})
    covariances = {}
    for name, fit in (("people", human), ("judge", machine), ("ppi", ppi)):
        rating, covariance = _ratings(fit, n_agents)
        se = np.sqrt(np.clip(np.diag(covariance), 0.0, None))
        out[f"{name}_rating"], out[f"{name}_ci_low"], out[f"{name}_ci_high"] = rating, rating - z * se, rating + z * se
        covariances[name] = covariance
    out["ppi_se"] = np.sqrt(np.clip(np.diag(covariances["ppi"]), 0.0, None))
    involved = np.zeros(n_agents, dtype=np.int64)
    both = np.zeros(n_agents, dtype=np.int64)
    np.add.at(involved, np.concatenate([first, second]), 1)
    np.add.at(both, np.concatenate([first[labelled], second[labelled]]), 1)
    out["comparisons"], out["both"] = involved, both
    point = out["ppi_rating"].to_numpy()
    out["rank"] = competition_ranks(point)
    tail = (1 - confidence) / 2
    if draws:
        rng = np.random.default_rng(seed)
        sampled = rng.multivariate_normal(point, covariances["ppi"], size=draws, method="eigh")
        low, high = np.quantile(competition_ranks(sampled), [tail, 1 - tail], axis=0, method="nearest")
        win = win_probabilities(sampled)
    else:
        low = high = out["rank"].to_numpy()
        win = np.full((n_agents, n_agents), np.nan)
    out["rank_low"], out["rank_high"] = np.asarray(low, dtype=np.int64), np.asarray(high, dtype=np.int64)
    out["people_rank"] = competition_ranks(out["people_rating"].to_numpy())
    out["judge_rank"] = competition_ranks(out["judge_rating"].to_numpy())
    order = np.argsort(-point, kind="stable")
    rows = []
    factor = SCALE / np.log(10.0)
    cov = covariances["ppi"]
    for i, a in enumerate(order):
        for b in order[i + 1:]:
            diff = float(point[a] - point[b])
            spread = float(np.sqrt(max(cov[a, a] + cov[b, b] - 2 * cov[a, b], 0.0)))
            rows.append({"agent": agents[a], "other": agents[b], "difference": diff, "ci_low": diff - z * spread,
                         "ci_high": diff + z * spread,
                         "p_beats": float(ndtr(diff / spread)) if spread > 0 else float(diff > 0),
                         "win_probability": float(expit(diff / factor))})
    notes = list(votes.notes)
    if people_only.any():
        notes.append(f"{plural(int(people_only.sum()), 'comparison')} voted on by people but by no judge count in "
                     "the people-only ratings, not in PPI")
    if "criterion" in votes.frame.columns and votes.frame["criterion"].nunique() > 1:
        notes.append("the votes' criteria are pooled")
    return PPIPairwise(
        ratings=out.iloc[order].reset_index(drop=True),
        differences=pd.DataFrame(rows, columns=["agent", "other", "difference", "ci_low", "ci_high", "p_beats",
                                                "win_probability"]),
        win_probability=pd.DataFrame(win, index=agents, columns=agents),
        settings={"lam": ppi.lam, "lam_mode": "tuned (PPI++)" if lam is None else lam, "both": int(labelled.sum()),
                  "judge_only": int(rest.sum()), "people_only": int(people_only.sum()), "draws": draws,
                  "seed": seed, "confidence": confidence, "min_comparisons": min_comparisons},
        notes=tuple(notes),
    )
