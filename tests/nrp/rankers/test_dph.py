"""DPH by hand and pointwise."""

from __future__ import annotations

import math

import numpy as np


def test_dph_by_hand_and_pointwise() -> None:
    from stableval.nrp.rankers.dph import DPHRanker

    # collection: "flu fever cough" (3 tokens), "tax forms" (2), "fever rest fever" (3): N = 3, avgdl = 8/3
    corpus = ["flu fever cough", "tax forms", "fever rest fever"]
    ranker = DPHRanker()
    ranker.prepare(corpus)
    docs, answers = ranker.score(["fever flu"], [corpus], [["fever fever fever"]])

    def weight(tf: float, dl: float, big_f: float) -> float:
        f = tf / dl
        return (1 - f) ** 2 / (tf + 1) * (tf * math.log2(tf * (8 / 3) / dl * 3 / big_f)
                                          + 0.5 * math.log2(2 * math.pi * tf * (1 - f)))

    by_hand = [weight(1, 3, 1) + weight(1, 3, 3), 0.0, weight(2, 3, 3)]  # F(flu) = 1, F(fever) = 3
    np.testing.assert_allclose(docs[0], by_hand, rtol=1e-12)
    assert answers[0][0] == 0.0  # a text made of the term only: f = 1, weight 0
