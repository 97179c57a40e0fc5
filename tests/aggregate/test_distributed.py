"""The Dask executor: a Parquet dataset read onto a LocalCluster and fitted there gives the in-memory results (1e-9)
for every method whose registry entry declares ``distributed=True``, and what it does not support is refused with
the declared reason. The cluster fixtures are shared by the reading, the fits, the analyses and the ``--executor
dask`` command lines, so those tests stay together here."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from stableval.aggregate import Aggregator, DawidSkene, MajorityVote, Stableval, clone
from stableval.aggregate.registry import REGISTRY, distributed_methods, get_method, method_names, method_of
from stableval.cli import app
from stableval.data import InputOptions, example_path, load
from stableval.data.partitioned import PartitionedTable, list_pieces
from stableval.errors import InputError, StableValError
from stableval.evaluate import score_agents
from stableval.evaluate.diagnostics import diagnose
from stableval.evaluate.scores import REFIT_IN_MEMORY

from synthetic import synthetic_frame

distributed = pytest.importorskip("distributed")


CLUSTER: dict[str, Any] = {"threads_per_worker": 1, "dashboard_address": ":0"}


TOL = 1e-9


@pytest.fixture(scope="module")
def client() -> Any:
    with distributed.LocalCluster(n_workers=2, processes=False, **CLUSTER) as cluster, \
            distributed.Client(cluster) as connected:
        yield connected


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """20,400 simulated judgments split over 4 Parquet files (rows shuffled), and the same rows as one file."""
    frame, _ = synthetic_frame(n_items=1700, n_raters=40, per_item=4, seed=1)
    shuffled = frame.sample(frac=1.0, random_state=0).reset_index(drop=True)
    folder = tmp_path_factory.mktemp("sim")
    parts = folder / "parts"
    parts.mkdir()
    for i in range(4):
        shuffled.iloc[i::4].to_parquet(parts / f"part-{i}.parquet", index=False)
    whole = pd.concat([pd.read_parquet(p) for p in sorted(parts.glob("*.parquet"))], ignore_index=True)
    whole.to_parquet(folder / "all.parquet", index=False)
    return parts, folder / "all.parquet"


def fit_distributed(table: PartitionedTable, method: str | Aggregator, **params: Any) -> Aggregator:
    """A method (a name with ``params``, or an estimator) fitted on the cluster, as the analyses fit it."""
    if isinstance(method, str):
        return get_method(method).fit(table, **params)
    return method_of(method).fit(table, clone(method))


def same_fit(fitted: Any, reference: Any) -> None:
    """Every result the in-memory fit has (posteriors, confusion matrices, priors, skills, histories, iterations,
    starts, learnt priors ...), equal on the cluster: numbers to 1e-9, the rest exactly."""
    np.testing.assert_allclose(fitted.posteriors_, reference.posteriors_, rtol=0, atol=TOL)
    results = [name for name in vars(reference) if name.endswith("_") and not name.startswith("_")]
    assert results == [name for name in vars(fitted) if name.endswith("_") and not name.startswith("_")]
    for name in results:
        mine, theirs = getattr(fitted, name), getattr(reference, name)
        if name == "starts_":
            assert [s["start"] for s in mine] == [s["start"] for s in theirs]
            np.testing.assert_allclose([s["objective"] for s in mine], [s["objective"] for s in theirs], rtol=TOL)
        elif isinstance(theirs, np.ndarray | float) and not isinstance(theirs, bool | np.bool_):
            np.testing.assert_allclose(mine, theirs, rtol=TOL, atol=TOL, err_msg=name)
        else:
            assert mine == theirs, name


@pytest.mark.slow
def test_pieces_and_response_order(client: Any, dataset: tuple[Path, Path]) -> None:
    """Issue 25: one pipeline for both kinds of table."""
    parts, whole = dataset
    assert len(list_pieces(parts)) == 4 and len(list_pieces(str(parts / "part-*.parquet"))) == 4
    table = PartitionedTable.read(parts, client, partitions=3)
    memory = load(whole, InputOptions()).table
    assert table.offsets.tolist()[0] == 0 and table.offsets[-1] == memory.n_responses and len(table.offsets) == 4
    np.testing.assert_array_equal(table.response_item, memory.response_item)
    np.testing.assert_array_equal(table.response_agent, memory.response_agent)
    np.testing.assert_array_equal(table.judgments, memory.judgments_per_response())
    assert list(table.raters) == list(memory.raters) and table.levels == memory.levels
    assert {k: v for k, v in table.summary().items() if k != "source"} == {
        k: v for k, v in memory.summary().items() if k != "source"}


@pytest.fixture(scope="module")
def tables(client: Any, dataset: tuple[Path, Path]) -> tuple[PartitionedTable, Any]:
    """The 4 files read onto the cluster in 2 partitions, and the single file read in memory."""
    return PartitionedTable.read(dataset[0], client, partitions=2), load(dataset[1], InputOptions()).table


# few starts / capped iterations where the path, not convergence, is what is tested (each E-step is a round trip)
@pytest.mark.slow
@pytest.mark.parametrize(("name", "params"), [
    ("mv", {}), ("mv", {"ties": "first"}), ("mv", {"ties": "random", "seed": 3}), ("ds", {}),
    ("ds", {"acceleration": "none", "max_iter": 20}), ("stableval", {}),
    ("stableval", {"alpha_pi": "auto", "init": "soft"}), ("stableval", {"alpha_pi": "pooled", "init": "paper"}),
    ("stableval", {"alpha_pi": 2.0, "init": "ml", "max_iter": 30}),
])
def test_fits_equal_in_memory(tables: tuple[PartitionedTable, Any], name: str, params: dict[str, Any]) -> None:
    """Settings that change the path: tie rules, accelerators, start choices, learnt priors.
    Issue 25: one pipeline for both kinds of table."""
    table, memory = tables
    fitted = fit_distributed(table, name, **params)
    reference = REGISTRY[name].build(**params).fit(memory)
    same_fit(fitted, reference)
    if name == "stableval" and params.get("alpha_pi") in ("auto", "pooled"):
        np.testing.assert_allclose(fitted.alpha_pi_, reference.alpha_pi_, rtol=TOL)


@pytest.mark.slow
@pytest.mark.parametrize("name", distributed_methods())
def test_every_distributed_method_equals_in_memory(tables: tuple[PartitionedTable, Any], name: str) -> None:
    """Every method whose registry entry declares ``distributed=True``, at its defaults (capped where each E-step is
    a round trip), fits on the cluster what it fits in memory. Issue 25: one pipeline for both kinds of table."""
    table, memory = tables
    params = {"max_iter": 30} if "max_iter" in get_method(name).estimator.parameter_names() else {}
    same_fit(fit_distributed(table, name, **params), get_method(name).build(**params).fit(memory))


@pytest.mark.parametrize("name", [name for name in method_names() if name not in distributed_methods()])
def test_in_memory_methods_are_refused_with_their_reason(tables: tuple[PartitionedTable, Any], name: str) -> None:
    """Issue 25: one pipeline for both kinds of table."""
    method = get_method(name)
    assert method.why_in_memory, f"{name} declares neither distributed=True nor why it needs memory"
    with pytest.raises(StableValError, match=f"'{name}' is not supported by the Dask executor: ") as refused:
        fit_distributed(tables[0], name)
    assert method.why_in_memory in str(refused.value)


@pytest.mark.slow
def test_a_capped_fit_gets_the_score_change_memory_gets(tables: tuple[PartitionedTable, Any]) -> None:
    """A fit that stopped at its iteration cap is fitted again with more iterations on the cluster too, so its
    scores get the same ``score_change`` estimate (the Dask copy of the scoring code had none).
    Issue 25: one pipeline for both kinds of table."""
    table, memory = tables
    kwargs: dict[str, Any] = {"params": {"ds": {"max_iter": 3}, "onecoin": {"max_iter": 2}}, "bootstrap": 0}
    ours, theirs = score_agents(table, ["ds", "onecoin"], **kwargs), score_agents(memory, ["ds", "onecoin"], **kwargs)
    for key in ("ds", "onecoin"):
        mine, reference = ours.fits[key]["score_change"], theirs.fits[key]["score_change"]
        assert mine["agent"] == reference["agent"] and mine["extra_iterations"] == reference["extra_iterations"]
        assert mine["max_abs_change"] == pytest.approx(reference["max_abs_change"], abs=TOL)
        assert reference["max_abs_change"] > 0
    assert ours.to_dict()["warnings"] == theirs.to_dict()["warnings"]
    with pytest.raises(StableValError, match="refit=True is not supported on a partitioned table: " + REFIT_IN_MEMORY):
        score_agents(table, ["mv"], bootstrap=10, refit=True)


@pytest.mark.slow
def test_starts_screened_on_a_subset_equal_in_memory(tables: tuple[PartitionedTable, Any],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 25: one pipeline for both kinds of table."""
    import stableval.aggregate.em_fit as em_fit

    table, memory = tables
    monkeypatch.setattr(em_fit, "SCREEN_SUBSET_ABOVE", 100)
    monkeypatch.setattr(em_fit, "SCREEN_RESPONSES", 150)
    fitted = fit_distributed(table, "stableval")
    reference = Stableval().fit(memory)
    assert {s["screened_responses"] for s in reference.starts_} == {150}
    same_fit(fitted, reference)


@pytest.mark.slow
def test_scores_and_diagnostics_equal_in_memory(tables: tuple[PartitionedTable, Any]) -> None:
    """Issue 25: one pipeline for both kinds of table."""
    table, memory = tables
    methods: list[str | Aggregator] = ["mv", "ds", Stableval(init="soft")]  # hard and soft credit
    ours = score_agents(table, methods, bootstrap=200, seed=4)
    theirs = score_agents(memory, methods, bootstrap=200, seed=4)
    pd.testing.assert_frame_equal(ours.scores, theirs.scores, rtol=TOL, atol=TOL)
    for method in theirs.methods:
        np.testing.assert_allclose(ours.replicates[method], theirs.replicates[method], atol=TOL)
    pd.testing.assert_frame_equal(ours.item_credit, theirs.item_credit, atol=TOL)
    mine, reference = diagnose(table, "ds"), diagnose(memory, "ds")
    for name in ("raters", "responses", "ambiguous"):
        pd.testing.assert_frame_equal(mine.to_frame(name), reference.to_frame(name), rtol=TOL, atol=TOL)
    assert len(reference.ambiguous) > 10  # the judgments of each flagged response were fetched and compared


@pytest.mark.slow
def test_bundled_example_as_annotations(client: Any, tmp_path: Path) -> None:
    """The MT-Bench votes (the bundled example) as annotations, repeated votes kept: same fit as in memory.
    Issue 25: one pipeline for both kinds of table."""
    memory = load(example_path("mt_bench"), InputOptions(duplicates="keep")).table
    frame = memory.to_frame()
    half = len(frame) // 2
    frame.iloc[:half].to_parquet(tmp_path / "a.parquet", index=False)
    frame.iloc[half:].to_parquet(tmp_path / "b.parquet", index=False)
    options = InputOptions(levels=memory.levels, duplicates="keep")
    reference_table = load(tmp_path / "a.parquet", options).table  # sanity: the levels are read as given
    assert reference_table.levels == memory.levels
    table = PartitionedTable.read(tmp_path, client, options, partitions=2)
    assert any("repeated judgment" in note for note in table.notes)
    for model in (MajorityVote(), DawidSkene(), Stableval(init="soft")):
        same_fit(fit_distributed(table, model), clone(model).fit(memory))


def test_duplicates_policies(client: Any, tmp_path: Path) -> None:
    """Issue 25: one pipeline for both kinds of table."""
    frame = pd.DataFrame({"item": ["q1", "q1", "q2", "q1"], "agent": "A", "rater": ["a", "b", "a", "a"],
                          "label": [0, 1, 1, 1]})
    frame.iloc[:2].to_parquet(tmp_path / "0.parquet", index=False)
    frame.iloc[2:].to_parquet(tmp_path / "1.parquet", index=False)
    with pytest.raises(InputError, match=r"1\.parquet, row 2 \(item 'q1', agent 'A', rater 'a'\)") as error:
        PartitionedTable.read(tmp_path, client)
    assert "0.parquet, row 1" in str(error.value) and "duplicates='first'|'last'|'keep'" in str(error.value)
    frame.to_parquet(tmp_path.parent / "whole.parquet", index=False)
    for policy in ("first", "last", "keep"):
        table = PartitionedTable.read(tmp_path, client, InputOptions(duplicates=policy))
        memory = load(tmp_path.parent / "whole.parquet", InputOptions(duplicates=policy)).table
        np.testing.assert_array_equal(table.judgments, memory.judgments_per_response())
        same_fit(fit_distributed(table, "mv"), REGISTRY["mv"].build().fit(memory))
        assert table.notes[-1] == memory.notes[-1]


def test_bad_input_names_the_file(client: Any, tmp_path: Path) -> None:
    """Issue 25: one pipeline for both kinds of table."""
    pd.DataFrame({"item": ["q1", "q2"], "agent": "A", "rater": ["a", "b"], "label": ["0", "x"]}).to_parquet(
        tmp_path / "bad.parquet", index=False)
    with pytest.raises(InputError, match=r"bad\.parquet, row 2, column 'label'.*got 'x'"):
        PartitionedTable.read(tmp_path, client)
    with pytest.raises(InputError, match="no Parquet file found"):
        PartitionedTable.read(tmp_path / "none-*.parquet", client)
    pd.DataFrame({"item": ["q1"], "agent_a": "A", "agent_b": "B", "rater": "a", "winner": "a"}).to_parquet(
        tmp_path / "votes.parquet", index=False)
    with pytest.raises(InputError, match="pairwise votes are not supported by the Dask executor"):
        PartitionedTable.read(tmp_path / "votes.parquet", client)


def test_integer_levels_over_pieces(client: Any, tmp_path: Path) -> None:
    """A file whose labels are all 0 is valid when another file has level 2: the levels come from every piece.
    Issue 25: one pipeline for both kinds of table."""
    pd.DataFrame({"item": ["q1", "q2"], "agent": "A", "rater": "a", "label": [0, 0]}).to_parquet(tmp_path / "0.parquet")
    pd.DataFrame({"item": ["q3"], "agent": "A", "rater": "a", "label": [2]}).to_parquet(tmp_path / "1.parquet")
    table = PartitionedTable.read(tmp_path, client)
    assert table.levels == ("0", "1", "2") and any(note.startswith("WARNING: ") for note in table.notes)
    pd.DataFrame({"item": ["q3"], "agent": "A", "rater": "a", "label": [0]}).to_parquet(tmp_path / "1.parquet")
    with pytest.raises(InputError, match="every label is 0"):
        PartitionedTable.read(tmp_path, client)


@pytest.mark.slow
def test_unsupported_methods_are_refused(tables: tuple[PartitionedTable, Any]) -> None:
    """Issue 25: one pipeline for both kinds of table."""
    table = tables[0]
    with pytest.raises(StableValError, match="'glad' is not supported by the Dask executor"):
        fit_distributed(table, "glad")
    with pytest.raises(StableValError, match="'glad' is not supported by the Dask executor"):
        diagnose(table, "ds", difficulty=True)  # GLAD's difficulty beside the model


@pytest.mark.slow
def test_partitions_use_the_kernel_of_the_whole_matrix(tables: tuple[PartitionedTable, Any],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The compiled E-step is chosen by the size of the whole matrix, as in memory, not by each partition's size
    (partitions below the threshold ran the numpy kernel while memory ran the compiled one: ~1e-7 apart).
    Issue 25: one pipeline for both kinds of table."""
    import stableval.aggregate.em_kernel as em_kernel

    if not em_kernel.NUMBA:
        pytest.skip("numba is not installed (pip install 'stableval[fast]')")
    table, memory = tables
    monkeypatch.delenv("STABLEVAL_EM_KERNEL", raising=False)
    monkeypatch.setattr(em_kernel, "COMPILED_FROM", memory.response_matrix().nnz - 1)  # the whole, not a partition
    fitted = fit_distributed(table, "ds")
    reference = REGISTRY["ds"].build().fit(memory)
    same_fit(fitted, reference)


def test_keep_raters_equals_the_in_memory_subset(tables: tuple[PartitionedTable, Any]) -> None:
    """A rater subset filtered on the workers is the in-memory ``subset`` of those raters' judgments: the same
    responses, raters and items (re-coded), response matrix and first-seen rows (majority vote's ties='first').
    Issue 25: one pipeline for both kinds of table."""
    from stableval.aggregate.responses import first_seen

    table, memory = tables
    keep = np.zeros(table.n_raters, dtype=bool)
    keep[[0, 3, 4, 17, 39]] = True
    ours, theirs = table.keep_raters(keep), memory.subset(keep[memory.rater])
    assert ours.n_responses == theirs.n_responses < memory.n_responses  # some responses dropped out
    for name in ("response_item", "response_agent"):
        np.testing.assert_array_equal(getattr(ours, name), getattr(theirs, name))
    np.testing.assert_array_equal(ours.judgments, theirs.judgments_per_response())
    assert list(ours.raters) == list(theirs.raters) and list(ours.items) == list(theirs.items)
    gathered = table.gather([table.client.submit(lambda part: part.X.toarray(), part) for part in ours.partitions])
    np.testing.assert_array_equal(np.concatenate(gathered), theirs.response_matrix().toarray())
    never = np.iinfo(np.int64).max
    firsts = np.concatenate(table.gather(ours.map(lambda part: part.first_seen)))
    positions = first_seen(theirs)
    positions[positions == theirs.n_judgments] = never
    np.testing.assert_array_equal(firsts == never, positions == never)
    np.testing.assert_array_equal(np.argsort(firsts, axis=1, kind="stable"),  # the same level is seen first
                                  np.argsort(positions, axis=1, kind="stable"))
    with pytest.raises(ValueError, match="one entry per rater"):
        table.keep_raters(keep[:-1])


@pytest.mark.slow
def test_stability_equal_in_memory(tables: tuple[PartitionedTable, Any]) -> None:
    """Ranking stability on the cluster (every subset filtered and refit there) gives the in-memory tables.
    Issue 25: one pipeline for both kinds of table."""
    from stableval.evaluate.stability import ranking_stability

    table, memory = tables
    kwargs: dict[str, Any] = {"params": {"mv": {"ties": "first"}, "ds": {"max_iter": 30},
                                         "stableval": {"max_iter": 30}}, "sizes": [3, 0.5], "repetitions": 2,
                              "seed": 5}
    ours = ranking_stability(table, ["mv", "ds", "stableval"], **kwargs)
    theirs = ranking_stability(memory, ["mv", "ds", "stableval"], **kwargs)
    for name in ("summary", "agents", "repetitions", "subsets", "full_scores"):
        pd.testing.assert_frame_equal(getattr(ours, name), getattr(theirs, name), rtol=TOL, atol=TOL)
    assert (ours.summary["responses_dropped_max"] > 0).any()  # the 3-rater subsets lose responses
    with pytest.raises(StableValError, match="not supported by the Dask executor"):
        ranking_stability(table, ["glad"], sizes=[0.5], repetitions=1)


@pytest.mark.slow
def test_processes_cluster(dataset: tuple[Path, Path]) -> None:
    """Worker processes (partitions and parameters pickled across processes) give the same fit.
    Issue 25: one pipeline for both kinds of table."""
    with distributed.LocalCluster(n_workers=2, processes=True, **CLUSTER) as cluster, \
            distributed.Client(cluster) as client:
        table = PartitionedTable.read(dataset[0], client, partitions=2)
        fitted = fit_distributed(table, "ds")
    same_fit(fitted, REGISTRY["ds"].build().fit(load(dataset[1], InputOptions()).table))


@pytest.mark.slow
def test_cli(dataset: tuple[Path, Path], tmp_path: Path) -> None:
    """--executor dask on score, diagnose and stability against an existing scheduler; refusals exit 2.
    Issue 25: one pipeline for both kinds of table."""
    runner = CliRunner()
    parts, whole = dataset
    with distributed.LocalCluster(n_workers=2, processes=False, **CLUSTER) as cluster:
        address = cluster.scheduler_address
        gold = tmp_path / "gold.csv"
        pd.read_parquet(whole)[["item", "agent"]].drop_duplicates().head(300).assign(gold=1).to_csv(gold, index=False)
        ours = runner.invoke(app, ["score", str(parts), "--executor", "dask", "--scheduler", address, "-B", "50",
                                   "-m", "mv,ds", "--gold", str(gold), "-f", "json"])
        assert ours.exit_code == 0, ours.output
        assert "dask: dask at " in ours.stderr and "dashboard" in ours.stderr
        theirs = runner.invoke(app, ["score", str(whole), "-B", "50", "-m", "mv,ds", "--gold", str(gold), "-f", "json"])
        a, b = json.loads(ours.stdout), json.loads(theirs.stdout)
        pd.testing.assert_frame_equal(pd.DataFrame(a["scores"]), pd.DataFrame(b["scores"]), rtol=TOL)
        assert a["gold_accuracy"] == b["gold_accuracy"] and {row["gold_responses"] for row in a["gold_accuracy"]
                                                           if row["agent"] == "(all)"} == {300}
        diagnosed = runner.invoke(app, ["diagnose", str(parts), "--scheduler", address, "-m", "ds", "-f", "csv",
                                        "--csv-table", "raters"])
        assert diagnosed.exit_code == 0, diagnosed.output
        reference = runner.invoke(app, ["diagnose", str(whole), "-m", "ds", "-f", "csv"]).stdout
        pd.testing.assert_frame_equal(pd.read_csv(io.StringIO(diagnosed.stdout)), pd.read_csv(io.StringIO(reference)),
                                      rtol=TOL)
        stable = runner.invoke(app, ["stability", str(whole), "--scheduler", address, "-R", "2", "-s", "0.5",
                                     "-m", "mv", "-f", "json"])
        assert stable.exit_code == 0, stable.output
        local = runner.invoke(app, ["stability", str(whole), "-R", "2", "-s", "0.5", "-m", "mv", "-f", "json"])
        assert json.loads(stable.stdout)["summary"] == json.loads(local.stdout)["summary"]
        for args, flag in ((["score", str(parts), "--refit"], "--refit"), (["score", str(parts), "-m", "glad"], "glad"),
                           (["diagnose", str(parts), "--difficulty"], "--difficulty")):
            refused = runner.invoke(app, [*args, "--scheduler", address])
            assert refused.exit_code == 2 and flag in refused.output, refused.output
        bad = runner.invoke(app, ["score", str(tmp_path / "none.parquet"), "--scheduler", address])
        assert bad.exit_code == 1 and "no Parquet file found" in bad.stderr
