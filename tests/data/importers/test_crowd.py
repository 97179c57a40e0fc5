"""Issue 32: the Mechanical Turk, Prolific importer on small files built here the way the tool writes them (its
documented export format): what it leaves out is counted; its errors name the file, record, field and value."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from stableval import InputError
from stableval.cli import app

from importer_files import load, runner

MTURK_HEADER = ["HITId", "HITTypeId", "Title", "Reward", "CreationTime", "MaxAssignments", "AssignmentId", "WorkerId",
                "AssignmentStatus", "AcceptTime", "SubmitTime", "WorkTimeInSeconds", "LifetimeApprovalRate"]


def mturk_csv(path: Path, inputs: list[str], answers: list[str], rows: list[tuple[Any, ...]]) -> Path:
    """A batch results CSV: the assignment columns, Input.*, Answer.*, then Approve and Reject."""
    columns = [*MTURK_HEADER, *(f"Input.{n}" for n in inputs), *(f"Answer.{n}" for n in answers), "Approve",
               "Reject"]
    frame = pd.DataFrame([[f"3H{k}", "3T9", "Rate an answer", "$0.05", "Mon Mar 04 2024", 3, f"3A{k}", worker,
                           status, "Mon Mar 04 2024", "Mon Mar 04 2024", 40, "100% (12/12)", *values]
                          for k, (worker, status, *values) in enumerate(rows)], columns=columns)
    frame.to_csv(path, index=False)
    return path


def test_mturk_batch_results_leave_out_rejected_assignments(tmp_path: Path) -> None:
    path = mturk_csv(tmp_path / "Batch_5012345_batch_results.csv", ["item_id", "model", "response"],
                     ["quality", "comment"],
                     [("A1", "Approved", "q1", "model-a", "...", 4, "fine", "x", ""),
                      ("A2", "Rejected", "q1", "model-a", "...", 1, "", "", "too fast"),
                      ("A3", "Submitted", "q1", "model-a", "...", 5, "", "", "copy-paste answer"),
                      ("A1", "Submitted", "q1", "model-b", "...", 2, "", "", ""),
                      ("A4", "Submitted", "q1", "model-b", "...", "", "", "", "")])
    with pytest.raises(InputError, match="2 answer columns") as several:
        load(path, "mturk")
    assert several.value.option == "columns.label" and several.value.allowed == "quality, comment"
    loaded = load(path, "mturk", columns={"label": "Answer.quality"})
    assert loaded.table.to_frame()[["agent", "rater", "label"]].values.tolist() == [
        ["model-a", "A1", "4"], ["model-b", "A1", "2"]]
    notes = "\n".join(loaded.table.notes)
    assert "left out 2 rejected assignment(s)" in notes  # status Rejected, and a reason in Reject
    assert "left out 1 assignment(s) without an answer in Answer.quality" in notes
    result = runner.invoke(app, ["convert", "mturk", str(path), "--label-col", "quality", "-o",
                                 str(tmp_path / "out.csv")])
    assert result.exit_code == 0, result.output
    assert "left out 2 rejected assignment(s)" in result.output


def test_mturk_two_agents_make_pairwise_votes_and_hitid_is_the_item(tmp_path: Path) -> None:
    path = mturk_csv(tmp_path / "batch.csv", ["model_a", "model_b"], ["winner"],
                     [("W1", "Approved", "A", "B", "a", "x", ""), ("W2", "Approved", "A", "B", "tie", "x", "")])
    votes = load(path, "mturk").votes
    assert votes is not None and votes.frame[["item", "winner"]].values.tolist() == [["3H0", "a"], ["3H1", "tie"]]
    assert "item: HITId (no input names the item)" in votes.notes


def test_prolific_leaves_out_rejected_returned_and_timed_out_submissions(tmp_path: Path) -> None:
    path = tmp_path / "answers.csv"
    pd.DataFrame({"PROLIFIC_PID": ["5f1a", "5f1a", "60b2", "60b2", "61c3", "62d4"],
                  "Status": ["APPROVED", "APPROVED", "RETURNED", "RETURNED", "AWAITING REVIEW", "TIMED-OUT"],
                  "question_id": ["q1", "q2", "q1", "q2", "q1", "q1"],
                  "model": ["A", "B", "A", "B", "A", "B"], "rating": [4, 2, 1, 1, 5, 3]}).to_csv(path, index=False)
    loaded = load(path, "prolific")
    assert sorted(loaded.table.to_frame()["rater"]) == ["5f1a", "5f1a", "61c3"]
    notes = "\n".join(loaded.table.notes)
    assert "left out 2 answer(s) of RETURNED submissions" in notes
    assert "left out 1 answer(s) of TIMED-OUT submissions" in notes
