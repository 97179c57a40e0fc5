"""Reading and validating annotation files: formats, columns, labels, credit, duplicates, error messages."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from stableval.commands.common import flag_spelling
from stableval.data import ROLE_ALIASES, AnnotationTable, annotations_from_frame, read_annotations, read_table_file
from stableval.errors import InputError

from paths import SHARED_DATA, SMALL_ANNOTATIONS

ANESTHESIA = SHARED_DATA / "dawid_skene_1979" / "anesthesia_long_dallascard.csv"


LEVELS = ["bad", "ok", "good"]


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def csv_file(tmp_path: Path, rows: Sequence[str], header: str = "item,agent,rater,label",
             name: str = "votes.csv") -> Path:
    return write(tmp_path / name, "\n".join([header, *rows]) + "\n")


def frame(**columns: Sequence[object]) -> pd.DataFrame:
    return pd.DataFrame(columns)


def error_text(excinfo: pytest.ExceptionInfo[InputError]) -> str:
    return str(excinfo.value)


def cli_text(excinfo: pytest.ExceptionInfo[InputError]) -> str:
    """The message as the command line prints it: the options it names spelled as flags."""
    return excinfo.value.spelled(flag_spelling)


def arrays(table: AnnotationTable) -> dict[str, object]:
    return {
        "response": table.response.tolist(), "rater": table.rater.tolist(), "label": table.label.tolist(),
        "response_item": table.response_item.tolist(), "response_agent": table.response_agent.tolist(),
        "items": list(table.items), "agents": list(table.agents), "raters": list(table.raters),
        "levels": table.levels, "credit": table.credit.tolist(),
    }


# ====================================================================================== formats
def test_small_fixture_keeps_leading_zero_ids() -> None:
    table = read_annotations(SMALL_ANNOTATIONS, levels=LEVELS)
    assert list(table.items) == ["007", "7"]
    assert table.n_judgments == 5 and table.n_responses == 4 and table.n_raters == 3
    assert table.source == str(SMALL_ANNOTATIONS)
    rows = table.to_frame().values.tolist()
    assert sorted(map(tuple, rows)) == sorted([
        ("007", "A", "r1", "good"), ("007", "A", "r2", "ok"), ("007", "B", "r1", "bad"),
        ("7", "A", "r2", "good"), ("7", "B", "r3", "ok")])


def test_round_trip_csv_tsv_jsonl_parquet_give_identical_arrays(tmp_path: Path) -> None:
    source = pd.read_csv(SMALL_ANNOTATIONS, dtype=str, keep_default_na=False)
    paths = {
        "csv": tmp_path / "t.csv", "semicolon": tmp_path / "t_semicolon.csv", "tsv": tmp_path / "t.tsv",
        "tab": tmp_path / "t.tab", "jsonl": tmp_path / "t.jsonl", "ndjson": tmp_path / "t.ndjson",
        "parquet": tmp_path / "t.parquet", "pq": tmp_path / "t.pq",
    }
    source.to_csv(paths["csv"], index=False)
    source.to_csv(paths["semicolon"], index=False, sep=";")
    source.to_csv(paths["tsv"], index=False, sep="\t")
    source.to_csv(paths["tab"], index=False, sep="\t")
    source.to_json(paths["jsonl"], orient="records", lines=True)
    source.to_json(paths["ndjson"], orient="records", lines=True)
    source.to_parquet(paths["parquet"], index=False)
    source.to_parquet(paths["pq"], index=False)
    reference = arrays(read_annotations(SMALL_ANNOTATIONS, levels=LEVELS))
    for kind, path in paths.items():
        assert arrays(read_annotations(path, levels=LEVELS)) == reference, kind
        assert read_table_file(path)["item"].tolist() == ["007", "007", "007", "7", "7"], kind


def test_format_argument_overrides_the_suffix(tmp_path: Path) -> None:
    path = write(tmp_path / "votes.txt", "item\tagent\trater\tlabel\nq1\tA\tr1\t1\nq1\tA\tr2\t0\n")
    with pytest.raises(InputError) as excinfo:
        read_table_file(path)
    text = error_text(excinfo)
    assert "votes.txt" in text and ".tsv" in text and "format" in text
    assert read_table_file(path, format="tsv").shape == (2, 4)
    assert read_annotations(path, format="TSV").n_judgments == 2
    with pytest.raises(InputError) as excinfo:
        read_table_file(path, format="xlsx")
    assert "'xlsx'" in error_text(excinfo) and "parquet" in error_text(excinfo)


def test_jsonl_numbers_are_kept_as_written(tmp_path: Path) -> None:
    path = write(tmp_path / "v.jsonl", '{"item": 7, "agent": "A", "rater": 3, "label": 2}\n'
                                       '{"item": "007", "agent": "A", "rater": 3, "label": 0}\n')
    read = read_table_file(path)
    assert read.to_dict("records") == [{"item": "7", "agent": "A", "rater": "3", "label": "2"},
                                       {"item": "007", "agent": "A", "rater": "3", "label": "0"}]
    assert list(read_annotations(path).items) == ["007", "7"]


def test_jsonl_fast_and_line_by_line_readers_agree(tmp_path: Path) -> None:
    rows = [{"item": "007", "agent": "A", "rater": 3, "label": 2}, {"item": "7", "agent": None, "rater": 4},
            {"item": "x", "agent": "B", "rater": 3, "label": 0}]
    fast = write(tmp_path / "fast.jsonl", "".join(json.dumps(row) + "\n" for row in rows))
    # a float column sends the file to the line-by-line reader (pyarrow would reformat the numbers)
    slow = write(tmp_path / "slow.jsonl", "".join(json.dumps({**row, "w": 0.5}) + "\n" for row in rows))
    expected = [["007", "A", "3", "2"], ["7", "", "4", ""], ["x", "B", "3", "0"]]
    assert read_table_file(fast).values.tolist() == expected
    assert read_table_file(slow)[["item", "agent", "rater", "label"]].values.tolist() == expected
    assert read_table_file(slow)["w"].tolist() == ["0.5"] * 3
    for path in (fast, slow):
        with pytest.raises(InputError) as excinfo:
            read_annotations(path)
        assert error_text(excinfo).startswith(f"{path}, row 2 (line 2), column 'agent': empty agent id")
    # with blank lines a data row is no longer a file line, so only the row is given
    gappy = write(tmp_path / "gappy.jsonl", "\n" + "\n\n".join(json.dumps(row) for row in rows))
    with pytest.raises(InputError) as excinfo:
        read_annotations(gappy)
    assert error_text(excinfo).startswith(f"{gappy}, row 2, column 'agent': empty agent id")


def test_parquet_with_typed_columns(tmp_path: Path) -> None:
    path = tmp_path / "v.parquet"
    pd.DataFrame({"item": [1, 2], "agent": ["A", "A"], "rater": ["r", "r"], "label": [0, 1]}).to_parquet(path)
    table = read_annotations(path)
    assert list(table.items) == ["1", "2"] and table.levels == ("0", "1")


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError) as excinfo:
        read_annotations(tmp_path / "nope.csv")
    assert "nope.csv" in error_text(excinfo) and "not found" in error_text(excinfo)


@pytest.mark.parametrize("name", ["empty.csv", "empty.tsv", "empty.jsonl", "empty.parquet"])
def test_zero_byte_file(tmp_path: Path, name: str) -> None:
    path = write(tmp_path / name, "")
    with pytest.raises(InputError) as excinfo:
        read_table_file(path)
    assert name in error_text(excinfo) and "empty" in error_text(excinfo)
    assert "header" in error_text(excinfo)  # says what is allowed


@pytest.mark.parametrize("name, text", [("h.csv", "item,agent,rater,label\n"),
                                        ("h.tsv", "item\tagent\trater\tlabel\n"),
                                        ("h.jsonl", "\n\n")])
def test_file_without_data_rows(tmp_path: Path, name: str, text: str) -> None:
    with pytest.raises(InputError) as excinfo:
        read_table_file(write(tmp_path / name, text))
    assert name in error_text(excinfo) and "no data rows" in error_text(excinfo)


def test_unparsable_csv(tmp_path: Path) -> None:
    path = csv_file(tmp_path, ["q1,A,r1,1", "q1,A,r2,0,extra"], name="ragged.csv")
    with pytest.raises(InputError) as excinfo:
        read_table_file(path)
    text = error_text(excinfo)
    assert "ragged.csv" in text and "cannot parse as CSV" in text and "line 3" in text
    assert "same number of fields" in text


def test_unparsable_parquet_and_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "bad.parquet"
    path.write_bytes(b"this is not parquet at all")
    with pytest.raises(InputError) as excinfo:
        read_table_file(path)
    assert "bad.parquet" in error_text(excinfo) and "Parquet" in error_text(excinfo)
    latin = tmp_path / "latin.csv"
    latin.write_bytes("item,agent,rater,label\nq\xe9,A,r,1\n".encode("latin-1"))
    with pytest.raises(InputError) as excinfo:
        read_table_file(latin)
    assert "latin.csv" in error_text(excinfo) and "UTF-8" in error_text(excinfo)


def test_bad_jsonl_line_names_its_line_number(tmp_path: Path) -> None:
    good = json.dumps({"item": "q1", "agent": "A", "rater": "r1", "label": 1})
    path = write(tmp_path / "bad.jsonl", f"{good}\n{good}\n{{'item': 'q1'}}\n")
    with pytest.raises(InputError) as excinfo:
        read_table_file(path)
    text = error_text(excinfo)
    assert "bad.jsonl" in text and "line 3 is not valid JSON" in text and "one JSON object per line" in text
    path = write(tmp_path / "list.jsonl", f"{good}\n[1, 2]\n")
    with pytest.raises(InputError) as excinfo:
        read_table_file(path)
    assert "line 2 is not a JSON object" in error_text(excinfo) and "[1, 2]" in error_text(excinfo)


def test_unknown_suffix(tmp_path: Path) -> None:
    path = write(tmp_path / "votes.xlsx", "x")
    with pytest.raises(InputError) as excinfo:
        read_annotations(path)
    text = error_text(excinfo)
    assert "votes.xlsx" in text and "'.xlsx'" in text
    for allowed in (".csv", ".tsv", ".jsonl", ".parquet"):
        assert allowed in text


@pytest.mark.skipif(not ANESTHESIA.is_file(), reason=f"shared data set not present: {ANESTHESIA}")
def test_dawid_skene_1979_semicolon_file() -> None:
    raw = read_table_file(ANESTHESIA)
    assert list(raw.columns) == ["patient", "observer", "response"] and len(raw) == 315
    table = read_annotations(ANESTHESIA, levels=["1", "2", "3", "4"], duplicates="keep",
                             default_agent="anesthesia",
                             columns={"item": "patient", "rater": "observer", "label": "response"})
    assert (table.n_judgments, table.n_items, table.n_raters, table.n_agents) == (315, 45, 5, 1)
    assert table.levels == ("1", "2", "3", "4")
    # observer 1 rated each of the 45 patients three times; observers 2-5 once
    per_rater = np.bincount(table.rater, minlength=5)
    assert dict(zip(table.raters, per_rater.tolist(), strict=True)) == {
        "1": 135, "2": 45, "3": 45, "4": 45, "5": 45}
    assert any("kept 90 repeated judgment(s)" in note for note in table.notes)
    assert any("agent 'anesthesia'" in note for note in table.notes)
    with pytest.raises(InputError) as excinfo:
        read_annotations(ANESTHESIA, levels=["1", "2", "3", "4"], default_agent="anesthesia",
                         columns={"item": "patient", "rater": "observer", "label": "response"})
    text = error_text(excinfo)
    assert "rows 1, 2 and 3 (lines 2, 3 and 4)" in text and "duplicates='first'|'last'|'keep'" in text
    assert "--duplicates first|last|keep" in cli_text(excinfo)


# ====================================================================================== columns
def test_aliases_are_matched_case_insensitively() -> None:
    table = annotations_from_frame(frame(Task=["q1", "q2"], MODEL=["A", "A"], Annotator_ID=["r1", "r1"],
                                         Rating=["1", "0"]))
    assert table.n_judgments == 2 and list(table.agents) == ["A"]
    for role, aliases in ROLE_ALIASES.items():
        assert aliases[0] == role


def test_explicit_mapping_wins_over_aliases() -> None:
    data = frame(item=["x", "x"], question=["q1", "q2"], agent=["A", "A"], rater=["r", "r"], label=["0", "1"])
    # the alias 'item' comes before 'question'
    assert list(annotations_from_frame(data, duplicates="keep").items) == ["x"]
    with pytest.raises(InputError, match="item 'x'"):  # 'x' twice by rater r: a duplicate
        annotations_from_frame(data)
    assert list(annotations_from_frame(data, columns={"item": "question"}).items) == ["q1", "q2"]


def test_missing_column_names_file_column_present_columns_and_flag(tmp_path: Path) -> None:
    path = csv_file(tmp_path, ["q1,A,1"], header="item,agent,label", name="norater.csv")
    with pytest.raises(InputError) as excinfo:
        read_annotations(path)
    text = error_text(excinfo)
    assert "norater.csv" in text and "no rater column" in text
    assert "columns present: item, agent, label" in text and "columns={'rater': NAME}" in text
    assert "--rater-col NAME" in cli_text(excinfo) and excinfo.value.option == "columns.rater"
    assert "worker" in text and "annotator" in text  # the aliases looked for


def test_missing_agent_column_and_default_agent() -> None:
    data = frame(item=["q1", "q2"], rater=["r1", "r1"], label=["1", "0"])
    with pytest.raises(InputError) as excinfo:
        annotations_from_frame(data)
    assert "no agent column" in error_text(excinfo) and "default_agent" in error_text(excinfo)
    assert "--agent-col NAME" in cli_text(excinfo) and "--default-agent NAME" in cli_text(excinfo)
    table = annotations_from_frame(data, default_agent="gpt")
    assert list(table.agents) == ["gpt"] and table.n_responses == 2
    assert table.notes[0] == "no agent column: every judgment is of agent 'gpt'"
    # an agent column present wins over the default
    with_agent = annotations_from_frame(data.assign(model=["A", "B"]), default_agent="gpt")
    assert list(with_agent.agents) == ["A", "B"]
    with pytest.raises(InputError, match="default_agent is empty"):
        annotations_from_frame(data, default_agent="  ")


def test_mapping_errors() -> None:
    data = frame(item=["q1"], agent=["A"], rater=["r1"], label=["1"])
    with pytest.raises(InputError) as excinfo:
        annotations_from_frame(data, columns={"item": "question"}, source="m.csv")
    assert "m.csv" in error_text(excinfo) and "'question'" in error_text(excinfo)
    assert "columns present: item, agent, rater, label" in error_text(excinfo)
    with pytest.raises(InputError) as excinfo:
        annotations_from_frame(data, columns={"itme": "item"})
    assert "'itme'" in error_text(excinfo) and "item, agent, rater, label" in error_text(excinfo)
    with pytest.raises(InputError) as excinfo:
        annotations_from_frame(data, columns={"rater": "agent"})
    assert "two roles" in error_text(excinfo) and "'agent'" in error_text(excinfo)


# ====================================================================================== ids
@pytest.mark.parametrize("column", ["item", "agent", "rater"])
@pytest.mark.parametrize("bad", ["", "   "])
def test_empty_id_in_a_file_names_row_line_column_value(tmp_path: Path, column: str, bad: str) -> None:
    rows = {"item": "q2", "agent": "A", "rater": "r2", "label": "1"}
    rows[column] = bad
    path = csv_file(tmp_path, ["q1,A,r1,0", "q1,B,r1,1", ",".join(rows.values())], name="ids.csv")
    with pytest.raises(InputError) as excinfo:
        read_annotations(path)
    text = error_text(excinfo)
    assert text.startswith(f"{path}, row 3 (line 4), column {column!r}: empty {column} id")
    assert f"got {bad!r}" in text and "non-empty" in text
    assert excinfo.value.row == 3 and excinfo.value.column == column


def test_missing_id_in_a_frame() -> None:
    data = frame(item=["q1", None], agent=["A", "A"], rater=["r1", "r1"], label=[0, 1])
    with pytest.raises(InputError) as excinfo:
        annotations_from_frame(data, source="frame")
    text = error_text(excinfo)
    assert text.startswith("frame, row 2, column 'item': empty item id") and "got None" in text
    data = frame(item=["q1", "q2"], agent=["A", "A"], rater=["r1", np.nan], label=[0, 1])
    with pytest.raises(InputError, match=r"row 2, column 'rater'"):
        annotations_from_frame(data)


def test_items_rated_once_and_raters_with_one_rating_are_valid() -> None:
    table = annotations_from_frame(frame(item=["q1", "q2", "q3"], agent=["A", "B", "A"],
                                         rater=["r1", "r2", "r3"], label=["1", "0", "1"]))
    assert (table.n_judgments, table.n_responses, table.n_raters) == (3, 3, 3)
    assert table.judgments_per_response().tolist() == [1, 1, 1]


# ====================================================================================== labels
def test_level_names_map_to_positions() -> None:
    table = annotations_from_frame(frame(item=["a", "b", "c"], agent=["A"] * 3, rater=["r"] * 3,
                                         label=[" good", "bad ", "ok"]), levels=" bad, ok ,good")
    assert table.levels == ("bad", "ok", "good")
    assert dict(zip(table.items, table.label[np.argsort(table.response)].tolist(), strict=True)) == {
        "a": 2, "b": 0, "c": 1}
    np.testing.assert_allclose(table.credit, [0.0, 0.5, 1.0])


def test_label_not_among_levels(tmp_path: Path) -> None:
    path = csv_file(tmp_path, ["q1,A,r1,good", "q2,A,r1,meh", "q3,A,r1,awful"], name="labels.csv")
    with pytest.raises(InputError) as excinfo:
        read_annotations(path, levels=LEVELS)
    text = error_text(excinfo)
    assert text.startswith(f"{path}, row 2 (line 3), column 'label': label is not one of the levels")
    assert "(2 row(s) in all)" in text
    assert "got 'meh'" in text and "allowed: one of: bad, ok, good" in text


def test_integer_labels_without_levels() -> None:
    table = annotations_from_frame(frame(item=["a", "b", "c"], agent=["A"] * 3, rater=["r"] * 3,
                                         label=["2", "0", "1"]))
    assert table.levels == ("0", "1", "2")
    assert table.notes == ("integer labels 0..2: levels 0..2",)
    table = annotations_from_frame(frame(item=["a", "b"], agent=["A"] * 2, rater=["r"] * 2, label=[5, 3]))
    assert table.levels == ("0", "1", "2", "3", "4", "5") and sorted(table.label.tolist()) == [3, 5]
    assert "levels below 3 never occur" in table.notes[0]
    # integral floats, as written by tools that store integers with missing values as floats
    table = annotations_from_frame(frame(item=["a", "b"], agent=["A"] * 2, rater=["r"] * 2,
                                         label=["1.0", "0"]))
    assert table.levels == ("0", "1")


@pytest.mark.parametrize("bad", ["-1", "1.5", "good", "1e9", "1e999", "nan"])
def test_bad_integer_labels(tmp_path: Path, bad: str) -> None:
    path = csv_file(tmp_path, ["q1,A,r1,1", f"q2,A,r1,{bad}"], name="ints.csv")
    with pytest.raises(InputError) as excinfo:
        read_annotations(path)
    text = error_text(excinfo)
    assert text.startswith(f"{path}, row 2 (line 3), column 'label'")
    assert f"got {bad!r}" in text and "levels='a,b,c'" in text and "integer level codes >= 0" in text
    assert "--levels a,b,c" in cli_text(excinfo) and excinfo.value.option == "levels"


def test_empty_label() -> None:
    data = frame(item=["q1", "q2"], agent=["A", "A"], rater=["r", "r"], rating=["good", " "])
    with pytest.raises(InputError) as excinfo:
        annotations_from_frame(data, levels=LEVELS, source="e.csv")
    text = error_text(excinfo)
    assert text.startswith("e.csv, row 2, column 'rating': empty label") and "one of: bad, ok, good" in text


def test_levels_must_be_two_or_more_and_distinct() -> None:
    data = frame(item=["q1"], agent=["A"], rater=["r"], label=["good"])
    with pytest.raises(InputError) as excinfo:
        annotations_from_frame(data, levels=["good"], source="l.csv")
    assert "l.csv" in error_text(excinfo) and "at least 2 levels" in error_text(excinfo)
    with pytest.raises(InputError) as excinfo:
        annotations_from_frame(data, levels=["bad", "good", "bad"])
    assert "level 'bad' is named twice" in error_text(excinfo)
    with pytest.raises(InputError) as excinfo:
        annotations_from_frame(data.assign(label=["0"]))
    assert "at least 2 levels" in error_text(excinfo) and "levels=" in error_text(excinfo)
    assert "--levels" in cli_text(excinfo)


# ====================================================================================== credit
def test_credit_default_string_and_sequence() -> None:
    data = frame(item=["q1", "q2"], agent=["A", "A"], rater=["r", "r"], label=["bad", "good"])
    np.testing.assert_allclose(annotations_from_frame(data, levels=LEVELS).credit, [0, 0.5, 1])
    np.testing.assert_allclose(annotations_from_frame(data, levels=LEVELS, credit=" 0, 0.25 ,1").credit,
                               [0, 0.25, 1])
    np.testing.assert_allclose(annotations_from_frame(data, levels=LEVELS, credit=[0, 1, 1]).credit,
                               [0, 1, 1])
    np.testing.assert_allclose(annotations_from_frame(data, levels=LEVELS, credit=(-1, 0, 2.5)).credit,
                               [-1, 0, 2.5])


def test_credit_errors() -> None:
    data = frame(item=["q1", "q2"], agent=["A", "A"], rater=["r", "r"], label=["bad", "good"])
    with pytest.raises(InputError) as excinfo:
        annotations_from_frame(data, levels=LEVELS, credit="0,half,1", source="c.csv")
    text = error_text(excinfo)
    assert "c.csv" in text and "not a number" in text and "got 'half'" in text and "3 comma-separated" in text
    with pytest.raises(InputError) as excinfo:
        annotations_from_frame(data, levels=LEVELS, credit="0,1")
    text = error_text(excinfo)
    assert "3 levels (bad, ok, good), 2 numbers given" in text and "credit='0,0.5,1'" in text
    assert "--credit 0,0.5,1" in cli_text(excinfo)
    with pytest.raises(InputError, match="finite"):
        annotations_from_frame(data, levels=LEVELS, credit=[0, float("inf"), 1])
    with pytest.raises(InputError) as excinfo:  # without levels, K comes from the labels
        annotations_from_frame(data.assign(label=["0", "3"]), credit="0,1")
    assert "4 levels (0, 1, 2, 3)" in error_text(excinfo)


# ====================================================================================== duplicates
DUPLICATED = ["q1,A,r1,good", "q1,A,r2,ok", "q1,A,r1,bad", "q2,A,r1,ok", "q1,A,r1,ok", "q2,A,r1,good"]


def test_duplicates_error_names_rows_ids_and_flag(tmp_path: Path) -> None:
    path = csv_file(tmp_path, DUPLICATED, name="dups.csv")
    with pytest.raises(InputError) as excinfo:
        read_annotations(path, levels=LEVELS)
    text = error_text(excinfo)
    assert text.startswith(f"{path}, row 3: 3 row(s) repeat a (item, agent, rater) judged on an earlier row")
    assert "rows 1, 3 and 5 (lines 2, 4 and 6) (item 'q1', agent 'A', rater 'r1')" in text
    assert "rows 4 and 6 (lines 5 and 7) (item 'q2', agent 'A', rater 'r1')" in text
    assert "duplicates='first'|'last'|'keep'" in text and "--duplicates first|last|keep" in cli_text(excinfo)


@pytest.mark.parametrize("policy, expected, note", [
    ("first", {("q1", "r1"): ["good"], ("q1", "r2"): ["ok"], ("q2", "r1"): ["ok"]},
     "dropped 3 duplicate judgment(s) (policy 'first')"),
    ("last", {("q1", "r1"): ["ok"], ("q1", "r2"): ["ok"], ("q2", "r1"): ["good"]},
     "dropped 3 duplicate judgment(s) (policy 'last')"),
    ("keep", {("q1", "r1"): ["bad", "good", "ok"], ("q1", "r2"): ["ok"], ("q2", "r1"): ["good", "ok"]},
     "kept 3 repeated judgment(s) of the same (item, agent, rater) as independent judgments (policy 'keep')"),
])
def test_duplicate_policies(tmp_path: Path, policy: str, expected: dict[tuple[str, str], list[str]],
                            note: str) -> None:
    table = read_annotations(csv_file(tmp_path, DUPLICATED), levels=LEVELS, duplicates=policy)
    got: dict[tuple[str, str], list[str]] = {}
    for item, _agent, rater, label in table.to_frame().itertuples(index=False):
        got.setdefault((item, rater), []).append(label)
    assert {key: sorted(value) for key, value in got.items()} == expected
    assert table.notes == (note,)


def test_unknown_duplicate_policy_is_a_value_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="'error', 'first', 'last', 'keep'") as excinfo:
        annotations_from_frame(frame(item=["q"], agent=["A"], rater=["r"], label=["1"]), duplicates="drop")
    assert not isinstance(excinfo.value, InputError)
    with pytest.raises(ValueError, match="'mean' is not a policy"):
        read_annotations(tmp_path / "never-read.csv", duplicates="mean")


# ====================================================================================== properties
NAMES = ["007", "7", "a", "B", "gpt-4", "x y", "é"]


@st.composite
def tables(draw: st.DrawFn) -> tuple[pd.DataFrame, list[int], dict[str, str]]:
    n = draw(st.integers(1, 25))
    rows = draw(st.lists(st.tuples(st.sampled_from(NAMES), st.sampled_from(NAMES[:4]), st.sampled_from(NAMES),
                                   st.sampled_from(LEVELS)), min_size=n, max_size=n))
    data = pd.DataFrame(rows, columns=["item", "agent", "rater", "label"])
    order = draw(st.permutations(range(n)))
    targets = draw(st.permutations([f"n{i}" for i in range(len(NAMES))] + ["007 ", "0"]))
    renaming = dict(zip(NAMES, [t.strip() for t in targets], strict=False))
    return data, list(order), renaming


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(tables())
def test_shuffling_rows_and_renaming_ids_gives_the_same_judgments(
    case: tuple[pd.DataFrame, list[int], dict[str, str]],
) -> None:
    data, order, renaming = case
    original = annotations_from_frame(data, levels=LEVELS, duplicates="keep")
    moved = data.iloc[order].reset_index(drop=True)
    for column in ("item", "agent", "rater"):
        moved[column] = moved[column].map(renaming)
    changed = annotations_from_frame(moved, levels=LEVELS, duplicates="keep")
    back = {new: old for old, new in renaming.items()}
    rows = changed.to_frame()
    for column in ("item", "agent", "rater"):
        rows[column] = rows[column].map(back)
    assert sorted(map(tuple, rows.values.tolist())) == sorted(map(tuple, original.to_frame().values.tolist()))
    assert (changed.n_responses, changed.n_raters, changed.n_items) == (
        original.n_responses, original.n_raters, original.n_items)


def test_a_large_table_is_validated_without_row_loops() -> None:
    rng = np.random.default_rng(0)
    m = 200_000
    data = pd.DataFrame({"item": rng.integers(0, 5000, m).astype(str),
                         "agent": rng.integers(0, 8, m).astype(str),
                         "rater": rng.integers(0, 500, m).astype(str),
                         "label": rng.integers(0, 5, m).astype(str)})
    table = annotations_from_frame(data, duplicates="keep")
    assert table.n_judgments == m and table.levels == ("0", "1", "2", "3", "4")
    counts = np.bincount(table.label, minlength=5)
    assert counts.tolist() == np.bincount(data["label"].astype(int), minlength=5).tolist()
    first = annotations_from_frame(data, duplicates="first")
    n_distinct = len(data.drop_duplicates(["item", "agent", "rater"]))
    assert first.n_judgments == n_distinct
    assert first.notes[-1] == f"dropped {m - n_distinct:,} duplicate judgment(s) (policy 'first')"
