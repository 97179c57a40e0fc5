"""Relabeled MedQA: which questions to exclude, and model accuracy after excluding them (rater bootstrap).

Data: ``medqa_relabelling.csv`` of the Med-Gemini MedQA relabelling (Saab et al. 2024, "Capabilities of Gemini
Models in Medicine", arXiv:2404.18416, App. C.2; github.com/Google-Health/med-gemini-medqa-relabelling, CC BY 4.0):
at least 3 clinicians per MedQA (USMLE, 4-option) test question answered it blind, then saw the key and could
change their answer.

Per rating (one row of the CSV) three flags are derived:

* **missing_info** — ``important_info_missing`` is TRUE.
* **label_error** — the rater does not accept the key after seeing it. The rater's *final answers* are
  ``seen_answers`` when ``seen_change`` is TRUE (empty when ``seen_answerable`` is FALSE: the rater, having seen
  the key, judged no option correct) and ``blind_answers`` otherwise (the rater saw the key and kept the blind
  answer). The flag is set when the key (``answer_idx``) is not among the final answers; a rater with no final
  answer accepts no key.
* **multiple_answers** — the final answers contain more than one option.

Per draw of ``k`` ratings (default 3) per question with replacement, a question is excluded for a reason when
every drawn rating carries its flag (unanimous vote; ``vote="majority"``: more than half). Exclusion shares and
accuracies (against the original key, on the questions left) are averaged over ``B`` draws (default 1000).

Differences from the authors' notebook (``medqa_analysis.ipynb``): the notebook votes on ``info_missing`` whereas
the paper and this module use ``important_info_missing``; it draws the raters separately for each reason, whereas
here one draw of raters decides all reasons; and for the 33 ratings with ``seen_change`` TRUE and
``seen_answerable`` FALSE it falls back to the blind answers, whereas here they reject the key.

>>> import io
>>> csv = io.StringIO(
...     "qid,worker_id,answer_idx,blind_answerable,blind_answers,info_missing,important_info_missing,"
...     "seen_change,seen_answerable,seen_answers\\n"
...     "1,a,A,TRUE,['A'],FALSE,FALSE,FALSE,,\\n"
...     "1,b,A,TRUE,['B'],FALSE,FALSE,FALSE,,\\n"
...     "2,a,C,TRUE,['B'],FALSE,FALSE,TRUE,TRUE,\\"['B', 'C']\\"\\n")
>>> ratings = load_medqa(csv)
>>> ratings.flags.astype(int).tolist()     # missing_info, label_error, multiple_answers per rating
[[0, 0, 0], [0, 1, 0], [0, 0, 1]]
"""

from __future__ import annotations

import ast
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd

from stableval.errors import InputError
from stableval.evaluate.rater_bootstrap import chunk_size, draw_ratings, nanmean, percentile_interval, vote
from stableval.progress import progress_bar

LETTERS = ("A", "B", "C", "D")
REASONS = ("missing_info", "label_error", "multiple_answers")
#: Filters reported: none, each reason alone, the cumulative steps of the paper's Figure 3, and all combined.
FILTERS = ("none", "missing_info", "label_error", "multiple_answers", "missing_info+label_error", "combined")
FILTER_LABELS = {
    "none": "original key", "missing_info": "w/o missing info", "label_error": "w/o label errors",
    "multiple_answers": "w/o multiple answers", "missing_info+label_error": "w/o missing info & label errors",
    "combined": "w/o all three",
}
# which reasons each filter excludes (rows of FILTERS × REASONS)
_FILTER_REASONS = np.array([
    [0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0], [1, 1, 1],
], dtype=bool)
REQUIRED = ("qid", "worker_id", "answer_idx", "blind_answers", "important_info_missing", "seen_change",
            "seen_answerable", "seen_answers")
_TRUE = {"true": True, "false": False, "1": True, "0": False}


@dataclass(frozen=True, eq=False)
class MedQARatings:
    """Relabeled MedQA ratings, grouped by question.

    Attributes:
        qids: the N question ids (text, sorted numerically when they are numbers).
        key: (N,) MedQA's key per question as a code 0..3 (A..D).
        offsets: (N+1,) the ratings of question ``i`` are rows ``offsets[i]:offsets[i+1]`` of the arrays below.
        worker: (M,) rater id per rating.
        final_answers: (M, 4) bool, the rater's final answer set (see the module docstring).
        flags: (M, 3) bool, ``missing_info``, ``label_error``, ``multiple_answers`` per rating.
        source: the file read. notes: what reading found (inconsistent rows, counts).
    """

    qids: pd.Index
    key: np.ndarray
    offsets: np.ndarray
    worker: np.ndarray
    final_answers: np.ndarray
    flags: np.ndarray
    source: str = "<memory>"
    notes: tuple[str, ...] = field(default=())

    @property
    def n_questions(self) -> int:
        return len(self.qids)

    @property
    def n_ratings(self) -> int:
        return int(self.worker.size)

    def flag_counts(self) -> pd.DataFrame:
        """One row per question: ``qid, key, ratings`` and how many ratings carry each flag."""
        question = np.repeat(np.arange(self.n_questions), np.diff(self.offsets))
        frame = pd.DataFrame({"qid": self.qids, "key": np.asarray(LETTERS)[self.key],
                              "ratings": np.diff(self.offsets)})
        for r, reason in enumerate(REASONS):
            frame[reason] = np.bincount(question, weights=self.flags[:, r], minlength=self.n_questions).astype(int)
        return frame


def _parse_bool(frame: pd.DataFrame, column: str, *, source: str, allow_empty: bool = False) -> np.ndarray:
    text = frame[column].astype(str).str.strip().str.lower()
    mapped = text.map(_TRUE)
    bad = mapped.isna() & ~((text == "") & allow_empty)
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError("not a boolean", file=source, row=row + 1, column=column, value=frame[column].iloc[row],
                         allowed="TRUE or FALSE" + (" (or empty)" if allow_empty else ""))
    return text.isin(["true", "1"]).to_numpy()


def _parse_answers(frame: pd.DataFrame, column: str, *, source: str) -> np.ndarray:
    """(M, 4) bool from list-valued text such as ``['B', 'A']``; parsed with ast.literal_eval, never eval."""
    text = frame[column].astype(str).str.strip()
    code, uniques = pd.factorize(text)
    table = np.zeros((len(uniques), len(LETTERS)), dtype=bool)
    for u, value in enumerate(uniques):
        if value in ("", "[]", "nan"):
            continue
        try:
            parsed = ast.literal_eval(value)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            parsed = None
        if not isinstance(parsed, list | tuple) or not all(str(x).strip() in LETTERS for x in parsed):
            row = int(np.flatnonzero(code == u)[0])
            raise InputError("not a list of answer letters", file=source, row=row + 1, column=column, value=value,
                             allowed="a list such as ['B'] or ['B', 'A'] of letters A, B, C, D, or empty")
        for letter in parsed:
            table[u, LETTERS.index(str(letter).strip())] = True
    return table[code]


def _sort_key(values: pd.Index) -> np.ndarray:
    numbers = pd.to_numeric(pd.Series(values), errors="coerce")
    if numbers.notna().all():
        return np.argsort(numbers.to_numpy(), kind="stable")
    return np.argsort(values.to_numpy().astype(str), kind="stable")


def load_medqa(path: str | os.PathLike[str] | IO[str]) -> MedQARatings:
    """Read ``medqa_relabelling.csv`` (columns in its SOURCE.md); extra columns are ignored.

    Errors (with file, row, column, value and what is allowed): a missing column, a non-boolean flag, an answer
    list that is not a list of A–D, a key that is not A–D or differs between the rows of one question, and the
    same worker rating one question twice. Inconsistent but usable rows are counted in ``notes``.
    """
    source = path if isinstance(path, str | os.PathLike) else "<stream>"
    source = str(source)
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    except FileNotFoundError:
        raise InputError("file not found", file=source, allowed="the medqa_relabelling.csv file") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as error:
        raise InputError(f"cannot read as CSV: {' '.join(str(error).split())}", file=source) from None
    missing = [c for c in REQUIRED if c not in frame.columns]
    if missing:
        raise InputError(f"missing column(s): {', '.join(missing)}", file=source, value=list(frame.columns),
                         allowed="the columns of medqa_relabelling.csv: " + ", ".join(REQUIRED))
    if len(frame) == 0:
        raise InputError("no data rows", file=source)
    qid = frame["qid"].astype(str).str.strip()
    worker = frame["worker_id"].astype(str).str.strip()
    for column, values in (("qid", qid), ("worker_id", worker)):
        if (values == "").any():
            row = int(np.flatnonzero((values == "").to_numpy())[0])
            raise InputError("empty id", file=source, row=row + 1, column=column, allowed="a non-empty id")
    key_text = frame["answer_idx"].astype(str).str.strip()
    key = pd.Index(LETTERS).get_indexer(pd.Index(key_text))
    if np.any(key < 0):
        row = int(np.flatnonzero(key < 0)[0])
        raise InputError("key is not an option letter", file=source, row=row + 1, column="answer_idx",
                         value=key_text.iloc[row], allowed="A, B, C or D")
    pair = qid + "\x00" + worker
    if pair.duplicated().any():
        row = int(np.flatnonzero(pair.duplicated().to_numpy())[0])
        raise InputError("the same worker rated this question twice", file=source, row=row + 1,
                         column="worker_id", value=worker.iloc[row], allowed="one rating per (qid, worker_id)")
    important = _parse_bool(frame, "important_info_missing", source=source)
    changed = _parse_bool(frame, "seen_change", source=source)
    seen_answerable = _parse_bool(frame, "seen_answerable", source=source, allow_empty=True)
    blind = _parse_answers(frame, "blind_answers", source=source)
    seen = _parse_answers(frame, "seen_answers", source=source)
    notes = []
    ignored_seen = ~changed & seen.any(axis=1)
    if ignored_seen.any():
        notes.append(f"{int(ignored_seen.sum())} rating(s) list seen_answers without seen_change; "
                     "their blind answers are used")
    odd = changed & seen_answerable & ~seen.any(axis=1)
    if odd.any():
        notes.append(f"{int(odd.sum())} rating(s) have seen_answerable TRUE but no seen_answers; "
                     "they accept no key")
    rejected = changed & ~seen.any(axis=1)
    if rejected.any():
        notes.append(f"{int(rejected.sum())} rating(s) changed to 'no option answers the question' after "
                     "seeing the key; they count as rejecting the key")
    final = np.where(changed[:, None], seen, blind)

    code, uniques = pd.factorize(qid)
    order_q = _sort_key(pd.Index(uniques))
    rank = np.empty(len(uniques), dtype=np.int64)
    rank[order_q] = np.arange(len(uniques))
    question = rank[code]
    per_question_key = np.full(len(uniques), -1)
    first = np.unique(question, return_index=True)[1]      # each question's first row sets its key
    per_question_key[question[first]] = key[first]
    conflict = per_question_key[question] != key
    if conflict.any():
        row = int(np.flatnonzero(conflict)[0])
        raise InputError("key differs between ratings of the same question", file=source, row=row + 1,
                         column="answer_idx", value=key_text.iloc[row],
                         allowed=f"{LETTERS[per_question_key[question[row]]]} (as on the other rows of qid "
                                 f"{qid.iloc[row]})")
    order = np.argsort(question, kind="stable")
    sizes = np.bincount(question, minlength=len(uniques))
    final = final[order]
    key_rows = key[order]
    flags = np.column_stack([
        important[order],
        ~final[np.arange(final.shape[0]), key_rows],
        final.sum(axis=1) > 1,
    ])
    return MedQARatings(
        qids=pd.Index(np.asarray(uniques, dtype=object)[order_q], dtype=object),
        key=per_question_key.astype(np.int64), offsets=np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
        worker=worker.to_numpy()[order], final_answers=final, flags=flags, source=source, notes=tuple(notes),
    )


def read_medqa_predictions(path: str | os.PathLike[str]) -> pd.Series:
    """A predictions file with columns ``qid`` and ``answer`` (one option letter A–D per question; any case)."""
    from stableval.data.read import read_table_file

    source = str(path)
    frame = read_table_file(Path(path))
    for column in ("qid", "answer"):
        if column not in frame.columns:
            raise InputError("missing column", file=source, column=column, value=list(frame.columns),
                             allowed="columns qid and answer (one option letter A–D per question)")
    qid = frame["qid"].astype(str).str.strip()
    answer = frame["answer"].astype(str).str.strip().str.upper()
    bad = ~answer.isin(LETTERS)
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError("answer is not an option letter", file=source, row=row + 1, column="answer",
                         value=frame["answer"].iloc[row], allowed="A, B, C or D")
    if qid.duplicated().any():
        row = int(np.flatnonzero(qid.duplicated().to_numpy())[0])
        raise InputError("question answered twice", file=source, row=row + 1, column="qid", value=qid.iloc[row],
                         allowed="one answer per qid")
    return pd.Series(answer.to_numpy(), index=qid.to_numpy(), name=source)


def _correct(ratings: MedQARatings, predictions: Mapping[str, Any]) -> tuple[list[str], np.ndarray, list[str]]:
    """(A, N) bool: model answered the original key."""
    names = list(predictions)
    correct = np.zeros((len(names), ratings.n_questions), dtype=bool)
    notes = []
    for a, name in enumerate(names):
        pred = predictions[name]
        source = str(getattr(pred, "name", None) or name)
        if isinstance(pred, pd.Series):
            index = pred.index.astype(str)
            missing = ~ratings.qids.isin(index)
            if missing.any():
                shown = ", ".join(map(str, ratings.qids[missing][:5]))
                raise InputError(f"no answer for {int(missing.sum())} of {ratings.n_questions} questions "
                                 f"(first qids: {shown})", file=source, column="qid",
                                 allowed="one answer per question of the ratings file")
            extra = int((~index.isin(ratings.qids)).sum())
            if extra:
                notes.append(f"{name}: {extra} answer(s) for qids not in the ratings were left out")
            values = pred.set_axis(index).reindex(ratings.qids).astype(str).str.strip().str.upper()
        else:
            values = pd.Series(np.asarray(pred, dtype=object)).astype(str).str.strip().str.upper()
            if len(values) != ratings.n_questions:
                raise InputError(f"model {name!r}: need one answer per question", file=source,
                                 value=f"{len(values)} answers", allowed=f"{ratings.n_questions} answers")
        code = pd.Index(LETTERS).get_indexer(pd.Index(values))
        if np.any(code < 0):
            row = int(np.flatnonzero(code < 0)[0])
            where = f"qid {ratings.qids[row]}" if isinstance(pred, pd.Series) else f"answer {row + 1}"
            raise InputError(f"model {name!r}, {where}: answer is not an option letter", file=source,
                             column="answer", value=values.iloc[row], allowed="A, B, C or D")
        correct[a] = code == ratings.key
    return names, correct, notes


@dataclass(frozen=True)
class MedQAResult:
    """Exclusion shares and accuracies over rater-bootstrap draws.

    Attributes:
        exclusions: one row per filter (see ``FILTERS``): ``filter``, ``label``, ``share`` (mean share of questions
            excluded over draws), ``ci_low``, ``ci_high`` (percentile interval), ``questions`` (mean number kept),
            ``share_all_raters`` (share excluded when the vote runs once over all of each question's ratings).
        accuracy: one row per (model, filter): ``model``, ``filter``, ``label``, ``accuracy`` (mean over draws of
            the accuracy against the original key on the questions kept), ``ci_low``, ``ci_high``.
        share_replicates: (B, filters). accuracy_replicates: (B, models, filters).
        settings: parameters and dataset counts.
    """

    exclusions: pd.DataFrame
    accuracy: pd.DataFrame
    share_replicates: np.ndarray
    accuracy_replicates: np.ndarray
    settings: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
            return [{str(k): (None if isinstance(v, float) and not np.isfinite(v) else v) for k, v in r.items()}
                    for r in frame.to_dict("records")]

        return {"settings": self.settings, "exclusions": records(self.exclusions),
                "accuracy": records(self.accuracy)}


def evaluate_medqa(
    ratings: MedQARatings,
    predictions: Mapping[str, Any] | None = None,
    *,
    k: int = 3,
    n_draws: int = 1000,
    how: str = "unanimous",
    seed: int | None = 0,
    confidence: float = 0.95,
    progress: bool = False,
) -> MedQAResult:
    """Exclusion shares per reason and combined, and each model's accuracy after each exclusion.

    ``predictions`` maps a model name to a Series of answers (A–D) indexed by qid (see
    :func:`read_medqa_predictions`) or to a sequence aligned with ``ratings.qids``. Source: Saab et al. (2024),
    arXiv:2404.18416, App. C.2 (rater bootstrap with unanimous voting, 3 raters, 1000 draws).

    >>> import io
    >>> csv = io.StringIO("qid,worker_id,answer_idx,blind_answers,important_info_missing,seen_change,"
    ...                   "seen_answerable,seen_answers\\n1,a,A,['A'],FALSE,FALSE,,\\n2,a,B,['C'],TRUE,FALSE,,\\n")
    >>> result = evaluate_medqa(load_medqa(csv), {"always-A": ["A", "A"]}, n_draws=10)
    >>> result.accuracy.set_index("filter").loc[["none", "combined"], "accuracy"].tolist()
    [0.5, 1.0]
    """
    if how not in ("unanimous", "majority"):
        raise ValueError(f"vote must be 'unanimous' or 'majority', got {how!r}")
    if k < 1 or n_draws < 1:
        raise ValueError("k and n_draws must be at least 1")
    names, correct, notes = _correct(ratings, predictions or {})
    n = ratings.n_questions
    n_filters = len(FILTERS)
    rng = np.random.default_rng(seed)
    share = np.empty((n_draws, n_filters))
    accuracy = np.empty((n_draws, len(names), n_filters))
    step = chunk_size(n, k * len(REASONS) * 2, n_draws)
    correct_f = correct.astype(np.float64)
    with progress_bar("MedQA rater bootstrap", total=n_draws, enabled=progress) as bar:
        for start in range(0, n_draws, step):
            stop = min(start + step, n_draws)
            positions, _ = draw_ratings(ratings.offsets, k, stop - start, rng)
            drawn = ratings.flags[positions]                                      # (b, N, k, 3)
            excluded = vote(np.moveaxis(drawn, -1, -2), how)                      # (b, N, 3)
            by_filter = (excluded[:, :, None, :] & _FILTER_REASONS[None, None]).any(axis=-1)  # (b, N, F)
            kept = (~by_filter).astype(np.float64)
            n_kept = kept.sum(axis=1)                                             # (b, F)
            share[start:stop] = 1.0 - n_kept / n
            hits = np.einsum("an,bnf->baf", correct_f, kept)
            accuracy[start:stop] = np.divide(hits, n_kept[:, None, :], out=np.full(hits.shape, np.nan),
                                             where=n_kept[:, None, :] > 0)
            bar.advance(stop - start)
    # the same vote over all of each question's ratings, once
    sizes = np.diff(ratings.offsets)
    width = int(sizes.max())
    local = np.minimum(np.arange(width)[None, :], (sizes - 1)[:, None])
    valid = np.arange(width)[None, :] < sizes[:, None]
    all_flags = ratings.flags[ratings.offsets[:-1, None] + local]                 # (N, width, 3)
    all_excluded = np.stack([vote(all_flags[..., r], how, valid) for r in range(len(REASONS))], axis=-1)
    all_by_filter = (all_excluded[:, None, :] & _FILTER_REASONS[None]).any(axis=-1)

    low, high = percentile_interval(share, confidence)
    exclusions = pd.DataFrame({
        "filter": FILTERS, "label": [FILTER_LABELS[f] for f in FILTERS], "share": share.mean(axis=0),
        "ci_low": low, "ci_high": high, "questions": n * (1.0 - share.mean(axis=0)),
        "share_all_raters": all_by_filter.mean(axis=0),
    })
    rows = []
    for a, name in enumerate(names):
        mean = nanmean(accuracy[:, a, :])
        a_low, a_high = percentile_interval(accuracy[:, a, :], confidence)
        for f, filt in enumerate(FILTERS):
            rows.append({"model": name, "filter": filt, "label": FILTER_LABELS[filt], "accuracy": float(mean[f]),
                         "ci_low": float(a_low[f]), "ci_high": float(a_high[f])})
    accuracy_frame = pd.DataFrame(rows, columns=["model", "filter", "label", "accuracy", "ci_low", "ci_high"])
    settings = {"source": ratings.source, "questions": n, "ratings": ratings.n_ratings,
                "raters": int(pd.unique(ratings.worker).size), "k": k, "n_draws": n_draws, "vote": how,
                "seed": seed, "confidence": confidence, "models": names, "notes": [*ratings.notes, *notes]}
    return MedQAResult(exclusions=exclusions, accuracy=accuracy_frame, share_replicates=share,
                       accuracy_replicates=accuracy, settings=settings)


#: The cumulative filters of the paper's Figure 3, in order.
PLOT_FILTERS = ("none", "missing_info", "missing_info+label_error", "combined")


def plot_medqa(result: MedQAResult, path: str | os.PathLike[str]) -> Path:
    """Bar plot in the spirit of Saab et al. (2024), Figure 3: per cumulative exclusion step, the share of
    questions kept and each model's accuracy (%, mean over draws, error bars = percentile interval). PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = ["original key", "w/o missing info", "+ w/o label errors", "+ w/o multiple answers"]
    exclusions = result.exclusions.set_index("filter").loc[list(PLOT_FILTERS)]
    series: list[tuple[str, np.ndarray, np.ndarray, np.ndarray]] = []
    kept = 100 * (1 - exclusions["share"].to_numpy())
    series.append(("questions kept", kept, 100 * (1 - exclusions["ci_high"].to_numpy()),
                   100 * (1 - exclusions["ci_low"].to_numpy())))
    for model in result.settings["models"]:
        rows = result.accuracy[result.accuracy["model"] == model].set_index("filter").loc[list(PLOT_FILTERS)]
        series.append((f"{model} accuracy", 100 * rows["accuracy"].to_numpy(), 100 * rows["ci_low"].to_numpy(),
                       100 * rows["ci_high"].to_numpy()))
    fig, ax = plt.subplots(figsize=(max(6.0, 1.6 * len(steps) + 0.6 * len(series)), 4.2), layout="constrained")
    x = np.arange(len(steps))
    width = 0.8 / len(series)
    lowest = 100.0
    for s, (label, mean, low, high) in enumerate(series):
        low = np.where(np.isfinite(low), low, mean)
        high = np.where(np.isfinite(high), high, mean)
        error = np.vstack([np.maximum(mean - low, 0), np.maximum(high - mean, 0)])
        bars = ax.bar(x + (s - (len(series) - 1) / 2) * width, mean, width, yerr=error, capsize=3, label=label)
        ax.bar_label(bars, fmt="%.1f", padding=2, fontsize=7)
        lowest = min(lowest, float(np.nanmin(low)))
    ax.set_ylim(max(0.0, np.floor(lowest / 5) * 5 - 5), 104)
    ax.set_xticks(x, steps)
    ax.set_xlabel("questions excluded cumulatively (unanimous vote of "
                  f"{result.settings['k']} bootstrapped raters)" if result.settings["vote"] == "unanimous" else
                  f"questions excluded cumulatively (majority of {result.settings['k']} bootstrapped raters)")
    ax.set_ylabel("percent (%)")
    ax.set_title(f"Relabeled MedQA: questions kept and accuracy (mean over {result.settings['n_draws']:,} draws, "
                 f"{round(100 * result.settings['confidence'])}% intervals)", fontsize=10)
    ax.legend(fontsize=8, loc="lower left")
    ax.spines[["top", "right"]].set_visible(False)
    out = Path(path)
    fig.savefig(out, dpi=150)
    plt.close(fig)
    return out
