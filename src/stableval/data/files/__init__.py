"""Table files: read CSV, TSV, JSON Lines and Parquet with every column as text, write frames back, and name rows.

One module per concept: :mod:`~stableval.data.files.formats` (the suffix table :data:`FORMATS`, which serves
reading and writing, and the label scale a file may carry), :mod:`~stableval.data.files.rows` (naming rows, lines
and header columns in messages), one reader per format (:mod:`~stableval.data.files.text` for CSV and TSV,
:mod:`~stableval.data.files.jsonl`, :mod:`~stableval.data.files.parquet`,
:mod:`~stableval.data.files.parquet_dataset` for a folder or glob of Parquet files),
:mod:`~stableval.data.files.categories` (columns as text, or as categories of text),
:mod:`~stableval.data.files.read` (:func:`read_table_file`, which picks the reader) and
:mod:`~stableval.data.files.write` (:func:`write_frame`).

Every problem is an :class:`~stableval.errors.InputError` naming the file, the 1-based data row (the header is not
counted; in CSV and TSV files the line is ``row + 1``), the column, the offending value and what is allowed.

>>> import pathlib, tempfile
>>> import pandas as pd
>>> from stableval.data.files import output_format, read_table_file, write_frame
>>> path = write_frame(pd.DataFrame({"item": ["007"], "label": ["good"]}), pathlib.Path(tempfile.mkdtemp()) / "t.tsv")
>>> output_format(path), read_table_file(path).to_dict("records")
('tsv', [{'item': '007', 'label': 'good'}])
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stableval._lazy import lazy_package

if TYPE_CHECKING:  # pragma: no cover  (the public names, declared once: see stableval._lazy)
    from stableval.data.files.categories import (
        categories_as_text as categories_as_text,
        integer_categories as integer_categories,
    )
    from stableval.data.files.formats import FORMATS as FORMATS, SCALE_KEY as SCALE_KEY, file_scale as file_scale
    from stableval.data.files.jsonl import iter_jsonl as iter_jsonl
    from stableval.data.files.parquet import parquet_damage as parquet_damage
    from stableval.data.files.parquet_dataset import (
        dataset_files as dataset_files,
        dataset_part as dataset_part,
        is_dataset_path as is_dataset_path,
        parquet_columns as parquet_columns,
        refuse_mixed_scales as refuse_mixed_scales,
    )
    from stableval.data.files.read import read_table_file as read_table_file
    from stableval.data.files.rows import line_offset as line_offset, row_error as row_error, rows_text as rows_text
    from stableval.data.files.write import (
        output_format as output_format,
        unwritable as unwritable,
        write_frame as write_frame,
    )

__getattr__, __dir__, __all__ = lazy_package(globals())
