"""Small synthetic rating tables for tests (deterministic from a seed)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import scipy.sparse as sp


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
