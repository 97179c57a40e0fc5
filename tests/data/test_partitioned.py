"""Reading a Parquet dataset piece by piece for the Dask executor (:mod:`stableval.data.partitioned`); the reads
and fits on a cluster are tested in tests/aggregate/test_distributed.py."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from stableval.data.files import SCALE_KEY
from stableval.data.partitioned import list_pieces
from stableval.errors import InputError

ROWS = [("q1", "m1", "r1", "good"), ("q1", "m1", "r2", "good"), ("q1", "m2", "r1", "bad"), ("q1", "m2", "r2", "good"),
        ("q2", "m1", "r1", "good"), ("q2", "m1", "r2", "bad"), ("q2", "m2", "r1", "bad"), ("q2", "m2", "r2", "bad")]


def _write(path: Path, rows: list[tuple[str, ...]], levels: list[str] | None) -> None:
    table = pa.table({name: [row[i] for row in rows] for i, name in enumerate(["item", "agent", "rater", "label"])})
    if levels is not None:
        table = table.replace_schema_metadata({SCALE_KEY.encode(): json.dumps({"column": "label",
                                                                                "levels": levels}).encode()})
    pq.write_table(table, path)


@pytest.mark.parametrize("second", [["good", "bad"], None])
def test_files_that_declare_different_scales_are_refused(tmp_path: Path, second: list[str] | None) -> None:
    """Issue 26 (E14): the Dask reader read each piece with its own file's scale (or none), so a folder whose
    files disagree on the order of the levels was scored with a mix; it now refuses before any work, naming both
    files and their scales, as the in-memory reader does."""
    _write(tmp_path / "a.parquet", ROWS[:4], ["bad", "good"])
    _write(tmp_path / "b.parquet", ROWS[4:], second)
    with pytest.raises(InputError) as caught:
        list_pieces(tmp_path)
    message = str(caught.value)
    assert message.startswith(str(tmp_path / "b.parquet")) and str(tmp_path / "a.parquet") in message, message
    assert "levels bad < good" in message and ("levels good < bad" if second else "no scale") in message, message


def test_files_that_declare_one_scale_are_read(tmp_path: Path) -> None:
    _write(tmp_path / "a.parquet", ROWS[:4], ["bad", "good"])
    _write(tmp_path / "b.parquet", ROWS[4:], ["bad", "good"])
    assert [piece.rows for piece in list_pieces(tmp_path)] == [4, 4]


def test_the_dask_read_refuses_them_before_any_work(tmp_path: Path) -> None:
    """Issue 26 (E14): ``PartitionedTable.read`` (``--executor dask``) refuses such a folder too."""
    distributed = pytest.importorskip("distributed")
    from stableval.data.partitioned import PartitionedTable

    _write(tmp_path / "a.parquet", ROWS[:4], ["bad", "good"])
    _write(tmp_path / "b.parquet", ROWS[4:], ["good", "bad"])
    with distributed.Client(processes=False, n_workers=1, dashboard_address=":0") as client, \
            pytest.raises(InputError, match="different scales: levels good < bad here but levels bad < good"):
        PartitionedTable.read(tmp_path, client)
