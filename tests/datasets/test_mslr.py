"""MSLR 2022: counts against an independent pandas computation, and facets out of range refused."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from stableval.datasets import load_mslr
from stableval.errors import InputError

from paths import shared_file


# ====================================================================================== MSLR
def test_mslr_counts_match_independent_pandas() -> None:
    path = shared_file("mslr", "data", "data_with_overlap_scores.json")
    rows = [dict(review=rec["review_id"], system=p["exp_short"], annot=a["annot_id"],
                 **{f: a[f] for f in ("population", "intervention", "outcome", "fluency")})
            for rec in map(json.loads, path.read_text().splitlines())
            for p in rec["predictions"] for a in p["annotations"]]
    raw = pd.DataFrame(rows)
    assert len(raw) == 636  # SOURCE.md
    raw["mean"] = raw[["population", "intervention", "outcome", "fluency"]].astype(float).mean(axis=1)
    raw["level"] = pd.cut(raw["mean"], [-np.inf, 0.75, 1.5, np.inf], right=False, labels=False)
    distinct = raw.groupby(["review", "system"])["annot"].transform("nunique")
    kept = raw[distinct >= 2]

    table = load_mslr(path)
    assert (table.n_judgments, table.n_responses, table.n_raters, table.n_agents) == (78, 39, 2, 6)
    assert table.n_judgments == len(kept) and table.n_items == kept["review"].nunique()
    assert np.bincount(table.label, minlength=3).tolist() == np.bincount(kept["level"], minlength=3).tolist()
    assert table.levels == ("low", "medium", "high")
    assert load_mslr(path, min_annotators=1).n_responses == 597  # SOURCE.md: items with >= 1 annotation


def test_mslr_rejects_out_of_range_facet(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"review_id": "CD1", "predictions": [{"exp_short": "S", "annotations": [
        {"annot_id": 0, "population": 3, "intervention": 1, "outcome": 1, "fluency": 1}]}]}) + "\n")
    with pytest.raises(InputError, match="out of range") as caught:
        load_mslr(path)
    assert caught.value.value == 3 and "population" in str(caught.value.column)
