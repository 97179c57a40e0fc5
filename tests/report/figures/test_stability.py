"""The stability figure and the result's strict JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stableval.evaluate.stability import ranking_stability
from stableval.report.figures import save_figure
from stableval.report.figures.stability import stability_figure

from synthetic import stability_hand_table


def test_to_dict_is_strict_json_and_plot_has_labels(tmp_path: Path) -> None:
    result = ranking_stability(stability_hand_table(), ["mv", "ds"], sizes=[1, 2], repetitions=5, seed=0)
    payload = json.loads(json.dumps(result.to_dict(), allow_nan=False))
    assert {row["method"] for row in payload["summary"]} == {"mv", "ds"}
    assert payload["subsets"][0]["drawn"] and payload["settings"]["repetitions"] == 5
    figure = stability_figure(result)
    axes = figure.axes[0]
    assert axes.get_title() and "raters in subset" in axes.get_xlabel() and "τ-b" in axes.get_ylabel()
    assert [text.get_text() for text in axes.get_legend().get_texts()] == ["MV", "DS"]
    png = save_figure(stability_figure(result), tmp_path / "stability.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "<svg" in save_figure(stability_figure(result), tmp_path / "stability.svg").read_text()[:500]
    with pytest.raises(ValueError, match="suffix"):
        save_figure(stability_figure(result), tmp_path / "stability.gif")
