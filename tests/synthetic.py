"""Synthetic data shared by the tests (deterministic from a seed): rating tables and frames, response matrices,
planted judges, small MedQA and DDx sets."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp

from stableval.data.table import AnnotationTable
from stableval.datasets.ddx import DDxAnnotations
from stableval.simulate.simulator import SimulationConfig, simulate


def synthetic_frame(
    n_items: int = 200,
    n_raters: int = 15,
    n_levels: int = 3,
    per_item: int = 4,
    agents: tuple[str, ...] = ("A", "B", "C"),
    quality: tuple[float, ...] = (0.8, 0.5, 0.3),
    seed: int = 0,
) -> tuple[pd.DataFrame, pd.Series]:
    """Frame ``item, agent, rater, label`` (integer labels) and the true level per (item, agent).

    Each agent's true level is drawn around its quality; raters are mostly reliable (accuracy 0.65-0.95,
    errors to neighbouring levels), one in five is noisy (uniform labels).
    """
    rng = np.random.default_rng(seed)
    k = n_levels
    rows = []
    truth = {}
    accuracy = rng.uniform(0.65, 0.95, n_raters)
    noisy = rng.random(n_raters) < 0.2
    for a, agent in enumerate(agents):
        probs = np.array([quality[a] ** (k - 1 - c) * (1 - quality[a]) ** c for c in range(k)])
        probs /= probs.sum()
        levels = rng.choice(k, size=n_items, p=probs[::-1])
        for i in range(n_items):
            z = int(levels[i])
            truth[(f"i{i}", agent)] = z
            for r in rng.choice(n_raters, size=per_item, replace=False):
                if noisy[r]:
                    y = int(rng.integers(k))
                elif rng.random() < accuracy[r]:
                    y = z
                else:
                    y = int(np.clip(z + rng.choice([-1, 1]), 0, k - 1))
                rows.append((f"i{i}", agent, f"r{r}", y))
    frame = pd.DataFrame(rows, columns=["item", "agent", "rater", "label"])
    return frame, pd.Series(truth)


def synthetic_judge_frame(
    n_items: int = 300,
    agents: tuple[tuple[str, str], ...] = (("gpt-big", "gpt"), ("gpt-small", "gpt"), ("claude-x", "claude"),
                                           ("llama-y", "llama")),
    judges: tuple[tuple[str, str, float, float], ...] = (("judge-gpt", "gpt", 0.3, 0.08),
                                                         ("judge-claude", "claude", 0.0, 0.0)),
    n_humans: int = 8,
    per_response: int = 3,
    human_accuracy: float = 0.85,
    judge_accuracy: float = 0.85,
    seed: int = 0,
) -> pd.DataFrame:
    """People and LLM judges rating the same answers, with planted self-preference and verbosity bias.

    Three levels (credit 0, 0.5, 1). Each answer has a true level and a length (uniform 50–550 words, independent
    of the level). ``per_response`` of ``n_humans`` people judge every answer (correct with ``human_accuracy``,
    else a neighbouring level). Each judge ``(name, family, self_up, length_up)`` judges every answer: a correct
    or neighbouring level as people do, then moved one level up (never above the top) with probability
    ``self_up`` when the agent is of its own family, then again with probability ``0.15 + length_up · z``, z the
    answer's standardised length. Columns: ``item, agent, rater, label, rater_kind, rater_family, words,
    agent_family, truth``, ``expected_credit`` (a judge's expected credit for that answer under this process),
    ``self_effect`` and ``length_effect`` (the expected credit each planted bias adds; NaN for people), from which
    the planted values follow exactly: self-preference = mean self_effect on own-family answers, length slope =
    least-squares slope of length_effect on the standardised length.
    """
    rng = np.random.default_rng(seed)
    k = 3
    credit = np.array([0.0, 0.5, 1.0])
    names = np.array([a for a, _ in agents], dtype=object)
    families = np.array([f for _, f in agents], dtype=object)
    n_resp = n_items * len(agents)
    item = np.repeat(np.arange(n_items), len(agents))
    agent = np.tile(np.arange(len(agents)), n_items)
    truth = rng.integers(0, k, n_resp)
    words = rng.integers(50, 551, n_resp).astype(float)
    z = (words - words.mean()) / words.std()

    def noisy(levels: np.ndarray, accuracy: float) -> np.ndarray:
        wrong = rng.random(levels.size) > accuracy
        step = np.where(rng.random(levels.size) < 0.5, -1, 1)
        moved = levels + step
        moved = np.where((moved < 0) | (moved >= k), levels - step, moved)
        return np.where(wrong, moved, levels)

    def confusion_row(levels: np.ndarray, accuracy: float) -> np.ndarray:
        rows = np.zeros((levels.size, k))
        rows[np.arange(levels.size), levels] = accuracy
        for c in range(k):  # a neighbour half the time each; at the ends both halves go to the one neighbour
            at = levels == c
            for s in (-1, 1):
                target = c + s if 0 <= c + s < k else c - s
                rows[at, target] += (1 - accuracy) / 2
        return rows

    def up(dist: np.ndarray, p: np.ndarray) -> np.ndarray:
        out = dist * (1 - p)[:, None]
        out[:, 1:] += dist[:, :-1] * p[:, None]
        out[:, -1] += dist[:, -1] * p
        return out

    parts = []
    raters = np.array([f"h{r}" for r in range(n_humans)], dtype=object)
    chosen = np.argsort(rng.random((n_resp, n_humans)), axis=1)[:, :per_response]
    for slot in range(per_response):
        parts.append(pd.DataFrame({"resp": np.arange(n_resp), "rater": raters[chosen[:, slot]],
                                   "label": noisy(truth, human_accuracy), "rater_kind": "human",
                                   "rater_family": "", "expected_credit": np.nan, "self_effect": np.nan,
                                   "length_effect": np.nan}))
    for name, family, self_up, length_up in judges:
        own = (families[agent] == family).astype(float)
        p_length = np.clip(0.15 + length_up * z, 0.0, 1.0) if length_up else np.zeros(n_resp)
        label = noisy(truth, judge_accuracy)
        for p in (self_up * own, p_length):
            step = rng.random(n_resp) < p
            label = np.minimum(label + step, k - 1)
        plain = confusion_row(truth, judge_accuracy)
        with_self = up(plain, self_up * own)
        both = up(with_self, p_length)
        parts.append(pd.DataFrame({"resp": np.arange(n_resp), "rater": name, "label": label, "rater_kind": "llm",
                                   "rater_family": family, "expected_credit": both @ credit,
                                   "self_effect": (with_self - plain) @ credit,
                                   "length_effect": (both - with_self) @ credit}))
    frame = pd.concat(parts, ignore_index=True)
    resp = frame.pop("resp").to_numpy()
    frame.insert(0, "item", [f"q{i}" for i in item[resp]])
    frame.insert(1, "agent", names[agent[resp]])
    frame["words"] = words[resp]
    frame["agent_family"] = families[agent[resp]]
    frame["truth"] = truth[resp]
    return frame


def simulated_matrix(n_responses: int, n_raters: int = 60, per_response: int = 4, seed: int = 0, *,
                     n_levels: int = 3, skill_low: float = 0.55) -> sp.csr_matrix:
    """Response matrix (responses × rater·K) of a Dawid–Skene simulation: raters right ``skill_low``-95% of the
    time, wrong answers uniform over the other levels, ``per_response`` distinct raters per response."""
    k = n_levels
    rng = np.random.default_rng(seed)
    truth = rng.choice(k, size=n_responses, p=[0.3, 0.3, 0.4] if k == 3 else None)
    skill = rng.uniform(skill_low, 0.95, n_raters)
    response = np.repeat(np.arange(n_responses), per_response)
    rater = ((rng.integers(0, n_raters, n_responses)[:, None] + np.arange(per_response) * 7) % n_raters).ravel()
    right = rng.random(response.size) < skill[rater]
    label = np.where(right, truth[response], (truth[response] + rng.integers(1, k, response.size)) % k)
    return sp.csr_matrix((np.ones(response.size), (response, rater * k + label)), shape=(n_responses, n_raters * k))


def synthetic_table(seed: int = 0, **kwargs: object) -> AnnotationTable:
    frame, _ = synthetic_frame(seed=seed, **kwargs)  # type: ignore[arg-type]
    return AnnotationTable.from_frame(frame, levels=("0", "1", "2"))


def varying_frame(seed: int = 3, drop: float = 0.25) -> pd.DataFrame:
    frame, _ = synthetic_frame(n_items=60, n_raters=8, per_item=4, seed=seed)
    rng = np.random.default_rng(seed)
    return frame.loc[rng.random(len(frame)) > drop].reset_index(drop=True)


def certain_ddx_cases(n_cases: int, n_conditions: int, seed: int) -> tuple[DDxAnnotations, np.ndarray]:
    """Cases whose rankings all share one top condition (plus varied lower groups): every draw has that truth."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, n_conditions, n_cases)
    cases = []
    for i in range(n_cases):
        others = [int(c) for c in rng.permutation(n_conditions) if c != truth[i]]
        cases.append([[[int(truth[i])], others[: 1 + r]] for r in range(1 + i % 4)])
    risks = np.arange(n_conditions) % 3
    return DDxAnnotations.from_selectors(cases, conditions=[f"c{j}" for j in range(n_conditions)],
                                         risks=risks), truth


def yes_no_table() -> AnnotationTable:
    frame = pd.DataFrame({
        "item": ["q1"] * 3 + ["q2"] * 3 + ["q3"] * 3 + ["q4"] * 2,
        "agent": "A",
        "rater": ["a", "b", "c"] * 3 + ["b", "a"],
        "label": [1, 1, 1, 0, 0, 0, 1, 0, 1, 1, 0],
    })
    return AnnotationTable.from_frame(frame, levels=("no", "yes"))


def planted_table(seed: int = 3) -> tuple[AnnotationTable, int]:
    """40 responses, 8 raters each; the raters are right 90% of the time except on one response (item i7), where
    they answer at random; rater s0 always says level 0 (a spammer). Returns the table and i7's row."""
    rng = np.random.default_rng(seed)
    items = [f"i{i}" for i in range(40)]
    truth = rng.integers(3, size=40)
    rows = []
    for i, item in enumerate(items):
        for r in range(8):
            if item == "i7":
                label = int(rng.integers(3))
            else:
                label = int(truth[i]) if rng.random() < 0.9 else int(rng.integers(3))
            rows.append((item, "A", f"r{r}", label))
        rows.append((item, "A", "s0", 0))
    frame = pd.DataFrame(rows, columns=["item", "agent", "rater", "label"])
    table = AnnotationTable.from_frame(frame, levels=("a", "b", "c"))
    return table, list(table.items).index("i7")


JUDGE_AGENTS = "name,kind,family\ngpt-big,agent,gpt\ngpt-small,agent,gpt\nclaude-x,agent,claude\nllama-y,agent,llama\n"


HIDDEN_COLUMNS = ["agent_family", "truth", "expected_credit", "self_effect", "length_effect"]


MEDQA_HEADER = ("qid,worker_id,answer_idx,blind_answerable,blind_answers,info_missing,important_info_missing,"
          "seen_change,seen_answerable,seen_answers\n")


# q1: clean. q2: all raters flag important info missing. q3: all keep a blind answer that is not the key
# (label error). q4: all change to two answers incl. the key (multiple answers). q5: one of three rejects the key
# (changed to "not answerable"); one accepts after changing; one agreed blind. q6: two of four flag missing info.
MEDQA_ROWS = """\
1,a,A,TRUE,['A'],FALSE,FALSE,FALSE,,
1,b,A,TRUE,['A'],FALSE,FALSE,FALSE,,
1,c,A,TRUE,['A'],FALSE,FALSE,FALSE,,
2,a,B,TRUE,['B'],TRUE,TRUE,FALSE,,
2,b,B,TRUE,['B'],TRUE,TRUE,FALSE,,
2,c,B,TRUE,['B'],TRUE,TRUE,FALSE,,
3,a,C,TRUE,['A'],FALSE,FALSE,FALSE,,
3,b,C,TRUE,['A'],FALSE,FALSE,FALSE,,
3,c,C,TRUE,"['A', 'B']",FALSE,FALSE,TRUE,TRUE,['A']
4,a,D,TRUE,['C'],FALSE,FALSE,TRUE,TRUE,"['C', 'D']"
4,b,D,TRUE,['D'],FALSE,FALSE,TRUE,TRUE,"['D', 'C']"
4,c,D,TRUE,['C'],FALSE,FALSE,TRUE,TRUE,"['C', 'D', 'A']"
5,a,A,TRUE,['B'],FALSE,FALSE,TRUE,TRUE,['A']
5,b,A,TRUE,['A'],FALSE,FALSE,FALSE,,
5,c,A,TRUE,['C'],FALSE,FALSE,TRUE,FALSE,
6,a,B,TRUE,['B'],TRUE,TRUE,FALSE,,
6,b,B,TRUE,['B'],TRUE,TRUE,FALSE,,
6,c,B,TRUE,['B'],FALSE,FALSE,FALSE,,
6,d,B,FALSE,,FALSE,FALSE,TRUE,TRUE,['B']
"""


LOW_MID_HIGH = ("low", "mid", "high")


def small_three_level_table() -> AnnotationTable:
    frame, _ = synthetic_frame(n_items=20, n_raters=6, per_item=3, seed=4)
    return AnnotationTable.from_frame(frame, levels=LOW_MID_HIGH)


def write_table(table: AnnotationTable, folder: Path) -> Path:
    path = folder / "ratings.csv"
    table.to_frame().to_csv(path, index=False)
    return path


def stability_hand_table() -> AnnotationTable:
    """Three agents, one item each, three raters (labels r1, r2, r3):

    A: (2, 2, 1) -> MV 2 (credit 1)      all raters: A > B > C
    B: (1, 1, 2) -> MV 1 (credit 0.5)    r3 alone:   B > A > C  (one discordant pair of three: tau-b = 1/3)
    C: (0, 0, 0) -> MV 0 (credit 0)      r1 or r2 alone: the full ranking (tau-b = 1)
    """
    labels = {"A": (2, 2, 1), "B": (1, 1, 2), "C": (0, 0, 0)}
    rows = [("q1", agent, f"r{r + 1}", value) for agent, values in labels.items() for r, value in enumerate(values)]
    frame = pd.DataFrame(rows, columns=["item", "agent", "rater", "label"])
    return AnnotationTable.from_frame(frame, levels=LOW_MID_HIGH)


def integer_labels_from_one(seed: int = 0) -> pd.DataFrame:
    """A crowd-kit-style frame (task, worker, label) whose labels are 1..3: read as integer codes, the table gets a
    level 0 that no rater gave. 120 tasks, 10 workers, 3 labels per task (the simulator's rater mix)."""
    frame = simulate(SimulationConfig(items=20, raters=10, labels_per_response=3, levels=3), seed=seed).frame()
    return pd.DataFrame({"task": frame["item"] + "/" + frame["agent"], "worker": frame["rater"],
                         "label": frame["label"].astype(int) + 1})
