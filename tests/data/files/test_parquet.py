"""Parquet files: the scale they carry, and damaged files named with what to do, never raw Arrow text first.

Each damaged file is made here from a good one: cut in half, a footer whose bytes are scrambled, a footer with no
magic bytes, schema metadata whose ``ARROW:schema`` is not base64, and two columns with one name; alone or in a
multi-file dataset."""

from __future__ import annotations

import struct
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from stableval.cli import app
from stableval.data import read_any, read_table_file
from stableval.errors import InputError


def test_parquet_keeps_its_levels_and_credit(tmp_path: Path) -> None:
    """Issue 16: bad input."""
    from stableval.data import read_any
    from stableval.data.files import write_frame

    frame = pd.DataFrame({"item": ["q1", "q1", "q2"], "agent": "A", "rater": ["r1", "r2", "r1"],
                          "label": ["ok", "good", "ok"]})
    path = write_frame(frame, tmp_path / "t.parquet",
                       scale={"column": "label", "levels": ["bad", "ok", "good"], "credit": [0, 0.25, 1]})
    table = read_any(path)
    assert table.levels == ("bad", "ok", "good") and table.credit.tolist() == [0.0, 0.25, 1.0]
    assert table.label.tolist() == [1, 2, 1]
    assert read_any(path, levels="ok,good").levels == ("ok", "good")  # explicit levels still win


RAW_TEXT = ("Invalid base64 input", "Multiple matches for FieldRef", "Parquet magic bytes not found",
            "Couldn't deserialize thrift", "ArrowInvalid", "Traceback")


ADVICE = "re-export it or convert it to CSV"


NO_FOOTER = "no Parquet footer at its end (the file was cut short, or it is not Parquet)"


def good_table() -> pa.Table:
    return pa.table({"item": ["q1", "q1", "q2", "q2"], "agent": ["A", "B", "A", "B"], "rater": ["r1"] * 4,
                     "label": [0, 1, 1, 0]})


def write_good(path: Path) -> bytes:
    pq.write_table(good_table(), path)
    return path.read_bytes()


def truncated(path: Path) -> Path:
    data = write_good(path)
    path.write_bytes(data[: len(data) // 2])
    return path


def scrambled_footer(path: Path) -> Path:
    data = bytearray(write_good(path))
    footer = struct.unpack("<i", bytes(data[-8:-4]))[0]
    for at in range(len(data) - 8 - footer, len(data) - 8):
        data[at] ^= 0x5A
    path.write_bytes(bytes(data))
    return path


def no_magic(path: Path) -> Path:
    data = bytearray(write_good(path))
    data[-4:] = b"XXXX"
    path.write_bytes(bytes(data))
    return path


def bad_base64_schema(path: Path) -> Path:
    pq.write_table(good_table().replace_schema_metadata({"ARROW:schema": "@@@@ not base64"}), path)
    return path


def duplicated_fields(path: Path) -> Path:
    table = pa.table([pa.array(["q1"]), pa.array(["A"]), pa.array(["r1"]), pa.array([0])],
                     names=["item", "item", "rater", "label"])
    pq.write_table(table, path)
    return path


DAMAGED = {
    "truncated": (truncated, NO_FOOTER),
    "scrambled footer": (scrambled_footer, "its footer (the schema and row-group index) cannot be decoded"),
    "no magic bytes": (no_magic, NO_FOOTER),
    "bad base64 schema": (bad_base64_schema, "its 'ARROW:schema' metadata is not valid base64"),
}


@pytest.mark.parametrize("name", list(DAMAGED))
def test_damaged_parquet_is_named_with_advice(tmp_path: Path, name: str) -> None:
    """Issue 16: damaged Parquet files."""
    make, what = DAMAGED[name]
    path = make(tmp_path / "damaged.parquet")
    with pytest.raises(InputError) as caught:
        read_table_file(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: not a readable Parquet file: {what}; {ADVICE}"), message
    for raw in RAW_TEXT:  # raw library text only as a detail after ours, if at all
        assert raw not in message.split("(detail:")[0]


@pytest.mark.parametrize("name", list(DAMAGED))
def test_damaged_parquet_exits_1_with_one_error_line(tmp_path: Path, name: str) -> None:
    """Issue 16: damaged Parquet files."""
    path = DAMAGED[name][0](tmp_path / "damaged.parquet")
    result = CliRunner().invoke(app, ["score", str(path), "--levels", "0,1", "-B", "5"])
    assert result.exit_code == 1, result.output
    assert "not a readable Parquet file" in result.output and ADVICE in result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_duplicated_field_names_name_the_column(tmp_path: Path) -> None:
    """Issue 16: damaged Parquet files."""
    path = duplicated_fields(tmp_path / "dup.parquet")
    with pytest.raises(InputError, match=r"column 'item' appears more than once in the header"):
        read_any(path, levels="0,1")


def test_duplicated_field_in_a_dataset_names_the_file(tmp_path: Path) -> None:
    """Issue 16: damaged Parquet files."""
    folder = tmp_path / "parts"
    folder.mkdir()
    pq.write_table(good_table(), folder / "a.parquet")
    duplicated_fields(folder / "b.parquet")
    with pytest.raises(InputError) as caught:
        read_any(folder, levels="0,1")
    message = str(caught.value)
    assert str(folder / "b.parquet") in message and "'item' appears more than once" in message
    assert "FieldRef" not in message


def test_damaged_file_in_a_dataset_names_the_file(tmp_path: Path) -> None:
    """Issue 16: damaged Parquet files."""
    folder = tmp_path / "parts"
    folder.mkdir()
    pq.write_table(good_table(), folder / "a.parquet")
    truncated(folder / "b.parquet")
    with pytest.raises(InputError) as caught:
        read_any(folder, levels="0,1")
    assert str(caught.value).startswith(f"{folder / 'b.parquet'}: not a readable Parquet file: ")


def test_a_dataset_whose_files_declare_different_scales_is_refused(tmp_path: Path) -> None:
    """Issue 26 (E14): read with the first file's scale without a word before; now an error naming both files."""
    import json

    rows = [("q1", "m1", "r1", "good"), ("q1", "m2", "r1", "bad"), ("q2", "m1", "r1", "good"),
            ("q2", "m2", "r1", "bad")]
    folder = tmp_path / "ds"
    folder.mkdir()
    for name, part, levels in (("a", rows[:2], ["bad", "good"]), ("b", rows[2:], ["good", "bad"])):
        table = pa.table({k: [r[i] for r in part] for i, k in enumerate(["item", "agent", "rater", "label"])})
        scale = json.dumps({"column": "label", "levels": levels}).encode()
        pq.write_table(table.replace_schema_metadata({b"stableval.scale": scale}), folder / f"{name}.parquet")
    with pytest.raises(InputError) as caught:
        read_table_file(folder)
    text = str(caught.value)
    assert "b.parquet" in text and "a.parquet" in text and "good < bad" in text and "bad < good" in text
