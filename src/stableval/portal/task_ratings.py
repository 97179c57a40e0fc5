"""The answers of ``single`` and ``mcq`` tracks as categorical ratings, the input of the project's rater model
(live diagnostics, :mod:`stableval.portal.live_diagnostics`; adaptive assignment, :mod:`stableval.portal.adaptive`).

* ``single``: one rating per (question, criterion), the level name of the track's scale (an ordered scale, worst
  first); "unable to judge" is left out.
* ``mcq``: one rating per question, the **blind** answer (given before the key is shown) as a nominal label: the
  option letter when one option was ticked, ``several`` for more than one, ``none`` for "no option answers the
  question" (:data:`MCQ_LEVELS`).

Gold questions and flagged submissions are left out, as in the exports.

>>> blind_labels([["B"], ["A", "C"], []])
['B', 'several', 'none']
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from stableval.portal.db import Database
from stableval.portal.tasks import LETTERS

__all__ = ["CATEGORICAL_TASKS", "MCQ_LEVELS", "blind_labels", "categorical_ratings"]

#: Task types whose answers are categorical ratings (the STABLEVAL rater model applies).
CATEGORICAL_TASKS = ("single", "mcq")
#: Levels of an mcq blind answer (nominal).
MCQ_LEVELS = (*LETTERS, "several", "none")


def blind_labels(blind: list[list[str]] | pd.Series) -> list[str]:
    """The nominal label of each blind answer (see the module docstring)."""
    return [answer[0] if len(answer) == 1 else "several" if answer else "none" for answer in blind]


def categorical_ratings(db: Database, slug: str) -> tuple[pd.DataFrame, tuple[str, ...], str]:
    """(ratings, levels, task type) of a ``single`` or ``mcq`` track. Ratings: one row per rating with columns
    ``question_id, item, model, agent, criterion, rater_id, rater, label`` (``label`` a level name; ``agent`` is
    ``model · criterion`` for single, ``blind answer`` for mcq). Other task types: an empty frame."""
    from stableval.portal.task_export import confirmed_answers

    track, frame, _, _ = confirmed_answers(db, slug)
    columns = ["question_id", "item", "model", "agent", "criterion", "rater_id", "rater", "label"]
    answers: list[Any] = frame["answer"].tolist()
    if track.task_type == "single":
        keys = [c["key"] for c in track.criteria]
        levels = tuple(track.scale or ())
        given = np.asarray([[(a or {}).get("levels", {}).get(k) for k in keys] for a in answers],
                           dtype=object).reshape(-1)
        out = pd.DataFrame({name: np.repeat(frame[name].to_numpy(dtype=object), len(keys))
                            for name in ("question_id", "item", "model", "rater_id", "rater")})
        out["criterion"] = np.tile(np.asarray(keys, dtype=object), len(frame))
        out["agent"] = out["model"].astype(str) + " · " + out["criterion"].astype(str)
        out["label"] = given
        out = out.loc[out["label"].isin(levels)]  # "unable to judge" (na) left out
        return out[columns].reset_index(drop=True), levels, track.task_type
    if track.task_type == "mcq":
        out = frame[["question_id", "item", "model", "rater_id", "rater"]].copy()
        out["criterion"] = "blind"
        out["agent"] = "blind answer"
        out["label"] = blind_labels([list((a or {}).get("blind") or []) for a in answers])
        return out[columns].reset_index(drop=True), MCQ_LEVELS, track.task_type
    return pd.DataFrame(columns=columns), (), track.task_type
