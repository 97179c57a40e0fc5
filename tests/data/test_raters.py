"""Rater metadata: reading it, selecting raters by kind, and bad files refused with the place and what is allowed."""

from __future__ import annotations

from pathlib import Path

import pytest

from stableval.data.raters import load_with_raters, read_rater_info, select_raters
from stableval.errors import InputError


# ====================================================================================== rater selection
def test_select_raters_keeps_one_kind_and_says_so(judge_files: tuple[Path, Path]) -> None:
    ratings, agents = judge_files
    loaded, info, _ = load_with_raters(ratings, rater_info=agents)
    people = select_raters(loaded.table, info, "human")
    judges = select_raters(loaded.table, info, "llm")
    assert people.n_raters == 8 and judges.n_raters == 2
    assert people.n_judgments + judges.n_judgments == loaded.table.n_judgments
    assert people.notes[-1].startswith("raters: human only (8 of 10 raters")
    assert select_raters(loaded.table, info, "all") is loaded.table
    with pytest.raises(InputError, match="kinds are not known"):
        select_raters(loaded.table, None, "llm")


# ====================================================================================== bad metadata
def _table(tmp_path: Path) -> Path:
    path = tmp_path / "r.csv"
    path.write_text("item,agent,rater,label\nq1,A,h1,1\nq1,A,j1,0\nq2,A,h1,0\nq2,A,j1,1\n")
    return path


@pytest.mark.parametrize(("meta", "message"), [
    ("name,kind,family\nh1,person,\nj1,llm,gpt\n",
     "meta.csv, row 1 (line 2), column 'kind': unknown rater kind (1 row(s) in all): got 'person'; allowed: "
     "human, llm, agent (case-insensitive)"),
    ("name,kind,family\nh1,human,gpt\nj1,llm,gpt\n",
     "meta.csv, row 1 (line 2), column 'family': a human rater has no model family: got 'gpt'"),
    ("name,kind,family\nh1,human,\nj1,llm,gpt\nj1,llm,claude\n",
     "meta.csv, column 'name': rater 'j1' is listed twice (rows 2 and 3 (lines 3 and 4)): got 'j1'"),
    ("name,kind,family\nh1,human,\n",
     "rater(s) of {ratings} have no kind in {meta}: 'j1'"),
    ("name,kind,family\nh1,human,\nj1,llm,\nA,agent,\n",
     "meta.csv, row 3 (line 4), column 'family': an agent row needs its model family"),
    ("who,kind\nh1,human\n", "no name column (looked for: name, rater, rater_id, judge, agent, id)"),
    ("name,kind,family\n,human,\n", "meta.csv, row 1 (line 2), column 'name': empty name id"),
])
def test_bad_metadata_files_are_rejected_with_the_place_and_what_is_allowed(tmp_path: Path, meta: str,
                                                                            message: str) -> None:
    ratings = _table(tmp_path)
    path = tmp_path / "meta.csv"
    path.write_text(meta)
    with pytest.raises(InputError) as caught:
        load_with_raters(ratings, rater_info=path)
    assert message.format(ratings=ratings, meta=path) in str(caught.value)


def test_bad_rater_kind_columns_are_rejected(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text("item,agent,judge,label,rater_kind\nq1,A,h1,1,human\nq1,A,j1,0,llm\nq2,A,j1,1,human\n")
    with pytest.raises(InputError, match=r"row 3 \(line 4\), column 'rater_kind': rater 'j1' has a different "
                                         r"rater_kind than on row 2 \(line 3\): got 'human'"):
        load_with_raters(path)
    both = tmp_path / "meta.csv"
    both.write_text("name,kind,family\nh1,human,\nj1,llm,\n")
    path.write_text("item,agent,judge,label,rater_kind\nq1,A,h1,1,human\nq1,A,j1,0,llm\n")
    with pytest.raises(InputError, match="rater kinds are given twice"):
        load_with_raters(path, rater_info=both)
    both.write_text("name,kind,family\nA,agent,gpt\n")  # agent rows only: families added to the columns' kinds
    _, info, _ = load_with_raters(path, rater_info=both)
    assert info is not None and info.agent_family == {"A": "gpt"} and info.kind.tolist() == ["human", "llm"]


def test_bad_answer_lengths_are_rejected(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text("item,agent,rater,label,rater_kind,words\nq1,A,h1,1,human,10\nq1,A,j1,0,llm,12\n")
    with pytest.raises(InputError, match=r"row 2 \(line 3\), column 'words': the same answer has two different "
                                         r"lengths: got '12.0'; allowed: the length given on its first row, 10"):
        load_with_raters(path, length="words")
    path.write_text("item,agent,rater,label,rater_kind,words\nq1,A,h1,1,human,many\n")
    with pytest.raises(InputError, match=r"column 'words': answer length is not a number >= 0 .*got 'many'"):
        load_with_raters(path, length="words")
    with pytest.raises(InputError, match="the answer-length column is not in the file"):
        load_with_raters(path, length="tokens")


def test_read_rater_info_reads_jsonl(tmp_path: Path) -> None:
    ratings = _table(tmp_path)
    meta = tmp_path / "meta.jsonl"
    meta.write_text('{"rater": "h1", "kind": "Human"}\n{"rater": "j1", "kind": "LLM", "family": "gpt-4"}\n'
                    '{"rater": "unused", "kind": "human"}\n')
    loaded, _, _ = load_with_raters(ratings)
    info = read_rater_info(meta, loaded.table)
    assert info.kind.tolist() == ["human", "llm"] and info.family.tolist() == ["", "gpt-4"]
    assert "do not rate" in info.notes[0]


def test_a_family_column_without_a_kind_column_is_refused_not_ignored(tmp_path: Path) -> None:
    """Issue 26 (E7): the refusal existed but ``load_with_raters`` never reached it."""
    path = tmp_path / "fam.csv"
    path.write_text("item,agent,rater,label,rater_family\nq1,m1,r1,1,\nq1,m1,j1,1,gpt\nq1,m2,r1,0,\n"
                    "q1,m2,j1,1,gpt\n")
    with pytest.raises(InputError, match="a rater family column without a rater kind column") as caught:
        load_with_raters(path)
    assert caught.value.column == "rater_family" and "fam.csv" in str(caught.value)
