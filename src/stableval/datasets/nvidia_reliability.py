"""NVIDIA's Win-Tie-Loss reliability notebook format: evaluator and QC judgments of each item in one JSON list.

Source: NVIDIA GenerativeAIExamples, ``nemo/HumanEvaluation/Reliability_Scoring_Win_Tie_Loss.ipynb`` (its toy data;
the repository's code is Apache-2.0, its sample data under the NVIDIA Asset License, and which covers the toy data is
not stated). The file is a JSON list with one object per item::

    [{"output_values": {"<evaluator id>": {"item_flag": "No", "best": "response_1"}, ...},
      "QC": {"<qc id>": {"item_flag": "No", "best": "response_2"}}}, ...]

:func:`read_toy_json` turns it into judgment rows (:data:`~stableval.datasets.judgments.JUDGMENT_COLUMNS`), QC rows
with ``qc=True``, ready for :func:`stableval.evaluate.reliability.reliability_vs_qc`.

>>> import json, pathlib, tempfile
>>> path = pathlib.Path(tempfile.mkdtemp()) / "toy.json"
>>> _ = path.write_text(json.dumps([{"output_values": {"e1": {"item_flag": "No", "best": "tie"}},
...                                  "QC": {"q": {"item_flag": "Yes"}}}]))
>>> read_toy_json(path)[["item", "rater", "label", "flag", "qc"]].values.tolist()
[['1', 'e1', 'tie', False, False], ['1', 'q', '', True, True]]
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd

from stableval.datasets._common import flag_reasons, parse_flags
from stableval.errors import InputError

__all__ = ["read_toy_json"]

_ALLOWED_ITEM = 'an object {"output_values": {rater: {"item_flag", "best"}}, "QC": {rater: {...}}}'


def _load(path: Path) -> list[object]:
    source = str(path)
    if not path.is_file():
        raise InputError("file not found", file=source, allowed="an existing JSON file")
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"not valid JSON ({exc})", file=source,
                         allowed='a JSON list of {"output_values": {...}, "QC": {...}} objects') from exc
    if not isinstance(data, list) or not data:
        raise InputError("expected a non-empty JSON list of items", file=source, allowed=_ALLOWED_ITEM)
    return data


def read_toy_json(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read the JSON format of NVIDIA's reliability notebook into judgment rows (QC rows have ``qc=True``).

    Item ids are the 1-based positions in the list (``row`` too); ``best`` is the label (``response_1``,
    ``response_2``, ``tie``); ``item_flag`` Yes/No is the flag (``best`` may be missing when flagged); an
    optional ``skip`` (yes/no) is read too, and an optional ``flag_reason`` (why the item is flagged: ``PII``,
    ``medical advice``, ``NSFW``, ...; column ``flag_reason``, ``unspecified`` on a flagged judgment without one).
    """
    path = Path(path)
    source = str(path)
    records: list[tuple[str, str, str, str, str, str, bool, int, str]] = []
    for number, entry in enumerate(_load(path), start=1):
        if not isinstance(entry, dict) or not isinstance(entry.get("output_values"), dict) \
                or not isinstance(entry.get("QC", {}), dict):
            raise InputError("item is not in the notebook's format", file=source, row=number,
                             value=str(entry)[:80], allowed=_ALLOWED_ITEM)
        for block, is_qc in (("output_values", False), ("QC", True)):
            for rater, judgment in entry.get(block, {}).items():
                if not isinstance(judgment, dict):
                    raise InputError("judgment is not an object", file=source, row=number, column=block,
                                     value=judgment, allowed='{"item_flag": "No", "best": "response_1"}')
                records.append((str(number), "", str(rater), str(judgment.get("best") or ""),
                                str(judgment.get("item_flag") or ""), str(judgment.get("skip") or ""), is_qc,
                                number, str(judgment.get("flag_reason") or "")))
    raw = pd.DataFrame(records, columns=["item", "agent", "rater", "best", "item_flag", "skip", "qc", "row",
                                         "flag_reason"])
    flag = parse_flags(raw, "item_flag", source=source)
    skip = parse_flags(raw, "skip", source=source)
    missing = (raw["best"] == "").to_numpy() & ~flag & ~skip
    if missing.any():
        pos = int(np.flatnonzero(missing)[0])
        raise InputError("no 'best' on a judgment that is not flagged", file=source, row=int(raw["row"].iloc[pos]),
                         column="best", value=raw["rater"].iloc[pos], allowed="response_1, response_2 or tie")
    reasons = flag_reasons(raw["flag_reason"], flag, source=source, column="flag_reason")
    return pd.DataFrame({"item": raw["item"], "agent": raw["agent"], "rater": raw["rater"], "label": raw["best"],
                         "flag": flag, "skip": skip, "qc": raw["qc"].to_numpy(dtype=bool), "row": raw["row"],
                         "flag_reason": reasons})
