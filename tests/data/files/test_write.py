"""Writing frames: one format table for reading and writing, streams and files, and the portal export on the same
writer."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest

from stableval.data import FORMATS, output_format, read_table_file, write_frame
from stableval.errors import InputError

FRAME = pd.DataFrame({"item": ["007", "q 2", "q3"], "agent": ["A", "Ünï", "C"], "label": ["2", "", "10"]})


# ====================================================================================== writing
@pytest.mark.parametrize("suffix", list(FORMATS))
def test_write_then_read_round_trips_every_format(tmp_path: Path, suffix: str) -> None:
    path = write_frame(FRAME, tmp_path / f"table{suffix}")
    assert path == tmp_path / f"table{suffix}" and output_format(path) == FORMATS[suffix]
    back = read_table_file(path)
    assert back.to_dict("records") == FRAME.to_dict("records")  # text stays text: '007' and '' survive


@pytest.mark.parametrize("fmt", sorted(set(FORMATS.values())))
def test_a_stream_gets_the_same_bytes_as_a_file(tmp_path: Path, fmt: str) -> None:
    buffer = io.BytesIO()
    assert write_frame(FRAME, buffer, format=fmt) is None
    if fmt == "parquet":
        assert pd.read_parquet(io.BytesIO(buffer.getvalue())).equals(FRAME)
    else:
        path = write_frame(FRAME, tmp_path / f"t.{fmt}")
        assert buffer.getvalue() == path.read_bytes()


def test_format_argument_overrides_the_suffix(tmp_path: Path) -> None:
    path = write_frame(FRAME, tmp_path / "table.txt", format="tsv")
    assert path.read_text().splitlines()[0] == "item\tagent\tlabel"
    assert read_table_file(path, format="tsv").equals(read_table_file(write_frame(FRAME, tmp_path / "t.tsv")))


def test_jsonl_output_is_utf8_not_escaped(tmp_path: Path) -> None:
    path = write_frame(FRAME.iloc[[1]], tmp_path / "t.jsonl")
    assert path.read_text(encoding="utf-8") == '{"item":"q 2","agent":"Ünï","label":""}\n'


def test_unknown_output_formats_are_value_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"cannot tell the output format from the suffix '\.txt' of '.*t\.txt'; "
                                         r"allowed: \.csv, \.tsv, \.tab, \.jsonl, \.ndjson, \.parquet, \.pq"):
        write_frame(FRAME, tmp_path / "t.txt")
    with pytest.raises(ValueError, match=r"suffix '\(none\)'"):
        output_format("table")
    with pytest.raises(ValueError, match="unknown output format 'xml'"):
        write_frame(FRAME, io.BytesIO(), format="xml")
    with pytest.raises(ValueError, match="needs format="):
        write_frame(FRAME, io.BytesIO())  # type: ignore[call-overload]


def test_the_portal_export_writes_with_the_shared_writer(tmp_path: Path) -> None:
    from stableval.portal.admin.export import to_bytes, write

    for fmt in ("csv", "jsonl"):
        assert to_bytes(FRAME, fmt) == write_frame(FRAME, tmp_path / f"t.{fmt}").read_bytes()
    write(FRAME, tmp_path / "p.parquet", "parquet")
    assert read_table_file(tmp_path / "p.parquet").equals(FRAME)
    with pytest.raises(InputError, match="unknown export format"):
        to_bytes(FRAME, "tsv")  # the portal offers csv, jsonl and parquet only


def test_unwritable_says_why_no_file_can_be_made(tmp_path: Path) -> None:
    """Issue 26 (E3, E4): the reasons the output check gives, before any work."""
    from stableval.data.files import unwritable

    blocker = tmp_path / "plain.txt"
    blocker.write_text("")
    assert unwritable(tmp_path / "new" / "deeper" / "x.csv") is None
    assert unwritable(tmp_path / "new", folder=True) is None and unwritable(tmp_path, folder=True) is None
    assert unwritable(tmp_path / ("x" * 300 + ".csv")) == "a name in the path is 304 bytes long; at most 255 here"
    assert unwritable(tmp_path / "/".join(["y" * 200] * 30) / "x.csv").startswith("the path is ")
    assert unwritable(blocker / "x.csv") == f"{str(blocker)!r} is a file, not a folder"
    assert unwritable(blocker, folder=True) == f"{str(blocker)!r} is a file, not a folder"
    assert unwritable(tmp_path) == f"{str(tmp_path)!r} is a folder, not a file"
