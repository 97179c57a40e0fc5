"""LLM judges as raters: rater metadata, the judge diagnostics against planted biases, and the command line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from stableval.cli import app
from stableval.data.loader import InputOptions, load_frame
from stableval.data.raters import load_with_raters, rater_info_from_frames, read_rater_info, select_raters
from stableval.errors import InputError
from stableval.evaluate.judges import judge_diagnostics, leaderboards_by_kind

from synthetic import synthetic_judge_frame

runner = CliRunner()
AGENTS = "name,kind,family\ngpt-big,agent,gpt\ngpt-small,agent,gpt\nclaude-x,agent,claude\nllama-y,agent,llama\n"
HIDDEN = ["agent_family", "truth", "expected_credit", "self_effect", "length_effect"]


@pytest.fixture(scope="module")
def planted() -> pd.DataFrame:
    return synthetic_judge_frame(n_items=300, seed=0)


@pytest.fixture(scope="module")
def files(planted: pd.DataFrame, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("judges")
    ratings = folder / "ratings.csv"
    planted.drop(columns=HIDDEN).to_csv(ratings, index=False)
    agents = folder / "agents.csv"
    agents.write_text(AGENTS)
    return ratings, agents


@pytest.fixture(scope="module")
def report(files: tuple[Path, Path]) -> pd.DataFrame:
    ratings, agents = files
    loaded, info, lengths = load_with_raters(ratings, rater_info=agents, length="words")
    assert info is not None and lengths is not None
    return judge_diagnostics(loaded.table, info, "stableval", lengths=lengths, bootstrap=400, seed=1).judges \
        .set_index("judge")


def _planted_values(frame: pd.DataFrame, judge: str) -> tuple[float, float]:
    """The planted self-preference (mean credit the bias adds to own-family answers) and length slope (credit the
    verbosity bias adds per SD of answer length, least squares), exactly from the simulator's expectations."""
    rows = frame[frame["rater"] == judge]
    own = (rows["agent_family"] == rows["rater_family"]).to_numpy()
    answers = frame.drop_duplicates(["item", "agent"])["words"]
    z = ((rows["words"] - answers.mean()) / answers.std(ddof=0)).to_numpy()
    effect = rows["length_effect"].to_numpy()
    slope = float(np.polyfit(z, effect, 1)[0])
    return float(rows["self_effect"].to_numpy()[own].mean()), slope


# ====================================================================================== planted biases
# Tolerances: about three and two and a half bootstrap standard errors at 300 items × 4 agents (the SE is ~0.016
# for self-preference and ~0.0085 for the length slope here).
SELF_TOLERANCE = 0.05
SLOPE_TOLERANCE = 0.02


def test_planted_self_preference_is_found_with_its_size_and_covered(planted: pd.DataFrame,
                                                                     report: pd.DataFrame) -> None:
    truth, _ = _planted_values(planted, "judge-gpt")
    assert truth == pytest.approx(0.3 * 0.5 * 2 / 3, abs=0.03)  # move up w.p. 0.3, half a credit, unless at the top
    row = report.loc["judge-gpt"]
    assert row["self_preference"] > 0
    assert abs(row["self_preference"] - truth) < SELF_TOLERANCE
    assert row["self_preference_ci_low"] <= truth <= row["self_preference_ci_high"]
    assert row["self_preference_ci_low"] > 0  # detected
    neutral = report.loc["judge-claude"]  # no self-preference planted
    assert abs(neutral["self_preference"]) < SELF_TOLERANCE
    assert neutral["self_preference_ci_low"] <= 0 <= neutral["self_preference_ci_high"]
    assert row["own_family_judgments"] == 600 and neutral["own_family_judgments"] == 300


def test_planted_verbosity_bias_is_found_with_its_size_and_covered(planted: pd.DataFrame,
                                                                    report: pd.DataFrame) -> None:
    _, truth = _planted_values(planted, "judge-gpt")
    assert truth > 0.02
    row = report.loc["judge-gpt"]
    assert abs(row["length_slope"] - truth) < SLOPE_TOLERANCE
    assert row["length_slope_ci_low"] <= truth <= row["length_slope_ci_high"]
    assert row["length_slope_ci_low"] > 0
    assert row["length_corr"] > row["length_corr_humans"]  # the judge's credit tracks length, the people's not
    neutral = report.loc["judge-claude"]
    assert neutral["length_slope_ci_low"] <= 0 <= neutral["length_slope_ci_high"]


def test_leniency_matches_an_independent_computation(planted: pd.DataFrame, files: tuple[Path, Path]) -> None:
    """Leniency, agreement and self-preference recomputed with pandas from the same human consensus (MV on the
    people: the credit of the most-voted level, ties split)."""
    ratings, agents = files
    loaded, info, _ = load_with_raters(ratings, rater_info=agents)
    assert info is not None
    result = judge_diagnostics(loaded.table, info, "mv", bootstrap=0).judges.set_index("judge")
    people = planted[planted["rater_kind"] == "human"]
    counts = people.pivot_table(index=["item", "agent"], columns="label", aggfunc="size", fill_value=0)
    top = counts.to_numpy() == counts.to_numpy().max(axis=1, keepdims=True)
    consensus = pd.Series((top * np.array([0.0, 0.5, 1.0])).sum(axis=1) / top.sum(axis=1), index=counts.index)
    judges = planted[planted["rater_kind"] == "llm"].join(consensus.rename("human"), on=["item", "agent"])
    judges["gap"] = judges["label"] * 0.5 - judges["human"]
    for key, rows in judges.groupby("rater"):
        judge = str(key)
        own = rows["agent_family"] == rows["rater_family"]
        assert result.loc[judge, "leniency"] == pytest.approx(rows["gap"].mean(), abs=1e-12)
        assert result.loc[judge, "self_preference"] == pytest.approx(
            rows["gap"][own].mean() - rows["gap"][~own].mean(), abs=1e-12)
        assert result.loc[judge, "compared"] == len(rows)


def test_position_bias_planted_in_pairwise_votes_is_found() -> None:
    rng = np.random.default_rng(3)
    n = 1500
    strength = {"A": 1.0, "B": 0.0, "C": -1.0}
    names = np.array(list(strength))
    pairs = rng.integers(0, 3, size=(n, 2))
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    pairs = np.vstack([pairs, pairs[:, ::-1]])  # every pair in both orders: honest votes favour neither side
    first, second = names[pairs[:, 0]], names[pairs[:, 1]]
    p_first = 1 / (1 + np.exp(-(np.vectorize(strength.get)(first) - np.vectorize(strength.get)(second))))
    honest = np.where(rng.random(first.size) < p_first, "model_a", "model_b")
    rows = []
    for r in range(4):  # people: honest votes
        rows.append(pd.DataFrame({"question_id": np.arange(first.size), "model_a": first, "model_b": second,
                                  "judge": f"h{r}", "winner": np.where(rng.random(first.size) < p_first,
                                                                         "model_a", "model_b")}))
    left = 0.3  # the judge says "first" on 30% of votes whatever the answers, otherwise votes honestly
    judge = np.where(rng.random(first.size) < left, "model_a", honest)
    rows.append(pd.DataFrame({"question_id": np.arange(first.size), "model_a": first, "model_b": second,
                              "judge": "llm", "winner": judge}))
    frame = pd.concat(rows, ignore_index=True).astype(str)
    frame["rater_kind"] = np.where(frame["judge"] == "llm", "llm", "human")
    loaded = load_frame(frame, InputOptions(), source="votes")
    info = rater_info_from_frames(loaded.table, judgments=frame, source="votes")
    result = judge_diagnostics(loaded.table, info, "mv", votes=loaded.votes, bootstrap=0)
    row = result.judges.iloc[0]
    planted_share = left + (1 - left) * 0.5  # both orders equally often, so honest votes are 50:50
    assert abs(row["left_share"] - planted_share) < 0.05
    assert row["left_share_ci_low"] <= planted_share <= row["left_share_ci_high"]
    assert row["left_share_ci_low"] > 0.5
    _, low, high = result.human_left_share
    assert low <= 0.5 <= high


# ====================================================================================== rater selection
def test_select_raters_keeps_one_kind_and_says_so(files: tuple[Path, Path]) -> None:
    ratings, agents = files
    loaded, info, _ = load_with_raters(ratings, rater_info=agents)
    people = select_raters(loaded.table, info, "human")
    judges = select_raters(loaded.table, info, "llm")
    assert people.n_raters == 8 and judges.n_raters == 2
    assert people.n_judgments + judges.n_judgments == loaded.table.n_judgments
    assert people.notes[-1].startswith("raters: human only (8 of 10 raters")
    assert select_raters(loaded.table, info, "all") is loaded.table
    with pytest.raises(InputError, match="kinds are not known"):
        select_raters(loaded.table, None, "llm")


def test_leaderboards_by_kind_show_the_judges_favourites_higher(files: tuple[Path, Path]) -> None:
    ratings, agents = files
    loaded, info, _ = load_with_raters(ratings, rater_info=agents)
    assert info is not None
    board = leaderboards_by_kind(loaded.table, info, "mv", bootstrap=0).set_index("agent")
    gpt = ["gpt-big", "gpt-small"]
    others = ["claude-x", "llama-y"]
    # the biased judge inflates the gpt agents: the LLM-only scores lift them more than the others
    lift = board["llm_score"] - board["human_score"]
    assert lift[gpt].mean() > lift[others].mean() + 0.05
    assert (board["rank_change"] == board["human_rank"] - board["llm_rank"]).all()


# ====================================================================================== bad metadata
def _table(tmp_path: Path) -> Path:
    path = tmp_path / "r.csv"
    path.write_text("item,agent,rater,label\nq1,A,h1,1\nq1,A,j1,0\nq2,A,h1,0\nq2,A,j1,1\n")
    return path


@pytest.mark.parametrize(("meta", "message"), [
    ("name,kind,family\nh1,person,\nj1,llm,gpt\n",
     "meta.csv, row 1 (line 2), column 'kind': unknown rater kind (1 row(s) in all): got 'person'; allowed: "
     "human, llm, agent (case-insensitive)"),
    ("name,kind,family\nh1,human,gpt\nj1,llm,gpt\n",
     "meta.csv, row 1 (line 2), column 'family': a human rater has no model family: got 'gpt'"),
    ("name,kind,family\nh1,human,\nj1,llm,gpt\nj1,llm,claude\n",
     "meta.csv, column 'name': rater 'j1' is listed twice (rows 2 and 3 (lines 3 and 4)): got 'j1'"),
    ("name,kind,family\nh1,human,\n",
     "rater(s) of {ratings} have no kind in {meta}: 'j1'"),
    ("name,kind,family\nh1,human,\nj1,llm,\nA,agent,\n",
     "meta.csv, row 3 (line 4), column 'family': an agent row needs its model family"),
    ("who,kind\nh1,human\n", "no name column (looked for: name, rater, rater_id, judge, agent, id)"),
    ("name,kind,family\n,human,\n", "meta.csv, row 1 (line 2), column 'name': empty name id"),
])
def test_bad_metadata_files_are_rejected_with_the_place_and_what_is_allowed(tmp_path: Path, meta: str,
                                                                            message: str) -> None:
    ratings = _table(tmp_path)
    path = tmp_path / "meta.csv"
    path.write_text(meta)
    with pytest.raises(InputError) as caught:
        load_with_raters(ratings, rater_info=path)
    assert message.format(ratings=ratings, meta=path) in str(caught.value)


def test_bad_rater_kind_columns_are_rejected(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text("item,agent,judge,label,rater_kind\nq1,A,h1,1,human\nq1,A,j1,0,llm\nq2,A,j1,1,human\n")
    with pytest.raises(InputError, match=r"row 3 \(line 4\), column 'rater_kind': rater 'j1' has a different "
                                         r"rater_kind than on row 2 \(line 3\): got 'human'"):
        load_with_raters(path)
    both = tmp_path / "meta.csv"
    both.write_text("name,kind,family\nh1,human,\nj1,llm,\n")
    path.write_text("item,agent,judge,label,rater_kind\nq1,A,h1,1,human\nq1,A,j1,0,llm\n")
    with pytest.raises(InputError, match="rater kinds are given twice"):
        load_with_raters(path, rater_info=both)
    both.write_text("name,kind,family\nA,agent,gpt\n")  # agent rows only: families added to the columns' kinds
    _, info, _ = load_with_raters(path, rater_info=both)
    assert info is not None and info.agent_family == {"A": "gpt"} and info.kind.tolist() == ["human", "llm"]


def test_bad_answer_lengths_are_rejected(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text("item,agent,rater,label,rater_kind,words\nq1,A,h1,1,human,10\nq1,A,j1,0,llm,12\n")
    with pytest.raises(InputError, match=r"row 2 \(line 3\), column 'words': the same answer has two different "
                                         r"lengths: got '12.0'; allowed: the length given on its first row, 10"):
        load_with_raters(path, length="words")
    path.write_text("item,agent,rater,label,rater_kind,words\nq1,A,h1,1,human,many\n")
    with pytest.raises(InputError, match=r"column 'words': answer length is not a number >= 0 .*got 'many'"):
        load_with_raters(path, length="words")
    with pytest.raises(InputError, match="the answer-length column is not in the file"):
        load_with_raters(path, length="tokens")


def test_read_rater_info_reads_jsonl(tmp_path: Path) -> None:
    ratings = _table(tmp_path)
    meta = tmp_path / "meta.jsonl"
    meta.write_text('{"rater": "h1", "kind": "Human"}\n{"rater": "j1", "kind": "LLM", "family": "gpt-4"}\n'
                    '{"rater": "unused", "kind": "human"}\n')
    loaded, _, _ = load_with_raters(ratings)
    info = read_rater_info(meta, loaded.table)
    assert info.kind.tolist() == ["human", "llm"] and info.family.tolist() == ["", "gpt-4"]
    assert "do not rate" in info.notes[0]


# ====================================================================================== command line
def test_cli_diagnose_reports_the_judges(files: tuple[Path, Path]) -> None:
    ratings, agents = files
    result = runner.invoke(app, ["diagnose", str(ratings), "--rater-info", str(agents), "--length-col", "words",
                                 "--judge-bootstrap", "50", "-f", "json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    judges = {row["judge"]: row for row in payload["llm_judges"]["judges"]}
    assert judges["judge-gpt"]["self_preference"] > 0.05 and judges["judge-gpt"]["length_slope"] > 0
    assert payload["llm_judges"]["settings"]["agent_family"]["gpt-big"] == "gpt"
    table = runner.invoke(app, ["diagnose", str(ratings), "--rater-info", str(agents), "--judge-bootstrap", "0",
                                "--top", "0"])
    assert table.exit_code == 0 and "LLM judges against the human consensus" in table.stdout
    assert "judge-gpt" in table.stdout
    csv = runner.invoke(app, ["diagnose", str(ratings), "--rater-info", str(agents), "--judge-bootstrap", "0",
                              "-f", "csv", "--csv-table", "judges"])
    assert csv.exit_code == 0 and csv.stdout.startswith("judge,family,judgments,compared,agreement")


def test_cli_score_by_rater_kind(files: tuple[Path, Path], tmp_path: Path) -> None:
    ratings, _ = files
    scores = {}
    for kind in ("human", "llm"):
        result = runner.invoke(app, ["score", str(ratings), "--raters", kind, "-m", "mv", "-B", "0", "-f", "json"])
        assert result.exit_code == 0, result.output
        payload = json.loads(result.stdout)
        assert payload["dataset"]["raters"] == {"human": 8, "llm": 2}[kind]
        scores[kind] = {row["agent"]: row["score"] for row in payload["scores"]}
    assert scores["llm"]["gpt-big"] > scores["human"]["gpt-big"]
    bare = tmp_path / "bare.csv"
    pd.read_csv(ratings)[["item", "agent", "rater", "label"]].to_csv(bare, index=False)
    failed = runner.invoke(app, ["score", str(bare), "--raters", "llm", "-B", "0"])
    assert failed.exit_code == 1 and "kinds are not known" in failed.output
    usage = runner.invoke(app, ["score", str(bare), "--raters", "robots"])
    assert usage.exit_code == 2


def test_cli_stability_by_rater_kind(files: tuple[Path, Path]) -> None:
    ratings, _ = files
    result = runner.invoke(app, ["stability", str(ratings), "--raters", "human", "-m", "mv", "-s", "4", "-R", "5",
                                 "-f", "json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["dataset"]["raters"] == 8  # the 2 LLM judges are left out
    everyone = json.loads(runner.invoke(app, ["stability", str(ratings), "-m", "mv", "-s", "4", "-R", "5",
                                              "-f", "json"]).stdout)
    assert everyone["dataset"]["raters"] == 10


def test_cli_report_shows_the_kinds_side_by_side(files: tuple[Path, Path], tmp_path: Path) -> None:
    ratings, agents = files
    out = tmp_path / "report.html"
    result = runner.invoke(app, ["report", str(ratings), "--rater-info", str(agents), "--quick", "-B", "0",
                                 "-m", "mv", "-o", str(out)])
    assert result.exit_code == 0, result.output
    html = out.read_text()
    assert "People and LLM judges" in html and "rank change (people − judges)" in html
    assert "judge-gpt" in html


def test_cli_help_lists_the_rater_flags() -> None:
    for command, flags in (("diagnose", ("--rater-info", "--length-col", "--judge-bootstrap")),
                           ("score", ("--rater-info", "--raters")),
                           ("stability", ("--rater-info", "--raters")), ("report", ("--rater-info", "--length-col"))):
        result = runner.invoke(app, [command, "--help"], env={"COLUMNS": "200"})
        assert result.exit_code == 0
        for flag in flags:
            assert flag in result.stdout, (command, flag)


def test_cli_judge_options_without_judges_are_refused(files: tuple[Path, Path], tmp_path: Path) -> None:
    ratings, _ = files
    people = tmp_path / "people.csv"
    frame = pd.read_csv(ratings)
    frame[frame["rater_kind"] == "human"].to_csv(people, index=False)
    plain = runner.invoke(app, ["diagnose", str(people), "--top", "0"])
    assert plain.exit_code == 0 and "LLM judges" not in plain.stdout
    length = runner.invoke(app, ["diagnose", str(people), "--length-col", "words"])
    assert length.exit_code == 1 and "no rater is an LLM judge" in length.output
    csv = runner.invoke(app, ["diagnose", str(people), "-f", "csv", "--csv-table", "judges"])
    assert csv.exit_code == 2 and "--csv-table" in csv.output
    missing = runner.invoke(app, ["diagnose", str(ratings), "--rater-info", str(tmp_path / "nope.csv")])
    assert missing.exit_code == 1 and "nope.csv: file not found" in missing.output


def test_cli_diagnose_llm_raters_only_skips_the_judge_statistics(tmp_path: Path) -> None:
    """Issue 25: when every rater is an LLM (an AlpacaEval, MT-Bench judge or inspect-ai file), there is no human
    consensus to measure the judges against: their statistics are skipped with a note, and the raters are still
    diagnosed (before, diagnose exited with "no judgments by human raters")."""
    rows = [(f"q{i}", agent, judge, (i + (agent == "a") + (judge == "j3") * (i % 2)) % 3, "llm", 50 + i)
            for i in range(12) for agent in "ab" for judge in ("j1", "j2", "j3")]
    path = tmp_path / "llm.csv"
    pd.DataFrame(rows, columns=["item", "agent", "rater", "label", "rater_kind", "words"]).to_csv(path, index=False)
    result = runner.invoke(app, ["diagnose", str(path), "--top", "0", "-f", "json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert sorted(row["rater"] for row in payload["raters"]) == ["j1", "j2", "j3"] and "llm_judges" not in payload
    assert any("no human raters" in note for note in payload["dataset"]["notes"])
    table = runner.invoke(app, ["diagnose", str(path), "--top", "0", "--length-col", "words"])
    assert table.exit_code == 0, table.output
    assert "no human raters" in table.stdout and "LLM judges against the human consensus" not in table.stdout
    csv = runner.invoke(app, ["diagnose", str(path), "-f", "csv", "--csv-table", "judges"])
    assert csv.exit_code == 2 and "human raters" in csv.output
