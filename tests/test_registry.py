"""The method registry: one declaration per method reaches every analysis, the CLI and the docs.

The walk-through test registers a toy method (its module's content + one registry line, nothing else) and checks
that it appears in ``score``, ``stability``, ``diagnose``, ``report`` and ``ablate``.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Self

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from typer.testing import CliRunner

from stableval.aggregate import (
    REGISTRY,
    DawidSkene,
    EMAggregator,
    MajorityVote,
    Method,
    Stableval,
    clone,
    get_method,
    method_names,
)
from stableval.aggregate.em_fit import MAX_ITER, TOL, EMStart
from stableval.aggregate.registry import (
    method_label,
    method_table,
    parameter_table,
    parse_param_value,
    resolve_methods,
    shared_params,
)
from stableval.cli import app
from stableval.data import InputOptions
from stableval.data.table import AnnotationTable
from stableval.evaluate import diagnose, ranking_stability, score_agents
from stableval.report import build_report
from stableval.simulate import SimulationConfig, TrialTask, run_trials

from synthetic import synthetic_frame

ROOT = Path(__file__).resolve().parents[1]
runner = CliRunner()
LEVELS = ("low", "mid", "high")


def plain(output: str) -> str:
    """CLI output without the error box's borders and line breaks."""
    return " ".join(output.replace("│", " ").split())


def small_table() -> AnnotationTable:
    frame, _ = synthetic_frame(n_items=20, n_raters=6, per_item=3, seed=4)
    return AnnotationTable.from_frame(frame, levels=LEVELS)


# ---------------------------------------------------------------------------------------------- estimators
@pytest.mark.parametrize("name", method_names())
def test_params_are_read_off_init_and_clone_round_trips(name: str) -> None:
    method = get_method(name)
    estimator = method.build()
    params = estimator.get_params()
    assert list(params) == list(method.estimator.parameter_names())
    copy = clone(estimator)
    assert copy is not estimator and copy.get_params() == params
    fitted = clone(estimator).fit(small_table())
    assert fitted.posteriors_.shape == (small_table().n_responses, 3)
    with pytest.raises(Exception, match="call fit"):
        _ = clone(estimator).posteriors_


def test_set_params_validates_like_init_and_names_what_exists() -> None:
    model = Stableval().set_params(alpha_pi=3.0)
    assert model.alpha_pi == 3.0 and repr(model) == "Stableval(alpha_pi=3.0)"
    listed = r"no parameter 'alpha'; its parameters: alpha_mu, alpha_pi, epsilon, init, n_starts, seed"
    with pytest.raises(ValueError, match=listed):
        model.set_params(alpha=2)
    with pytest.raises(ValueError, match=re.escape("alpha_pi=0.5: allowed a number ≥ 1, or one of auto, pooled")):
        model.set_params(alpha_pi=0.5)
    assert model.alpha_pi == 3.0  # a refused change leaves the estimator as it was


def test_analyses_accept_names_or_instances_and_record_params() -> None:
    table = small_table()
    by_instance = score_agents(table, [MajorityVote(ties="lowest"), Stableval(alpha_pi=2.0)], bootstrap=0)
    by_name = score_agents(table, ["mv", "stableval"], params={"mv": {"ties": "lowest"},
                                                                "stableval": {"alpha_pi": 2.0}}, bootstrap=0)
    pd.testing.assert_frame_equal(by_instance.scores, by_name.scores)
    assert by_name.settings["params"]["stableval"]["alpha_pi"] == 2.0
    assert by_name.settings["params"]["mv"] == {"ties": "lowest", "seed": 0}
    two = score_agents(table, [Stableval(), Stableval(alpha_pi=5.0)], bootstrap=0)
    assert two.methods == ["stableval", "stableval-2"] and method_label("stableval-2") == "STABLEVAL #2"
    assert not np.allclose(two.item_credit["stableval"], two.item_credit["stableval-2"])


def test_unknown_names_are_refused_with_what_exists() -> None:
    with pytest.raises(ValueError, match="unknown method 'nope'; allowed: mv, ds, stableval"):
        resolve_methods(["nope"])
    with pytest.raises(ValueError, match="no method among mv has a parameter 'alpha_pi'"):
        shared_params(["mv"], {"alpha_pi": 2})
    with pytest.raises(ValueError, match="no parameter 'alpah_pi'"):
        resolve_methods(["stableval"], {"stableval": {"alpah_pi": 2}})


# ---------------------------------------------------------------------------------------------- docs
def test_every_registered_method_and_parameter_is_documented() -> None:
    text = (ROOT / "docs" / "methods.md").read_text(encoding="utf-8")
    for name, method in REGISTRY.items():
        assert f"| `{name}` | `{method.estimator.__name__}` |" in text, f"docs/methods.md lacks a row for {name}"
        for parameter in method.estimator.parameter_names():
            assert re.search(rf"\| `{name}` \| `{parameter}` \|", text), \
                f"docs/methods.md lacks {name}'s parameter {parameter}"
    assert "methods.md" in (ROOT / "README.md").read_text(encoding="utf-8")


def _generated(page: str, function: str, end: str, table: str) -> None:
    """The committed table between the markers of a generated table equals ``table``; ``STABLEVAL_UPDATE_DOCS=1``
    rewrites it in place instead of failing."""
    path = ROOT / "docs" / page
    text = path.read_text(encoding="utf-8")
    marked = rf"(<!-- generated by {re.escape(function)}[^\n]*-->\n)(.*?)(\n<!-- end of the generated {end} -->)"
    found = re.search(marked, text, re.DOTALL)
    assert found, f"docs/{page} lost the markers around its generated {end}"
    if os.environ.get("STABLEVAL_UPDATE_DOCS") and found.group(2) != table:
        path.write_text(text[:found.start(2)] + table + text[found.end(2):], encoding="utf-8")
        return
    assert found.group(2) == table, (
        f"docs/{page}'s {end} is not the registry's: regenerate it with STABLEVAL_UPDATE_DOCS=1 python -m pytest "
        "tests/test_registry.py -k generated and commit it")


def test_the_docs_tables_are_generated_from_the_declarations() -> None:
    """Issue 25: the hyper-parameter table (help, default, allowed values) and the method table (credit, rater
    model, simulator, Dask, default set) of docs/methods.md are written from the registry and the estimators'
    ``PARAMETERS``."""
    _generated("methods.md", "stableval.aggregate.registry.parameter_table()", "parameter table", parameter_table())
    _generated("methods.md", "stableval.aggregate.registry.method_table()", "method table", method_table())


@pytest.mark.parametrize("name", method_names())
def test_every_parameter_is_declared_once_and_enforced(name: str) -> None:
    """Every hyper-parameter has a declaration (what it does, the values allowed); ``__init__`` accepts its default
    and refuses a value past a declared bound or outside its choices, naming it; ``--param`` text is read by it."""
    method = get_method(name)
    assert [option.name for option in method.params] == list(method.estimator.parameter_names())
    for option in method.params:
        assert option.help.endswith(".") and option.default == method.estimator.default_params()[option.name]
        assert option.check(option.default) == option.default
        assert parse_param_value(method, option.name, str(option.default)) == option.default
        bad: list[object] = ["no-such-choice"] if option.kind is str and option.choices else []
        if option.kind in (int, float):
            bad = [bound - 1 for bound in (option.ge, option.gt) if bound is not None and np.isfinite(bound)]
        for value in bad:
            with pytest.raises(ValueError, match=f"{option.name}={value!r}: allowed"):
                method.build(**{option.name: value})


def test_only_declared_methods_join_the_default_set() -> None:
    """Issue 25: ``Method.default`` is False unless declared, so a new method does not silently join ``score``'s,
    ``demo``'s, ``ablate``'s and the portal's default set; the default set is unchanged."""
    assert Method(name="x", label="X", title="X", colour="#000000", estimator=MajorityVote).default is False
    assert REGISTRY["mv"].default and REGISTRY["ds"].default and REGISTRY["stableval"].default
    from stableval.aggregate.registry import default_methods

    assert default_methods() == ("mv", "ds", "stableval")


def test_shorthand_flags_read_their_help_from_the_declarations() -> None:
    """The help lists each hyper-parameter with its default (issue 28: STABLEVAL's alpha_pi default is now the
    learnt pooled prior, no longer 1.0)."""
    help_text = plain(runner.invoke(app, ["score", "--help"], env={"COLUMNS": "400"}).output)
    for name, flag in (("alpha_pi", "--alpha-pi"), ("max_iter", "--max-iter"), ("ties", "--ties")):
        option = next(m.param(name) for m in REGISTRY.values() if name in m.estimator.parameter_names())
        assert flag == option.cli and option.help[:60] in help_text, name
    assert "stableval.alpha_pi ('pooled')" in help_text


def test_convergence_warnings_name_python_parameters_and_the_cli_names_flags(tmp_path: Path) -> None:
    """The lower layer states facts in Python names; a command words its flags (issue 25, review F9)."""
    from stableval.aggregate.registry import convergence_warnings

    [python] = convergence_warnings({"stableval-2": {"converged": False, "n_iter": 3}})
    assert "max_iter=N" in python and "alpha_pi=2" in python and "--" not in python
    path = _write(small_table(), tmp_path)
    result = runner.invoke(app, ["score", str(path), "--levels", ",".join(LEVELS), "-B", "0", "-m", "ds,glad",
                                 "--max-iter", "1", "-f", "json"])
    warnings = json.loads(result.output)["warnings"]
    assert any("(--max-iter N)" in text and "--alpha-pi 2" in text for text in warnings), warnings


# ---------------------------------------------------------------------------------------------- every analysis
@pytest.mark.parametrize("name", method_names())
def test_every_registered_method_runs_in_every_analysis(name: str, tmp_path: Path) -> None:
    table = small_table()
    assert name in score_agents(table, [name], bootstrap=20).methods
    assert name in ranking_stability(table, [name], sizes=[0.5], repetitions=2).methods
    if get_method(name).rater_model:
        assert diagnose(table, name).method == name
    html = build_report(_write(table, tmp_path), inputs=InputOptions(levels=LEVELS), methods=[name], quick=True,
                        bootstrap=10, sections=("leaderboard", "stability"))
    assert get_method(name).label in html
    trials = run_trials(TrialTask(SimulationConfig(items=10, raters=6, labels_per_response=3), trials=(0,), seed=0,
                                  methods=(name,), subsamples=2))
    assert list(trials["method"]) == [name]


def _write(table: AnnotationTable, folder: Path) -> Path:
    path = folder / "ratings.csv"
    table.to_frame().to_csv(path, index=False)
    return path


# ---------------------------------------------------------------------------------------------- the walk-through
class MiddleLevel(EMAggregator):
    """Toy: every response starts at the middle level; one EM pass then fits the raters against that answer."""

    PARAMETERS = (MAX_ITER, TOL)

    def __init__(self, max_iter: int = 1, tol: float = 0.0) -> None:
        self._set_checked(max_iter=max_iter, tol=tol)

    def em_start(self, counts: np.ndarray) -> EMStart:
        middle = np.zeros_like(counts, dtype=float)
        middle[:, counts.shape[1] // 2] = 1.0
        return EMStart(middle)


TOY = Method(name="middle", label="MIDDLE", title="Always the middle level (toy)", colour="#8c564b",
             estimator=MiddleLevel, credit="hard", batch="em", rater_model=True, default=False)


@pytest.fixture
def toy_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    """The one registry line a new method needs."""
    monkeypatch.setitem(REGISTRY, TOY.name, TOY)


def test_a_new_method_needs_its_module_and_one_registry_line(toy_registered: None, tmp_path: Path) -> None:
    table = small_table()
    path = _write(table, tmp_path)
    levels = ["--levels", ",".join(LEVELS)]
    score = runner.invoke(app, ["score", str(path), *levels, "-m", "mv,middle", "-B", "0", "-f", "json"])
    assert score.exit_code == 0, score.output
    payload = json.loads(score.output)
    assert {row["method"] for row in payload["scores"]} == {"mv", "middle"}
    middle_scores = [row["score"] for row in payload["scores"] if row["method"] == "middle"]
    assert middle_scores == pytest.approx([0.5] * len(middle_scores))  # every response at the middle level
    stability = runner.invoke(app, ["stability", str(path), *levels, "-m", "middle", "-R", "2", "-s", "0.5"])
    assert stability.exit_code == 0 and "MIDDLE" in stability.output, stability.output
    diagnosed = runner.invoke(app, ["diagnose", str(path), *levels, "-m", "middle"])
    assert diagnosed.exit_code == 0 and "MIDDLE" in diagnosed.output, diagnosed.output
    report = runner.invoke(app, ["report", str(path), *levels, "-m", "mv,middle", "--quick", "-B", "10",
                                 "-o", str(tmp_path / "r.html")])
    assert report.exit_code == 0 and "MIDDLE" in (tmp_path / "r.html").read_text(), report.output
    config = tmp_path / "grid.toml"
    config.write_text("trials = 2\nmethods = ['mv', 'middle']\nsubsamples = 2\n"
                      "[base]\nitems = 10\nraters = 6\nlabels_per_response = 3\n"
                      "[[sweep]]\nname = 'hard'\nvalues = [0.0]\n")
    ablate = runner.invoke(app, ["ablate", "-c", str(config), "-o", str(tmp_path / "grid"), "-j", "1", "--no-plots"])
    assert ablate.exit_code == 0 and "MIDDLE" in ablate.output, ablate.output


# ---------------------------------------------------------------------------------------------- CLI flags
def test_param_flag_and_shorthand_aliases_reach_the_estimators(tmp_path: Path) -> None:
    path = _write(small_table(), tmp_path)
    base = ["score", str(path), "--levels", ",".join(LEVELS), "-B", "0", "-f", "json"]
    result = runner.invoke(app, [*base, "-p", "stableval.alpha_pi=2", "--max-iter", "50", "--ties", "lowest"])
    assert result.exit_code == 0, result.output
    params = json.loads(result.output)["settings"]["params"]
    assert params["stableval"]["alpha_pi"] == 2.0 and params["stableval"]["max_iter"] == 50
    assert params["ds"]["max_iter"] == 50 and params["mv"]["ties"] == "lowest"
    both = runner.invoke(app, [*base, "--alpha-pi", "3", "-p", "stableval.alpha_pi=4"])
    assert json.loads(both.output)["settings"]["params"]["stableval"]["alpha_pi"] == 4.0  # --param wins


@pytest.mark.parametrize(("args", "message"), [
    (["-p", "stableval.alpah_pi=2"], "stableval has no parameter 'alpah_pi'; its parameters: alpha_mu"),
    (["-p", "nope.x=1"], "unknown method 'nope'"),
    (["-p", "alpha_pi=2"], "is not METHOD.NAME=VALUE"),
    (["-p", "stableval.alpha_mu=high"], "stableval.alpha_mu='high': allowed a number ≥ 1"),
    (["-p", "stableval.alpha_pi=high"], "stableval.alpha_pi='high': allowed a number ≥ 1, or one of auto, pooled"),
    (["-m", "mv", "-p", "stableval.alpha_pi=2"], "not among the chosen methods"),
    (["--alpha-pi", "0.5"], "stableval.alpha_pi=0.5: allowed a number ≥ 1"),
    (["--ties", "middle"], "mv.ties='middle': allowed one of split, lowest, highest, random"),
    (["-m", "mv,nope"], "unknown method 'nope'; allowed: mv, ds, stableval"),
])
def test_bad_method_flags_are_usage_errors(tmp_path: Path, args: list[str], message: str) -> None:
    path = _write(small_table(), tmp_path)
    result = runner.invoke(app, ["score", str(path), "--levels", ",".join(LEVELS), "-B", "0", *args])
    assert result.exit_code == 2, result.output
    assert message in plain(result.output), result.output


def test_diagnose_offers_the_rater_models_only(tmp_path: Path) -> None:
    path = _write(small_table(), tmp_path)
    result = runner.invoke(app, ["diagnose", str(path), "--levels", ",".join(LEVELS), "-m", "mv"])
    assert result.exit_code == 2 and "allowed: ds, stableval" in plain(result.output)
    assert "mv has no rater model (it estimates no confusion matrix per rater" in plain(result.output)  # why
    with pytest.raises(ValueError, match="wawa has none \\(it estimates no confusion matrix per rater"):
        diagnose(small_table(), "wawa")
    assert "--ties" not in runner.invoke(app, ["diagnose", "--help"]).output


def test_fit_matrix_is_the_one_fit_path() -> None:
    table = small_table()
    X: sp.csr_matrix = table.response_matrix()
    for name in method_names():
        estimator = get_method(name).build()
        direct = clone(estimator).fit_matrix(X, table.n_raters, table.n_levels).posteriors_
        np.testing.assert_array_equal(direct, clone(estimator).fit(table).posteriors_)


def test_em_estimators_declare_only_their_start_and_priors() -> None:
    counts = np.array([[2.0, 1.0], [0.0, 3.0]])
    assert DawidSkene().em_start(counts).confusion is None
    start = Stableval(epsilon=0.2).em_start(counts)
    np.testing.assert_allclose(start.distributions, [[1, 0], [0, 1]])
    np.testing.assert_allclose(start.confusion, [[0.9, 0.1], [0.1, 0.9]])
    assert Stableval(alpha_mu=1.5, alpha_pi=2.0).dirichlet() == (1.5, 2.0) and DawidSkene().dirichlet() == (1, 1)


def test_a_subclass_must_list_its_hyper_parameters() -> None:
    class Bad(MajorityVote):
        def __init__(self, **kwargs: object) -> None:
            super().__init__()

        def fit_matrix(self, X: sp.csr_matrix, n_raters: int, n_levels: int,
                       gold: np.ndarray | None = None) -> Self:
            return self

    with pytest.raises(TypeError, match="must list its hyper-parameters explicitly"):
        Bad().get_params()
