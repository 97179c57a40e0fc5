"""duoT5 pairwise re-ranking of a first-stage ranker's top k (Pradeep, Nogueira & Lin 2021, "The Expando-Mono-Duo
Design Pattern for Text Ranking with Pretrained Sequence-to-Sequence Models", arXiv:2101.05667).

duoT5 reads ``Query: {q} Document0: {a} Document1: {b} Relevant:`` and gives p(a, b) = P("true") (a softmax over
the logits of "true" and "false" at the first decoding step): the probability that ``a`` is more relevant than
``b``. The top k texts of the first stage are re-ranked by the paper's **sym-sum** aggregation
(:func:`sym_sum`): s_i = sum over j != i of p(i, j) + (1 - p(j, i)); texts below the top k keep the first stage's
order, below them.

For NRP, an answer enters the re-ranking only if the first stage puts it in the top k of the list *with* the
answer (fewer than k documents scored above it); then the top k - 1 documents and the answer are re-ranked, and
the answer's number of documents above is counted there. Document-document probabilities are computed once per
question (k (k - 1) pairs), each answer adds 2 (k - 1) pairs. Answer scores are placed on the documents' scale so
that exactly that many documents score above them (``score`` stays pointwise to its callers). Pair probabilities
are cached by model and texts.

>>> import numpy as np
>>> p = np.array([[0.0, 0.9, 0.6], [0.2, 0.0, 0.7], [0.5, 0.3, 0.0]])  # p[i, j] = P(text i beats text j)
>>> sym_sum(p).round(3).tolist()  # 0.9 + 0.6 + (1 - 0.2) + (1 - 0.5) = 2.8 for text 0
[2.8, 1.7, 1.5]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy.special import expit

from stableval.errors import InputError
from stableval.nrp.rankers.base import Ranker, check_model_path, require_neural
from stableval.nrp.rankers.cache import ScoreCache
from stableval.nrp.rankers.registry import RANKERS, make_ranker
from stableval.nrp.rankers.t5 import T5Ranker

__all__ = ["DuoT5Ranker", "PairScorer", "sym_sum"]

#: ``(query, texts_a, texts_b) -> P(a beats b)`` for each pair.
PairScorer = Callable[[str, Sequence[str], Sequence[str]], np.ndarray]


def sym_sum(p: np.ndarray) -> np.ndarray:
    """The sym-sum aggregation of Pradeep et al. (2021): ``s_i = sum_{j != i} p[i, j] + (1 - p[j, i])`` for a
    square matrix of pairwise probabilities (the diagonal is ignored)."""
    p = np.asarray(p, dtype=float)
    off = ~np.eye(len(p), dtype=bool)
    scores: np.ndarray = np.where(off, p + (1.0 - p.T), 0.0).sum(axis=1)
    return scores


class DuoT5Ranker(T5Ranker):
    """Re-rank the top ``k`` of ``first_stage`` (a ranker name, ``name=DIR`` for a neural ranker with its own
    model directory, or a :class:`Ranker`) by duoT5's sym-sum; ``pair_scorer`` replaces the model (tests)."""

    name = "duot5"
    #: fp32 unless ``precision`` forces a half precision (pairwise scores get no fp32 refinement of near-ties).
    half = "fp32"

    def __init__(self, *, model_path: str | Path | None = None, device: str = "auto", batch_size: int = 16,
                 max_length: int = 512, cache: ScoreCache | None = None, first_stage: str | Ranker = "bm25",
                 k: int = 10, pair_scorer: PairScorer | None = None, true_token: str = "▁true",
                 false_token: str = "▁false", precision: str = "auto") -> None:
        if k < 2:
            raise InputError("duoT5 re-ranks at least two texts", option="k", value=k, allowed="k >= 2")
        if pair_scorer is None:
            require_neural(self.name)
            path: Path | None = check_model_path(model_path, self.name)
        else:
            path = Path(model_path) if model_path is not None else None
        super().__init__(model_path=path, device=device, batch_size=batch_size, max_length=max_length, cache=cache,
                         true_token=true_token, false_token=false_token, precision=precision)
        self.pair_scorer: PairScorer = pair_scorer or self._model_pairs
        self.first_stage = _first_stage(first_stage, device=device, batch_size=batch_size, cache=cache,
                                        precision=precision)
        self.k = k

    def prepare(self, corpus: Sequence[str]) -> None:
        """Pass the collection's documents on to the first stage (its corpus statistics)."""
        self.first_stage.prepare(corpus)

    def pair_probabilities(self, query: str, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        """P(a[i] beats b[i]) for each pair, cached by model, query and texts."""
        identity = self.identity
        keys = [self.cache.key(identity, query, x, y) for x, y in zip(a, b, strict=True)]
        values, found = self.cache.get(keys)
        out = np.full(len(keys), np.nan)
        if found.any():
            out[found] = np.concatenate([v for v in values if v is not None])
        todo = np.flatnonzero(~found)
        if len(todo):
            rows = todo.tolist()
            new = np.asarray(self.pair_scorer(query, [a[i] for i in rows], [b[i] for i in rows]), dtype=np.float64)
            self.cache.put([keys[i] for i in rows], list(new[:, None]))
            out[todo] = new
        return out

    def _model_pairs(self, query: str, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        """duoT5's P("true") for each pair; each document is cut to half of the tokens the query and the template
        leave of ``max_length``, so neither is truncated away."""
        _, tokenizer = self._load()
        template = f"Query: {query} Document0: Document1: Relevant:"
        budget = (self.max_length - len(tokenizer(template)["input_ids"])) // 2
        left, right = _truncate(tokenizer, a, budget), _truncate(tokenizer, b, budget)
        logits = self.label_logits([f"Query: {query} Document0: {x} Document1: {y} Relevant:"
                                    for x, y in zip(left, right, strict=True)])
        if not len(logits):
            return np.zeros(0)
        return np.asarray(expit(logits[:, 0] - logits[:, 1]), dtype=float)  # P("true") over {true, false}

    def _matrix(self, query: str, texts: Sequence[str]) -> np.ndarray:
        n = len(texts)
        i, j = np.nonzero(~np.eye(n, dtype=bool))
        p = np.zeros((n, n))
        if n > 1:
            p[i, j] = self.pair_probabilities(query, [texts[x] for x in i.tolist()], [texts[y] for y in j.tolist()])
        return p

    def score(self, queries: Sequence[str], documents: Sequence[Sequence[str]],
              answers: Sequence[Sequence[str]] | None = None, *, progress: bool = False,
              ) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Documents: the top k by sym-sum (scores >= 0), the rest by the first stage (below -1). Answers: a score
        with exactly as many documents above it as in the re-ranked list with the answer inserted."""
        from stableval.progress import progress_bar

        answers = answers if answers is not None else [[] for _ in queries]
        first_docs, first_answers = self.first_stage.score(queries, documents, answers, progress=progress)
        doc_out, answer_out = [], []
        with progress_bar(f"{self.name}: re-ranking", total=len(queries), enabled=progress) as bar:
            for query, docs, ans, fd, fa in zip(queries, documents, answers, first_docs, first_answers,
                                                strict=True):
                d, a = self._question(query, list(docs), list(ans), np.asarray(fd, float), np.asarray(fa, float))
                doc_out.append(d)
                answer_out.append(a)
                bar.advance()
        return doc_out, answer_out

    def _question(self, query: str, docs: list[str], answers: list[str], first: np.ndarray,
                  first_answers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        order = np.argsort(-first, kind="stable")
        top = order[:self.k]
        p = self._matrix(query, [docs[i] for i in top])
        rest = np.setdiff1d(np.arange(len(docs)), top)
        floor = float(first[rest].max()) if len(rest) else 0.0
        scores = first - floor - 1.0  # the first stage's order, below -1
        scores[top] = sym_sum(p)
        descending = np.sort(scores[top])[::-1]
        out = np.empty(len(answers))
        m = min(self.k - 1, len(top))  # an answer in the first stage's top k is re-ranked with the top k - 1
        texts = [docs[i] for i in top[:m]]
        above_first = (first[None, :] > first_answers[:, None]).sum(axis=1)
        inside = np.flatnonzero(above_first < self.k)
        outside = np.flatnonzero(above_first >= self.k)  # the first stage's order stays: below the top k, tied
        out[outside] = np.minimum(first_answers[outside] - floor - 1.0, -0.5)  # with the documents it ties with
        # every answer's 2m pairs in one call (batches fill up)
        left = [x for i in inside.tolist() for x in [answers[i]] * m + texts]
        right = [y for i in inside.tolist() for y in texts + [answers[i]] * m]
        pa = self.pair_probabilities(query, left, right).reshape(len(inside), 2 * m)
        full = np.zeros((m + 1, m + 1))
        full[:m, :m] = p[:m, :m]
        for row, index in enumerate(inside.tolist()):
            full[m, :m], full[:m, m] = pa[row, :m], pa[row, m:]
            s_ = sym_sum(full)
            above = int(np.count_nonzero(s_[:m] > s_[m]))
            tied = int(np.count_nonzero(s_[:m] == s_[m]))
            out[index] = _between(descending, above, tied)
        return scores, out


def _between(descending: np.ndarray, above: int, tied: int) -> float:
    """A value with ``above`` of the ``descending`` scores strictly above it (equal to the next one when the answer
    tied with documents in the re-ranking)."""
    if tied and above < len(descending):
        return float(descending[above])
    if above == 0:
        return float(descending[0]) + 1.0 if len(descending) else 0.0
    if above >= len(descending):
        return float(descending[-1]) - 0.5
    return float(descending[above - 1] + descending[above]) / 2.0


def _first_stage(spec: str | Ranker, *, device: str, batch_size: int, cache: ScoreCache | None,
                 precision: str = "auto") -> Ranker:
    if isinstance(spec, Ranker):
        return spec
    name, _, directory = spec.partition("=")
    if name == DuoT5Ranker.name:
        others = ", ".join(other for other in RANKERS if other != DuoT5Ranker.name)
        raise InputError("duoT5 cannot be its own first stage", option="first_stage", value=spec,
                         allowed=f"{others}; NAME=DIR for one with its own model directory")
    return make_ranker(name, model_path=directory or None, device=device, batch_size=batch_size, cache=cache,
                       precision=precision)


def _truncate(tokenizer: Any, texts: Sequence[str], budget: int) -> list[str]:
    """Each text cut to ``budget`` tokens (decoded back to text)."""
    ids = tokenizer(list(texts), add_special_tokens=False, truncation=True, max_length=max(budget, 1))["input_ids"]
    return [str(text) for text in tokenizer.batch_decode(ids, skip_special_tokens=True)]
