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

import numpy as np

from stableval.nrp.rankers.base import PointwiseRanker, check_model_path, require_neural
from stableval.nrp.rankers.cache import ScoreCache
from stableval.nrp.rankers.t5 import T5Ranker

__all__ = ["MonoT5Ranker"]


class MonoT5Ranker(T5Ranker, PointwiseRanker):
    """Scores (query, text) pairs by monoT5's log-probability of "true"."""

    name = "monot5"

    def __init__(self, *, model_path: str | Path | None, device: str = "auto", batch_size: int = 16,
                 max_length: int = 512, cache: ScoreCache | None = None, true_token: str = "▁true",
                 false_token: str = "▁false", precision: str = "auto") -> None:
        require_neural(self.name)
        super().__init__(model_path=check_model_path(model_path, self.name), device=device, batch_size=batch_size,
                         max_length=max_length, cache=cache, true_token=true_token, false_token=false_token,
                         precision=precision)

    def score_pairs(self, queries: Sequence[str], texts: Sequence[str]) -> np.ndarray:
        logits = self.label_logits([f"Query: {q} Document: {d} Relevant:" for q, d in zip(queries, texts,
                                                                                         strict=True)])
        if not len(logits):
            return np.zeros(0)
        return np.asarray(logits[:, 0] - np.logaddexp(logits[:, 0], logits[:, 1]), dtype=float)  # log P("true")
