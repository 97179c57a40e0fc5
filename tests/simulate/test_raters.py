"""Synthetic rater types: stochastic, structured confusion matrices."""

from __future__ import annotations

import numpy as np

from stableval.simulate.raters import adversarial_confusion, reliable_confusion, shift_confusion


# ---------------------------------------------------------------------- raters
def test_confusion_matrices_are_stochastic_and_structured() -> None:
    accuracy = np.array([0.7, 0.9])
    for k in (2, 3, 5):
        reliable = reliable_confusion(accuracy, k)
        np.testing.assert_allclose(reliable.sum(axis=2), 1.0)
        np.testing.assert_allclose(np.diagonal(reliable, axis1=1, axis2=2), accuracy[:, None] * np.ones(k))
        reverse = adversarial_confusion(accuracy, k, "reverse")
        np.testing.assert_allclose(reverse, reliable[:, :, ::-1])  # level o reported as K-1-o
        np.testing.assert_allclose(adversarial_confusion(accuracy, k, "random"), 1.0 / k)
    # K = 5, accuracy 0.7: 80% of the 0.3 error mass to the neighbours of level 0 (only level 1)
    row0 = reliable_confusion(np.array([0.7]), 5)[0, 0]
    np.testing.assert_allclose(row0, [0.7, 0.24, 0.02, 0.02, 0.02])
    strict = shift_confusion(np.eye(3)[None], np.array([0.3]), -1)[0]
    np.testing.assert_allclose(strict, [[1, 0, 0], [0.3, 0.7, 0], [0, 0.3, 0.7]])
