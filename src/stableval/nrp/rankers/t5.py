"""What monoT5 and duoT5 share: a local T5 relevance model that answers "true" or "false" at its first decoding
step (Nogueira, Jiang, Pradeep & Lin 2020; Pradeep, Nogueira & Lin 2021).

:class:`T5Ranker` holds the model settings (directory, device, batch size, truncation, the two label tokens),
loads ``T5ForConditionalGeneration`` and its tokenizer with ``local_files_only=True`` on first use, and gives the
logits of the two label tokens for many prompts (:meth:`T5Ranker.label_logits`, length-bucketed batches); monoT5
turns them into
log P("true"), duoT5 into P(a beats b). Scores are cached under :attr:`T5Ranker.identity`: the model directory and
``max_length``.

>>> from stableval.nrp.rankers.monot5 import MonoT5Ranker
>>> from stableval.nrp.rankers.duot5 import DuoT5Ranker
>>> issubclass(MonoT5Ranker, T5Ranker) and issubclass(DuoT5Ranker, T5Ranker)
True
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from stableval.errors import InputError
from stableval.nrp.rankers.base import Ranker
from stableval.nrp.rankers.cache import ScoreCache
from stableval.nrp.rankers.inference import autocast_dtype, precision_name, resolve_device, run_batches, to_device

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = ["T5Ranker"]


class T5Ranker(Ranker):
    """A ranker built on a local T5 relevance model (``model_path``; ``None`` only when a subclass replaces the
    model, as duoT5's ``pair_scorer`` does in tests). It sets ``cache`` and ``batch_size`` itself, so a
    :class:`~stableval.nrp.rankers.PointwiseRanker` subclass (monoT5) needs no second ``__init__``. On CUDA monoT5
    runs in bf16 by default (T5's activations overflow fp16; :mod:`stableval.nrp.rankers.inference`)."""

    #: The half precision ``precision="auto"`` uses on CUDA.
    half = "bf16"

    def __init__(self, *, model_path: Path | None, device: str, batch_size: int, max_length: int,
                 cache: ScoreCache | None, true_token: str, false_token: str, precision: str = "auto") -> None:
        self.model_path = model_path
        self.device, self.batch_size, self.max_length = resolve_device(device), batch_size, max_length
        self.precision = precision
        self.dtype = autocast_dtype(self.device, precision, half=self.half) if model_path is not None else None
        self.cache = cache if cache is not None else ScoreCache()
        self.true_token, self.false_token = true_token, false_token
        self._model: Any = None
        self._tokenizer: Any = None
        self._ids: list[int] = []

    @property
    def identity(self) -> str:
        model = self.model_path.resolve() if self.model_path is not None else "custom"
        runs_in = precision_name(self.device, self.precision, half=self.half) if self.model_path is not None \
            else "fp32"
        return (f"{type(self).name}({model},max_length={self.max_length}"
                + ("" if runs_in == "fp32" else f",precision={runs_in}") + ")")

    def _load(self) -> tuple[Any, Any]:
        """The model (on ``device``, in eval mode) and its tokenizer, loaded once."""
        if self._model is None:
            from transformers import AutoTokenizer, T5ForConditionalGeneration

            self._tokenizer = AutoTokenizer.from_pretrained(str(self.model_path), local_files_only=True)
            model: Any = T5ForConditionalGeneration.from_pretrained(str(self.model_path), local_files_only=True)
            self._model = to_device(model, self.device)
            self._ids = [self._token_id(token) for token in (self.true_token, self.false_token)]
        return self._model, self._tokenizer

    def _token_id(self, token: str) -> int:
        """The vocabulary id of a label token (its first word piece when the tokenizer lacks it whole)."""
        tokenizer = self._tokenizer
        index = tokenizer.convert_tokens_to_ids(token)
        if index is None or index == tokenizer.unk_token_id:
            pieces = tokenizer(token.lstrip("▁"), add_special_tokens=False)["input_ids"]
            if not pieces:
                raise InputError(f"{type(self).name} tokenizer has no token for the relevance label",
                                 file=str(self.model_path), value=token,
                                 allowed="a T5 tokenizer with '▁true' and '▁false'")
            index = pieces[0]
        return int(index)

    def label_logits(self, prompts: Sequence[str]) -> np.ndarray:
        """The logits of the "true" and "false" tokens at the first decoding step, one row per prompt (each
        truncated to ``max_length`` tokens): every prompt in length-bucketed batches, as float64."""
        import torch

        model, tokenizer = self._load()
        start = model.config.decoder_start_token_id

        def forward(batch: dict[str, torch.Tensor]) -> torch.Tensor:
            ids = batch["input_ids"]
            decoder = torch.full((len(ids), 1), start, dtype=torch.long, device=ids.device)
            logits: torch.Tensor = model(input_ids=ids, attention_mask=batch["attention_mask"],
                                         decoder_input_ids=decoder).logits[:, 0, self._ids]
            return logits

        return run_batches(tokenizer, forward, prompts, device=self.device, batch_size=self.batch_size,
                           max_length=self.max_length, dtype=self.dtype)
