"""The monoT5 ranker on a tiny random T5 built on disk (no download); skipped without the 'neural' extra."""

from __future__ import annotations

import numpy as np
import pytest

from stableval.errors import InputError

torch = pytest.importorskip("torch")


transformers = pytest.importorskip("transformers")


tokenizers = pytest.importorskip("tokenizers")


def test_monot5_scores_are_log_probabilities(monot5_dir) -> None:
    from stableval.nrp.rankers import make_ranker

    ranker = make_ranker("monot5", model_path=monot5_dir, batch_size=2, max_length=32)
    assert ranker.identity == f"monot5({monot5_dir.resolve()},max_length=32)"  # the cache key prefix, kept
    ranker.true_token, ranker.false_token = "true", "false"
    docs, answers = ranker.score(["flu"], [["flu fever", "tax car"]], [["cough"]])
    scores = np.concatenate([docs[0], answers[0]])
    assert (scores < 0).all() and np.isfinite(scores).all()
    tok = transformers.AutoTokenizer.from_pretrained(monot5_dir)
    model = transformers.T5ForConditionalGeneration.from_pretrained(monot5_dir).eval()
    ids = tok(["Query: flu Document: cough Relevant:"], return_tensors="pt")
    with torch.no_grad():
        logits = model(**ids, decoder_input_ids=torch.zeros((1, 1), dtype=torch.long)).logits[0, 0]
    pair = logits[[tok.convert_tokens_to_ids("true"), tok.convert_tokens_to_ids("false")]]
    assert answers[0][0] == pytest.approx(torch.log_softmax(pair, -1)[0].item(), abs=1e-5)


@pytest.mark.skipif(torch.cuda.is_available(), reason="a CUDA GPU is here: the device works")
def test_monot5_on_a_missing_gpu_is_a_clear_error(monot5_dir) -> None:
    """monoT5 now shares duoT5's model loading (T5Ranker): a device torch cannot use is an input error naming
    --device, not a torch traceback (before, only duoT5 said so)."""
    from stableval.nrp.rankers import make_ranker

    ranker = make_ranker("monot5", model_path=monot5_dir, device="cuda")
    with pytest.raises(InputError, match=r"option 'device'.*cannot use this torch device.*got 'cuda'"):
        ranker.score(["flu"], [["flu fever"]])
