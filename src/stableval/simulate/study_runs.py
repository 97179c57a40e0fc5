"""Running a simulation study cell by cell and writing its three files (every trial, the summary, a Markdown table):
the shared tail of ``ablate --metric coverage`` and ``--metric ranking-recovery``.

>>> import tempfile
>>> frame = run_cells(lambda value: pd.DataFrame({"value": [value]}), [1.5, 2.5])
>>> frame["value"].tolist()
[1.5, 2.5]
>>> with tempfile.TemporaryDirectory() as folder:
...     [path.name for path in write_study(folder, "demo", frame, frame, "# Demo\\n")]
['demo_trials.csv', 'demo.csv', 'demo.md']
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = ["run_cells", "write_study"]


def run_cells(run: Callable[[Any], pd.DataFrame], tasks: Sequence[Any], executor: Any = None) -> pd.DataFrame:
    """Every task's trials (``run(task)``, a frame), run on ``executor`` (default serial) in any order and put back
    in task order."""
    from stableval.parallel import SerialExecutor

    parts: dict[int, pd.DataFrame] = dict((executor or SerialExecutor()).map_unordered(run, list(tasks)))
    return pd.concat([parts[i] for i in range(len(tasks))], ignore_index=True)


def write_study(outdir: str | os.PathLike[str], stem: str, trials: pd.DataFrame, summary: pd.DataFrame,
                markdown: str) -> list[Path]:
    """Write ``STEM_trials.csv`` (every trial), ``STEM.csv`` (the summary) and ``STEM.md`` into ``outdir`` (made if
    missing); returns the three paths."""
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    files = [out / f"{stem}_trials.csv", out / f"{stem}.csv", out / f"{stem}.md"]
    trials.to_csv(files[0], index=False)
    summary.to_csv(files[1], index=False)
    files[2].write_text(markdown, encoding="utf-8")
    return files
