"""The reliability figure: a matplotlib figure, saved as PNG."""

from __future__ import annotations

from pathlib import Path

from stableval.datasets.judgments import read_judgments
from stableval.evaluate.reliability import reliability_vs_qc
from stableval.report.figures import reliability_figure, save_figure

from paths import RELIABILITY_FLAGS


def test_plot_is_a_png(tmp_path: Path) -> None:
    result = reliability_vs_qc(read_judgments(RELIABILITY_FLAGS), qc_rater="qc")
    out = save_figure(reliability_figure(result), tmp_path / "matrix.png")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 5000


def test_figure_is_a_matplotlib_figure() -> None:
    from matplotlib.figure import Figure

    figure = reliability_figure(reliability_vs_qc(read_judgments(RELIABILITY_FLAGS), qc_rater="qc", min_items=4))
    assert isinstance(figure, Figure)
    axes = figure.axes[0]
    assert axes.get_title().startswith("Reliability against QC (rater): overall 66.67%")
    assert [label.get_text() for label in axes.get_yticklabels()] == ["e1 *", "e2 *", "Overall"]
