"""MT-Bench human votes: the bundled example, the vote mappings and turns, and bad options refused."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from stableval.data import example_path, read_any
from stableval.datasets import MAPPINGS, load_mt_bench
from stableval.errors import InputError

from paths import shared_file


# ====================================================================================== MT-Bench
def test_mt_bench_turn1_baseline_equals_the_bundled_example() -> None:
    path = shared_file("mt_bench_human_judgments", "mt_bench_human_votes_available.jsonl")
    ours = load_mt_bench(path)
    bundled = read_any(example_path("mt_bench"), duplicates="keep")
    assert (ours.n_judgments, ours.n_responses, ours.n_raters, ours.n_agents, ours.n_items) == (3378, 480, 65, 6, 80)
    columns = ["item", "agent", "rater", "label"]
    a = ours.to_frame().sort_values(columns).reset_index(drop=True)
    b = bundled.to_frame().sort_values(columns).reset_index(drop=True)
    pd.testing.assert_frame_equal(a, b)
    assert any("turn 1 is complete" in note for note in ours.notes)


def test_mt_bench_mappings_and_turns() -> None:
    path = shared_file("mt_bench_human_judgments", "mt_bench_human_votes_available.jsonl")
    votes = pd.read_json(path, lines=True)
    turn1 = votes[votes["turn"] == 1]
    ties = int((turn1["winner"] == "tie").sum())
    decided = len(turn1) - ties
    tables = {name: load_mt_bench(path, mapping=name) for name in MAPPINGS}
    assert tables["drop-ties"].n_judgments == 2 * decided
    assert np.bincount(tables["drop-ties"].label).tolist() == [decided, decided]
    assert np.bincount(tables["tie-as-win"].label).tolist() == [decided, decided + 2 * ties]
    assert np.bincount(tables["tie-as-loss"].label).tolist() == [decided + 2 * ties, decided]
    assert np.bincount(tables["baseline"].label).tolist() == [decided, 2 * ties, decided]
    assert tables["tie-0.25"].credit.tolist() == [0.0, 0.25, 1.0]
    assert tables["tie-0.75"].credit.tolist() == [0.0, 0.75, 1.0]
    assert (tables["tie-0.25"].label == tables["baseline"].label).all()
    assert tables["drop-ties"].levels == ("loss", "win")
    turn2 = load_mt_bench(path, turns=[2])
    both = load_mt_bench(path, turns=(1, 2))
    assert turn2.n_judgments == 2 * int((votes["turn"] == 2).sum()) == 1738
    assert both.n_judgments == 2 * len(votes) == 5116 and both.n_items == 160
    assert any("turn 2 is PARTIAL" in note for note in both.notes)


def test_mt_bench_rejects_bad_turn_and_mapping(tmp_path: Path) -> None:
    path = tmp_path / "v.jsonl"
    path.write_text(json.dumps({"question_id": 81, "turn": 3, "model_a": "A", "model_b": "B", "winner": "tie",
                                "judge": "j"}) + "\n")
    with pytest.raises(InputError, match="unknown turn") as caught:
        load_mt_bench(path)
    assert caught.value.file == str(path) and caught.value.row == 1
    with pytest.raises(ValueError, match="mapping"):
        load_mt_bench(path, mapping="ties-as-half")
