"""QAGS: counts of shared and separate workers, and unknown answers refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stableval.datasets import load_qags
from stableval.errors import InputError

from paths import shared_file


# ====================================================================================== QAGS
def test_qags_counts_shared_and_separate_workers() -> None:
    folder = shared_file("qags", "data")
    workers: dict[str, set[int]] = {}
    yes = 0
    for stem in ("cnndm", "xsum"):
        records = [json.loads(line) for line in (folder / f"mturk_{stem}.jsonl").read_text().splitlines()]
        responses = [r for rec in records for s in rec["summary_sentences"] for r in s["responses"]]
        workers[stem] = {r["worker_id"] for r in responses}
        yes += sum(r["response"] == "yes" for r in responses)
    table = load_qags(folder.parent)
    assert (table.n_judgments, table.n_responses, table.n_raters, table.n_agents) == (2859, 953, 169, 2)
    assert table.n_raters == len(workers["cnndm"] | workers["xsum"])  # the paper's 169 annotators
    assert table.agents.tolist() == ["CNN", "XSUM"]
    assert table.responses_per_agent().tolist() == [714, 239]
    assert int(table.label.sum()) == yes == 1543 + 348
    separate = load_qags(folder, separate_workers=True)
    assert separate.n_raters == len(workers["cnndm"]) + len(workers["xsum"]) == 246
    assert separate.n_judgments == table.n_judgments


def test_qags_rejects_unknown_answer(tmp_path: Path) -> None:
    path = tmp_path / "mturk_xsum.jsonl"
    line = {"summary_sentences": [{"responses": [{"worker_id": 1, "response": "maybe"}]}]}
    path.write_text(json.dumps(line) + "\n")
    with pytest.raises(InputError, match="unknown response") as caught:
        load_qags(path)
    assert caught.value.file == str(path) and caught.value.value == "maybe"
