"""AlpacaEval annotations → pairwise votes by LLM judges.

AlpacaEval writes its judge's verdicts to ``results/<model>/<annotator>/annotations.json``: a JSON list with, per
instruction, ``instruction``, ``generator_1`` (the baseline) and ``output_1``, ``generator_2`` (the model
evaluated) and ``output_2``, ``annotator`` (the judge configuration) and ``preference``: a number from 1 (output 1
preferred) to 2 (output 2 preferred); 1.5 is a tie, and the weighted judges of AlpacaEval 2.0 give the probability
as a fraction in between. Read one file, or a results folder (every ``annotations.json`` under it, so several
models meet the baseline on the same instructions).

Each annotation is one vote by its annotator (``rater_kind=llm``): a preference below 1.5 is a win of
``generator_1``, above 1.5 of ``generator_2``, 1.5 a tie (fractional preferences are rounded to the side they lean
to: counted in the notes; a preference of 0, which some versions write for a draw, is a tie too). The item is the
instruction. Annotations without a preference (the judge's answer could not be parsed) are left out and counted.

>>> import json, pathlib, tempfile
>>> from stableval.data.options import InputOptions
>>> rows = [{"instruction": "Say hi", "generator_1": "gpt4_turbo", "generator_2": "my-model", "output_1": "Hi",
...          "output_2": "Hello!", "annotator": "weighted_alpaca_eval_gpt4_turbo", "preference": 1.83},
...         {"instruction": "Add 2+2", "generator_1": "gpt4_turbo", "generator_2": "my-model", "output_1": "4",
...          "output_2": "5", "annotator": "weighted_alpaca_eval_gpt4_turbo", "preference": None}]
>>> path = pathlib.Path(tempfile.mkdtemp()) / "annotations.json"
>>> _ = path.write_text(json.dumps(rows))
>>> imported = read_alpaca_eval(path, InputOptions())
>>> imported.frame[["agent_a", "agent_b", "winner"]].values.tolist(), imported.notes[-1]
([['gpt4_turbo', 'my-model', 'b']], 'left out 1 annotation(s) without a preference')
"""

from __future__ import annotations

import math
import os
from pathlib import Path

from stableval.data.importers.imported import Imported, Rows
from stableval.data.importers.records import Tally, field, id_text, json_records, record_error
from stableval.data.options import InputOptions
from stableval.errors import InputError

__all__ = ["read_alpaca_eval"]

_WHAT = "AlpacaEval annotations: a JSON list with instruction, generator_1, generator_2, annotator, preference"


def _files(path: Path) -> list[Path]:
    if not path.is_dir():
        return [path]
    found = sorted(path.rglob("annotations.json"))
    if not found:
        raise InputError("no annotations.json under the folder", file=str(path),
                         allowed="an AlpacaEval results folder (results/<model>/<annotator>/annotations.json)")
    return found


def read_alpaca_eval(path: str | os.PathLike[str], options: InputOptions) -> Imported:
    """Read AlpacaEval annotations (see the module docstring)."""
    rows = Rows("item", "agent_a", "agent_b", "rater", "winner")
    tally = Tally()
    rounded = ties = total = 0
    files = _files(Path(path))
    for file in files:
        source = str(file)
        for number, row in enumerate(json_records(file, what=_WHAT), start=1):
            total += 1
            item = id_text(field(row, "instruction", source=source, number=number, what="the instruction"))
            agents = [id_text(field(row, f"generator_{k}", source=source, number=number, what="the model's name"))
                      for k in (1, 2)]
            if item is None or None in agents:
                raise record_error("an empty instruction or generator", source=source, record=number,
                                   field="instruction" if item is None else "generator_1", has_value=False,
                                   allowed="the instruction and both models' names")
            preference = row.get("preference")
            if preference is None or (isinstance(preference, float) and math.isnan(preference)):
                tally.add("annotation(s) without a preference")
                continue
            if isinstance(preference, bool) or not isinstance(preference, int | float) or not (
                    preference == 0 or 1 <= preference <= 2):
                raise record_error("preference out of range", source=source, record=number, field="preference",
                                   value=preference, allowed="a number from 1 (output_1 preferred) to 2 (output_2 "
                                                             "preferred), 1.5 a tie; 0 a draw; or null")
            if preference in (0, 1.5):
                winner = "tie"
                ties += 1
            else:
                winner = "a" if preference < 1.5 else "b"
                rounded += preference not in (1, 2)
            rater = id_text(row.get("annotator")) or "alpaca_eval"
            rows.add(number, item=str(item), agent_a=str(agents[0]), agent_b=str(agents[1]), rater=rater,
                     winner=winner)
    notes = [f"{total:,} annotation(s) read from {len(files):,} file(s): {len(rows):,} vote(s); item: the "
             "instruction; the annotator is the rater"]
    if rounded:
        notes.append(f"{rounded:,} fractional preference(s) counted as a win of the side they lean to")
    if ties:
        notes.append(f"{ties:,} tie(s) (preference 1.5, or 0 for a draw)")
    fields = {"item": "instruction", "agent_a": "generator_1", "agent_b": "generator_2", "rater": "annotator",
              "winner": "preference"}
    return rows.imported(fields, [*notes, *tally.notes()])
