"""The annotation table: one row per judgment, integer-coded once into contiguous numpy arrays.

The unit of latent correctness is the *response*: one (item, agent) pair. Every algorithm in stableval works
on the arrays of an :class:`AnnotationTable` (or on its sparse :meth:`AnnotationTable.response_matrix`), never
on a DataFrame.

>>> import pandas as pd
>>> frame = pd.DataFrame({"item": ["q1", "q1", "q2"], "agent": ["A", "A", "B"],
...                       "rater": ["r1", "r2", "r1"], "label": [1, 0, 1]})
>>> table = AnnotationTable.from_frame(frame, levels=("bad", "good"))
>>> table.n_judgments, table.n_responses, table.n_raters
(3, 2, 2)
>>> table.response_matrix().toarray()
array([[0., 1., 1., 0.],
       [0., 1., 0., 0.]])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol, Self

import numpy as np
import pandas as pd
import scipy.sparse as sp

from stableval.errors import InputError


def sorted_codes(column: pd.Series) -> tuple[np.ndarray, pd.Index]:
    """(codes, names): the column's values as text, numbered in sorted order, as ``pd.factorize(column.astype(str),
    sort=True)`` gives them; a categorical column is numbered through its categories, without hashing its rows.

    >>> codes, names = sorted_codes(pd.Series(pd.Categorical(["b", "a", "b"], categories=["c", "b", "a"])))
    >>> codes.tolist(), names.tolist()
    ([1, 0, 1], ['a', 'b'])
    """
    if not isinstance(column.dtype, pd.CategoricalDtype) or bool((column.cat.codes.to_numpy() < 0).any()):
        codes, names = pd.factorize(column.astype(str), sort=True)
        return codes, pd.Index(names)
    import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]
    import pyarrow.compute as pc  # type: ignore[import-untyped, unused-ignore]

    category = column.cat.codes.to_numpy()
    categories = column.cat.categories
    used = np.bincount(category, minlength=len(categories)) > 0
    if used.all() and categories.dtype == pd.Series([""]).astype(str).dtype:  # distinct texts, all used
        # UTF-8 byte order is code point order: the order Python and pandas sort text in
        order = pc.array_sort_indices(pa.array(categories.array)).to_numpy()
        rank = np.empty(len(order), dtype=np.int32)
        rank[order] = np.arange(len(order), dtype=np.int32)
        return rank[category], pd.Index(categories.take(order).to_numpy(dtype=object), dtype=object)
    else:
        text = np.asarray(pd.Series(categories.to_numpy(dtype=object), dtype=object).astype(str), dtype=object)
        merged, distinct = pd.factorize(text[used])
        distinct = np.asarray(distinct, dtype=object)
    # UTF-8 byte order is code point order: the order Python and pandas sort text in
    order = pc.array_sort_indices(pa.array(distinct, type=pa.large_string())).to_numpy()
    rank = np.empty(len(order), dtype=np.int32)
    rank[order] = np.arange(len(order), dtype=np.int32)
    code_of = np.full(len(categories), -1, dtype=np.int32)
    code_of[used] = rank[merged]
    return code_of[category], pd.Index(distinct[order])


def sorted_integer_codes(values: np.ndarray, span: int) -> tuple[np.ndarray, np.ndarray]:
    """(codes, distinct values in increasing order) of non-negative integers below ``span``: a lookup table when
    ``span`` is small for the number of values, else a sort.

    >>> codes, distinct = sorted_integer_codes(np.array([7, 3, 7]), 10)
    >>> codes.tolist(), distinct.tolist()
    ([1, 0, 1], [3, 7])
    """
    values = np.asarray(values, dtype=np.int64)
    if span <= max(1 << 22, 4 * values.size):
        present = np.zeros(max(span, 1), dtype=bool)
        present[values] = True
        code_of = np.cumsum(present, dtype=np.int32 if span < 2**31 else np.int64) - 1
        return code_of[values], np.flatnonzero(present).astype(np.int64)
    distinct, codes = np.unique(values, return_inverse=True)
    return codes.reshape(-1), distinct.astype(np.int64)


def labels_at(labels: pd.Index, codes: np.ndarray) -> Any:
    """``labels[codes]`` as the column pandas builds from those values, converting each distinct label once instead
    of every row (string ids: ~7x faster than inferring the str dtype of millions of Python strings).

    >>> pd.Series(labels_at(pd.Index(["a", "b"], dtype=object), np.array([1, 0, 1]))).tolist()
    ['b', 'a', 'b']
    """
    if not len(codes):  # nothing to infer from: as pandas types an empty column
        return labels.to_numpy()[codes]
    return pd.Series(labels.to_numpy(), copy=False).array.take(codes)


def default_credit(n_levels: int) -> np.ndarray:
    """Evenly spaced credit 0..1 over ``n_levels`` ordered levels (``[0, 0.5, 1]`` for three)."""
    return np.linspace(0.0, 1.0, n_levels)


class TableSizes:
    """The sizes every table of judgments reports, from its names (in memory or partitioned over a cluster)."""

    items: pd.Index
    agents: pd.Index
    raters: pd.Index
    levels: tuple[str, ...]
    response_item: np.ndarray

    @property
    def n_responses(self) -> int:
        return int(self.response_item.size)

    @property
    def n_items(self) -> int:
        return len(self.items)

    @property
    def n_agents(self) -> int:
        return len(self.agents)

    @property
    def n_raters(self) -> int:
        return len(self.raters)

    @property
    def n_levels(self) -> int:
        return len(self.levels)


class JudgmentTable(Protocol):
    """What every table of judgments offers, whether its judgments are in memory (:class:`AnnotationTable`) or on
    the workers of a Dask cluster (:class:`~stableval.data.partitioned.PartitionedTable`): its names, its
    per-response arrays (in the same sorted response order for the same data) and the counts an analysis reads.
    The analyses (``score_agents``, ``diagnose``, ``ranking_stability``) take either; the fits dispatch on the
    kind (:meth:`stableval.aggregate.method.Method.fit`)."""

    @property
    def items(self) -> pd.Index: ...

    @property
    def agents(self) -> pd.Index: ...

    @property
    def raters(self) -> pd.Index: ...

    @property
    def levels(self) -> tuple[str, ...]: ...

    @property
    def credit(self) -> np.ndarray: ...

    @property
    def response_item(self) -> np.ndarray: ...

    @property
    def response_agent(self) -> np.ndarray: ...

    @property
    def source(self) -> str: ...

    @property
    def notes(self) -> tuple[str, ...]: ...

    @property
    def n_responses(self) -> int: ...

    @property
    def n_items(self) -> int: ...

    @property
    def n_agents(self) -> int: ...

    @property
    def n_raters(self) -> int: ...

    @property
    def n_levels(self) -> int: ...

    @property
    def n_judgments(self) -> int: ...

    def vote_counts(self) -> np.ndarray:
        """(N, K) number of judgments of each level per response."""
        ...

    def judgments_per_response(self) -> np.ndarray:
        """(N,) number of judgments of each response."""
        ...

    def responses_per_agent(self) -> np.ndarray:
        """(A,) number of responses of each agent."""
        ...

    def judgments_per_agent(self) -> np.ndarray:
        """(A,) number of judgments of each agent's responses."""
        ...

    def judgments_per_rater(self) -> np.ndarray:
        """(R,) number of judgments by each rater."""
        ...

    def rater_level_counts(self) -> np.ndarray:
        """(R, K) number of judgments of each level by each rater."""
        ...

    def responses_per_rater(self) -> np.ndarray:
        """(R,) number of distinct responses each rater judged."""
        ...

    def judgment_details(self, responses: np.ndarray) -> list[str]:
        """For each response in ``responses``, its judgments as ``rater=level; ...``."""
        ...

    def keep_raters(self, keep: np.ndarray) -> Self:
        """The table of the judgments by the raters where ``keep`` (R,) is true."""
        ...

    def response_frame(self) -> pd.DataFrame:
        """One row per response: ``item, agent, judgments``."""
        ...

    def summary(self) -> dict[str, object]:
        """Counts a user wants to see first (JSON-ready)."""
        ...


@dataclass(frozen=True, eq=False)
class AnnotationTable(TableSizes):
    """Integer-coded judgments.

    Attributes:
        response: (M,) int32, the response (item, agent) each judgment is about, 0..N-1.
        rater: (M,) int32, who judged, 0..R-1.
        label: (M,) int16, the judged level, 0..K-1 (ordered: 0 is the worst level).
        response_item: (N,) int32, the item of each response.
        response_agent: (N,) int32, the agent of each response.
        items, agents, raters: the names behind the codes (sorted, so row order never matters).
        levels: the K ordered level names.
        credit: (K,) float credit per level, ``v(c)`` in the spec.
        source: where the table came from (a file name, or ``"<DataFrame>"``).
        notes: what reading did to the input (rows dropped and why), for the user to see.
        recoding: how the file's label values became the levels (``merge_levels`` / ``bins``;
            :meth:`stableval.data.recode.Recoding.to_dict`), ``None`` when they were read as they are.
    """

    response: np.ndarray
    rater: np.ndarray
    label: np.ndarray
    response_item: np.ndarray
    response_agent: np.ndarray
    items: pd.Index
    agents: pd.Index
    raters: pd.Index
    levels: tuple[str, ...]
    credit: np.ndarray
    source: str = "<DataFrame>"
    notes: tuple[str, ...] = field(default=())
    recoding: Mapping[str, object] | None = None

    def __post_init__(self) -> None:
        k = len(self.levels)
        if k < 2:
            raise InputError("need at least 2 levels", file=self.source, column="label",
                             value=list(self.levels), allowed="two or more ordered level names")
        if len(set(self.levels)) != k:
            raise InputError("level names must be distinct", file=self.source, value=list(self.levels))
        if self.credit.shape != (k,):
            raise InputError(f"credit needs one number per level ({k} levels: {', '.join(self.levels)})",
                             value=self.credit.tolist(), allowed=f"{k} comma-separated numbers")
        if not np.all(np.isfinite(self.credit)):
            raise InputError("credit must be finite numbers", value=self.credit.tolist())

    # ---------------------------------------------------------------- construction
    @classmethod
    def from_frame(
        cls,
        frame: pd.DataFrame,
        *,
        levels: Sequence[str],
        credit: Sequence[float] | np.ndarray | None = None,
        source: str = "<DataFrame>",
        notes: Sequence[str] = (),
    ) -> AnnotationTable:
        """Encode a clean frame with columns ``item, agent, rater, label`` (label = integer level code).

        Use :func:`stableval.read_annotations` for files and anything that needs validating; this is the
        low-level constructor for frames whose labels are already codes 0..K-1.
        """
        k = len(levels)
        label = frame["label"].to_numpy()
        if label.size and (label.min() < 0 or label.max() >= k):
            raise InputError("label code out of range", file=source, column="label",
                             value=int(label.max() if label.max() >= k else label.min()),
                             allowed=f"integers 0..{k - 1}")
        item_code, items = sorted_codes(frame["item"])
        agent_code, agents = sorted_codes(frame["agent"])
        rater_code, raters = sorted_codes(frame["rater"])
        # response = (item, agent) pair, coded in sorted (item, agent) order
        pair = item_code.astype(np.int64) * max(len(agents), 1) + agent_code
        response, pair_values = sorted_integer_codes(pair, len(items) * max(len(agents), 1))
        return cls(
            response=response.astype(np.int32, copy=False),  # fresh arrays: no copy needed
            rater=rater_code.astype(np.int32, copy=False),
            label=label.astype(np.int16),
            response_item=(pair_values // max(len(agents), 1)).astype(np.int32),
            response_agent=(pair_values % max(len(agents), 1)).astype(np.int32),
            items=pd.Index(items, dtype=object),
            agents=pd.Index(agents, dtype=object),
            raters=pd.Index(raters, dtype=object),
            levels=tuple(str(level) for level in levels),
            credit=default_credit(k) if credit is None else np.asarray(credit, dtype=float),
            source=source,
            notes=tuple(notes),
        )

    # ---------------------------------------------------------------- sizes
    @property
    def n_judgments(self) -> int:
        return int(self.response.size)


    # ---------------------------------------------------------------- derived arrays
    def response_matrix(self) -> sp.csr_matrix:
        """Sparse counts, responses x (rater·K + label): entry = how often rater r gave label o to response i.

        Built once and cached; every EM-based aggregator runs on it.
        """
        return self._response_matrix

    @cached_property
    def _response_matrix(self) -> sp.csr_matrix:
        k = self.n_levels
        wide = self.n_raters * k >= 2**31
        columns: np.ndarray[tuple[int], np.dtype[np.signedinteger[Any]]] = self.rater.astype(
            np.int64 if wide else np.int32)  # int32 as scipy stores them: no copy there
        columns *= k
        columns += self.label
        data = np.ones(self.n_judgments, dtype=np.float64)
        matrix = sp.csr_matrix((data, (self.response, columns)), shape=(self.n_responses, self.n_raters * k))
        matrix.sum_duplicates()
        return matrix

    def vote_counts(self) -> np.ndarray:
        """(N, K) number of judgments of each level per response."""
        counts = np.zeros((self.n_responses, self.n_levels))
        np.add.at(counts, (self.response, self.label), 1.0)
        return counts

    def judgments_per_response(self) -> np.ndarray:
        """(N,) number of judgments of each response."""
        counts = np.zeros(self.n_responses, dtype=np.int64)
        np.add.at(counts, self.response, 1)  # unlike bincount, no (judgments,) int64 copy of the codes
        return counts

    def responses_per_agent(self) -> np.ndarray:
        """(A,) number of responses (items) of each agent."""
        return np.bincount(self.response_agent, minlength=self.n_agents)

    def judgments_per_agent(self) -> np.ndarray:
        """(A,) number of judgments of each agent's responses."""
        return np.bincount(self.response_agent, weights=self.judgments_per_response(),
                           minlength=self.n_agents).astype(np.int64)  # no (judgments,) temporary

    def judgments_per_rater(self) -> np.ndarray:
        """(R,) number of judgments by each rater."""
        return np.bincount(self.rater, minlength=self.n_raters)

    def rater_level_counts(self) -> np.ndarray:
        """(R, K) number of judgments of each level by each rater."""
        k = self.n_levels
        flat = np.bincount(self.rater.astype(np.int64) * k + self.label, minlength=self.n_raters * k)
        return flat.reshape(self.n_raters, k)

    def responses_per_rater(self) -> np.ndarray:
        """(R,) number of distinct responses each rater judged (a repeated judgment counts once)."""
        pairs = np.unique(self.rater.astype(np.int64) * self.n_responses + self.response)
        return np.bincount(pairs // max(self.n_responses, 1), minlength=self.n_raters)

    def judgment_details(self, responses: np.ndarray) -> list[str]:
        """For each response in ``responses``, its judgments as ``rater=level; ...`` (sorted by rater, then level;
        a repeated judgment listed as often as it was given).

        >>> frame = pd.DataFrame({"item": ["q1", "q1", "q2"], "agent": "A", "rater": ["b", "a", "a"],
        ...                       "label": [1, 0, 1]})
        >>> AnnotationTable.from_frame(frame, levels=("no", "yes")).judgment_details(np.array([1, 0]))
        ['a=yes', 'a=no; b=yes']
        """
        if responses.size == 0:
            return []
        position = np.full(self.n_responses, -1, dtype=np.int64)
        position[responses] = np.arange(responses.size)
        keep = np.flatnonzero(position[self.response] >= 0)
        order = keep[np.lexsort((self.label[keep], self.rater[keep], position[self.response[keep]]))]
        names = np.asarray(self.raters, dtype=object)[self.rater[order]]
        levels = np.asarray(self.levels, dtype=object)[self.label[order]]
        pieces = names.astype(str).astype(object) + "=" + levels.astype(str).astype(object)
        bounds = np.searchsorted(position[self.response[order]], np.arange(responses.size + 1))
        return ["; ".join(pieces[bounds[i]:bounds[i + 1]]) for i in range(responses.size)]

    # ---------------------------------------------------------------- views
    def to_frame(self) -> pd.DataFrame:
        """Back to a long DataFrame ``item, agent, rater, label`` with level names."""
        return pd.DataFrame({
            "item": self.items.to_numpy()[self.response_item[self.response]],
            "agent": self.agents.to_numpy()[self.response_agent[self.response]],
            "rater": self.raters.to_numpy()[self.rater],
            "label": np.asarray(self.levels, dtype=object)[self.label],
        })

    def response_frame(self) -> pd.DataFrame:
        """One row per response: ``item, agent, judgments``."""
        return pd.DataFrame({
            "item": labels_at(self.items, self.response_item),
            "agent": labels_at(self.agents, self.response_agent),
            "judgments": self.judgments_per_response(),
        })

    def subset(self, keep: np.ndarray) -> AnnotationTable:
        """A table with only the judgments where ``keep`` is true.

        Responses and raters left without judgments drop out (they are re-coded); agents and levels are kept
        as they are, so scores stay comparable with the full table.
        """
        keep = np.asarray(keep, dtype=bool)
        response_code, kept_responses = pd.factorize(self.response[keep], sort=True)
        rater_code, kept_raters = pd.factorize(self.rater[keep], sort=True)
        kept_responses = np.asarray(kept_responses, dtype=np.int64)
        items_used, item_code = np.unique(self.response_item[kept_responses], return_inverse=True)
        return AnnotationTable(
            response=response_code.astype(np.int32),
            rater=rater_code.astype(np.int32),
            label=self.label[keep],
            response_item=item_code.astype(np.int32),
            response_agent=self.response_agent[kept_responses],
            items=self.items[items_used],
            agents=self.agents,
            raters=self.raters[np.asarray(kept_raters, dtype=np.int64)],
            levels=self.levels,
            credit=self.credit,
            source=self.source,
            notes=self.notes,
            recoding=self.recoding,
        )

    def keep_raters(self, keep: np.ndarray) -> AnnotationTable:
        """The table of the judgments by the raters where ``keep`` (R,) is true (:meth:`subset` of those
        judgments)."""
        keep = np.asarray(keep, dtype=bool)
        if keep.shape != (self.n_raters,):
            raise ValueError(f"keep must have one entry per rater ({self.n_raters}), got shape {keep.shape}")
        return self.subset(keep[self.rater])

    def summary(self) -> dict[str, object]:
        """Counts a user wants to see first (JSON-ready)."""
        per_response = self.judgments_per_response()
        return {
            "source": self.source,
            "judgments": self.n_judgments,
            "responses": self.n_responses,
            "items": self.n_items,
            "agents": self.n_agents,
            "raters": self.n_raters,
            "levels": list(self.levels),
            "credit": self.credit.tolist(),
            "mean_judgments_per_response": float(per_response.mean()) if per_response.size else 0.0,
            "notes": list(self.notes),
            **({"recoding": dict(self.recoding)} if self.recoding is not None else {}),
        }
