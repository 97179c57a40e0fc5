"""What monoT5 and duoT5 share: a local T5 relevance model that answers "true" or "false" at its first decoding
step (Nogueira, Jiang, Pradeep & Lin 2020; Pradeep, Nogueira & Lin 2021).

:class:`T5Ranker` holds the model settings (directory, device, batch size, truncation, the two label tokens),
loads ``T5ForConditionalGeneration`` and its tokenizer with ``local_files_only=True`` on first use, and gives the
logits of the two label tokens for a batch of prompts (:meth:`T5Ranker.label_logits`); monoT5 turns them into
log P("true"), duoT5 into P(a beats b). Scores are cached under :attr:`T5Ranker.identity`: the model directory and
``max_length``.

>>> from stableval.nrp.rankers.monot5 import MonoT5Ranker
>>> from stableval.nrp.rankers.duot5 import DuoT5Ranker
>>> issubclass(MonoT5Ranker, T5Ranker) and issubclass(DuoT5Ranker, T5Ranker)
True
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from stableval.errors import InputError
from stableval.nrp.rankers import Ranker, ScoreCache

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = ["T5Ranker"]


class T5Ranker(Ranker):
    """A ranker built on a local T5 relevance model (``model_path``; ``None`` only when a subclass replaces the
    model, as duoT5's ``pair_scorer`` does in tests). It sets ``cache`` and ``batch_size`` itself, so a
    :class:`~stableval.nrp.rankers.PointwiseRanker` subclass (monoT5) needs no second ``__init__``."""

    def __init__(self, *, model_path: Path | None, device: str, batch_size: int, max_length: int,
                 cache: ScoreCache | None, true_token: str, false_token: str) -> None:
        self.model_path = model_path
        self.device, self.batch_size, self.max_length = device, batch_size, max_length
        self.cache = cache if cache is not None else ScoreCache()
        self.true_token, self.false_token = true_token, false_token
        self._model: Any = None
        self._tokenizer: Any = None
        self._ids: list[int] = []

    @property
    def identity(self) -> str:
        model = self.model_path.resolve() if self.model_path is not None else "custom"
        return f"{type(self).name}({model},max_length={self.max_length})"

    def _load(self) -> tuple[Any, Any]:
        """The model (on ``device``, in eval mode) and its tokenizer, loaded once."""
        if self._model is None:
            from transformers import AutoTokenizer, T5ForConditionalGeneration

            self._tokenizer = AutoTokenizer.from_pretrained(str(self.model_path), local_files_only=True)
            model: Any = T5ForConditionalGeneration.from_pretrained(str(self.model_path), local_files_only=True)
            try:
                self._model = model.to(self.device).eval()
            except (RuntimeError, AssertionError, ValueError) as error:
                raise InputError(f"cannot use this torch device ({str(error).splitlines()[0]})", column="--device",
                                 value=self.device, allowed="cpu, or cuda / cuda:N where a CUDA GPU and a CUDA "
                                                            "build of torch are installed") from None
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

    def label_logits(self, prompts: list[str]) -> torch.Tensor:
        """The logits of the "true" and "false" tokens at the first decoding step, one row per prompt (each
        truncated to ``max_length`` tokens); call it under ``torch.inference_mode()``."""
        import torch

        model, tokenizer = self._load()
        batch = tokenizer(prompts, padding=True, truncation=True, max_length=self.max_length,
                          return_tensors="pt").to(self.device)
        decoder = torch.full((len(prompts), 1), model.config.decoder_start_token_id, dtype=torch.long,
                             device=self.device)
        logits: torch.Tensor = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"],
                                     decoder_input_ids=decoder).logits[:, 0, self._ids].float()
        return logits
