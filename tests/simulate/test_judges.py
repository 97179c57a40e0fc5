"""Simulated LLM judges (issue 30): each bias moves the judge's credit the planted way; people keep their
judgments only on the human budget; the people's part is the plain simulator's."""

from __future__ import annotations

import numpy as np
import pytest

from stableval.errors import InputError
from stableval.simulate.judges import JudgeConfig, simulate_judged
from stableval.simulate.simulator import SimulationConfig

PEOPLE = SimulationConfig(qualities=(0.6, 0.5), agents=("gpt-a", "llama-b"), items=1500, raters=6,
                          labels_per_response=1, accuracy=(1.0, 1.0), strict=0, lenient=0, adversarial=0, hard=0)


def _judge_credit(study) -> np.ndarray:  # type: ignore[no-untyped-def]
    credit = study.simulation.config.credit_array()
    return np.bincount(study.judge_response, weights=credit[study.judge_label],
                       minlength=study.simulation.n_responses) / study.judges.judges


def test_biases_move_the_judge_credit_as_planted() -> None:
    truth = None
    gaps = {}
    for name, judges in {"none": JudgeConfig(accuracy=(1.0, 1.0)),
                         "lenient": JudgeConfig(accuracy=(1.0, 1.0), leniency=0.4),
                         "self": JudgeConfig(accuracy=(1.0, 1.0), family=("gpt-a",), self_preference=0.4),
                         "length": JudgeConfig(accuracy=(1.0, 1.0), length_bias=0.8)}.items():
        study = simulate_judged(PEOPLE, judges, seed=3)
        credit = study.simulation.config.credit_array()[study.simulation.level]
        truth = credit if truth is None else truth
        assert np.array_equal(credit, truth)  # the people's part does not depend on the judges
        gap = _judge_credit(study) - credit
        agent = study.simulation.response_agent
        long = study.length > np.median(study.length)
        gaps[name] = (gap[agent == 0].mean(), gap[agent == 1].mean(), gap[long].mean() - gap[~long].mean())
    assert gaps["none"] == (0.0, 0.0, 0.0)
    assert gaps["lenient"][0] > 0.1 and gaps["lenient"][1] > 0.1
    assert gaps["self"][0] > 0.1 and gaps["self"][1] == 0.0
    assert gaps["length"][2] > 0.1


def test_human_budget_and_the_frame() -> None:
    study = simulate_judged(PEOPLE, JudgeConfig(judges=2, human_share=0.2, noise=0.1), seed=0)
    frame = study.frame()
    people = frame[frame["rater_kind"] == "human"]
    assert len(frame[frame["rater_kind"] == "llm"]) == 2 * study.simulation.n_responses
    assert abs(study.people_rated.mean() - 0.2) < 0.03 and len(people) == study.people_rated.sum()
    table = study.table()
    info = study.rater_info(table)
    assert info.counts()["llm"] == 2 and info.counts()["human"] == len(people["rater"].unique())
    assert (frame["words"] > 0).all()


def test_bad_settings_name_the_setting() -> None:
    with pytest.raises(InputError, match="human_share"):
        JudgeConfig(human_share=0.0)
    with pytest.raises(InputError, match="leniency"):
        JudgeConfig(leniency=1.5)
