"""Small synthetic rating tables for tests (deterministic from a seed)."""

from __future__ import annotations

import numpy as np
import pandas as pd


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
