"""The fast reading path equals the simple one: same table, same code order, same notes, same errors.

The simple path reads every column as text (``read_table_file``) and validates that frame; the fast path reads
columns as categories coded in their own type (``categorical=True``, what ``load``/``read_any`` use). Both run on
integer, string, dictionary, mixed and null-containing columns in CSV, TSV, JSON Lines and Parquet, single files
and multi-file datasets."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from stableval.data import read_annotations, read_any, read_table_file
from stableval.data.annotations import annotations_from_frame
from stableval.data.files import categories_as_text
from stableval.data.files.categories import _integer_codes
from stableval.data.table import AnnotationTable
from stableval.errors import InputError


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


FORMATS = ("csv", "tsv", "jsonl", "parquet")


def simple(path: Path, **options: object) -> AnnotationTable:
    """The reference: every column as text, then the validation every reader shares."""
    keys = ("columns", "levels", "credit", "duplicates", "default_agent")
    return annotations_from_frame(read_table_file(path), source=str(path),
                                  **{k: v for k, v in options.items() if k in keys})  # type: ignore[arg-type]


def assert_same(a: AnnotationTable, b: AnnotationTable, *, same_source: bool = True) -> None:
    for name in ("response", "rater", "label", "response_item", "response_agent", "credit"):
        left, right = getattr(a, name), getattr(b, name)
        assert left.dtype == right.dtype and np.array_equal(left, right), name
    for name in ("items", "agents", "raters"):
        assert getattr(a, name).tolist() == getattr(b, name).tolist(), name
    assert (a.levels, a.notes) == (b.levels, b.notes)
    assert a.source == b.source or not same_source


def write(frame: pd.DataFrame, path: Path) -> Path:
    """``frame`` in the format of ``path``'s suffix; text formats write missing values as empty fields."""
    if path.suffix == ".parquet":
        frame.to_parquet(path, index=False)
    elif path.suffix == ".jsonl":
        path.write_text("".join(json.dumps({k: (None if pd.isna(v) else v.item() if hasattr(v, "item") else v)
                                            for k, v in row.items()}) + "\n" for row in frame.to_dict("records")))
    else:
        frame.to_csv(path, index=False, sep="\t" if path.suffix == ".tsv" else ",")
    return path


def judgments(n: int = 600, seed: int = 0) -> pd.DataFrame:
    """Integer ids (text sorts them differently: '10' < '9'), one rating per (item, agent, rater)."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(n)
    item = np.repeat(np.arange(n // 6), 6)[order]
    agent = np.tile(np.repeat([3, 12], 3), n // 6)[order]
    rater = np.tile([7, 100, 25], n // 3)[order]
    return pd.DataFrame({"item": item, "agent": agent, "rater": rater, "label": rng.integers(0, 3, n)})


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("kind", ["integer", "string", "mixed"])
def test_fast_path_equals_simple_path(tmp_path: Path, fmt: str, kind: str) -> None:
    """Issue 14: the fast reading path equals the simple one."""
    frame = judgments()
    if kind == "string":
        frame = frame.assign(item="q" + frame["item"].astype(str), agent=" model-" + frame["agent"].astype(str),
                             rater="r" + frame["rater"].astype(str) + " ")
    elif kind == "mixed":  # text item ids with leading zeros, integer raters, named levels
        frame = frame.assign(item=frame["item"].map(lambda v: f"{v:04d}"),
                             label=frame["label"].map({0: "bad", 1: "ok", 2: "good"}))
    path = write(frame, tmp_path / f"r.{fmt}")
    levels = "bad,ok,good" if kind == "mixed" else None
    fast = read_any(path, levels=levels)
    assert_same(fast, simple(path, levels=levels))
    assert_same(read_annotations(path, levels=levels), fast)
    if kind == "integer":  # ids stay text, sorted as text
        assert fast.raters.tolist() == ["100", "25", "7"] and fast.agents.tolist() == ["12", "3"]


def test_dictionary_columns_with_unused_values_and_nulls(tmp_path: Path) -> None:
    """Issue 14: the fast reading path equals the simple one."""
    frame = judgments(120)
    table = pa.table({
        "item": pa.array(frame["item"].astype(str)).dictionary_encode(),
        "agent": pa.DictionaryArray.from_arrays(pa.array(np.where(frame["agent"] == 3, 0, 2).astype(np.int32)),
                                                pa.array(["A", "unused", " B"])),
        "rater": pa.array(frame["rater"]),
        "label": pa.array(frame["label"].astype(str)).dictionary_encode(),
        "note": pa.array([None if i % 7 else "x" for i in range(len(frame))]).dictionary_encode(),
    })
    path = tmp_path / "dict.parquet"
    pq.write_table(table, path, row_group_size=50)  # several chunks, each with its own dictionary
    fast = read_any(path)
    assert_same(fast, simple(path))
    assert fast.agents.tolist() == ["A", "B"]


COLUMN_KINDS = {
    "int64": pa.array([5, -3, 5, 12, 0]),
    "int8 wide": pa.array([100, -100, 100, 9, -100], pa.int8()),
    "uint64 huge": pa.array([2**64 - 1, 0, 2**63, 2**64 - 1, 5], pa.uint64()),
    "int with nulls": pa.array([1, None, 2, 1, None]),
    "sparse ints": pa.array([10**15, 1, 10**15, -(10**12), 1]),
    "float": pa.array([1.5, float("nan"), None, 2.0, 1.5]),
    "bool with nulls": pa.array([True, None, False, True, True]),
    "bool": pa.array([True, False, False, True, True]),
    "strings": pa.array([" a", "a", "", None, "é"]),
    "large strings": pa.array(["x", "y", "x", None, "y"], pa.large_string()),
    "dates": pa.array([0, 1, None, 0, 400], pa.date32()),
    "timestamps": pa.array([0, 10**9, None, 0, 5], pa.timestamp("s", tz="UTC")),
    "dictionary": pa.array(["b", None, "a", "b", "a"]).dictionary_encode(),
    "binary": pa.array([b"x", b"y", None, b"x", b"z"]),
    "all null": pa.nulls(5),
    "lists": pa.array([[1], [2, 3], None, [1], []]),
    "structs": pa.array([{"a": 1}, {"a": 2}, None, {"a": 1}, {"a": None}]),
}


@pytest.mark.parametrize("kind", list(COLUMN_KINDS))
def test_categories_have_the_plain_text_of_every_value(tmp_path: Path, kind: str) -> None:
    """Issue 14: the fast reading path equals the simple one."""
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"value": COLUMN_KINDS[kind], "row": pa.array(range(5))}), path)
    plain = read_table_file(path)
    coded = read_table_file(path, categorical=True)
    assert all(isinstance(dtype, pd.CategoricalDtype) for dtype in coded.dtypes)
    assert coded["value"].astype(str).tolist() == plain["value"].tolist()
    back = categories_as_text(coded)
    assert back.equals(plain) and back.dtypes.equals(plain.dtypes)


def test_pandas_metadata_is_honoured(tmp_path: Path) -> None:
    """A nullable Int64 column reads as '1' (not '1.0'); a saved index is not a column, as in the plain reader.
    Issue 14: the fast reading path equals the simple one."""
    frame = pd.DataFrame({"item": pd.array([1, None, 3], dtype="Int64"), "label": ["0", "1", "0"]},
                         index=pd.Index(["x", "y", "z"], name="key"))
    path = tmp_path / "meta.parquet"
    frame.to_parquet(path)
    plain, coded = read_table_file(path), read_table_file(path, categorical=True)
    assert plain["item"].tolist() == ["1", "", "3"] and list(plain.columns) == ["item", "label"]
    assert categories_as_text(coded).equals(plain)


@pytest.mark.parametrize("fmt", FORMATS)
def test_jsonl_and_text_files_as_categories(tmp_path: Path, fmt: str) -> None:
    """Issue 14: the fast reading path equals the simple one."""
    frame = pd.DataFrame({"item": ["q1", "q2", "q1"], "agent": [1, 2, 1], "extra": ["", "z", "z"],
                          "empty": [None, None, None]})
    path = write(frame, tmp_path / f"t.{fmt}")
    plain, coded = read_table_file(path), read_table_file(path, categorical=True)
    assert categories_as_text(coded).equals(plain)
    assert coded.attrs == plain.attrs


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("defect", ["empty id", "null id", "bad label", "duplicate", "stray level"])
def test_errors_and_notes_are_the_same(tmp_path: Path, fmt: str, defect: str) -> None:
    """Issue 14: the fast reading path equals the simple one."""
    frame = judgments(60).astype(object)
    if defect == "empty id":
        frame.loc[17, "rater"] = "  "
    elif defect == "null id":
        frame.loc[23, "item"] = None
    elif defect == "bad label":
        frame.loc[31, "label"] = "x" if fmt != "parquet" else -4
    elif defect == "duplicate":
        frame.loc[40, ["item", "agent", "rater"]] = frame.loc[2, ["item", "agent", "rater"]].to_numpy()
    else:
        frame.loc[5, "label"] = 7
    frame = frame.astype({c: object for c in frame.columns})
    if fmt == "parquet" and defect in ("empty id",):
        frame["rater"] = frame["rater"].astype(str)
    path = write(frame, tmp_path / f"d.{fmt}")
    outcomes = []
    for reader in (simple, read_any):
        try:
            outcomes.append(reader(path, duplicates="error"))
        except InputError as exc:
            outcomes.append(str(exc))
    if isinstance(outcomes[0], str):
        assert outcomes[0] == outcomes[1]
    else:
        assert_same(outcomes[0], outcomes[1])
        assert any("never occur" in note for note in outcomes[1].notes) == (defect == "stray level")
    if defect in ("empty id", "bad label", "duplicate"):
        assert isinstance(outcomes[1], str) and str(path) in outcomes[1]


@pytest.mark.parametrize("policy", ["first", "last", "keep"])
def test_duplicate_policies_and_hint_columns(tmp_path: Path, policy: str) -> None:
    """Issue 14: the fast reading path equals the simple one."""
    frame = judgments(60)
    frame = pd.concat([frame, frame.iloc[[3, 9]].assign(label=[0, 1])], ignore_index=True)
    frame["category"] = np.where(np.arange(len(frame)) >= 60, "b", "a")
    path = write(frame, tmp_path / "dup.parquet")
    assert_same(read_any(path, duplicates=policy), simple(path, duplicates=policy))


def test_turn_column_makes_items_and_default_agent(tmp_path: Path) -> None:
    """Issue 14: the fast reading path equals the simple one."""
    frame = judgments(60).drop(columns="agent")
    frame["turn"] = np.tile([1, 2], 30)
    path = write(frame, tmp_path / "turns.parquet")
    fast = read_any(path, default_agent="solo", duplicates="keep")
    assert_same(fast, simple(path, default_agent="solo", duplicates="keep"))
    assert fast.agents.tolist() == ["solo"] and fast.items[0].endswith("-turn1")


def test_pairwise_file_reads_the_same_votes(tmp_path: Path) -> None:
    """Issue 14: the fast reading path equals the simple one."""
    frame = pd.DataFrame({"question_id": [1, 1, 2], "model_a": ["x", "y", "x"], "model_b": ["y", "z", "z"],
                          "judge": [10, 10, 11], "winner": ["model_a", "tie", "model_b"]})
    path = write(frame, tmp_path / "votes.parquet")
    from stableval.data import load, load_frame

    fast, plain = load(path), load_frame(read_table_file(path), source=str(path))
    assert fast.votes is not None and plain.votes is not None
    assert fast.votes.frame.equals(plain.votes.frame)
    assert_same(fast.table, plain.table)


def test_integer_codes_by_lookup() -> None:
    """Issue 14: the fast reading path equals the simple one."""
    values = np.array([2**40, 3, 2**40, -7])
    assert _integer_codes(values) is None  # too wide a span: the caller hashes instead
    codes, distinct = _integer_codes(np.array([9, -2, 9, 4], dtype=np.int16))
    assert codes.tolist() == [2, 0, 2, 1] and distinct.tolist() == [-2, 4, 9] and distinct.dtype == np.int16


# ====================================================================================== Parquet datasets
def dataset(tmp_path: Path, parts: int = 3, *, text_ids: bool = False) -> tuple[Path, pd.DataFrame]:
    frame = judgments(120)
    if text_ids:
        frame = frame.assign(item="q" + frame["item"].astype(str), rater=" r" + frame["rater"].astype(str))
    folder = tmp_path / "parts"
    (folder / "sub").mkdir(parents=True)
    chunks = np.array_split(np.arange(len(frame)), parts)
    for number, rows in enumerate(chunks):
        where = folder / "sub" if number == parts - 1 else folder  # nested folders are part of the dataset
        frame.iloc[rows].to_parquet(where / f"part-{number}.parquet", index=False)
    (folder / "_SUCCESS").write_text("")  # markers and hidden files are skipped
    (folder / ".part-9.parquet").write_bytes(b"not parquet")
    return folder, frame


@pytest.mark.parametrize("text_ids", [False, True])
def test_folder_and_glob_read_as_one_file(tmp_path: Path, text_ids: bool) -> None:
    """Issue 14: the fast reading path equals the simple one."""
    folder, frame = dataset(tmp_path, text_ids=text_ids)
    whole = write(frame, tmp_path / "whole.parquet")
    reference = read_any(whole)
    for source in (folder, folder / "**" / "part-*.parquet"):
        assert_same(read_any(source), reference, same_source=False)
    assert categories_as_text(read_table_file(folder, categorical=True)).equals(read_table_file(folder))


def test_dataset_errors_name_the_file_and_its_row(tmp_path: Path) -> None:
    """Issue 14: the fast reading path equals the simple one."""
    folder, frame = dataset(tmp_path)
    bad = frame.iloc[40:80].copy()
    bad.iloc[4, bad.columns.get_loc("item")] = -1
    bad = bad.astype({"item": str})
    bad.iloc[6, bad.columns.get_loc("item")] = " "
    bad.to_parquet(folder / "part-1.parquet", index=False)
    with pytest.raises(InputError) as caught:
        read_any(folder)  # part-1 now has text item ids: the types differ from part-0
    message = str(caught.value)
    assert message.startswith(f"{folder / 'part-1.parquet'}, column 'item': column 'item' is large_string here")
    (folder / "part-0.parquet").unlink()
    (folder / "sub" / "part-2.parquet").unlink()
    with pytest.raises(InputError) as caught:
        read_any(folder)
    assert str(caught.value).startswith(f"{folder / 'part-1.parquet'}, row 7, column 'item': empty item id")
    with pytest.raises(InputError, match="folder holds no Parquet files"):
        read_any(tmp_path / "parts" / "sub")
    with pytest.raises(InputError, match="no file matches the pattern"):
        read_any(tmp_path / "nothing-*.parquet")


def test_only_the_needed_columns_are_read(tmp_path: Path) -> None:
    """Issue 14: the fast reading path equals the simple one."""
    from stableval.data.loader import InputOptions, _needed_columns

    frame = judgments(60).assign(response=["long text"] * 60, Category="c", turn=1)
    path = write(frame, tmp_path / "wide.parquet")
    assert _needed_columns(path, InputOptions()) == ["item", "agent", "rater", "label", "Category", "turn"]
    assert read_table_file(path, columns=["label", "item"]).columns.tolist() == ["item", "label"]
    assert _needed_columns(path, InputOptions(columns={"item": "missing"})) is None  # read all: the error names it
    with pytest.raises(InputError, match="the item column named in the mapping is not in the file"):
        read_any(path, columns={"item": "missing"})
