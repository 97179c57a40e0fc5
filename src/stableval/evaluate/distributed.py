"""Agent scores and rater diagnostics of a :class:`~stableval.data.partitioned.PartitionedTable`, whose judgments
stay on a Dask cluster: the fits run there (:func:`~stableval.aggregate.distributed.fit_distributed`), and the
per-response results come back to the client, where the bootstrap and the tables are built with the in-memory
code (:func:`~stableval.evaluate.scores.bootstrap_fixed`, :func:`~stableval.evaluate.diagnostics.rater_metrics`).

The results are the records :func:`~stableval.evaluate.scores.score_agents` and
:func:`~stableval.evaluate.diagnostics.diagnose` return, with the same numbers as for the in-memory table of the
same data. Not done on a cluster (refused with a message): ``refit=True`` (a refit per bootstrap replicate), GLAD
difficulty, the LLM-judge diagnostics and gold labels.

>>> import tempfile, pathlib, pandas as pd
>>> from distributed import Client
>>> from stableval.data.partitioned import PartitionedTable
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> pd.DataFrame({"item": [1, 1, 2, 2, 1, 1, 2, 2], "agent": list("AABBCCDD"), "rater": list("abababab"),
...               "label": [1, 1, 0, 0, 1, 0, 1, 1]}).to_parquet(folder / "ratings.parquet")
>>> with Client(processes=False, n_workers=1, dashboard_address=":0") as client:
...     result = score_partitioned(PartitionedTable.read(folder, client), ["mv"], bootstrap=200)
>>> result.scores[["agent", "score", "rank"]].to_dict("list")
{'agent': ['A', 'B', 'C', 'D'], 'score': [1.0, 0.0, 0.5, 1.0], 'rank': [1, 4, 3, 1]}
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from stableval.aggregate import Aggregator
from stableval.aggregate.distributed import fit_distributed, partitioned_vote_counts, refuse_distributed
from stableval.aggregate.registry import Chosen, resolve_methods
from stableval.evaluate.credit import credits_by_method
from stableval.evaluate.diagnostics import (
    Diagnostics,
    chance_flags,
    mark_ambiguous,
    rater_metrics,
    response_columns,
)
from stableval.evaluate.intervals import nan_quantile
from stableval.evaluate.scores import (
    AgentScores,
    agent_means,
    bootstrap_fixed,
    competition_ranks,
    win_probabilities,
)
from stableval.progress import progress_bar

if TYPE_CHECKING:  # pragma: no cover
    from stableval.data.partitioned import Partition, PartitionedTable

__all__ = ["diagnose_partitioned", "fit_partitioned", "score_partitioned"]


def fit_partitioned(table: PartitionedTable, methods: Iterable[str | Aggregator | Chosen] | None = None,
                    params: Mapping[str, Mapping[str, Any]] | None = None, *,
                    progress: bool = False) -> tuple[list[Chosen], dict[str, Aggregator]]:
    """The chosen methods, and each fitted on the cluster, keyed like the results."""
    chosen = resolve_methods(methods, params)
    for method in chosen:
        refuse_distributed(method.method.name)
    fitted: dict[str, Aggregator] = {}
    with progress_bar("fitting (dask)", total=len(chosen), enabled=progress) as bar:
        for method in chosen:
            fitted[method.key] = fit_distributed(table, method.build())
            bar.advance()
    return chosen, fitted


def score_partitioned(table: PartitionedTable, methods: Iterable[str | Aggregator | Chosen] | None = None, *,
                      params: Mapping[str, Mapping[str, Any]] | None = None, bootstrap: int = 1000,
                      seed: int | None = 0, confidence: float = 0.95, progress: bool = False) -> AgentScores:
    """:func:`~stableval.evaluate.scores.score_agents` on a partitioned table (the bootstrap resamples the fitted
    credits, as ``refit=False`` does in memory; the same draws, so the same intervals)."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    if bootstrap < 0:
        raise ValueError(f"bootstrap must be >= 0, got {bootstrap}")
    chosen, fitted = fit_partitioned(table, methods, params, progress=progress)
    credits = credits_by_method(fitted, table.credit)
    n_agents = table.n_agents
    point = agent_means(credits, table.response_agent, n_agents)
    shortfall = 0.0
    if bootstrap:
        reps, shortfall = bootstrap_fixed(credits, table.response_agent, n_agents, bootstrap, seed,
                                          progress=progress)
    else:
        reps = np.full((0, n_agents, len(chosen)), np.nan)
    agents = [str(a) for a in table.agents]
    tail = (1.0 - confidence) / 2.0
    rows, wins, replicates = [], {}, {}
    for j, key in enumerate(fitted):
        rep = reps[:, :, j]
        replicates[key] = rep
        ranks = competition_ranks(point[:, j])
        if len(rep):
            low, high = nan_quantile(rep, tail), nan_quantile(rep, 1 - tail)
            rank_low, rank_high = np.quantile(competition_ranks(rep), [tail, 1 - tail], axis=0, method="nearest")
            wins[key] = win_probabilities(rep)
        else:
            low = high = np.full(n_agents, np.nan)
            rank_low = rank_high = ranks
            wins[key] = np.full((n_agents, n_agents), np.nan)
        rows.append(pd.DataFrame({
            "method": key, "agent": agents, "score": point[:, j], "ci_low": low, "ci_high": high, "rank": ranks,
            "rank_low": np.asarray(rank_low, dtype=np.int64), "rank_high": np.asarray(rank_high, dtype=np.int64),
            "responses": table.responses_per_agent(), "judgments": table.judgments_per_agent()}))
    item_frame = table.response_frame()
    for j, key in enumerate(fitted):
        item_frame[key] = credits[:, j]
    return AgentScores(
        scores=pd.concat(rows, ignore_index=True),
        win_probability={key: pd.DataFrame(win, index=agents, columns=agents) for key, win in wins.items()},
        replicates=replicates, item_credit=item_frame, agents=agents, dataset=table.summary(),
        fits={key: model.fit_summary() for key, model in fitted.items() if model.fit_summary()},
        posteriors={key: np.asarray(model.posteriors_) for key, model in fitted.items()},
        settings={"methods": [c.label for c in chosen], "bootstrap": bootstrap, "seed": seed,
                  "confidence": confidence, "refit": False, "bootstrap_se_shortfall": shortfall,
                  "params": {c.key: c.estimator.get_params() for c in chosen}, "executor": "dask"},
    )


# ====================================================================================== diagnostics
def _rater_counts(partition: Partition, n_raters: int) -> tuple[np.ndarray, np.ndarray]:
    """(R,) judgments and (R,) distinct responses of each rater in a partition."""
    X = partition.X.tocoo()
    k = partition.first_seen.shape[1]
    rater = X.col // k
    ratings = np.bincount(rater, weights=X.data, minlength=n_raters)
    pairs = np.unique(rater.astype(np.int64) * max(partition.n_responses, 1) + X.row)
    return ratings.astype(np.int64), np.bincount(pairs // max(partition.n_responses, 1), minlength=n_raters)


def _details(partition: Partition, local: np.ndarray, raters: Sequence[str], levels: Sequence[str]) -> list[str]:
    """For each local response, its judgments as ``rater=level; ...`` (sorted by rater, then level; a repeated
    judgment listed as often as it was given)."""
    X = partition.X[local].tocsr()
    X.sort_indices()
    k = len(levels)
    out = []
    for row in range(X.shape[0]):
        columns = X.indices[X.indptr[row]:X.indptr[row + 1]]
        repeats = X.data[X.indptr[row]:X.indptr[row + 1]].astype(np.int64)
        cells = np.repeat(columns, repeats).tolist()
        out.append("; ".join(f"{raters[c // k]}={levels[c % k]}" for c in cells))
    return out


def diagnose_partitioned(table: PartitionedTable, method: str | Aggregator = "stableval", *,
                         params: Mapping[str, Any] | None = None, ambiguity_threshold: float = 0.3,
                         spammer_threshold: float = 0.05) -> Diagnostics:
    """:func:`~stableval.evaluate.diagnostics.diagnose` on a partitioned table (Dawid–Skene or STABLEVAL)."""
    if not 0.0 <= ambiguity_threshold < 1.0:
        raise ValueError(f"ambiguity threshold must be in [0, 1), got {ambiguity_threshold}")
    if not 0.0 <= spammer_threshold <= 1.0:
        raise ValueError(f"spammer threshold must be in [0, 1], got {spammer_threshold}")
    chosen = resolve_methods([method], {method.strip().lower(): params or {}} if isinstance(method, str) else None)[0]
    if not chosen.method.rater_model:
        raise ValueError(f"diagnostics need a model with rater confusion matrices: {chosen.method.name} has none")
    model = fit_distributed(table, chosen.build())
    confusion = np.asarray(model.confusion_, dtype=float)
    priors = np.asarray(model.priors_, dtype=float)
    posteriors = np.asarray(model.posteriors_, dtype=float)
    k = table.n_levels
    per_partition = table.gather(table.map(_rater_counts, table.n_raters))
    raters = pd.concat([pd.DataFrame({
        "rater": [str(r) for r in table.raters],
        "ratings": np.sum([p[0] for p in per_partition], axis=0).astype(np.int64),
        "responses": np.sum([p[1] for p in per_partition], axis=0).astype(np.int64),
    }), rater_metrics(confusion, priors)], axis=1)
    raters["below_chance"] = chance_flags(raters["accuracy"].to_numpy(), k)
    raters["near_uniform"] = raters["spammer_score"] < spammer_threshold
    raters = raters.sort_values(["accuracy", "rater"], ascending=[False, True], kind="stable").reset_index(drop=True)

    responses = response_columns(table.response_frame(), partitioned_vote_counts(table), posteriors, table.levels)
    flagged = mark_ambiguous(responses, ambiguity_threshold)
    ambiguous = responses.iloc[flagged].drop(columns="ambiguous").reset_index(drop=True)
    ambiguous["details"] = _flagged_details(table, flagged)
    settings: dict[str, Any] = {"method": chosen.label, "ambiguity_threshold": ambiguity_threshold,
                                "spammer_threshold": spammer_threshold, "chance_accuracy": 1.0 / k,
                                "entropy_unit": "nats", "params": chosen.estimator.get_params(),
                                "executor": "dask"}
    return Diagnostics(raters=raters, responses=responses, ambiguous=ambiguous, confusion=confusion,
                       raters_order=[str(r) for r in table.raters], priors=priors, levels=table.levels,
                       method=chosen.key, fit=model.fit_summary(), dataset=table.summary(), settings=settings,
                       difficulty_source=None)


def _flagged_details(table: PartitionedTable, flagged: np.ndarray) -> list[str]:
    """The judgments of the flagged responses (global numbers), fetched from the partitions that hold them."""
    part = np.searchsorted(table.offsets, flagged, side="right") - 1
    raters = [str(r) for r in table.raters]
    futures = {int(p): table.client.submit(_details, table.partitions[int(p)],
                                           flagged[part == p] - table.offsets[int(p)], raters, table.levels)
               for p in np.unique(part)}
    found = dict(zip(futures, table.gather(list(futures.values())), strict=True))
    seen = {int(p): 0 for p in futures}
    out = []
    for p in part:
        out.append(found[int(p)][seen[int(p)]])
        seen[int(p)] += 1
    return out
