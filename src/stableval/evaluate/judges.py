"""LLM judges as raters: each judge measured against the human consensus.

The **human consensus** is the chosen method (STABLEVAL by default) fitted on the human raters' judgments only;
every response the humans judged gets a consensus credit ``h_i`` (the method's credit rule) and a consensus level
(its most probable level). Each LLM judgment ``(j, i, o)`` of such a response is compared with it through the
credit gap ``d = v(o) − h_i``. Per judge:

* ``agreement``: share of its judgments equal to the consensus level.
* ``leniency``: mean credit gap (> 0: more generous than the humans, < 0: stricter); the LLM-as-a-judge
  literature calls this score inflation (Zheng et al. 2023, "Judging LLM-as-a-Judge with MT-Bench and Chatbot
  Arena", NeurIPS Datasets and Benchmarks).
* ``self_preference``: mean gap on agents of the judge's own model family minus mean gap on the other agents — how
  much more generous the judge is to its own family than to the rest, beyond its general leniency (self-enhancement
  bias, Zheng et al. 2023, Section 3.3; Panickssery et al. 2024, "LLM evaluators recognize and favor their own
  generations", NeurIPS). ``own_family_gap`` is the plain gap on own-family agents.
* ``length_slope``: least-squares slope of the credit gap on the answer length in standard deviations (credit per
  SD of length; verbosity bias, Zheng et al. 2023, Section 3.3); ``length_corr`` is the Pearson correlation of the
  judge's credit with the length, ``length_corr_humans`` that of the consensus credit on the same responses.
* ``left_share`` (pairwise votes): share of its decisive votes won by the first-shown answer (0.5 = no position
  bias; Zheng et al. 2023, Section 3.3), with a Wilson (1927) interval; ``left_share_humans`` pools the people.

Intervals of leniency, self-preference and the length slope are percentile bootstrap intervals over items
(Efron & Tibshirani 1993, ch. 13): items are resampled with replacement and the statistics recomputed from
per-item sums (one matrix product per chunk of replicates), the consensus held fixed.

>>> import pandas as pd
>>> from stableval.data.raters import RaterInfo
>>> frame = pd.DataFrame({"item": [1, 1, 1, 2, 2, 2], "agent": "A", "rater": ["h1", "h2", "j"] * 2,
...                       "label": [1, 1, 1, 0, 0, 1]})
>>> table = AnnotationTable.from_frame(frame, levels=("no", "yes"))
>>> info = RaterInfo(table.raters, np.array(["human", "human", "llm"]), np.array(["", "", "gpt"]))
>>> report = judge_diagnostics(table, info, "mv", bootstrap=0)
>>> report.judges[["judge", "agreement", "leniency"]].to_dict("records")
[{'judge': 'j', 'agreement': 0.5, 'leniency': 0.5}]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from stableval._json import jsonable, records
from stableval.aggregate import Aggregator
from stableval.aggregate.registry import Chosen, method_names, primary_method, resolve_methods
from stableval.console import Displayed
from stableval.data.pairwise import PairwiseTable
from stableval.data.raters import RaterInfo
from stableval.data.table import AnnotationTable
from stableval.errors import InputError
from stableval.evaluate.credit import item_credit
from stableval.evaluate.intervals import percentile_interval, wilson_interval

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console

__all__ = ["JUDGE_COLUMNS", "JudgeReport", "judge_diagnostics", "leaderboards_by_kind"]

#: the columns of :attr:`JudgeReport.judges`
JUDGE_COLUMNS = ("judge", "family", "judgments", "compared", "agreement", "leniency", "leniency_ci_low",
                 "leniency_ci_high", "own_family_judgments", "own_family_gap", "other_gap", "self_preference",
                 "self_preference_ci_low", "self_preference_ci_high", "length_corr", "length_corr_humans",
                 "length_slope", "length_slope_ci_low", "length_slope_ci_high", "decisive_votes", "left_share",
                 "left_share_ci_low", "left_share_ci_high")

# per-(judge, item) sums, the last axis of the statistics array
_N, _D, _N_OWN, _D_OWN, _AGREE, _X, _XX, _XD, _C, _CC, _XC, _H, _HH, _XH = range(14)
_N_STATS = 14
# replicates × items held at once in the bootstrap
_CHUNK_CELLS = 2_000_000


@dataclass(frozen=True)
class JudgeReport(Displayed):
    """Result of :func:`judge_diagnostics`.

    Attributes:
        judges: one row per LLM judge (columns :data:`JUDGE_COLUMNS`), in rater order.
        human_left_share: the people's pooled share of decisive votes won by the first answer, and its interval
            (pairwise input; else NaN).
        settings: the consensus method, bootstrap size, seed, confidence, the agent families used.
        notes: what could not be computed and why.
    """

    judges: pd.DataFrame
    human_left_share: tuple[float, float, float] = (np.nan, np.nan, np.nan)
    settings: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: settings, notes, the people's position share and one record per judge."""
        share, low, high = self.human_left_share
        return {"settings": jsonable(self.settings), "notes": list(self.notes),
                "human_left_share": jsonable({"share": share, "ci_low": low, "ci_high": high}),
                "judges": records(self.judges)}

    def to_frame(self) -> pd.DataFrame:
        """The per-judge table (CSV)."""
        return self.judges

    def render(self, console: Console) -> None:
        """The per-judge table people read, with the consensus it is measured against."""
        from rich import box
        from rich.table import Table

        settings = self.settings
        console.print(f"\n[bold]LLM judges against the human consensus[/] ({settings['method']} fitted on "
                      f"{settings['human_raters']:,} human raters; {settings['confidence']:.0%} bootstrap "
                      f"intervals over items, B = {settings['bootstrap']:,})")

        def cell(row: Any, name: str, digits: int = 3) -> str:
            value = getattr(row, name)
            if not np.isfinite(value):
                return "–"
            low, high = getattr(row, f"{name}_ci_low", np.nan), getattr(row, f"{name}_ci_high", np.nan)
            sign = "+" if name != "left_share" else ""
            text = f"{value:{sign}.{digits}f}"
            return text + (f" [{low:{sign}.{digits}f}, {high:{sign}.{digits}f}]" if np.isfinite(low) else "")

        out = Table(box=box.SIMPLE_HEAVY, show_edge=False)
        pairwise = bool(self.judges["decisive_votes"].sum())
        for name in ("Judge", "Family", "Compared", "Agreement", "Leniency", "Self-preference", "Length slope",
                     "Length r (humans)", *(("First-shown wins",) if pairwise else ())):
            out.add_column(name, justify="left" if name in ("Judge", "Family") else "right")
        for row in self.judges.itertuples(index=False):
            r_judge, r_humans, agreement = (float(getattr(row, n)) for n in ("length_corr", "length_corr_humans",
                                                                             "agreement"))
            corr = "–" if not np.isfinite(r_judge) else f"{r_judge:+.2f} ({r_humans:+.2f})"
            out.add_row(str(row.judge), str(row.family) or "–", f"{row.compared:,}",
                        "–" if not np.isfinite(agreement) else f"{agreement:.3f}", cell(row, "leniency"),
                        cell(row, "self_preference"), cell(row, "length_slope"), corr,
                        *((cell(row, "left_share"),) if pairwise else ()))
        console.print(out)
        share, low, high = self.human_left_share
        console.print("Leniency = mean credit the judge gives minus the human consensus credit (> 0 lenient). "
                      "Self-preference = that gap on agents of the judge's family minus on the others. Length "
                      "slope = change of the gap per SD of answer length; Length r = correlation of the judge's "
                      "(the consensus') credit with the length."
                      + (" First-shown wins = share of decisive pairwise votes won by the first answer (0.5 = no "
                         f"position bias); people: {share:.3f} [{low:.3f}, {high:.3f}]." if pairwise else ""))
        for note in self.notes:
            console.print(f"  note: {note}")


# ====================================================================================== statistics
def _estimates(stats: np.ndarray) -> dict[str, np.ndarray]:
    """Leniency, own/other gap, self-preference, length slope and correlations from summed statistics [..., S]."""
    s = np.moveaxis(np.asarray(stats, dtype=float), -1, 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        n, n_own = s[_N], s[_N_OWN]
        own = s[_D_OWN] / n_own
        other = (s[_D] - s[_D_OWN]) / (n - n_own)
        sxx = s[_XX] - s[_X] ** 2 / n
        sxd = s[_XD] - s[_X] * s[_D] / n
        sxc = s[_XC] - s[_X] * s[_C] / n
        scc = s[_CC] - s[_C] ** 2 / n
        sxh = s[_XH] - s[_X] * s[_H] / n
        shh = s[_HH] - s[_H] ** 2 / n
        out = {
            "agreement": s[_AGREE] / n,
            "leniency": s[_D] / n,
            "own_family_gap": own,
            "other_gap": other,
            "self_preference": own - other,
            "length_slope": np.where(sxx > 1e-12, sxd / sxx, np.nan),
            "length_corr": np.where((sxx > 1e-12) & (scc > 1e-12), sxc / np.sqrt(sxx * scc), np.nan),
            "length_corr_humans": np.where((sxx > 1e-12) & (shh > 1e-12), sxh / np.sqrt(sxx * shh), np.nan),
        }
    return out


def _bootstrap(stats: np.ndarray, n_boot: int, seed: int, confidence: float
               ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Percentile intervals of the estimates over item resamples: stats (J, I, S) → {name: (low (J,), high (J,))}."""
    n_judges, n_items, n_stats = stats.shape
    flat = np.ascontiguousarray(stats.transpose(1, 0, 2).reshape(n_items, n_judges * n_stats))
    rng = np.random.default_rng(seed)
    chunk = max(1, _CHUNK_CELLS // max(n_items, 1))
    draws: dict[str, list[np.ndarray]] = {}
    done = 0
    while done < n_boot:
        size = min(chunk, n_boot - done)
        draws_at = rng.integers(0, n_items, size=(size, n_items)) + (np.arange(size) * n_items)[:, None]
        weights = np.bincount(draws_at.ravel(), minlength=size * n_items).reshape(size, n_items).astype(float)
        summed = (weights @ flat).reshape(size, n_judges, n_stats)
        for name, values in _estimates(summed).items():
            draws.setdefault(name, []).append(values)
        done += size
    return {name: percentile_interval(np.concatenate(parts, axis=0), confidence, axis=0)
            for name, parts in draws.items()}


def _position(votes: PairwiseTable, names: list[str], humans: set[str], confidence: float
              ) -> tuple[pd.DataFrame, tuple[float, float, float]]:
    """Per judge: decisive votes, share won by the first-shown answer and its Wilson interval; the people pooled."""
    frame = votes.frame
    rater = frame["rater"].astype(str).to_numpy(dtype=object)
    winner = frame["winner"].to_numpy(dtype=object)
    left = (winner == "a").astype(float)
    decisive = (winner != "tie").astype(float)
    code = pd.Index(names).get_indexer(pd.Index(rater))
    judged = code >= 0
    n_left = np.bincount(code[judged], weights=left[judged], minlength=len(names))
    n_decisive = np.bincount(code[judged], weights=decisive[judged], minlength=len(names))
    low, high = wilson_interval(n_left, n_decisive, confidence)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = n_left / n_decisive
    human = np.isin(rater, np.array(sorted(humans), dtype=object))
    h_left, h_decisive = float(left[human].sum()), float(decisive[human].sum())
    h_low, h_high = wilson_interval(h_left, h_decisive, confidence)
    h_share = h_left / h_decisive if h_decisive else np.nan
    per_judge = pd.DataFrame({"decisive_votes": n_decisive.astype(np.int64), "left_share": share,
                              "left_share_ci_low": low, "left_share_ci_high": high})
    return per_judge, (float(h_share), float(h_low), float(h_high))


# ====================================================================================== the analysis
def judge_diagnostics(
    table: AnnotationTable,
    info: RaterInfo,
    method: str | Aggregator | Chosen | None = None,
    *,
    params: Mapping[str, Any] | None = None,
    votes: PairwiseTable | None = None,
    lengths: np.ndarray | None = None,
    bootstrap: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> JudgeReport:
    """Measure every LLM judge of ``table`` against the human consensus (see the module docstring).

    Args:
        table: the judgments of people and LLM judges.
        info: the raters' kinds and families and the agents' families (:mod:`stableval.data.raters`).
        method: the consensus method (a registered name, an estimator or a resolved method; default: the
            registry's primary method), fitted on the human judgments only.
        params: the method's hyper-parameters, with a method name.
        votes: the raw pairwise votes, for position bias (``None``: no position statistics).
        lengths: (N,) answer length of each response, for length bias (``None``: none).
        bootstrap: item-bootstrap replicates for the intervals (0 = none).
        seed: the bootstrap's seed.
        confidence: the intervals' level.
    """
    if bootstrap < 0:
        raise ValueError(f"bootstrap must be >= 0, got {bootstrap}")
    if not 0.5 <= confidence < 1.0:
        raise ValueError(f"confidence must be in [0.5, 1), got {confidence}")
    human_mask = info.judgment_mask(table, "human")
    llm_mask = info.judgment_mask(table, "llm")
    counts = info.counts()
    if not human_mask.any():
        raise InputError("no judgments by human raters: LLM judges are measured against the human consensus",
                         file=table.source, allowed="some raters of kind human (rater metadata)")
    if not llm_mask.any():
        raise InputError("no judgments by LLM judges to diagnose", file=table.source,
                         allowed="some raters of kind llm (rater metadata)")
    method = primary_method(method_names()) if method is None else method
    chosen = resolve_methods([method], {method.strip().lower(): dict(params or {})} if isinstance(method, str)
                             else None)[0]
    humans = table.subset(human_mask)
    model = chosen.build().fit(humans)
    covered = np.unique(table.response[human_mask])  # full-table codes of the humans' responses, subset order
    consensus = np.full(table.n_responses, np.nan)
    consensus[covered] = item_credit(model, table.credit)
    level = np.full(table.n_responses, -1, dtype=np.int64)
    level[covered] = np.asarray(model.posteriors_).argmax(axis=1)

    llm_raters = np.flatnonzero(np.asarray(info.kind, dtype=object) == "llm")
    judge_of = np.full(table.n_raters, -1, dtype=np.int64)
    position = info.raters.get_indexer(table.raters)
    judge_of[np.flatnonzero(np.isin(position, llm_raters))] = np.arange(llm_raters.size)
    judge_family = np.asarray(info.family, dtype=object)[position[np.flatnonzero(judge_of >= 0)]]
    names = [str(r) for r in table.raters[np.flatnonzero(judge_of >= 0)]]
    n_judges = len(names)

    agent_family = np.array([info.agent_family.get(str(a), "") for a in table.agents], dtype=object)
    rows = np.flatnonzero(llm_mask)
    judge = judge_of[table.rater[rows]]
    response = table.response[rows]
    compared = np.isfinite(consensus[response])
    judgments = np.bincount(judge, minlength=n_judges)
    rows, judge, response = rows[compared], judge[compared], response[compared]
    credit = table.credit[table.label[rows]]
    human = consensus[response]
    gap = credit - human
    fam_of_agent = agent_family[table.response_agent[response]]
    own = (judge_family[judge] != "") & (fam_of_agent == judge_family[judge])
    if lengths is not None:
        lengths = np.asarray(lengths, dtype=float)
        if lengths.shape != (table.n_responses,) or not np.isfinite(lengths[response]).all():
            raise ValueError(f"lengths must be (N,) = ({table.n_responses},) finite numbers")
        pool = lengths[covered]
        sd = float(pool.std())
        x = (lengths[response] - pool.mean()) / sd if sd > 0 else np.zeros(response.size)
    else:
        x = np.zeros(response.size)
    per_judgment = np.zeros((response.size, _N_STATS))
    per_judgment[:, _N] = 1.0
    per_judgment[:, _D] = gap
    per_judgment[:, _N_OWN] = own
    per_judgment[:, _D_OWN] = gap * own
    per_judgment[:, _AGREE] = table.label[rows] == level[response]
    per_judgment[:, _X], per_judgment[:, _XX], per_judgment[:, _XD] = x, x * x, x * gap
    per_judgment[:, _C], per_judgment[:, _CC], per_judgment[:, _XC] = credit, credit * credit, x * credit
    per_judgment[:, _H], per_judgment[:, _HH], per_judgment[:, _XH] = human, human * human, x * human
    cell = judge.astype(np.int64) * table.n_items + table.response_item[response]
    stats = np.column_stack([np.bincount(cell, weights=per_judgment[:, s], minlength=n_judges * table.n_items)
                             for s in range(_N_STATS)]).reshape(n_judges, table.n_items, _N_STATS)
    point = _estimates(stats.sum(axis=1))
    intervals = _bootstrap(stats, bootstrap, seed, confidence) if bootstrap else {}

    out = pd.DataFrame({"judge": names, "family": [str(f) for f in judge_family],
                        "judgments": judgments.astype(np.int64),
                        "compared": stats[:, :, _N].sum(axis=1).astype(np.int64)})
    nan = np.full(n_judges, np.nan)
    for name in ("agreement", "leniency", "own_family_gap", "other_gap", "self_preference", "length_corr",
                 "length_corr_humans", "length_slope"):
        out[name] = point[name]
        if name in ("leniency", "self_preference", "length_slope"):
            low, high = intervals.get(name, (nan, nan))
            out[f"{name}_ci_low"], out[f"{name}_ci_high"] = low, high
    out["own_family_judgments"] = stats[:, :, _N_OWN].sum(axis=1).astype(np.int64)
    if lengths is None:
        for name in ("length_corr", "length_corr_humans", "length_slope", "length_slope_ci_low",
                     "length_slope_ci_high"):
            out[name] = np.nan
    human_share = (np.nan, np.nan, np.nan)
    if votes is not None:
        human_names = {str(r) for r, k in zip(info.raters, info.kind, strict=True) if k == "human"}
        per_judge, human_share = _position(votes, names, human_names, confidence)
        out = pd.concat([out, per_judge], axis=1)
    else:
        out["decisive_votes"] = np.zeros(n_judges, dtype=np.int64)
        out["left_share"] = out["left_share_ci_low"] = out["left_share_ci_high"] = np.nan

    notes = list(info.notes)
    unmatched = int(judgments.sum() - out["compared"].sum())
    if unmatched:
        notes.append(f"{unmatched:,} LLM judgment(s) of responses no human judged are not compared")
    no_family = [n for n, f in zip(names, judge_family, strict=True) if not f]
    if no_family:
        notes.append("no self-preference for judges without a family: " + ", ".join(no_family))
    if not info.agent_family:
        notes.append("no agent families known, so no self-preference (list agents with kind 'agent' and their "
                     "family in the rater metadata)")
    else:
        missing = [str(a) for a, f in zip(table.agents, agent_family, strict=True) if not f]
        if missing:
            notes.append("agents without a family count as other-family: " + ", ".join(missing))
    if lengths is None:
        notes.append("no answer lengths given, so no length bias (give the column of answer lengths)")
    if votes is None:
        notes.append("position bias needs pairwise votes")
    settings = {"method": chosen.label, "params": chosen.estimator.get_params(), "bootstrap": bootstrap,
                "seed": seed, "confidence": confidence, "human_raters": counts["human"], "llm_judges": counts["llm"],
                "agent_family": dict(info.agent_family), "length_unit": "standard deviations of answer length"}
    return JudgeReport(judges=out[list(JUDGE_COLUMNS)], human_left_share=human_share, settings=settings,
                       notes=tuple(notes))


def leaderboards_by_kind(table: AnnotationTable, info: RaterInfo, method: str | Aggregator | Chosen | None = None, *,
                         bootstrap: int = 200, seed: int = 0, confidence: float = 0.95) -> pd.DataFrame:
    """One method's leaderboard (default: the registry's primary method) from every rater, from the people only and
    from the LLM judges only, side by side.

    One row per agent, best first under all raters: ``agent``, then per selection (``all``, ``human``, ``llm``;
    the kinds present) ``<kind>_score, <kind>_ci_low, <kind>_ci_high, <kind>_rank``, and ``rank_change`` = human
    rank − LLM rank (positive: the judges rank the agent higher than the people do). An agent no rater of a kind
    judged has no score (NaN) there.

    >>> import pandas as pd
    >>> frame = pd.DataFrame({"item": [1, 1, 1, 1], "agent": ["A", "A", "B", "B"], "rater": ["h", "j"] * 2,
    ...                       "label": [1, 0, 0, 1]})
    >>> t = AnnotationTable.from_frame(frame, levels=("no", "yes"))
    >>> info = RaterInfo(t.raters, np.array(["human", "llm"]), np.array(["", "x"]))
    >>> board = leaderboards_by_kind(t, info, "mv", bootstrap=0)
    >>> board[["agent", "human_rank", "llm_rank", "rank_change"]].values.tolist()
    [['A', 1, 2, -1], ['B', 2, 1, 1]]
    """
    from stableval.data.raters import select_raters
    from stableval.evaluate.scores import score_agents

    chosen = resolve_methods([primary_method(method_names()) if method is None else method])[0]
    counts = info.counts()
    board = pd.DataFrame({"agent": [str(a) for a in table.agents]})
    for kind in ("all", *(k for k in ("human", "llm") if counts[k])):
        result = score_agents(select_raters(table, info, kind), [chosen], bootstrap=bootstrap, seed=seed,
                              confidence=confidence)
        scores = result.scores.set_index("agent")
        scored = scores[scores["responses"] > 0] if "responses" in scores.columns else scores
        for column in ("score", "ci_low", "ci_high", "rank"):
            board[f"{kind}_{column}"] = board["agent"].map(scored[column]) if column in scored.columns else np.nan
    if counts["human"] and counts["llm"]:
        board["rank_change"] = board["human_rank"] - board["llm_rank"]
    board = board.sort_values(["all_score", "agent"], ascending=[False, True], kind="stable").reset_index(drop=True)
    for column in [c for c in board.columns if c.endswith("_rank") or c == "rank_change"]:
        board[column] = board[column].astype("Int64")
    return board
