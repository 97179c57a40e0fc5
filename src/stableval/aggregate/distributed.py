"""The response matrix of a :class:`~stableval.data.partitioned.PartitionedTable` for the fits: the judgments stay
on the Dask workers, and each statistic a fit reads is a map over partitions plus a reduce on the client.

:class:`PartitionedMatrix` is the cluster's :class:`~stableval.aggregate.responses.ResponseMatrix`: a method that
fits through :meth:`~stableval.aggregate._base.Aggregator.fit_responses` (its registry entry declares
``distributed=True``) runs here with the code it runs in memory, so the fit equals the in-memory one up to the
order in which floating-point sums are added (about 1e-12 here).

* Vote counts, first-seen rows and screened rows are gathered to the client (O(responses × K)).
* The E-step of a response needs only that response's judgments, and every response lives in one partition, so
  each partition E-steps its own responses (:class:`~stableval.aggregate.em.ResponseBlocks`, the in-memory kernel,
  chosen by the size of the whole matrix) and sends back the sums the M-step needs: the log-likelihood, the
  posterior mass per class (K,) and the expected counts (K, R·K) — K + K·R·K + 1 floats per partition per
  iteration. The client adds them and runs the M-step, then sends the new parameters back. The posteriors stay on
  the workers until the fit ends.
* Rater-weighted votes: each partition counts its raters' agreement with its responses' weighted vote (R,).

Sources: EM as a map over data partitions and a reduce of sufficient statistics, Chu et al. (2006), "Map-Reduce
for Machine Learning on Multicore", NIPS 19.

>>> import tempfile, pathlib, pandas as pd
>>> from distributed import Client
>>> from stableval.aggregate.registry import get_method
>>> from stableval.data.partitioned import PartitionedTable
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> pd.DataFrame({"item": [1, 1, 1, 2, 2, 2], "agent": "A", "rater": list("abcabc"),
...               "label": [1, 1, 0, 0, 0, 0]}).to_parquet(folder / "ratings.parquet")
>>> with Client(processes=False, n_workers=1, dashboard_address=":0") as client:
...     model = get_method("ds").fit(PartitionedTable.read(folder, client))
>>> model.posteriors_.argmax(axis=1).tolist(), bool(model.converged_)
([1, 0], True)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from stableval.aggregate.em import EStep, ResponseBlocks, rater_judgments
from stableval.aggregate.responses import Judgments, MatrixVotes, Votes
from stableval.errors import StableValError

if TYPE_CHECKING:  # pragma: no cover
    from stableval.data.partitioned import Partition, PartitionedTable

__all__ = ["PartitionedEStep", "PartitionedMatrix", "PartitionedVotes"]


# ====================================================================================== worker side
class PartitionEM:
    """A partition's side of EM, kept on the worker that holds the partition: its response matrix in row blocks
    (:class:`~stableval.aggregate.em.ResponseBlocks`, one thread: the worker's threads are the parallelism)."""

    def __init__(self, partition: Partition, kernel: str | None = None, precise: bool = False) -> None:
        self.blocks = ResponseBlocks(partition.X, None, threads=1, kernel=kernel, precise=precise)

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


def _partition_votes(partition: Partition, n_raters: int, n_levels: int) -> MatrixVotes:
    return MatrixVotes(Judgments(partition.X, n_raters, n_levels))


def _agreed(votes: MatrixVotes, weights: np.ndarray | None) -> np.ndarray:
    return votes.agreed(weights)


def _per_rater(votes: MatrixVotes) -> np.ndarray:
    return votes.judgments.per_rater


def _shares(votes: MatrixVotes, weights: np.ndarray) -> np.ndarray:
    return votes.shares(weights)


def _levels(votes: MatrixVotes) -> np.ndarray:
    return np.unique(votes.judgments.level)


def _partition_rows(partition: Any, local: np.ndarray) -> sp.csr_matrix:
    return sp.csr_matrix(partition.X[local])


# ====================================================================================== client side
class PartitionedEStep:
    """The E-step over every partition (an :class:`~stableval.aggregate.em.EStep`): sums for the M-step on the
    client, posteriors on the workers (the last E-step's, gathered by :meth:`final_posteriors`). Each E-step is one
    task per partition, run where the partition lives, and one small task fetching its sums."""

    def __init__(self, table: PartitionedTable, precise: bool = False) -> None:
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
        self.parts = [self.client.submit(PartitionEM, part, self.kernel, precise, pure=False)
                      for part in table.partitions]
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
        parts = self.client.gather([self.client.submit(_posteriors, part, pure=False) for part in self._last])
        return np.concatenate(parts, axis=1) if parts else np.zeros((buffer.shape[0], 0))

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


class PartitionedVotes:
    """Rater-weighted votes over every partition (:class:`~stableval.aggregate.responses.Votes`): each partition
    keeps its judgments as flat arrays on its worker and returns its raters' agreement counts (R,), which add up
    exactly (whole numbers), so each rater's agreement is the in-memory one."""

    def __init__(self, table: PartitionedTable) -> None:
        self.table = table
        self.parts = table.map(_partition_votes, table.n_raters, table.n_levels)
        self.per_rater = np.sum(table.gather([table.client.submit(_per_rater, part, pure=False)
                                              for part in self.parts]), axis=0)

    def agreement(self, weights: np.ndarray | None) -> np.ndarray:
        client = self.table.client
        agreed = np.sum(self.table.gather([client.submit(_agreed, part, weights, pure=False)
                                           for part in self.parts]), axis=0)
        return np.asarray(agreed / np.maximum(self.per_rater, 1e-300))

    def shares(self, weights: np.ndarray) -> np.ndarray:
        client = self.table.client
        parts = self.table.gather([client.submit(_shares, part, weights, pure=False) for part in self.parts])
        return np.concatenate(parts) if parts else np.zeros((0, self.table.n_levels))

    def levels_given(self) -> int:
        client = self.table.client
        levels = self.table.gather([client.submit(_levels, part, pure=False) for part in self.parts])
        return int(np.unique(np.concatenate(levels)).size) if levels else 0


class PartitionedMatrix:
    """The response matrix of a partitioned table, read where its partitions live (the cluster's
    :class:`~stableval.aggregate.responses.ResponseMatrix`; no gold labels). A fit builds its E-step once
    (:meth:`e_steps`); the expected counts of a learnt prior reuse it."""

    def __init__(self, table: PartitionedTable) -> None:
        self.table = table
        self.gold: np.ndarray | None = None
        self.n_responses, self.n_raters, self.n_levels = table.n_responses, table.n_raters, table.n_levels
        self._e_steps: dict[bool, PartitionedEStep] = {}

    def vote_counts(self) -> np.ndarray:
        return self.table.vote_counts()

    def first_seen(self) -> np.ndarray:
        return self.table.first_seen()

    def e_steps(self, *, precise: bool = False) -> EStep:
        if precise not in self._e_steps:
            self._e_steps[precise] = PartitionedEStep(self.table, precise)
        return self._e_steps[precise]

    def rows(self, rows: np.ndarray) -> sp.csr_matrix:
        """The response-matrix rows ``rows`` (global response numbers, sorted) fetched from the partitions."""
        table = self.table
        cuts = np.searchsorted(rows, table.offsets)
        futures = [table.client.submit(_partition_rows, part, rows[cuts[p]:cuts[p + 1]] - table.offsets[p],
                                       pure=False) for p, part in enumerate(table.partitions)]
        return sp.csr_matrix(sp.vstack(table.gather(futures), format="csr"))

    def expected_rows(self, posteriors: np.ndarray) -> np.ndarray:
        k, n_raters = self.n_levels, self.n_raters
        rows = self.e_steps().counts(np.ascontiguousarray(np.asarray(posteriors).T))  # (K, R·K) [true, r·K + given]
        return np.ascontiguousarray(rows.reshape(k, n_raters, k).transpose(1, 0, 2).reshape(n_raters * k, k))

    def votes(self) -> Votes:
        return PartitionedVotes(self.table)

    def matrix(self) -> sp.csr_matrix:
        raise StableValError("this fit needs the whole response matrix in memory; on a Dask cluster only the "
                             "methods whose registry entry declares distributed=True run")
