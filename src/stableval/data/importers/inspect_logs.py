"""Inspect (``inspect_ai``) eval logs → ratings, one per sample per scorer, by LLM-judge raters.

An eval log holds the evaluated model (``eval.model``), the task (``eval.task``) and its ``samples``, each with
``id``, ``epoch``, ``scores`` (scorer name → ``{"value", "answer", "explanation"}``) and ``error`` when the sample
failed. Read a ``.json`` log, an ``.eval`` log (a zip with ``header.json`` or ``start.json`` and
``samples/*.json``; ``inspect log convert --to json`` turns any other layout into a ``.json`` log), or a folder of
logs (one model each; the log viewer's ``logs.json`` index is skipped).

Each sample's score from each scorer is one rating of the model's answer to the sample (the item: the sample id,
prefixed by the task when the logs hold several tasks), by the scorer (``rater_kind=llm``; ``columns.label``
reads one scorer only). Values: Inspect's grades ``C`` (correct), ``P`` (partial), ``I`` (incorrect) and ``N`` (no
answer) are levels credited 1, 0.5, 0, 0 as Inspect's ``value_to_float`` does; numbers (and true/false) are a
numeric scale; when both occur the grades become those numbers. Samples that ended in an error or have no score,
and scores that are not one value (a dict or a list), are left out and counted. A sample scored in several epochs
gives repeated judgments (``duplicates="keep"`` keeps them).

>>> import json, pathlib, tempfile
>>> from stableval.data.options import InputOptions
>>> log = {"version": 2, "status": "success", "eval": {"task": "arith", "model": "openai/gpt-4o"},
...        "samples": [{"id": 1, "epoch": 1, "scores": {"match": {"value": "C"}}},
...                    {"id": 2, "epoch": 1, "scores": {"match": {"value": "I"}}},
...                    {"id": 3, "epoch": 1, "scores": {}, "error": {"message": "timeout"}}]}
>>> path = pathlib.Path(tempfile.mkdtemp()) / "arith.json"
>>> _ = path.write_text(json.dumps(log))
>>> imported = read_inspect_logs(path, InputOptions())
>>> imported.frame["label"].tolist(), imported.levels, imported.credit, imported.notes[-1]
(['C', 'I'], ('I', 'C'), (0.0, 1.0), 'left out 1 sample(s) that ended in an error')
"""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path
from typing import Any

from stableval.data.importers.imported import Imported, Rows
from stableval.data.importers.records import Tally, id_text, json_document, number_text, record_error
from stableval.data.importers.scales import label_scale, number_scale
from stableval.data.options import InputOptions
from stableval.errors import InputError

__all__ = ["GRADES", "read_inspect_logs"]

#: Inspect's letter grades, worst first, and the credit its ``value_to_float`` gives them.
GRADES: dict[str, float] = {"N": 0.0, "I": 0.0, "P": 0.5, "C": 1.0}
_WHAT = "an Inspect eval log (.json or .eval), or a folder of them"
_CONVERT = "a .json log: run `inspect log convert --to json LOG` (or `inspect log dump LOG > log.json`)"


def _log_files(path: Path) -> list[Path]:
    if not path.is_dir():
        return [path]
    found = sorted(p for p in path.rglob("*") if p.suffix in (".json", ".eval") and p.name != "logs.json")
    if not found:
        raise InputError("no .json or .eval logs in the folder", file=str(path), allowed=_WHAT)
    return found


def _read_log(path: Path) -> tuple[dict[str, Any], list[Any]]:
    """The eval spec and the samples of one log."""
    if path.suffix == ".eval":
        try:
            with zipfile.ZipFile(path) as archive:
                names = archive.namelist()
                header = next((n for n in ("header.json", "_journal/start.json", "start.json") if n in names), None)
                if header is None:
                    raise InputError("an .eval log without header.json or start.json", file=str(path),
                                     allowed=_CONVERT)
                spec = json.loads(archive.read(header)).get("eval")
                samples = [json.loads(archive.read(name)) for name in sorted(names)
                           if name.startswith("samples/") and name.endswith(".json")]
        except (zipfile.BadZipFile, json.JSONDecodeError, UnicodeDecodeError) as error:
            raise InputError(f"not a readable .eval log ({error})", file=str(path), allowed=_CONVERT) from None
    else:
        document = json_document(path, what=_WHAT)
        if not isinstance(document, dict) or "eval" not in document:
            raise InputError("not an eval log (no eval spec)", file=str(path), allowed=_WHAT)
        spec, samples = document["eval"], document.get("samples") or []
    if not isinstance(spec, dict) or id_text(spec.get("model")) is None:
        raise InputError("the log names no model", file=str(path), column="eval.model", allowed=_WHAT)
    return spec, samples


def read_inspect_logs(path: str | os.PathLike[str], options: InputOptions) -> Imported:
    """Read Inspect eval logs (see the module docstring)."""
    logs = [(file, *_read_log(file)) for file in _log_files(Path(path))]
    several_tasks = len({str(spec.get("task")) for _, spec, _ in logs}) > 1
    only = (options.columns or {}).get("label")
    rows = Rows("item", "agent", "rater", "label")
    tally = Tally()
    scorers: dict[str, None] = {}
    epochs = 0
    for file, spec, samples in logs:
        source, agent, task = str(file), str(id_text(spec["model"])), str(spec.get("task"))
        for number, sample in enumerate(samples, start=1):
            if not isinstance(sample, dict):
                raise record_error("a sample is not an object", source=source, record=number, field="samples",
                                   value=type(sample).__name__, allowed="the samples of an eval log")
            if sample.get("error"):
                tally.add("sample(s) that ended in an error")
                continue
            scores = sample.get("scores") or {}
            if not isinstance(scores, dict) or not scores:
                tally.add("sample(s) without a score")
                continue
            sample_id = id_text(sample.get("id"))
            if sample_id is None:
                raise record_error("a sample without an id", source=source, record=number, field="samples[].id",
                                   allowed="the sample id")
            item = f"{task}/{sample_id}" if several_tasks else sample_id
            epochs += (id_text(sample.get("epoch")) or "1") != "1"
            for scorer, score in scores.items():
                scorers[scorer] = None
                if only is not None and scorer != only:
                    continue
                value = score.get("value") if isinstance(score, dict) else None
                if isinstance(value, dict | list) or value is None:
                    tally.add("score(s) that are not one value (a dict, a list or none)")
                    continue
                label = str(value).lower() if isinstance(value, bool) else (
                    number_text(value) if isinstance(value, int | float) else str(value).strip())
                rows.add(number, item=item, agent=agent, rater=scorer, label=label)
    if only is not None and only not in scorers:
        raise InputError(f"no scorer {only!r} in the logs", file=str(path), allowed=", ".join(scorers),
                         option="columns.label")
    levels, credit = _scale(rows, str(path), options)
    notes = [f"{len(logs):,} log(s), {len(rows):,} score(s) read; scorers (the raters): {', '.join(scorers)}"
             + (f" (reading {only!r} only)" if only is not None else "")]
    if levels is not None and levels[-1] not in GRADES:
        notes.append(f"levels {levels[0]}..{levels[-1]}: the numbers scored, credited linearly (name the full scale "
                     "with levels)")
    if several_tasks:
        notes.append("several tasks: each item is task/sample id")
    if epochs:
        notes.append(f"{epochs:,} sample(s) of epochs after the first: each epoch's score is a repeated judgment")
    fields = {"item": "samples[].id", "agent": "eval.model", "rater": "samples[].scores (scorer)",
              "label": "samples[].scores[].value"}
    return rows.imported(fields, [*notes, *tally.notes()], levels=levels, credit=credit)


def _scale(rows: Rows, source: str, options: InputOptions) -> tuple[Any, Any]:
    """The levels and credit of the scores: Inspect's grades, or numbers (grades then become their numbers)."""
    labels = rows.values["label"]
    seen = set(labels)
    if seen and seen <= set(GRADES):
        grades = [g for g in GRADES if g in seen]
        return tuple(grades), tuple(GRADES[g] for g in grades)
    words = {"true": 1.0, "false": 0.0, **GRADES}
    converted = [number_text(words[label]) if label in words else label for label in labels]
    scale = label_scale(sorted(set(converted)))
    if scale is None:
        if options.levels is None:
            raise InputError("scores that are words, whose order the logs do not state", file=source,
                             column="samples[].scores[].value", allowed="name them worst first with {levels}",
                             option="levels", options={"levels": ",".join(sorted(seen))})
        return None, None
    rows.values["label"] = converted
    return scale if len(scale[0]) > 1 else number_scale([float(x) for x in converted], low=0, high=1)
