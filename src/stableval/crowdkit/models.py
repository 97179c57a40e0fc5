"""crowd-kit's classification models over stableval's estimators, with crowd-kit's parameters and results.

Each class takes crowd-kit's constructor parameters (``DawidSkene(n_iter=100, tol=1e-5)``), fits on a DataFrame
with ``task, worker, label`` columns (or a pyarrow Table; repeated answers are kept, as crowd-kit keeps them) and
sets crowd-kit's results: ``labels_`` (Series by task, named ``agg_label``), ``probas_`` (DataFrame task × label),
and per model ``skills_`` (by worker), ``errors_`` (by (worker, label)), ``priors_`` (by label), GLAD's ``alphas_``,
``betas_`` and ``loss_history_``, MACE's ``thetas_`` and ``spamming_``. The fitted stableval estimator is
``model_``. Labels, tasks and workers come back with the values and dtypes they had (booleans stay booleans).

>>> import pandas as pd
>>> df = pd.DataFrame({"task": [1, 1, 1, 2, 2, 2], "worker": [7, 8, 9, 7, 8, 9], "label": [1, 1, 0, 0, 0, 1]})
>>> DawidSkene(n_iter=100).fit_predict(df).to_dict()
{1: 1, 2: 0}
>>> Wawa().fit(df).skills_.to_dict()
{7: 1.0, 8: 1.0, 9: 0.0}
"""

from __future__ import annotations

from typing import Any, Literal, Self

import numpy as np
import pandas as pd

from stableval.crowdkit.answers import Answers, answers_frame
from stableval.crowdkit.base import CrowdKitAggregator, most_probable

__all__ = ["GLAD", "MACE", "DawidSkene", "MajorityVote", "OneCoinDawidSkene", "Wawa", "ZeroBasedSkill",
           "skill_vote"]


def _shares(votes: np.ndarray) -> np.ndarray:
    totals = votes.sum(axis=1, keepdims=True)
    return np.divide(votes, totals, out=np.zeros_like(votes), where=totals != 0)


def _agreement(answers: Answers, labels: np.ndarray) -> np.ndarray:
    """Each worker's share of answers equal to the task's label."""
    hits = (answers.label == labels[answers.task]).astype(float)
    given = np.bincount(answers.worker, minlength=answers.n_workers)
    return np.bincount(answers.worker, weights=hits, minlength=answers.n_workers) / np.maximum(given, 1)


def skill_vote(data: Any, skills: pd.Series, on_missing_skill: str = "error",
               default_skill: float | None = None) -> tuple[Answers, np.ndarray, pd.Series]:
    """The vote weighted by each worker's skill (crowd-kit's ``MajorityVote.fit(data, skills)``): the answers
    counted, the (tasks, labels) weight shares, and the skills used. A worker without a skill raises
    ``ValueError`` (``on_missing_skill="error"``), gets ``default_skill`` (``"value"``) or has its answers left out
    (``"ignore"``; nothing left raises ``ValueError``)."""
    frame = answers_frame(data)
    skills = pd.Series(skills, dtype=float).rename("skill").rename_axis("worker")
    known = frame["worker"].isin(skills.index).to_numpy()
    missing = pd.unique(frame.loc[~known, "worker"])
    if len(missing):
        if on_missing_skill == "error":
            raise ValueError(f"no skill for {len(missing)} worker(s), e.g. {missing[0]!r}; pass on_missing_skill="
                             "'value' (with default_skill) or 'ignore'")
        if on_missing_skill == "value":
            if default_skill is None:
                raise ValueError("on_missing_skill='value' needs a default_skill")
            skills = pd.concat([skills, pd.Series(float(default_skill), index=pd.Index(missing, name="worker"),
                                                  name="skill")])
        elif on_missing_skill == "ignore":
            frame = frame[known]
            if frame.empty:
                raise ValueError("no worker of the data has a skill: nothing left to aggregate")
        else:
            raise ValueError(f"on_missing_skill={on_missing_skill!r}; allowed: error, value, ignore")
    answers = Answers.of(frame)
    weights = skills.reindex(answers.workers).to_numpy(dtype=float)
    return answers, _shares(answers.votes(weights)), skills


class MajorityVote(CrowdKitAggregator):
    """crowd-kit's ``MajorityVote(on_missing_skill="error", default_skill=None)``: ``probas_`` the vote shares
    (weighted by ``skills`` when ``fit`` gets them), ``labels_`` the most voted label (the lowest on ties),
    ``skills_`` each worker's agreement with it (or the skills given)."""

    results = ("labels_", "probas_", "skills_")

    def __init__(self, on_missing_skill: Literal["error", "value", "ignore"] = "error",
                 default_skill: float | None = None) -> None:
        self.on_missing_skill, self.default_skill = on_missing_skill, default_skill

    def fit(self, data: Any, skills: pd.Series | None = None) -> Self:
        if skills is not None:
            answers, probas, self.skills_ = skill_vote(data, skills, self.on_missing_skill, self.default_skill)
            self._set_labels(answers, probas)
            return self
        answers = Answers.of(data)
        if answers.empty:
            self._set_empty()
            self.skills_ = pd.Series(dtype=float, name="skill")
            return self
        probas = _shares(answers.votes())
        self._set_labels(answers, probas)
        self.skills_ = answers.worker_series(_agreement(answers, most_probable(probas)))
        return self

    def fit_predict(self, data: Any, skills: pd.Series | None = None) -> pd.Series:
        return self.fit(data, skills).labels_

    def fit_predict_proba(self, data: Any, skills: pd.Series | None = None) -> pd.DataFrame:
        return self.fit(data, skills).probas_


class _Wrapped(CrowdKitAggregator):
    """A crowd-kit model fitted by a stableval estimator (``model_``) on the answers' count matrix."""

    def _estimator(self) -> Any:  # pragma: no cover - interface
        raise NotImplementedError

    #: tasks, workers and labels sorted (False: in order of first appearance, as crowd-kit draws a random start)
    sort: bool = True

    def _fit(self, data: Any, true_labels: Any = None) -> Answers | None:
        """Fit ``model_`` (None returned, results set empty, for empty input)."""
        answers = Answers.of(data, sort=self.sort)
        self.model_ = self._estimator()
        if answers.empty:
            self._set_empty()
            return None
        self.model_.fit_matrix(answers.matrix(), answers.n_workers, answers.n_labels, gold=answers.gold(true_labels))
        self._set_labels(answers, np.asarray(self.model_.posteriors_))
        return answers


class _SkillPredictor(_Wrapped):
    """A model whose ``skills_`` weight a vote on new data: ``predict`` and ``predict_proba``."""

    results = ("labels_", "probas_", "skills_")

    def fit(self, data: Any) -> Self:
        answers = self._fit(data)
        self.skills_ = (pd.Series(dtype=float, name="skill") if answers is None
                        else answers.worker_series(self.model_.rater_skills()))
        return self

    def predict(self, data: Any) -> pd.Series:
        """The labels of ``data``'s tasks by the vote weighted with the fitted ``skills_``."""
        answers, probas, _ = skill_vote(data, self.skills_)
        self._set_labels(answers, probas)
        return self.labels_

    def predict_proba(self, data: Any) -> pd.DataFrame:
        """The weighted vote shares of ``data``'s tasks (``predict``'s ``probas_``)."""
        self.predict(data)
        return self.probas_


class Wawa(_SkillPredictor):
    """crowd-kit's ``Wawa()`` ("worker agreement with aggregate"): each worker's skill is its agreement with the
    majority vote (ties to the lowest label, as crowd-kit's majority vote breaks them on its examples), and the
    labels are the vote weighted by those skills (:class:`stableval.aggregate.Wawa` counts a tied vote as a
    share of each tied label instead)."""

    def fit(self, data: Any) -> Self:
        majority = MajorityVote().fit(data)
        self.skills_ = majority.skills_
        if len(self.skills_):
            answers, probas, _ = skill_vote(data, self.skills_)
            self._set_labels(answers, probas)
        else:
            self._set_empty()
        return self


class ZeroBasedSkill(_SkillPredictor):
    """crowd-kit's ``ZeroBasedSkill(n_iter=100, lr_init=1.0, lr_steps_to_reduce=20, lr_reduce_factor=0.5,
    eps=1e-5)``: skills start at 1/K + eps and step ``n_iter`` times towards each worker's agreement with the
    skill-weighted vote (its ties to the lowest label, as crowd-kit breaks them on its examples;
    :class:`stableval.aggregate.ZeroBasedSkill` counts a tied vote as a share of each tied label instead)."""

    def __init__(self, n_iter: int = 100, lr_init: float = 1.0, lr_steps_to_reduce: int = 20,
                 lr_reduce_factor: float = 0.5, eps: float = 1e-5) -> None:
        from stableval.aggregate import ZeroBasedSkill as Native

        Native(n_iter=n_iter, lr_init=lr_init, lr_steps_to_reduce=lr_steps_to_reduce,
               lr_reduce_factor=lr_reduce_factor, eps=eps)  # the parameters are checked there
        self.n_iter, self.lr_init, self.lr_steps_to_reduce = n_iter, lr_init, lr_steps_to_reduce
        self.lr_reduce_factor, self.eps = lr_reduce_factor, eps

    def fit(self, data: Any) -> Self:
        answers = Answers.of(data)
        if answers.empty:
            self._set_empty()
            self.skills_ = pd.Series(dtype=float, name="skill")
            return self
        skills = np.full(answers.n_workers, 1.0 / answers.n_labels + self.eps)
        rate = self.lr_init
        for round_ in range(1, self.n_iter + 1):
            if round_ % self.lr_steps_to_reduce == 0:
                rate *= self.lr_reduce_factor
            labels = most_probable(answers.votes(skills))
            skills = skills + rate * (_agreement(answers, labels) - skills)
        self.skills_ = answers.worker_series(skills)
        self._set_labels(answers, _shares(answers.votes(skills)))
        return self


class OneCoinDawidSkene(_Wrapped):
    """crowd-kit's ``OneCoinDawidSkene(n_iter=100, tol=1e-5)`` (:class:`stableval.aggregate.OneCoinDawidSkene`;
    stableval's stopping rule: the log-likelihood gains less than ``tol`` relative)."""

    results = ("labels_", "probas_", "skills_", "errors_", "priors_")

    def __init__(self, n_iter: int = 100, tol: float = 1e-5) -> None:
        self.n_iter, self.tol = n_iter, tol
        self._estimator()

    def _estimator(self) -> Any:
        from stableval.aggregate import OneCoinDawidSkene as Native

        return Native(max_iter=self.n_iter, tol=self.tol)

    def fit(self, data: Any) -> Self:
        answers = self._fit(data)
        if answers is None:
            self.skills_, self.errors_ = pd.Series(dtype=float, name="skill"), pd.DataFrame()
            self.priors_ = pd.Series(dtype=float, name="prior")
            return self
        self.skills_ = answers.worker_series(self.model_.rater_skills())
        self.errors_ = answers.errors_frame(self.model_.confusion_)
        self.priors_ = answers.label_priors(self.model_.priors_)
        return self


class DawidSkene(CrowdKitAggregator):
    """crowd-kit's ``DawidSkene(n_iter=100, tol=1e-5, initial_error_strategy=None)``: Dawid & Skene (1979) EM
    from the vote shares, step for step as crowd-kit runs it (``n_iter=0``: the vote and the confusion matrices
    it implies), on stableval's EM (:func:`stableval.aggregate.em.run_em`; stops when the log-likelihood gains
    less than ``tol`` relative).

    ``fit(data, true_labels=None, initial_error=None)``: ``true_labels`` (Series by task) clamp the known tasks;
    ``initial_error`` (rows (worker, given label), a column per true label: counts or probabilities from past work)
    is added to the first M-step's expected counts (``initial_error_strategy="addition"``) or replaces them
    (``"assign"``: every worker of the data must be there; probabilities must sum to 1 per worker and true label).
    """

    results = ("labels_", "probas_", "errors_", "priors_")

    def __init__(self, n_iter: int = 100, tol: float = 1e-5,
                 initial_error_strategy: Literal["assign", "addition"] | None = None) -> None:
        if n_iter < 0:
            raise ValueError(f"n_iter must be >= 0, got {n_iter}")
        if initial_error_strategy not in (None, "assign", "addition"):
            raise ValueError(f"initial_error_strategy={initial_error_strategy!r}; allowed: assign, addition, None")
        self.n_iter, self.tol, self.initial_error_strategy = n_iter, tol, initial_error_strategy

    def fit(self, data: Any, true_labels: pd.Series | None = None,
            initial_error: pd.DataFrame | None = None) -> Self:
        from stableval.aggregate._base import clamp_gold
        from stableval.aggregate.em import run_em

        answers = Answers.of(data)
        if answers.empty:
            self._set_empty()
            self.errors_, self.priors_ = pd.DataFrame(), pd.Series(dtype=float, name="prior")
            return self
        r, k = answers.n_workers, answers.n_labels
        X, gold = answers.matrix(), answers.gold(true_labels)
        shares = _shares(answers.votes())
        clamp_gold(shares, gold)
        expected = np.asarray(X.T @ shares).reshape(r, k, k).transpose(0, 2, 1)  # [worker, true, given]
        expected = self._with_initial_error(answers, expected, initial_error)
        confusion = _normalised(expected)
        priors = shares.mean(axis=0)
        posteriors = shares
        if self.n_iter > 0:  # then the M-step of the final posteriors, as crowd-kit reports it
            posteriors = run_em(X, n_raters=r, n_levels=k, init_params=(priors, confusion), max_iter=self.n_iter,
                                tol=self.tol, gold=gold, acceleration="none").posteriors.T
            priors = posteriors.mean(axis=0)
            confusion = _normalised(np.asarray(X.T @ posteriors).reshape(r, k, k).transpose(0, 2, 1))
        self._set_labels(answers, np.asarray(posteriors))
        self.priors_ = answers.label_priors(priors)
        self.errors_ = answers.errors_frame(confusion)
        if initial_error is not None and self.initial_error_strategy is not None:
            order = [pair for pair in initial_error.index if pair in self.errors_.index]
            self.errors_ = pd.concat([self.errors_.loc[order], self.errors_.drop(order)])
        return self

    def fit_predict(self, data: Any, true_labels: pd.Series | None = None,
                    initial_error: pd.DataFrame | None = None) -> pd.Series:
        return self.fit(data, true_labels, initial_error).labels_

    def fit_predict_proba(self, data: Any, true_labels: pd.Series | None = None,
                          initial_error: pd.DataFrame | None = None) -> pd.DataFrame:
        return self.fit(data, true_labels, initial_error).probas_

    def _with_initial_error(self, answers: Answers, expected: np.ndarray,
                            initial_error: pd.DataFrame | None) -> np.ndarray:
        """The first M-step's expected counts [worker, true, given] with ``initial_error`` added or assigned."""
        if initial_error is None or self.initial_error_strategy is None:
            return expected
        if list(initial_error.index.names) != ["worker", "label"]:
            raise ValueError(f"the index of initial_error must be ['worker', 'label'], got "
                             f"{list(initial_error.index.names)}")
        r, k = answers.n_workers, answers.n_labels
        index = pd.MultiIndex.from_product([answers.workers, answers.labels], names=["worker", "label"])
        given = initial_error.reindex(index=index, columns=answers.labels)  # rows (worker, given), columns true
        table = given.to_numpy(dtype=float).reshape(r, k, k).transpose(0, 2, 1)  # [worker, true, given]
        if self.initial_error_strategy == "addition":
            return expected + np.nan_to_num(table)
        answered = np.zeros(r * k, dtype=bool)
        answered[answers.worker * k + answers.label] = True
        absent = np.isnan(given.to_numpy(dtype=float)).any(axis=1) & answered
        if absent.any():
            workers = pd.unique(index[absent].get_level_values("worker"))
            raise ValueError(f"initial_error_strategy='assign' needs every worker of the data in initial_error: "
                             f"{len(workers)} missing, e.g. {workers[0]!r}")
        values = initial_error.to_numpy(dtype=float)
        if (values <= 1.0).all() and not np.allclose(initial_error.groupby(level="worker").sum(), 1.0):
            raise ValueError("The sum of each worker's error matrix in initial_error should be 1.0 (per true "
                             "label) when it holds probabilities")
        return np.nan_to_num(table)


def _normalised(expected: np.ndarray, floor: float = 1e-10) -> np.ndarray:
    """Confusion rows [worker, true, :] from expected counts (floored, so that no answer is impossible)."""
    counts = np.maximum(expected, floor)
    return counts / counts.sum(axis=2, keepdims=True)


class GLAD(_Wrapped):
    """crowd-kit's ``GLAD(n_iter=100, tol=1e-5, m_step_max_iter=25, m_step_tol=1e-2)`` (Whitehill et al. 2009;
    :class:`stableval.aggregate.GLAD`): ``alphas_`` the workers' abilities, ``betas_`` the tasks' log inverse
    difficulties, ``priors_``, ``loss_history_`` (the objective per iteration)."""

    results = ("labels_", "probas_", "alphas_", "betas_", "priors_", "loss_history_")

    def __init__(self, n_iter: int = 100, tol: float = 1e-5, m_step_max_iter: int = 25,
                 m_step_tol: float = 1e-2) -> None:
        self.n_iter, self.tol, self.m_step_max_iter, self.m_step_tol = n_iter, tol, m_step_max_iter, m_step_tol
        self._estimator()

    def _estimator(self) -> Any:
        from stableval.aggregate import GLAD as Native

        return Native(max_iter=self.n_iter, tol=self.tol, m_step_max_iter=self.m_step_max_iter,
                      m_step_tol=self.m_step_tol)

    def fit(self, data: Any) -> Self:
        answers = self._fit(data)
        if answers is None:
            self.alphas_, self.betas_ = pd.Series(dtype=float, name="alpha"), pd.Series(dtype=float, name="beta")
            self.priors_, self.loss_history_ = pd.Series(dtype=float, name="prior"), []
            return self
        self.alphas_ = answers.worker_series(self.model_.ability_, name="alpha")
        self.betas_ = answers.task_series(self.model_.log_beta_, name="beta")
        self.priors_ = answers.label_priors(self.model_.priors_)
        self.loss_history_ = [float(value) for value in self.model_.objective_]
        return self


class MACE(_Wrapped):
    """crowd-kit's ``MACE(n_restarts=10, n_iter=50, method="vb", smoothing=0.1, default_noise=0.5, alpha=0.5,
    beta=0.5, random_state=0)`` (Hovy et al. 2013; :class:`stableval.aggregate.MACE` with crowd-kit's random
    start, every one of the ``n_iter`` iterations run): ``thetas_`` (workers × labels) each worker's spamming
    distribution, ``spamming_`` (workers × 2) its [spamming, knowing] weights, ``skills_`` its competence.
    Restart j is seeded ``random_state + j`` (crowd-kit reuses one seed for every restart). ``smoothing`` is
    accepted and, as in crowd-kit 1.4.2, not used: the ``em`` smoothing is 0.01 / (number of labels)."""

    results = ("labels_", "probas_", "thetas_", "spamming_", "skills_")
    sort = False

    def __init__(self, n_restarts: int = 10, n_iter: int = 50, method: Literal["vb", "em"] = "vb",
                 smoothing: float = 0.1, default_noise: float = 0.5, alpha: float = 0.5, beta: float = 0.5,
                 random_state: int = 0) -> None:
        self.n_restarts, self.n_iter, self.method, self.smoothing = n_restarts, n_iter, method, smoothing
        self.default_noise, self.alpha, self.beta, self.random_state = default_noise, alpha, beta, random_state
        self._estimator()

    def _estimator(self) -> Any:
        from stableval.aggregate import MACE as Native

        return Native(n_restarts=self.n_restarts, max_iter=max(self.n_iter, 1), tol=0.0, method=self.method,
                      alpha=self.alpha, beta=self.beta, default_noise=self.default_noise,
                      seed=self.random_state, start="crowdkit")

    def fit(self, data: Any) -> Self:
        answers = self._fit(data)
        if answers is None:
            self.thetas_, self.spamming_ = np.zeros((0, 0)), np.zeros((0, 2))
            self.skills_ = pd.Series(dtype=float, name="skill")
            return self
        self.thetas_ = np.asarray(self.model_.thetas_)
        self.spamming_ = np.asarray(self.model_.spamming_)
        self.skills_ = answers.worker_series(self.model_.competence_)
        return self
