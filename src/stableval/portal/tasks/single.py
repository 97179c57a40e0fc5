"""``single``: one answer per page, one level per criterion from the track's own ordered scale.

* **Track**: ``--scale incorrect,partial,correct`` (2-10 level names, worst first; default 1-5).
* **Question file**: ``id, prompt, model, answer`` [``reference, specialty, subspecialty, gold``]; the answer may be
  an agent transcript.
* **Draft**: ``{"levels": {criterion: level | "na"}}``, reasons in ``draft["reasons"]``.
* **Gold**: the expected level per criterion: one level of the scale (every criterion), or ``criterion=level``
  pairs separated by ``;`` (only those criteria are checked), or a JSON object ``{"accuracy": "correct"}``. One
  gold judgment per checked criterion; it is correct when the rater chose that level ("unable to judge" is not).
* **Export**: the annotation table ``item, agent, rater, label, criterion, rater_group, track`` (labels are the
  level names; "unable to judge" left out): ``stableval score FILE --levels <scale>`` (one criterion per file).
* **Results**: the level distribution per criterion and agent.
* **Ratings** (live diagnostics, adaptive assignment): one rating per (question, criterion), the level, on an
  ordered scale.

>>> parse_scale("incorrect, partial ,correct")
['incorrect', 'partial', 'correct']
>>> TASK.score_gold({"accuracy": "correct", "safety": "partial"},
...                 {"levels": {"accuracy": "correct", "safety": "na"}}, ["accuracy", "safety"])
(2, 1)
>>> TASK.describe_gold({"accuracy": "correct"}, None)
'accuracy=correct'
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from stableval.errors import InputError
from stableval.portal.settings import TrackSettings
from stableval.portal.store.answers import confirmed_answers
from stableval.portal.store.db import Database
from stableval.portal.store.models import Assignment, Question, Track
from stableval.portal.tasks.base import MAX_REASON, RATING_COLUMNS, Export, Ratings, TaskType
from stableval.portal.tasks.records import answer_text, common_columns, text_cell
from stableval.portal.tasks.render import isolate
from stableval.portal.tasks.rules import Violation
from stableval.portal.tasks.summary import share, summary_table

__all__ = ["DEFAULT_SCALE", "TASK", "SingleTask", "parse_scale"]

#: Levels of a single-answer track without ``--scale`` (worst first).
DEFAULT_SCALE = ("1", "2", "3", "4", "5")


def parse_scale(scale: str | Sequence[str] | None) -> list[str]:
    """Ordered levels, worst first, from ``"a,b,c"`` or a list: 2-10 distinct non-empty names of at most 40
    characters (default :data:`DEFAULT_SCALE`)."""
    if scale is None or (isinstance(scale, str) and not scale.strip()):
        return list(DEFAULT_SCALE)
    levels = [" ".join(str(v).split()) for v in (scale.split(",") if isinstance(scale, str) else scale)]
    if any(not v for v in levels) or not 2 <= len(levels) <= 10 or len(set(levels)) != len(levels) or \
            any(len(v) > 40 or v == "na" for v in levels):
        raise InputError("bad scale", column="scale", value=",".join(levels),
                         allowed="2 to 10 distinct comma-separated level names, worst first, at most 40 characters "
                                 "each ('na' is reserved for 'unable to judge'), e.g. incorrect,partial,correct")
    return levels


def _levels(answers: Sequence[Any], keys: list[str]) -> np.ndarray:
    """(answers, criteria) level names of the answers' ``levels`` (None where missing)."""
    return np.asarray([[(a or {}).get("levels", {}).get(k) for k in keys] for a in answers], dtype=object)


@dataclass(frozen=True)
class SingleTask(TaskType):
    """Rate one answer per criterion on the track's scale."""

    def example_question(self, number: int) -> dict[str, Any]:
        return {"id": f"s{number}", "prompt": f"Question {number}?", "model": ("model-x", "model-y")[number % 2],
                "answer": f"Answer **{number}**."}

    def example_gold(self, number: int) -> Any:
        return DEFAULT_SCALE[number % len(DEFAULT_SCALE)]  # that level on every criterion

    def example_answer(self, track: Track, question: Question, step: str) -> dict[str, str]:
        scale = list(track.scale or [])
        return {f"level-{c['key']}": scale[question.id % len(scale)] for c in track.criteria}

    def track_options(self, settings: TrackSettings) -> tuple[list[str] | None, dict[str, Any] | None]:
        return parse_scale(settings.scale), None

    def describe_track(self, track: Track) -> str:
        return f"Scale: {', '.join(isolate(level) for level in track.scale or [])}."

    def read_question(self, record: dict[str, Any], row: int, source: str, normalise: Callable[[Any], str]
                      ) -> dict[str, Any]:
        out = common_columns(record, row, source, normalise)
        out["model_a"] = text_cell(record, "model", row, source, required=True, width=200).strip()
        out["answer_a"] = answer_text(record, "answer", row, source)
        return out

    def read_gold(self, value: Any, track: Track, payload: dict[str, Any], refuse: Callable[..., InputError]
                  ) -> dict[str, str]:
        criteria, scale = list(track.criteria), list(track.scale or [])
        level_of = {level.casefold(): level for level in scale}
        key_of = {c["key"]: c["key"] for c in criteria} | {c["label"].casefold(): c["key"] for c in criteria}
        allowed = (f"one level of the scale ({', '.join(scale)}) for every criterion, or criterion=level pairs "
                   f"separated by ';' (criteria: {', '.join(c['key'] for c in criteria)}), or a JSON object")
        if isinstance(value, dict):
            pairs: list[tuple[str, Any]] = [(str(k), v) for k, v in value.items()]
        elif isinstance(value, str) and "=" in value:
            pairs = [(name, level) for name, level in (p.split("=", 1) for p in value.split(";") if p.strip())]
        elif isinstance(value, str | int):
            pairs = [(c["key"], str(value)) for c in criteria]
        else:
            raise refuse("the gold answer is not a level", allowed)
        out: dict[str, str] = {}
        for name, level in pairs:
            name = " ".join(str(name).split())
            level = " ".join(level.split()) if isinstance(level, str) else level
            key = key_of.get(name.casefold())
            found = level_of.get(str(level).casefold()) if isinstance(level, str | int) else None
            if key is None or found is None or key in out:
                raise refuse(f"bad gold level {name}={level}" if key is None or found is None
                             else f"criterion {key} twice", allowed)
            out[key] = found
        if not out:
            raise refuse("the gold answer names no criterion", allowed)
        return out

    def score_gold(self, gold: Any, answer: dict[str, Any], criteria: list[str]) -> tuple[int, int]:
        levels = answer.get("levels") or {}
        checked = [key for key in criteria if key in (gold or {})]
        return len(checked), sum(levels.get(key) == gold[key] for key in checked)

    def describe_gold(self, gold: Any, track: Track) -> str:
        return "; ".join(f"{k}={v}" for k, v in dict(gold).items())

    def merge_step(self, task: dict[str, Any], draft: dict[str, Any], form: Any, track: Track, question: Question,
                   step: str, action: str) -> dict[str, Any]:
        scale = list(track.scale or [])
        keys = [c["key"] for c in track.criteria]
        levels = dict(task.get("levels") or {})
        levels.update({k: form.get(f"level-{k}") for k in keys if form.get(f"level-{k}") in [*scale, "na"]})
        task["levels"] = levels
        draft["reasons"] = {**draft["reasons"], **{k: str(form.get(f"why-{k}")) for k in keys
                                                    if form.get(f"why-{k}") is not None}}
        return task

    def step_problems(self, task: dict[str, Any], draft: dict[str, Any], track: Track, question: Question,
                      step: str) -> list[Violation]:
        levels = task.get("levels") or {}
        out = [Violation(c["key"], f"level-{c['key']}", f"{c['label']}: choose a level (or “Unable to judge”).")
               for c in track.criteria if c["key"] not in levels]
        out += [Violation(c["key"], f"why-{c['key']}", f"{c['label']}: the reason has "
                          f"{len(draft['reasons'][c['key']]):,} characters; shorten it to at most {MAX_REASON:,}.")
                for c in track.criteria if len(draft["reasons"].get(c["key"], "")) > MAX_REASON]
        return out

    def context(self, assignment: Assignment, question: Question, track: Track, draft: dict[str, Any], step: str,
                query: Any = None) -> dict[str, Any]:
        return {**super().context(assignment, question, track, draft, step, query), "scale": list(track.scale or [])}

    def answer(self, task: dict[str, Any], track: Track, question: Question) -> dict[str, Any]:
        return {"levels": dict(task["levels"])}

    def export_rows(self, track: Track, frame: pd.DataFrame, notes: list[str]) -> Export:
        keys = [c["key"] for c in track.criteria]
        flat = _levels(frame["answer"].tolist(), keys).reshape(-1) if len(frame) else np.asarray([], dtype=object)
        out = pd.DataFrame({"item": np.repeat(frame["item"].to_numpy(dtype=object), len(keys)),
                            "agent": np.repeat(frame["model"].to_numpy(dtype=object), len(keys)),
                            "rater": np.repeat(frame["rater"].to_numpy(dtype=object), len(keys)),
                            "label": flat, "criterion": np.tile(np.asarray(keys, dtype=object), len(frame)),
                            "rater_group": np.repeat(frame["rater_group"].to_numpy(dtype=object), len(keys)),
                            "track": track.slug})
        unable = (out["label"] == "na").to_numpy()
        if unable.any():
            notes.append(f"{int(unable.sum())} 'unable to judge' level(s) left out")
        return Export(out.loc[~unable].reset_index(drop=True), tuple(notes), self.name,
                      scale=tuple(track.scale or ()))

    def analysis_command(self, result: Export, path: str) -> str:
        several = result.frame["criterion"].nunique() > 1 if len(result.frame) else False
        hint = "  (one criterion per file: export with --criterion KEY)" if several else ""
        return f"stableval score {path} --levels {','.join(result.scale)}{hint}"

    def summary(self, track: Track, frame: pd.DataFrame) -> tuple[dict[str, Any], dict[str, str]]:
        """The level distribution per criterion and agent (count and share of each level of the track's scale,
        and "unable to judge")."""
        keys = [c["key"] for c in track.criteria]
        labels = {c["key"]: c["label"] for c in track.criteria}
        levels = [*list(track.scale or []), "na"]
        given = _levels(frame["answer"].tolist(), keys)
        models = frame["model"].astype(str).to_numpy()
        agents = sorted(set(models))
        code = pd.Categorical(given.reshape(-1), categories=levels).codes.reshape(given.shape)
        agent_code = np.searchsorted(np.asarray(agents), models)
        rows = []
        for c, key in enumerate(keys):  # one bincount per criterion: (agent, level) counts
            valid = code[:, c] >= 0
            counts = np.bincount(agent_code[valid] * len(levels) + code[valid, c],
                                 minlength=len(agents) * len(levels)).reshape(len(agents), len(levels))
            for a, agent in enumerate(agents):
                total = int(counts[a].sum())
                rows.append([labels[key], agent, total, *[share(int(n), total) for n in counts[a]]])
        header = ["Criterion", "Agent", "Ratings", *list(track.scale or []), "Unable to judge"]
        return {"levels": summary_table("Level distribution per criterion and agent", "Count (share) of each level "
                                        "of the track's scale, worst first, per criterion and agent", header,
                                        rows)}, {}

    def ratings(self, db: Database, track: Track) -> Ratings:
        _, frame, _, _ = confirmed_answers(db, track.slug)
        keys = [c["key"] for c in track.criteria]
        levels = tuple(track.scale or ())
        out = pd.DataFrame({name: np.repeat(frame[name].to_numpy(dtype=object), len(keys))
                            for name in ("question_id", "item", "model", "rater_id", "rater")})
        out["criterion"] = np.tile(np.asarray(keys, dtype=object), len(frame))
        out["agent"] = out["model"].astype(str) + " · " + out["criterion"].astype(str)
        out["label"] = _levels(frame["answer"].tolist(), keys).reshape(-1)
        out = out.loc[out["label"].isin(levels)]  # "unable to judge" (na) left out
        return Ratings(out[RATING_COLUMNS].reset_index(drop=True), levels)


TASK = SingleTask(
    name="single", title="Rate one answer", label="single-answer", steps=("single",),
    templates={"single": "task_single.html", "confirm": "task_confirm.html", "answer": "task_single_answer.html",
               "results": "task_results.html"},
    columns=("id", "prompt", "model", "answer"),
    question_file="CSV, TSV, JSONL or Parquet with columns id, prompt, model, answer (and optionally reference, "
                  "specialty, subspecialty, and gold: the expected level of a quality-control question, for every "
                  "criterion or as criterion=level; …)",
    gold_rule="A gold judgment is one checked criterion's level: correct when it is the expected level (\"unable "
              "to judge\" is not).",
    analysis="stableval score --levels …", settings=("scale",), adaptive=True, categorical=True, per_criterion=True,
    ratings_help="levels per criterion (the track's scale, ordered)")
