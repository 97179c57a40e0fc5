"""Every result shows in a notebook: ``_repr_html_`` is the table the terminal shows, as escaped HTML, and
``to_frame()`` its data (issue 32)."""

from __future__ import annotations

import importlib
import inspect
import io
import pkgutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import stableval
from displayed import html_text
from stableval.console import Displayed, html_of, make_console

from synthetic import synthetic_frame

EVIL = "<script>alert(1)</script>"


def result_classes() -> dict[str, type]:
    """Every class in the package that draws a table for people (``render``) and gives its data (``to_frame``):
    the results a notebook user meets."""
    found: dict[str, type] = {}
    for module_info in pkgutil.walk_packages(stableval.__path__, "stableval."):
        if module_info.name.startswith(("stableval.portal", "stableval.cli", "stableval.__main__")):
            continue
        module = importlib.import_module(module_info.name)
        for name, cls in vars(module).items():
            if (inspect.isclass(cls) and cls.__module__ == module.__name__ and not name.startswith("_")
                    and callable(getattr(cls, "render", None)) and callable(getattr(cls, "to_frame", None))
                    and not getattr(cls, "_is_protocol", False) and cls is not Displayed):
                found[name] = cls
    return found


def evil_table() -> Any:
    from stableval.data.frames import as_table

    frame, _ = synthetic_frame(n_items=30, agents=("A", "B"), seed=1)
    return as_table(frame.assign(agent=frame["agent"].replace({"A": EVIL}), rater=frame["rater"].replace(
        {r: f"{EVIL}{r}" for r in frame["rater"].unique()})))


def build_pairwise() -> Any:
    from stableval.data import read_pairwise
    from stableval.evaluate import pairwise_leaderboard

    frame = pd.read_csv(stableval.example_path("mt_bench"))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "votes.csv"
        frame.replace({"gpt-4": EVIL}).to_csv(path, index=False)
        votes = read_pairwise(path, duplicates="keep")
    return pairwise_leaderboard(votes, bootstrap=0)


def build_table_result() -> Any:
    from stableval.commands.output import TableResult

    return TableResult(pd.DataFrame({"agent": [EVIL], "score": [0.5]}), f"Scores of {EVIL}", [EVIL])


def build_appended() -> Any:
    from stableval.commands.output import Appended

    return Appended(build_table_result(), render_more=lambda console: console.print(EVIL))


def build_rater_bootstrap() -> Any:
    from stableval.datasets.label_sets import LabelSets
    from stableval.evaluate.rater_bootstrap import rater_bootstrap

    return rater_bootstrap(LabelSets.from_lists([["a", "b", "a"], ["b", "b"]]), {EVIL: ["a", "b"]}, n_draws=20)


def build_ddx() -> Any:
    from stableval.datasets.ddx import DDxAnnotations
    from stableval.studies import evaluate_ddx

    annotations = DDxAnnotations.from_selectors([[[[0], [1]], [[1]]]], conditions=["a", "b", "c"])
    return evaluate_ddx(annotations, {EVIL: np.array([[0.9, 0.5, 0.1]])}, n_draws=20, top_k=(1,), seed=0)


#: result class → how to make one whose names hold a <script> tag (None: made in its own tests only, from a
#: dataset fixture; its _repr_html_ is the same html_of, checked below on a stand-in)
BUILDERS: dict[str, Callable[[], Any] | None] = {
    "AgentScores": lambda: stableval.score_agents(evil_table(), ["mv"], bootstrap=0),
    "Diagnostics": lambda: stableval.diagnose(evil_table()),
    "StabilityResult": lambda: stableval.ranking_stability(evil_table(), ["mv"], sizes=[0.5], repetitions=2),
    "AgreementResult": lambda: importlib.import_module("stableval.evaluate.agreement").agreement(
        evil_table(), bootstrap=0, min_shared=1),
    "ScoresAcross": lambda: importlib.import_module("stableval.evaluate.across").score_across(
        {EVIL: evil_table()}, ["mv"]),
    "PairwiseLeaderboard": build_pairwise,
    "RaterBootstrapResult": build_rater_bootstrap,
    "DDxResult": build_ddx,
    "TableResult": build_table_result,
    "Appended": build_appended,
    "JudgeReport": None,        # needs rater kinds and families: tests/evaluate/test_judges.py
    "ReliabilityResult": None,  # needs QC judgments: tests/evaluate/test_reliability.py
    "MedQAResult": None,        # needs the MedQA fixture: tests/studies/test_medqa.py
    # checked with displayed.check_displayed in their own tests, on the data those tests build:
    "PPIScores": None,          # tests/evaluate/test_ppi.py::test_the_frame_and_the_table_people_read
    "PPIPairwise": None,        # tests/evaluate/test_ppi_pairwise.py (the ranking test)
    "BudgetPlan": None,         # tests/evaluate/test_ppi_plan.py::test_plan_from_a_table
    "FlagReasons": None,        # tests/evaluate/test_flag_reasons.py::test_counts_by_hand
    "TwoStepResult": None,      # tests/studies/test_medqa_two_step.py::test_changes_and_agreement_by_hand
    "DDxComparison": None,      # tests/studies/test_ddx_methods.py (the comparison test)
    "DDxConformal": None,       # tests/studies/test_ddx_methods.py (the conformal test)
}


def test_every_result_class_is_displayed_in_notebooks() -> None:
    classes = result_classes()
    assert set(classes) == set(BUILDERS), "a new result class needs a builder here (or None with a reason)"
    for name, cls in classes.items():
        assert issubclass(cls, Displayed), name
        assert callable(cls._repr_html_)


@pytest.mark.parametrize("name", sorted(name for name, build in BUILDERS.items() if build is not None))
def test_repr_html_is_the_terminal_table_escaped(name: str) -> None:
    build = BUILDERS[name]
    assert build is not None
    result = build()
    assert type(result).__name__ == name
    html = result._repr_html_()
    buffer = io.StringIO()
    result.render(make_console(buffer, to_file=True))
    assert "<script>" not in html
    assert ("&lt;script&gt;" in html) == (EVIL in buffer.getvalue())
    assert html_text(html) == buffer.getvalue()  # the same table as the terminal's
    frame = result.to_frame()
    assert isinstance(frame, pd.DataFrame) and len(frame)


def test_html_of_escapes_and_keeps_the_project_styles() -> None:
    class Stand:
        def render(self, console: Any) -> None:
            console.print(f"[bold]{EVIL}[/] & [b]x[/b]")

    html = html_of(Stand())
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<script>" not in html
    assert "font-weight: bold" in html and "[b]x[/b]" in html


def test_the_quickstart_notebook_exists() -> None:
    assert (Path(__file__).resolve().parents[1] / "docs" / "notebooks" / "quickstart.ipynb").is_file()


def test_in_jupyter_the_table_is_drawn_into_the_html_not_shown_beside_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Regression: inside a Jupyter kernel rich sent every console's text to the notebook as display output, so
    _repr_html_ came back as an empty <pre> and the table showed as separate ANSI outputs."""
    import builtins

    class ZMQInteractiveShell:
        pass

    monkeypatch.setattr(builtins, "get_ipython", lambda: ZMQInteractiveShell(), raising=False)
    monkeypatch.setattr("IPython.display.display", lambda *a, **k: pytest.fail("sent to the notebook"),
                        raising=False)
    html = build_table_result()._repr_html_()
    assert "Scores of &lt;script&gt;" in html
