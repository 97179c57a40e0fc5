"""``nrp validate`` on graded answers skips copies of judged documents (``--exclude-copies``) and answers to
unknown questions (``--skip-unknown-questions``) with their grades: the result equals validating the file with
those rows removed by hand."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from stableval.cli import app
from stableval.errors import InputError
from stableval.nrp import write_collection
from stableval.nrp.leakage import find_copies
from stableval.nrp.rankers.bm25 import BM25Ranker
from stableval.nrp.validate import answer_signals
from test_nrp_validate import WORDS, _collection


def _answers(collection, seed: int = 7) -> pd.DataFrame:
    """Graded answers of 5 to 12 words: more query words, higher grade (none a copy of a document)."""
    rng = np.random.default_rng(seed)
    rows = []
    for qid, query in collection.queries[["qid", "query"]].itertuples(index=False):
        for k in range(8):
            hits = int(rng.integers(0, 4))
            words = [*rng.choice(query.split(), hits), *rng.choice(WORDS[8:], int(rng.integers(3, 8)))]
            text = " ".join([*words, f"note{qid}x{k}", f"more{qid}y{k}"])  # no copy of a document
            rows.append((qid, f"{qid}-a{k}", text, min(hits, 3)))
    return pd.DataFrame(rows, columns=["qid", "answer_id", "text", "grade"]).assign(model="m")


def _with_intruders(collection, clean: pd.DataFrame) -> pd.DataFrame:
    """``clean`` with copies of judged documents and answers to unknown questions inserted in the middle, graded
    against the grain (a misaligned grade would change the result)."""
    pool = collection.pool()
    copies = pd.DataFrame({"qid": pool["qid"].iloc[[0, 15, 31]].to_numpy(), "answer_id": ["c1", "c2", "c3"],
                           "text": pool["text"].iloc[[0, 15, 31]].str.upper().to_numpy(), "grade": [0, 3, 0],
                           "model": "m"})
    unknown = pd.DataFrame({"qid": ["zz", "zz"], "answer_id": ["u1", "u2"], "text": ["flu fever", "tax car"],
                            "grade": [3, 0], "model": "m"})
    parts = [clean.iloc[:5], copies.iloc[:2], clean.iloc[5:17], unknown, clean.iloc[17:30], copies.iloc[2:],
             clean.iloc[30:]]
    return pd.concat(parts, ignore_index=True)


def test_skipped_rows_keep_the_grades_aligned() -> None:
    collection = _collection(5)
    clean = _answers(collection)
    assert find_copies(collection, clean).empty
    mixed = _with_intruders(collection, clean)
    notes: list[str] = []
    got = answer_signals(collection, mixed, {"bm25": BM25Ranker()}, relevant=2, unknown="skip",
                         exclude_copies=True, notes=notes)
    want = answer_signals(collection, clean, {"bm25": BM25Ranker()}, relevant=2)
    pd.testing.assert_frame_equal(got, want)
    assert notes[0] == "skipped 2 answer(s) to 1 question(s) not in collection"
    assert notes[1].startswith("warning: 3 answer(s) identical (3)") and "left out" in notes[1]
    with pytest.raises(InputError, match=r"row 20, column 'qid'.*'zz'"):  # without the flag: the file's row
        answer_signals(collection, mixed, {"bm25": BM25Ranker()})
    with pytest.raises(InputError, match="no graded answer left"):  # every row skipped: said, not an empty table
        answer_signals(collection, mixed.iloc[[19, 20]], {"bm25": BM25Ranker()}, unknown="skip")
    with pytest.raises(InputError, match=r"row 7, column 'stars'.*'good'"):
        answer_signals(collection, mixed.rename(columns={"grade": "stars"}).assign(
            stars=lambda f: f["stars"].astype(object).where(f.index != 6, "good")), {}, grade="stars")


def test_cli_flags_equal_removing_the_rows_by_hand(tmp_path) -> None:
    collection = _collection(5)
    directory = write_collection(collection, tmp_path / "c")
    clean = _answers(collection)
    clean.to_csv(tmp_path / "clean.csv", index=False)
    _with_intruders(collection, clean).to_csv(tmp_path / "mixed.csv", index=False)
    runner = CliRunner()
    base = ["nrp", "validate", str(directory), "-r", "bm25,tfidf", "-B", "40", "--format", "json"]
    flags = ["--exclude-copies", "--skip-unknown-questions"]
    mixed = runner.invoke(app, [*base[:3], str(tmp_path / "mixed.csv"), *base[3:], *flags,
                                "--signals-out", str(tmp_path / "mixed-signals.csv")])
    assert mixed.exit_code == 0, mixed.output
    by_hand = runner.invoke(app, [*base[:3], str(tmp_path / "clean.csv"), *base[3:],
                                  "--signals-out", str(tmp_path / "clean-signals.csv")])
    assert by_hand.exit_code == 0, by_hand.output
    got, want = json.loads(mixed.stdout), json.loads(by_hand.stdout)
    assert got["rows"] == want["rows"]  # every measure, per question and pooled, with the same intervals
    assert {r["measure"] for r in got["rows"]} >= {"spearman_q", "tau_b_q"}
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "mixed-signals.csv"),
                                  pd.read_csv(tmp_path / "clean-signals.csv"))
    assert "skipped 2 answer(s) to 1 question(s)" in " ".join(got["notes"])
    assert any(n.startswith("warning: 3 answer(s)") and "left out" in n for n in got["notes"])
    # without the flags: the unknown question is an input error (exit 1); the copies are only counted
    refused = runner.invoke(app, [*base[:3], str(tmp_path / "mixed.csv"), *base[3:]])
    assert refused.exit_code == 1 and "--skip-unknown-questions" in refused.output
    kept = runner.invoke(app, [*base[:3], str(tmp_path / "mixed.csv"), *base[3:], "--skip-unknown-questions"])
    assert kept.exit_code == 0 and "--exclude-copies leaves them out" in kept.stdout
    assert json.loads(kept.stdout)["rows"] != want["rows"]
    # the flags mean nothing in leave-one-out: a usage error
    assert runner.invoke(app, [*base, "--exclude-copies"]).exit_code == 2
