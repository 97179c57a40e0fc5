"""Parquet judgments with integer ids: the lookup path gives the general reader's table, or hands over.

``integer_table`` must answer only for clean files, with the very table (codes, names, levels, notes) that the
general reader (``annotations_from_frame`` of the file read as text) gives; for anything else it returns ``None``
and ``read_any`` falls back to the general reader, so every error message stays what it was."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings, strategies as st

from stableval.data import read_any, read_table_file
from stableval.data.files import SCALE_KEY
from stableval.data.integer_ids import integer_table
from stableval.data.loader import InputOptions, load_frame
from stableval.data.table import AnnotationTable
from stableval.errors import InputError


def general(path: Path, options: InputOptions) -> AnnotationTable:
    """The reference: every column read as text, then the validation every reader shares."""
    return load_frame(read_table_file(path), options, source=str(path)).table


def assert_same(a: AnnotationTable, b: AnnotationTable) -> None:
    for name in ("response", "rater", "label", "response_item", "response_agent", "credit"):
        left, right = getattr(a, name), getattr(b, name)
        assert left.dtype == right.dtype and np.array_equal(left, right), name
    for name in ("items", "agents", "raters"):
        assert getattr(a, name).tolist() == getattr(b, name).tolist(), name
        assert getattr(a, name).dtype == getattr(b, name).dtype, name
    assert (a.levels, a.notes, a.source) == (b.levels, b.notes, b.source)


def judgments(n_items: int = 40, seed: int = 0, *, shuffle: bool = True, every_agent: bool = True) -> pd.DataFrame:
    """Items 5..(5 + 3 n_items) step 3 (text order is not number order), agents 3 and 12, raters 7, 25, 100."""
    rng = np.random.default_rng(seed)
    rows = [(5 + 3 * i, agent, rater) for i in range(n_items) for agent in (3, 12) for rater in (7, 100, 25)
            if every_agent or (i + agent) % 5]
    frame = pd.DataFrame(rows, columns=["item", "agent", "rater"])
    frame["label"] = rng.integers(0, 3, len(frame))
    return frame.iloc[rng.permutation(len(frame))].reset_index(drop=True) if shuffle else frame


def check(path: Path, options: InputOptions | None = None) -> AnnotationTable:
    """The lookup path answers for ``path`` and gives the general reader's table; ``read_any`` gives it too."""
    options = options or InputOptions()
    fast = integer_table(path, options)
    assert fast is not None, "the lookup path should answer for this file"
    assert_same(fast, general(path, options))
    return fast


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "uint32", "uint64"])
@pytest.mark.parametrize("shuffle", [True, False])
def test_integer_types_give_the_general_table(tmp_path: Path, dtype: str, shuffle: bool) -> None:
    """Issue 14: integer ids read by lookup."""
    frame = judgments(shuffle=shuffle).astype({"item": dtype, "agent": dtype, "rater": dtype, "label": dtype})
    path = tmp_path / "j.parquet"
    frame.to_parquet(path, index=False)
    table = check(path)
    assert table.raters.tolist() == ["100", "25", "7"] and table.agents.tolist() == ["12", "3"]
    assert table.notes == ("integer labels 0..2: levels 0..2",)


def test_values_near_the_ends_of_their_types(tmp_path: Path) -> None:
    """Issue 14: integer ids read by lookup."""
    frame = judgments(10)
    path = tmp_path / "ends.parquet"
    pq.write_table(pa.table({
        "item": pa.array(frame["item"].to_numpy(np.uint64) + np.uint64(2**64 - 200), pa.uint64()),
        "agent": pa.array(frame["agent"].to_numpy(np.int64) + np.int64(-(2**63) + 1), pa.int64()),  # the bottom
        "rater": pa.array(-frame["rater"], pa.int16()),              # negative ids: '-100' < '-25' < '-7'
        "label": pa.array(frame["label"], pa.int8())}), path, row_group_size=7)
    table = check(path)
    assert table.raters.tolist() == ["-100", "-25", "-7"] and table.items[0] == str(2**64 - 200 + 5)


def test_some_items_not_answered_by_every_agent_and_text_labels(tmp_path: Path) -> None:
    """Issue 14: integer ids read by lookup."""
    frame = judgments(every_agent=False)
    frame["label"] = frame["label"].map({0: " bad", 1: "ok", 2: "good "})  # stripped, as the general reader does
    path = tmp_path / "sparse.parquet"
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path, row_group_size=13)
    check(path, InputOptions(levels="bad,ok,good", credit="0,0.2,1"))
    with pytest.raises(InputError, match="label is not an integer level code"):  # handed over, same message
        read_any(path)


def test_default_agent_columns_and_extra_columns(tmp_path: Path) -> None:
    """Issue 14: integer ids read by lookup."""
    frame = judgments().drop(columns="agent").drop_duplicates(["item", "rater"])
    frame = frame.rename(columns={"item": "question_id", "rater": "judge", "label": "grade"})
    frame["response"] = "long text that is never read"
    path = tmp_path / "solo.parquet"
    frame.to_parquet(path, index=False)
    table = check(path, InputOptions(default_agent=" solo "))
    assert table.agents.tolist() == ["solo"] and "no agent column" in table.notes[0]
    check(path, InputOptions(default_agent="solo", columns={"item": "question_id", "label": "grade"}))


def test_dataset_of_several_files(tmp_path: Path) -> None:
    """Issue 14: integer ids read by lookup."""
    frame = judgments()
    folder = tmp_path / "parts"
    folder.mkdir()
    for number, rows in enumerate(np.array_split(np.arange(len(frame)), 3)):
        frame.iloc[rows].to_parquet(folder / f"part-{number}.parquet", index=False)
    table = integer_table(folder, InputOptions())
    whole = tmp_path / "whole.parquet"
    frame.to_parquet(whole, index=False)
    assert table is not None and table.source == str(folder)
    assert_same(table, AnnotationTable(**{**general(whole, InputOptions()).__dict__, "source": str(folder)}))


def _stats_free(frame: pd.DataFrame, path: Path) -> None:
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path, write_statistics=False)


def _with_scale(frame: pd.DataFrame, path: Path) -> None:
    table = pa.Table.from_pandas(frame, preserve_index=False)
    scale = b'{"column": "label", "levels": ["x", "y", "z"]}'
    pq.write_table(table.replace_schema_metadata({**table.schema.metadata, SCALE_KEY.encode(): scale}), path)


HANDED_OVER = {
    "null id": lambda f: f.astype({"rater": "Int64"}).assign(rater=lambda g: g["rater"].mask(g.index == 9)),
    "repeated judgment": lambda f: pd.concat([f, f.iloc[[4]]], ignore_index=True),
    "turn column": lambda f: f.assign(turn=np.arange(len(f)) % 2),
    "ids spread thinly": lambda f: f.assign(item=f["item"] * 10**12),
    "text ids": lambda f: f.assign(rater="r" + f["rater"].astype(str)),
    "float labels": lambda f: f.assign(label=f["label"] + 0.5),
    "a level never used": lambda f: f.assign(label=f["label"].where(f["label"] != 1, 4)),
    "negative label": lambda f: f.assign(label=f["label"].where(f.index != 3, -1)),
    "every label 0": lambda f: f.assign(label=0),
    "pairwise votes": lambda f: pd.DataFrame({"item": f["item"], "model_a": f["agent"], "model_b": 99,
                                              "judge": f["rater"], "winner": "tie"}),
}


@pytest.mark.parametrize("case", [*HANDED_OVER, "no statistics", "levels in the file"])
def test_other_files_are_handed_to_the_general_reader(tmp_path: Path, case: str) -> None:
    """Issue 14: integer ids read by lookup."""
    path = tmp_path / "other.parquet"
    frame = judgments()
    if case == "no statistics":
        _stats_free(frame, path)
    elif case == "levels in the file":
        _with_scale(frame.assign(label=frame["label"].map({0: "x", 1: "y", 2: "z"})), path)
    else:
        HANDED_OVER[case](frame).to_parquet(path, index=False)
    assert integer_table(path, InputOptions()) is None
    outcomes: list[AnnotationTable | str] = []
    for reader in (lambda: read_any(path), lambda: general(path, InputOptions())):
        try:
            outcomes.append(reader())
        except InputError as exc:
            outcomes.append(str(exc))
    if isinstance(outcomes[0], str) or isinstance(outcomes[1], str):
        assert outcomes[0] == outcomes[1]
    else:
        assert_same(outcomes[0], outcomes[1])


def test_other_formats_and_options_are_not_answered(tmp_path: Path) -> None:
    """Issue 14: integer ids read by lookup."""
    frame = judgments()
    csv = tmp_path / "j.csv"
    frame.to_csv(csv, index=False)
    path = tmp_path / "j.parquet"
    frame.to_parquet(path, index=False)
    assert integer_table(csv, InputOptions()) is None
    assert integer_table(path, InputOptions(format="csv")) is None
    assert integer_table(path, InputOptions(pairwise=True)) is None
    assert integer_table(path, InputOptions(columns={"item": "missing"})) is None
    assert integer_table(path, InputOptions(format=".PQ")) is not None


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(-3, 40), st.integers(0, 3), st.integers(-5, 5), st.integers(0, 2)),
                min_size=1, max_size=60, unique_by=lambda row: row[:3]),
       st.integers(1, 7))
def test_random_files_give_the_general_table(tmp_path_factory: pytest.TempPathFactory,
                                             rows: list[tuple[int, int, int, int]], group: int) -> None:
    """Issue 14: integer ids read by lookup."""
    frame = pd.DataFrame(rows, columns=["item", "agent", "rater", "label"])
    path = tmp_path_factory.mktemp("random") / "j.parquet"
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path, row_group_size=group)
    try:
        expected: AnnotationTable | str = general(path, InputOptions(duplicates="error"))
    except InputError as exc:
        expected = str(exc)
    fast = integer_table(path, InputOptions())
    if isinstance(expected, str):  # e.g. one label only, a gap in the labels: the general reader's answer
        assert fast is None
        with pytest.raises(InputError) as caught:
            read_any(path)
        assert str(caught.value) == expected
    elif fast is not None:
        assert_same(fast, expected)
    else:  # only a warning (a level never used) hands a clean file over
        assert any(note.startswith("WARNING") for note in expected.notes)


def _scaled(frame: pd.DataFrame, path: Path, levels: list[str] | None) -> None:
    table = pa.Table.from_pandas(frame, preserve_index=False)
    metadata = dict(table.schema.metadata or {})
    if levels is not None:
        metadata[SCALE_KEY.encode()] = f'{{"column": "label", "levels": {levels!r}}}'.replace("'", '"').encode()
    pq.write_table(table.replace_schema_metadata(metadata), path)


@pytest.mark.parametrize(("first", "second", "levels"), [
    (None, ["x", "y", "z"], None),  # only the second file declares a scale
    (["x", "y", "z"], ["z", "y", "x"], "x,y,z"),  # --levels given: the lookup path read it with the first's
])
def test_a_dataset_whose_files_declare_different_scales_is_refused(tmp_path: Path, first: list[str] | None,
                                                                   second: list[str], levels: str | None) -> None:
    """Issue 26 (E14): the integer-id lookup path read a folder whose files declare different scales (another order
    of the levels, or one file with none) with the first file's; it now hands the folder to the general reader,
    which refuses, naming both files and their scales."""
    frame = judgments().assign(label=lambda f: f["label"].map({0: "x", 1: "y", 2: "z"}))
    folder = tmp_path / "ds"
    folder.mkdir()
    _scaled(frame.iloc[:60], folder / "a.parquet", first)
    _scaled(frame.iloc[60:], folder / "b.parquet", second)
    assert integer_table(folder, InputOptions(levels=levels)) is None  # handed to the general reader, which refuses
    with pytest.raises(InputError) as caught:
        read_any(folder, levels=levels)
    message = str(caught.value)
    assert message.startswith(str(folder / "b.parquet")) and str(folder / "a.parquet") in message, message
    assert "different scales" in message and "levels " + " < ".join(second) in message, message
