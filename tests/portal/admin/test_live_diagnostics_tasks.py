"""Live rater diagnostics and adaptive assignment of the task types other than pairwise, with planted raters
(honest, always the same answer, random) on SQLite and PostgreSQL: STABLEVAL's diagnostics on single-answer levels
and mcq blind answers, the rater-aware ranking model on ddx and rank-documents answers, adaptive assignment
on every type."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from planted_task_raters import seed, store_answers, track_of, work_in_rounds
from portal_helpers import profiled_raters
from scipy.stats import kendalltau
from sqlalchemy import func, select

from stableval.errors import InputError
from stableval.portal.admin import live_diagnostics, order_agreement
from stableval.portal.admin.live_diagnostics import ORDER_MESSAGE, track_diagnostics
from stableval.portal.admin.order_agreement import (
    FLAG_BELOW,
    MEASURE,
    loo_kendall_tau,
    loo_top1_agreement,
    track_order_agreement,
)
from stableval.portal.store.db import Database
from stableval.portal.store.models import Question, Submission
from stableval.portal.work import adaptive
from stableval.portal.work.adaptive import adaptive_table, refresh
from stableval.portal.work.ranking_model import track_rankings

QUESTIONS = 24
#: adaptive threshold per ranking type: with 3 agreeing raters a clear question's confidence is about 0.89 (ddx) and
#: 0.70 (rank-documents: 4 items, so a lower ceiling), a split one's 0.20-0.38
THRESHOLD = {"ddx": 0.8, "rank-documents": 0.6}
KINDS = {"honest-1": "honest", "honest-2": "honest", "honest-3": "honest", "honest-4": "honest",
         "constant": "constant", "random": "random"}


@pytest.fixture
def db(db_url: str) -> Iterator[Database]:
    live_diagnostics.clear_cache()
    order_agreement.clear_cache()
    adaptive.clear_state()
    database = Database(db_url)
    database.upgrade()
    yield database
    database.dispose()


def _plant(db: Database, tmp_path: Path, task: str, questions: int = QUESTIONS) -> dict[str, int]:
    seed(db, tmp_path, task, regular=questions, gold=0, k=len(KINDS))
    ids = dict(zip(KINDS, profiled_raters(db, len(KINDS)), strict=True))
    store_answers(db, "t", task, {ids[name]: kind for name, kind in KINDS.items()})
    return ids


@pytest.mark.parametrize("task", ["single", "mcq"])
def test_stableval_diagnostics_flag_planted_bad_raters(db: Database, tmp_path: Path, task: str) -> None:
    questions = QUESTIONS if task == "single" else 2 * QUESTIONS  # one rating per mcq question, two per single
    ids = _plant(db, tmp_path, task, questions)
    live = track_diagnostics(db, "t")
    assert live.task == task and live.message == "" and live.fit["converged"]
    rows = {row.rater_id: row for row in live.raters}
    by_name = {name: rows[rater] for name, rater in ids.items()}
    assert by_name["honest-1"].ratings == 2 * QUESTIONS
    assert any(flag.startswith("near-uniform") for flag in by_name["constant"].flags), by_name["constant"]
    for name in ("constant", "random"):  # near-uniform, or at/below chance (few ratings of a random rater)
        assert by_name[name].flags and not by_name[name].flags[0].startswith("too few"), by_name[name]
        assert by_name[name].consensus < 0.5
    for name in ("honest-1", "honest-2", "honest-3", "honest-4"):
        assert by_name[name].flags == (), by_name[name]
        assert by_name[name].consensus > 0.7 and by_name[name].spammer_score > 0.3
        assert by_name[name].spammer_score > 2 * max(by_name["constant"].spammer_score,
                                                     by_name["random"].spammer_score)
    # hand-worked: a rater who always gives the same answer has identical confusion rows: spammer score 0
    assert by_name["constant"].spammer_score == pytest.approx(0.0, abs=1e-9)
    if task == "mcq":  # nominal labels: the ordinal measures are left empty
        assert np.isnan(by_name["honest-1"].leniency) and np.isnan(by_name["honest-1"].over_rating)
    else:  # the constant rater always gives the worst level: strict, never lenient
        assert by_name["constant"].strictness > 0.9 and by_name["constant"].leniency < 0.05
    assert [bool(r.flags) for r in live.raters] == sorted((bool(r.flags) for r in live.raters), reverse=True)
    assert track_order_agreement(db, "t").raters == ()  # rankings only


@pytest.mark.parametrize("task", ["ddx", "rank-documents"])
def test_ranking_model_flags_planted_bad_raters(db: Database, tmp_path: Path, task: str) -> None:
    """Issue 29: the rater-aware ranking model (Rater-PL) gives the planted constant and random raters a reliability
    below half the median rater's; the honest ones are unflagged."""
    ids = _plant(db, tmp_path, task)
    live = track_diagnostics(db, "t")
    assert live.raters == () and live.message == ORDER_MESSAGE and live.task == task
    table = track_order_agreement(db, "t")
    assert table.measure == MEASURE and table.threshold == FLAG_BELOW
    assert dict(table.fit)["converged"] and not dict(table.fit)["warm start"]
    rows = {row.rater_id: row for row in table.raters}
    by_name = {name: rows[rater] for name, rater in ids.items()}
    median = float(np.median([row.score for row in table.raters]))
    for name in ("constant", "random"):
        row = by_name[name]
        assert row.score < FLAG_BELOW * median and row.flags[0].startswith("low reliability"), row
    for name in ("honest-1", "honest-2", "honest-3", "honest-4"):
        row = by_name[name]
        assert row.flags == () and row.score > 0.5 and row.ci_low < row.score < row.ci_high, row
        assert row.top_agreement > 0.5 and row.compared == row.answers == QUESTIONS
        assert row.score > 2 * max(by_name["constant"].score, by_name["random"].score)
    assert {r.rater_id for r in table.raters if r.flags} == {ids["constant"], ids["random"]}
    assert [bool(r.flags) for r in table.raters] == sorted((bool(r.flags) for r in table.raters), reverse=True)
    assert track_order_agreement(db, "t") is table  # cached until the next submission
    from typer.testing import CliRunner

    from stableval.cli import app as cli_app

    result = CliRunner().invoke(cli_app, ["portal", "diagnostics", "t", "--database-url", db.url])
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(io.StringIO(result.stdout))
    assert list(frame.columns) == ["rater", "answers", "compared", "reliability", "ci_low", "ci_high",
                                   "top_agreement", "flags"]
    flagged = set(frame.loc[frame["flags"].fillna("").str.startswith("low reliability"), "rater"])
    assert flagged == {f"rater-{ids['constant']}", f"rater-{ids['random']}"}
    assert f"measure: {table.measure}" in result.stderr


@pytest.mark.parametrize("task", ["ddx", "rank-documents"])
def test_ranking_model_warm_start_reuses_the_previous_fit(db: Database, tmp_path: Path, task: str) -> None:
    """Issue 29: a refit after a few more answers starts from the last fit (as the label models' adaptive fit): the
    same optimum as a cold fit, in fewer L-BFGS iterations; an unchanged track reuses the fit itself."""
    seed(db, tmp_path, task, regular=QUESTIONS, gold=0, k=len(KINDS))
    raters = profiled_raters(db, len(KINDS))
    behaviours = dict(zip(raters, KINDS.values(), strict=True))
    work_in_rounds(db, "t", task, behaviours, rounds=QUESTIONS - 2)
    first = track_rankings(db, "t")
    assert first is not None and not first.warm and track_rankings(db, "t") is first  # no new submission: reused
    work_in_rounds(db, "t", task, behaviours, rounds=2, seed=1)
    warm = track_rankings(db, "t")
    cold = track_rankings(db, "t", warm=False)
    assert warm is not None and cold is not None and warm.warm and not cold.warm
    assert len(warm.frame) > len(first.frame) and warm.converged and cold.converged
    assert warm.n_iter < cold.n_iter, (warm.n_iter, cold.n_iter)
    reliability = warm.model.raters_.set_index("rater")["reliability"]
    assert np.allclose(reliability, cold.model.raters_.set_index("rater")["reliability"].loc[reliability.index],
                       rtol=1e-3, atol=1e-4)
    assert warm.confidence.keys() == cold.confidence.keys()
    assert max(abs(warm.confidence[q] - cold.confidence[q]) for q in warm.confidence) < 1e-3


def test_kendall_tau_against_scipy() -> None:
    """The vectorised leave-one-out tau-b equals scipy's kendalltau (tau-b) on each row, ragged widths included."""
    rng = np.random.default_rng(3)
    widths = rng.integers(2, 7, size=40)
    question = np.repeat(np.arange(10), 4)
    widths = widths.reshape(10, 4)[:, 0].repeat(4)
    ranks = np.full((40, 6), np.nan)
    for row, width in enumerate(widths):
        ranks[row, :width] = rng.permutation(width) + 1
    ours = loo_kendall_tau(ranks, question)
    for row in range(40):
        others = [r for r in range(40) if question[r] == question[row] and r != row]
        mean = ranks[others, :widths[row]].mean(axis=0)
        expected = kendalltau(ranks[row, :widths[row]], mean).statistic
        assert ours[row] == pytest.approx(expected, nan_ok=True), row
    alone = loo_kendall_tau(np.array([[1.0, 2.0]]), np.array([0]))
    assert np.isnan(alone[0])  # no other rater: nothing to compare with


def test_top1_agreement_hand_worked() -> None:
    # case 0: raters put {0}, {0}, {1}, {0, 1} first; case 1: one rater only
    first = np.array([[1, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0], [0, 0, 1]])
    case = np.array([0, 0, 0, 0, 1])
    # others of row 2 ({1}): condition 0 twice... three times, condition 1 once -> plurality {0}: disagree
    # others of row 3 ({0, 1}): condition 0 twice, 1 once -> agree
    assert loo_top1_agreement(first, case).tolist()[:4] == [1.0, 1.0, 0.0, 1.0]
    assert np.isnan(loo_top1_agreement(first, case)[4])


@pytest.mark.parametrize("task", ["single", "mcq"])
def test_adaptive_assignment_gives_uncertain_questions_more_raters(db: Database, tmp_path: Path, task: str
                                                                   ) -> None:
    """12 clear questions (every rater gives the true answer) and 4 split ones (the three raters of a question give
    three different answers): the split ones get raters beyond k = 3, up to max_k = 5."""
    seed(db, tmp_path, task, regular=12, gold=0, ambiguous=4, k=3, max_k=5, adaptive_every=3,
         adaptive_threshold=0.9)
    raters = profiled_raters(db, 6)
    behaviours = dict.fromkeys(raters, "sure")
    work_in_rounds(db, "t", task, behaviours, rounds=20, after=lambda: refresh(db, "t"))
    for _ in range(3):  # raters come back after the last refreshes (nothing was left for them before)
        refresh(db, "t", force=True)
        work_in_rounds(db, "t", task, behaviours, rounds=5, after=lambda: refresh(db, "t"))
    fit = refresh(db, "t", force=True)
    assert fit is not None and fit.submissions == sum(fit.extra.values()) + 3 * 16
    table, _, rater_ids = adaptive_table(db, track_of(db, "t"))
    assert table.n_levels == (3 if task == "single" else 4) and len(set(rater_ids.tolist())) == 6  # used levels
    with db.reading() as session:
        names = dict(session.execute(select(Question.id, Question.external_id)).all())
        counts = dict(session.execute(select(Submission.question_id, func.count(Submission.id))
                                      .group_by(Submission.question_id)).all())
    confirmed = {names[q]: int(n) for q, n in counts.items()}
    clear = [confirmed[f"q{i}"] for i in range(12)]
    ambiguous = [confirmed[f"u{i}"] for i in range(4)]
    assert min(clear + ambiguous) >= 3 and max(clear + ambiguous) <= 5, confirmed  # k to max_k
    assert np.mean(ambiguous) > np.mean(clear), confirmed
    if task == "single":  # two criteria per question: every split question is found, most clear ones stop at k
        assert min(ambiguous) >= 4 and sum(c == 3 for c in clear) >= 7, confirmed
    # mcq (one nominal answer per question, 16 questions): the early fits are poorly identified and some clear
    # questions get a rater beyond k too (docs/portal.md, "Quality control per task type")


@pytest.mark.parametrize("task", ["ddx", "rank-documents"])
def test_adaptive_assignment_for_rankings(db: Database, tmp_path: Path, task: str) -> None:
    """Issue 29: ranking tracks are adaptive through the rater-aware ranking model (a question's confidence: the
    plausibility of its most plausible option). 12 clear questions (every rater gives the true answer) and 4 split
    ones (each rater answers at random): the split ones get raters beyond k = 3, up to max_k = 5."""
    seed(db, tmp_path, task, regular=12, gold=0, ambiguous=4, k=3, max_k=5, adaptive_every=3,
         adaptive_threshold=THRESHOLD[task])
    raters = profiled_raters(db, 6)
    behaviours = dict.fromkeys(raters, "sure")
    work_in_rounds(db, "t", task, behaviours, rounds=20, after=lambda: refresh(db, "t"))
    for _ in range(3):  # raters come back after the last refreshes (nothing was left for them before)
        refresh(db, "t", force=True)
        work_in_rounds(db, "t", task, behaviours, rounds=5, after=lambda: refresh(db, "t"))
    fit = refresh(db, "t", force=True)
    assert fit is not None and fit.submissions == sum(fit.extra.values()) + 3 * 16 and fit.converged
    with db.reading() as session:
        names = dict(session.execute(select(Question.id, Question.external_id)).all())
        counts = dict(session.execute(select(Submission.question_id, func.count(Submission.id))
                                      .group_by(Submission.question_id)).all())
    confirmed = {names[q]: int(n) for q, n in counts.items()}
    clear = [confirmed[f"q{i}"] for i in range(12)]
    ambiguous = [confirmed[f"u{i}"] for i in range(4)]
    assert min(clear + ambiguous) >= 3 and max(clear + ambiguous) <= 5, confirmed  # k to max_k
    assert np.mean(ambiguous) > np.mean(clear) and sum(c == 3 for c in clear) >= 9, confirmed
    sure = {names[q]: c for q, c in fit.confidence.items()}
    assert max(sure[f"u{i}"] for i in range(4)) < min(sure[f"q{i}"] for i in range(12)), sure
    from typer.testing import CliRunner

    from stableval.cli import app as cli_app

    result = CliRunner().invoke(cli_app, ["portal", "adaptive", "t", "--database-url", db.url])
    assert result.exit_code == 0 and "L-BFGS iterations of Rater-PL" in result.stderr, result.output
    table = pd.read_csv(io.StringIO(result.stdout)).set_index("item")
    assert (table.loc[[f"u{i}" for i in range(4)], "confidence"] < THRESHOLD[task]).all(), table


def test_no_adaptive_assignment_without_a_rater_model(db: Database, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A type whose answers no rater model reads refuses a max_k (every registered type has one since issue 29, so
    a copy of ddx without it stands in); a track without max_k has no adaptive fit."""
    import dataclasses

    from stableval.portal.tasks.registry import TASKS

    monkeypatch.setitem(TASKS, "ddx", dataclasses.replace(TASKS["ddx"], adaptive=False))
    with pytest.raises(InputError, match="no adaptive assignment for") as caught:
        seed(db, tmp_path, "ddx", regular=3, gold=0, k=1, max_k=3)
    assert caught.value.column == "max_k" and "pairwise, single, mcq and rank-documents" in str(caught.value.allowed)
    monkeypatch.undo()
    seed(db, tmp_path, "rank-documents", regular=3, gold=0, k=1)
    (rater,) = profiled_raters(db, 1)
    work_in_rounds(db, "t", "rank-documents", {rater: "honest"}, rounds=2)
    assert refresh(db, "t", force=True) is None
