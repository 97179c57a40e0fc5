"""An annotation table spread over a Dask cluster: judgments read, coded and kept on the workers.

A Parquet dataset (one file, a directory of files or a glob) is read piece by piece (one Parquet row group per
piece) on the workers, each piece validated by the same code as an in-memory read
(:func:`~stableval.data.annotations.annotations_from_frame`). One pass collects the distinct items, agents,
raters and levels of every piece; their sorted union is the shared vocabulary, broadcast to the workers, so every
code means what it means in the in-memory :class:`~stableval.data.table.AnnotationTable` of the same data.

Each piece's judgments are then routed by item to one of ``partitions`` buckets (contiguous ranges of item codes),
so every response (item, agent) lives in exactly one partition, and its responses are numbered in the in-memory
table's (sorted) response order: partition p holds responses ``offsets[p]:offsets[p + 1]``. A partition keeps its
response matrix (responses × rater·K + label) on its worker; only per-response arrays (agent, judgments) come back
to the client. The duplicate policy is applied per partition, where all judgments of a response meet.

>>> import tempfile, pathlib, pandas as pd
>>> from distributed import Client
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> frame = pd.DataFrame({"item": [1, 1, 2, 2], "agent": "A", "rater": ["a", "b", "a", "b"], "label": [1, 1, 0, 1]})
>>> frame.to_parquet(folder / "part-0.parquet")
>>> with Client(processes=False, n_workers=1, dashboard_address=":0") as client:
...     table = PartitionedTable.read(folder, client, partitions=2)
...     (table.n_judgments, table.n_responses, table.levels, table.offsets.tolist())
(4, 2, ('0', '1'), [0, 1, 2])
"""

from __future__ import annotations

import glob
import itertools
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from stableval.data.files import SCALE_KEY, refuse_mixed_scales
from stableval.data.labels import parse_credit
from stableval.data.table import AnnotationTable, TableSizes
from stableval.errors import InputError

if TYPE_CHECKING:  # pragma: no cover
    from stableval.data.loader import InputOptions

__all__ = ["Partition", "PartitionedTable", "Piece", "list_pieces", "subset_partition"]

#: the suffixes of the Parquet files a directory is read for
PARQUET_SUFFIXES = (".parquet", ".pq")


@dataclass(frozen=True)
class Piece:
    """One unit of reading: a Parquet row group (``row_group`` None: the whole file), rows ``first_row`` onwards
    of its file."""

    path: str
    row_group: int | None
    first_row: int
    rows: int

    @property
    def source(self) -> str:
        """How messages name the piece: the file, and the rows of the file it holds when it is one of several
        row groups (a row number in a message then counts from the piece's first row)."""
        if self.row_group is None:
            return self.path
        return f"{self.path} [row group {self.row_group}: rows {self.first_row + 1:,}-{self.first_row + self.rows:,}]"


def list_pieces(path: str | os.PathLike[str]) -> list[Piece]:
    """The pieces of a Parquet file, of every ``.parquet``/``.pq`` file under a directory, or of every file a glob
    matches, in sorted path order (the order of the rows, as far as ``duplicates='first'|'last'`` goes).

    >>> list_pieces("no/such/*.parquet")
    Traceback (most recent call last):
    ...
    stableval.errors.InputError: no/such/*.parquet: no Parquet file found; allowed: a Parquet file, a directory \
of .parquet files or a glob matching some
    """
    import pyarrow.parquet as pq  # type: ignore[import-untyped, unused-ignore]

    text = os.fspath(path)
    target = Path(text)
    if target.is_dir():
        files = sorted(str(p) for p in target.rglob("*") if p.suffix.lower() in PARQUET_SUFFIXES and p.is_file())
    elif target.is_file():
        files = [text]
    else:
        files = sorted(p for p in glob.glob(text, recursive=True) if Path(p).is_file())
    if not files:
        raise InputError("no Parquet file found", file=text,
                         allowed="a Parquet file, a directory of .parquet files or a glob matching some")
    pieces: list[Piece] = []
    schemas = []
    for name in files:
        try:
            metadata = pq.ParquetFile(name).metadata
        except Exception as exc:  # pyarrow raises several unrelated types for a bad file
            raise InputError(f"cannot read as Parquet: {' '.join(str(exc).split())}", file=name,
                             allowed="Apache Parquet files (the Dask executor reads Parquet only)") from exc
        schemas.append(metadata.schema.to_arrow_schema())
        groups = metadata.num_row_groups
        first = 0
        for group in range(groups):
            rows = metadata.row_group(group).num_rows
            pieces.append(Piece(name, group if groups > 1 else None, first, rows))
            first += rows
    refuse_mixed_scales(files, schemas)
    return pieces


def _as_text(frame: pd.DataFrame) -> pd.DataFrame:
    """Every column as text, '' where missing, as the in-memory reader gives it (integers through their distinct
    values)."""
    out: dict[str, pd.Series] = {}
    for name in frame.columns:
        column = frame[name]
        if column.dtype.kind in "iub":
            codes, uniques = pd.factorize(column, use_na_sentinel=True)
            text = np.asarray([str(value) for value in uniques.tolist()] + [""], dtype=object)
            out[str(name)] = pd.Series(text[np.where(codes < 0, len(text) - 1, codes)], index=frame.index).astype(str)
            continue
        values = column.astype(object).to_numpy(copy=True)
        missing = column.isna().to_numpy()
        if missing.any():
            values[missing] = ""
        out[str(name)] = pd.Series(values, index=frame.index).astype(str)
    return pd.DataFrame(out, index=pd.RangeIndex(len(frame)))


def read_piece(piece: Piece, options: InputOptions) -> AnnotationTable:
    """Read and validate one piece on a worker (every judgment kept: the duplicate policy is applied later, where
    all judgments of a response meet). Integer labels of a piece whose labels are all 0 get levels 0, 1 (the
    global levels come from every piece)."""
    import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]
    import pyarrow.parquet as pq  # type: ignore[import-untyped, unused-ignore]

    from stableval.data.annotations import annotations_from_frame
    from stableval.data.columns import ROLE_ALIASES, resolve_columns
    from stableval.data.pairwise import is_pairwise_frame

    try:
        handle = pq.ParquetFile(piece.path)
        arrow = handle.read() if piece.row_group is None else handle.read_row_group(piece.row_group)
    except Exception as exc:  # pyarrow raises several unrelated types for a bad file
        raise InputError(f"cannot read as Parquet: {' '.join(str(exc).split())}", file=piece.source,
                         allowed="an Apache Parquet file readable by every worker at this path") from exc
    for index, (name, column) in enumerate(zip(arrow.column_names, arrow.columns, strict=True)):
        if pa.types.is_binary(column.type) or pa.types.is_large_binary(column.type):
            arrow = arrow.set_column(index, name, column.cast(pa.string()))
    frame = _as_text(arrow.to_pandas())
    scale = (handle.schema_arrow.metadata or {}).get(SCALE_KEY.encode())
    if scale is not None:
        import json

        try:
            frame.attrs[SCALE_KEY] = json.loads(scale)
        except ValueError:  # metadata someone else wrote: not ours to judge
            pass
    if options.pairwise or (options.pairwise is None and is_pairwise_frame(frame, options.columns)):
        raise InputError("pairwise votes are not supported by the Dask executor", file=piece.source,
                         allowed="annotations (item, agent, rater, label); convert votes to annotations first "
                                 "(stableval convert) or drop --executor dask")
    levels = options.levels
    if levels is None and SCALE_KEY not in frame.attrs and len(frame):
        found = resolve_columns(frame, ROLE_ALIASES, options.columns, source=piece.source,
                                optional=("agent",) if options.default_agent is not None else ())
        label = str(found["label"])
        numbers = pd.to_numeric(pd.Series(pd.unique(frame[label].str.strip())), errors="coerce")
        if numbers.notna().all() and (numbers == 0).all():  # a piece with only level 0: valid in the whole
            frame[label] = "0"
            levels = ("0", "1")
    return annotations_from_frame(frame, columns=options.columns, levels=levels, credit=None, duplicates="keep",
                                  source=piece.source, default_agent=options.default_agent)


@dataclass(frozen=True)
class PieceNames:
    """What the vocabulary pass learns from one piece: its distinct names, label counts and notes."""

    items: np.ndarray
    agents: np.ndarray
    raters: np.ndarray
    levels: tuple[str, ...]
    label_counts: np.ndarray
    notes: tuple[str, ...]
    rows: int


def piece_names(table: AnnotationTable) -> PieceNames:
    """The vocabulary pass on one piece (on its worker)."""
    return PieceNames(items=table.items.to_numpy(dtype=object), agents=table.agents.to_numpy(dtype=object),
                      raters=table.raters.to_numpy(dtype=object), levels=table.levels,
                      label_counts=np.bincount(table.label, minlength=table.n_levels), notes=table.notes,
                      rows=table.n_judgments)


@dataclass(frozen=True)
class Vocabulary:
    """The shared, sorted names every worker codes its judgments with."""

    items: pd.Index
    agents: pd.Index
    raters: pd.Index
    bounds: np.ndarray  # (P + 1,) item-code boundaries of the partitions


def split_piece(table: AnnotationTable, vocabulary: Vocabulary, first: int) -> list[tuple[np.ndarray, ...]]:
    """One piece's judgments in global codes, cut by partition: per partition (pair key item·A + agent, rater,
    label, order), where ``order`` numbers the judgment among all rows of the dataset (``first`` + its row)."""
    items = vocabulary.items.get_indexer(table.items)[table.response_item]
    agents = vocabulary.agents.get_indexer(table.agents)[table.response_agent]
    item = items[table.response].astype(np.int64)
    pair = item * len(vocabulary.agents) + agents[table.response]
    rater = vocabulary.raters.get_indexer(table.raters)[table.rater].astype(np.int32)
    order = first + np.arange(table.n_judgments, dtype=np.int64)
    part = np.searchsorted(vocabulary.bounds, item, side="right") - 1
    by_part = np.argsort(part, kind="stable")
    cuts = np.searchsorted(part[by_part], np.arange(len(vocabulary.bounds)))
    return [tuple(values[by_part[a:b]] for values in (pair, rater, table.label, order))
            for a, b in itertools.pairwise(cuts)]


@dataclass(frozen=True, eq=False)
class Partition:
    """The judgments of a contiguous range of responses, on one worker.

    Attributes:
        pairs: (n,) the global (item · A + agent) key of each response, ascending.
        X: (n, R·K) response matrix (counts of rater r giving level o to the response).
        first_seen: (n, K) dataset-wide row number of each level's first judgment of each response (the largest
            int64 where it never got that level), for majority vote's ``ties="first"``.
        repeats: judgments that repeated an (item, agent, rater) of an earlier row (kept or dropped as the policy
            says).
        cell_first: (nnz,) aligned with ``X.data``: the dataset-wide row number of the first judgment in each
            (response, rater, level) cell, so a subset of raters (:func:`subset_partition`) gets its own
            ``first_seen``.
    """

    pairs: np.ndarray
    X: sp.csr_matrix
    first_seen: np.ndarray
    repeats: int
    cell_first: np.ndarray

    @property
    def n_responses(self) -> int:
        return int(self.pairs.size)

    def judgments_per_response(self) -> np.ndarray:
        return np.asarray(self.X.sum(axis=1)).ravel().astype(np.int64)


def build_partition(parts: Sequence[tuple[np.ndarray, ...]], n_agents: int, n_raters: int, n_levels: int,
                    duplicates: str, sources: Sequence[str], starts: np.ndarray, vocabulary: Vocabulary) -> Partition:
    """Gather a partition's judgments from every piece and apply the duplicate policy (on its worker)."""
    pair, rater, label, order = (np.concatenate([p[j] for p in parts]) for j in range(4))
    by_order = np.argsort(order, kind="stable")
    pair, rater, label, order = pair[by_order], rater[by_order], label[by_order], order[by_order]
    pairs, response = np.unique(pair, return_inverse=True)
    key = response.astype(np.int64) * max(n_raters, 1) + rater
    repeat = pd.Series(key).duplicated(keep="first").to_numpy()
    repeats = int(repeat.sum())
    if repeats and duplicates == "error":
        at = int(np.flatnonzero(repeat)[0])
        rows = order[key == key[at]][:4]
        piece = np.searchsorted(starts, rows, side="right") - 1
        where = "; ".join(f"{sources[p]}, row {int(r - starts[p]) + 1}" for p, r in zip(piece, rows, strict=True))
        item, agent = divmod(int(pair[at]), max(n_agents, 1))
        raise InputError(f"{repeats:,} row(s) in this partition repeat an (item, agent, rater) judged on an earlier "
                         f"row: {where} (item {vocabulary.items[item]!r}, agent {vocabulary.agents[agent]!r}, "
                         f"rater {vocabulary.raters[int(rater[at])]!r})",
                         allowed="{duplicates} to keep the first, the last, or every one of them as an independent "
                                 "judgment", options={"duplicates": "first|last|keep"})
    if repeats and duplicates in ("first", "last"):
        keep = ~pd.Series(key).duplicated(keep="first" if duplicates == "first" else "last").to_numpy()
        response, rater, label, order = response[keep], rater[keep], label[keep], order[keep]
    return _partition(pairs, response, rater.astype(np.int64) * n_levels + label, order, n_raters, n_levels,
                      repeats)


def _partition(pairs: np.ndarray, response: np.ndarray, column: np.ndarray, order: np.ndarray, n_raters: int,
               n_levels: int, repeats: int, counts: np.ndarray | None = None) -> Partition:
    """A partition from its judgments (or cells, with ``counts``) in row order: response row, column r·K + level,
    dataset row number. Each (response, column) cell is counted once in ``X`` with the row of its first judgment."""
    k = n_levels
    cell = response.astype(np.int64) * max(n_raters * k, 1) + column
    by_cell = np.argsort(cell, kind="stable")  # within a cell, row order: the first is the earliest judgment
    cell, order = cell[by_cell], order[by_cell]
    weight = np.ones(cell.size) if counts is None else np.asarray(counts, dtype=float)[by_cell]
    starts = np.flatnonzero(np.r_[True, cell[1:] != cell[:-1]]) if cell.size else np.zeros(0, dtype=np.int64)
    unique = cell[starts]
    rows, columns = np.divmod(unique, max(n_raters * k, 1))
    data = np.add.reduceat(weight, starts) if cell.size else np.zeros(0)
    indptr = np.searchsorted(rows, np.arange(pairs.size + 1))
    X = sp.csr_matrix((data, columns.astype(np.int32), indptr), shape=(pairs.size, n_raters * k))
    cell_first = order[starts]
    first_seen = np.full(pairs.size * k, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first_seen, rows * k + columns % k, cell_first)
    return Partition(pairs=pairs, X=X, first_seen=first_seen.reshape(pairs.size, k), repeats=repeats,
                     cell_first=cell_first)


def subset_partition(partition: Partition, rater_code: np.ndarray, n_levels: int) -> Partition:
    """The partition with only the judgments of the raters whose ``rater_code`` (R,) is >= 0, re-coded to those
    codes (increasing, as :meth:`~stableval.data.table.AnnotationTable.subset` re-codes them); responses left
    without a judgment drop out (on the partition's worker).

    >>> part = _partition(np.array([3, 7]), np.array([0, 0, 1]), np.array([1, 2, 3]), np.array([5, 9, 2]), 2, 2, 0)
    >>> sub = subset_partition(part, np.array([-1, 0]), 2)
    >>> sub.pairs.tolist(), sub.X.toarray().tolist(), sub.first_seen.tolist()
    ([3, 7], [[1.0, 0.0], [0.0, 1.0]], [[9, 9223372036854775807], [9223372036854775807, 2]])
    """
    X = partition.X
    k = n_levels
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    rater, level = np.divmod(X.indices.astype(np.int64), k)
    code = rater_code[rater]
    keep = code >= 0
    rows, used = rows[keep], np.unique(rows[keep])
    new_rows = np.searchsorted(used, rows)
    n_new_raters = int(rater_code.max(initial=-1)) + 1
    sub = _partition(partition.pairs[used], new_rows, code[keep] * k + level[keep], partition.cell_first[keep],
                     n_new_raters, k, 0, counts=X.data[keep])
    return sub


def partition_summary(partition: Partition) -> tuple[np.ndarray, np.ndarray, int]:
    """(pairs, judgments per response, repeated judgments) of a partition, for the client."""
    return partition.pairs, partition.judgments_per_response(), partition.repeats


@dataclass(frozen=True, eq=False)
class PartitionedTable(TableSizes):
    """An annotation table whose judgments live on a Dask cluster, one :class:`Partition` per future.

    The client holds the vocabulary and per-response arrays only (O(responses), not O(judgments)):
    ``response_item``, ``response_agent`` and ``judgments`` (N,), in the in-memory table's response order;
    ``offsets`` (P + 1,) says which responses each partition holds. It offers what
    :class:`~stableval.data.table.AnnotationTable` offers of the table protocol
    (:class:`~stableval.data.table.JudgmentTable`), the counts computed where the partitions live.
    """

    client: Any
    partitions: list[Any]
    offsets: np.ndarray
    items: pd.Index
    agents: pd.Index
    raters: pd.Index
    levels: tuple[str, ...]
    credit: np.ndarray
    response_item: np.ndarray
    response_agent: np.ndarray
    judgments: np.ndarray
    source: str
    notes: tuple[str, ...] = field(default=())

    @classmethod
    def read(cls, path: str | os.PathLike[str], client: Any, options: InputOptions | None = None,
             partitions: int | None = None) -> PartitionedTable:
        """Read a Parquet dataset onto the workers of ``client`` (a ``distributed.Client``), in ``partitions``
        partitions (default: two per worker thread)."""
        from stableval.data.loader import InputOptions

        options = options or InputOptions()
        pieces = list_pieces(path)
        n_parts = max(1, partitions or 2 * max(1, sum(client.nthreads().values())))
        tables = [client.submit(read_piece, piece, options, pure=False) for piece in pieces]
        names = client.gather([client.submit(piece_names, table) for table in tables])
        levels, notes = _levels(names, options, str(path))
        credit = parse_credit(options.credit, levels, source=str(path))
        items = _union([n.items for n in names])
        agents = _union([n.agents for n in names])
        raters = _union([n.raters for n in names])
        n_parts = min(n_parts, max(1, len(items)))
        bounds = np.floor(np.linspace(0, len(items), n_parts + 1)).astype(np.int64)
        bounds[-1] = np.iinfo(np.int64).max
        vocabulary = Vocabulary(items, agents, raters, bounds)
        shared = client.scatter(vocabulary, broadcast=True)
        starts = np.concatenate([[0], np.cumsum([n.rows for n in names])]).astype(np.int64)
        splits = [client.submit(split_piece, table, shared, int(starts[i])) for i, table in enumerate(tables)]
        pieces_of = [[client.submit(_take, split, p) for split in splits] for p in range(n_parts)]
        sources = [piece.source for piece in pieces]
        built = [client.submit(build_partition, parts, len(agents), len(raters), len(levels), options.duplicates,
                               sources, starts, shared) for parts in pieces_of]
        summaries = client.gather([client.submit(partition_summary, part) for part in built])
        del tables, splits, pieces_of
        pairs = np.concatenate([s[0] for s in summaries])
        repeats = sum(s[2] for s in summaries)
        if repeats:
            notes.append(f"kept {repeats:,} repeated judgment(s) of the same (item, agent, rater) as independent "
                         "judgments (policy 'keep')" if options.duplicates == "keep"
                         else f"dropped {repeats:,} duplicate judgment(s) (policy {options.duplicates!r})")
        width = max(len(agents), 1)
        return cls(client=client, partitions=built,
                   offsets=np.concatenate([[0], np.cumsum([s[0].size for s in summaries])]).astype(np.int64),
                   items=items, agents=agents, raters=raters, levels=levels, credit=credit,
                   response_item=(pairs // width).astype(np.int32), response_agent=(pairs % width).astype(np.int32),
                   judgments=np.concatenate([s[1] for s in summaries]), source=str(path), notes=tuple(notes))

    @property
    def n_judgments(self) -> int:
        return int(self.judgments.sum())

    def keep_raters(self, keep: np.ndarray) -> PartitionedTable:
        """The table of the judgments by the raters where ``keep`` (R,) is true, as
        :meth:`AnnotationTable.subset <stableval.data.table.AnnotationTable.subset>` of those judgments gives it:
        raters, responses and items left without judgments drop out and are re-coded. The judgments stay on the
        workers (each partition is filtered where it lives); the client gets the new per-response arrays."""
        keep = np.asarray(keep, dtype=bool)
        if keep.shape != (self.n_raters,):
            raise ValueError(f"keep must have one entry per rater ({self.n_raters}), got shape {keep.shape}")
        rater_code = np.where(keep, np.cumsum(keep) - 1, -1).astype(np.int64)
        code = self.client.scatter(rater_code, broadcast=True)
        built = [self.client.submit(subset_partition, part, code, self.n_levels, pure=False)
                 for part in self.partitions]
        summaries = self.gather([self.client.submit(partition_summary, part, pure=False) for part in built])
        pairs = np.concatenate([s[0] for s in summaries]) if summaries else np.zeros(0, dtype=np.int64)
        width = max(self.n_agents, 1)
        items_used, item_code = np.unique(pairs // width, return_inverse=True)
        return PartitionedTable(
            client=self.client, partitions=built,
            offsets=np.concatenate([[0], np.cumsum([s[0].size for s in summaries])]).astype(np.int64),
            items=self.items[items_used], agents=self.agents, raters=self.raters[np.flatnonzero(keep)],
            levels=self.levels, credit=self.credit, response_item=item_code.astype(np.int32),
            response_agent=(pairs % width).astype(np.int32),
            judgments=np.concatenate([s[1] for s in summaries]) if summaries else np.zeros(0, dtype=np.int64),
            source=self.source, notes=self.notes)

    def map(self, fn: Any, *args: Any) -> list[Any]:
        """Futures of ``fn(partition, *args)`` for every partition (arguments shared by all: scatter big ones)."""
        return [self.client.submit(fn, part, *args, pure=False) for part in self.partitions]

    def gather(self, futures: Sequence[Any]) -> list[Any]:
        return list(self.client.gather(list(futures)))

    def judgments_per_response(self) -> np.ndarray:
        """(N,) number of judgments of each response."""
        return self.judgments

    def responses_per_agent(self) -> np.ndarray:
        """(A,) number of responses of each agent."""
        return np.bincount(self.response_agent, minlength=self.n_agents)

    def judgments_per_agent(self) -> np.ndarray:
        """(A,) number of judgments of each agent's responses."""
        return np.bincount(self.response_agent, weights=self.judgments, minlength=self.n_agents).astype(np.int64)

    def vote_counts(self) -> np.ndarray:
        """(N, K) number of judgments of each level per response, gathered from the partitions in response
        order."""
        parts = self.gather(self.map(partition_vote_counts, self.n_levels))
        return np.concatenate(parts) if parts else np.zeros((0, self.n_levels))

    def first_seen(self) -> np.ndarray:
        """(N, K) dataset-wide row of each level's first judgment of each response (the largest int64 where it never
        got that level), gathered from the partitions: majority vote's ``ties="first"``."""
        parts = self.gather(self.map(_first_seen))
        return np.concatenate(parts) if parts else np.zeros((0, self.n_levels), dtype=np.int64)

    def judgments_per_rater(self) -> np.ndarray:
        """(R,) number of judgments by each rater, summed over the partitions."""
        return self._rater_counts[0]

    def responses_per_rater(self) -> np.ndarray:
        """(R,) number of distinct responses each rater judged, summed over the partitions (every response lives in
        one)."""
        return self._rater_counts[1]

    def rater_level_counts(self) -> np.ndarray:
        """(R, K) number of judgments of each level by each rater, summed over the partitions."""
        parts = self.gather(self.map(_rater_level_counts, self.n_raters * self.n_levels))
        total = np.sum(parts, axis=0) if parts else np.zeros(self.n_raters * self.n_levels)
        return np.asarray(total, dtype=np.int64).reshape(self.n_raters, self.n_levels)

    @cached_property
    def _rater_counts(self) -> tuple[np.ndarray, np.ndarray]:
        """Judgments and distinct responses per rater, one task per partition (both counted in one pass)."""
        parts = self.gather(self.map(_rater_counts, self.n_raters, self.n_levels))
        if not parts:
            return np.zeros(self.n_raters, np.int64), np.zeros(self.n_raters, np.int64)
        return (np.sum([p[0] for p in parts], axis=0).astype(np.int64),
                np.sum([p[1] for p in parts], axis=0).astype(np.int64))

    def judgment_details(self, responses: np.ndarray) -> list[str]:
        """For each response in ``responses`` (global numbers), its judgments as ``rater=level; ...`` (sorted by
        rater, then level; a repeated judgment listed as often as it was given), fetched from the partitions that
        hold them."""
        responses = np.asarray(responses, dtype=np.int64)
        part = np.searchsorted(self.offsets, responses, side="right") - 1
        raters = [str(r) for r in self.raters]
        futures = {int(p): self.client.submit(_details, self.partitions[int(p)],
                                              responses[part == p] - self.offsets[int(p)], raters, self.levels)
                   for p in np.unique(part)}
        found = dict(zip(futures, self.gather(list(futures.values())), strict=True))
        seen = {int(p): 0 for p in futures}
        out = []
        for p in part:
            out.append(found[int(p)][seen[int(p)]])
            seen[int(p)] += 1
        return out

    def response_frame(self) -> pd.DataFrame:
        """One row per response: ``item, agent, judgments`` (as :meth:`AnnotationTable.response_frame`)."""
        return pd.DataFrame({"item": self.items.to_numpy()[self.response_item],
                             "agent": self.agents.to_numpy()[self.response_agent], "judgments": self.judgments})

    def summary(self) -> dict[str, object]:
        """Counts a user wants to see first (as :meth:`AnnotationTable.summary`)."""
        return {"source": self.source, "judgments": self.n_judgments, "responses": self.n_responses,
                "items": self.n_items, "agents": self.n_agents, "raters": self.n_raters, "levels": list(self.levels),
                "credit": self.credit.tolist(),
                "mean_judgments_per_response": float(self.judgments.mean()) if self.judgments.size else 0.0,
                "notes": list(self.notes)}


def partition_vote_counts(partition: Partition, n_levels: int) -> np.ndarray:
    """(n, K) label counts per response of a partition (column r·K+o of its matrix holds level o)."""
    X = partition.X
    levels = sp.csr_matrix((X.data, X.indices % n_levels, X.indptr), shape=(X.shape[0], n_levels))
    return np.asarray(levels.toarray())


def _first_seen(partition: Partition) -> np.ndarray:
    return partition.first_seen


def _rater_counts(partition: Partition, n_raters: int, n_levels: int) -> tuple[np.ndarray, np.ndarray]:
    """(R,) judgments and (R,) distinct responses of each rater in a partition."""
    X = partition.X.tocoo()
    rater = X.col // n_levels
    ratings = np.bincount(rater, weights=X.data, minlength=n_raters)
    pairs = np.unique(rater.astype(np.int64) * max(partition.n_responses, 1) + X.row)
    return ratings.astype(np.int64), np.bincount(pairs // max(partition.n_responses, 1), minlength=n_raters)


def _rater_level_counts(partition: Partition, columns: int) -> np.ndarray:
    """(R·K,) judgments of each (rater, level) in a partition: its matrix's column sums (column r·K+o is level o of
    rater r)."""
    X = partition.X.tocoo()
    return np.bincount(X.col, weights=X.data, minlength=columns)


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


def _take(parts: list[tuple[np.ndarray, ...]], index: int) -> tuple[np.ndarray, ...]:
    return parts[index]


def _union(arrays: Sequence[np.ndarray]) -> pd.Index:
    """The sorted distinct names of every piece (as ``pd.factorize(sort=True)`` orders them in memory)."""
    values = np.unique(np.concatenate([np.asarray(a, dtype=object) for a in arrays]).astype(str))
    index: pd.Index = pd.Index(values.astype(object), dtype=object)
    return index


def _levels(names: Sequence[PieceNames], options: InputOptions, source: str) -> tuple[tuple[str, ...], list[str]]:
    """The dataset's levels and notes from every piece's: the levels given (or the file's), or the integer levels
    0..top over every piece."""
    notes: list[str] = []
    declared = any(note.startswith("levels from the file's metadata") for n in names for note in n.notes)
    integer = options.levels is None and not declared
    if not integer:
        levels = names[0].levels
        for other in names[1:]:
            if other.levels != levels:
                raise InputError("the files of the dataset declare different levels", file=source,
                                 value=[list(levels), list(other.levels)], allowed="one scale for every file")
    else:
        counts = np.zeros(max(len(n.levels) for n in names), dtype=np.int64)
        for n in names:
            counts[:n.label_counts.size] += n.label_counts
        top = int(np.flatnonzero(counts).max(initial=0))  # a piece of only 0s was read with levels 0, 1
        if top < 1:
            raise InputError("need at least 2 levels: every label is 0", file=source, column="label", value="0",
                             allowed="integer codes 0..K-1 with K >= 2, or name them with {levels}",
                             options={"levels": "a,b,c"})
        levels = tuple(str(v) for v in range(top + 1))
        counts = counts[:top + 1]
        used = np.flatnonzero(counts)
        low = int(used.min())
        notes.append(f"integer labels {low}..{top}: levels 0..{top}"
                     + (f" (levels below {low} never occur but still take part of the default credit scale; "
                        "set the levels or the credit to change that)" if low > 0 else ""))
        unused = [str(level) for level in range(low + 1, top) if counts[level] == 0]
        if unused:
            from stableval.data.labels import WARNING_PREFIX

            notes.append(f"{WARNING_PREFIX}integer labels {low}..{top} but level(s) {', '.join(unused)} never occur, "
                         f"so K = {top + 1}; if 0..{top} is meant, set the levels to "
                         f"{','.join(map(str, range(top + 1)))} to say so.")
    skip = ("integer labels ", "WARNING: integer labels ", "kept ", "dropped ")
    for n in names:
        for note in n.notes:
            if not note.startswith(skip) and note not in notes:
                notes.append(note)
    return levels, notes
