"""One leaderboard across several conversions of the same ratings equals ``score_agents`` on each."""

from __future__ import annotations

import pandas as pd

from stableval.datasets import load_mt_bench
from stableval.evaluate import score_agents
from stableval.evaluate.across import score_across

from paths import MT_BENCH, shared_file


def test_score_across_api_matches_score_agents() -> None:
    """Issue 12: exact conventions."""
    path = shared_file(*MT_BENCH)
    tables = {name: load_mt_bench(path, mapping=name) for name in ("baseline", "tie-as-loss")}
    across = score_across(tables, ["mv", "stableval"])
    for name, table in tables.items():
        alone = score_agents(table, ["mv", "stableval"], bootstrap=0).scores
        pd.testing.assert_frame_equal(across.results[name].scores, alone)
    assert across.to_frame().columns.tolist()[-1] == "tie-as-loss_stableval_minus_mv"
