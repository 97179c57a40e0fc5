"""monoT5 ranker from a local model directory (Nogueira, Jiang, Pradeep & Lin 2020, "Document Ranking with a
Pretrained Sequence-to-Sequence Model"): the ranker Heineking et al. (2024) chose for NRP.

Input ``Query: {q} Document: {d} Relevant:`` (truncated to ``max_length`` tokens); score = log P("true") after
a softmax over the logits of the tokens "true" and "false" at the first decoding step, as in the paper and
PyGaggle/PyTerrier's MonoT5ReRanker. The model (``T5ForConditionalGeneration`` + tokenizer, e.g.
castorini/monot5-base-msmarco saved with ``save_pretrained``) is loaded with ``local_files_only=True``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from stableval.errors import InputError
from stableval.nrp.rankers import PointwiseRanker, ScoreCache, check_model_path, require_neural

__all__ = ["MonoT5Ranker"]


class MonoT5Ranker(PointwiseRanker):
    """Scores (query, text) pairs by monoT5's log-probability of "true"."""

    name = "monot5"

    def __init__(self, *, model_path: str | Path | None, device: str = "cpu", batch_size: int = 16,
                 max_length: int = 512, cache: ScoreCache | None = None, true_token: str = "▁true",
                 false_token: str = "▁false") -> None:
        require_neural(self.name)
        self.model_path = check_model_path(model_path, self.name)
        super().__init__(cache=cache, batch_size=batch_size)
        self.device = device
        self.max_length = max_length
        self.true_token, self.false_token = true_token, false_token
        self._model: Any = None
        self._tokenizer: Any = None
        self._ids: list[int] = []

    @property
    def identity(self) -> str:
        return f"monot5({self.model_path.resolve()},max_length={self.max_length})"

    def _token_id(self, token: str) -> int:
        tokenizer = self._tokenizer
        index = tokenizer.convert_tokens_to_ids(token)
        if index is None or index == tokenizer.unk_token_id:
            pieces = tokenizer(token.lstrip("▁"), add_special_tokens=False)["input_ids"]
            if not pieces:
                raise InputError("monoT5 tokenizer has no token for the relevance label", file=str(self.model_path),
                                 value=token, allowed="a T5 tokenizer with '▁true' and '▁false'")
            index = pieces[0]
        return int(index)

    def _load(self) -> tuple[Any, Any]:
        if self._model is None:
            from transformers import AutoTokenizer, T5ForConditionalGeneration

            self._tokenizer = AutoTokenizer.from_pretrained(str(self.model_path), local_files_only=True)
            model: Any = T5ForConditionalGeneration.from_pretrained(str(self.model_path), local_files_only=True)
            self._model = model.to(self.device).eval()
            self._ids = [self._token_id(self.true_token), self._token_id(self.false_token)]
        return self._model, self._tokenizer

    def score_pairs(self, queries: Sequence[str], texts: Sequence[str]) -> np.ndarray:
        import torch

        model, tokenizer = self._load()
        start_id = model.config.decoder_start_token_id
        out = []
        with torch.inference_mode():
            for start in range(0, len(texts), self.batch_size):
                inputs = [f"Query: {q} Document: {d} Relevant:" for q, d in
                          zip(queries[start:start + self.batch_size], texts[start:start + self.batch_size],
                              strict=True)]
                batch = tokenizer(inputs, padding=True, truncation=True, max_length=self.max_length,
                                  return_tensors="pt").to(self.device)
                decoder = torch.full((len(inputs), 1), start_id, dtype=torch.long, device=self.device)
                logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"],
                               decoder_input_ids=decoder).logits[:, 0, self._ids].float()
                out.append(torch.log_softmax(logits, dim=-1)[:, 0].cpu().numpy())
        return np.concatenate(out) if out else np.zeros(0)
