"""``stableval mt-bench``: the MT-Bench votes under the six vote mappings, against an independent majority vote."""

from __future__ import annotations

import io
import json
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from stableval.cli import app

from paths import MT_BENCH, shared_file

runner = CliRunner()


# ====================================================================================== stableval mt-bench
def _independent_mv(path: Path, mapping: dict[str, tuple[str, float]]) -> dict[str, float]:
    """Per-agent MV (ties split) from the raw JSONL in plain Python; ``mapping``: outcome → (level, credit)."""
    levels: dict[tuple[str, str], list[str]] = defaultdict(list)
    credit: dict[str, float] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        vote = json.loads(line)
        if str(vote["turn"]) != "1":
            continue
        item = f"q{vote['question_id']}-turn1"
        outcome_a = {"model_a": "win", "model_b": "loss"}.get(vote["winner"], "tie")
        outcome_b = {"win": "loss", "loss": "win", "tie": "tie"}[outcome_a]
        for model, outcome in ((vote["model_a"], outcome_a), (vote["model_b"], outcome_b)):
            level, value = mapping[outcome]
            credit[level] = value
            levels[(item, model)].append(level)
    per_agent: dict[str, list[float]] = defaultdict(list)
    for (_, agent), labels in levels.items():
        counts = Counter(labels)
        top = max(counts.values())
        tied = [level for level, n in counts.items() if n == top]
        per_agent[agent].append(float(np.mean([credit[level] for level in tied])))
    return {agent: float(np.mean(values)) for agent, values in per_agent.items()}


def test_mt_bench_command_across_the_six_mappings(tmp_path: Path) -> None:
    """Issue 12: exact conventions."""
    path = shared_file(*MT_BENCH)
    result = runner.invoke(app, ["mt-bench", str(path), "-f", "json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["conversions"] == ["baseline", "drop-ties", "tie-as-win", "tie-as-loss", "tie-0.25", "tie-0.75"]
    assert payload["methods"] == ["mv", "stableval"]
    table = pd.DataFrame(payload["table"]).set_index("agent")
    assert len(table) == 6 and len(table.columns) == 12
    # an independent MV for two mappings, from the raw votes
    baseline = _independent_mv(path, {"win": ("win", 1.0), "tie": ("tie", 0.5), "loss": ("loss", 0.0)})
    tie_as_win = _independent_mv(path, {"win": ("win", 1.0), "tie": ("win", 1.0), "loss": ("loss", 0.0)})
    for agent in table.index:
        assert table.loc[agent, "baseline_mv"] == pytest.approx(baseline[agent], abs=1e-12)
        assert table.loc[agent, "tie-as-win_mv"] == pytest.approx(tie_as_win[agent], abs=1e-12)
    assert table.loc["gpt-4", "baseline_mv"] == pytest.approx(0.775, abs=5e-4)
    summary = pd.DataFrame(payload["summary"]).set_index("conversion")
    decided = 1689 - 405   # turn-1 votes without a tie (405 ties, test_datasets)
    assert summary.loc["drop-ties", "judgments"] == 2 * decided
    assert set(summary["method"]) == {"stableval"} and set(summary["baseline"]) == {"mv"}
    # baseline agrees with `stableval score` on the converted file: the same scores, the same order
    out = tmp_path / "mt.csv"
    assert runner.invoke(app, ["convert", "mt-bench", str(path), "-o", str(out)]).exit_code == 0
    scored = json.loads(runner.invoke(app, ["score", str(out), "--levels", "loss,tie,win", "--duplicates", "keep",
                                            "-m", "mv,stableval", "-B", "0", "-f", "json"]).stdout)
    direct = pd.DataFrame(scored["scores"]).pivot(index="agent", columns="method", values="score")
    for method in ("mv", "stableval"):
        np.testing.assert_allclose(table[f"baseline_{method}"], direct.loc[table.index, method], atol=1e-9)
    assert list(table.index) == direct["stableval"].sort_values(ascending=False, kind="stable").index.tolist()
    assert summary.loc["baseline", "rank_changes"] == scored["comparison"]["rank_changes"]


def test_mt_bench_command_table_csv_options_and_errors(tmp_path: Path) -> None:
    """Issue 12: exact conventions."""
    path = shared_file(*MT_BENCH)
    text = runner.invoke(app, ["mt-bench", str(path), "--mapping", "baseline,tie-as-loss", "--ties", "first"])
    assert text.exit_code == 0, text.output
    assert "tie-as-loss" in text.stdout and "drop-ties" not in text.stdout and "Pearson r" in text.stdout
    csv = runner.invoke(app, ["mt-bench", str(path), "--mapping", "baseline", "-m", "mv,ds,stableval", "-f", "csv"])
    frame = pd.read_csv(io.StringIO(csv.stdout))
    assert list(frame.columns) == ["agent", "baseline_mv", "baseline_ds", "baseline_stableval",
                                   "baseline_stableval_minus_mv"]
    np.testing.assert_allclose(frame["baseline_stableval_minus_mv"], frame["baseline_stableval"] - frame["baseline_mv"])
    assert runner.invoke(app, ["mt-bench", str(path), "--mapping", "tie-0.5"]).exit_code == 2
    assert runner.invoke(app, ["mt-bench", str(path), "--turns", "3"]).exit_code == 2
    missing = runner.invoke(app, ["mt-bench", str(tmp_path / "none.jsonl")])
    assert missing.exit_code == 1 and "not found" in missing.output
