"""Tiny random neural rankers built on disk (no download) for the neural ranker tests; a test using them skips
without the 'neural' extra."""

from __future__ import annotations

from pathlib import Path

import pytest

from tiny_models import save_tokenizer


@pytest.fixture(scope="module")
def cross_encoder_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("tokenizers")
    directory = tmp_path_factory.mktemp("ce")
    size = save_tokenizer(directory, bert=True)
    torch.manual_seed(0)
    config = transformers.BertConfig(vocab_size=size, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                     intermediate_size=32, max_position_embeddings=64, num_labels=1)
    transformers.BertForSequenceClassification(config).save_pretrained(directory)
    return directory


@pytest.fixture(scope="module")
def monot5_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("tokenizers")
    directory = tmp_path_factory.mktemp("t5")
    size = save_tokenizer(directory, bert=False)
    torch.manual_seed(0)
    config = transformers.T5Config(vocab_size=size, d_model=16, d_kv=8, d_ff=32, num_layers=1, num_heads=2,
                                   decoder_start_token_id=0, pad_token_id=0, eos_token_id=1)
    transformers.T5ForConditionalGeneration(config).save_pretrained(directory)
    return directory
