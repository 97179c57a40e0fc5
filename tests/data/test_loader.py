"""One input path: ``load``/``load_frame`` (table plus, for pairwise input, the raw votes) and ``read_any``."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from stableval.commands.common import flag_spelling
from stableval.data import (
    AnnotationTable,
    InputOptions,
    Loaded,
    PairwiseTable,
    example_path,
    load,
    load_frame,
    read_any,
    read_pairwise,
    read_table_file,
)
from stableval.errors import InputError

from paths import SMALL_ANNOTATIONS, SMALL_PAIRWISE

LEVELS = "bad,ok,good"


def same_table(left: AnnotationTable, right: AnnotationTable) -> None:
    assert left.to_frame().equals(right.to_frame())
    assert (left.levels, left.source, left.notes) == (right.levels, right.source, right.notes)
    assert left.credit.tolist() == right.credit.tolist()
    for name in ("response", "rater", "label", "response_item", "response_agent"):
        assert np.array_equal(getattr(left, name), getattr(right, name)), name


# ====================================================================================== load
def test_load_pairwise_file_returns_the_votes_and_the_converted_table() -> None:
    loaded = load(SMALL_PAIRWISE)
    assert isinstance(loaded, Loaded) and isinstance(loaded.votes, PairwiseTable)
    assert loaded.votes.n_votes == 3 and loaded.votes.source == str(SMALL_PAIRWISE)
    assert loaded.votes.frame["winner"].tolist() == ["a", "tie", "b"]
    assert loaded.votes.frame.equals(read_pairwise(SMALL_PAIRWISE).frame)
    assert loaded.table.levels == ("loss", "tie", "win")
    assert loaded.table.n_judgments == 2 * loaded.votes.n_votes
    assert loaded.table.source == str(SMALL_PAIRWISE)


def test_load_annotation_file_has_no_votes() -> None:
    loaded = load(SMALL_ANNOTATIONS, InputOptions(levels=LEVELS))
    assert loaded.votes is None
    assert loaded.table.levels == ("bad", "ok", "good")
    assert "007" in loaded.table.items and "7" in loaded.table.items


@pytest.mark.parametrize(("path", "options"), [
    (SMALL_PAIRWISE, InputOptions()),
    (SMALL_PAIRWISE, InputOptions(credit="0,0.25,1", duplicates="first")),
    (SMALL_ANNOTATIONS, InputOptions(levels=LEVELS)),
    (SMALL_ANNOTATIONS, InputOptions(levels=["bad", "ok", "good"], credit=[0, 0.4, 1], duplicates="keep")),
])
def test_read_any_is_the_table_of_load(path: Path, options: InputOptions) -> None:
    table = read_any(path, pairwise=options.pairwise, columns=options.columns, levels=options.levels,
                     credit=options.credit, duplicates=options.duplicates, format=options.format,
                     default_agent=options.default_agent)
    same_table(table, load(path, options).table)


def test_read_any_equals_load_on_the_bundled_example() -> None:
    path = example_path("mt_bench")
    loaded = load(path, InputOptions(duplicates="keep"))
    same_table(read_any(path, duplicates="keep"), loaded.table)
    assert loaded.votes is not None and loaded.votes.n_votes == 1689


def test_load_reads_the_file_once(monkeypatch: pytest.MonkeyPatch) -> None:
    load_module = importlib.import_module("stableval.data.loader")

    calls: list[str] = []

    def counting(path: object, **options: Any) -> pd.DataFrame:
        calls.append(str(path))
        return read_table_file(path, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(load_module, "read_table_file", counting)
    loaded = load(SMALL_PAIRWISE)
    assert calls == [str(SMALL_PAIRWISE)] and loaded.votes is not None


def test_options_pairwise_overrides_detection_and_format_overrides_suffix(tmp_path: Path) -> None:
    path = tmp_path / "votes.txt"
    path.write_text("item,agent,agent_a,agent_b,rater,winner,label\nq1,X,A,B,r1,a,1\nq1,Y,A,B,r2,b,0\n")
    with pytest.raises(InputError, match="cannot tell the file format from its suffix"):
        load(path)
    assert load(path, InputOptions(format="csv")).votes is None  # a label column: annotations by default
    # ... unless the options say the file holds votes (the annotation roles are then not needed)
    assert load(path, InputOptions(format="csv", pairwise=True)).votes is not None


def test_renamed_pairwise_columns_are_detected_from_the_mapping(tmp_path: Path) -> None:
    path = tmp_path / "renamed.csv"
    path.write_text("prompt,left,right,who,verdict\nq1,A,B,r1,left_won\nq1,B,C,r2,tie\n")
    columns = {"item": "prompt", "agent_a": "left", "agent_b": "right", "rater": "who", "winner": "verdict"}
    with pytest.raises(InputError, match="unknown winner"):
        load(path, InputOptions(columns=columns))
    path.write_text("prompt,left,right,who,verdict\nq1,A,B,r1,a\nq1,B,C,r2,tie\n")
    loaded = load(path, InputOptions(columns=columns))
    assert loaded.votes is not None and loaded.votes.frame["agent_a"].tolist() == ["A", "B"]
    assert loaded.table.n_judgments == 4


def test_pairwise_levels_and_credit_messages_are_kept(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        load(SMALL_PAIRWISE, InputOptions(levels="a,b"))
    text = str(caught.value)
    assert text.startswith(f"{SMALL_PAIRWISE}: levels cannot be set for pairwise votes: they are fixed: got 'a,b'")
    assert text.endswith("set their credit with credit='0,0.5,1')")
    assert caught.value.spelled(flag_spelling).endswith("set their credit with --credit 0,0.5,1)")
    # credit is checked before the rows are scanned: a bad credit wins over a bad winner further down
    path = tmp_path / "bad.csv"
    path.write_text("item,agent_a,agent_b,rater,winner\nq1,A,B,r1,a\nq1,A,C,r1,nobody\n")
    with pytest.raises(InputError, match="credit needs one number per level: 3 levels"):
        load(path, InputOptions(credit="0,1"))
    with pytest.raises(InputError, match="unknown winner"):
        load(path)


# ====================================================================================== load_frame
def test_load_frame_annotations_and_votes() -> None:
    ratings = pd.DataFrame({"task": ["q1", "q1", "q2"], "system": ["A", "B", "A"], "worker": ["w1", "w1", "w2"],
                            "rating": ["good", "bad", "ok"]})
    loaded = load_frame(ratings, InputOptions(levels=LEVELS))
    assert loaded.votes is None and loaded.table.source == "<DataFrame>"
    assert loaded.table.label.tolist() == [2, 0, 1]

    votes = pd.DataFrame({"question_id": ["q1", "q1"], "model_a": ["A", "B"], "model_b": ["B", "C"],
                          "judge": ["r1", "r1"], "winner": ["model_a", "tie"]})
    loaded = load_frame(votes, source="in memory")
    assert loaded.votes is not None and loaded.votes.source == "in memory"
    assert loaded.votes.frame["winner"].tolist() == ["a", "tie"]
    assert loaded.table.source == "in memory" and loaded.table.n_judgments == 4


def test_load_frame_names_its_source_in_messages() -> None:
    frame = pd.DataFrame({"item": ["q1"], "agent": ["A"], "rater": ["r1"], "label": ["maybe"]})
    with pytest.raises(InputError) as caught:
        load_frame(frame, InputOptions(levels="no,yes"), source="upload.csv")
    assert str(caught.value).startswith("upload.csv, row 1, column 'label': label is not one of the levels")


def test_load_frame_default_agent() -> None:
    frame = pd.DataFrame({"item": ["q1", "q2"], "rater": ["r1", "r1"], "label": ["0", "1"]})
    loaded = load_frame(frame, InputOptions(default_agent="solo"))
    assert list(loaded.table.agents) == ["solo"] and loaded.votes is None
