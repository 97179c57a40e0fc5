"""Simulated LLM judges beside the simulated people: leniency, self-preference, length bias and noise.

:func:`simulate_judged` draws a study with :func:`~stableval.simulate.simulate` (the people: the rater types of
:mod:`stableval.simulate.raters`) and adds ``judges`` LLM-judge raters who rate **every** response, while people
keep their judgments on a random ``human_share`` of the responses only (the human budget). A judge reports level
o for a response of true level c from a reliable confusion matrix (its accuracy drawn from ``accuracy``), then
moves the report one level up (never above K − 1) with probability

    leniency + self_preference · [the agent is of the judges' family] + length_bias · (the response's length
    quantile among all responses)

(clipped to [0, 1]), and finally replaces it, with probability ``noise``, by a uniformly random level. Response
lengths are drawn independently of quality (log-normal words), so a length-biased judge favours long answers for
no reason. These are the biases :func:`stableval.evaluate.judges.judge_diagnostics` measures (Zheng et al. 2023,
"Judging LLM-as-a-judge with MT-Bench and Chatbot Arena": position, verbosity and self-enhancement biases).

>>> from stableval.simulate.simulator import SimulationConfig
>>> study = simulate_judged(SimulationConfig(qualities=(0.7, 0.5), items=40, raters=6, labels_per_response=2),
...                         JudgeConfig(leniency=0.3, human_share=0.25), seed=0)
>>> frame = study.frame()
>>> sorted(frame["rater_kind"].unique()), int((frame["rater_kind"] == "llm").sum()), int(study.people_rated.sum())
(['human', 'llm'], 80, 17)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from stableval.errors import InputError
from stableval.simulate.raters import reliable_confusion
from stableval.simulate.simulator import Simulation, SimulationConfig, simulate

if TYPE_CHECKING:  # pragma: no cover
    from stableval.data.raters import RaterInfo
    from stableval.data.table import AnnotationTable

__all__ = ["JudgeConfig", "JudgedStudy", "simulate_judged"]


@dataclass(frozen=True)
class JudgeConfig:
    """The LLM judges of a simulated study (see the module docstring).

    Attributes:
        judges: how many judges (each rates every response).
        accuracy: range of the judges' accuracies before their biases, drawn uniformly per judge.
        leniency: probability of moving any report one level up.
        family: names of the agents of the judges' own family; ``self_preference``: the extra probability of
            moving those agents' reports up.
        length_bias: extra probability of moving a report up, times the response's length quantile.
        noise: probability that a report is a uniformly random level.
        human_share: share of the responses the people rate (drawn at random; the rest only judges rate).
    """

    judges: int = 1
    accuracy: tuple[float, float] = (0.75, 0.9)
    leniency: float = 0.0
    family: tuple[str, ...] = ()
    self_preference: float = 0.0
    length_bias: float = 0.0
    noise: float = 0.0
    human_share: float = 1.0

    def __post_init__(self) -> None:
        def bad(name: str, allowed: str) -> InputError:
            return InputError("invalid judge setting", option=name, value=getattr(self, name), allowed=allowed)

        if self.judges < 1:
            raise bad("judges", "an integer >= 1")
        low, high = self.accuracy
        if not 0.0 <= low <= high <= 1.0:
            raise bad("accuracy", "two numbers low <= high in [0, 1]")
        for name in ("leniency", "self_preference", "length_bias", "noise"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise bad(name, "a number in [0, 1]")
        if not 0.0 < self.human_share <= 1.0:
            raise bad("human_share", "a number in (0, 1]")


@dataclass(frozen=True, eq=False)
class JudgedStudy:
    """A simulated study with people on some responses and LLM judges on all.

    Attributes:
        simulation: the people's study (every response, before the human budget is applied) and the truth.
        judges: the judge settings.
        people_rated: (N,) whether people rate the response (the human budget).
        length: (N,) words of each response.
        judge_response, judge_rater, judge_label: (M_j,) the judges' judgments (judge codes 0..J−1).
        judge_accuracy: (J,) the drawn accuracies.
    """

    simulation: Simulation
    judges: JudgeConfig
    people_rated: np.ndarray
    length: np.ndarray
    judge_response: np.ndarray
    judge_rater: np.ndarray
    judge_label: np.ndarray
    judge_accuracy: np.ndarray

    @property
    def true_scores(self) -> np.ndarray:
        """(A,) exact expected credit of each agent (the simulation's truth)."""
        return self.simulation.true_scores

    def frame(self) -> pd.DataFrame:
        """``item, agent, rater, label, rater_kind, words``: the people's judgments on the rated responses, then
        every judge's."""
        sim = self.simulation
        people = sim.frame()
        people = people[self.people_rated[sim.response]].assign(rater_kind="human")
        items, agents, _ = sim._names()
        names = sim.config.level_names
        labels = np.asarray(names, dtype=object)[self.judge_label] if names else self.judge_label.astype(np.int64)
        judges = pd.DataFrame({
            "item": items[sim.response_item[self.judge_response]],
            "agent": agents[sim.response_agent[self.judge_response]],
            "rater": np.array([f"judge{j + 1}" for j in range(self.judges.judges)], dtype=object)[self.judge_rater],
            "label": labels, "rater_kind": "llm",
        })
        frame = pd.concat([people, judges], ignore_index=True)
        response = np.concatenate([sim.response[self.people_rated[sim.response]], self.judge_response])
        frame["words"] = self.length[response]
        return pd.DataFrame(frame)

    def table(self) -> AnnotationTable:
        """The judgments of both kinds as one :class:`~stableval.data.table.AnnotationTable`."""
        from stableval.data.table import AnnotationTable

        frame = self.frame()
        config = self.simulation.config
        return AnnotationTable.from_frame(frame[["item", "agent", "rater", "label"]], levels=config.level_labels(),
                                          credit=config.credit_array(), source="<simulation>")

    def rater_info(self, table: AnnotationTable) -> RaterInfo:
        """Which of ``table``'s raters are people and which are judges (from the ``rater_kind`` column)."""
        from stableval.data.raters import rater_info_from_frames

        return rater_info_from_frames(table, judgments=self.frame())


def simulate_judged(config: SimulationConfig, judges: JudgeConfig,
                    seed: int | np.random.SeedSequence | None = 0) -> JudgedStudy:
    """Draw the people's study from ``config`` and the judges from ``judges`` (module docstring); the people's
    part is exactly :func:`~stableval.simulate.simulate` with the first of two seeds spawned from ``seed``."""
    people_seed, judge_seed = np.random.SeedSequence(seed).spawn(2) if not isinstance(
        seed, np.random.SeedSequence) else seed.spawn(2)
    sim = simulate(config, np.random.default_rng(people_seed))
    rng = np.random.default_rng(judge_seed)
    n, k = sim.n_responses, config.levels
    people_rated = rng.random(n) < judges.human_share if judges.human_share < 1 else np.ones(n, dtype=bool)
    if not people_rated.any():
        people_rated[rng.integers(n)] = True
    length = np.round(np.exp(rng.normal(5.0, 0.6, n))).astype(np.int64)
    quantile = (np.argsort(np.argsort(length, kind="stable"), kind="stable") + 0.5) / n
    accuracy = rng.uniform(*judges.accuracy, size=judges.judges)
    confusion = reliable_confusion(accuracy, k, config.neighbour)
    family = np.isin(np.asarray(config.agent_names(), dtype=object)[sim.response_agent], list(judges.family))
    up = np.clip(judges.leniency + judges.self_preference * family + judges.length_bias * quantile, 0.0, 1.0)
    response = np.tile(np.arange(n, dtype=np.int32), judges.judges)
    rater = np.repeat(np.arange(judges.judges, dtype=np.int32), n)
    cumulative = np.cumsum(confusion, axis=2)[rater, sim.level[response], : k - 1]
    label = (cumulative < rng.random(response.size)[:, None]).sum(axis=1)
    label = np.where(rng.random(response.size) < up[response], np.minimum(label + 1, k - 1), label)
    label = np.where(rng.random(response.size) < judges.noise, rng.integers(0, k, size=response.size), label)
    return JudgedStudy(simulation=sim, judges=judges, people_rated=people_rated, length=length,
                       judge_response=response, judge_rater=rater, judge_label=label.astype(np.int16),
                       judge_accuracy=accuracy)
