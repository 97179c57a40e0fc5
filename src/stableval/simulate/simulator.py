"""Simulate a rating study: agents with known qualities, a mixed rater population, sparse judgments.

The generative model (documented so that every number in a stress test has a known truth):

1. **Responses.** Every agent a answers every item; each response gets a latent level
   ``z ~ Binomial(K - 1, q_a)`` on the ordered scale 0..K-1, where ``q_a`` is the agent's quality.
2. **True agent score.** The *exact* expectation of the credit of z,
   ``S*(a) = sum_c C(K-1, c) q_a^c (1 - q_a)^(K-1-c) v(c)`` (Bonagiri et al. 2026, Sections 3.4–3.5, with the
   latent level's distribution in place of the posterior); with evenly spaced credit ``v(c) = c / (K - 1)`` it is
   exactly ``q_a``. The realised mean credit of the sampled levels is reported beside it (``sample_score``).
3. **Raters.** A pool of R raters whose types come in fixed proportions (``strict``, ``lenient``,
   ``adversarial``; the rest reliable; see :mod:`stableval.simulate.raters`), shuffled over the pool; each
   rater's accuracy and shift are drawn uniformly from their ranges. Rater r reports level o for a response of
   level c with probability ``pi_r[c, o]`` (the Dawid–Skene model, Dawid & Skene 1979).
4. **Design.** Each response is judged by L distinct raters drawn uniformly from the pool (a sparse design:
   not every rater sees every response).
5. **Hard responses.** Each response is hard with probability ``hard``; every judgment of a hard response is
   replaced, with probability ``hard_noise``, by a uniformly random level.

>>> sim = simulate(SimulationConfig(qualities=(0.9, 0.5), items=50, raters=12, labels_per_response=3), seed=1)
>>> sim.n_responses, sim.n_judgments, sim.true_scores.round(3).tolist()
(100, 300, [0.9, 0.5])
>>> table = sim.table()
>>> table.n_agents, table.n_raters, table.levels
(2, 12, ('0', '1', '2'))
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from stableval._options import beyond_size_bound, large_allowed, memory_text
from stableval.data.table import AnnotationTable, default_credit
from stableval.errors import InputError
from stableval.simulate.raters import ADVERSARIAL_MODES, RATER_TYPES, population_confusion, rater_type_counts

#: quality profiles of the spec's "agent quality gap" sweep
WIDE_GAP: tuple[float, ...] = (0.85, 0.80, 0.70, 0.55, 0.35, 0.20)
NARROW_GAP: tuple[float, ...] = (0.75, 0.70, 0.65, 0.60, 0.55, 0.50)

#: cells of the (responses × raters) random-key matrix drawn at once when assigning raters
_ASSIGN_CELLS = 4_000_000
#: The largest study drawn: judgments × levels and raters × levels² (the arrays held at once, 8 bytes a cell) at most
#: this many cells, about 1.5 GiB; and at most :data:`MAX_LEVELS` levels. A typo of a few zeros is refused up front
#: (``STABLEVAL_ALLOW_LARGE=1`` lifts both bounds).
MAX_CELLS = 200_000_000
MAX_LEVELS = 1000


#: the kind of value each setting takes (checked before its range): ``int``, ``float``, ``str``, or a tuple of
#: one of them, and what is allowed, in words; the settings in ``_OPTIONAL`` may also be None
_SETTING_KINDS: dict[str, tuple[Any, str]] = {
    "qualities": ((float,), "a list of numbers"), "agents": ((str,), "a list of names"),
    "items": (int, "an integer"), "raters": (int, "an integer"), "labels_per_response": (int, "an integer"),
    "levels": (int, "an integer"), "level_names": ((str,), "a list of names"),
    "credit": ((float,), "a list of numbers"),
    "accuracy": ((float,), "a list of two numbers"), "shift": ((float,), "a list of two numbers"),
    "neighbour": (float, "a number"), "strict": (float, "a number"), "lenient": (float, "a number"),
    "adversarial": (float, "a number"), "adversarial_mode": (str, "text"), "hard": (float, "a number"),
    "hard_noise": (float, "a number"),
}
_OPTIONAL = {"agents", "level_names", "credit"}


def _is_kind(value: Any, kind: Any) -> bool:
    """Whether ``value`` is of ``kind`` (:data:`_SETTING_KINDS`): a bool is no number, an int is a float.

    >>> _is_kind(3, float), _is_kind(True, int), _is_kind((0.5, 1), (float,)), _is_kind("x", (str,))
    (True, False, True, False)
    """
    if isinstance(kind, tuple):
        return isinstance(value, tuple) and all(_is_kind(v, kind[0]) for v in value)
    if isinstance(value, bool):
        return False
    return isinstance(value, (int, float) if kind is float else kind)


@dataclass(frozen=True)
class SimulationConfig:
    """Everything that defines a simulated study (see the module docstring for the model).

    Attributes:
        qualities: one quality in (0, 1) per agent (mean latent level / (K - 1)).
        agents: agent names (default ``agent1``, ``agent2``, ...).
        items: items per agent (every agent answers every item).
        raters: size of the rater pool.
        labels_per_response: judgments per response L (distinct raters; at most ``raters``).
        levels: number of ordered levels K (written as integer codes 0..K-1 unless ``level_names`` are given).
        level_names: optional names of the K levels, worst first.
        credit: credit per level (default evenly spaced 0..1).
        accuracy: range of reliable accuracies ``(low, high)``, drawn uniformly per rater (every type starts from
            a reliable rater).
        neighbour: share of a reliable rater's errors that go to adjacent levels.
        strict, lenient, adversarial: fractions of the pool of each type (the rest are reliable).
        shift: range of the probability that a strict (lenient) rater moves a report one level down (up).
        adversarial_mode: ``"reverse"`` (mirror the scale) or ``"random"`` (uniform labels).
        hard: probability that a response is hard.
        hard_noise: probability that a judgment of a hard response is a uniformly random level.
    """

    qualities: tuple[float, ...] = WIDE_GAP
    agents: tuple[str, ...] | None = None
    items: int = 100
    raters: int = 30
    labels_per_response: int = 5
    levels: int = 3
    level_names: tuple[str, ...] | None = None
    credit: tuple[float, ...] | None = None
    accuracy: tuple[float, float] = (0.65, 0.95)
    neighbour: float = 0.8
    strict: float = 0.1
    lenient: float = 0.1
    adversarial: float = 0.1
    shift: tuple[float, float] = (0.5, 0.9)
    adversarial_mode: str = "reverse"
    hard: float = 0.05
    hard_noise: float = 1.0

    def __post_init__(self) -> None:
        self.check()

    # ------------------------------------------------------------------ validation
    def check(self) -> None:
        """Raise :class:`InputError` (naming the setting, value and what is allowed) on an invalid config."""
        def bad(name: str, allowed: str) -> InputError:
            return InputError("invalid simulation setting", option=name, value=getattr(self, name),
                              allowed=allowed)

        for name, (kind, allowed) in _SETTING_KINDS.items():
            value = getattr(self, name)
            if not (_is_kind(value, kind) or (value is None and name in _OPTIONAL)):
                raise bad(name, allowed)
        if len(self.qualities) < 2 or not all(0.0 < q < 1.0 for q in self.qualities):
            raise bad("qualities", "two or more numbers strictly between 0 and 1")
        if self.agents is not None and (len(self.agents) != len(self.qualities) or len(set(self.agents)) != len(
                self.agents)):
            raise bad("agents", f"{len(self.qualities)} distinct names, one per quality")
        if self.items < 1:
            raise bad("items", "an integer >= 1")
        large = large_allowed()
        if self.levels < 2 or (self.levels > MAX_LEVELS and not large):
            cells = self.raters * self.levels**2
            raise bad("levels", f"an integer from 2 to {MAX_LEVELS}" + ("" if self.levels < 2 else "; " + (
                beyond_size_bound(f"{self.levels:,} levels hold {self.raters:,} raters × {self.levels:,}² = "
                                  f"{cells:,} confusion cells (about {memory_text(cells * 8)})"))))
        if self.level_names is not None and (len(self.level_names) != self.levels
                                             or len(set(self.level_names)) != self.levels):
            raise bad("level_names", f"{self.levels} distinct names, worst first")
        if self.credit is not None and (len(self.credit) != self.levels
                                        or not all(math.isfinite(c) for c in self.credit)):
            raise bad("credit", f"{self.levels} finite numbers, one per level")
        if self.raters < 2:
            raise bad("raters", "an integer >= 2")
        if not 1 <= self.labels_per_response <= self.raters:
            raise bad("labels_per_response", f"an integer from 1 to raters ({self.raters})")
        judgments = self.items * self.n_agents * self.labels_per_response
        for name, cells, what in (
                ("items", judgments * self.levels, f"{judgments:,} judgments ({self.items:,} items × "
                 f"{self.n_agents} agents × {self.labels_per_response} per response) × {self.levels} levels"),
                ("raters", self.raters * self.levels**2, f"{self.raters:,} raters × {self.levels}² levels")):
            if cells > MAX_CELLS and not large:
                raise bad(name, f"a study of at most {MAX_CELLS:,} cells (about {MAX_CELLS * 8 / 2**30:.1f} GiB); "
                                + beyond_size_bound(f"{what} is {cells:,} cells (about {cells * 8 / 2**30:,.1f} GiB)"))
        for name in ("accuracy", "shift"):
            low, high = getattr(self, name)
            if not 0.0 <= low <= high <= 1.0:
                raise bad(name, "two numbers low <= high in [0, 1]")
        for name in ("neighbour", "strict", "lenient", "adversarial", "hard", "hard_noise"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise bad(name, "a number in [0, 1]")
        if self.strict + self.lenient + self.adversarial > 1.0 + 1e-9:
            raise InputError("rater type fractions strict + lenient + adversarial add up to more than 1",
                             value=round(self.strict + self.lenient + self.adversarial, 6),
                             allowed="a total of at most 1 (the rest of the pool is reliable)")
        if self.adversarial_mode not in ADVERSARIAL_MODES:
            raise bad("adversarial_mode", ", ".join(ADVERSARIAL_MODES))

    # ------------------------------------------------------------------ derived
    @property
    def n_agents(self) -> int:
        return len(self.qualities)

    def agent_names(self) -> tuple[str, ...]:
        width = len(str(self.n_agents))
        return self.agents or tuple(f"agent{a + 1:0{width}d}" for a in range(self.n_agents))

    def level_labels(self) -> tuple[str, ...]:
        return self.level_names or tuple(str(c) for c in range(self.levels))

    def credit_array(self) -> np.ndarray:
        return default_credit(self.levels) if self.credit is None else np.asarray(self.credit, dtype=float)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dictionary (tuples as lists)."""
        return {key: (list(value) if isinstance(value, tuple) else value)
                for key, value in dataclasses.asdict(self).items()}

    def replace(self, **changes: Any) -> SimulationConfig:
        """A copy with some settings changed (validated)."""
        return dataclasses.replace(self, **changes)


def level_distribution(qualities: Sequence[float] | np.ndarray, n_levels: int) -> np.ndarray:
    """(A, K) probability of each latent level per agent: ``Binomial(K - 1, q)``.

    >>> level_distribution([0.5], 3).tolist()
    [[0.25, 0.5, 0.25]]
    """
    q = np.asarray(qualities, dtype=float)[:, None]
    c = np.arange(n_levels)[None, :]
    comb = np.array([math.comb(n_levels - 1, int(k)) for k in range(n_levels)], dtype=float)[None, :]
    return np.asarray(comb * q**c * (1.0 - q) ** (n_levels - 1 - c))


def true_scores(config: SimulationConfig) -> np.ndarray:
    """(A,) exact expected credit of each agent's latent level, ``sum_c P(z = c) v(c)``."""
    return np.asarray(level_distribution(config.qualities, config.levels) @ config.credit_array())


@dataclass(frozen=True, eq=False)
class Simulation:
    """One simulated study: integer-coded judgments plus the whole truth.

    Responses are numbered item-major: response ``i * A + a`` is agent a's answer to item i.

    Attributes:
        config: the settings it was drawn from.
        response, rater, label: (M,) judgments (response code, rater code 0..R-1, level code 0..K-1).
        response_item, response_agent: (N,) item and agent of each response.
        level: (N,) true latent level of each response; ``hard``: (N,) whether it is a hard response.
        rater_type: (R,) codes into :data:`~stableval.simulate.raters.RATER_TYPES`.
        rater_accuracy, rater_shift: (R,) the drawn parameters (shift is 0 for reliable and adversarial raters).
        confusion: (R, K, K) each rater's true confusion matrix [rater, true, given].
        true_scores: (A,) exact expected credit per agent; ``sample_scores``: realised mean credit of ``level``.
    """

    config: SimulationConfig
    response: np.ndarray
    rater: np.ndarray
    label: np.ndarray
    response_item: np.ndarray
    response_agent: np.ndarray
    level: np.ndarray
    hard: np.ndarray
    rater_type: np.ndarray
    rater_accuracy: np.ndarray
    rater_shift: np.ndarray
    confusion: np.ndarray
    true_scores: np.ndarray
    sample_scores: np.ndarray = field(repr=False)

    @property
    def n_responses(self) -> int:
        return int(self.response_item.size)

    @property
    def n_judgments(self) -> int:
        return int(self.response.size)

    def frame(self) -> pd.DataFrame:
        """Long annotation frame ``item, agent, rater, label``, one row per judgment (labels are the level names
        when the config names the levels, integer codes 0..K-1 otherwise)."""
        items, agents, raters = self._names()
        names = self.config.level_names
        return pd.DataFrame({
            "item": items[self.response_item[self.response]],
            "agent": agents[self.response_agent[self.response]],
            "rater": raters[self.rater],
            "label": np.asarray(names, dtype=object)[self.label] if names else self.label.astype(np.int64),
        })

    def table(self) -> AnnotationTable:
        """The judgments as a normal :class:`AnnotationTable`, ready for every stableval method."""
        frame = self.frame()
        frame["label"] = self.label
        return AnnotationTable.from_frame(frame, levels=self.config.level_labels(), credit=self.config.credit_array(),
                                          source="<simulation>")

    def response_truth(self) -> pd.DataFrame:
        """One row per response: ``item, agent, level, level_name, credit, hard``."""
        items, agents, _ = self._names()
        return pd.DataFrame({
            "item": items[self.response_item],
            "agent": agents[self.response_agent],
            "level": self.level,
            "level_name": np.asarray(self.config.level_labels(), dtype=object)[self.level],
            "credit": self.config.credit_array()[self.level],
            "hard": self.hard,
        })

    def agent_truth(self) -> pd.DataFrame:
        """One row per agent: ``agent, quality, true_score`` (exact expectation), ``sample_score`` (realised)."""
        return pd.DataFrame({
            "agent": list(self.config.agent_names()),
            "quality": list(self.config.qualities),
            "true_score": self.true_scores,
            "sample_score": self.sample_scores,
        })

    def rater_truth(self) -> pd.DataFrame:
        """One row per rater: ``rater, type, accuracy, shift, judgments`` and ``p_true`` (chance of reporting
        the true level, averaged over the latent-level mix of all responses)."""
        _, _, raters = self._names()
        mix = np.bincount(self.level, minlength=self.config.levels) / max(self.n_responses, 1)
        diagonal = np.diagonal(self.confusion, axis1=1, axis2=2)
        return pd.DataFrame({
            "rater": raters,
            "type": np.asarray(RATER_TYPES, dtype=object)[self.rater_type],
            "accuracy": self.rater_accuracy,
            "shift": self.rater_shift,
            "judgments": np.bincount(self.rater, minlength=self.config.raters),
            "p_true": diagonal @ mix,
        })

    def _names(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        config = self.config
        items = np.array([f"i{i:0{len(str(config.items))}d}" for i in range(config.items)], dtype=object)
        raters = np.array([f"r{r:0{len(str(config.raters))}d}" for r in range(config.raters)], dtype=object)
        return items, np.asarray(config.agent_names(), dtype=object), raters


def assign_raters(rng: np.random.Generator, n_responses: int, n_raters: int, per_response: int) -> np.ndarray:
    """(N, L) distinct raters per response, each set uniform over the L-subsets of the pool."""
    out = np.empty((n_responses, per_response), dtype=np.int32)
    rows = max(1, _ASSIGN_CELLS // n_raters)
    for start in range(0, n_responses, rows):  # chunks bound the memory of the random keys
        stop = min(n_responses, start + rows)
        keys = rng.random((stop - start, n_raters))
        out[start:stop] = np.argpartition(keys, per_response - 1, axis=1)[:, :per_response] if (
            per_response < n_raters) else np.argsort(keys, axis=1)
    return out


def simulate(config: SimulationConfig, seed: int | np.random.SeedSequence | np.random.Generator | None = 0
             ) -> Simulation:
    """Draw one study from ``config`` (see the module docstring for the model); reproducible from ``seed``."""
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    k, n_agents, n_raters, per = config.levels, config.n_agents, config.raters, config.labels_per_response
    n = config.items * n_agents
    response_item = np.repeat(np.arange(config.items, dtype=np.int32), n_agents)
    response_agent = np.tile(np.arange(n_agents, dtype=np.int32), config.items)

    # raters: fixed type proportions, shuffled over the pool; parameters drawn per rater
    counts = rater_type_counts(n_raters, {"strict": config.strict, "lenient": config.lenient,
                                          "adversarial": config.adversarial})
    rater_type = rng.permutation(np.repeat(np.arange(len(RATER_TYPES)), [counts[t] for t in RATER_TYPES]))
    accuracy = rng.uniform(*config.accuracy, size=n_raters)
    shift = rng.uniform(*config.shift, size=n_raters)
    shifted = np.isin(rater_type, [RATER_TYPES.index("strict"), RATER_TYPES.index("lenient")])
    shift = np.where(shifted, shift, 0.0)
    confusion = population_confusion(rater_type, accuracy, shift, k, neighbour=config.neighbour,
                                      adversarial_mode=config.adversarial_mode)

    # latent levels and hard responses
    quality = np.asarray(config.qualities)
    level = rng.binomial(k - 1, quality[response_agent]).astype(np.int16)
    hard = rng.random(n) < config.hard

    # design: L distinct raters per response; labels from each rater's confusion row
    chosen = assign_raters(rng, n, n_raters, per)
    response = np.repeat(np.arange(n, dtype=np.int32), per)
    rater = chosen.ravel()
    cumulative = np.cumsum(confusion, axis=2)[rater, level[response], : k - 1]  # (M, K-1)
    label = (cumulative < rng.random(response.size)[:, None]).sum(axis=1).astype(np.int16)
    noisy = hard[response] & (rng.random(response.size) < config.hard_noise)
    label = np.where(noisy, rng.integers(0, k, size=response.size), label).astype(np.int16)

    credit = config.credit_array()
    sample = np.bincount(response_agent, weights=credit[level], minlength=n_agents) / config.items
    return Simulation(
        config=config, response=response, rater=rater, label=label, response_item=response_item,
        response_agent=response_agent, level=level, hard=hard, rater_type=rater_type, rater_accuracy=accuracy,
        rater_shift=shift, confusion=confusion, true_scores=true_scores(config), sample_scores=sample,
    )
