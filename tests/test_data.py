"""The bundled example (``data/__init__.py``: ``example_path``): what it holds, and that it is what the script makes
from the source."""

from __future__ import annotations

import importlib.util
import json
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from stableval.commands.common import flag_spelling
from stableval.data import example_path, read_any, read_pairwise
from stableval.errors import InputError

from paths import REPO, SHARED_DATA

MT_BENCH_SOURCE = (SHARED_DATA / "mt_bench_human_judgments"
                   / "cprentice9_eval_platform" / "data" / "mt_bench" / "human_judgments.jsonl")


# ====================================================================================== bundled example
def test_bundled_mt_bench_example() -> None:
    path = example_path()
    assert path.is_file() and path == example_path("mt_bench")
    votes_table = read_pairwise(path, duplicates="keep")
    assert votes_table.n_votes == 1689
    assert Counter(votes_table.frame["winner"]) == {"a": 656, "b": 628, "tie": 405}  # SOURCE.md counts
    table = read_any(path, duplicates="keep")
    assert table.n_judgments == 3378
    assert (table.n_raters, table.n_agents, table.n_items) == (65, 6, 80)
    assert sorted(table.agents) == ["alpaca-13b", "claude-v1", "gpt-3.5-turbo", "gpt-4", "llama-13b",
                                    "vicuna-13b-v1.2"]
    assert table.notes[-1] == "1,689 pairwise votes converted to 3,378 judgments: win=2, tie=1, loss=0"
    # each vote gives one winner and one loser judgment, or two ties
    assert np.bincount(table.label, minlength=3).tolist() == [656 + 628, 2 * 405, 656 + 628]


def test_bundled_example_has_one_repeated_vote() -> None:
    with pytest.raises(InputError) as excinfo:
        read_any(example_path())
    text = str(excinfo.value)
    assert "rows 992 and 994 (lines 993 and 995)" in text
    assert "item 'q128-turn1'" in text and "rater 'author_0'" in text and "duplicates=" in text
    assert "--duplicates" in excinfo.value.spelled(flag_spelling)
    assert read_pairwise(example_path(), duplicates="first").n_votes == 1688


def test_example_path_unknown_name() -> None:
    with pytest.raises(ValueError, match="mt_bench"):
        example_path("arena")


@pytest.mark.skipif(not MT_BENCH_SOURCE.is_file(), reason=f"shared data set not present: {MT_BENCH_SOURCE}")
def test_example_is_what_the_script_makes_from_the_source(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("make_example_mt_bench", REPO / "scripts"
                                                  / "make_example_mt_bench.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    out = tmp_path / "votes.csv"
    assert script.convert(MT_BENCH_SOURCE, out) == 1689
    assert out.read_bytes() == example_path().read_bytes()
    source = [json.loads(line) for line in MT_BENCH_SOURCE.read_text().splitlines() if line.strip()]
    example = pd.read_csv(example_path(), dtype=str)
    assert example["rater"].tolist() == [vote["judge"] for vote in source]
    assert example["item"].tolist() == [f"q{vote['question_id']}-turn1" for vote in source]
