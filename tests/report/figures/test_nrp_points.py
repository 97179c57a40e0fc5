"""Figure 1 of Heineking et al. (2024), NRP with a point per answer: points, means, and the paper's means from
the shipped ranks."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from stableval.report.figures.nrp_points import nrp_points_figure

from paths import WEBIS_EXPORT


def test_points_figure_has_a_point_per_answer_and_the_means() -> None:
    rng = np.random.default_rng(0)
    answers = pd.DataFrame({"model": np.repeat(["gpt2", "llama"], 30), "prompt": np.tile(["none", "multimedqa"], 30),
                            "nrp": rng.uniform(size=60)})
    summary = answers.groupby(["model", "prompt"], as_index=False)["nrp"].mean().rename(columns={"nrp": "mean_nrp"})
    summary = summary.assign(ci_low=summary["mean_nrp"] - 0.1, ci_high=summary["mean_nrp"] + 0.05)
    figure = nrp_points_figure(answers, summary)
    axes = figure.axes[0]
    points = [c for c in axes.collections if len(c.get_offsets()) == 30]
    assert len(points) == 2
    assert sorted(np.concatenate([c.get_offsets()[:, 1] for c in points])) == pytest.approx(sorted(answers["nrp"]))
    heights = sorted(round(p.get_height(), 12) for p in axes.patches)
    assert heights == pytest.approx(sorted(summary["mean_nrp"].round(12)))
    assert [t.get_text() for t in axes.get_xticklabels()] == ["none", "multimedqa"]


RANKS = WEBIS_EXPORT.parents[1] / "indexing" / "results" / "monoT5"


@pytest.mark.skipif(not RANKS.exists(), reason="the shipped monoT5 ranks (../shared/data) are not here")
def test_figure_1_from_the_shipped_ranks_shows_the_papers_means() -> None:
    from stableval.nrp import read_webis_rank_files

    ranks = read_webis_rank_files(RANKS).rename(columns={"nrp_shipped": "nrp"})
    axes = nrp_points_figure(ranks).axes[0]
    assert sum(len(c.get_offsets()) for c in axes.collections if len(c.get_offsets()) > 1) == 16000
    heights = {round(p.get_height(), 3) for p in axes.patches}
    # the paper, MultiMedQA prompt: Llama-2 7B 0.995, Falcon 7B 0.988; ChatGPT 0.998 (0.99885 from the ranks)
    assert {0.995, 0.988, 0.999} <= heights
