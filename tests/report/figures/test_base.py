"""What every figure shares: labels from the data draw without missing glyphs."""

from __future__ import annotations

from pathlib import Path


def test_figure_labels_from_the_data_draw_without_missing_glyphs(tmp_path: Path) -> None:
    """Issue 16: bad input."""
    import warnings

    from stableval.report.figures import figure_to_svg, save_figure
    from stableval.report.figures.base import new_figure

    fig = new_figure(3, 2)
    axes = fig.add_subplot()
    axes.set_title("agent 漢字\x1b[31m")
    axes.set_xticks([0, 1], ["gpt-4", "模型\x07"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        save_figure(fig, tmp_path / "f.png")
        svg = figure_to_svg(fig)
    assert not [w for w in caught if "Glyph" in str(w.message)], [str(w.message) for w in caught]
    assert axes.get_title() == "agent \\u6f22\\u5b57\\x1b[31m" and "svg" in svg
