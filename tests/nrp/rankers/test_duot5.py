"""duoT5 pairwise re-ranking (Pradeep, Nogueira & Lin 2021): sym-sum by hand, the NRP insertion logic against a
brute-force re-ranking with a fake pairwise scorer, and the model path with a tiny random T5 built on disk."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from stableval.errors import InputError
from stableval.nrp.rankers import Ranker
from stableval.nrp.rankers.duot5 import DuoT5Ranker, sym_sum


class LengthRanker(Ranker):
    """First stage: a text's score is a number read from a table (default its length)."""

    name = "length"

    def __init__(self, table: dict[str, float] | None = None) -> None:
        self.table = table or {}

    def value(self, text: str) -> float:
        return self.table.get(text, float(len(text)))

    def score(self, queries: Sequence[str], documents: Sequence[Sequence[str]],
              answers: Sequence[Sequence[str]] | None = None, *, progress: bool = False,
              ) -> tuple[list[np.ndarray], list[np.ndarray]]:
        answers = answers if answers is not None else [[] for _ in queries]
        return ([np.array([self.value(t) for t in docs]) for docs in documents],
                [np.array([self.value(t) for t in ans]) for ans in answers])


def preference(order: list[str]):
    """P(a beats b) = 0.9 when a comes first in ``order``, else 0.1."""
    rank = {text: i for i, text in enumerate(order)}

    def scorer(query: str, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        return np.array([0.9 if rank[x] < rank[y] else 0.1 for x, y in zip(a, b, strict=True)])

    return scorer


def test_sym_sum_hand_worked() -> None:
    p = np.array([[0.0, 0.9, 0.6], [0.2, 0.0, 0.7], [0.5, 0.3, 0.0]])
    # s_0 = 0.9 + 0.6 + (1 - 0.2) + (1 - 0.5) = 2.8; s_1 = 0.2 + 0.7 + 0.1 + 0.7 = 1.7; s_2 = 0.5 + 0.3 + 0.4 + 0.3
    assert sym_sum(p) == pytest.approx([2.8, 1.7, 1.5])
    assert sym_sum(np.full((1, 1), 0.5)) == pytest.approx([0.0])


def test_top_k_reranked_rest_keeps_first_stage_order_hand_worked() -> None:
    # first stage (length): cccc 4, ddd 3, aa 2, b 1; top 3 = cccc, ddd, aa; duoT5 prefers aa > eeeee > ddd > cccc
    ranker = DuoT5Ranker(first_stage=LengthRanker(), k=3,
                         pair_scorer=preference(["aa", "eeeee", "ddd", "cccc", "b", "g"]))
    docs, answers = ranker.score(["q"], [["aa", "b", "cccc", "ddd"]], [["eeeee", "g"]])
    # consistent 0.9/0.1 preferences over 3 texts: 2 wins -> 2 x 1.8 = 3.6, 1 win -> 1.8 + 0.2, none -> 0.4
    assert docs[0] == pytest.approx([3.6, -1.0, 0.4, 2.0])  # b: first stage 1 - floor 1 - 1
    # eeeee (first stage 5) is re-ranked with cccc and ddd and wins both: no document above it (aa is pushed to 4th)
    assert answers[0][0] > docs[0].max()
    # g (first stage 1) is below the top 3: it keeps the first stage's order, tied with b
    assert answers[0][1] == pytest.approx(-1.0)
    assert ranker.cache.misses == 6 + 2 * 2  # 3 x 2 document pairs once, 2 x 2 pairs for eeeee


def brute_force_above(first: dict[str, float], docs: list[str], answer: str, k: int, p) -> int:
    """Documents above ``answer`` in the list re-ranked from scratch: first stage, top k by sym-sum, the rest."""
    texts = sorted([*docs, answer], key=lambda t: -first[t])
    top, rest = texts[:k], texts[k:]
    s = {t: sum(p(t, u) + 1 - p(u, t) for u in top if u != t) for t in top}
    final = sorted(top, key=lambda t: -s[t]) + rest
    return final.index(answer)


def test_answer_ranks_match_a_brute_force_reranking() -> None:
    rng = np.random.default_rng(7)
    for trial in range(30):
        n_docs, k = int(rng.integers(2, 9)), int(rng.integers(2, 6))
        docs = [f"d{i}" for i in range(n_docs)]
        answers = [f"a{i}" for i in range(4)]
        texts = docs + answers
        first = dict(zip(texts, rng.permutation(len(texts)).astype(float), strict=True))  # distinct scores
        matrix = rng.uniform(size=(len(texts), len(texts)))  # not even consistent: p(a, b) + p(b, a) != 1
        index = {t: i for i, t in enumerate(texts)}

        def p(a: str, b: str, matrix=matrix, index=index) -> float:
            return float(matrix[index[a], index[b]])

        ranker = DuoT5Ranker(first_stage=LengthRanker(first), k=k,
                             pair_scorer=lambda q, a, b, p=p: np.array([p(x, y) for x, y in zip(a, b, strict=True)]))
        doc_scores, answer_scores = ranker.score(["q"], [docs], [answers])
        for answer, value in zip(answers, answer_scores[0], strict=True):
            expected = brute_force_above(first, docs, answer, k, p)
            assert int((doc_scores[0] > value).sum()) == expected, (trial, answer)
            assert not (doc_scores[0] == value).any()
        # the documents alone: the brute force's order of documents
        order = sorted(docs, key=lambda t: -first[t])
        top = order[:k]
        s = {t: sum(p(t, u) + 1 - p(u, t) for u in top if u != t) for t in top}
        expected_order = sorted(top, key=lambda t: -s[t]) + order[k:]
        assert [docs[i] for i in np.argsort(-doc_scores[0], kind="stable")] == expected_order


def test_bad_settings_are_refused() -> None:
    from stableval.commands.common import flag_spelling

    with pytest.raises(InputError, match=r"option 'k'.*got 1.*k >= 2") as error:
        DuoT5Ranker(first_stage=LengthRanker(), k=1, pair_scorer=preference([]))
    assert error.value.spelled(flag_spelling).startswith("option '--duo-k'")  # the command line names its flag
    with pytest.raises(InputError, match=r"option 'first_stage'.*its own first stage") as error:
        DuoT5Ranker(first_stage="duot5", pair_scorer=preference([]))
    assert error.value.spelled(flag_spelling).startswith("option '--duo-first-stage'")


def test_cache_identity_is_kept_by_the_shared_t5_base() -> None:
    """The score cache's key prefix (a --cache file outlives a version) did not change when monoT5 and duoT5 moved
    their model holder into T5Ranker."""
    from stableval.nrp.rankers.monot5 import MonoT5Ranker
    from stableval.nrp.rankers.t5 import T5Ranker

    ranker = DuoT5Ranker(first_stage=LengthRanker(), pair_scorer=preference([]), max_length=64)
    assert isinstance(ranker, T5Ranker) and ranker.identity == "duot5(custom,max_length=64)"
    assert ranker.batch_size == 16 and ranker.cache is not None
    assert issubclass(MonoT5Ranker, T5Ranker)


def test_model_pair_probability_is_softmax_of_true_false(duot5_dir: Path) -> None:
    import torch
    import transformers

    from stableval.nrp.rankers import make_ranker

    ranker = make_ranker("duot5", model_path=duot5_dir, batch_size=2, max_length=64, k=3, first_stage="bm25")
    assert isinstance(ranker, DuoT5Ranker) and ranker.k == 3
    got = ranker.pair_probabilities("flu", ["flu fever", "tax car"], ["tax car", "flu fever"])
    tok = transformers.AutoTokenizer.from_pretrained(duot5_dir)
    model = transformers.T5ForConditionalGeneration.from_pretrained(duot5_dir).eval()
    ids = tok(["Query: flu Document0: flu fever Document1: tax car Relevant:"], return_tensors="pt")
    with torch.no_grad():
        logits = model(**ids, decoder_input_ids=torch.zeros((1, 1), dtype=torch.long)).logits[0, 0]
    pair = logits[[tok.convert_tokens_to_ids("true"), tok.convert_tokens_to_ids("false")]]
    assert got[0] == pytest.approx(torch.softmax(pair, -1)[0].item(), abs=1e-6)
    assert 0 < got[1] < 1 and got[0] != pytest.approx(got[1])
    misses = ranker.cache.misses
    docs, answers = ranker.score(["flu"], [["flu fever", "tax car", "cough", "heart pain"]], [["fever flu"]])
    assert len(docs[0]) == 4 and len(answers[0]) == 1 and np.isfinite(answers[0]).all()
    assert ranker.cache.misses == misses + 6 - 2 + 4  # the two pairs above were cached


def _cuda() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


@pytest.mark.skipif(_cuda(), reason="a CUDA GPU is here: test_duot5_on_cuda_matches_cpu runs instead")
def test_cuda_without_a_gpu_is_a_clear_error(duot5_dir: Path) -> None:
    from stableval.nrp.rankers import make_ranker

    ranker = make_ranker("duot5", model_path=duot5_dir, device="cuda")
    with pytest.raises(InputError, match=r"option 'device'.*cannot use this torch device.*got 'cuda'"):
        ranker.pair_probabilities("flu", ["flu"], ["tax"])


@pytest.mark.skipif(not _cuda(), reason="no CUDA GPU on this machine (or torch not installed)")
def test_duot5_on_cuda_matches_cpu(duot5_dir: Path) -> None:
    from stableval.nrp.rankers import make_ranker

    pairs = (["flu fever", "tax car"], ["tax car", "cough"])
    cpu = make_ranker("duot5", model_path=duot5_dir, max_length=64).pair_probabilities("flu", *pairs)
    gpu = make_ranker("duot5", model_path=duot5_dir, max_length=64, device="cuda",
                     precision="fp32").pair_probabilities("flu", *pairs)  # half precision: tests/test_nrp_inference.py
    assert gpu == pytest.approx(cpu, abs=1e-4)
