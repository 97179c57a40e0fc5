"""ConvAbuse (Cercas Curry, Abercrombie & Rieser, EMNLP 2021): abuse severity of user turns in conversations
with two conversational agents, rated by 8 annotators.

Source: A. Cercas Curry, G. Abercrombie, V. Rieser (2021), "ConvAbuse: Data, Analysis, and Benchmarks for Nuanced
Abuse Detection in Conversational AI", EMNLP 2021, https://aclanthology.org/2021.emnlp-main.587 ; data
github.com/amandacurry/convabuse, file ``1_full/ConvAbuseEMNLPfull.csv``. License: CC BY 4.0.

Conversion (the stableval paper, section 5.1): agent = ``bot`` (E.L.I.Z.A. or CarbonBot); item = ``conv_id``, so
a response is one conversation (conv_id, bot); one judgment per (conv_id, bot, annotator_id): the FIRST row in file
order (later user turns of the same conversation and repeat annotations are dropped and counted in
``table.notes``); rater = ``annotator_id``; severity from the one-hot ``is_abuse.*`` columns: 1 (not abusive) and
0 (ambiguous) → level 0 ``not_abusive``, -1 → level 1 ``mild``, -2 and -3 → level 2 ``strong`` (the paper's
severity order). Credit :data:`CREDIT` = 1, 0.5, 0: as on every leaderboard, higher is better, so an agent's score is
how free of abuse its conversations are (1 − the expected severity on 0, 0.5, 1).

>>> import pathlib, tempfile
>>> path = pathlib.Path(tempfile.mkdtemp()) / "full.csv"
>>> header = "annotator_id,conv_id,bot,is_abuse.1,is_abuse.0,is_abuse.-1,is_abuse.-2,is_abuse.-3"
>>> _ = path.write_text(header + "\\nA1,c1,E,0,0,1,0,0\\nA1,c1,E,1,0,0,0,0\\nA2,c1,E,0,0,0,0,1\\n")
>>> table = load_convabuse(path)
>>> table.n_judgments, table.to_frame()["label"].tolist(), table.credit.tolist()
(2, ['mild', 'strong'], [1.0, 0.5, 0.0])
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

from stableval.data.columns import id_column
from stableval.data.files import read_table_file, row_error
from stableval.data.table import AnnotationTable
from stableval.datasets._common import require_columns, resolve_file
from stableval.errors import InputError
from stableval.wording import plural

__all__ = ["CREDIT", "LEVELS", "SEVERITY_COLUMNS", "SEVERITY_LEVEL", "load_convabuse"]

#: The one-hot severity columns, and the level each maps to (spec section 5.1).
SEVERITY_COLUMNS: tuple[str, ...] = ("is_abuse.1", "is_abuse.0", "is_abuse.-1", "is_abuse.-2", "is_abuse.-3")
SEVERITY_LEVEL: tuple[int, ...] = (0, 0, 1, 2, 2)
LEVELS: tuple[str, ...] = ("not_abusive", "mild", "strong")
#: The credit of each level: higher is better (no abuse), as every score in stableval reads.
CREDIT: tuple[float, ...] = (1.0, 0.5, 0.0)

_FILES = ("ConvAbuseEMNLPfull.csv", "1_full/ConvAbuseEMNLPfull.csv")


def load_convabuse(path: str | os.PathLike[str]) -> AnnotationTable:
    """Read ``ConvAbuseEMNLPfull.csv`` (or the dataset folder holding ``1_full/``) as an annotation table.

    See the module docstring for the conversion. Rows whose ``is_abuse.*`` columns are not exactly one ``1`` and
    four ``0`` raise :class:`InputError` with the row.
    """
    file = resolve_file(path, _FILES, what="ConvAbuse full CSV (ConvAbuseEMNLPfull.csv)")
    source = str(file)
    frame = read_table_file(file, format="csv")
    require_columns(frame, ("conv_id", "bot", "annotator_id", *SEVERITY_COLUMNS), source=source)
    onehot = frame[list(SEVERITY_COLUMNS)].apply(lambda c: c.str.strip()).to_numpy(dtype=object)
    is_one, is_zero = onehot == "1", onehot == "0"
    bad = ~(is_one | is_zero).all(axis=1) | (is_one.sum(axis=1) != 1)
    if bad.any():
        pos = int(np.flatnonzero(bad)[0])
        raise row_error(f"severity is not one-hot ({plural(int(bad.sum()), 'row')} in all)", source=source,
                        row=pos + 1, offset=1, line_at="problem", column=",".join(SEVERITY_COLUMNS),
                        value=[str(v) for v in onehot[pos]], has_value=True,
                        allowed="exactly one of the is_abuse.* columns 1, the others 0")
    label = np.asarray(SEVERITY_LEVEL, dtype=np.int64)[is_one.argmax(axis=1)]
    conv = id_column(frame, "conv_id", source=source, role="conversation")
    bot = id_column(frame, "bot", source=source, role="bot")
    rater = id_column(frame, "annotator_id", source=source, role="annotator")
    clean = pd.DataFrame({"item": conv, "agent": bot, "rater": rater, "label": label})
    first = ~clean.duplicated(["item", "agent", "rater"], keep="first").to_numpy()
    notes = [f"{plural(len(clean), 'row')} read; kept the first row in file order of each "
             f"(conv_id, bot, annotator_id): {plural(int(first.sum()), 'judgment')}"]
    n_dropped = int((~first).sum())
    if n_dropped:
        utterance = [c for c in ("prev_agent", "prev_user", "agent", "user") if c in frame.columns]
        key = ["conv_id", "bot", "annotator_id", *utterance]
        repeats = int(frame.duplicated(key, keep="first").sum())
        notes.append(f"dropped {plural(n_dropped, 'row')}: {repeats:,} repeat annotation(s) of the same user "
                     f"turn and {n_dropped - repeats:,} other turn(s) of a conversation the annotator had "
                     "already judged")
    counts = np.bincount(is_one.argmax(axis=1)[first], minlength=len(SEVERITY_COLUMNS))
    notes.append("severity " + ", ".join(f"{c.removeprefix('is_abuse.')}: {n:,}" for c, n in
                                         zip(SEVERITY_COLUMNS, counts, strict=True))
                 + " → levels 1,0 → not_abusive; -1 → mild; -2,-3 → strong")
    if not first.any():  # pragma: no cover - a non-empty file always keeps its first row
        raise InputError("no judgments left", file=source)
    return AnnotationTable.from_frame(clean.loc[first], levels=LEVELS, credit=CREDIT, source=source, notes=notes)
