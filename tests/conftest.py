"""Fixtures shared by test modules of several packages (planted judges, a MedQA file, the expert-study data, tiny
neural models); the ``slow`` marker is declared in pyproject.toml."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest

from stableval.data.raters import load_with_raters
from stableval.evaluate.judges import judge_diagnostics

from nrp_data import study_frames
from synthetic import HIDDEN_COLUMNS, JUDGE_AGENTS, MEDQA_HEADER, MEDQA_ROWS, synthetic_judge_frame
from tiny_models import DUOT5_WORDS, TRANSFORMERS_MISSING

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="module")
def planted_judgments() -> pd.DataFrame:
    return synthetic_judge_frame(n_items=300, seed=0)


@pytest.fixture(scope="module")
def judge_files(planted_judgments: pd.DataFrame, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("judges")
    ratings = folder / "ratings.csv"
    planted_judgments.drop(columns=HIDDEN_COLUMNS).to_csv(ratings, index=False)
    agents = folder / "agents.csv"
    agents.write_text(JUDGE_AGENTS)
    return ratings, agents


@pytest.fixture(scope="module")
def judge_report(judge_files: tuple[Path, Path]) -> pd.DataFrame:
    ratings, agents = judge_files
    loaded, info, lengths = load_with_raters(ratings, rater_info=agents, length="words")
    assert info is not None and lengths is not None
    return judge_diagnostics(loaded.table, info, "stableval", lengths=lengths, bootstrap=400, seed=1).judges \
        .set_index("judge")


@pytest.fixture
def medqa_csv(tmp_path: Path) -> Path:
    path = tmp_path / "medqa.csv"
    path.write_text(MEDQA_HEADER + MEDQA_ROWS)
    return path


@pytest.fixture(scope="module")
def duot5_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    torch = pytest.importorskip("torch", reason="torch not installed (extra 'neural')")
    transformers = pytest.importorskip("transformers", reason="transformers not installed (extra 'neural')")
    pytest.importorskip("tokenizers", reason="tokenizers not installed (extra 'neural')")
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    directory = tmp_path_factory.mktemp("duot5")
    vocab = {token: i for i, token in enumerate(["<pad>", "</s>", "<unk>", *DUOT5_WORDS, ":"])}
    core = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    core.normalizer = normalizers.Lowercase()
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    core.post_processor = processors.TemplateProcessing(single="$A </s>", special_tokens=[("</s>", 1)])
    transformers.PreTrainedTokenizerFast(tokenizer_object=core, pad_token="<pad>", eos_token="</s>",
                                        unk_token="<unk>").save_pretrained(directory)
    torch.manual_seed(0)
    config = transformers.T5Config(vocab_size=len(vocab), d_model=16, d_kv=8, d_ff=32, num_layers=1, num_heads=2,
                                   decoder_start_token_id=0, pad_token_id=0, eos_token_id=1)
    transformers.T5ForConditionalGeneration(config).save_pretrained(directory)
    return directory


@pytest.fixture(scope="module")
def tiny_gpt2(tmp_path_factory: pytest.TempPathFactory) -> Path:
    torch = pytest.importorskip("torch", reason=TRANSFORMERS_MISSING)
    transformers = pytest.importorskip("transformers", reason=TRANSFORMERS_MISSING)
    pytest.importorskip("tokenizers", reason=TRANSFORMERS_MISSING)
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    directory = tmp_path_factory.mktemp("gpt2")
    core = Tokenizer(models.WordLevel(unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    sentences = ["Q: Can diabetes be cured? A: no it can be managed", "Question: what is flu fever Answer: a virus",
                 "You are a helpful medical knowledge assistant . Complete Answer: rest and drink water"]
    core.train_from_iterator(sentences, trainers.WordLevelTrainer(special_tokens=["<unk>", "<eos>"]))
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=core, unk_token="<unk>", eos_token="<eos>",
                                                pad_token="<eos>")
    fast.save_pretrained(directory)
    torch.manual_seed(0)
    config = transformers.GPT2Config(vocab_size=core.get_vocab_size(), n_positions=256, n_embd=32, n_layer=1,
                                     n_head=2, bos_token_id=1, eos_token_id=1)
    transformers.GPT2LMHeadModel(config).save_pretrained(directory)
    return directory


@pytest.fixture(scope="module")
def study_data():
    return study_frames()
