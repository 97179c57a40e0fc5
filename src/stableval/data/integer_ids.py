"""Parquet judgments whose item, agent and rater ids are integers, coded at memory speed.

Files written by LLM-judge pipelines usually hold integer ids. For them no text is made per row: each row group
is read (only the needed columns, decoded by Arrow's threads) straight into offsets from the column's smallest
value, the ids present are found with one scatter into a table as long as the range of values, and only the
*distinct* ids are turned into text and sorted as text (the order every reader numbers names in). The result is
the table :func:`~stableval.data.loader.load` gives through the general reader, code for code and note for note.

This path only ever answers for clean files: anything it does not handle, or anything that would need a message
or a duplicate policy (a null id, a bad label, a repeated (item, agent, rater), a ``turn`` column, levels declared
in the file, ids spread too thinly over their range), makes it return ``None``, and the general reader then reads
the file and names the problem exactly as it always has.

>>> import pathlib, tempfile
>>> import pandas as pd
>>> from stableval.data.options import InputOptions
>>> path = pathlib.Path(tempfile.mkdtemp()) / "judgments.parquet"
>>> pd.DataFrame({"item": [10, 10, 9], "agent": [1, 1, 2], "rater": [5, 7, 5], "label": [2, 0, 1]}).to_parquet(path)
>>> table = integer_table(path, InputOptions())
>>> table.items.tolist(), table.response.tolist(), table.label.tolist(), table.notes
(['10', '9'], [0, 0, 1], [2, 0, 1], ('integer labels 0..2: levels 0..2',))
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from stableval.data.columns import ITEM_PARTS, ROLE_ALIASES, resolve_columns
from stableval.data.duplicates import repeats_in_pairs
from stableval.data.files import FORMATS, SCALE_KEY, dataset_files, is_dataset_path
from stableval.data.labels import WARNING_PREFIX, check_levels, encode_labels, parse_credit
from stableval.data.options import InputOptions
from stableval.data.pairwise import is_pairwise_frame
from stableval.data.table import AnnotationTable
from stableval.errors import InputError

__all__ = ["integer_table"]

#: A column's ids are coded by lookup when their range of values is at most this long, or the number of rows.
DENSE_SPAN = 1 << 22
#: Rows coded at a time in the second pass (small enough to stay in cache).
_BLOCK = 1 << 20
#: Largest range of integer labels coded by lookup (labels above 999 are refused anyway).
_LABEL_SPAN = 1 << 15


class _NotHere(Exception):
    """The file needs the general reader (a null, a wide range, a changed type): not an error of the file."""


@dataclass(frozen=True)
class _Plan:
    """What to read: the files (in dataset order) and the column of each role (agent None: ``default_agent``)."""

    files: list[Path]
    item: str
    agent: str | None
    rater: str
    label: str
    rows: int
    label_is_text: bool
    types: dict[str, np.dtype[Any]]


def integer_table(path: str | os.PathLike[str], options: InputOptions) -> AnnotationTable | None:
    """The table of a Parquet file or dataset with integer item, agent and rater ids, or ``None`` where the general
    reader must read it (see the module docstring); the same table the general reader gives when not ``None``."""
    import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]

    try:
        plan = _plan(Path(path), options)
        return None if plan is None else _read(plan, options, source=str(path))
    except (_NotHere, InputError, OSError, ValueError, pa.ArrowException):
        return None
    finally:
        pa.default_memory_pool().release_unused()  # the row groups' buffers: give them back to the system


def _plan(path: Path, options: InputOptions) -> _Plan | None:
    """The columns to read, when the schema allows this path; None otherwise."""
    import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]
    import pyarrow.parquet as pq  # type: ignore[import-untyped, unused-ignore]

    if options.pairwise:
        return None
    if options.format is not None:
        name = options.format.lower().lstrip(".")
        if FORMATS.get("." + name, name) != "parquet":
            return None
    if is_dataset_path(path):
        files = dataset_files(path)
    elif path.is_file() and (options.format is not None or FORMATS.get(path.suffix.lower()) == "parquet"):
        files = [path]
    else:
        return None
    metadata = [pq.read_metadata(part) for part in files]
    schema = metadata[0].schema.to_arrow_schema()
    if len({(m.schema.to_arrow_schema().metadata or {}).get(SCALE_KEY.encode()) for m in metadata}) > 1:
        return None  # files that declare different scales: the general reader names them and refuses
    if any(not m.schema.to_arrow_schema().equals(schema) for m in metadata[1:]):
        return None  # the general reader checks (and names) types that differ between files
    names = [str(name) for name in schema.names]
    if len(set(names)) != len(names):
        return None
    header = pd.DataFrame(columns=pd.Index(names, dtype=object))
    if options.pairwise is None and is_pairwise_frame(header, options.columns):
        return None
    found = resolve_columns(header, ROLE_ALIASES, options.columns, source=str(path),
                            optional=("agent",) if options.default_agent is not None else ())
    used = {column for column in found.values() if column is not None}
    if any(name.strip().lower() in ITEM_PARTS and name not in used for name in names):
        return None  # each (item, turn) is its own item: the general reader joins them
    if options.levels is None and SCALE_KEY.encode() in (schema.metadata or {}):
        return None  # levels declared in the file
    ids = [str(found[role]) for role in ("item", "agent", "rater") if found[role] is not None]
    if not all(pa.types.is_integer(schema.field(name).type) and _plain_integers(schema, name) for name in ids):
        return None
    label_type = schema.field(str(found["label"])).type
    label_is_text = pa.types.is_string(label_type) or pa.types.is_large_string(label_type)
    if not (label_is_text or (pa.types.is_integer(label_type) and _plain_integers(schema, str(found["label"])))):
        return None
    rows = sum(int(m.num_rows) for m in metadata)
    if rows == 0:
        return None
    return _Plan(files=files, item=str(found["item"]), agent=found["agent"], rater=str(found["rater"]),
                 label=str(found["label"]), rows=rows, label_is_text=label_is_text,
                 types={name: np.dtype(schema.field(name).type.to_pandas_dtype()) for name in ids})


def _plain_integers(schema: Any, name: str) -> bool:
    """True unless pandas metadata gives the integer column another type than an integer (its text would differ)."""
    pandas = schema.pandas_metadata or {}
    for column in pandas.get("columns", []):
        if column.get("name") == name:
            kind = str(column.get("numpy_type", "int")).lower()
            return kind.startswith(("int", "uint"))
    return True


def _batches(plan: _Plan) -> Iterator[Any]:
    """The needed columns, one row group at a time, in dataset order (label read as a dictionary when text); the
    next row group is decoded in a thread while the caller works on this one."""
    import pyarrow.parquet as pq  # type: ignore[import-untyped, unused-ignore]

    columns = [name for name in (plan.item, plan.agent, plan.rater, plan.label) if name is not None]
    def groups() -> Iterator[Any]:
        for part in plan.files:
            reader = pq.ParquetFile(part, read_dictionary=[plan.label] if plan.label_is_text else None)
            for group in range(reader.num_row_groups):
                yield reader.read_row_group(group, columns=columns, use_threads=True)

    pending = groups()
    with ThreadPoolExecutor(max_workers=1) as pool:  # decode the next row group while this one is coded
        future = pool.submit(next, pending, None)
        while (batch := future.result()) is not None:
            future = pool.submit(next, pending, None)
            yield batch


def _bounds(plan: _Plan, name: str) -> tuple[int, int]:
    """(smallest, largest) value of an integer column from the row groups' statistics (checked again on reading)."""
    import pyarrow.parquet as pq  # type: ignore[import-untyped, unused-ignore]

    low, high = None, None
    for part in plan.files:
        metadata = pq.read_metadata(part)
        index = metadata.schema.to_arrow_schema().get_field_index(name)
        for group in range(metadata.num_row_groups):
            if metadata.row_group(group).num_rows == 0:
                continue
            stats = metadata.row_group(group).column(index).statistics
            if stats is None or not stats.has_min_max or (stats.has_null_count and stats.null_count > 0):
                raise _NotHere(name)
            low = int(stats.min) if low is None else min(low, int(stats.min))
            high = int(stats.max) if high is None else max(high, int(stats.max))
    if low is None or high is None:
        raise _NotHere(name)
    return low, high


def _offsets(values: Any, low: int, high: int, out: np.ndarray) -> None:
    """``out[:] = values - low`` for an Arrow integer column with no nulls whose values lie in [low, high]."""
    if values.null_count:
        raise _NotHere("null")
    at = 0
    for chunk in values.chunks:  # no concatenated copy
        array = chunk.to_numpy()
        if array.size and (int(array.min()) < low or int(array.max()) > high):
            raise _NotHere("statistics")  # wrong statistics: the general reader does not trust them
        np.subtract(array, array.dtype.type(low), out=out[at:at + array.size], casting="unsafe")
        at += array.size


def _span_type(span: int) -> type[np.integer[Any]]:
    return np.int32 if span < 2**31 else np.int64


def _text_order(offsets: np.ndarray, low: int, dtype: np.dtype[Any]) -> tuple[np.ndarray, np.ndarray]:
    """(the order that sorts the integers ``low + offsets`` of type ``dtype`` as text, their texts in that order)."""
    import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]
    import pyarrow.compute as pc  # type: ignore[import-untyped, unused-ignore]

    unsigned = np.dtype(f"u{dtype.itemsize}")  # wrapping arithmetic: exact, as every value fits in dtype
    values = (offsets.astype(unsigned) + unsigned.type(low % 2 ** (8 * dtype.itemsize))).view(dtype)
    text = pa.array(values).cast(pa.string())
    order = pc.array_sort_indices(text)  # UTF-8 byte order: the order Python sorts text in
    return order.to_numpy(), text.take(order).to_numpy(zero_copy_only=False)


def _read(plan: _Plan, options: InputOptions, *, source: str) -> AnnotationTable:
    n = plan.rows
    dense = max(DENSE_SPAN, n)
    item_low, item_high = _bounds(plan, plan.item)
    agent_low, agent_high = _bounds(plan, plan.agent) if plan.agent is not None else (0, 0)
    rater_low, rater_high = _bounds(plan, plan.rater)
    item_span, agent_span, rater_span = item_high - item_low + 1, agent_high - agent_low + 1, rater_high - rater_low + 1
    if item_span * agent_span > dense or rater_span > dense:
        raise _NotHere("ids spread too thinly for a lookup table")
    label_low, label_high = (0, 0) if plan.label_is_text else _bounds(plan, plan.label)
    if label_high - label_low >= _LABEL_SPAN:
        raise _NotHere("label range")
    level_names = check_levels(options.levels, source=source) if options.levels is not None else None
    if level_names is not None and options.credit is not None:
        parse_credit(options.credit, level_names, source=source)

    # pass 1, a row group at a time: offsets from the smallest value, and which values occur
    pair = np.empty(n, dtype=_span_type(item_span * agent_span))  # item offset · agent span + agent offset
    rater = np.empty(n, dtype=np.int32)
    label = np.empty(n, dtype=np.int16)
    pair_seen = np.zeros(item_span * agent_span, dtype=bool)
    rater_seen = np.zeros(rater_span, dtype=bool)
    label_text: dict[str, int] = {}
    label_seen = np.zeros(_LABEL_SPAN, dtype=bool)
    start = 0
    for batch in _batches(plan):
        stop = start + batch.num_rows
        if stop > n:
            raise _NotHere("more rows than the footers say")
        block = pair[start:stop]
        _offsets(batch.column(plan.item), item_low, item_high, block)
        if plan.agent is not None:
            agent = np.empty(stop - start, dtype=block.dtype)
            _offsets(batch.column(plan.agent), agent_low, agent_high, agent)
            if agent_span > 1:
                block *= agent_span
                block += agent
        pair_seen[block] = True
        _offsets(batch.column(plan.rater), rater_low, rater_high, rater[start:stop])
        rater_seen[rater[start:stop]] = True
        if plan.label_is_text:
            _text_labels(batch.column(plan.label), label_text, label[start:stop])
        else:
            _offsets(batch.column(plan.label), label_low, label_high, label[start:stop])
        label_seen[label[start:stop]] = True  # while the block is in cache
        start = stop
    if start != n:
        raise _NotHere("fewer rows than the footers say")

    # the names in text order, and a code for each value that occurs
    response_of, response_item, response_agent, items, agents = _responses(
        pair_seen, (item_low, item_span, plan.types[plan.item]),
        (agent_low, agent_span, plan.types[plan.agent] if plan.agent is not None else np.dtype(np.int64)))
    del pair_seen
    rater_of, raters = _text_codes(rater_seen, rater_low, plan.types[plan.rater])
    notes: list[str] = []
    if plan.agent is None:
        name = str(options.default_agent).strip()
        if not name:
            raise _NotHere("empty default agent")
        agents = np.asarray([name], dtype=object)
        notes.append(f"no agent column: every judgment is of agent {name!r}")
    label_texts = list(label_text) if plan.label_is_text else \
        [str(value) for value in range(label_low, label_high + 1)]
    label_of, level_names, label_notes = _levels(label_seen[:len(label_texts)], label_texts, plan.label, level_names,
                                                 source)
    notes += label_notes

    # pass 2, a block at a time (it stays in cache): every row's codes, in place where the types allow
    response = pair if pair.dtype == np.int32 else np.empty(n, dtype=np.int32)
    for at in range(0, n, _BLOCK):
        rows = slice(at, min(at + _BLOCK, n))
        np.take(response_of, pair[rows], out=response[rows], mode="clip")
        np.take(rater_of, rater[rows], out=rater[rows], mode="clip")
        np.take(label_of, label[rows], out=label[rows], mode="clip")
    del pair
    if repeats_in_pairs(response, rater, len(raters), distinct=response_item.size):
        raise _NotHere("repeated judgments: the duplicate policy is the general reader's")
    return AnnotationTable(
        response=response, rater=rater, label=label,
        response_item=response_item, response_agent=response_agent,
        items=pd.Index(items, dtype=object), agents=pd.Index(agents, dtype=object),
        raters=pd.Index(raters, dtype=object), levels=tuple(level_names),
        credit=parse_credit(options.credit, level_names, source=source), source=source, notes=tuple(notes))


def _text_labels(column: Any, seen: dict[str, int], out: np.ndarray) -> None:
    """Codes of a text label column (read as a dictionary) into ``seen``, the texts in order of first sight."""
    import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]

    if column.null_count:
        raise _NotHere("null label")
    at = 0
    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    for chunk in chunks:
        if not pa.types.is_dictionary(chunk.type):
            chunk = chunk.dictionary_encode()
        code_of = np.asarray([seen.setdefault(str(text), len(seen)) for text in chunk.dictionary.to_pylist()],
                             dtype=np.int16)
        if len(seen) >= _LABEL_SPAN:
            raise _NotHere("too many distinct labels")
        indices = chunk.indices.to_numpy()
        out[at:at + len(indices)] = code_of[indices]
        at += len(indices)


def _responses(seen: np.ndarray, item: tuple[int, int, np.dtype[Any]], agent: tuple[int, int, np.dtype[Any]]
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(the response code of each (item, agent) offset pair that occurs, each response's item and agent codes, the
    item and agent names): responses numbered in (item text, agent text) order, as
    :meth:`~stableval.data.table.AnnotationTable.from_frame` numbers them. ``item``, ``agent``: (smallest value,
    span, type) of the column."""
    (item_low, item_span, item_type), (agent_low, agent_span, agent_type) = item, agent
    grid = seen.reshape(item_span, agent_span)
    item_offsets, agent_offsets = np.flatnonzero(grid.any(axis=1)), np.flatnonzero(grid.any(axis=0))
    item_order, items = _text_order(item_offsets, item_low, item_type)
    agent_order, agents = _text_order(agent_offsets, agent_low, agent_type)
    item_offsets, agent_offsets = item_offsets[item_order], agent_offsets[agent_order]
    pairs = grid[np.ix_(item_offsets, agent_offsets)]  # [item code, agent code]: the pair occurs
    code = np.cumsum(pairs, dtype=np.int32).reshape(pairs.shape) - 1  # response code where a pair occurs
    code_of = np.zeros(item_span * agent_span, dtype=np.int32)
    code_of.reshape(item_span, agent_span)[np.ix_(item_offsets, agent_offsets)] = code  # others never looked up
    response_item = np.repeat(np.arange(item_offsets.size, dtype=np.int32), pairs.sum(axis=1))
    response_agent = np.broadcast_to(np.arange(agent_offsets.size, dtype=np.int32), pairs.shape)[pairs]
    return code_of, response_item, response_agent, items, agents


def _text_codes(seen: np.ndarray, low: int, dtype: np.dtype[Any]) -> tuple[np.ndarray, np.ndarray]:
    """(the code of each offset that occurs, numbered in the text order of the values, and the texts in order)."""
    distinct = np.flatnonzero(seen)
    order, names = _text_order(distinct, low, dtype)
    code_of = np.zeros(seen.size, dtype=np.int32)
    code_of[distinct[order]] = np.arange(distinct.size, dtype=np.int32)
    return code_of, names


def _levels(seen: np.ndarray, texts: Sequence[str], column: str, level_names: tuple[str, ...] | None,
            source: str) -> tuple[np.ndarray, tuple[str, ...], list[str]]:
    """(the level code of each index into ``texts``, the levels, the notes), through the same validation as the
    general reader applied to the distinct labels that occur (``seen``); a problem or warning is left to it."""
    used = np.flatnonzero(seen)
    frame = pd.DataFrame({column: pd.Categorical(np.asarray(texts, dtype=object)[used])})
    codes, names, notes = encode_labels(frame, column, level_names, source=source)
    if any(note.startswith(WARNING_PREFIX) for note in notes):
        raise _NotHere("the warning names rows")
    code_of = np.zeros(len(texts), dtype=np.int16)
    code_of[used] = codes
    return code_of, names, notes
