"""MT-Bench judgments (FastChat ``llm_judge``) → pairwise votes or ratings by LLM judges.

``gen_judgment.py`` writes JSON Lines under ``data/mt_bench/model_judgment/``:

* **pairwise** (``gpt-4_pair.jsonl``): ``question_id``, ``model_1``, ``model_2``, ``judge`` (``[judge model,
  prompt name]``), ``turn``, and the verdicts of the two position orders, ``g1_winner`` (model_1 shown first) and
  ``g2_winner`` (the answers swapped), each ``model_1``, ``model_2``, ``tie`` or ``error``. One vote per line: the
  winner both orders agree on, a tie when they disagree (MT-Bench's rule for an inconsistent judge: counted in the
  notes). A verdict ``error`` (the judge's answer could not be parsed) leaves the line out.
* **single-answer grading** (``gpt-4_single.jsonl``): ``question_id``, ``model``, ``judge``, ``turn`` and
  ``score`` (1–10; ``-1`` when the judge's answer could not be parsed: left out). Ratings on the scale 1..10,
  credited linearly.

The judge model is the rater (``rater_kind=llm``); each (question, turn) is an item (``81-turn1``).

>>> import json, pathlib, tempfile
>>> from stableval.data.options import InputOptions
>>> path = pathlib.Path(tempfile.mkdtemp()) / "gpt-4_single.jsonl"
>>> lines = [{"question_id": 81, "model": "vicuna-13b", "judge": ["gpt-4", "single-v1"], "score": 8.0, "turn": 1},
...          {"question_id": 81, "model": "llama-13b", "judge": ["gpt-4", "single-v1"], "score": -1, "turn": 1}]
>>> _ = path.write_text("\\n".join(json.dumps(line) for line in lines))
>>> imported = read_mt_bench_judgments(path, InputOptions())
>>> imported.frame.to_dict("records"), imported.levels[-1], imported.notes[-1]
([{'item': '81-turn1', 'agent': 'vicuna-13b', 'rater': 'gpt-4', 'label': '8'}], '10', \
'left out 1 judgment(s) scored -1 (the verdict could not be parsed)')
"""

from __future__ import annotations

import os
from typing import Any

from stableval.data.importers.imported import Imported, Rows
from stableval.data.importers.records import Tally, field, id_text, json_records, number_text, record_error
from stableval.data.importers.scales import number_scale
from stableval.data.options import InputOptions
from stableval.errors import InputError

__all__ = ["read_mt_bench_judgments"]

_WHAT = "MT-Bench judgments: JSON Lines from FastChat's gen_judgment.py (gpt-4_pair.jsonl or gpt-4_single.jsonl)"
_VERDICTS = {"model_1": "a", "model_2": "b", "tie": "tie"}


def _judge(line: dict[str, Any], number: int, source: str) -> str:
    judge = line.get("judge")
    name = id_text(judge[0]) if isinstance(judge, list) and judge else id_text(judge)
    if name is None:
        raise record_error("no judge", source=source, record=number, field="judge", value=judge, has_value=True,
                           allowed='["judge model", "prompt name"] (or the judge model\'s name)')
    return name


def _item(line: dict[str, Any], number: int, source: str) -> str:
    question = id_text(field(line, "question_id", source=source, number=number, what="the question id"))
    turn = id_text(line.get("turn"))
    if question is None:
        raise record_error("empty question id", source=source, record=number, field="question_id",
                           value=line.get("question_id"), has_value=True, allowed="the question id")
    return f"{question}-turn{turn}" if turn is not None else question


def read_mt_bench_judgments(path: str | os.PathLike[str], options: InputOptions) -> Imported:
    """Read MT-Bench pairwise or single-answer judgments (see the module docstring)."""
    source = str(path)
    lines = json_records(path, what=_WHAT)
    first = next((line for line in lines if isinstance(line, dict)), {})
    if "g1_winner" in first:
        return _pairs(lines, source)
    if "score" in first:
        return _singles(lines, source)
    raise InputError("neither pairwise (g1_winner) nor single-answer (score) judgments", file=source, row=1,
                     value=sorted(first), allowed=_WHAT)


def _pairs(lines: list[Any], source: str) -> Imported:
    rows = Rows("item", "agent_a", "agent_b", "rater", "winner")
    tally = Tally()
    inconsistent = 0
    for number, line in enumerate(lines, start=1):
        agents = [id_text(field(line, f"model_{k}", source=source, number=number, what="a model's name"))
                  for k in (1, 2)]
        verdicts = []
        for key in ("g1_winner", "g2_winner"):
            verdict = field(line, key, source=source, number=number, what="model_1, model_2, tie or error")
            if verdict != "error" and verdict not in _VERDICTS:
                raise record_error("unknown verdict", source=source, record=number, field=key, value=verdict,
                                   allowed="model_1, model_2, tie, error")
            verdicts.append(verdict)
        if "error" in verdicts:
            tally.add("judgment(s) with a verdict 'error' (the judge's answer could not be parsed)")
            continue
        winner = _VERDICTS[verdicts[0]]
        if verdicts[0] != verdicts[1]:
            winner = "tie"
            inconsistent += 1
        rows.add(number, item=_item(line, number, source), agent_a=str(agents[0]), agent_b=str(agents[1]),
                 rater=_judge(line, number, source), winner=winner)
    notes = [f"{len(lines):,} pairwise judgment(s) read: {len(rows):,} vote(s), one per judgment (the verdict "
             "both position orders agree on)"]
    if inconsistent:
        notes.append(f"{inconsistent:,} judgment(s) whose two position orders disagree counted as ties")
    fields = {"item": "question_id", "agent_a": "model_1", "agent_b": "model_2", "rater": "judge",
              "winner": "g1_winner"}
    return rows.imported(fields, [*notes, *tally.notes()])


def _singles(lines: list[Any], source: str) -> Imported:
    rows = Rows("item", "agent", "rater", "label")
    tally = Tally()
    scores = []
    for number, line in enumerate(lines, start=1):
        score = field(line, "score", source=source, number=number, what="the score, 1 to 10")
        if isinstance(score, bool) or not isinstance(score, int | float):
            raise record_error("a score that is not a number", source=source, record=number, field="score",
                               value=score, allowed="a number from 1 to 10, or -1")
        if score == -1:
            tally.add("judgment(s) scored -1 (the verdict could not be parsed)")
            continue
        if not 1 <= score <= 10:
            raise record_error("score out of range", source=source, record=number, field="score", value=score,
                               allowed="a number from 1 to 10, or -1")
        agent = id_text(field(line, "model", source=source, number=number, what="the model's name"))
        rows.add(number, item=_item(line, number, source), agent=str(agent), rater=_judge(line, number, source),
                 label=number_text(score))
        scores.append(float(score))
    levels, credit = number_scale(scores, low=1, high=10)
    notes = [f"{len(lines):,} single-answer judgment(s) read; scores 1..10 credited linearly (1 → 0, 10 → 1)"]
    fields = {"item": "question_id", "agent": "model", "rater": "judge", "label": "score"}
    return rows.imported(fields, [*notes, *tally.notes()], levels=levels, credit=credit)
