"""Gold (quality-control) labels: the one gold-file format and reader, and accuracy against gold.

A gold file (CSV, TSV, JSONL or Parquet) has an item column, an optional agent column, a gold column and optional
``flag`` / ``skip`` columns (yes/no), one row per item or (item, agent). :func:`read_gold` reads it for
``stableval score --gold``, ``stableval diagnose --gold`` and ``stableval reliability --qc-file`` alike, into a
:class:`GoldLabels`: a mapping ``{(item, agent): label}`` (what :func:`gold_accuracy` takes) that keeps the rows
with their flags (what :func:`~stableval.evaluate.reliability.reliability_vs_qc` takes).

Both measures read, for every method alike, the distribution over levels that the method reports for each
response: a fitted aggregator's ``posteriors_`` (for majority vote its hard vote after its tie policy — one-hot,
or split evenly over a tie with ``ties="split"``; for Dawid–Skene and STABLEVAL the posteriors), never majority
vote's soft vote shares, so ``score --gold --ties lowest`` scores the labels that ``--ties lowest`` gives.

Accuracy is the standard truth-inference measure (Zheng et al. 2017, "Truth Inference in Crowdsourcing: Is the
Problem Solved?", PVLDB 10(5), section 6.1): the share of gold responses whose inferred label equals the gold
label. The inferred label is the most probable level; when several levels tie for the maximum (e.g. a
majority-vote tie split evenly) the response counts ``1 / (number of tied levels)`` if gold is among them, the
expected accuracy of breaking the tie at random. ``expected_accuracy`` is the mean probability the method gives
the gold level (equal to ``accuracy`` for hard labels, e.g. majority vote with any tie policy). In the example:
accuracy (1 + 1/2 + 0) / 3, expected accuracy (0.9 + 0.5 + 0.2) / 3.

>>> import numpy as np, pandas as pd
>>> from stableval.data.table import AnnotationTable
>>> frame = pd.DataFrame({"item": ["q1", "q2", "q3"], "agent": "A", "rater": "r", "label": [0, 1, 1]})
>>> table = AnnotationTable.from_frame(frame, levels=("no", "yes"))
>>> post = np.array([[0.9, 0.1], [0.5, 0.5], [0.2, 0.8]])
>>> gold = {("q1", "A"): "no", ("q2", "A"): "yes", ("q3", "A"): "no"}
>>> gold_accuracy(table, post, gold)[["agent", "gold_responses", "accuracy", "expected_accuracy"]].round(3
...     ).values.tolist()
[['A', 3, 0.5, 0.533], ['(all)', 3, 0.5, 0.533]]
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from stableval.data.columns import ROLE_ALIASES
from stableval.data.files import line_offset, read_table_file, row_error, write_frame
from stableval.data.files.rows import LINE_OFFSET
from stableval.data.table import AnnotationTable
from stableval.datasets.judgments import JUDGMENT_COLUMNS, JUDGMENT_ROLES, judgments_from_frame
from stableval.errors import InputError
from stableval.wording import plural

__all__ = ["GOLD_ALIASES", "GOLD_ROLES", "GoldLabels", "gold_accuracy", "gold_array", "read_gold", "write_gold"]

#: Header names accepted for the gold column of a gold file (case-insensitive).
GOLD_ALIASES: tuple[str, ...] = ("gold", "truth", "gold_label", "true_label", "label")
_ITEM_ALIASES = (*ROLE_ALIASES["item"], "id", "q")
#: Column aliases of each role of a gold file: item, optional agent, the gold label, optional flag and skip.
GOLD_ROLES: dict[str, tuple[str, ...]] = {
    "item": _ITEM_ALIASES,
    "agent": ROLE_ALIASES["agent"],
    "label": (*GOLD_ALIASES, *(a for a in JUDGMENT_ROLES["label"] if a not in GOLD_ALIASES)),
    "flag": JUDGMENT_ROLES["flag"],
    "skip": JUDGMENT_ROLES["skip"],
}
_ALL = "(all)"


def gold_array(table: AnnotationTable, gold: Mapping[tuple[str, str], Any] | np.ndarray) -> tuple[np.ndarray, int]:
    """(N,) gold level code per response (-1 = no gold), and the number of gold entries matching no response.

    ``gold`` maps ``(item, agent)`` to a level name (``str``) or a level code (``int``), or is already an (N,)
    code array. A value that is neither raises :class:`InputError`.
    """
    if isinstance(gold, np.ndarray):
        codes = np.asarray(gold, dtype=np.int64)
        if codes.shape != (table.n_responses,) or (codes.size and (codes.min() < -1 or codes.max() >= table.n_levels)):
            raise InputError("gold array needs one level code (or -1) per response", value=codes.shape,
                             allowed=f"shape ({table.n_responses},), values -1..{table.n_levels - 1}")
        return codes, 0
    codes = np.full(table.n_responses, -1, dtype=np.int64)
    if not gold:
        return codes, 0
    keys = list(gold)
    responses = pd.MultiIndex.from_arrays([table.items.to_numpy()[table.response_item],
                                           table.agents.to_numpy()[table.response_agent]])
    wanted = pd.MultiIndex.from_arrays([[str(k[0]) for k in keys], [str(k[1]) for k in keys]])
    position = responses.get_indexer(wanted)
    values = pd.Series(list(gold.values()), dtype=object)
    by_name = pd.Series(np.arange(table.n_levels), index=pd.Index(table.levels, dtype=object))
    level = values.map(lambda v: by_name.get(v, -1) if isinstance(v, str)
                       else int(v) if isinstance(v, int | np.integer) and not isinstance(v, bool)
                       and 0 <= int(v) < table.n_levels else -1).to_numpy(dtype=np.int64)
    bad = level < 0
    source = getattr(gold, "source", None)
    if bad.any():
        pos = int(np.flatnonzero(bad)[0])
        problem = f"gold level not among the levels ({plural(int(bad.sum()), 'entry')} in all)"
        allowed = f"level names {', '.join(table.levels)} or codes 0..{table.n_levels - 1}"
        row, offset = _gold_row(gold, keys[pos])
        if row is None:
            raise InputError(problem, file=source, column="gold", value=values.iloc[pos],
                             allowed=f"{allowed} (for {keys[pos]!r})")
        raise row_error(problem, source=str(source), row=row, offset=offset, column="gold", value=values.iloc[pos],
                        has_value=True, allowed=allowed)
    matched = position >= 0
    if not matched.any():
        raise InputError("no gold entry matches a response of the ratings (ids in another form, or another file?)",
                         file=source, column="item, agent", value=", ".join(map(str, keys[:3])), has_value=True,
                         allowed="(item, agent) pairs of the ratings, e.g. "
                                 + ", ".join(str(pair) for pair in list(responses[:3])))
    codes[position[matched]] = level[matched]
    return codes, int((~matched).sum())


def _gold_row(gold: Any, key: tuple[str, str]) -> tuple[int | None, int | None]:
    """The 1-based data row of the gold file that gave ``key``'s label (a :class:`GoldLabels`) and the file line
    offset; ``(None, None)`` for a plain mapping."""
    frame = getattr(gold, "frame", None)
    if not isinstance(frame, pd.DataFrame) or "row" not in frame:
        return None, None
    at = frame.index[(frame["item"].astype(str) == str(key[0])) & (frame["agent"].astype(str) == str(key[1]))]
    return (int(frame.loc[at[-1], "row"]) if len(at) else None), line_offset(frame)


def _distribution(prediction: Any, table: AnnotationTable, name: str) -> np.ndarray:
    """(N, K) distribution from posteriors, hard codes, or a fitted aggregator (``posteriors_``)."""
    array = np.asarray(getattr(prediction, "posteriors_", prediction))
    n, k = table.n_responses, table.n_levels
    if array.shape == (n, k):
        return array.astype(float)
    if array.shape == (n,) and np.issubdtype(array.dtype, np.integer):
        if array.size and (array.min() < 0 or array.max() >= k):
            raise ValueError(f"{name}: label codes must be 0..{k - 1}")
        return np.asarray(np.eye(k)[array])
    raise ValueError(f"{name}: expected ({n}, {k}) posteriors or ({n},) integer labels, got shape {array.shape}")


def gold_accuracy(
    table: AnnotationTable,
    predictions: Any,
    gold: Mapping[tuple[str, str], Any] | np.ndarray,
) -> pd.DataFrame:
    """Accuracy against gold per agent and overall, for one prediction or several methods.

    Args:
        table: the table the predictions are for.
        predictions: (N, K) distributions over levels, (N,) integer level codes, a fitted aggregator (its
            ``posteriors_``: what the method reports, e.g. majority vote's tie-broken hard vote),
            or a mapping method name → any of these (e.g. the result of
            :func:`stableval.evaluate.credit.fit_methods`).
        gold: ``{(item, agent): level name or code}`` or an (N,) code array with -1 for "no gold".

    Returns:
        One row per (method, agent) plus an ``(all)`` row per method, columns ``method, agent,
        gold_responses`` (responses with gold), ``correct`` (argmax matches, ties split), ``accuracy``,
        ``expected_accuracy`` (mean probability given to the gold level). Agents without gold responses are left
        out. ``frame.attrs["notes"]`` says how many gold entries matched no response (they are not counted).
    """
    if isinstance(predictions, Mapping):
        named = {str(name): _distribution(p, table, str(name)) for name, p in predictions.items()}
    else:
        named = {"prediction": _distribution(predictions, table, "prediction")}
    codes, unmatched = gold_array(table, gold)
    has = codes >= 0
    agent = table.response_agent[has]
    n_agents = table.n_agents
    count = np.bincount(agent, minlength=n_agents).astype(float)
    present = count > 0
    names = np.append(table.agents.to_numpy(dtype=object)[present], _ALL)
    frames = []
    for method, dist in named.items():
        rows = dist[has]
        at_gold = rows[np.arange(rows.shape[0]), codes[has]]
        top = rows.max(axis=1, keepdims=True)
        is_top = np.isclose(rows, top, rtol=0.0, atol=1e-12)
        correct = np.where(is_top[np.arange(rows.shape[0]), codes[has]], 1.0 / is_top.sum(axis=1), 0.0)
        correct_by = np.bincount(agent, weights=correct, minlength=n_agents)
        mass_by = np.bincount(agent, weights=at_gold, minlength=n_agents)
        total = np.append(count[present], count.sum())
        right = np.append(correct_by[present], correct_by.sum())
        mass = np.append(mass_by[present], mass_by.sum())
        with np.errstate(invalid="ignore", divide="ignore"):
            frames.append(pd.DataFrame({"method": method, "agent": names, "gold_responses": total.astype(np.int64),
                                        "correct": right, "accuracy": right / total,
                                        "expected_accuracy": mass / total}))
    out = pd.concat(frames, ignore_index=True)
    notes = [f"gold for {plural(int(has.sum()), 'response')} of {table.n_responses:,}"]
    if unmatched:
        notes.append(f"{plural(unmatched, 'gold entry')} matched no response in the table and were not counted")
    out.attrs["notes"] = notes
    out.attrs["unmatched_gold"] = unmatched
    return out


@dataclass(frozen=True, eq=False)
class GoldLabels(Mapping[tuple[str, str], str]):
    """The gold labels of a gold file (:func:`read_gold`).

    As a mapping it is ``{(item, agent): label}`` over the rows neither flagged nor skipped: what
    :func:`gold_accuracy` (``score --gold``, ``diagnose --gold``) takes. :meth:`judgments` gives every row, with
    its flag and skip, as QC judgments for :func:`~stableval.evaluate.reliability.reliability_vs_qc`
    (``reliability --qc-file``).

    Attributes:
        frame: one row per item or (item, agent): ``item, agent, label, flag, skip, row`` (``row``: the 1-based
            data row of the file). ``agent`` is empty on every row when the file has no agent column and no
            default agent was given (:attr:`by_item`).
        source: the file read.

    >>> import pandas as pd
    >>> gold = GoldLabels(pd.DataFrame({"item": ["q1", "q2"], "agent": "A", "label": ["yes", ""],
    ...                                 "flag": [False, True], "skip": False, "row": [1, 2]}))
    >>> dict(gold), len(gold.judgments())
    ({('q1', 'A'): 'yes'}, 2)
    """

    frame: pd.DataFrame
    source: str = "<memory>"

    @property
    def by_item(self) -> bool:
        """True when no agent is known: each label is then the item's, for every agent's response to it."""
        return bool((self.frame["agent"] == "").all())

    @cached_property
    def _labels(self) -> dict[tuple[str, str], str]:
        if self.by_item:
            raise InputError("gold file has no agent column and no default agent was given", file=self.source,
                             allowed="an agent column, or default_agent= (the CLI uses the table's agent when it "
                                     "has only one)")
        rated = self.frame.loc[~(self.frame["flag"].to_numpy(dtype=bool) | self.frame["skip"].to_numpy(dtype=bool))]
        return dict(zip(zip(rated["item"], rated["agent"], strict=True), rated["label"], strict=True))

    def mapping(self) -> dict[tuple[str, str], str]:
        """``{(item, agent): label}`` of the rows neither flagged nor skipped."""
        return dict(self._labels)

    def __getitem__(self, key: tuple[str, str]) -> str:
        return self._labels[key]

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(self._labels)

    def __len__(self) -> int:
        return len(self._labels)

    def __repr__(self) -> str:
        return f"GoldLabels({self.source!r}, {len(self.frame):,} rows{', by item' if self.by_item else ''})"

    def judgments(self) -> pd.DataFrame:
        """Every row as a QC judgment (columns ``item, agent, rater, label, flag, skip, qc, row``)."""
        return self.frame.assign(rater="<gold>", qc=True)[list(JUDGMENT_COLUMNS)].reset_index(drop=True)


def read_gold(
    path: str | os.PathLike[str],
    *,
    default_agent: str | None = None,
    every_agent: bool = False,
    columns: Mapping[str, str] | None = None,
    levels: Sequence[str] | str | None = None,
    format: str | None = None,
) -> GoldLabels:
    """Read a gold (QC) file: an item column, an optional agent column, a gold column, optional flag and skip.

    Columns are found by name (case-insensitive; ``columns={"item": ..., "label": ...}`` names them): item
    ``item``, ``question``, ``task``, ``id``, ... ; agent ``agent``, ``system``, ``model``, ... ; gold ``gold``,
    ``truth``, ``gold_label``, ``true_label``, ``label``, ``rating``, ``best``, ... ; ``flag`` and ``skip`` are yes/no
    (a flagged or skipped row may leave the label empty). The ``truth.csv`` files of the truth-inference format
    (``question,truth``) read as they are. Without an agent column every row is of ``default_agent`` (command line: the
    table's only agent); without either, ``every_agent=True`` makes each label the item's, for every agent's
    response to it (as ``reliability --qc-file`` does), and otherwise it is an error. ``levels`` restricts the
    labels. A response listed twice must have the same label (the repeat is dropped). Labels are text (level names).

    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "truth.csv"
    >>> _ = path.write_text("question,truth\\nq1,1\\nq2,0\\n")
    >>> dict(read_gold(path, default_agent="A"))
    {('q1', 'A'): '1', ('q2', 'A'): '0'}
    >>> read_gold(path, every_agent=True).by_item
    True
    """
    source = str(path)
    raw = read_table_file(path, format=format)
    frame = judgments_from_frame(raw, columns=columns, levels=levels, source=source, default_agent=default_agent,
                                 require_rater=False, roles=GOLD_ROLES)
    if not every_agent and (frame["agent"] == "").all():
        raise InputError("gold file has no agent column and no default agent was given", file=source,
                         allowed="an agent column, or default_agent= (the CLI uses the table's agent when it has "
                                 "only one)")
    rows = frame[["item", "agent", "label", "flag", "skip", "row"]]
    first = rows.drop_duplicates(["item", "agent", "label", "flag", "skip"], keep="first")
    conflict = first.duplicated(["item", "agent"], keep="first").to_numpy()
    if conflict.any():
        pos = int(first["row"].to_numpy()[np.flatnonzero(conflict)[0]]) - 1
        repeat = first.iloc[int(np.flatnonzero(conflict)[0])]
        raise row_error("two different gold labels for one response", source=source, row=pos + 1,
                        offset=line_offset(raw), line_at="problem", column=None,
                        value=(repeat["item"], repeat["agent"]), has_value=True,
                        allowed="one gold label per (item, agent)")
    kept = first.reset_index(drop=True)
    kept.attrs[LINE_OFFSET] = line_offset(raw)  # so that an error at a row names its file line too
    return GoldLabels(frame=kept, source=source)


def write_gold(gold: Mapping[tuple[str, str], Any], path: str | os.PathLike[str]) -> Path:
    """Write gold labels as ``item,agent,gold`` (CSV, or by suffix TSV/JSONL/Parquet); readable by :func:`read_gold`.

    >>> import pathlib, tempfile
    >>> path = write_gold({("q1", "A"): "1"}, pathlib.Path(tempfile.mkdtemp()) / "gold.csv")
    >>> path.read_text()
    'item,agent,gold\\nq1,A,1\\n'
    """
    keys = list(gold)
    frame = pd.DataFrame({"item": [str(k[0]) for k in keys], "agent": [str(k[1]) for k in keys],
                          "gold": [str(v) for v in gold.values()]})
    return write_frame(frame, path)
