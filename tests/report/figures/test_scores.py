"""Figures of agent scores: titles and axis labels."""

from __future__ import annotations

import stableval
from stableval.report import forest_plot, rating_plot, win_heatmap

EXAMPLE = stableval.example_path()


def test_figures_have_titles_and_axis_labels() -> None:
    table = stableval.read_any(EXAMPLE, duplicates="keep")
    result = stableval.score_agents(table, bootstrap=30)
    from stableval.evaluate.pairwise import pairwise_leaderboard

    board = pairwise_leaderboard(stableval.read_pairwise(EXAMPLE, duplicates="keep"), bootstrap=20)
    from stableval.evaluate import diagnose
    from stableval.report.figures import confusion_grid, rater_scatter

    diagnostics = diagnose(table)
    figures = [forest_plot(result), win_heatmap(result.win_probability["stableval"]), rating_plot(board),
               rater_scatter(diagnostics), confusion_grid(diagnostics)]
    for fig in figures:
        for ax in fig.axes:
            if ax.get_label() == "<colorbar>":
                assert ax.get_ylabel()  # the colour bar names its unit
                continue
            assert ax.get_title() and ax.get_xlabel() and ax.get_ylabel()
