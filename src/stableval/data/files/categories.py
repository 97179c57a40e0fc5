"""Columns as text, or as categories of text: each distinct value turned into text once, the rows kept as codes.

>>> categories_as_text(text_categories(pd.DataFrame({"item": ["q2", "q1", "q2"]})))["item"].tolist()
['q2', 'q1', 'q2']
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

__all__ = ["all_text", "categories_as_text", "categories_of", "codes_text", "integer_categories", "text_categories"]


# A column read "as categories" is a pandas Categorical whose categories are exactly the distinct texts present:
# value by value it equals the text the plain reader gives, but each distinct value is turned into text once and
# the rows hold integer codes (the fast path: no text round-trip per row).
_DENSE_SPAN = 1 << 22  # integer ids spanning at most max(this, 2 rows) values are coded by direct lookup


def _integer_codes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(codes 0..m-1, the distinct values in code order) of an integer array by direct lookup; None where the
    values span too wide a range for a lookup table.

    >>> codes, distinct = _integer_codes(np.array([100, -100, 100, 9], dtype=np.int8))
    >>> codes.tolist(), distinct.tolist()
    ([2, 0, 2, 1], [-100, 9, 100])
    """
    if values.size == 0:
        return np.zeros(0, np.int32), values[:0]
    low, high = values.min(), values.max()
    span = int(high) - int(low) + 1
    if span > max(_DENSE_SPAN, 2 * values.size):
        return None
    unsigned = np.dtype(f"u{values.dtype.itemsize}")
    low_bits = np.asarray(low, dtype=values.dtype).view(unsigned)  # wrapping arithmetic: exact within the span
    offsets = values if int(low) == 0 and values.dtype.itemsize == 8 else \
        (values.view(unsigned) - low_bits).astype(np.intp)
    present = np.zeros(span, dtype=bool)
    present[offsets] = True
    code_of = np.cumsum(present, dtype=np.int32) - 1
    distinct = (np.flatnonzero(present).astype(unsigned) + low_bits).view(values.dtype)
    return code_of[offsets], distinct


def integer_categories(column: pd.Series) -> pd.Categorical | None:
    """An integer column (no missing values) as categories of the texts ``str(value)``, coded by direct lookup
    (no text made per row); None for any other column or where the values span too wide a range.

    >>> integer_categories(pd.Series([30, 7, 30])).tolist(), integer_categories(pd.Series(["7"]))
    (['30', '7', '30'], None)
    """
    dtype = column.dtype
    if isinstance(dtype, pd.CategoricalDtype) or not pd.api.types.is_integer_dtype(dtype) or column.hasnans:
        return None
    found = _integer_codes(column.to_numpy(dtype=np.dtype(str(dtype).lower())))
    if found is None:
        return None
    codes, distinct = found
    return _categorical(codes.astype(np.int32, copy=False), np.asarray([str(v) for v in distinct.tolist()],
                                                                       dtype=object))


def _column_codes(column: Any) -> tuple[np.ndarray, Any]:
    """(codes, the distinct values as an Arrow array of the column's type in code order) of an Arrow column coded
    in its own type; a null is a value of its own."""
    import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]
    import pyarrow.compute as pc  # type: ignore[import-untyped, unused-ignore]

    if pa.types.is_integer(column.type) and column.null_count == 0:
        dense = _integer_codes(column.to_numpy())
        if dense is not None:
            return dense[0], pa.array(dense[1], type=column.type)
    stored = pa.types.is_dictionary(column.type)
    encoded = column if stored else pc.dictionary_encode(column)
    encoded = pa.table({"c": encoded}).unify_dictionaries().column(0)
    dictionary = encoded.chunks[0].dictionary if encoded.num_chunks else pa.array([], encoded.type.value_type)
    size, nulls = len(dictionary), encoded.null_count > 0
    indices = pa.chunked_array([chunk.indices for chunk in encoded.chunks], type=encoded.type.index_type)
    codes = (indices.fill_null(size) if nulls else indices).to_numpy().astype(np.int32, copy=False)
    if not stored:
        return codes, pa.concat_arrays([dictionary, pa.nulls(1, dictionary.type)]) if nulls else dictionary
    used = np.bincount(codes, minlength=size + 1)[:size] > 0  # a stored dictionary may hold unused values
    if not used.all():
        code_of = np.append(np.cumsum(used, dtype=np.int32) - 1, np.int32(used.sum()))
        codes, dictionary = code_of[codes], dictionary.filter(pa.array(used))
    index = list(range(len(dictionary))) + ([None] if nulls else [])
    return codes, pa.DictionaryArray.from_arrays(pa.array(index, type=encoded.type.index_type), dictionary)


def categories_of(table: Any, as_text: Any) -> pd.DataFrame | None:
    """Every column of an Arrow table as categories whose text ``as_text`` (Arrow table → text frame) gives, applied
    to the column's distinct values; None when the text reader's columns are not the table's (the caller falls
    back to converting every row)."""
    import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]

    names = [str(name) for name in as_text(table.slice(0, 0)).columns]
    if len(set(table.column_names)) != table.num_columns or not set(names) <= set(table.column_names):
        return None
    out = {}
    for name in names:
        try:
            codes, values = _column_codes(table.column(name))
        except (pa.ArrowException, TypeError, ValueError):  # e.g. a list or struct column: its text, row by row
            codes, uniques = pd.factorize(as_text(table.select([name]))[name])
            out[name] = _categorical(codes.astype(np.int32), np.asarray(uniques, dtype=object))
            continue
        field = table.schema.field(name)
        schema = pa.schema([field.with_type(values.type)], metadata=table.schema.metadata)
        text = as_text(pa.Table.from_arrays([values], schema=schema))[name]
        out[name] = _categorical(codes, np.asarray(text.astype(object), dtype=object))
    return pd.DataFrame(out, index=pd.RangeIndex(table.num_rows), copy=False)


def _categorical(codes: np.ndarray, text: np.ndarray) -> pd.Categorical:
    """Rows ``codes`` of the texts ``text``, texts that are equal merged into one category."""
    merged, categories = pd.factorize(text)
    if len(categories) < len(text):
        codes = merged.astype(np.int32)[codes]
    return pd.Categorical.from_codes(codes, categories=pd.Index(np.asarray(categories, dtype=object), dtype=str),
                                     validate=False)


def text_categories(frame: pd.DataFrame) -> pd.DataFrame:
    """A text frame as categories (one hash pass per column)."""
    out = {}
    for name in frame.columns:
        codes, uniques = pd.factorize(frame[name])
        out[name] = pd.Categorical.from_codes(codes.astype(np.int32), categories=pd.Index(uniques, dtype=str),
                                              validate=False)
    result = pd.DataFrame(out, index=pd.RangeIndex(len(frame)))
    result.attrs.update(frame.attrs)
    return result


def categories_as_text(frame: pd.DataFrame) -> pd.DataFrame:
    """A frame read with ``categorical=True`` as :func:`read_table_file` gives it by default (every column text).

    >>> frame = pd.DataFrame({"item": pd.Categorical(["q2", "q1", "q2"])})
    >>> categories_as_text(frame)["item"].tolist()
    ['q2', 'q1', 'q2']
    """
    out = {}
    for name in frame.columns:
        column = frame[name]
        if isinstance(column.dtype, pd.CategoricalDtype) and not (column.cat.codes.to_numpy() < 0).any():
            out[name] = codes_text(column.cat.codes.to_numpy(), [str(v) for v in column.cat.categories], column.index)
        else:
            out[name] = column.astype(str)
    result = pd.DataFrame(out, index=frame.index)
    result.attrs.update(frame.attrs)
    return result


def codes_text(codes: np.ndarray, text: list[str], index: pd.Index) -> pd.Series:
    """Text Series (the dtype ``astype(str)`` gives) of rows ``codes`` into ``text``, cast in C through Arrow."""
    import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]

    dtype = pd.Series([""]).astype(str).dtype
    if getattr(dtype, "storage", None) != "pyarrow":  # pragma: no cover - pandas without Arrow strings
        return pd.Series(np.asarray(text, dtype=object)[codes], index=index).astype(str)
    values = pa.DictionaryArray.from_arrays(pa.array(codes.astype(np.int32)), pa.array(text, type=pa.large_string()))
    return pd.Series(pd.array(values.cast(pa.large_string()), dtype=dtype), index=index)


def all_text(frame: pd.DataFrame) -> pd.DataFrame:
    """Every column as text; missing values become ''.

    Integer and boolean columns (ids, labels) are factorised in their own type first and only their distinct
    values turned into text: the same strings as converting every value, at the cost of one hash pass. The rows
    keep their order whatever the frame's index (a Parquet file may carry a pandas index).
    """
    out = {}
    frame = frame.reset_index(drop=True)
    for name in frame.columns:
        column = frame[name]
        if column.dtype.kind in "iub":
            out[str(name)] = _integer_text(column)
            continue
        missing = column.isna().to_numpy()
        text = column.astype(object).to_numpy(copy=True)
        if missing.any():
            text[missing] = ""
        out[str(name)] = pd.Series(text, index=frame.index).astype(str)
    return pd.DataFrame(out, index=pd.RangeIndex(len(frame)))


def _integer_text(column: pd.Series) -> pd.Series:
    """An integer or boolean column as text ('' where missing), converting only its distinct values: the codes
    index an Arrow dictionary of their text, cast in C to the string type ``astype(str)`` gives."""
    codes, uniques = pd.factorize(column, use_na_sentinel=True)
    values = np.asarray(uniques)
    if values.dtype.kind in "iu":  # decimal digits, as str() writes them, converted in C
        import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]

        text = [*pa.array(values).cast(pa.string()).to_pylist(), ""]
    else:
        text = [str(value) for value in uniques.tolist()] + [""]
    return codes_text(np.where(codes < 0, len(text) - 1, codes), text, column.index)
