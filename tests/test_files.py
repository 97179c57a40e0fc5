"""Table files: one format table for reading and writing, the frame writer, JSON Lines records and row errors."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pytest

from stableval.data import FORMATS, output_format, read_table_file, write_frame
from stableval.data.files import iter_jsonl, row_error, rows_text
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


# ====================================================================================== JSON Lines records
def test_iter_jsonl_skips_blank_lines_and_counts_them(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text('{"a": 1}\n\n  \n[1, 2]\n{"b": {"c": null}}\n')
    assert list(iter_jsonl(path)) == [(1, {"a": 1}), (4, [1, 2]), (5, {"b": {"c": None}})]


def test_iter_jsonl_errors_name_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text('{"a": 1}\n\n{broken\n')
    with pytest.raises(InputError) as caught:
        list(iter_jsonl(path, allowed="one JSON object per line (a review)"))
    error = caught.value
    assert (error.file, error.row) == (str(path), 3)
    assert str(error) == (f"{path}, row 3: line 3 is not valid JSON (Expecting property name enclosed in double "
                          "quotes); allowed: one JSON object per line (a review)")


def test_iter_jsonl_rejects_text_that_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(b'{"a": "\xff"}\n')
    with pytest.raises(InputError, match="file is not UTF-8 text"):
        list(iter_jsonl(path))


def test_dataset_loaders_share_the_json_lines_errors(tmp_path: Path) -> None:
    from stableval.datasets import load_mslr, load_qags

    mslr = tmp_path / "m.json"
    mslr.write_text(json.dumps({"review_id": "CD1", "predictions": []}) + "\n{oops\n")
    with pytest.raises(InputError) as caught:
        load_mslr(mslr)
    assert "line 2 is not valid JSON" in str(caught.value) and caught.value.row == 2
    assert caught.value.allowed == "one JSON object per line (a review)"
    qags = tmp_path / "mturk_xsum.jsonl"
    qags.write_text("\n{oops\n")
    with pytest.raises(InputError) as caught:
        load_qags(qags)
    assert "line 2 is not valid JSON" in str(caught.value) and caught.value.allowed == "one JSON object per line"


# ====================================================================================== row errors
def test_row_error_puts_the_file_line_after_the_row_or_after_the_problem() -> None:
    at_row = row_error("empty item id", source="a.csv", row=4, offset=1, column="item", value="")
    assert str(at_row) == "a.csv, row 4 (line 5), column 'item': empty item id: got ''"
    assert at_row.problem == "empty item id" and at_row.row == 4
    at_problem = row_error("unknown turn", source="a.csv", row=4, offset=1, column="turn", value="3",
                           line_at="problem")
    assert str(at_problem) == "a.csv, row 4, column 'turn': unknown turn (line 5): got '3'"
    no_lines = row_error("bad", source="a.parquet", row=4, offset=None, column="x", value="?", line_at="problem")
    assert str(no_lines) == "a.parquet, row 4, column 'x': bad: got '?'"


def test_rows_text() -> None:
    assert rows_text([1, 2, 3], 1) == "rows 1, 2 and 3 (lines 2, 3 and 4)"
    assert rows_text([5], 0) == "row 5 (line 5)"
    assert rows_text([5, 9], None) == "rows 5 and 9"


def test_dataset_row_errors_keep_their_message_shape(tmp_path: Path) -> None:
    from stableval.datasets import load_dawid_skene

    path = tmp_path / "caries.csv"
    path.write_text("rater_1,rater_2,rater_3,rater_4,rater_5,n\n1,1,1,1,1,3\n1,3,1,1,1,2\n")
    with pytest.raises(InputError) as caught:
        load_dawid_skene(path)
    assert str(caught.value) == (f"{path}, row 2, column 'rater_2': caries rating is not 1 or 2 (line 3): got '3'; "
                                 "allowed: 1 (sound) or 2 (caries)")


def test_integer_columns_become_the_same_text_through_their_distinct_values() -> None:
    """Issue 14's fast path (factorise, convert the distinct values, Arrow dictionary cast) against converting every
    value: same strings, same dtype, '' for missing."""
    import numpy as np
    import pandas as pd

    from stableval.data.files.categories import all_text as _all_text

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({
        "item": rng.integers(-5, 10**6, 5_000),
        "label": rng.integers(0, 3, 5_000).astype(np.int8),
        "nullable": pd.array(np.where(rng.random(5_000) < 0.1, None, rng.integers(0, 9, 5_000)), dtype="Int64"),
        "flag": rng.random(5_000) < 0.5,
        "text": rng.choice(["a", " b", "c"], 5_000),
    })
    expected = {name: ["" if pd.isna(value) else str(value) for value in frame[name].astype(object)]
                for name in frame.columns}
    text = _all_text(frame)
    assert {name: text[name].tolist() for name in text.columns} == expected
    assert len({str(dtype) for dtype in text.dtypes}) == 1
