"""Prediction-powered scores on MT-Bench: hold out 75% of the people's votes, and the budget planner's prediction.

The data: the 2,558 public human votes of MT-Bench (Zheng et al. 2023) and GPT-4's 1,240 pairwise verdicts on the
same (question, turn, model pair) cells (``../shared/data/mt_bench_human_judgments``; see docs/diagnostics.md).
Each vote becomes two judgments, one per answer (win / tie / loss, credit 1 / ½ / 0; GPT-4's "tie (inconsistent)"
is a tie). An answer's people's credit is the mean credit of its human judgments, its judge credit the mean of
GPT-4's (a mean, not a majority vote, so that the credit of a subset of an answer's votes is unbiased for that of
all of them). The answers are those GPT-4 judged (every one also has a human vote).

1. **Hold-out.** ``--replicates`` times: keep the human votes of a random 25% of the answers (75% of the answers'
   human judgments held out; holding out votes rather than answers would let an answer's chance of keeping a
   human credit grow with its number of votes, and PPI needs the people-rated answers to be a random sample);
   score every agent people-only (the 25%), judge-only (GPT-4) and PPI++ (both), and compare each with the
   all-human scores (every human vote, on the same answers): Kendall tau-b of the rankings, mean absolute error,
   and the share of agents whose 95% interval holds the all-human score.
2. **Planner.** In each of the first ``--plan-replicates`` hold-outs, ``plan_budget`` (PPI++ at random) for a
   target width of 0.8 × the pilot's mean PPI++ width; then the recommended number of extra answers per agent is
   drawn at random from the held-out answers, their human credit revealed, and the realised PPI++ width compared
   with the predicted one.

Run:  python benchmarks/bench_ppi_mt_bench.py [--data ../shared/data] [--replicates 500] [--plan-replicates 200]
It prints the markdown of the docs/ppi.md section "MT-Bench: 25% of the people's votes".
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import kendalltau

from stableval.evaluate.ppi import ppi_agent_scores
from stableval.evaluate.ppi_plan import plan_budget

JUDGE = "gpt-4-judge"
CREDIT = {"model_a": (1.0, 0.0), "model_b": (0.0, 1.0), "tie": (0.5, 0.5), "tie (inconsistent)": (0.5, 0.5)}


def answer_credits(data: Path) -> pd.DataFrame:
    """One row per answer GPT-4 judged: ``item, agent, people`` (mean credit of its human judgments), ``judge``
    (GPT-4's), ``votes`` (human judgments)."""
    folder = data / "mt_bench_human_judgments"
    people = pd.read_json(folder / "mt_bench_human_votes_available.jsonl", lines=True)
    zipped = pd.read_csv(folder / "vibhanshu_audit/data/processed/human_gpt_comparison.zip")
    gpt4 = (zipped[["question_id", "model_a", "model_b", "turn_y", "winner_y"]]
            .drop_duplicates(["question_id", "model_a", "model_b", "turn_y"])
            .rename(columns={"turn_y": "turn", "winner_y": "winner"}))
    credits = []
    for kind, frame in (("people", people), ("judge", gpt4)):
        item = frame["question_id"].astype(str) + "-t" + frame["turn"].astype(str)
        pair = frame["winner"].map(CREDIT)
        for side, model in ((0, "model_a"), (1, "model_b")):
            credits.append(pd.DataFrame({"kind": kind, "item": item, "agent": frame[model],
                                         "credit": pair.str[side]}))
    long = pd.concat(credits, ignore_index=True)
    wide = long.pivot_table(index=["item", "agent"], columns="kind", values="credit", aggfunc=["mean", "size"])
    answers = pd.DataFrame({"people": wide[("mean", "people")], "judge": wide[("mean", "judge")],
                            "votes": wide[("size", "people")]}).reset_index()
    answers.attrs["votes"], answers.attrs["verdicts"] = len(people), len(gpt4)
    return answers[answers["judge"].notna() & answers["people"].notna()].reset_index(drop=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data")
    parser.add_argument("--replicates", type=int, default=500)
    parser.add_argument("--plan-replicates", type=int, default=200)
    parser.add_argument("--keep", type=float, default=0.25)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    started = time.perf_counter()
    answers, truth, frame, plans = hold_outs(args.data, args.replicates, args.plan_replicates, args.keep, args.seed)
    print(_markdown(frame, plans, args, answers, truth, time.perf_counter() - started))


def hold_outs(data: Path, replicates: int, plan_replicates: int, keep: float = 0.25, seed: int = 0
              ) -> tuple[pd.DataFrame, pd.Series, pd.DataFrame, pd.DataFrame]:
    """(answers, all-human scores, one row per (hold-out, estimator), one row per (planned hold-out, agent))."""
    answers = answer_credits(data)
    agents = sorted(answers["agent"].unique())
    code = answers["agent"].map({a: k for k, a in enumerate(agents)}).to_numpy()
    truth = answers.groupby("agent")["people"].mean().loc[agents]
    people, judge = answers["people"].to_numpy(), answers["judge"].to_numpy()
    rng = np.random.default_rng(seed)
    rows, plan_rows = [], []
    for replicate in range(replicates):
        kept = rng.random(len(answers)) < keep
        result = ppi_agent_scores(np.where(kept, people, np.nan), judge, code, agents, bootstrap=0, interval="clt")
        board = result.scores.set_index("agent").loc[agents]
        for estimator in ("people", "judge", "ppi"):
            score = board[f"{estimator}_score"]
            covered = (board[f"{estimator}_ci_low"] <= truth) & (truth <= board[f"{estimator}_ci_high"])
            rows.append({"replicate": replicate, "estimator": estimator,
                         "tau": kendalltau(score, truth).statistic,
                         "error": float((score - truth).abs().mean()), "coverage": float(covered.mean()),
                         "width": float((board[f"{estimator}_ci_high"] - board[f"{estimator}_ci_low"]).mean())})
        if replicate < plan_replicates:
            plan_rows.extend(_plan_check(people, judge, code, agents, kept, board, rng, replicate))
    return answers, truth, pd.DataFrame(rows), pd.DataFrame(plan_rows)


def _plan_check(people: np.ndarray, judge: np.ndarray, code: np.ndarray, agents: list[str], kept: np.ndarray,
                pilot: pd.DataFrame, rng: np.random.Generator, replicate: int) -> list[dict[str, float]]:
    """Plan for 0.8 × the pilot's mean PPI++ width, reveal the recommended number of held-out answers per agent
    at random, and compare realised with predicted widths, per agent."""
    target = 0.8 * float(pilot["ppi_width"].mean())
    plan = plan_budget(np.where(kept, people, np.nan), judge, code, agents, target_width=target).agents
    revealed = kept.copy()
    usable = []
    for a, row in plan.iterrows():
        if not np.isfinite(row["more_ppi"]):
            continue
        pool = np.flatnonzero((code == a) & ~kept)
        revealed[rng.choice(pool, int(row["more_ppi"]), replace=False)] = True
        usable.append(a)
    realised = ppi_agent_scores(np.where(revealed, people, np.nan), judge, code, agents, bootstrap=0,
                                interval="clt").scores
    realised = realised.set_index("agent")
    return [{"replicate": replicate, "agent": plan.loc[a, "agent"], "target": target,
             "predicted": plan.loc[a, "width_ppi_planned"],
             "realised": realised.loc[plan.loc[a, "agent"], "ppi_width"],
             "more": plan.loc[a, "more_ppi"]} for a in usable]


def _markdown(frame: pd.DataFrame, plans: pd.DataFrame, args: argparse.Namespace, answers: pd.DataFrame,
              truth: pd.Series, seconds: float) -> str:
    names = {"people": f"people only ({args.keep:.0%} of the answers)", "judge": "GPT-4 only (judge-only)",
             "ppi": f"PPI++ (GPT-4 + people on {args.keep:.0%})"}
    lines = [f"{answers.attrs['votes']:,} human votes and {answers.attrs['verdicts']:,} GPT-4 verdicts on "
             f"{len(answers):,} answers GPT-4 judged; {args.replicates} random hold-outs keeping the human votes of "
             f"{args.keep:.0%} of the answers (seed {args.seed}). The reference, the all-human score (mean human "
             "credit per answer, mean per agent): " + ", ".join(
                 f"{a} {s:.3f}" for a, s in truth.sort_values(ascending=False).items()) + ".", "",
             "| scores from | Kendall tau-b with the all-human ranking (mean) | mean abs. error | coverage of the "
             "all-human scores by 95% CIs | mean CI width |", "|---|---|---|---|---|"]
    for estimator in ("people", "judge", "ppi"):
        part = frame[frame["estimator"] == estimator]
        lines.append(f"| {names[estimator]} | {part['tau'].mean():.3f} | {part['error'].mean():.4f} | "
                     f"{part['coverage'].mean():.3f} | {part['width'].mean():.3f} |")
    if len(plans):
        ratio = plans["realised"] / plans["predicted"]
        within = (ratio.sub(1).abs() <= 0.15).mean()
        per_replicate = plans.assign(ratio=ratio).groupby("replicate")["ratio"].mean()
        lines += ["", f"Planner: in {plans['replicate'].nunique()} hold-outs, target = 0.8 × the pilot's mean PPI++ "
                  f"width (mean {plans['target'].mean():.3f}); {plans['more'].mean():.1f} extra people-rated "
                  "answers per agent recommended on average; realised / predicted PPI++ width per (agent, hold-out): "
                  f"mean {ratio.mean():.3f}, median {ratio.median():.3f}, 5–95% "
                  f"{ratio.quantile(0.05):.3f}–{ratio.quantile(0.95):.3f}, within 15% in {within:.0%} "
                  f"of {len(plans):,}; averaged over the agents of a hold-out, within 15% in "
                  f"{(per_replicate.sub(1).abs() <= 0.15).mean():.0%} of the hold-outs."]
    lines += ["", f"({seconds:.0f} s on one core.)"]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
