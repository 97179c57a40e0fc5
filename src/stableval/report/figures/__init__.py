"""Every figure stableval draws, one module per analysis; each function returns a matplotlib ``Figure``.

>>> from stableval.report.figures import forest_plot, save_figure
"""

from stableval.report.figures.base import FIGURE_SUFFIXES, check_figure_path, figure_to_svg, new_figure, save_figure
from stableval.report.figures.ddx_case import ddx_case_figure
from stableval.report.figures.diagnostics import confusion_grid, rater_scatter
from stableval.report.figures.medqa import medqa_figure, two_step_figure
from stableval.report.figures.nrp import nrp_by_prompt_figure, nrp_vs_size_figure
from stableval.report.figures.pairwise import rating_plot
from stableval.report.figures.ppi_plan import plan_figure
from stableval.report.figures.reliability import reliability_figure
from stableval.report.figures.scores import forest_plot, win_heatmap

__all__ = [
    "FIGURE_SUFFIXES",
    "check_figure_path",
    "confusion_grid",
    "ddx_case_figure",
    "figure_to_svg",
    "forest_plot",
    "medqa_figure",
    "new_figure",
    "nrp_by_prompt_figure",
    "nrp_vs_size_figure",
    "plan_figure",
    "rater_scatter",
    "rating_plot",
    "reliability_figure",
    "save_figure",
    "two_step_figure",
    "win_heatmap",
]
