"""How the neural rankers run a model over many inputs: the device, the precision, and length-bucketed batches.

* **Device** (:func:`resolve_device`): ``auto`` is CUDA where torch sees a GPU, else the CPU; ``cpu``, ``cuda``,
  ``cuda:1`` ... as torch names them. A device torch cannot use is an input error naming ``--device``
  (:func:`to_device`).
* **Precision** (:data:`PRECISIONS`, :func:`autocast_dtype`): ``auto`` runs a pointwise model (cross-encoder,
  monoT5) under half-precision autocast on CUDA — fp16 for BERT-style encoders, bf16 for T5, whose activations
  overflow fp16 — with near-ties re-scored in fp32 so the order is fp32's
  (:meth:`~stableval.nrp.rankers.PointwiseRanker.refine`), and in fp32 on a CPU, where half precision is slower;
  the bi-encoder and duoT5 stay in fp32 unless told. ``fp32``, ``bf16`` and ``fp16`` force one. Autocast is the
  same code on every device, so forcing ``bf16``/``fp16`` on a CPU runs the GPU's code path there (the tests do).
* **Length buckets** (:func:`run_batches`): the inputs of a call are tokenized in **one** tokenizer call without
  padding, sorted by length (longest first, so a batch that does not fit fails at once) and cut into batches of
  ``batch_size``; each batch is padded to its own longest input (on CUDA to a multiple of 8), not to the longest of
  a random mix. The outputs stay on the device until the last batch: one transfer back, no host-device round trip
  per batch.

>>> length_batches([5, 2, 9, 2, 7], 2)
[[2, 4], [0, 1], [3]]
>>> resolve_device("cpu"), autocast_dtype("cpu", "auto") is None
('cpu', True)
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from stableval.errors import InputError

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = ["PRECISIONS", "autocast", "autocast_dtype", "length_batches", "precision_name", "resolve_device",
           "run_batches", "to_device"]

#: ``--precision`` choices: ``auto`` (half precision on CUDA, fp32 elsewhere) or one forced everywhere.
PRECISIONS = ("auto", "fp32", "bf16", "fp16")


def resolve_device(device: str) -> str:
    """``auto`` → ``cuda`` when torch sees a CUDA GPU, else ``cpu``; any other name as given."""
    if device != "auto":
        return device
    try:
        import torch
    except ImportError:
        return "cpu"
    return "cuda" if torch.cuda.is_available() else "cpu"


def autocast_dtype(device: str, precision: str, *, half: str = "fp16") -> torch.dtype | None:
    """The dtype to autocast to on ``device`` (``None``: run in fp32). ``auto`` picks ``half`` (the model's
    preferred half precision, ``fp32`` for none) on CUDA (bf16 only where the GPU supports it, else fp32 for a bf16
    model) and fp32 elsewhere."""
    if precision not in PRECISIONS:
        raise InputError("unknown precision", option="precision", value=precision, allowed=", ".join(PRECISIONS))
    if precision == "fp32" or (precision == "auto" and half == "fp32"):
        return None
    import torch

    if precision == "auto":
        if not device.startswith("cuda") or not torch.cuda.is_available():
            return None
        if half == "bf16" and not torch.cuda.is_bf16_supported():
            return None
        precision = half
    return {"bf16": torch.bfloat16, "fp16": torch.float16}[precision]


def precision_name(device: str, precision: str, *, half: str = "fp16") -> str:
    """What the model runs in on ``device``: ``fp32``, ``bf16`` or ``fp16`` (part of a ranker's cache key when
    not fp32, so half-precision scores never stand in for fp32 ones)."""
    import torch

    dtype = autocast_dtype(device, precision, half=half)
    return {None: "fp32", torch.bfloat16: "bf16", torch.float16: "fp16"}[dtype]


def autocast(device: str, dtype: torch.dtype | None) -> contextlib.AbstractContextManager[Any]:
    """``torch.autocast`` to ``dtype`` on the device's type (a no-op for fp32)."""
    if dtype is None:
        return contextlib.nullcontext()
    import torch

    return torch.autocast(device_type=device.split(":")[0], dtype=dtype)


def to_device(model: Any, device: str) -> Any:
    """``model`` on ``device`` in eval mode; a device torch cannot use is an input error naming ``--device``."""
    try:
        return model.to(device).eval()
    except (RuntimeError, AssertionError, ValueError) as error:
        raise InputError(f"cannot use this torch device ({str(error).splitlines()[0]})", option="device",
                         value=device, allowed="auto, cpu, or cuda / cuda:N where a CUDA GPU and a CUDA build of "
                                               "torch are installed") from None


def length_batches(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """Indices of the inputs, longest first (ties in input order), cut into batches of ``batch_size``."""
    order = np.argsort(-np.asarray(lengths, dtype=np.int64), kind="stable").tolist()
    return [order[start:start + batch_size] for start in range(0, len(order), batch_size)]


def _padded(encoded: Mapping[str, Sequence[Sequence[int]]], rows: list[int], pad_id: int, multiple: int,
            ) -> Iterator[tuple[str, np.ndarray]]:
    """Each field of ``encoded`` for ``rows``, right-padded to the batch's longest (rounded up to ``multiple``):
    input ids with ``pad_id``, the masks and token types with 0."""
    lengths = [len(encoded["input_ids"][row]) for row in rows]
    width = -(-max(lengths) // multiple) * multiple
    for key, values in encoded.items():
        block = np.full((len(rows), width), pad_id if key == "input_ids" else 0, dtype=np.int64)
        for i, row in enumerate(rows):
            block[i, :lengths[i]] = values[row]
        yield key, block


def run_batches(tokenizer: Any, forward: Callable[[dict[str, torch.Tensor]], torch.Tensor],
                first: Sequence[str], second: Sequence[str] | None = None, *, device: str, batch_size: int,
                max_length: int, dtype: torch.dtype | None, truncation: str | bool = True) -> np.ndarray:
    """``forward`` (the model on one padded batch of tensors → one output row per input) over every input, in
    length-bucketed batches under autocast to ``dtype``; the outputs as float64, in the inputs' order. ``first``
    and ``second`` are the texts (pairs when ``second`` is given) for one call of ``tokenizer``."""
    import torch

    if not len(first):
        return np.zeros(0)
    encoded = tokenizer(list(first), list(second) if second is not None else None, truncation=truncation,
                        max_length=max_length, padding=False)
    fields = {key: encoded[key] for key in ("input_ids", "attention_mask", "token_type_ids") if key in encoded}
    cuda = device.startswith("cuda")
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    batches = length_batches([len(ids) for ids in fields["input_ids"]], batch_size)
    outputs = []
    with torch.inference_mode(), autocast(device, dtype):
        for rows in batches:
            tensors = {}
            for key, block in _padded(fields, rows, pad_id, 8 if cuda else 1):
                tensor = torch.from_numpy(block)
                tensors[key] = tensor.pin_memory().to(device, non_blocking=True) if cuda else tensor
            outputs.append(forward(tensors).float())
        stacked = torch.cat(outputs).cpu().numpy().astype(np.float64)  # the one transfer back
    out = np.empty_like(stacked)
    out[np.concatenate(batches)] = stacked
    return out
