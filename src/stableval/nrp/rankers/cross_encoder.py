"""Cross-encoder ranker from a local model directory (Nogueira & Cho 2019, "Passage Re-ranking with BERT").

The query and the text are encoded together (``[CLS] query [SEP] text [SEP]``, truncated to ``max_length``
tokens, text side first) by a sequence-classification model loaded with ``local_files_only=True`` from
``model_path`` (users bring their own weights, e.g. a MS MARCO cross-encoder saved with ``save_pretrained``).
Score = the logit for one-label models, else logit(relevant) - logit(not relevant) (labels 1 and 0).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from stableval.nrp.rankers import PointwiseRanker, ScoreCache, check_model_path, require_neural

__all__ = ["CrossEncoderRanker"]


class CrossEncoderRanker(PointwiseRanker):
    """Scores (query, text) pairs with a local ``AutoModelForSequenceClassification``."""

    name = "cross-encoder"

    def __init__(self, *, model_path: str | Path | None, device: str = "cpu", batch_size: int = 32,
                 max_length: int = 512, cache: ScoreCache | None = None) -> None:
        require_neural(self.name)
        self.model_path = check_model_path(model_path, self.name)
        super().__init__(cache=cache, batch_size=batch_size)
        self.device = device
        self.max_length = max_length
        self._model: Any = None
        self._tokenizer: Any = None

    @property
    def identity(self) -> str:
        return f"cross-encoder({self.model_path.resolve()},max_length={self.max_length})"

    def _load(self) -> tuple[Any, Any]:
        if self._model is None:
            from transformers import AutoModelForSequenceClassification, AutoTokenizer

            self._tokenizer = AutoTokenizer.from_pretrained(str(self.model_path), local_files_only=True)
            model: Any = AutoModelForSequenceClassification.from_pretrained(str(self.model_path), local_files_only=True)
            self._model = model.to(self.device).eval()
        return self._model, self._tokenizer

    def score_pairs(self, queries: Sequence[str], texts: Sequence[str]) -> np.ndarray:
        import torch

        model, tokenizer = self._load()
        out = []
        with torch.inference_mode():
            for start in range(0, len(texts), self.batch_size):
                batch = tokenizer(list(queries[start:start + self.batch_size]),
                                  list(texts[start:start + self.batch_size]), padding=True,
                                  truncation="only_second", max_length=self.max_length, return_tensors="pt")
                logits = model(**{k: v.to(self.device) for k, v in batch.items()}).logits.float()
                out.append((logits[:, 0] if logits.shape[1] == 1 else logits[:, 1] - logits[:, 0]).cpu().numpy())
        return np.concatenate(out) if out else np.zeros(0)
