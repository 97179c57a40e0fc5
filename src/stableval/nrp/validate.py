"""Does NRP agree with human grades of answers? Agreement of NRP and of baselines with graded answers.

For answers with a human grade (a ``grade`` column, or the judged documents themselves in a leave-one-out
simulation), each **signal** (NRP under a ranker, NRP among relevant documents only, the ranker's score of the
answer against the question alone, the combined signal, answer length) is compared with the grades by

* ``auc``: correct (grade >= ``correct``) vs incorrect answers, pooled over questions (Mann-Whitney, ties 1/2;
  Hanley & McNeil 1982);
* ``spearman`` and ``tau_b``: Spearman's rho and Kendall's tau-b (Kendall 1945) of signal vs grade, pooled over
  all answers;
* ``spearman_q`` and ``tau_b_q``: the same within each question, averaged over the questions whose answers have
  at least two different grades (a signal constant within such a question counts 0 there: it orders nothing).

Intervals: percentile bootstrap **over questions** (Efron & Tibshirani 1993): each replicate draws questions with
replacement and weights every answer by its question's count, all replicates at once (weighted mid-ranks for the
pooled measures, a weight matrix times per-question values for the per-question ones). ``diff`` is each signal
minus the reference signal on the same replicates (paired), with its interval. The pooled tau-b's interval is
computed by a (replicates x answers) x (answers x answers) product, so it is only given up to
``MAX_PAIRWISE`` answers (the value itself always).

The **combined signal** ``combo:R`` is the mean of two percentiles of the answer in [0, 1]: its NRP (its place
among the documents of its own question: relative) and the share of the judged documents of all validated
questions whose score against their own question is below the answer's score (ties 1/2;
:func:`collection_percentile`: absolute, comparable across questions). It is a candidate for a headline that keeps
NRP's document ranking but is not lifted or sunk by the quality of one question's pool.

Leave-one-out validation (:func:`leave_one_out_signals`): every judged document of a question is in turn treated
as a generated answer and ranked among the other documents of its question (held out of every statistic the
ranker takes from the documents), so its human grade can be compared with its NRP; no generated answers needed.

>>> import numpy as np, pandas as pd
>>> frame = pd.DataFrame({"qid": list("aaabbb"), "grade": [0, 1, 2, 0, 2, 2],
...                       "good": [0.1, 0.5, 0.9, 0.2, 0.8, 0.7], "bad": [0.9, 0.5, 0.1, 0.3, 0.2, 0.1]})
>>> table = agreement_with_grades(frame, ["good", "bad"], correct=2, bootstrap=0)
>>> table.set_index(["signal", "measure"]).loc[("good", "auc"), "value"], table.set_index(["signal", "measure"]).loc[
...     ("bad", "auc"), "value"]
(np.float64(1.0), np.float64(0.0))
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from stableval.errors import InputError
from stableval.evaluate.intervals import percentile_interval
from stableval.nrp.rankers import Ranker
from stableval.nrp.score import normalized_rank_position, rank_counts, relevant_rank_position
from stableval.nrp.testcollection import TestCollection

__all__ = ["ANSWER_GRADES", "MAX_PAIRWISE", "MEASURES", "agreement_with_grades", "answer_grades", "answer_signals",
           "collection_percentile", "grade_scale", "leave_one_out_signals", "weighted_midranks"]

#: Measures of :func:`agreement_with_grades`, in output order.
MEASURES = ("auc", "spearman", "tau_b", "spearman_q", "tau_b_q")
#: Largest number of answers for which the pooled tau-b gets a bootstrap interval.
MAX_PAIRWISE = 6000
#: The human grade's column while answers are checked (a name no input file can hold, so it clashes with none).
_GRADE_KEY = "\0grade"


def weighted_midranks(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Mid-ranks of ``values`` in the sample where item i occurs ``weights[b, i]`` times, per row b.

    Every copy of a value, and every tied value, gets the mean of the ranks the tied group occupies.

    >>> weighted_midranks(np.array([3.0, 1.0, 3.0]), np.array([[1, 1, 1], [0, 2, 1]]))
    array([[2.5, 1. , 2.5],
           [3. , 1.5, 3. ]])
    """
    values = np.asarray(values, dtype=float)
    weights = np.atleast_2d(np.asarray(weights, dtype=float))
    unique, group = np.unique(values, return_inverse=True)
    order = np.argsort(group, kind="stable")
    starts = np.searchsorted(group[order], np.arange(len(unique)))
    group_weight = np.add.reduceat(weights[:, order], starts, axis=1) if len(values) else weights[:, :0]
    below = np.cumsum(group_weight, axis=1) - group_weight
    mid = below + (group_weight + 1.0) / 2.0
    return np.asarray(mid[:, group], dtype=float)


def _weighted_pearson(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    total = w.sum(axis=1, keepdims=True)
    mx = (w * x).sum(axis=1, keepdims=True) / total
    my = (w * y).sum(axis=1, keepdims=True) / total
    cov = (w * (x - mx) * (y - my)).sum(axis=1)
    var = (w * (x - mx) ** 2).sum(axis=1) * (w * (y - my) ** 2).sum(axis=1)
    return np.asarray(np.divide(cov, np.sqrt(var), out=np.full_like(cov, np.nan), where=var > 0), dtype=float)


def _per_question(values: np.ndarray, grade: np.ndarray, question: np.ndarray, n_questions: int,
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Spearman and tau-b within each question; ``valid`` marks questions with two or more grades."""
    rho = np.zeros(n_questions)
    tau = np.zeros(n_questions)
    valid = np.zeros(n_questions, dtype=bool)
    order = np.argsort(question, kind="stable")
    bounds = np.searchsorted(question[order], np.arange(n_questions + 1))
    for q in range(n_questions):  # per question: one small scipy call each, over ~100 questions
        rows = order[bounds[q]:bounds[q + 1]]
        g, v = grade[rows], values[rows]
        if len(rows) < 2 or np.ptp(g) == 0:
            continue
        valid[q] = True
        if np.ptp(v) > 0:
            rho[q] = stats.spearmanr(v, g).statistic
            tau[q] = stats.kendalltau(v, g).statistic
    return rho, tau, valid


def _pairwise_tau(values: np.ndarray, grade: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Tau-b of the weighted (replicated) sample, per row of ``weights``: concordant minus discordant pairs over
    the pairs untied in each variable, each pair counted weights_i * weights_j times."""
    sx = np.sign(values[:, None] - values[None, :]).astype(np.float32)
    sy = np.sign(grade[:, None] - grade[None, :]).astype(np.float32)
    w = weights.astype(np.float32)
    num = ((w @ (sx * sy)) * w).sum(axis=1)
    dx = ((w @ np.abs(sx)) * w).sum(axis=1)
    dy = ((w @ np.abs(sy)) * w).sum(axis=1)
    den = np.sqrt(dx.astype(float) * dy.astype(float))
    return np.asarray(np.divide(num, den, out=np.full(len(num), np.nan), where=den > 0), dtype=float)


def agreement_with_grades(frame: pd.DataFrame, signals: Sequence[str], *, grade: str = "grade",
                          correct: float = 1.0, reference: str | None = None, bootstrap: int = 1000,
                          confidence: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """Agreement of each signal column of ``frame`` with its ``grade`` column (see the module docstring).

    Returns one row per signal x measure: ``signal, measure, value, ci_low, ci_high, diff, diff_low, diff_high``
    (``diff``: signal minus ``reference``, default the first signal, on the same bootstrap replicates), plus
    ``answers`` (those with a value of the signal), ``questions`` and ``graded_questions``. A signal may have no
    value (NaN) for some answers, as ``nrp-rel`` for a question without relevant documents: its measures use the
    answers that have one, and its ``diff`` compares it with the reference on those same answers.
    """
    missing = [c for c in ("qid", grade, *signals) if c not in frame.columns]
    if missing:
        raise InputError(f"missing column(s) {', '.join(missing)}", value=list(map(str, frame.columns)),
                         allowed=f"qid, {grade} and the signals")
    if not signals:
        raise InputError("no signal to validate", allowed="at least one signal column")
    reference = reference if reference is not None else signals[0]
    if reference not in signals:
        raise InputError("unknown reference signal", option="reference", value=reference,
                         allowed=", ".join(signals))
    grades = pd.to_numeric(frame[grade], errors="coerce").to_numpy(dtype=float)
    if not np.isfinite(grades).all():
        row = int(np.flatnonzero(~np.isfinite(grades))[0])
        raise InputError("grade is not a number", row=row + 1, column=grade, value=frame[grade].iloc[row],
                         allowed="a numeric human grade for every answer")
    positive = grades >= correct
    if positive.all() or not positive.any():
        raise InputError(f"every answer is {'correct' if positive.all() else 'incorrect'} at this threshold",
                         option="correct", value=correct,
                         allowed=f"a grade threshold between {grades.min():g} and {grades.max():g}")
    question, qids = pd.factorize(frame["qid"])
    n_q = len(qids)
    if bootstrap > 0:
        rng = np.random.default_rng(seed)
        draws = rng.multinomial(n_q, np.full(n_q, 1.0 / n_q), size=bootstrap).astype(float)
        counts = np.vstack([np.ones(n_q), draws])  # row 0: the sample itself
    else:
        counts = np.ones((1, n_q))
    sample = _Sample(grades, positive, question, n_q, counts, bootstrap > 0 and len(frame) <= MAX_PAIRWISE)
    values: dict[str, np.ndarray] = {}
    for name in signals:
        column = pd.to_numeric(frame[name], errors="coerce").to_numpy(dtype=float)
        if np.isinf(column).any() or (name == reference and np.isnan(column).all()):
            row = int(np.flatnonzero(~np.isfinite(column))[0])
            raise InputError("signal is not a finite number", row=row + 1, column=name, value=column[row],
                             allowed="a finite score for every answer (NaN: no value for that answer)")
        values[name] = column
    rows = []
    for name in signals:
        has = np.isfinite(values[name])
        own = sample.measures(values[name], has)
        common = has & np.isfinite(values[reference])
        mine = own if (common == has).all() else sample.measures(values[name], common)
        base = sample.measures(values[reference], common)
        for measure in MEASURES:
            series = own[measure]
            low, high = (percentile_interval(series[1:], confidence) if bootstrap > 0 and np.isfinite(
                series[1:]).all() else (np.nan, np.nan))
            diff = mine[measure] - base[measure]
            d_low, d_high = (percentile_interval(diff[1:], confidence) if bootstrap > 0 and np.isfinite(
                diff[1:]).all() else (np.nan, np.nan))
            rows.append((name, measure, float(series[0]), float(low), float(high), float(diff[0]), float(d_low),
                         float(d_high), int(has.sum())))
    out = pd.DataFrame(rows, columns=["signal", "measure", "value", "ci_low", "ci_high", "diff", "diff_low",
                                      "diff_high", "answers"])
    graded = _per_question(grades, grades, question, n_q)[2]
    return out.assign(questions=n_q, graded_questions=int(graded.sum()))


class _Sample:
    """The graded answers and the bootstrap replicates (``counts``: draws per question, row 0 the sample), from
    which :meth:`measures` computes every measure of a signal on a subset of the answers, all replicates at once."""

    def __init__(self, grades: np.ndarray, positive: np.ndarray, question: np.ndarray, n_q: int,
                 counts: np.ndarray, pairwise: bool) -> None:
        self.grades, self.positive, self.question, self.n_q = grades, positive, question, n_q
        self.counts, self.pairwise = counts, pairwise
        self.weights = counts[:, question]
        self._grade_ranks: dict[bytes, np.ndarray] = {}

    def measures(self, values: np.ndarray, rows: np.ndarray) -> dict[str, np.ndarray]:
        """Each measure of ``values`` against the grades over the answers ``rows`` (per replicate)."""
        if not rows.any():
            return {measure: np.full(len(self.weights), np.nan) for measure in MEASURES}
        w = self.weights * rows
        key = rows.tobytes()
        if key not in self._grade_ranks:
            self._grade_ranks[key] = weighted_midranks(self.grades, w)
        values = np.where(rows, values, 0.0)  # the other answers weigh nothing
        ranks = weighted_midranks(values, w)
        w_pos = (w * self.positive).sum(axis=1)
        w_neg = (w * ~self.positive).sum(axis=1)
        auc = np.divide((w * ranks * self.positive).sum(axis=1) - w_pos * (w_pos + 1) / 2, w_pos * w_neg,
                        out=np.full(len(w), np.nan), where=w_pos * w_neg > 0)
        question = np.where(rows, self.question, -1)
        rho_q, tau_q, valid_q = _per_question(values[rows], self.grades[rows], question[rows], self.n_q)
        used = self.counts * valid_q
        tau_point = float(stats.kendalltau(values[rows], self.grades[rows]).statistic)
        tau = _pairwise_tau(values, self.grades, w) if self.pairwise else np.r_[
            tau_point, np.full(len(w) - 1, np.nan)]
        tau[0] = tau_point
        per_q = used.sum(axis=1)
        return {"auc": auc, "spearman": _weighted_pearson(ranks, self._grade_ranks[key], w), "tau_b": tau,
                "spearman_q": np.divide(used @ rho_q, per_q, out=np.full(len(w), np.nan), where=per_q > 0),
                "tau_b_q": np.divide(used @ tau_q, per_q, out=np.full(len(w), np.nan), where=per_q > 0)}


def _word_count(texts: pd.Series) -> np.ndarray:
    """Words (whitespace-separated) per text: the answer-length baseline."""
    return np.asarray(texts.str.count(r"\S+").to_numpy(dtype=float))


def collection_percentile(values: np.ndarray, reference: np.ndarray, *, own: bool = False) -> np.ndarray:
    """Share of ``reference`` scores below each value, ties counting one half (``percentileofscore(kind="mean")``
    / 100); ``own``: each value is itself one of the reference scores and is left out of its own reference.

    >>> collection_percentile(np.array([2.0, 5.0]), np.array([1.0, 2.0, 3.0, 4.0]))
    array([0.375, 1.   ])
    >>> collection_percentile(np.array([1.0, 2.0, 2.0]), np.array([1.0, 2.0, 2.0]), own=True)
    array([0.  , 0.75, 0.75])
    """
    values = np.asarray(values, dtype=float)
    zeros = np.zeros(len(values), dtype=np.int64)
    above, tied, size = rank_counts(np.asarray(reference, dtype=float), np.zeros(len(reference), dtype=np.int64),
                                    values, zeros)
    if own:
        tied, size = tied - 1, size - 1
    below = size - above - tied + 0.5 * tied
    return np.asarray(np.divide(below, size, out=np.full(len(values), 0.5), where=size > 0), dtype=float)


def _combined(nrp: np.ndarray, percentile: np.ndarray) -> np.ndarray:
    """The combined signal: mean of NRP (relative to the question's pool) and the collection percentile of the
    answer's score (absolute: comparable across questions)."""
    return np.asarray((np.asarray(nrp, dtype=float) + percentile) / 2.0, dtype=float)


def _relevant_counts(scores: np.ndarray, own: np.ndarray, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray,
                                                                                           np.ndarray]:
    """Per row j: documents (i != j, ``keep``) scored above / equal to ``own[j]``, and how many there are."""
    n = len(own)
    mask = keep[None, :] & ~np.eye(n, dtype=bool)
    above = ((scores > own[:, None]) & mask).sum(axis=1)
    tied = ((scores == own[:, None]) & mask).sum(axis=1)
    return above, tied, mask.sum(axis=1)


def leave_one_out_signals(collection: TestCollection, rankers: Mapping[str, Ranker], *,
                          dimension: str = "relevance", relevant: float | None = None, n: str = "documents",
                          ties: str = "mid", progress: bool = False) -> pd.DataFrame:
    """Every judged document of ``dimension`` as an answer ranked among the other documents of its question.

    Columns: ``qid, docno, grade, length`` (words) and per ranker R: ``nrp:R`` (its NRP among the other
    documents), ``score:R`` (R's score of it against the question), ``combo:R`` (the combined signal; the
    percentile among the ``score:R`` of all other held-out documents) and, given ``relevant``, ``nrp-rel:R`` (NRP
    among the other documents of grade >= ``relevant`` only; NaN when there is none). Questions with a single
    judged document are left out (nothing to rank against).
    """
    qrels = collection.qrels(dimension)
    pool = collection.pool().merge(qrels, on=["qid", "docno"])
    sizes = pool.groupby("qid")["docno"].transform("size")
    pool = pool[sizes > 1].reset_index(drop=True)
    qids = pd.Index(pd.unique(pool["qid"]))
    bounds = np.searchsorted(qids.get_indexer(pd.Index(pool["qid"])), np.arange(len(qids) + 1))
    queries = pool.drop_duplicates("qid").set_index("qid").loc[qids, "query"].tolist()
    lists = [pool["text"].iloc[bounds[i]:bounds[i + 1]].tolist() for i in range(len(qids))]
    grade = pool["grade"].to_numpy(dtype=float)
    out = pool[["qid", "docno", "grade"]].assign(length=_word_count(pool["text"]))
    for name, ranker in rankers.items():
        ranker.prepare(collection.documents["text"].tolist())
        matrices = ranker.leave_one_out(queries, lists, progress=progress)
        columns: dict[str, list[np.ndarray]] = {"nrp": [], "score": [], "nrp-rel": []}
        for i, matrix in enumerate(matrices):
            own = np.diag(matrix).copy()
            g = grade[bounds[i]:bounds[i + 1]]
            above, tied, size = _relevant_counts(matrix, own, np.ones(len(own), dtype=bool))
            columns["nrp"].append(normalized_rank_position(above, tied, size, n=n, ties=ties))
            columns["score"].append(own)
            if relevant is not None:
                above, tied, size = _relevant_counts(matrix, own, g >= relevant)
                columns["nrp-rel"].append(relevant_rank_position(above, tied, size, n=n, ties=ties))
        for kind, parts in columns.items():
            if parts:
                out[f"{kind}:{name}"] = np.concatenate(parts)
        own_scores = out[f"score:{name}"].to_numpy()
        out[f"combo:{name}"] = _combined(out[f"nrp:{name}"].to_numpy(),
                                         collection_percentile(own_scores, own_scores, own=True))
    return out


#: How the grades of graded answers are read: ``gain`` (on the collection's gain scale of the dimension, as
#: its judgments are after reading) or ``raw`` (on its raw scale: recoded by the collection's own grade map).
ANSWER_GRADES = ("gain", "raw")


def _grades_text(mapping: Mapping[float, float | None]) -> str:
    return ", ".join(f"{raw:g}→{'unjudged' if gain is None else f'{gain:g}'}" for raw, gain in mapping.items())


def grade_scale(collection: TestCollection, dimension: str) -> str:
    """The grade scale ``validate`` reads answer grades on, in words: the collection's gains of ``dimension``
    (and how its raw grades were recoded to them, when they were).

    >>> from stableval.nrp.testcollection import collection_from_frames
    >>> c = collection_from_frames(pd.DataFrame({"qid": ["1"], "query": ["q"]}),
    ...     pd.DataFrame({"docno": ["a", "b"], "text": ["x", "y"]}),
    ...     pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "grade": [1, 3]}),
    ...     grade_map={"relevance": {1.0: 0.0, 3.0: 2.0}})
    >>> grade_scale(c, "relevance")
    'relevance gains of collection, 0 to 2 (its raw grades recoded: 1→0, 3→2)'
    """
    gains = collection.qrels(dimension)["grade"]
    mapping = collection.grade_maps.get(dimension)
    recoded = f" (its raw grades recoded: {_grades_text(mapping)})" if mapping else ""
    return f"{dimension} gains of {collection.name}, {gains.min():g} to {gains.max():g}{recoded}"


def answer_grades(grades: np.ndarray, collection: TestCollection, dimension: str, *, scale: str = "gain",
                  file: str | None = None, column: str = "grade") -> np.ndarray:
    """Answer grades on the collection's gain scale of ``dimension``: checked to lie within it (``scale="gain"``)
    or first recoded by the collection's grade map (``scale="raw"``). Grades outside the scale are an error that
    names the scale, e.g. raw LiveQA/MEDIQA grades 1-4 against the gains 0-3, where ``correct=2`` would silently
    mean "related or better"."""
    if scale not in ANSWER_GRADES:
        raise InputError("unknown answer grade scale", option="answer_grades", value=scale,
                         allowed=", ".join(ANSWER_GRADES))
    grades = np.asarray(grades, dtype=float)
    mapping = collection.grade_maps.get(dimension)
    if scale == "raw":
        if not mapping:
            raise InputError(f"{collection.name} has no raw grades for {dimension} (its judgments were read as "
                             "gains)", option="answer_grades", value=scale, allowed="gain")
        known = np.isin(grades, np.array(list(mapping), dtype=float))
        recoded = np.array([mapping.get(g) if k else None for g, k in zip(grades.tolist(), known, strict=True)])
        bad = ~known | np.array([value is None for value in recoded])
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise InputError(f"answer grade is not a judgment on {collection.name}'s raw {dimension} scale",
                             file=file, row=row + 1, column=column, value=float(grades[row]),
                             allowed=_grades_text(mapping))
        return recoded.astype(float)
    gains = collection.qrels(dimension)["grade"]
    low, high = float(gains.min()), float(gains.max())
    outside = (grades < low) | (grades > high)
    if outside.any():
        row = int(np.flatnonzero(outside)[0])
        hint = ""
        if mapping and np.isin(grades, np.array(list(mapping), dtype=float)).all():
            hint = f"; or, for grades on its raw scale, --answer-grades raw to recode them ({_grades_text(mapping)})"
        raise InputError(f"answer grades are not on the scale they are read on, the {dimension} gains of "
                         f"{collection.name} ({low:g} to {high:g}; {int(outside.sum())} answer(s) outside)",
                         file=file, row=row + 1, column=column, value=float(grades[row]),
                         allowed=f"grades from {low:g} to {high:g}{hint}")
    return grades


def answer_signals(collection: TestCollection, answers: pd.DataFrame, rankers: Mapping[str, Ranker], *,
                   grade: str = "grade", dimension: str = "relevance", relevant: float | None = None,
                   n: str = "documents", ties: str = "mid", progress: bool = False, unknown: str = "error",
                   exclude_copies: bool = False, file: str | None = None, notes: list[str] | None = None,
                   scale: str = "gain") -> pd.DataFrame:
    """The same signals as :func:`leave_one_out_signals` for graded generated answers (``answers`` has the
    answer columns and ``grade``): ``qid, answer_id, model, grade, length`` and ``nrp:R``, ``score:R``,
    ``nrp-rel:R``, ``combo:R`` per ranker (``combo``'s percentile among the scores of the judged documents of the
    answered questions).

    ``unknown="skip"`` leaves out answers to questions not in the collection, ``exclude_copies`` answers that copy
    a judged document of their own question (:func:`stableval.nrp.leakage.find_copies`; flagged copies are always
    counted); the counts go to ``notes``. Grades travel with their rows, so skipping never misaligns them. The
    grades are on the collection's gain scale of ``dimension`` (checked), or on its raw scale with ``scale="raw"``
    (:func:`answer_grades`).
    """
    from stableval.nrp.answers import answers_from_frame
    from stableval.nrp.leakage import copies_note, find_copies
    from stableval.nrp.score import score_answers

    if grade not in answers.columns:
        raise InputError(f"answers have no {grade!r} column", file=file, column=grade,
                         value=list(map(str, answers.columns)),
                         allowed="a column of human grades (--grade-column)")
    grades = pd.to_numeric(answers[grade], errors="coerce")
    if not np.isfinite(grades.to_numpy(dtype=float)).all():
        row = int(np.flatnonzero(~np.isfinite(grades.to_numpy(dtype=float)))[0])
        raise InputError("grade is not a number", file=file, row=row + 1, column=grade,
                         value=answers[grade].iloc[row], allowed="a numeric human grade for every answer")
    notes = notes if notes is not None else []
    gains = answer_grades(grades.to_numpy(dtype=float), collection, dimension, scale=scale, file=file, column=grade)
    graded = answers.drop(columns=[grade]).assign(**{_GRADE_KEY: gains})
    table = answers_from_frame(graded, collection=collection, file=file, unknown=unknown, notes=notes,
                               extra=[_GRADE_KEY])
    copies = find_copies(collection, table)
    if len(copies):
        notes.append(copies_note(copies, excluded=exclude_copies))
        if exclude_copies:
            table = table[~table["answer_id"].isin(set(copies["answer_id"]))].reset_index(drop=True)
    if table.empty:
        raise InputError("no graded answer left to validate", file=file,
                         allowed="answers to questions of the collection that do not copy a judged document")
    out = table[["qid", "answer_id", "model"]].assign(grade=table[_GRADE_KEY].to_numpy(dtype=float),
                                                       length=_word_count(table["text"]))
    answer_table = table.drop(columns=[_GRADE_KEY])
    for name, ranker in rankers.items():
        result = score_answers(collection, answer_table, ranker, n=n, ties=ties, bootstrap=0, progress=progress,
                               relevant=relevant, dimension=dimension)
        out[f"nrp:{name}"] = result.answers["nrp"].to_numpy()
        out[f"score:{name}"] = result.answers["score"].to_numpy()
        if relevant is not None:
            out[f"nrp-rel:{name}"] = result.answers["nrp_relevant"].to_numpy()
        assert result.documents is not None
        out[f"combo:{name}"] = _combined(result.answers["nrp"].to_numpy(), collection_percentile(
            result.answers["score"].to_numpy(), result.documents["score"].to_numpy()))
    return out
