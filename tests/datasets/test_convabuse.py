"""ConvAbuse: counts against an independent pandas computation, and malformed rows and paths refused."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from stableval.datasets import (
    load_convabuse,
    load_dawid_skene,
    load_mslr,
    load_mt_bench,
    load_qags,
    load_truth_inference,
)
from stableval.errors import InputError

from paths import shared_file

SEVERITY = ["is_abuse.1", "is_abuse.0", "is_abuse.-1", "is_abuse.-2", "is_abuse.-3"]


# ====================================================================================== ConvAbuse
def test_convabuse_counts_match_independent_pandas() -> None:
    path = shared_file("convabuse", "1_full", "ConvAbuseEMNLPfull.csv")
    raw = pd.read_csv(path, dtype=str, keep_default_na=False)
    first = raw.drop_duplicates(["conv_id", "bot", "annotator_id"], keep="first")
    severity = first[SEVERITY].astype(int).idxmax(axis=1).str.removeprefix("is_abuse.").astype(int)
    expected_levels = severity.map({1: 0, 0: 0, -1: 1, -2: 2, -3: 2}).value_counts().sort_index().tolist()

    table = load_convabuse(path.parent.parent)  # the dataset folder works too
    assert (table.n_judgments, table.n_responses, table.n_raters, table.n_agents) == (9571, 2894, 8, 2)
    assert table.n_judgments == len(first)
    assert table.n_responses == first.groupby(["conv_id", "bot"]).ngroups == raw["conv_id"].nunique()
    assert sorted(table.agents) == ["CarbonBot", "E.L.I.Z.A."]
    assert np.bincount(table.label, minlength=3).tolist() == expected_levels
    assert any("dropped 3,197 rows" in note for note in table.notes)
    # the first row in file order wins: the table's label for each (conv, bot, rater) equals pandas' first row
    ours = table.to_frame().set_index(["item", "agent", "rater"])["label"]
    theirs = pd.Series(np.asarray(["not_abusive", "mild", "strong"])[
        severity.map({1: 0, 0: 0, -1: 1, -2: 2, -3: 2}).to_numpy()],
        index=pd.MultiIndex.from_frame(first[["conv_id", "bot", "annotator_id"]]))
    assert (ours.sort_index().to_numpy() == theirs.sort_index().to_numpy()).all()


def test_convabuse_rejects_a_row_that_is_not_one_hot(tmp_path: Path) -> None:
    path = tmp_path / "full.csv"
    path.write_text("annotator_id,conv_id,bot," + ",".join(SEVERITY) + "\nA1,c1,E,1,0,0,0,0\nA2,c1,E,1,0,1,0,0\n")
    with pytest.raises(InputError) as caught:
        load_convabuse(path)
    assert caught.value.file == str(path) and caught.value.row == 2
    assert "one-hot" in str(caught.value) and "line 3" in str(caught.value)


def test_missing_paths_name_the_file(tmp_path: Path) -> None:
    for loader in (load_convabuse, load_qags, load_mslr, load_mt_bench, load_dawid_skene):
        with pytest.raises(InputError, match="not found") as caught:
            loader(tmp_path / "absent.csv")
        assert caught.value.file == str(tmp_path / "absent.csv")
    with pytest.raises(InputError, match="folder holds no"):
        load_convabuse(tmp_path)
    with pytest.raises(InputError, match="not found"):
        load_truth_inference(tmp_path / "nothing")


def test_convabuse_credit_is_higher_for_less_abuse(tmp_path: Path) -> None:
    """Issue 27: the credit was 0, 0.5, 1 by severity, so the leaderboard ranked the more abusive bot first while
    every leaderboard reads higher as better; ``convert`` now suggests that credit too."""
    from typer.testing import CliRunner

    from stableval.cli import app

    path = tmp_path / "full.csv"
    path.write_text("annotator_id,conv_id,bot,is_abuse.1,is_abuse.0,is_abuse.-1,is_abuse.-2,is_abuse.-3\n"
                    "A1,c1,clean,1,0,0,0,0\nA2,c1,clean,1,0,0,0,0\nA1,c1,rude,0,0,0,0,1\nA2,c1,rude,0,0,0,1,0\n")
    table = load_convabuse(path)
    assert table.credit.tolist() == [1.0, 0.5, 0.0]
    result = CliRunner().invoke(app, ["convert", "convabuse", str(path), "-o", str(tmp_path / "c.csv")])
    assert result.exit_code == 0, result.output
    command = result.output.split("score it: ")[1].split()
    assert command[-2:] == ["--credit", "1,0.5,0"]
    scored = CliRunner().invoke(app, ["score", *command[2:], "-B", "0", "-f", "json", "--method", "mv"])
    scores = {row["agent"]: row["score"] for row in __import__("json").loads(scored.stdout)["scores"]}
    assert scores["clean"] > scores["rude"]
