"""Prediction-powered agent scores: a few people, an LLM judge everywhere, one unbiased score with a valid interval.

Prediction-powered inference (PPI; Angelopoulos, Bates, Fannjiang, Jordan & Zrnic 2023, "Prediction-powered
inference", Science 382:669–674) estimates a mean from a small sample of gold values ``Y`` and a cheap predictor
``f`` known everywhere: the predictor's mean on the unlabelled part plus the *rectifier*, the mean of ``Y − f`` on
the labelled part, which removes the predictor's bias. PPI++ (Angelopoulos, Duchi & Zrnic 2023, "PPI++: Efficient
prediction-powered inference", arXiv:2311.01453) weights the predictor by a power-tuning ``λ``::

    θ̂ = λ · mean(f on the N unlabelled) + mean(Y − λ f on the n labelled)
    se² = Var(λ f on the unlabelled) / N + Var(Y − λ f on the labelled) / n
    λ = Cov(Y, f) / ((1 + n / N) · Var(f)), clipped to [0, 1]     (λ = 1: plain PPI; λ = 0: people only)

so the interval ``θ̂ ± z · se`` is never wider, asymptotically, than the people-only one. The formulas, the
variances (``ddof=0`` in the interval, ``ddof=1`` for Var(f) in λ, over labelled and unlabelled pooled) and the
clipping are those of the authors' package ``ppi_py`` (``ppi_mean_ci``), which the tests check to 1e-8
(``interval="clt"``). That CLT interval is short on a few dozen people-rated responses (simulated 95% intervals
cover 0.93 at n ≈ 40: the variance of three-level credits is estimated from few values, and λ is tuned on the same
responses), so :func:`ppi_scores` computes by default a bootstrap-t interval (studentised bootstrap, λ re-tuned on
every replicate; :mod:`stableval.evaluate.intervals`) and can give Student-t intervals (``ddof=1``, ``n − 1``
degrees of freedom) or the CLT ones (:data:`~stableval.evaluate.ppi_options.INTERVAL`). Adding
the labelled responses' judge credit to the judge's mean, as "the judge on all responses", gives the same family
of estimators (it rescales λ by N / (N + n)), so with λ tuned the two are the same estimate.

Here ``Y`` is the **people's credit** of a response: the human consensus of the chosen method (STABLEVAL posterior
expected credit by default; majority vote or Dawid–Skene selectable) fitted on the human raters' judgments only,
and ``f`` the **judge credit**: the same method fitted on the LLM judges' judgments only (one judge, or several
aggregated). Per agent, the labelled responses are those both kinds rated, the unlabelled ones those only the
judges rated. PPI is valid when the responses people rated are a random sample of the agent's responses (at random
or by design); the judge may be biased in any way.

:func:`ppi_scores` reports, per agent, the people-only, judge-only and PPI++ scores side by side with intervals
of the chosen kind and percentile bootstrap intervals (Efron & Tibshirani 1993, ch. 13; labelled and
unlabelled responses resampled separately per agent, λ held at its estimate, as the prediction-powered bootstrap
of Zrnic 2024, arXiv:2405.18379, does), the differences between agents and P(a beats b) from the same bootstrap,
rank intervals as :func:`~stableval.evaluate.score_agents` gives them, and the effective number of human-rated
responses: how many the people-only score would need for the PPI++ standard error.

>>> rng = np.random.default_rng(0)
>>> y = rng.normal(0.6, 0.2, 50)                       # people's credit on 50 responses
>>> f = y + 0.1 + rng.normal(0, 0.05, 50)              # a lenient judge on the same responses
>>> f_rest = rng.normal(0.7, 0.2, 950)                 # the judge alone on 950 more
>>> est = ppi_mean(y, f, f_rest)
>>> round(float(est.estimate), 3), round(float(est.lam), 3), bool(est.se < classical_mean(y).se)
(0.594, 0.812, True)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import pandas as pd
from scipy.special import ndtr, ndtri

from stableval._json import jsonable, matrix, records
from stableval.aggregate import Aggregator
from stableval.aggregate.registry import Chosen, method_names, primary_method, resolve_methods
from stableval.console import Displayed
from stableval.data.raters import RaterInfo
from stableval.data.table import AnnotationTable
from stableval.errors import InputError
from stableval.evaluate.credit import item_credit
from stableval.evaluate.intervals import student_quantile, studentised_interval, welch_df
from stableval.evaluate.ppi_options import INTERVAL, INTERVAL_WORDS
from stableval.evaluate.scores import competition_ranks, win_probabilities
from stableval.wording import plural

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console

__all__ = [
    "MIN_LABELLED",
    "KindCredits",
    "MeanEstimate",
    "PPIScores",
    "classical_mean",
    "credits_by_kind",
    "ppi_agent_scores",
    "ppi_mean",
    "ppi_scores",
    "resampled_means",
    "response_probabilities",
    "tuned_lambda",
]

#: the columns that may hold a response's rating probability, in the order they are looked for (``plan`` writes
#: ``p_active`` and ``p_random``)
PROBABILITY_COLUMNS = ("probability", "p_active", "p_random")
#: the fewest responses per agent that both people and judges must have rated (the rectifier's variance needs them)
MIN_LABELLED = 10
#: replicates × responses held at once by the bootstrap
_CHUNK_CELLS = 4_000_000


class MeanEstimate(NamedTuple):
    """A mean with its interval; every field has the leading shape of the input (a 0-d array for 1-d input).

    Attributes:
        estimate: the point estimate.
        se: its standard error.
        low, high: ``estimate ∓ q · se``, q the normal quantile of the confidence (CLT) or Student's with n − 1
            degrees of freedom (t).
        lam: the power-tuning weight used (0 for a classical mean).
    """

    estimate: np.ndarray
    se: np.ndarray
    low: np.ndarray
    high: np.ndarray
    lam: np.ndarray


def normal_quantile(confidence: float) -> float:
    """z with P(|Z| <= z) = confidence.

    >>> round(normal_quantile(0.95), 6)
    1.959964
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    return float(ndtri(0.5 + confidence / 2.0))


def tuned_lambda(y: np.ndarray, yhat: np.ndarray, yhat_unlabelled: np.ndarray) -> np.ndarray:
    """PPI++'s variance-minimising weight (Angelopoulos, Duchi & Zrnic 2023, Example 6.1), clipped to [0, 1],
    along the last axis: ``mean((Y − Ȳ)(f − f̄)) / ((1 + n / N) · Var(f))``, Var with ``ddof=1`` over the labelled
    and unlabelled predictions pooled (as ``ppi_py`` computes it); 0 where the predictions do not vary.

    >>> float(tuned_lambda(np.array([0.0, 1.0]), np.array([0.0, 1.0]), np.array([0.0, 1.0])))
    0.375
    """
    y, yhat, rest = (np.asarray(a, dtype=float) for a in (y, yhat, yhat_unlabelled))
    n, n_rest = y.shape[-1], rest.shape[-1]
    covariance = ((y - y.mean(axis=-1, keepdims=True)) * (yhat - yhat.mean(axis=-1, keepdims=True))).mean(axis=-1)
    pooled = np.concatenate([yhat, rest], axis=-1)
    variance = pooled.var(axis=-1, ddof=1) if pooled.shape[-1] > 1 else np.zeros(pooled.shape[:-1])
    with np.errstate(invalid="ignore", divide="ignore"):
        lam = np.where(variance > 0, covariance / ((1.0 + n / max(n_rest, 1)) * variance), 0.0)
    return np.asarray(np.clip(lam, 0.0, 1.0))


def _quantile(interval: str, confidence: float, n: int) -> float:
    """The interval's multiplier of the standard error: normal (``clt``) or Student t with n − 1 degrees of freedom
    (``t``)."""
    if interval == "clt":
        return normal_quantile(confidence)
    if interval == "t":
        return float(student_quantile(confidence, n - 1))
    raise ValueError(f"interval={interval!r}: allowed clt or t (bootstrap-t needs the replicates: ppi_agent_scores)")


def ppi_mean(y: np.ndarray, yhat: np.ndarray, yhat_unlabelled: np.ndarray, *, lam: float | np.ndarray | None = None,
             confidence: float = 0.95, interval: str = "clt") -> MeanEstimate:
    """The prediction-powered mean and its interval along the last axis (vectorised over leading axes).

    Args:
        y: (..., n) gold values (the people's credit) on the labelled responses.
        yhat: (..., n) predictions (the judge credit) on the same responses.
        yhat_unlabelled: (..., N) predictions on the responses without a gold value (N >= 1).
        lam: the power-tuning weight: ``None`` tunes it (PPI++), 1 is plain PPI, 0 the classical mean.
        confidence: the interval's level.
        interval: ``clt`` (``ppi_py``'s: variances with ``ddof=0``, normal quantile) or ``t`` (variances with
            ``ddof=1``, Student's quantile with n − 1 degrees of freedom).

    >>> est = ppi_mean(np.array([0.0, 1.0, 1.0]), np.array([0.5, 1.0, 1.0]), np.full(6, 0.8), lam=1.0)
    >>> round(float(est.estimate), 4), round(float(est.se), 4)
    (0.6333, 0.1361)
    """
    y, yhat, rest = (np.asarray(a, dtype=float) for a in (y, yhat, yhat_unlabelled))
    if y.shape != yhat.shape:
        raise ValueError(f"y and yhat must have the same shape, got {y.shape} and {yhat.shape}")
    if y.shape[-1] < 1 or rest.shape[-1] < 1:
        raise ValueError("need at least one labelled and one unlabelled value")
    n, n_rest = y.shape[-1], rest.shape[-1]
    z = _quantile(interval, confidence, n)
    weight = tuned_lambda(y, yhat, rest) if lam is None else np.broadcast_to(np.asarray(lam, dtype=float),
                                                                              y.shape[:-1])
    w = np.asarray(weight)[..., None]
    estimate = (w * rest).mean(axis=-1) + (y - w * yhat).mean(axis=-1)
    if interval == "clt":
        se = np.sqrt((w * rest).var(axis=-1) / n_rest + (y - w * yhat).var(axis=-1) / n)
    else:
        spread = (w * rest).var(axis=-1, ddof=1) if n_rest > 1 else np.zeros(estimate.shape)
        se = np.sqrt(spread / n_rest + (y - w * yhat).var(axis=-1, ddof=1) / n)
    return MeanEstimate(estimate, se, estimate - z * se, estimate + z * se, np.asarray(weight, dtype=float))


def classical_mean(values: np.ndarray, confidence: float = 0.95, interval: str = "clt") -> MeanEstimate:
    """The sample mean along the last axis with its CLT interval (standard deviation with ``ddof=0``, as
    ``ppi_py``'s ``classical_mean_ci``) or, ``interval="t"``, its Student t interval (``ddof=1``, n − 1 degrees of
    freedom).

    >>> est = classical_mean(np.array([0.0, 1.0, 1.0, 1.0]))
    >>> float(est.estimate), round(float(est.se), 4)
    (0.75, 0.2165)
    >>> est = classical_mean(np.array([0.0, 1.0, 1.0, 1.0]), interval="t")     # 0.75 ± 3.1824 · 0.5 / 2
    >>> round(float(est.se), 4), round(float(est.low), 4), round(float(est.high), 4)
    (0.25, -0.0456, 1.5456)
    """
    data = np.asarray(values, dtype=float)
    z = _quantile(interval, confidence, data.shape[-1])
    estimate = data.mean(axis=-1)
    se = data.std(axis=-1, ddof=0 if interval == "clt" else 1) / np.sqrt(data.shape[-1])
    return MeanEstimate(estimate, se, estimate - z * se, estimate + z * se, np.zeros(estimate.shape))


def resampled_means(rng: np.random.Generator, values: np.ndarray, replicates: int) -> np.ndarray:
    """(replicates, m) means of with-replacement resamples of the rows of ``values`` (n, m): one bincount of the
    draws and one matrix product per chunk of replicates, never a (replicates, n, m) array.

    >>> resampled_means(np.random.default_rng(0), np.ones((5, 2)), 3).tolist()
    [[1.0, 1.0], [1.0, 1.0], [1.0, 1.0]]
    """
    values = np.asarray(values, dtype=float)
    n = len(values)
    out = np.empty((replicates, values.shape[1]))
    chunk = max(1, _CHUNK_CELLS // max(n, 1))
    for start in range(0, replicates, chunk):
        rows = min(chunk, replicates - start)
        draws = rng.integers(0, n, size=(rows, n)).astype(np.int64) + (np.arange(rows, dtype=np.int64) * n)[:, None]
        counts = np.bincount(draws.ravel(), minlength=rows * n).reshape(rows, n).astype(float)
        out[start:start + rows] = counts @ values / n
    return out


# ====================================================================================== credits of each kind
@dataclass(frozen=True)
class KindCredits:
    """The people's and the judges' credit of every response of a table (NaN where that kind did not rate it).

    Attributes:
        people, judge: (N,) credits.
        people_judgments: (N,) human judgments per response.
        people_method, judge_method: labels of the methods fitted on each kind.
        people_raters, judges: how many raters of each kind rated.
        judge_spread: (N,) standard deviation of the judge credit under the judges' fitted posterior (how unsure
            the judges are about a response; NaN where no judge rated it).
    """

    people: np.ndarray
    judge: np.ndarray
    people_judgments: np.ndarray
    people_method: str
    judge_method: str
    people_raters: int
    judges: int
    judge_spread: np.ndarray = field(default_factory=lambda: np.zeros(0))


def _kind_credit(table: AnnotationTable, mask: np.ndarray, chosen: Chosen) -> tuple[np.ndarray, np.ndarray]:
    """(N,) credit of ``chosen`` fitted on the judgments where ``mask`` holds and (N,) its posterior standard
    deviation; NaN for responses without a judgment."""
    out, spread = np.full(table.n_responses, np.nan), np.full(table.n_responses, np.nan)
    model = chosen.build().fit(table.subset(mask))
    rated = np.unique(table.response[mask])
    out[rated] = item_credit(model, table.credit)
    second = item_credit(model, np.asarray(table.credit, dtype=float) ** 2)
    spread[rated] = np.sqrt(np.clip(second - out[rated] ** 2, 0.0, None))
    return out, spread


def credits_by_kind(table: AnnotationTable, info: RaterInfo, method: str | Aggregator | Chosen | None = None, *,
                    params: Mapping[str, Any] | None = None,
                    judge_method: str | Aggregator | Chosen | None = None) -> KindCredits:
    """Fit the consensus method on the people's judgments and (``judge_method``, default the same) on the LLM
    judges' judgments, separately; each response gets the credit of each kind that rated it.

    Raises :class:`~stableval.errors.InputError` when the table has no human or no LLM-judge judgment.
    """
    human_mask = info.judgment_mask(table, "human")
    llm_mask = info.judgment_mask(table, "llm")
    if not human_mask.any() or not llm_mask.any():
        missing = "human raters" if not human_mask.any() else "LLM judges"
        raise InputError(f"prediction-powered scores need judgments by people and by LLM judges; there are none by "
                         f"{missing}", file=table.source,
                         allowed="rater metadata with raters of kind human and of kind llm ({rater_info}, or a "
                                 "rater_kind column)", options={"rater_info": "FILE"})
    people = _resolve(method, params)
    judges = people if judge_method is None else _resolve(judge_method, None)
    counts = info.counts()
    judge_credit, judge_spread = _kind_credit(table, llm_mask, judges)
    return KindCredits(
        people=_kind_credit(table, human_mask, people)[0],
        judge=judge_credit,
        people_judgments=np.bincount(table.response[human_mask], minlength=table.n_responses),
        people_method=people.label, judge_method=judges.label,
        people_raters=counts["human"], judges=counts["llm"], judge_spread=judge_spread,
    )


def response_probabilities(table: AnnotationTable, frame: pd.DataFrame, *, source: str = "<probabilities>"
                           ) -> np.ndarray:
    """(N,) the probability with which each response of ``table`` was to be rated by people, from a frame with
    columns ``item``, ``agent`` and the first of :data:`PROBABILITY_COLUMNS` present (such as ``plan``'s items
    table); NaN for responses it does not list.

    >>> table = AnnotationTable.from_frame(pd.DataFrame({"item": ["q1", "q2"], "agent": "A", "rater": "r",
    ...                                                  "label": [0, 1]}), levels=("0", "1"))
    >>> response_probabilities(table, pd.DataFrame({"item": ["q2"], "agent": ["A"], "p_active": [0.25]})).tolist()
    [nan, 0.25]
    """
    columns = {str(c).strip().lower(): c for c in frame.columns}
    wanted = next((name for name in PROBABILITY_COLUMNS if name in columns), None)
    if "item" not in columns or "agent" not in columns or wanted is None:
        raise InputError("the rating-probability file needs columns item, agent and a probability", file=source,
                         allowed="columns item, agent and one of " + ", ".join(PROBABILITY_COLUMNS))
    values = pd.to_numeric(frame[columns[wanted]], errors="coerce").to_numpy(dtype=float)
    bad = ~((values > 0) & (values <= 1))
    if bad.any():
        raise InputError(f"a rating probability is not in (0, 1] ({int(bad.sum()):,} row(s))", file=source,
                         column=str(columns[wanted]), value=str(frame[columns[wanted]].iloc[int(np.argmax(bad))]),
                         allowed="a number in (0, 1] on every row")
    responses = pd.Series(np.arange(table.n_responses), index=pd.MultiIndex.from_arrays(
        [np.asarray(table.items, dtype=str)[table.response_item], np.asarray(table.agents, dtype=str)[
            table.response_agent]]))
    wanted_keys = pd.MultiIndex.from_arrays([frame[columns["item"]].astype(str).str.strip().to_numpy(),
                                             frame[columns["agent"]].astype(str).str.strip().to_numpy()])
    position = responses.reindex(wanted_keys).to_numpy()
    out = np.full(table.n_responses, np.nan)
    known = np.isfinite(position)
    out[position[known].astype(np.int64)] = values[known]
    return out


def _resolve(method: str | Aggregator | Chosen | None, params: Mapping[str, Any] | None) -> Chosen:
    method = primary_method(method_names()) if method is None else method
    named = {method.strip().lower(): dict(params or {})} if isinstance(method, str) and params else None
    return resolve_methods([method], named)[0]


# ====================================================================================== the result
@dataclass(frozen=True)
class PPIScores(Displayed):
    """Result of :func:`ppi_scores` / :func:`ppi_agent_scores`.

    Attributes:
        scores: one row per agent, best PPI score first: ``agent``; counts ``people_responses`` (rated by people),
            ``judge_responses`` (by judges), ``both`` (n, labelled) and ``judge_only`` (N, unlabelled); for each of
            ``people``, ``judge`` and ``ppi``: ``_score``, ``_ci_low``, ``_ci_high`` (of the settings' ``interval``
            kind), ``_width`` and ``_boot_low``, ``_boot_high`` (percentile bootstrap; NaN without one); ``ppi_se``
            (with ``ddof=1`` unless the kind is clt), ``lam`` (the PPI++
            weight), ``rectifier`` (mean people − λ·judge credit on the responses both rated), ``width_ratio``
            (PPI width / people-only width), ``effective_people`` (people-rated responses the people-only score
            would need for the PPI standard error), ``people_saved`` (that minus the people-rated responses) and
            ``ratings_saved`` (the same in human judgments, at the mean judgments per rated response); ``rank``,
            ``rank_low``, ``rank_high`` (PPI, rank intervals from the bootstrap), ``people_rank``, ``judge_rank``.
        differences: one row per pair of agents (in leaderboard order, the better first): ``agent, other,
            difference`` (PPI score difference), ``ci_low, ci_high`` (the same kind), ``boot_low, boot_high``
            (percentile bootstrap),
            ``p_beats`` (share of bootstrap replicates in which ``agent`` scores above ``other``, ties ½) and
            ``p_beats_normal`` (the normal approximation Φ(difference / se)).
        win_probability: agents × agents, P(row scores above column) over the bootstrap replicates.
        replicates: (B, A) bootstrap PPI scores (columns in ``agents`` order).
        agents: agent names in table order.
        dataset: counts of the table (empty for bare credits).
        settings: methods, λ mode, bootstrap size, seed, confidence, ``interval`` (the kind used), the minimum of
            labelled responses.
        notes: what was left out and why.
    """

    scores: pd.DataFrame
    differences: pd.DataFrame
    win_probability: pd.DataFrame
    replicates: np.ndarray
    agents: list[str]
    dataset: dict[str, Any] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: dataset, settings, notes, the per-agent scores, the differences and the win probabilities."""
        return {"dataset": jsonable(self.dataset), "settings": jsonable(self.settings), "notes": list(self.notes),
                "ppi": records(self.scores), "differences": records(self.differences),
                "win_probability": matrix(self.win_probability)}

    def to_frame(self) -> pd.DataFrame:
        """The per-agent table (CSV)."""
        return self.scores

    def display_frame(self) -> pd.DataFrame:
        """The table people read: per agent the responses both kinds / only judges rated, the three scores with
        their intervals, the width ratio, the effective people-rated responses and the PPI rank (interval)."""
        board = self.scores
        percent = round(self.settings.get("confidence", 0.95) * 100)

        def interval(prefix: str) -> pd.Series:
            return (board[f"{prefix}_score"].map("{:.3f}".format) + " [" + board[f"{prefix}_ci_low"].map(
                "{:.3f}".format) + ", " + board[f"{prefix}_ci_high"].map("{:.3f}".format) + "]")

        rank: pd.Series = board["rank"].astype(str) + np.where(board["rank_low"] != board["rank_high"], " (" + board[
            "rank_low"].astype(str) + "–" + board["rank_high"].astype(str) + ")", "")
        return pd.DataFrame({
            "Agent": board["agent"].astype(str),
            "Both / judge": board["both"].map("{:,}".format) + " / " + board["judge_only"].map("{:,}".format),
            f"People [{percent}% CI]": interval("people"),
            f"Judge [{percent}% CI]": interval("judge"),
            f"PPI++ [{percent}% CI]": interval("ppi"),
            "Width ratio": board["width_ratio"].map("{:.2f}".format),
            "Eff. n (saved)": board["effective_people"].map("{:,.0f}".format) + " (" + board[
                "people_saved"].map("{:+,.0f}".format) + ")",
            "Rank": rank,
        })

    def render(self, console: Console) -> None:
        """The side-by-side table, how to read it, and the closest pair."""
        from rich import box
        from rich.table import Table

        from stableval.markup import literal

        settings = self.settings
        console.print(f"\n[bold]Prediction-powered scores (PPI++)[/]: people's credit = {settings['people_method']} "
                      f"on {plural(settings['people_raters'], 'human rater')}; judge credit = "
                      f"{settings['judge_method']} on {plural(settings['judges'], 'LLM judge')}")
        table = Table(box=box.SIMPLE_HEAVY, show_edge=False)
        display = self.display_frame()
        for k, column in enumerate(display.columns):
            table.add_column(column, justify="left" if k == 0 else "right", style="bold" if k == 0 else None)
        for row in display.itertuples(index=False):
            table.add_row(*(literal(str(cell)) for cell in row))
        console.print(table)
        for line in self.footnotes():
            console.print(literal(line))

    def footnotes(self, *, report: bool = False) -> list[str]:
        """How to read the table, the closest pair and the notes, one sentence each; ``report``: worded for the
        HTML report, which shows the table only (the command line's JSON/CSV hold every interval)."""
        settings = self.settings
        percent = round(settings["confidence"] * 100)
        interval = settings.get("interval", "clt")
        bootstrap = settings["bootstrap"]
        lines = [f"PPI++ = the judge's mean on the responses only judges rated + the people−judge gap on the "
                 f"responses both rated, weighted by λ (Angelopoulos et al. 2023; Angelopoulos, Duchi & Zrnic "
                 f"2023). {percent}% {INTERVAL_WORDS[interval]}; judge-only intervals ignore the judge's bias.",
                 "Both / judge = responses rated by people and judges / by judges only; width ratio = PPI / "
                 "people-only interval width; Eff. n = people-rated responses the people-only score would need for "
                 f"the PPI precision (saved: beyond those rated); λ from {self.scores['lam'].min():.2f} to "
                 f"{self.scores['lam'].max():.2f}."]
        if bootstrap and report:
            source = f" from the same {bootstrap:,} replicates" if interval == "bootstrap-t" else ""
            lines.append(f"The intervals in brackets are the {percent}% intervals of each score{source}; the Rank "
                         f"column gives each agent's PPI++ rank and, in parentheses, its {percent}% rank interval "
                         f"from {bootstrap:,} bootstrap replicates (seed {settings['seed']}).")
        elif bootstrap:
            lines.append(f"Bootstrap (B={bootstrap:,}, seed {settings['seed']}): percentile intervals in the "
                         "JSON/CSV, rank intervals in parentheses.")
        elif report:
            lines.append(f"The intervals in brackets are the {percent}% intervals of each score; without a bootstrap "
                         "there are no rank intervals.")
        if len(self.differences):
            closest = self.differences.iloc[int(np.argmin(np.abs(self.differences["difference"].to_numpy())))]
            p = closest["p_beats"] if np.isfinite(closest["p_beats"]) else closest["p_beats_normal"]
            lines.append(f"Closest pair: {closest['agent']} − {closest['other']} = {closest['difference']:+.3f} "
                         f"[{closest['ci_low']:+.3f}, {closest['ci_high']:+.3f}]; P({closest['agent']} scores "
                         f"above {closest['other']}) = {p:.2f}.")
        people = int(self.scores["both"].sum())
        lines.append(f"Effective people-rated responses: {self.scores['effective_people'].sum():,.0f} for the "
                     f"{people:,} rated by people and judges ({self.scores['ratings_saved'].sum():+,.0f} human "
                     "judgments saved).")
        lines.extend(f"note: {note}" for note in self.notes)
        return lines


# ====================================================================================== the analysis
def ppi_agent_scores(people: np.ndarray, judge: np.ndarray, agent: np.ndarray, agents: Sequence[str], *,
                     people_judgments: np.ndarray | None = None, lam: float | None = None, bootstrap: int = 1000,
                     seed: int | None = 0, confidence: float = 0.95, min_labelled: int = MIN_LABELLED,
                     interval: str = INTERVAL.default, probability: np.ndarray | None = None,
                     source: str = "<credits>") -> PPIScores:
    """PPI++ scores of every agent from per-response credits (see the module docstring).

    Args:
        people: (N,) people's credit per response, NaN where no person rated it.
        judge: (N,) judge credit per response, NaN where no judge rated it.
        agent: (N,) agent code 0..A-1 of each response; ``agents`` their names.
        people_judgments: (N,) human judgments per response (for the human judgments saved; default 1 each).
        lam: the power-tuning weight: ``None`` tunes it per agent (PPI++), 1 is plain PPI.
        bootstrap: replicates of the bootstrap (0 = none: no percentile, bootstrap-t or rank intervals).
        seed: the bootstrap's seed.
        confidence: the intervals' level.
        min_labelled: the fewest responses per agent that both kinds must have rated.
        interval: how the score and difference intervals are computed (:data:`~stableval.evaluate.ppi_options.
            INTERVAL`): ``bootstrap-t`` (from the bootstrap's replicates, λ re-tuned on each; Student t when
            ``bootstrap`` is 0, with a note), ``t`` or ``clt``.
        probability: (N,) the known probability with which each judged response was to be rated by people, when
            they were chosen with unequal probabilities (an active selection such as ``plan``'s ``p_active``;
            each response drawn independently). The PPI++ score is then the inverse-probability-weighted
            estimate of active inference (Zrnic & Candès 2024, "Active statistical inference"): the mean over the
            agent's judged responses of ``λ f + ξ (y − λ f) / π`` (ξ = 1 where people rated the response), and
            the people-only score the Horvitz–Thompson mean of ``ξ y / π`` over the same responses; both unbiased
            for the agent's mean people's credit, whatever the probabilities (each > 0), with intervals from the
            per-response terms. ``None``: the people-rated responses are a simple random sample.
        source: the file named in errors.

    Responses only people rated count in the people-only score but not in PPI (which needs the judge's credit);
    a note says how many.
    """
    people, judge = np.asarray(people, dtype=float), np.asarray(judge, dtype=float)
    agent = np.asarray(agent, dtype=np.int64)
    if bootstrap < 0:
        raise ValueError(f"bootstrap must be >= 0, got {bootstrap}")
    if lam is not None and not 0.0 <= lam <= 1.0:
        raise ValueError(f"lam must be in [0, 1] or None (tuned), got {lam}")
    if min_labelled < 2:
        raise ValueError(f"min_labelled must be >= 2, got {min_labelled}")
    interval = INTERVAL.check(interval)
    tail = (1.0 - confidence) / 2.0
    per_rating = np.ones(len(people)) if people_judgments is None else np.asarray(people_judgments, dtype=float)
    has_people, has_judge = np.isfinite(people), np.isfinite(judge)
    seen = np.concatenate([people[has_people], judge[has_judge]])
    credit_range = (float(seen.min()), float(seen.max())) if seen.size else (0.0, 1.0)
    labelled, unlabelled = has_people & has_judge, has_judge & ~has_people
    n_agents = len(agents)
    n_both = np.bincount(agent[labelled], minlength=n_agents)
    short = [(str(agents[a]), int(n_both[a])) for a in range(n_agents) if n_both[a] < min_labelled]
    if short:
        shown = ", ".join(f"{name!r} {count:,}" for name, count in short[:5])
        raise InputError(f"too few responses rated by both people and LLM judges for prediction-powered scores: "
                         f"{shown}{' ...' if len(short) > 5 else ''} (the minimum is {min_labelled} per agent)",
                         file=source, value=short[0][1],
                         allowed=f"at least {min_labelled} responses of every agent rated by people and by an LLM "
                                 "judge (have people rate more of the judged responses)")
    notes = []
    if interval == "bootstrap-t" and not bootstrap:
        interval = "t"
        notes.append("bootstrap-t intervals need the bootstrap; Student-t intervals shown")
    analytic = "clt" if interval == "clt" else "t"
    if probability is not None:
        probability = np.asarray(probability, dtype=float)
        chosen = probability[labelled]
        if probability.shape != people.shape or not ((chosen > 0) & (chosen <= 1)).all():
            missing = int((~((chosen > 0) & (chosen <= 1))).sum()) if probability.shape == people.shape else -1
            raise InputError("rating probabilities must be known, in (0, 1], for every response rated by people and "
                             "judges" + (f" ({missing:,} without one)" if missing > 0 else ""), file=source,
                             allowed="the probability with which each people-rated answer was chosen (the pilot's "
                                     "answers too)")
        notes.append("people-rated responses weighted by 1 / their rating probability (active inference)")
    people_only = int((has_people & ~has_judge).sum())
    if people_only:
        notes.append(f"{plural(people_only, 'response')} rated by people but by no judge count in the people-only "
                     "score, not in PPI")
    rows = []
    streams = [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(n_agents)]
    reps = {kind: np.full((bootstrap, n_agents), np.nan) for kind in ("people", "judge", "ppi")}
    #: per estimator: (B, A) replicate estimates and standard errors of the bootstrap-t, and (A,) degrees of freedom
    studentised = {kind: (np.full((bootstrap, n_agents), np.nan), np.full((bootstrap, n_agents), np.nan))
                   for kind in ("people", "judge", "ppi")}
    dfs = {kind: np.zeros(n_agents) for kind in ("people", "judge", "ppi")}
    for a in range(n_agents):
        mine = agent == a
        y_all, f_all = people[mine & has_people], judge[mine & has_judge]
        y, f = people[mine & labelled], judge[mine & labelled]
        rest = judge[mine & unlabelled]
        human = classical_mean(y_all, confidence, analytic)
        machine = classical_mean(f_all, confidence, analytic)
        if rest.size:
            ppi = ppi_mean(y, f, rest, lam=lam, confidence=confidence, interval=analytic)
        else:  # every judged response was rated by people too: nothing to borrow from the judge
            ppi = classical_mean(y, confidence, analytic)
        dfs["people"][a], dfs["judge"][a], dfs["ppi"][a] = y_all.size - 1, f_all.size - 1, y.size - 1
        weight = float(ppi.lam)
        rectifier = float((y - weight * f).mean())
        if probability is not None:  # inverse-probability weights: each judged response is one term
            rated = labelled[mine & has_judge]
            chosen = np.where(rated, probability[mine & has_judge], 1.0)
            y_judged = np.where(rated, people[mine & has_judge], 0.0)
            gap = rated * (y_judged - weight * f_all) / chosen
            terms = {"people": rated * y_judged / chosen, "ppi": weight * f_all + gap}
            human = classical_mean(terms["people"], confidence, analytic)
            ppi = classical_mean(terms["ppi"], confidence, analytic)._replace(lam=np.asarray(weight))
            dfs["people"][a] = dfs["ppi"][a] = f_all.size - 1
            rectifier = float(gap.mean())
        effective = float(human.se**2 * y_all.size / ppi.se**2) if ppi.se > 0 else float("inf")
        rated_per_response = float(per_rating[mine & has_people].mean()) if y_all.size else 1.0
        if bootstrap and probability is not None:
            rng = streams[a]
            for kind, values in (("people", terms["people"]), ("judge", f_all), ("ppi", terms["ppi"])):
                moments = resampled_means(rng, np.column_stack([values, values**2]), bootstrap)
                reps[kind][:, a] = moments[:, 0]
                studentised[kind][0][:, a], studentised[kind][1][:, a] = _mean_replicates(moments, values.size)
        elif bootstrap:
            rng = streams[a]
            moments = resampled_means(rng, np.column_stack([y_all, y_all**2]), bootstrap)
            reps["people"][:, a] = moments[:, 0]
            studentised["people"][0][:, a], studentised["people"][1][:, a] = _mean_replicates(moments, y_all.size)
            moments = resampled_means(rng, np.column_stack([f_all, f_all**2]), bootstrap)
            reps["judge"][:, a] = moments[:, 0]
            studentised["judge"][0][:, a], studentised["judge"][1][:, a] = _mean_replicates(moments, f_all.size)
            pair = resampled_means(rng, np.column_stack([y, f, y**2, f**2, y * f]), bootstrap)
            rest_moments = (resampled_means(rng, np.column_stack([rest, rest**2]), bootstrap) if rest.size
                            else np.zeros((bootstrap, 2)))
            reps["ppi"][:, a] = weight * rest_moments[:, 0] + pair[:, 0] - weight * pair[:, 1]
            studentised["ppi"][0][:, a], studentised["ppi"][1][:, a] = _ppi_replicates(
                pair, rest_moments, y.size, rest.size, lam if rest.size else 0.0)
        if interval == "bootstrap-t":
            human, machine, ppi = (_with_interval(est, *studentised[kind], a, confidence, credit_range)
                                   for kind, est in (("people", human), ("judge", machine), ("ppi", ppi)))
        rows.append({
            "agent": str(agents[a]), "people_responses": int(y_all.size), "judge_responses": int(f_all.size),
            "both": int(y.size), "judge_only": int(rest.size),
            **_columns("people", human, tail, reps["people"][:, a]),
            **_columns("judge", machine, tail, reps["judge"][:, a]),
            **_columns("ppi", ppi, tail, reps["ppi"][:, a]),
            "ppi_se": float(ppi.se), "lam": weight, "rectifier": rectifier,
            "width_ratio": float(ppi.se / human.se) if human.se > 0 else float("nan"),
            "effective_people": effective, "people_saved": effective - y_all.size,
            "ratings_saved": (effective - y_all.size) * rated_per_response,
        })
    scores = pd.DataFrame(rows)
    point = scores["ppi_score"].to_numpy()
    ppi_reps = reps["ppi"]
    scores["rank"] = competition_ranks(point)
    if bootstrap:
        low, high = np.quantile(competition_ranks(ppi_reps), [tail, 1 - tail], axis=0, method="nearest")
        win = win_probabilities(ppi_reps)
    else:
        low = high = scores["rank"].to_numpy()
        win = np.full((n_agents, n_agents), np.nan)
        np.fill_diagonal(win, np.nan)
    scores["rank_low"], scores["rank_high"] = np.asarray(low, dtype=np.int64), np.asarray(high, dtype=np.int64)
    scores["people_rank"] = competition_ranks(scores["people_score"].to_numpy())
    scores["judge_rank"] = competition_ranks(scores["judge_score"].to_numpy())
    order = np.argsort(-point, kind="stable")
    differences = _differences(scores, ppi_reps, win, order, confidence, interval, dfs["ppi"], studentised["ppi"])
    names = [str(a) for a in agents]
    return PPIScores(
        scores=scores.iloc[order].reset_index(drop=True),
        differences=differences,
        win_probability=pd.DataFrame(win, index=names, columns=names),
        replicates=ppi_reps,
        agents=names,
        settings={"lam": "tuned (PPI++)" if lam is None else lam, "bootstrap": bootstrap, "seed": seed,
                  "confidence": confidence, "interval": interval, "min_labelled": min_labelled,
                  "people_method": "given",
                  "judge_method": "given", "people_raters": 0, "judges": 0},
        notes=tuple(notes),
    )


def _mean_replicates(moments: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(B,) replicate means and standard errors (``ddof=1``) from (B, 2) replicate means of the values and of
    their squares."""
    mean = moments[:, 0]
    variance = np.clip(moments[:, 1] - mean**2, 0.0, None) * (n / max(n - 1, 1))
    return mean, np.sqrt(variance / n)


def _ppi_replicates(pair: np.ndarray, rest: np.ndarray, n: int, n_rest: int,
                    lam: float | None) -> tuple[np.ndarray, np.ndarray]:
    """(B,) replicate PPI++ estimates and standard errors (``ddof=1``, as ``ppi_mean(..., interval="t")``), λ
    re-tuned on every replicate when ``lam`` is ``None``, from replicate means of ``y, f, y², f², y·f`` on the
    labelled responses (``pair``, (B, 5)) and of ``f, f²`` on the unlabelled (``rest``, (B, 2); zeros and
    ``n_rest`` 0 when there are none, with ``lam`` 0)."""
    my, mf, myy, mff, myf = pair.T
    mr, mrr = rest.T
    if lam is None:
        total = n + n_rest
        pooled = (n * mf + n_rest * mr) / total
        variance = ((n * mff + n_rest * mrr) / total - pooled**2) * (total / (total - 1))
        with np.errstate(invalid="ignore", divide="ignore"):
            weight = np.where(variance > 1e-15, (myf - my * mf) / ((1.0 + n / n_rest) * variance), 0.0)
        weight = np.clip(weight, 0.0, 1.0)
    else:
        weight = np.full(len(my), float(lam))
    estimate = weight * mr + my - weight * mf
    rectifier = np.clip(myy - 2 * weight * myf + weight**2 * mff - (my - weight * mf) ** 2, 0.0, None)
    spread = weight**2 * np.clip(mrr - mr**2, 0.0, None) * (n_rest / (n_rest - 1)) / n_rest if n_rest > 1 else 0.0
    return estimate, np.sqrt(spread + rectifier * (n / (n - 1)) / n)


def _with_interval(est: MeanEstimate, estimates: np.ndarray, errors: np.ndarray, a: int, confidence: float,
                   credit_range: tuple[float, float]) -> MeanEstimate:
    """``est`` with the bootstrap-t interval of agent ``a``'s replicates; a bound the bootstrap cannot set (more
    than the tail's share of replicates with constant credits, an infinite t*) is the smallest or largest credit
    seen."""
    low, high = studentised_interval(float(est.estimate), float(est.se), estimates[:, a], errors[:, a], confidence)
    low, high = (low if np.isfinite(low) else credit_range[0]), (high if np.isfinite(high) else credit_range[1])
    return est._replace(low=np.asarray(low), high=np.asarray(high))


def _columns(prefix: str, est: MeanEstimate, tail: float, replicates: np.ndarray) -> dict[str, float]:
    """``prefix_score, _ci_low, _ci_high, _width, _boot_low, _boot_high`` of one estimate of one agent."""
    low, high = np.quantile(replicates, [tail, 1 - tail]) if len(replicates) else (np.nan, np.nan)
    return {f"{prefix}_score": float(est.estimate), f"{prefix}_ci_low": float(est.low),
            f"{prefix}_ci_high": float(est.high), f"{prefix}_width": float(est.high - est.low),
            f"{prefix}_boot_low": float(low), f"{prefix}_boot_high": float(high)}


def _differences(scores: pd.DataFrame, replicates: np.ndarray, win: np.ndarray, order: np.ndarray,
                 confidence: float, interval: str, df: np.ndarray,
                 studentised: tuple[np.ndarray, np.ndarray]) -> pd.DataFrame:
    """Every pair of agents, the better (by PPI) first: difference, its interval of the chosen kind (``clt``:
    normal; ``t``: Student t with Welch–Satterthwaite degrees of freedom from each agent's ``df``;
    ``bootstrap-t``: from the ``studentised`` replicate estimates and standard errors), the percentile bootstrap
    interval, P(beats)."""
    tail = (1.0 - confidence) / 2.0
    point, se = scores["ppi_score"].to_numpy(), scores["ppi_se"].to_numpy()
    estimates, errors = studentised
    z = normal_quantile(confidence)
    rows = []
    for i, a in enumerate(order):
        for b in order[i + 1:]:
            diff = float(point[a] - point[b])
            spread = float(np.hypot(se[a], se[b]))
            boot = replicates[:, a] - replicates[:, b]
            low, high = (np.quantile(boot, [tail, 1 - tail]) if len(boot) else (np.nan, np.nan))
            if interval == "bootstrap-t":
                ci_low, ci_high = studentised_interval(diff, spread, estimates[:, a] - estimates[:, b],
                                                       np.hypot(errors[:, a], errors[:, b]), confidence)
            else:
                q = z if interval == "clt" else float(student_quantile(confidence, welch_df(se[a], df[a], se[b],
                                                                                             df[b])))
                ci_low, ci_high = diff - q * spread, diff + q * spread
            rows.append({"agent": scores["agent"].iloc[a], "other": scores["agent"].iloc[b], "difference": diff,
                         "ci_low": ci_low, "ci_high": ci_high, "boot_low": float(low),
                         "boot_high": float(high), "p_beats": float(win[a, b]),
                         "p_beats_normal": float(ndtr(diff / spread)) if spread > 0 else float(diff > 0)})
    columns = ["agent", "other", "difference", "ci_low", "ci_high", "boot_low", "boot_high", "p_beats",
               "p_beats_normal"]
    return pd.DataFrame(rows, columns=columns)


def ppi_scores(
    table: AnnotationTable,
    info: RaterInfo,
    method: str | Aggregator | Chosen | None = None,
    *,
    params: Mapping[str, Any] | None = None,
    judge_method: str | Aggregator | Chosen | None = None,
    lam: float | None = None,
    bootstrap: int = 1000,
    seed: int | None = 0,
    confidence: float = 0.95,
    min_labelled: int = MIN_LABELLED,
    interval: str = INTERVAL.default,
    probability: np.ndarray | None = None,
) -> PPIScores:
    """People-only, judge-only and prediction-powered (PPI++) scores of every agent, side by side.

    Args:
        table: the judgments of people and LLM judges.
        info: the raters' kinds (:mod:`stableval.data.raters`: a ``--rater-info`` file or ``rater_kind`` column).
        method: the consensus method of the people's credit (default: the registry's primary method, STABLEVAL),
            with ``params`` its hyper-parameters.
        judge_method: the method that aggregates the judges' judgments (default: ``method``).
        lam: the power-tuning weight (``None``: tuned per agent, PPI++; 1: plain PPI).
        bootstrap: as :func:`ppi_agent_scores`.
        seed: as :func:`ppi_agent_scores`.
        confidence: as :func:`ppi_agent_scores`.
        min_labelled: as :func:`ppi_agent_scores`.
        interval: as :func:`ppi_agent_scores` (bootstrap-t, t or clt).
        probability: as :func:`ppi_agent_scores`: (N,) per response of ``table``, the probability people were to
            rate it (known unequal probabilities, e.g. ``plan``'s active selection).

    >>> import pandas as pd
    >>> rng = np.random.default_rng(1)
    >>> truth = rng.integers(0, 2, (60, 2))
    >>> rows = [(f"q{i}", f"m{a}", "judge", int(truth[i, a] | (rng.random() < 0.2))) for i in range(60)
    ...         for a in range(2)]
    >>> rows += [(f"q{i}", f"m{a}", "alice", int(truth[i, a])) for i in range(25) for a in range(2)]
    >>> frame = pd.DataFrame(rows, columns=["item", "agent", "rater", "label"])
    >>> table = AnnotationTable.from_frame(frame, levels=("bad", "good"))
    >>> info = RaterInfo(table.raters, np.array(["human", "llm"]), np.array(["", "gpt"]))
    >>> result = ppi_scores(table, info, "mv", bootstrap=200)
    >>> columns = ["agent", "both", "judge_only", "people_score", "judge_score", "ppi_score"]
    >>> result.scores[columns].round(3).values.tolist()
    [['m0', 25, 35, 0.44, 0.5, 0.498], ['m1', 25, 35, 0.44, 0.65, 0.478]]
    """
    credits = credits_by_kind(table, info, method, params=params, judge_method=judge_method)
    result = ppi_agent_scores(credits.people, credits.judge, table.response_agent, [str(a) for a in table.agents],
                              people_judgments=credits.people_judgments, lam=lam, bootstrap=bootstrap, seed=seed,
                              confidence=confidence, min_labelled=min_labelled, interval=interval,
                              probability=probability, source=table.source)
    settings = {**result.settings, "people_method": credits.people_method, "judge_method": credits.judge_method,
                "people_raters": credits.people_raters, "judges": credits.judges}
    return PPIScores(scores=result.scores, differences=result.differences, win_probability=result.win_probability,
                     replicates=result.replicates, agents=result.agents, dataset=table.summary(), settings=settings,
                     notes=(*info.notes, *result.notes))
