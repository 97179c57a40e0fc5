"""Paired comparison of two models' NRP on the same questions: is model A's NRP higher than model B's?

Both models answered the same questions (with the same prompt), so the comparison is paired by question: per
question ``q``, ``d_q`` = A's mean NRP over its answers to ``q`` minus B's. Reported per prompt:

* ``diff``, the mean of ``d_q`` over the questions both answered (each question weighs the same), with a
  percentile-bootstrap interval **over questions** (questions are drawn with replacement, their ``d_q`` kept);
* a two-sided **sign test** over questions (Dixon & Mood 1946): under "neither model is better", the questions
  where A is ahead (``a_better``) are Binomial(``a_better + b_better``, 1/2); questions with ``d_q = 0``
  (``ties``, common when NRP saturates at 1) do not count.

>>> import pandas as pd
>>> per_answer = pd.DataFrame({"qid": ["1", "1", "2", "2", "3", "3"], "model": ["a", "b"] * 3,
...                            "nrp": [0.9, 0.5, 0.8, 0.8, 1.0, 0.4]})
>>> result = compare_models(per_answer, "a", "b", bootstrap=0)
>>> result.summary[["questions", "diff", "a_better", "b_better", "ties", "sign_p"]].round(3).to_dict("records")
[{'questions': 3, 'diff': 0.333, 'a_better': 2, 'b_better': 0, 'ties': 1, 'sign_p': 0.5}]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from stableval.errors import InputError
from stableval.evaluate.intervals import percentile_interval

__all__ = ["Comparison", "compare_models", "match_model"]


@dataclass(frozen=True)
class Comparison:
    """``summary``: one row per prompt: ``prompt, model_a, model_b, questions, mean_a, mean_b, diff, ci_low,
    ci_high, a_better, b_better, ties, sign_p``; ``per_question``: ``prompt, qid, mean_a, mean_b, diff``;
    ``notes``: questions left out (answered by one model only)."""

    summary: pd.DataFrame
    per_question: pd.DataFrame
    notes: tuple[str, ...] = field(default=())


def match_model(name: str, models: Sequence[str]) -> str:
    """The model called ``name``: an exact name, else the only one containing it (case-insensitive), so
    ``13b`` finds ``meta-llama_Llama-2-13b-chat-hf``; none or several is an error listing the candidates.

    >>> match_model("13b", ["meta-llama_Llama-2-13b-chat-hf", "meta-llama_Llama-2-7b-chat-hf"])
    'meta-llama_Llama-2-13b-chat-hf'
    """
    if name in models:
        return name
    found = [model for model in models if name.lower() in model.lower()]
    if len(found) != 1:
        raise InputError(f"{'no' if not found else 'more than one'} model matches", option="models", value=name,
                         allowed=", ".join(found or models))
    return found[0]


def compare_models(per_answer: pd.DataFrame, a: str, b: str, *, value: str = "nrp", prompt: str | None = None,
                   bootstrap: int = 10_000, confidence: float = 0.95, seed: int = 0) -> Comparison:
    """Compare models ``a`` and ``b`` (names as :func:`match_model` finds them) on the questions both answered,
    per prompt (``prompt``: one only). ``per_answer`` has ``qid, model, value`` and optionally ``prompt``, e.g.
    the ``answers`` of :func:`stableval.nrp.score.score_answers` or :func:`stableval.nrp.read_webis_rank_files`
    (``value="nrp_shipped"``). ``diff`` is A minus B."""
    missing = [c for c in ("qid", "model", value) if c not in per_answer.columns]
    if missing:
        raise InputError(f"per-answer table: missing column(s) {', '.join(missing)}",
                         value=list(map(str, per_answer.columns)), allowed=f"qid, model, {value} (and prompt)")
    frame = per_answer.assign(prompt=per_answer["prompt"] if "prompt" in per_answer.columns else "-")
    frame = frame.astype({"qid": str, "model": str, "prompt": str})
    frame[value] = pd.to_numeric(frame[value], errors="coerce")
    models = sorted(pd.unique(frame["model"]))
    a, b = match_model(a, models), match_model(b, models)
    if a == b:
        raise InputError("the two models are the same", option="models", value=a, allowed="two different models")
    frame = frame[frame["model"].isin([a, b]) & frame[value].notna()]
    if prompt is not None:
        prompts = sorted(pd.unique(frame["prompt"]))
        if prompt not in prompts:
            raise InputError("no answers with this prompt", option="prompt", value=prompt,
                             allowed=", ".join(prompts))
        frame = frame[frame["prompt"] == prompt]
    means = frame.groupby(["prompt", "qid", "model"], sort=True)[value].mean().unstack("model").reindex(
        columns=[a, b])
    rows, per_question, notes = [], [], []
    for name, part in means.groupby(level="prompt", sort=False):
        both = part.dropna()
        if len(both) < len(part):
            notes.append(f"prompt {name}: {len(part) - len(both)} question(s) answered by only one of the two "
                         "models are left out")
        if both.empty:
            continue
        mean_a, mean_b = both[a].to_numpy(dtype=float), both[b].to_numpy(dtype=float)
        diff = mean_a - mean_b
        low, high = _bootstrap_interval(diff, bootstrap, confidence, seed)
        ahead, behind = int((diff > 0).sum()), int((diff < 0).sum())
        sign_p = float(stats.binomtest(ahead, ahead + behind, 0.5).pvalue) if ahead + behind else 1.0
        rows.append((name, a, b, len(diff), mean_a.mean(), mean_b.mean(), diff.mean(), low, high, ahead, behind,
                     len(diff) - ahead - behind, sign_p))
        per_question.append(pd.DataFrame({"prompt": name, "qid": both.index.get_level_values("qid"),
                                          "mean_a": mean_a, "mean_b": mean_b, "diff": diff}))
    if not rows:
        raise InputError("the two models answered no question in common", option="models", value=f"{a}, {b}",
                         allowed="two models that answered the same questions (with the same prompt)")
    summary = pd.DataFrame(rows, columns=["prompt", "model_a", "model_b", "questions", "mean_a", "mean_b", "diff",
                                          "ci_low", "ci_high", "a_better", "b_better", "ties", "sign_p"])
    return Comparison(summary, pd.concat(per_question, ignore_index=True), tuple(notes))


def _bootstrap_interval(diff: np.ndarray, bootstrap: int, confidence: float, seed: int) -> tuple[float, float]:
    """Percentile-bootstrap interval of the mean of ``diff`` over questions (NaN bounds with no replicates)."""
    if bootstrap <= 0:
        return np.nan, np.nan
    n = len(diff)
    weights = np.random.default_rng(seed).multinomial(n, np.full(n, 1.0 / n), size=bootstrap)
    low, high = percentile_interval(weights @ diff / n, confidence)
    return float(low), float(high)
