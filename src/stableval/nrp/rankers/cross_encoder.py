"""Cross-encoder ranker from a local model directory (Nogueira & Cho 2019, "Passage Re-ranking with BERT").

The query and the text are encoded together (``[CLS] query [SEP] text [SEP]``, truncated to ``max_length``
tokens, text side first) by a sequence-classification model loaded with ``local_files_only=True`` from
``model_path`` (users bring their own weights, e.g. a MS MARCO cross-encoder saved with ``save_pretrained``).
Score = the logit for one-label models, else logit(relevant) - logit(not relevant) (labels 1 and 0). Batches are
length-bucketed and run in fp16 on CUDA by default (:mod:`stableval.nrp.rankers.inference`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from stableval.nrp.rankers.base import PointwiseRanker, check_model_path, require_neural
from stableval.nrp.rankers.cache import ScoreCache
from stableval.nrp.rankers.inference import autocast_dtype, precision_name, resolve_device, run_batches, to_device

__all__ = ["CrossEncoderRanker"]


class CrossEncoderRanker(PointwiseRanker):
    """Scores (query, text) pairs with a local ``AutoModelForSequenceClassification``."""

    name = "cross-encoder"
    #: The half precision ``precision="auto"`` uses on CUDA.
    half = "fp16"

    def __init__(self, *, model_path: str | Path | None, device: str = "auto", batch_size: int = 32,
                 max_length: int = 512, cache: ScoreCache | None = None, precision: str = "auto") -> None:
        require_neural(self.name)
        self.model_path = check_model_path(model_path, self.name)
        super().__init__(cache=cache, batch_size=batch_size)
        self.device = resolve_device(device)
        self.max_length = max_length
        self.precision = precision
        self.dtype = autocast_dtype(self.device, precision, half=self.half)
        self._model: Any = None
        self._tokenizer: Any = None

    @property
    def identity(self) -> str:
        runs_in = precision_name(self.device, self.precision, half=self.half)
        return (f"cross-encoder({self.model_path.resolve()},max_length={self.max_length}"
                + ("" if runs_in == "fp32" else f",precision={runs_in}") + ")")

    def _load(self) -> tuple[Any, Any]:
        if self._model is None:
            from transformers import AutoModelForSequenceClassification, AutoTokenizer

            self._tokenizer = AutoTokenizer.from_pretrained(str(self.model_path), local_files_only=True)
            model: Any = AutoModelForSequenceClassification.from_pretrained(str(self.model_path), local_files_only=True)
            self._model = to_device(model, self.device)
        return self._model, self._tokenizer

    def score_pairs(self, queries: Sequence[str], texts: Sequence[str]) -> np.ndarray:
        model, tokenizer = self._load()

        def forward(batch: dict[str, Any]) -> Any:
            logits = model(**batch).logits.float()
            return logits[:, 0] if logits.shape[1] == 1 else logits[:, 1] - logits[:, 0]

        return run_batches(tokenizer, forward, queries, texts, device=self.device, batch_size=self.batch_size,
                           max_length=self.max_length, dtype=self.dtype, truncation="only_second")
