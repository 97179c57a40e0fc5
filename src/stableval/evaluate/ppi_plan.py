"""How many more human ratings, and on which responses: the budget planner of prediction-powered scores.

From a pilot (people on some responses, the LLM judges on all), each agent's people's credit variance ``σ_y²``,
the judge credit variance ``σ_f²`` and their covariance ``c`` give the interval width that ``n`` people-rated
responses (of the agent's ``N`` judged ones) would reach:

* **people only**: ``2 z σ_y / √n``;
* **PPI++ at random** (what :func:`~stableval.evaluate.ppi_scores` assumes: the responses people rate are a random
  sample): ``2 z √V(n)``, ``V(n) = λ² σ_f² / (N − n) + (σ_y² − 2 λ c + λ² σ_f²) / n`` with the tuned
  ``λ = c / ((1 + n / (N − n)) σ_f²)`` clipped to [0, 1] — the variance :func:`~stableval.evaluate.ppi.ppi_mean`
  estimates, taken at the pilot's moments;
* **active** (Zrnic & Candès 2024, "Active statistical inference", ICML, arXiv:2403.03208): response ``i`` is
  rated with probability ``π_i ∝ √E[(y − λ f)² | i]`` (the responses where the judges are least sure or disagree
  with people most get rated first) and the estimate weights a rated response by ``1 / π_i``
  (:func:`active_mean`), whose variance is ``(N σ_y² + Σ e_i² (1 − π_i) / π_i) / N²``; the active width is the
  PPI++ width times the square root of that variance's ratio to the same at uniform ``π_i = n / N``. The expected
  squared error ``e_i²`` is a least-squares line in the judges' posterior spread of the credit, fitted on the
  pilot's responses that both kinds rated (flat, hence the same as random, when the spread tells nothing).

The target is an interval width (every agent's) or a probability that the whole ranking comes out right, taken as
the product over neighbouring agents (in the pilot's PPI order) of ``Φ(|Δ| / √(se_a² + se_b²))`` at the pilot's
differences ``Δ``, met by the smallest common width.

>>> rng = np.random.default_rng(0)
>>> agent = np.repeat([0, 1], 3000)                       # two agents, 3,000 judged responses each
>>> judge = rng.normal(0.6, 0.2, 6000)
>>> people = np.where(np.arange(6000) % 3000 < 100, judge + rng.normal(0, 0.1, 6000), np.nan)  # pilot: 100
>>> plan = plan_budget(people, judge, agent, ["A", "B"], target_width=0.03)
>>> plan.agents[["agent", "pilot", "need_people_only", "need_ppi"]].values.tolist()
[['A', 100, 803.0, 228.0], ['B', 100, 1155.0, 259.0]]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from scipy.special import ndtr

from stableval._json import jsonable, records
from stableval.console import Displayed
from stableval.errors import InputError
from stableval.evaluate.ppi import MIN_LABELLED, normal_quantile

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console

    from stableval.aggregate import Aggregator
    from stableval.aggregate.registry import Chosen
    from stableval.data.raters import RaterInfo
    from stableval.data.table import AnnotationTable

__all__ = ["BudgetPlan", "active_mean", "active_probabilities", "plan_budget", "plan_ppi", "ppi_variance"]

#: how many budgets the width curve is drawn at
_CURVE_POINTS = 40


def ppi_variance(sigma_y2: float, sigma_f2: float, cov: float, n: np.ndarray | float, total: int, *,
                 sigma_f2_labelled: float | None = None) -> np.ndarray:
    """The PPI++ estimate's variance with ``n`` of ``total`` responses rated by people (λ tuned as
    :func:`~stableval.evaluate.ppi.tuned_lambda` does, clipped to [0, 1]); the people-only variance ``σ_y² / n``
    where every response is rated. ``sigma_f2_labelled``: the judge credit's variance on the people-rated responses
    (default ``sigma_f2``), so that the rectifier's variance is that of the same sample as ``cov``.

    >>> float(ppi_variance(1.0, 1.0, 0.0, 100, 1000))          # an uninformative judge: the people-only variance
    0.01
    >>> round(float(ppi_variance(1.0, 1.0, 0.9, 100, 10**9)), 5)   # ρ = 0.9, unlimited judgments: (1 − ρ²) / n
    0.0019
    """
    n = np.asarray(n, dtype=float)
    rest = np.maximum(total - n, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = np.where((rest > 0) & (sigma_f2 > 0), cov / ((1.0 + n / np.maximum(rest, 1e-300)) * sigma_f2), 0.0)
        lam = np.clip(lam, 0.0, 1.0)
        judge_part = np.where(rest > 0, lam**2 * sigma_f2 / np.maximum(rest, 1e-300), 0.0)
        labelled = sigma_f2 if sigma_f2_labelled is None else sigma_f2_labelled
        rectifier = np.maximum(sigma_y2 - 2 * lam * cov + lam**2 * labelled, 0.0)
        return np.asarray(judge_part + rectifier / n)


def active_probabilities(error2: np.ndarray, budget: float) -> np.ndarray:
    """Rating probabilities ``π_i ∝ √error2_i`` summing to ``budget``, capped at 1 (the mass above the cap goes
    to the others), so the expected number of ratings is ``budget``.

    >>> active_probabilities(np.array([4.0, 1.0, 1.0, 0.0]), 2.0).round(3).tolist()
    [1.0, 0.5, 0.5, 0.0]
    """
    weight = np.sqrt(np.clip(np.asarray(error2, dtype=float), 0.0, None))
    budget = float(min(budget, len(weight)))
    if weight.sum() <= 0:
        return np.full(len(weight), budget / max(len(weight), 1))
    pi = np.zeros(len(weight))
    capped = np.zeros(len(weight), dtype=bool)
    for _ in range(len(weight) + 1):
        left = budget - capped.sum()
        free = ~capped & (weight > 0)
        pi[free] = weight[free] * left / weight[free].sum() if weight[free].sum() > 0 else 0.0
        pi[capped] = 1.0
        over = free & (pi > 1.0)
        if not over.any():
            break
        capped |= over
    return np.clip(pi, 0.0, 1.0)


def active_mean(judge: np.ndarray, people: np.ndarray, probability: np.ndarray, *, lam: float = 1.0,
                confidence: float = 0.95) -> tuple[float, float, float]:
    """The active-inference mean (Zrnic & Candès 2024) and its CLT interval: ``mean(λ f_i + (y_i − λ f_i) ξ_i /
    π_i)`` over every judged response, ``ξ_i`` = 1 where people rated it (``people`` not NaN), ``π_i`` the
    probability it was to be rated with. Returns (estimate, low, high).

    >>> f = np.array([0.5, 0.5, 0.5, 0.5]); y = np.array([1.0, np.nan, 0.0, np.nan])
    >>> active_mean(f, y, np.full(4, 0.5))[0]
    0.5
    """
    f, y, pi = (np.asarray(a, dtype=float) for a in (judge, people, probability))
    rated = np.isfinite(y)
    if (pi[rated] <= 0).any():
        raise ValueError("a rated response had rating probability 0")
    term = lam * f + np.where(rated, (np.where(rated, y, 0.0) - lam * f) / np.where(rated, pi, 1.0), 0.0)
    estimate, se = float(term.mean()), float(term.std() / math.sqrt(len(term)))
    z = normal_quantile(confidence)
    return estimate, estimate - z * se, estimate + z * se


@dataclass(frozen=True)
class BudgetPlan(Displayed):
    """Result of :func:`plan_budget` / :func:`plan_ppi`.

    Attributes:
        agents: one row per agent: ``agent``, ``pilot`` (people-rated responses also judged), ``judged`` (N),
            ``rho`` (people–judge correlation of credit), ``lam`` (PPI++ weight at the recommendation),
            ``width_people_now``, ``width_ppi_now``, ``target_width``; ``need_people_only``, ``need_ppi``,
            ``need_active`` (people-rated responses needed; NaN where even all N do not reach the target) and
            ``more_people_only``, ``more_ppi``, ``more_active`` (beyond the pilot); ``width_ppi_planned`` and
            ``width_active_planned`` (the widths predicted at the recommendation).
        curve: width against the extra human budget (``extra``: responses beyond the pilot, shared equally by the
            agents): mean over agents of ``width_people``, ``width_ppi``, ``width_active``.
        items: the responses not yet rated by people: ``agent``, ``item``, ``judge_credit``, ``judge_spread``,
            ``expected_error`` (the predicted root mean square of people − λ·judge), ``p_random`` and ``p_active``
            (probability of rating it under each plan at its recommendation), ``draw_random``, ``draw_active`` (one
            seeded draw of each plan); the most informative (highest ``expected_error``) first.
        settings: target, confidence, seed, and the judgments per response.
        notes: what could not be met and why.
    """

    agents: pd.DataFrame
    curve: pd.DataFrame
    items: pd.DataFrame
    settings: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: settings, notes, per-agent needs, the width curve and the responses to rate."""
        return {"settings": jsonable(self.settings), "notes": list(self.notes), "plan": records(self.agents),
                "curve": records(self.curve), "items": records(self.items)}

    def to_frame(self) -> pd.DataFrame:
        """The per-agent table (CSV)."""
        return self.agents

    def totals(self) -> dict[str, float]:
        """Extra people-rated responses over all agents for each plan (NaN if an agent cannot reach the target)."""
        return {kind: float(self.agents[f"more_{kind}"].sum(min_count=len(self.agents)))
                if self.agents[f"more_{kind}"].notna().all() else float("nan")
                for kind in ("people_only", "ppi", "active")}

    def render(self, console: Console) -> None:
        """The per-agent table, the totals and which responses to rate."""
        from rich import box
        from rich.table import Table

        from stableval.markup import literal

        settings = self.settings
        console.print(f"\n[bold]Human budget plan[/] for {settings['target']} "
                      f"({round(settings['confidence'] * 100)}% intervals)")
        table = Table(box=box.SIMPLE_HEAVY, show_edge=False)
        columns = ["Agent", "Pilot / judged", "ρ", "Width now (people / PPI)", "People only", "PPI++ random",
                   "PPI++ active", "Planned width (PPI / active)"]
        for k, column in enumerate(columns):
            table.add_column(column, justify="left" if k == 0 else "right", style="bold" if k == 0 else None)

        def need(value: Any) -> str:
            return "not reachable" if not np.isfinite(float(value)) else f"+{float(value):,.0f}"

        for row in self.agents.itertuples(index=False):
            table.add_row(literal(str(row.agent)), f"{row.pilot:,} / {row.judged:,}", f"{row.rho:.2f}",
                          f"{row.width_people_now:.3f} / {row.width_ppi_now:.3f}", need(row.more_people_only),
                          need(row.more_ppi), need(row.more_active),
                          f"{row.width_ppi_planned:.3f} / {row.width_active_planned:.3f}")
        console.print(table)
        for line in self.footnotes():
            console.print(literal(line))

    def footnotes(self) -> list[str]:
        """The totals, how to use each plan and the notes."""
        totals = self.totals()
        per = self.settings["judgments_per_response"]
        shown = {k: "not reachable" if not np.isfinite(v) else f"{v:,.0f} responses (≈ {v * per:,.0f} human "
                 "judgments)" for k, v in totals.items()}
        lines = [f"More people-rated responses: people only {shown['people_only']}; PPI++ at random "
                 f"{shown['ppi']}; PPI++ active {shown['active']}.",
                 "PPI++ random: have people rate a random sample of each agent's judged responses (draw_random in "
                 "the JSON/CSV items), then `stableval score --combine ppi`. Active: rate response i with "
                 "probability p_active (draw_active), the judges' least certain first, and estimate with "
                 "stableval.evaluate.ppi_plan.active_mean (Zrnic & Candès 2024)."]
        if len(self.items):
            top = self.items.head(5)
            lines.append("Most informative responses to rate next: " + ", ".join(
                f"{row.item} ({row.agent})" for row in top.itertuples(index=False)) + " (the judges' least certain).")
        lines.extend(f"note: {note}" for note in self.notes)
        return lines


def _needed(width_of: Any, target: float, start: int, total: int) -> float:
    """The smallest n in [start, total] with width_of(n) <= target (NaN if none), by bisection on the monotone
    width."""
    if width_of(start) <= target:
        return float(start)
    if width_of(total) > target:
        return float("nan")
    low, high = start, total
    while high - low > 1:
        middle = (low + high) // 2
        if width_of(middle) <= target:
            high = middle
        else:
            low = middle
    return float(high)


@dataclass(frozen=True)
class _Agent:
    """One agent's pilot moments and responses."""

    n0: int
    total: int
    sigma_y2: float
    sigma_f2: float
    sigma_fl2: float  # the judge credit's variance on the pilot's people-rated responses
    cov: float
    error2: np.ndarray   # expected (y − λ f)² of each response not yet rated (model of the judge spread)
    unrated: np.ndarray  # indices of the responses not yet rated by people

    def width_people(self, n: np.ndarray | float, z: float) -> np.ndarray:
        return np.asarray(2 * z * np.sqrt(self.sigma_y2 / np.asarray(n, dtype=float)))

    def width_ppi(self, n: np.ndarray | float, z: float) -> np.ndarray:
        return np.asarray(2 * z * np.sqrt(ppi_variance(self.sigma_y2, self.sigma_f2, self.cov, n, self.total,
                                                      sigma_f2_labelled=self.sigma_fl2)))

    def active_ratio(self, n: float) -> float:
        """Active / uniform variance of the inverse-probability-weighted estimate at ``n`` people-rated
        responses: ``(N σ_y² + Σ e_i² (1 − π_i) / π_i) / (N σ_y² + Σ e_i² (1 − u) / u)`` over the responses not
        yet rated, ``u`` the uniform probability (at most 1; 1 at either end of the budget)."""
        extra = n - self.n0
        left = len(self.error2)
        if extra <= 0 or left == 0 or extra >= left:
            return 1.0
        uniform = extra / left
        pi = active_probabilities(self.error2, extra)
        with np.errstate(divide="ignore", invalid="ignore"):
            active = float(np.sum(np.where(pi > 0, self.error2 * (1 - pi) / pi, 0.0)))
        flat = float(np.sum(self.error2 * (1 - uniform) / uniform))
        base = self.total * self.sigma_y2
        return min((base + active) / (base + flat), 1.0) if base + flat > 0 else 1.0

    def width_active(self, n: float, z: float) -> float:
        """The PPI++ width scaled by the square root of :meth:`active_ratio`."""
        return float(self.width_ppi(n, z)) * math.sqrt(self.active_ratio(n))


def plan_budget(people: np.ndarray, judge: np.ndarray, agent: np.ndarray, agents: Sequence[str], *,
                target_width: float | None = None, target_correct: float | None = None,
                judge_spread: np.ndarray | None = None, items: Sequence[str] | None = None,
                judgments_per_response: float = 1.0, confidence: float = 0.95, seed: int | None = 0,
                min_labelled: int = MIN_LABELLED, source: str = "<credits>") -> BudgetPlan:
    """Plan the human budget from per-response pilot credits (see the module docstring).

    Args:
        people: (N,) people's credit, NaN where no person rated the response (the pilot).
        judge: (N,) judge credit (responses no judge rated are left out).
        agent: (N,) agent code of each response; ``agents`` their names.
        target_width: the interval width every agent's score should reach; or
        target_correct: the probability that the whole ranking comes out right (exactly one of the two).
        judge_spread: (N,) the judges' posterior spread of each response's credit (active selection's signal).
        items: (N,) the item of each response (for the list of responses to rate).
        judgments_per_response: human judgments a people-rated response takes (to count them).
        confidence, seed: the intervals' level; the seed of the drawn samples.
        min_labelled: the fewest pilot responses per agent rated by both kinds.
    """
    if (target_width is None) == (target_correct is None):
        raise ValueError("give exactly one of target_width and target_correct")
    if target_width is not None and not target_width > 0:
        raise ValueError(f"target_width must be > 0, got {target_width}")
    if target_correct is not None and not 0 < target_correct < 1:
        raise ValueError(f"target_correct must be in (0, 1), got {target_correct}")
    z = normal_quantile(confidence)
    people, judge = np.asarray(people, dtype=float), np.asarray(judge, dtype=float)
    agent = np.asarray(agent, dtype=np.int64)
    spread = np.zeros(len(judge)) if judge_spread is None else np.nan_to_num(np.asarray(judge_spread, dtype=float))
    names = [str(a) for a in agents]
    item_names = np.asarray(items if items is not None else [f"r{i}" for i in range(len(judge))], dtype=object)
    has_judge = np.isfinite(judge)
    labelled = has_judge & np.isfinite(people)
    short = [(names[a], int((labelled & (agent == a)).sum())) for a in range(len(names))
             if (labelled & (agent == a)).sum() < min_labelled]
    if short:
        shown = ", ".join(f"{name!r} {count:,}" for name, count in short[:5])
        raise InputError(f"too few pilot responses rated by both people and LLM judges to plan: {shown} (the "
                         f"minimum is {min_labelled} per agent)", file=source, value=short[0][1],
                         allowed=f"a pilot with at least {min_labelled} responses of every agent rated by people "
                                 "and by an LLM judge")
    fitted = [_fit_agent(people, judge, spread, agent == a, labelled, has_judge) for a in range(len(names))]
    if target_width is not None:
        widths = np.full(len(names), float(target_width))
        target_text = f"a {target_width:g} interval width per agent"
    else:
        assert target_correct is not None
        widths = np.full(len(names), _width_for_ranking(people, judge, agent, labelled, has_judge, fitted,
                                                        float(target_correct), z))
        target_text = f"P(the whole ranking is right) ≥ {target_correct:g} (every agent's width {widths[0]:.4f})"
    rows, notes = [], []
    rng = np.random.default_rng(seed)
    item_rows = []
    for a, (name, fit) in enumerate(zip(names, fitted, strict=True)):
        target = float(widths[a])
        need_people = _needed(lambda n, f=fit: float(f.width_people(n, z)), target, fit.n0, fit.total)
        need_ppi = _needed(lambda n, f=fit: float(f.width_ppi(n, z)), target, fit.n0, fit.total)
        need_active = _needed(lambda n, f=fit: f.width_active(n, z), target, fit.n0, fit.total)
        if not np.isfinite(need_ppi):
            notes.append(f"{name}: even people on all {fit.total:,} judged responses do not reach width "
                         f"{target:.4f} (PPI++ gives {float(fit.width_ppi(fit.total, z)):.4f})")
        at_ppi = need_ppi if np.isfinite(need_ppi) else fit.total
        at_active = need_active if np.isfinite(need_active) else fit.total
        rest = max(fit.total - at_ppi, 0.0)
        lam = float(np.clip(fit.cov / ((1 + at_ppi / rest) * fit.sigma_f2), 0, 1)) if rest > 0 and fit.sigma_f2 > 0 \
            else 0.0
        rows.append({
            "agent": name, "pilot": fit.n0, "judged": fit.total,
            "rho": fit.cov / math.sqrt(fit.sigma_y2 * fit.sigma_fl2) if fit.sigma_y2 * fit.sigma_fl2 > 0 else 0.0,
            "lam": lam, "width_people_now": float(fit.width_people(fit.n0, z)),
            "width_ppi_now": float(fit.width_ppi(fit.n0, z)), "target_width": target,
            "need_people_only": need_people, "need_ppi": need_ppi, "need_active": need_active,
            "more_people_only": need_people - fit.n0, "more_ppi": need_ppi - fit.n0,
            "more_active": need_active - fit.n0,
            "width_ppi_planned": float(fit.width_ppi(at_ppi, z)),
            "width_active_planned": fit.width_active(at_active, z),
        })
        left = len(fit.unrated)
        p_random = np.full(left, min(1.0, (at_ppi - fit.n0) / left) if left else 0.0)
        p_active = active_probabilities(fit.error2, at_active - fit.n0) if left else np.zeros(0)
        item_rows.append(pd.DataFrame({
            "agent": name, "item": item_names[fit.unrated], "judge_credit": judge[fit.unrated],
            "judge_spread": spread[fit.unrated], "expected_error": np.sqrt(fit.error2),
            "p_random": p_random, "p_active": p_active,
            "draw_random": rng.random(left) < p_random, "draw_active": rng.random(left) < p_active,
        }))
    table = pd.DataFrame(rows)
    curve = _curve(fitted, z)
    listed = pd.concat(item_rows, ignore_index=True).sort_values(
        "expected_error", ascending=False, kind="stable").reset_index(drop=True)
    settings = {"target": target_text, "target_width": target_width, "target_correct": target_correct,
                "confidence": confidence, "seed": seed, "judgments_per_response": judgments_per_response}
    return BudgetPlan(agents=table, curve=curve, items=listed, settings=settings, notes=tuple(notes))


def _fit_agent(people: np.ndarray, judge: np.ndarray, spread: np.ndarray, mine: np.ndarray, labelled: np.ndarray,
               has_judge: np.ndarray) -> _Agent:
    """One agent's pilot moments and its expected squared rectifier per unrated response."""
    both = mine & labelled
    y, f = people[both], judge[both]
    f_all = judge[mine & has_judge]
    total = int((mine & has_judge).sum())
    sigma_y2, sigma_f2 = float(y.var()), float(f_all.var(ddof=1)) if f_all.size > 1 else 0.0
    cov = float(((y - y.mean()) * (f - f.mean())).mean())
    lam = float(np.clip(cov / ((1 + both.sum() / max(total - both.sum(), 1)) * sigma_f2), 0, 1)) if sigma_f2 > 0 \
        else 0.0
    residual2 = (y - lam * f - (y - lam * f).mean()) ** 2
    unrated = np.flatnonzero(mine & has_judge & ~labelled)
    signal = spread[both]
    if signal.std() > 0:  # e² ≈ a + b · spread, kept positive
        slope, intercept = np.polyfit(signal, residual2, 1)
        slope = max(float(slope), 0.0)
        error2 = np.maximum(intercept + slope * spread[unrated], 0.05 * residual2.mean() + 1e-12)
    else:
        error2 = np.full(len(unrated), residual2.mean())
    return _Agent(int(both.sum()), total, sigma_y2, sigma_f2, float(f.var()), cov, error2, unrated)


def _width_for_ranking(people: np.ndarray, judge: np.ndarray, agent: np.ndarray, labelled: np.ndarray,
                       has_judge: np.ndarray, fitted: list[_Agent], target: float, z: float) -> float:
    """The largest common interval width at which P(every neighbouring pair is in the right order) ≥ target,
    at the pilot's PPI differences."""
    point = []
    for a, fit in enumerate(fitted):
        mine = agent == a
        y, f = people[mine & labelled], judge[mine & labelled]
        rest = judge[mine & has_judge & ~labelled]
        rest_n = max(len(rest), 1)
        lam = float(np.clip(fit.cov / ((1 + len(y) / rest_n) * fit.sigma_f2), 0, 1)) if fit.sigma_f2 > 0 and len(
            rest) else 0.0
        point.append(lam * (rest.mean() if len(rest) else 0.0) + (y - lam * f).mean())
    gaps = np.abs(np.diff(np.sort(np.asarray(point))))

    def probability(width: float) -> float:
        se = width / (2 * z)
        return float(np.prod(ndtr(gaps / (math.sqrt(2) * se)))) if gaps.size else 1.0

    low, high = 1e-6, 2.0
    if probability(high) >= target:
        return high
    for _ in range(80):
        middle = math.sqrt(low * high)
        low, high = (middle, high) if probability(middle) >= target else (low, middle)
    return low


def _curve(fitted: list[_Agent], z: float) -> pd.DataFrame:
    """Mean width over agents against extra people-rated responses (the same number per agent)."""
    room = min(fit.total - fit.n0 for fit in fitted)
    steps = np.unique(np.round(np.linspace(0, max(room, 0), _CURVE_POINTS)).astype(int))
    rows = []
    for step in steps:
        rows.append({"extra": int(step * len(fitted)),
                     "width_people": float(np.mean([fit.width_people(fit.n0 + step, z) for fit in fitted])),
                     "width_ppi": float(np.mean([fit.width_ppi(fit.n0 + step, z) for fit in fitted])),
                     "width_active": float(np.mean([fit.width_active(fit.n0 + step, z) for fit in fitted]))})
    return pd.DataFrame(rows)


def plan_ppi(table: AnnotationTable, info: RaterInfo, method: str | Aggregator | Chosen | None = None, *,
             target_width: float | None = None, target_correct: float | None = None, confidence: float = 0.95,
             seed: int | None = 0, min_labelled: int = MIN_LABELLED) -> BudgetPlan:
    """Plan the human budget of a pilot table (people on some responses, LLM judges on all): the credits of each
    kind from ``method`` (:func:`~stableval.evaluate.ppi.credits_by_kind`), then :func:`plan_budget`.

    >>> import pandas as pd
    >>> from stableval.data.raters import RaterInfo
    >>> from stableval.data.table import AnnotationTable
    >>> rng = np.random.default_rng(1)
    >>> truth = rng.integers(0, 2, (300, 2))
    >>> rows = [(f"q{i}", f"m{a}", "judge", int(truth[i, a] ^ (rng.random() < 0.15))) for i in range(300)
    ...         for a in range(2)]
    >>> rows += [(f"q{i}", f"m{a}", "alice", int(truth[i, a])) for i in range(40) for a in range(2)]
    >>> frame = pd.DataFrame(rows, columns=["item", "agent", "rater", "label"])
    >>> table = AnnotationTable.from_frame(frame, levels=("bad", "good"))
    >>> info = RaterInfo(table.raters, np.array(["human", "llm"]), np.array(["", "gpt"]))
    >>> plan = plan_ppi(table, info, "mv", target_width=0.15)
    >>> plan.agents[["agent", "pilot", "more_people_only", "more_ppi"]].values.tolist()
    [['m0', 40, 124.0, 38.0], ['m1', 40, 131.0, 110.0]]
    """
    from stableval.evaluate.ppi import credits_by_kind

    credits = credits_by_kind(table, info, method)
    rated = np.isfinite(credits.people)
    per = float(credits.people_judgments[rated].mean()) if rated.any() else 1.0
    items = np.asarray(table.items, dtype=object)[table.response_item]
    plan = plan_budget(credits.people, credits.judge, table.response_agent, [str(a) for a in table.agents],
                       target_width=target_width, target_correct=target_correct, judge_spread=credits.judge_spread,
                       items=[str(i) for i in items], judgments_per_response=per, confidence=confidence, seed=seed,
                       min_labelled=min_labelled, source=table.source)
    settings = {**plan.settings, "people_method": credits.people_method, "judge_method": credits.judge_method,
                "dataset": table.summary()}
    return BudgetPlan(agents=plan.agents, curve=plan.curve, items=plan.items, settings=settings,
                      notes=(*info.notes, *plan.notes))
