"""Reports people read: figures (matplotlib, returned to the caller) and one self-contained HTML file.

>>> from stableval.report import build_report, forest_plot, win_heatmap
"""

from stableval.report.figures import figure_to_svg, forest_plot, rating_plot, win_heatmap
from stableval.report.html import build_report
from stableval.report.options import QualityControl, ReportOptions

__all__ = ["QualityControl", "ReportOptions", "build_report", "figure_to_svg", "forest_plot", "rating_plot",
           "win_heatmap"]
