"""Relabeled MedQA's two-step design: what raters answered blind, and what they did after seeing the key.

Each clinician first answered a question blind, then saw MedQA's key and could change the answer
(``seen_change``). Per rating the blind answer is compared with the key — the rater got it right (the key
alone), named the key among others, missed it, or gave no answer — and for each such group: how many raters
changed their answer after seeing the key, and how many then accept the key (their final answers include it).
Agreement, blind and seen: the share of rater pairs of a question with identical answer sets, the share of
ratings whose answers include the key, and the questions where every rater's answers do.

>>> import io
>>> from stableval.datasets.medqa import load_medqa
>>> csv = io.StringIO("qid,worker_id,answer_idx,blind_answers,important_info_missing,seen_change,"
...                   "seen_answerable,seen_answers\\n1,a,A,['A'],FALSE,FALSE,,\\n1,b,A,['B'],FALSE,TRUE,TRUE,['A']\\n")
>>> result = two_step(load_medqa(csv))
>>> result.changes.set_index("blind")[["ratings", "changed", "accepts_key"]].loc[["key", "misses key"]].values.tolist()
[[1, 0, 1], [1, 1, 1]]
>>> result.agreement.set_index("measure").loc["rater pairs with identical answers", ["blind", "seen"]].tolist()
[0.0, 1.0]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from stableval._json import records
from stableval.console import Displayed
from stableval.datasets.medqa import LETTERS, MedQARatings

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console

__all__ = ["BLIND_OUTCOMES", "TwoStepResult", "two_step"]

#: How a rating's blind answer relates to the key, in the order of the table.
BLIND_OUTCOMES = ("key", "key among others", "misses key", "no answer")


@dataclass(frozen=True)
class TwoStepResult(Displayed):
    """The two-step design analysed.

    Attributes:
        changes: one row per blind outcome (:data:`BLIND_OUTCOMES`) and a ``all`` row: ``blind, ratings, changed,
            changed_share, accepts_key, accepts_key_share`` (accepts: the final answers include the key).
        agreement: one row per measure: ``measure, blind, seen`` (shares; the last row counts questions).
        source: the file read.
    """

    changes: pd.DataFrame
    agreement: pd.DataFrame
    source: str = "<memory>"

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "changes": records(self.changes), "agreement": records(self.agreement)}

    def to_frame(self) -> pd.DataFrame:
        return self.changes

    def render(self, console: Console) -> None:
        from rich import box
        from rich.table import Table

        table = Table(box=box.SIMPLE_HEAVY, show_edge=False, title_justify="left",
                      title="Two-step design: answer changes after seeing the key, by the blind answer")
        row: Any
        for column in ("blind answer", "ratings", "changed", "% changed", "accept key after", "% accept key"):
            table.add_column(column, justify="left" if column == "blind answer" else "right")
        for row in self.changes.itertuples(index=False):
            table.add_row(str(row.blind), f"{row.ratings:,}", f"{row.changed:,}", _pct(row.changed_share),
                          f"{row.accepts_key:,}", _pct(row.accepts_key_share))
        console.print(table)
        agree = Table(box=box.SIMPLE_HEAVY, show_edge=False, title_justify="left",
                      title="Agreement before (blind) and after (seen) the key was shown")
        for column in ("measure", "blind", "seen"):
            agree.add_column(column, justify="left" if column == "measure" else "right")
        for row in self.agreement.itertuples(index=False):
            count = str(row.measure).startswith("questions")
            agree.add_row(str(row.measure), *(f"{v:,.0f}" if count else _pct(v) for v in (row.blind, row.seen)))
        console.print(agree)


def _pct(value: Any) -> str:
    return "-" if value != value else f"{100 * value:.1f}"


def _pairs_identical(question: np.ndarray, answers: np.ndarray, n_questions: int) -> float:
    """Share of same-question rater pairs with identical answer sets (pooled over questions)."""
    code = answers.astype(np.int64) @ (1 << np.arange(len(LETTERS)))
    _, group_sizes = np.unique(question * (1 << len(LETTERS)) + code, return_counts=True)
    sizes = np.bincount(question, minlength=n_questions)
    pairs = float((sizes * (sizes - 1) // 2).sum())
    return float((group_sizes * (group_sizes - 1) // 2).sum()) / pairs if pairs else float("nan")


def two_step(ratings: MedQARatings) -> TwoStepResult:
    """Changes after seeing the key by blind outcome, and blind-versus-seen agreement (see the module docstring).
    Needs the blind answers and ``seen_change`` that :func:`~stableval.datasets.medqa.load_medqa` reads."""
    if ratings.blind_answers is None or ratings.changed is None:
        raise ValueError("two_step needs ratings read by load_medqa (blind answers and seen_change)")
    question = ratings.question
    rows = np.arange(ratings.n_ratings)
    key = ratings.key[question]
    blind, final = ratings.blind_answers, ratings.final_answers
    blind_has_key, final_has_key = blind[rows, key], final[rows, key]
    n_blind = blind.sum(axis=1)
    outcome = np.select([blind_has_key & (n_blind == 1), blind_has_key, n_blind > 0], [0, 1, 2], default=3)
    groups = [outcome == g for g in range(len(BLIND_OUTCOMES))] + [np.ones(ratings.n_ratings, dtype=bool)]
    changed = ratings.changed
    frame = pd.DataFrame({
        "blind": [*BLIND_OUTCOMES, "all"],
        "ratings": [int(g.sum()) for g in groups],
        "changed": [int(changed[g].sum()) for g in groups],
        "accepts_key": [int(final_has_key[g].sum()) for g in groups],
    })
    with np.errstate(invalid="ignore", divide="ignore"):
        frame.insert(3, "changed_share", frame["changed"] / frame["ratings"].where(frame["ratings"] > 0))
        frame["accepts_key_share"] = frame["accepts_key"] / frame["ratings"].where(frame["ratings"] > 0)
    n = ratings.n_questions
    all_key = [int((np.bincount(question, weights=~has, minlength=n) == 0).sum()) for has in
               (blind_has_key, final_has_key)]
    agreement = pd.DataFrame({
        "measure": ["rater pairs with identical answers", "ratings whose answers include the key",
                    "questions where every rater's answers include the key"],
        "blind": [_pairs_identical(question, blind, n), float(blind_has_key.mean()), float(all_key[0])],
        "seen": [_pairs_identical(question, final, n), float(final_has_key.mean()), float(all_key[1])],
    })
    return TwoStepResult(changes=frame, agreement=agreement, source=ratings.source)
