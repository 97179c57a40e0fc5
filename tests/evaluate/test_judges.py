"""LLM judges as raters: the judge diagnostics against planted biases, and leaderboards by rater kind."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from stableval.data.loader import InputOptions, load_frame
from stableval.data.raters import load_with_raters, rater_info_from_frames
from stableval.evaluate.judges import judge_diagnostics, leaderboards_by_kind


def _planted_values(frame: pd.DataFrame, judge: str) -> tuple[float, float]:
    """The planted self-preference (mean credit the bias adds to own-family answers) and length slope (credit the
    verbosity bias adds per SD of answer length, least squares), exactly from the simulator's expectations."""
    rows = frame[frame["rater"] == judge]
    own = (rows["agent_family"] == rows["rater_family"]).to_numpy()
    answers = frame.drop_duplicates(["item", "agent"])["words"]
    z = ((rows["words"] - answers.mean()) / answers.std(ddof=0)).to_numpy()
    effect = rows["length_effect"].to_numpy()
    slope = float(np.polyfit(z, effect, 1)[0])
    return float(rows["self_effect"].to_numpy()[own].mean()), slope


# ====================================================================================== planted biases
# Tolerances: about three and two and a half bootstrap standard errors at 300 items × 4 agents (the SE is ~0.016
# for self-preference and ~0.0085 for the length slope here).
SELF_TOLERANCE = 0.05


SLOPE_TOLERANCE = 0.02


def test_planted_self_preference_is_found_with_its_size_and_covered(planted_judgments: pd.DataFrame,
                                                                     judge_report: pd.DataFrame) -> None:
    truth, _ = _planted_values(planted_judgments, "judge-gpt")
    assert truth == pytest.approx(0.3 * 0.5 * 2 / 3, abs=0.03)  # move up w.p. 0.3, half a credit, unless at the top
    row = judge_report.loc["judge-gpt"]
    assert row["self_preference"] > 0
    assert abs(row["self_preference"] - truth) < SELF_TOLERANCE
    assert row["self_preference_ci_low"] <= truth <= row["self_preference_ci_high"]
    assert row["self_preference_ci_low"] > 0  # detected
    neutral = judge_report.loc["judge-claude"]  # no self-preference planted
    assert abs(neutral["self_preference"]) < SELF_TOLERANCE
    assert neutral["self_preference_ci_low"] <= 0 <= neutral["self_preference_ci_high"]
    assert row["own_family_judgments"] == 600 and neutral["own_family_judgments"] == 300


def test_planted_verbosity_bias_is_found_with_its_size_and_covered(planted_judgments: pd.DataFrame,
                                                                    judge_report: pd.DataFrame) -> None:
    _, truth = _planted_values(planted_judgments, "judge-gpt")
    assert truth > 0.02
    row = judge_report.loc["judge-gpt"]
    assert abs(row["length_slope"] - truth) < SLOPE_TOLERANCE
    assert row["length_slope_ci_low"] <= truth <= row["length_slope_ci_high"]
    assert row["length_slope_ci_low"] > 0
    assert row["length_corr"] > row["length_corr_humans"]  # the judge's credit tracks length, the people's not
    neutral = judge_report.loc["judge-claude"]
    assert neutral["length_slope_ci_low"] <= 0 <= neutral["length_slope_ci_high"]


def test_leniency_matches_an_independent_computation(planted_judgments: pd.DataFrame,
                                                      judge_files: tuple[Path, Path]) -> None:
    """Leniency, agreement and self-preference recomputed with pandas from the same human consensus (MV on the
    people: the credit of the most-voted level, ties split)."""
    ratings, agents = judge_files
    loaded, info, _ = load_with_raters(ratings, rater_info=agents)
    assert info is not None
    result = judge_diagnostics(loaded.table, info, "mv", bootstrap=0).judges.set_index("judge")
    people = planted_judgments[planted_judgments["rater_kind"] == "human"]
    counts = people.pivot_table(index=["item", "agent"], columns="label", aggfunc="size", fill_value=0)
    top = counts.to_numpy() == counts.to_numpy().max(axis=1, keepdims=True)
    consensus = pd.Series((top * np.array([0.0, 0.5, 1.0])).sum(axis=1) / top.sum(axis=1), index=counts.index)
    judges = planted_judgments[planted_judgments["rater_kind"] == "llm"].join(consensus.rename("human"),
                                                                              on=["item", "agent"])
    judges["gap"] = judges["label"] * 0.5 - judges["human"]
    for key, rows in judges.groupby("rater"):
        judge = str(key)
        own = rows["agent_family"] == rows["rater_family"]
        assert result.loc[judge, "leniency"] == pytest.approx(rows["gap"].mean(), abs=1e-12)
        assert result.loc[judge, "self_preference"] == pytest.approx(
            rows["gap"][own].mean() - rows["gap"][~own].mean(), abs=1e-12)
        assert result.loc[judge, "compared"] == len(rows)


def test_position_bias_planted_in_pairwise_votes_is_found() -> None:
    rng = np.random.default_rng(3)
    n = 1500
    strength = {"A": 1.0, "B": 0.0, "C": -1.0}
    names = np.array(list(strength))
    pairs = rng.integers(0, 3, size=(n, 2))
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    pairs = np.vstack([pairs, pairs[:, ::-1]])  # every pair in both orders: honest votes favour neither side
    first, second = names[pairs[:, 0]], names[pairs[:, 1]]
    p_first = 1 / (1 + np.exp(-(np.vectorize(strength.get)(first) - np.vectorize(strength.get)(second))))
    honest = np.where(rng.random(first.size) < p_first, "model_a", "model_b")
    rows = []
    for r in range(4):  # people: honest votes
        rows.append(pd.DataFrame({"question_id": np.arange(first.size), "model_a": first, "model_b": second,
                                  "judge": f"h{r}", "winner": np.where(rng.random(first.size) < p_first,
                                                                         "model_a", "model_b")}))
    left = 0.3  # the judge says "first" on 30% of votes whatever the answers, otherwise votes honestly
    judge = np.where(rng.random(first.size) < left, "model_a", honest)
    rows.append(pd.DataFrame({"question_id": np.arange(first.size), "model_a": first, "model_b": second,
                              "judge": "llm", "winner": judge}))
    frame = pd.concat(rows, ignore_index=True).astype(str)
    frame["rater_kind"] = np.where(frame["judge"] == "llm", "llm", "human")
    loaded = load_frame(frame, InputOptions(), source="votes")
    info = rater_info_from_frames(loaded.table, judgments=frame, source="votes")
    result = judge_diagnostics(loaded.table, info, "mv", votes=loaded.votes, bootstrap=0)
    row = result.judges.iloc[0]
    planted_share = left + (1 - left) * 0.5  # both orders equally often, so honest votes are 50:50
    assert abs(row["left_share"] - planted_share) < 0.05
    assert row["left_share_ci_low"] <= planted_share <= row["left_share_ci_high"]
    assert row["left_share_ci_low"] > 0.5
    _, low, high = result.human_left_share
    assert low <= 0.5 <= high


def test_leaderboards_by_kind_show_the_judges_favourites_higher(judge_files: tuple[Path, Path]) -> None:
    ratings, agents = judge_files
    loaded, info, _ = load_with_raters(ratings, rater_info=agents)
    assert info is not None
    board = leaderboards_by_kind(loaded.table, info, "mv", bootstrap=0).set_index("agent")
    gpt = ["gpt-big", "gpt-small"]
    others = ["claude-x", "llama-y"]
    # the biased judge inflates the gpt agents: the LLM-only scores lift them more than the others
    lift = board["llm_score"] - board["human_score"]
    assert lift[gpt].mean() > lift[others].mean() + 0.05
    assert (board["rank_change"] == board["human_rank"] - board["llm_rank"]).all()
