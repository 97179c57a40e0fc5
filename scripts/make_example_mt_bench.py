"""Build ``src/stableval/examples/mt_bench_turn1_votes.csv`` from the MT-Bench human judgments (turn 1).

Source: ``lmsys/mt_bench_human_judgments`` (split ``human``), Zheng et al. 2023, CC BY 4.0, via the public
copy described in ``../shared/data/mt_bench_human_judgments/SOURCE.md`` (all 1,689 turn-1 votes).

Changes: ``item = f"q{question_id}-turn1"``, ``rater = judge``, ``agent_a/agent_b = model_a/model_b``,
``winner`` model_a/model_b/tie → a/b/tie. Every vote is kept, in the source order (including author_0's two
votes on question 128).

    python scripts/make_example_mt_bench.py [SOURCE_JSONL] [OUTPUT_CSV]
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = (ROOT.parent / "shared" / "data" / "mt_bench_human_judgments" / "cprentice9_eval_platform" / "data"
          / "mt_bench" / "human_judgments.jsonl")
OUTPUT = ROOT / "src" / "stableval" / "examples" / "mt_bench_turn1_votes.csv"
WINNER = {"model_a": "a", "model_b": "b", "tie": "tie"}


def convert(source: Path, output: Path) -> int:
    """Write the example CSV; returns the number of votes."""
    rows = []
    with source.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            vote = json.loads(line)
            if vote["winner"] not in WINNER:
                raise SystemExit(f"{source}: line {number}: unknown winner {vote['winner']!r}")
            rows.append({
                "item": f"q{int(vote['question_id'])}-turn1",
                "agent_a": vote["model_a"],
                "agent_b": vote["model_b"],
                "rater": vote["judge"],
                "winner": WINNER[vote["winner"]],
            })
    output.parent.mkdir(parents=True, exist_ok=True)
    with output.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=["item", "agent_a", "agent_b", "rater", "winner"],
                                lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return len(rows)


def main(argv: list[str]) -> None:
    source = Path(argv[1]) if len(argv) > 1 else SOURCE
    output = Path(argv[2]) if len(argv) > 2 else OUTPUT
    if not source.is_file():
        raise SystemExit(f"{source}: not found; see ../shared/data/mt_bench_human_judgments/SOURCE.md")
    count = convert(source, output)
    print(f"wrote {count:,} votes to {output}")


if __name__ == "__main__":
    main(sys.argv)
