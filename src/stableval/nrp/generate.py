"""Generate answers for an NRP study: the four prompt templates of Heineking et al. (2024), n samples per query,
fixed sampling settings recorded in every row.

Heineking, Probst, Steinbach, Potthast & Scells, "Ranking Generated Answers: On the Agreement of Retrieval Models
with Humans on Consumer Health Questions" (arXiv 2024 / ECIR 2025), section "Generating Responses": maximum 512 new
tokens, temperature 0.75, top-k 50, top-p 0.95, repetition penalty 1.2, ten samples per query and model, and four
prompts. The template texts below are the spec's wording (its text extraction shows each on one line; the
authors' line breaks, if any, are not known, so the parts are joined by single spaces).

Two back ends: a local Hugging Face causal LM (:class:`TransformersGenerator`; a directory or a cached name, loaded
with ``local_files_only`` when ``HF_HUB_OFFLINE=1``) and an OpenAI-compatible chat-completions endpoint
(:class:`EndpointGenerator`; API key from ``OPENAI_API_KEY``; retries with exponential backoff on 429/5xx and
connection errors). :func:`generate_answers` writes the table ``stableval nrp score`` reads: ``qid, answer_id,
model, prompt`` (the template name), ``sample``, ``text`` (the answer), ``question`` and the settings.

>>> build_prompt("short-qa", "Can diabetes be cured?")
'Q: Can diabetes be cured? A:'
>>> class Echo:  # any object with model_id, backend, params and sample() is a generator
...     model_id, backend, params = "echo", "test", None
...     def sample(self, prompt, n, settings):
...         return [f"{prompt} #{i}" for i in range(n)]
>>> import pandas as pd
>>> table = generate_answers(pd.DataFrame({"qid": ["q1"], "question": ["flu?"]}), Echo(), templates=["none"], n=2)
>>> table[["qid", "answer_id", "model", "prompt", "sample", "text", "temperature"]].to_dict("records")[1]
{'qid': 'q1', 'answer_id': 'q1:echo:none:2', 'model': 'echo', 'prompt': 'none', 'sample': 2, 'text': 'flu? #1', \
'temperature': 0.75}
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pandas as pd

from stableval.data.files import read_table_file
from stableval.errors import InputError, StableValError

__all__ = ["TEMPLATES", "EndpointGenerator", "GenerationError", "Generator", "SamplingSettings",
           "TransformersGenerator", "build_prompt", "generate_answers", "read_queries"]

#: The paper's four prompt templates by name ({question} is replaced by the query). The names of the authors'
#: shipped files: ``no_prompt`` = none, ``q`` = short-qa, ``question`` = long-qa, ``multimedqa`` = multimedqa.
TEMPLATES: dict[str, str] = {
    "none": "{question}",
    "short-qa": "Q: {question} A:",
    "long-qa": "Question: {question} Answer:",
    # Singhal et al. 2023 (MultiMedQA), in the wording of Heineking et al. 2024
    "multimedqa": "You are a helpful medical knowledge assistant. Provide useful, complete, and scientifically "
                  "grounded answers to common consumer search queries about health. Question: {question} "
                  "Complete Answer:",
}

#: HTTP statuses worth retrying (rate limit, timeouts, server errors).
RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})


class GenerationError(StableValError):
    """A model or an endpoint could not generate (not found, refused, out of retries)."""


@dataclass(frozen=True)
class SamplingSettings:
    """Fixed sampling settings, recorded in every output row (defaults: the paper's). An endpoint receives
    ``temperature``, ``top_p``, ``max_new_tokens`` (as ``max_tokens``) and ``seed`` only; its rows record
    ``top_k`` and ``repetition_penalty`` as empty."""

    temperature: float = 0.75
    top_p: float = 0.95
    top_k: int = 50
    repetition_penalty: float = 1.2
    max_new_tokens: int = 512
    seed: int = 0

    def __post_init__(self) -> None:
        checks = {"temperature": self.temperature >= 0, "top_p": 0 < self.top_p <= 1, "top_k": self.top_k >= 0,
                  "repetition_penalty": self.repetition_penalty > 0, "max_new_tokens": self.max_new_tokens >= 1}
        allowed = {"temperature": ">= 0", "top_p": "in (0, 1]", "top_k": ">= 0 (0 = off)",
                   "repetition_penalty": "> 0 (1 = off)", "max_new_tokens": ">= 1"}
        for name, ok in checks.items():
            if not ok:
                raise InputError("bad sampling setting", option=name,
                                 value=getattr(self, name), allowed=allowed[name])


class Generator(Protocol):
    """Anything that samples answers: ``model_id`` (recorded as ``model``), ``backend``, ``params`` (model size,
    or None) and ``sample(prompt, n, settings)`` returning ``n`` answer texts."""

    model_id: str
    backend: str
    params: float | None

    def sample(self, prompt: str, n: int, settings: SamplingSettings) -> list[str]: ...


def build_prompt(template: str, question: str) -> str:
    """The prompt of ``template`` (a name of :data:`TEMPLATES`) for ``question``."""
    if template not in TEMPLATES:
        raise InputError("unknown prompt template", option="template", value=template,
                         allowed=", ".join(TEMPLATES))
    return TEMPLATES[template].format(question=question.strip())


def read_queries(path: str | Path) -> pd.DataFrame:
    """A query set as ``qid, question`` from CSV/TSV/JSONL/Parquet (``query`` or ``text`` is accepted for
    ``question``); empty or duplicate ids and empty questions are errors naming the row."""
    frame = read_table_file(path)
    if "question" not in frame.columns:
        for alias in ("query", "text"):
            if alias in frame.columns:
                frame = frame.rename(columns={alias: "question"})
                break
    missing = [c for c in ("qid", "question") if c not in frame.columns]
    if missing:
        raise InputError(f"queries: missing column(s) {', '.join(missing)}", file=str(path),
                         value=list(map(str, frame.columns)), allowed="qid, question (or query)")
    for column in ("qid", "question"):
        blank = frame[column].isna() | (frame[column].astype(str).str.strip() == "")
        if blank.any():
            row = int(np.flatnonzero(blank.to_numpy())[0])
            raise InputError(f"empty {column} ({int(blank.sum())} row(s) in all)", file=str(path), row=row + 1,
                             column=column, value=frame[column].iloc[row], allowed="a non-empty value")
    frame = frame.assign(qid=frame["qid"].astype(str).str.strip(), question=frame["question"].astype(str))
    dup = frame.duplicated("qid")
    if dup.any():
        row = int(np.flatnonzero(dup.to_numpy())[0])
        raise InputError("duplicate qid", file=str(path), row=row + 1, column="qid", value=frame["qid"].iloc[row],
                         allowed="each qid once")
    return frame[["qid", "question"]].reset_index(drop=True)


def generate_answers(queries: pd.DataFrame, generator: Generator, *, templates: Sequence[str] = ("multimedqa",),
                     n: int = 10, settings: SamplingSettings | None = None, progress: bool = False) -> pd.DataFrame:
    """``n`` answers per query and template: ``qid, answer_id, model, prompt, sample, text, question, params,
    backend`` and the :class:`SamplingSettings`. ``answer_id`` = ``qid:model:template:sample`` (samples from 1)."""
    from stableval.progress import progress_bar

    settings = settings or SamplingSettings()
    if n < 1:
        raise InputError("too few samples", option="n", value=n, allowed="n >= 1")
    for template in templates:
        build_prompt(template, "")
    recorded = asdict(settings)
    if isinstance(generator, EndpointGenerator):
        recorded.update(top_k=None, repetition_penalty=None)  # not part of the chat-completions API
    rows = []
    with progress_bar(f"{generator.model_id}: generating", total=len(queries) * len(templates),
                      enabled=progress) as bar:
        for template in templates:
            for qid, question in zip(queries["qid"], queries["question"], strict=True):
                texts = generator.sample(build_prompt(template, question), n, settings)
                if len(texts) != n:
                    raise GenerationError(f"{generator.model_id} returned {len(texts)} answers for qid {qid}, "
                                          f"not {n}")
                for index, text in enumerate(texts, start=1):
                    rows.append({"qid": qid, "answer_id": f"{qid}:{generator.model_id}:{template}:{index}",
                                 "model": generator.model_id, "prompt": template, "sample": index,
                                 "text": text.strip(), "question": question, "params": generator.params,
                                 "backend": generator.backend, **recorded})
                bar.advance()
    return pd.DataFrame(rows)


class TransformersGenerator:
    """A local Hugging Face causal LM (``AutoModelForCausalLM``): a ``save_pretrained`` directory or a cached
    hub name (nothing is downloaded when ``HF_HUB_OFFLINE=1``). ``name`` is recorded as ``model`` (default: the
    directory's name); ``params`` is the model's parameter count."""

    backend = "transformers"

    def __init__(self, model: str | Path, *, device: str = "auto", name: str | None = None) -> None:
        from stableval.nrp.rankers.base import require_neural
        from stableval.nrp.rankers.inference import resolve_device, to_device

        require_neural("transformers generator")
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.source = str(model)
        offline = os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")
        try:
            self.tokenizer: Any = AutoTokenizer.from_pretrained(self.source, local_files_only=offline)
            loaded: Any = AutoModelForCausalLM.from_pretrained(self.source, local_files_only=offline)
        except (OSError, ValueError) as error:
            raise GenerationError(f"cannot load the model {self.source!r} ({str(error).splitlines()[0]}); pass a "
                                  "directory saved with save_pretrained() (config.json, weights, tokenizer) or a "
                                  "model name in the local Hugging Face cache") from None
        device = resolve_device(device)
        self.model: Any = to_device(loaded, device)
        self.device = device
        self.model_id = name or (Path(self.source).name if Path(self.source).exists() else self.source)
        self.params: float | None = float(self.model.num_parameters())
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token

    def sample(self, prompt: str, n: int, settings: SamplingSettings) -> list[str]:
        """``n`` sampled continuations of ``prompt`` (the prompt itself not included), seeded by
        ``settings.seed`` so a query's answers do not depend on which other queries run; temperature 0 is greedy
        decoding (one answer, repeated ``n`` times)."""
        import torch
        from transformers import set_seed

        set_seed(settings.seed)
        inputs = self.tokenizer(prompt, return_tensors="pt").to(self.device)
        greedy = settings.temperature == 0
        with torch.inference_mode():  # greedy decoding gives one answer n times
            output = self.model.generate(
                **inputs, do_sample=not greedy, num_return_sequences=1 if greedy else n,
                max_new_tokens=settings.max_new_tokens,
                temperature=None if greedy else settings.temperature, top_p=None if greedy else settings.top_p,
                top_k=None if greedy else settings.top_k, repetition_penalty=settings.repetition_penalty,
                pad_token_id=self.tokenizer.pad_token_id)
        new = output[:, inputs["input_ids"].shape[1]:]
        texts = [str(text) for text in self.tokenizer.batch_decode(new, skip_special_tokens=True)]
        return texts * n if greedy else texts


class EndpointGenerator:
    """An OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, llama.cpp server, ...): ``endpoint`` is the
    base URL (``.../v1``) or the full ``.../chat/completions`` URL; the API key comes from ``OPENAI_API_KEY``
    (none sent when unset); ``name`` is recorded as ``model`` (default: ``model``). Rate limits (429), timeouts
    and server errors are retried ``max_retries`` times, waiting ``Retry-After`` or ``backoff * 2**attempt``
    seconds (at most 60)."""

    backend = "openai-chat"
    params: float | None = None

    def __init__(self, endpoint: str, model: str, *, name: str | None = None, api_key: str | None = None,
                 max_retries: int = 5, backoff: float = 1.0, timeout: float = 120.0) -> None:
        try:
            import httpx
        except ImportError:
            raise InputError("an endpoint needs httpx", option="endpoint",
                             allowed="pip install 'stableval[nrp]'") from None
        if not endpoint.startswith(("http://", "https://")):
            raise InputError("not an http(s) URL", option="endpoint", value=endpoint,
                             allowed="e.g. https://api.openai.com/v1 or http://localhost:8000/v1")
        if not model.strip():
            raise InputError("an endpoint needs a model name", option="model", value=model,
                             allowed="the model name the endpoint serves, e.g. gpt-3.5-turbo-0613")
        self.url = endpoint.rstrip("/")
        if not self.url.endswith("/chat/completions"):
            self.url += "/chat/completions"
        self.model = model
        self.model_id = name or model
        self.api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self.max_retries, self.backoff = max_retries, backoff
        self.client = httpx.Client(timeout=timeout)

    def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        import httpx

        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        for attempt in range(self.max_retries + 1):
            last = attempt == self.max_retries
            try:
                response = self.client.post(self.url, json=body, headers=headers)
            except httpx.TransportError as error:
                if last:
                    raise GenerationError(f"{self.url}: no answer after {attempt + 1} tries ({error})") from None
                time.sleep(min(self.backoff * 2 ** attempt, 60.0))
                continue
            if response.status_code == 200:
                try:
                    payload: dict[str, Any] = response.json()
                except ValueError:
                    raise GenerationError(f"{self.url}: the answer is not JSON: {response.text[:200]!r}") from None
                return payload
            detail = _error_detail(response)
            if response.status_code in (401, 403):
                raise GenerationError(f"{self.url}: HTTP {response.status_code}, the API key was refused "
                                      f"({detail}); set OPENAI_API_KEY to a valid key"
                                      + ("" if self.api_key else " (it is not set)"))
            if response.status_code not in RETRY_STATUSES or last:
                raise GenerationError(f"{self.url}: HTTP {response.status_code} ({detail})"
                                      + (f" after {attempt + 1} tries" if attempt else ""))
            retry_after = response.headers.get("retry-after", "")
            wait = float(retry_after) if retry_after.replace(".", "", 1).isdigit() else self.backoff * 2 ** attempt
            time.sleep(min(wait, 60.0))
        raise AssertionError("unreachable")  # pragma: no cover

    def sample(self, prompt: str, n: int, settings: SamplingSettings) -> list[str]:
        """``n`` answers to ``prompt`` sent as one user message; asks again for the rest when a server returns
        fewer choices than ``n`` (some ignore it)."""
        texts: list[str] = []
        while len(texts) < n:
            payload = self._post({"model": self.model, "messages": [{"role": "user", "content": prompt}],
                                  "temperature": settings.temperature, "top_p": settings.top_p,
                                  "max_tokens": settings.max_new_tokens, "seed": settings.seed,
                                  "n": n - len(texts)})
            try:
                choices = [str(choice["message"]["content"] or "") for choice in payload["choices"]]
            except (KeyError, TypeError):
                raise GenerationError(f"{self.url}: no choices[].message.content in the answer: "
                                      f"{str(payload)[:200]}") from None
            if not choices:
                raise GenerationError(f"{self.url}: the answer has no choices")
            texts.extend(choices[:n - len(texts)])
        return texts


def _error_detail(response: Any) -> str:
    """The server's error message (OpenAI's ``error.message``), else the start of the body."""
    try:
        body = response.json()
        message = body.get("error", {}).get("message") if isinstance(body, dict) else None
        if message:
            return str(message)
    except ValueError:
        pass
    return str(response.text[:200] or response.reason_phrase)
