"""Fit majority vote, Dawid–Skene and STABLEVAL on a :class:`~stableval.data.partitioned.PartitionedTable`: the
judgments stay on the Dask workers, and each EM iteration is a map over partitions plus a reduce on the client.

The E-step of a response needs only that response's judgments, and every response lives in one partition, so each
partition E-steps its own responses (:class:`~stableval.aggregate.em.ResponseBlocks`, the in-memory kernel) and
sends back the sums the M-step needs: the log-likelihood, the posterior mass per class (K,) and the expected counts
(K, R·K) — K + K·R·K + 1 floats per partition per iteration. The client adds them and runs the M-step
(:func:`~stableval.aggregate.em.parameters_from_counts`), then sends the new parameters (K + R·K·K floats) back.
The posteriors stay on the workers until the fit ends. The iteration, stopping rule, SQUAREM acceleration, starts
and learnt priors are the in-memory code's (:class:`~stableval.aggregate.em.EMIteration` and the same steps as
:meth:`~stableval.aggregate.em_fit.EMAggregator.fit_matrix`), so the fit equals the in-memory one up to the order in
which floating-point sums are added (about 1e-12 here).

Sources: Dawid & Skene (1979), JRSS C 28(1):20–28 (the model and its EM); Bonagiri et al. (2026),
arXiv:2605.02122, Algorithm 1 (STABLEVAL's MAP EM); EM as a map over data partitions and a reduce of sufficient
statistics: Chu et al. (2006), "Map-Reduce for Machine Learning on Multicore", NIPS 19.

The client holds per-response arrays (vote counts, starts and final posteriors, O(responses × K)), never the
judgments. Not supported: gold labels, GLAD and the other methods without a Dawid–Skene rater model (refused by
:func:`fit_distributed` with a message).

>>> import tempfile, pathlib, pandas as pd
>>> from distributed import Client
>>> from stableval.data.partitioned import PartitionedTable
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> pd.DataFrame({"item": [1, 1, 1, 2, 2, 2], "agent": "A", "rater": list("abcabc"),
...               "label": [1, 1, 0, 0, 0, 0]}).to_parquet(folder / "ratings.parquet")
>>> with Client(processes=False, n_workers=1, dashboard_address=":0") as client:
...     model = fit_distributed(PartitionedTable.read(folder, client), "ds")
>>> model.posteriors_.argmax(axis=1).tolist(), bool(model.converged_)
([1, 0], True)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from stableval.aggregate._base import Aggregator
from stableval.aggregate.em import ResponseBlocks, rater_judgments, vote_counts_of_matrix
from stableval.aggregate.em_acceleration import acceleration_choice
from stableval.aggregate.em_fit import EMAggregator, EMRunner, screening_rows
from stableval.aggregate.majority_vote import MajorityVote
from stableval.errors import StableValError

if TYPE_CHECKING:  # pragma: no cover
    from stableval.data.partitioned import Partition, PartitionedTable

__all__ = ["DISTRIBUTED_METHODS", "PartitionedEStep", "fit_distributed", "refuse_distributed"]

#: the registry's methods that fit on a partitioned table
DISTRIBUTED_METHODS = ("mv", "ds", "stableval")


def refuse_distributed(name: str) -> None:
    """Raise a clear error for a method the Dask executor does not fit."""
    if name not in DISTRIBUTED_METHODS:
        raise StableValError(f"method {name!r} is not supported by the Dask executor; allowed there: "
                             f"{', '.join(DISTRIBUTED_METHODS)} (drop --executor dask to fit {name} in memory)")


# ====================================================================================== worker side
def _vote_counts(partition: Partition) -> np.ndarray:
    return vote_counts_of_matrix(partition.X, partition.first_seen.shape[1])


def _first_seen(partition: Partition) -> np.ndarray:
    return partition.first_seen


class PartitionEM:
    """A partition's side of EM, kept on the worker that holds the partition: its response matrix in row blocks
    (:class:`~stableval.aggregate.em.ResponseBlocks`, one thread: the worker's threads are the parallelism)."""

    def __init__(self, partition: Partition, kernel: str | None = None) -> None:
        self.blocks = ResponseBlocks(partition.X, None, threads=1, kernel=kernel)

    def counts(self, posteriors: np.ndarray) -> np.ndarray:
        """Expected counts (K, R·K) of this partition's slice of posteriors (K, n)."""
        return self.blocks.counts(posteriors)

    def e_step(self, priors: np.ndarray, confusion: np.ndarray) -> EStepPart:
        """The E-step: the partition's posteriors (K, n), kept on the worker, and the sums for the M-step."""
        out = np.empty((confusion.shape[1], self.blocks.n_responses))
        return EStepPart(out, *self.blocks.e_step(priors, confusion, out))


class EStepPart:
    """One partition's E-step: ``posteriors`` (K, n) stay on the worker; :meth:`sums` go to the client."""

    def __init__(self, posteriors: np.ndarray, log_likelihood: float, mass: np.ndarray, counts: np.ndarray) -> None:
        self.posteriors, self.log_likelihood, self.mass, self.counts = posteriors, log_likelihood, mass, counts

    def sums(self) -> tuple[float, np.ndarray, np.ndarray]:
        return self.log_likelihood, self.mass, self.counts


def _judgments(partition: Partition, n_raters: int) -> tuple[int, np.ndarray]:
    """The partition's stored judgments (nonzeros) and its judgments per rater (R,)."""
    return int(partition.X.nnz), rater_judgments(partition.X, n_raters)


def _counts(em: PartitionEM, posteriors: np.ndarray) -> np.ndarray:
    return em.counts(posteriors)


def _e_step(em: PartitionEM, priors: np.ndarray, confusion: np.ndarray) -> EStepPart:
    return em.e_step(priors, confusion)


def _sums(part: EStepPart) -> tuple[float, np.ndarray, np.ndarray]:
    return part.sums()


def _posteriors(part: EStepPart) -> np.ndarray:
    return part.posteriors


# ====================================================================================== client side
class PartitionedEStep:
    """The E-step over every partition, in the shape :class:`~stableval.aggregate.em._EMRun` calls it: sums for
    the M-step on the client, posteriors on the workers (the last E-step's, gathered by :meth:`posteriors`).
    Each E-step is one task per partition, run where the partition lives, and one small task fetching its sums."""

    def __init__(self, table: PartitionedTable) -> None:
        from stableval.aggregate.em_kernel import kernel_choice

        self.table = table
        self.client = table.client
        # the E-step kernel the in-memory fit of the whole matrix would use (chosen by its stored judgments), so
        # every partition computes what memory computes whatever its own size; and the judgments per rater, what
        # the accelerator ("auto") is chosen by, as for the whole matrix
        parts = self.client.gather([self.client.submit(_judgments, part, table.n_raters, pure=False)
                                    for part in table.partitions])
        self.stored = sum(stored for stored, _ in parts)
        self.kernel = kernel_choice(self.stored)
        self.judgments_per_rater = np.sum([per_rater for _, per_rater in parts], axis=0) if parts \
            else np.zeros(table.n_raters)
        self.parts = [self.client.submit(PartitionEM, part, self.kernel, pure=False) for part in table.partitions]
        self.n_responses = table.n_responses
        self._last: list[Any] = []

    def rater_judgments(self, n_raters: int) -> np.ndarray:
        """Judgments per rater (R,) over every partition
        (:func:`~stableval.aggregate.em_acceleration.acceleration_choice`)."""
        return self.judgments_per_rater

    def posteriors_buffer(self, n_levels: int) -> np.ndarray:
        """No buffer on the client: the posteriors stay on the workers."""
        return np.empty((n_levels, 0))

    def final_posteriors(self, buffer: np.ndarray) -> np.ndarray:
        """The last E-step's posteriors (K, N), gathered in response order."""
        return self.posteriors()

    def counts(self, posteriors: np.ndarray) -> np.ndarray:
        """Expected counts (K, R·K) of client-side posteriors (K, N): each partition's slice, summed in partition
        order."""
        offsets = self.table.offsets
        futures = [self.client.submit(_counts, em, np.ascontiguousarray(posteriors[:, offsets[p]:offsets[p + 1]]),
                                      pure=False) for p, em in enumerate(self.parts)]
        parts = self.client.gather(futures)
        return np.sum(parts, axis=0) if parts else np.zeros((posteriors.shape[0], self.table.n_raters
                                                             * self.table.n_levels))

    def e_step(self, priors: np.ndarray, confusion: np.ndarray, out: np.ndarray) -> tuple[float, np.ndarray,
                                                                                          np.ndarray]:
        """Log-likelihood, posterior mass (K,) and expected counts (K, R·K) summed over partitions, in partition
        order; ``out`` is not used (the posteriors stay on the workers)."""
        self._last = [self.client.submit(_e_step, em, priors, confusion, pure=False) for em in self.parts]
        sums = self.client.gather([self.client.submit(_sums, part, pure=False) for part in self._last])
        k = confusion.shape[1]
        log_likelihood = float(sum(s[0] for s in sums))
        mass = np.sum([s[1] for s in sums], axis=0) if sums else np.zeros(k)
        counts = np.sum([s[2] for s in sums], axis=0) if sums else np.zeros((k, confusion.shape[0] * k))
        return log_likelihood, mass, counts

    def posteriors(self) -> np.ndarray:
        """The last E-step's posteriors (K, N), gathered in response order."""
        parts = self.client.gather([self.client.submit(_posteriors, part, pure=False) for part in self._last])
        return np.concatenate(parts, axis=1) if parts else np.zeros((self.table.n_levels, 0))


def _fit_em(model: EMAggregator, table: PartitionedTable, counts: np.ndarray) -> None:
    """:meth:`EMAggregator.fit_matrix` on a partitioned table: the same starts, screening and learnt-prior refit
    (:meth:`EMAggregator.fit_from_starts`), with the E-step a map over partitions."""
    estep = PartitionedEStep(table)
    n_raters, k = table.n_raters, table.n_levels

    def expected(posteriors: np.ndarray) -> np.ndarray:
        rows = estep.counts(np.ascontiguousarray(np.asarray(posteriors).T))  # (K, R·K) [true, r·K + given]
        return np.ascontiguousarray(rows.reshape(k, n_raters, k).transpose(1, 0, 2).reshape(n_raters * k, k))

    screen: tuple[np.ndarray, EMRunner] | None = None
    acceleration = acceleration_choice(model.acceleration, estep.judgments_per_rater)  # the whole matrix's
    rows = screening_rows(table.n_responses)
    if rows is not None:  # the starts are compared on the same responses as in memory, gathered to the client
        part = ResponseBlocks(_gather_rows(table, rows), kernel=estep.kernel)
        screen = rows, lambda start, alphas, max_iter: model._run(part, start, n_raters, k, None, alphas, max_iter,
                                                                  acceleration)
    model.fit_from_starts(
        counts, n_raters, k,
        run=lambda start, alphas, max_iter: model._run(estep, start, n_raters, k, None, alphas, max_iter,
                                                       acceleration),
        expected=expected, screen=screen)


def _gather_rows(table: PartitionedTable, rows: np.ndarray) -> sp.csr_matrix:
    """The response-matrix rows ``rows`` (global response numbers, sorted) fetched from the partitions."""
    cuts = np.searchsorted(rows, table.offsets)
    futures = [table.client.submit(_partition_rows, part, rows[cuts[p]:cuts[p + 1]] - table.offsets[p], pure=False)
               for p, part in enumerate(table.partitions)]
    return sp.csr_matrix(sp.vstack(table.gather(futures), format="csr"))


def _partition_rows(partition: Any, local: np.ndarray) -> sp.csr_matrix:
    return sp.csr_matrix(partition.X[local])


def partitioned_vote_counts(table: PartitionedTable) -> np.ndarray:
    """(N, K) label counts per response, gathered from the partitions in response order."""
    parts = table.gather(table.map(_vote_counts))
    return np.concatenate(parts) if parts else np.zeros((0, table.n_levels))


def fit_distributed(table: PartitionedTable, method: str | Aggregator, **params: Any) -> Aggregator:
    """Fit one method (a registry name with ``params``, or an unfitted estimator) on a partitioned table; returns
    the fitted estimator, its results (``posteriors_`` (N, K) in the table's response order, ``confusion_``,
    ``priors_``, ``log_likelihood_``, ...) equal to an in-memory fit of the same data.

    Majority vote, Dawid–Skene and STABLEVAL are supported (:data:`DISTRIBUTED_METHODS`); other methods raise
    :class:`~stableval.errors.StableValError`.
    """
    from stableval.aggregate.registry import REGISTRY, method_of

    if isinstance(method, str):
        refuse_distributed(method)
        model = REGISTRY[method].build(**params)
    else:
        model = method
        refuse_distributed(method_of(model).name)
    counts = partitioned_vote_counts(table)
    if isinstance(model, MajorityVote):
        first_seen = None
        if model.ties == "first":
            parts = table.gather(table.map(_first_seen))
            first_seen = np.concatenate(parts) if parts else np.zeros((0, table.n_levels), dtype=np.int64)
        # a one-rater matrix of the vote counts: majority vote reads nothing else from the response matrix
        model.fit_matrix(sp.csr_matrix(counts), 1, table.n_levels, first_seen=first_seen)
        return model
    if not isinstance(model, EMAggregator):  # pragma: no cover - every supported method is one or the other
        raise StableValError(f"{type(model).__name__} is not supported by the Dask executor")
    _fit_em(model, table, counts)
    return model
