"""Synthetic rater types: each rater is one K×K confusion matrix ``pi[true, given]``.

The types follow the rater populations of the STABLEVAL stress tests (Bonagiri et al. 2026, arXiv:2605.02122,
Sections 3.2 and 5): the Dawid–Skene rater model (Dawid & Skene 1979, JRSS C 28(1)) with structured confusion
matrices.

* **reliable** — reports the true level with probability ``accuracy`` (drawn per rater from a range); of the
  error mass ``1 - accuracy``, the share ``neighbour`` goes to the adjacent levels (split equally), the rest is
  spread evenly over the other levels (all of it to the neighbours when there are no others).
* **strict** — a reliable rater whose report is then moved one level *down* (never below level 0) with
  probability ``shift`` (drawn per rater): ``pi = R @ D`` with ``D = (1 - shift) I + shift · down``.
* **lenient** — the same, one level *up* (never above level K-1).
* **adversarial** — ``"reverse"``: a reliable rater whose report is mirrored, level o becomes K-1-o
  (``pi = R @ J``, J the anti-identity); ``"random"``: uniform reports whatever the truth.

>>> import numpy as np
>>> reliable_confusion(np.array([0.8]), n_levels=3).round(3)[0]
array([[0.8 , 0.16, 0.04],
       [0.1 , 0.8 , 0.1 ],
       [0.04, 0.16, 0.8 ]])
>>> shift_confusion(np.eye(3)[None], np.array([0.5]), direction=-1)[0]
array([[1. , 0. , 0. ],
       [0.5, 0.5, 0. ],
       [0. , 0.5, 0.5]])
"""

from __future__ import annotations

import numpy as np

RATER_TYPES: tuple[str, ...] = ("reliable", "strict", "lenient", "adversarial")
ADVERSARIAL_MODES: tuple[str, ...] = ("reverse", "random")


def reliable_confusion(accuracy: np.ndarray, n_levels: int, neighbour: float = 0.8) -> np.ndarray:
    """(R, K, K) confusion matrices of reliable raters with the given accuracies.

    Errors go to the adjacent levels with total probability ``neighbour * (1 - accuracy)`` and to the other,
    non-adjacent levels with the rest (all to the adjacent levels when a row has no other level).
    """
    accuracy = np.asarray(accuracy, dtype=float)
    k = n_levels
    levels = np.arange(k)
    distance = np.abs(levels[:, None] - levels[None, :])
    adjacent = (distance == 1).astype(float)
    far = (distance >= 2).astype(float)
    n_adjacent = adjacent.sum(axis=1, keepdims=True)
    n_far = far.sum(axis=1, keepdims=True)
    share_adjacent = np.where(n_far > 0, neighbour, 1.0)  # rows without far levels give all errors to neighbours
    near_part = adjacent * share_adjacent / np.maximum(n_adjacent, 1.0)
    far_part = far * (1.0 - share_adjacent) / np.maximum(n_far, 1.0)
    error_shape = near_part + far_part  # (K, K), rows sum to 1, zero diagonal
    error = (1.0 - accuracy)[:, None, None]
    return np.asarray(accuracy[:, None, None] * np.eye(k) + error * error_shape)


def shift_confusion(confusion: np.ndarray, shift: np.ndarray, direction: int) -> np.ndarray:
    """Move each report one level down (``direction=-1``, strict) or up (``+1``, lenient) with probability
    ``shift`` per rater, clipped at the ends of the scale: ``pi @ ((1 - s) I + s · M)``."""
    k = confusion.shape[-1]
    target = np.clip(np.arange(k) + direction, 0, k - 1)
    move = np.eye(k)[target]  # move[o, o'] = 1 when o' is o shifted
    shift = np.asarray(shift, dtype=float)[:, None, None]
    kernel = (1.0 - shift) * np.eye(k) + shift * move  # (R, K, K)
    return np.asarray(confusion @ kernel)


def adversarial_confusion(accuracy: np.ndarray, n_levels: int, mode: str = "reverse",
                          neighbour: float = 0.8) -> np.ndarray:
    """(R, K, K) adversarial raters: a reliable rater's report mirrored (``"reverse"``) or uniform noise
    (``"random"``)."""
    if mode not in ADVERSARIAL_MODES:
        raise ValueError(f"adversarial mode {mode!r}; allowed: {', '.join(ADVERSARIAL_MODES)}")
    accuracy = np.asarray(accuracy, dtype=float)
    if mode == "random":
        return np.full((accuracy.size, n_levels, n_levels), 1.0 / n_levels)
    return np.asarray(reliable_confusion(accuracy, n_levels, neighbour)[:, :, ::-1])


def rater_type_counts(n_raters: int, fractions: dict[str, float]) -> dict[str, int]:
    """How many raters of each type a pool of ``n_raters`` holds (largest-remainder rounding; the rest reliable).

    >>> rater_type_counts(10, {"strict": 0.2, "lenient": 0.2, "adversarial": 0.1})
    {'reliable': 5, 'strict': 2, 'lenient': 2, 'adversarial': 1}
    >>> rater_type_counts(10, {"strict": 0.25, "lenient": 0.25})
    {'reliable': 5, 'strict': 3, 'lenient': 2, 'adversarial': 0}
    """
    special = [name for name in RATER_TYPES if name != "reliable"]
    wanted = np.array([fractions.get(name, 0.0) * n_raters for name in special])
    counts = np.floor(wanted + 1e-9).astype(int)
    leftover = round(wanted.sum()) - int(counts.sum())
    if leftover > 0:  # give the remaining raters to the largest remainders (first type on equal remainders)
        order = np.argsort(-(wanted - counts), kind="stable")
        counts[order[:leftover]] += 1
    result = {"reliable": int(n_raters - counts.sum())}
    result.update({name: int(c) for name, c in zip(special, counts, strict=True)})
    return result


def population_confusion(
    types: np.ndarray,
    accuracy: np.ndarray,
    shift: np.ndarray,
    n_levels: int,
    *,
    neighbour: float = 0.8,
    adversarial_mode: str = "reverse",
) -> np.ndarray:
    """(R, K, K) confusion matrices for raters of the given types (codes into :data:`RATER_TYPES`)."""
    types = np.asarray(types)
    confusion = reliable_confusion(accuracy, n_levels, neighbour)
    strict = types == RATER_TYPES.index("strict")
    lenient = types == RATER_TYPES.index("lenient")
    adversarial = types == RATER_TYPES.index("adversarial")
    if strict.any():
        confusion[strict] = shift_confusion(confusion[strict], shift[strict], -1)
    if lenient.any():
        confusion[lenient] = shift_confusion(confusion[lenient], shift[lenient], +1)
    if adversarial.any():
        confusion[adversarial] = adversarial_confusion(accuracy[adversarial], n_levels, adversarial_mode, neighbour)
    return confusion
