"""Figure 3 of Heineking et al. (2024), the rank flow of ranker vs expert: counts checked against the paper's
description on the shipped expert export, and glyph-safe labels."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from matplotlib.patches import Rectangle

from stableval.nrp.label_studio import read_label_studio
from stableval.nrp.study import item_sources
from stableval.report.figures import save_figure
from stableval.report.figures.rank_flow import rank_flow_counts, rank_flow_figure, ranked_sources

from paths import WEBIS_EXPORT

LLAMA = "meta-llama_Llama-2-13b-chat-hf"


def _panels_from_export(path: Path) -> dict[str, dict[str, list[str]]]:
    frame = read_label_studio(path).frame
    sources = item_sources(frame["item"])
    expert = {t: list(g.sort_values("rank")["item"]) for t, g in frame.groupby("task")}
    system = {t: list(g.sort_values(["score", "item"], ascending=[False, True])["item"]) for t, g in
              frame.groupby("task")}
    return {"ranker": ranked_sources(system, sources), "expert": ranked_sources(expert, sources)}


@pytest.mark.skipif(not WEBIS_EXPORT.exists(), reason="the shipped expert export (../shared/data) is not here")
def test_rank_flow_reproduces_the_papers_figure_3_description() -> None:
    panels = _panels_from_export(WEBIS_EXPORT)
    ranker, expert = rank_flow_counts(panels["ranker"]), rank_flow_counts(panels["expert"])
    # "Llama-2 13B and ChatGPT are the only two models to have answers in the first position across the 20 rankings"
    assert {s for (rank, s) in ranker.nodes if rank == 0} == {"chatgpt", LLAMA}
    assert ranker.nodes[(0, "chatgpt")] + ranker.nodes[(0, LLAMA)] == 20
    # "The next answer in rankings where Llama-2 13B is on first rank comes mostly from ChatGPT, except for one topic
    # where the answer from GPT-2 XL was ranked in second position."
    assert {b: n for (rank, a, b), n in ranker.links.items() if rank == 0 and a == LLAMA} == {"chatgpt": 6,
                                                                                              "gpt2-xl": 1}
    # "GPT-2 ... occurring almost always in the last position (and only ever higher in the second-last position)"
    for flow in (ranker, expert):
        assert {rank for (rank, s) in flow.nodes if s == "gpt2"} == {3, 4}
        assert flow.nodes[(4, "gpt2")] >= 16
    assert expert.nodes[(4, "gpt2")] == 16  # the caption's example, "GPT-2 (16)"
    # every topic is followed through every column
    for flow in (ranker, expert):
        assert [sum(n for (rank, _), n in flow.nodes.items() if rank == c) for c in range(5)] == [20] * 5
        assert [sum(n for (rank, _, _), n in flow.links.items() if rank == c) for c in range(4)] == [20] * 4
    figure = rank_flow_figure(panels)
    axes = figure.axes
    assert len(axes) == 2
    boxes = [p for p in axes[1].patches if isinstance(p, Rectangle)]
    assert len(boxes) == len(expert.nodes)
    assert "gpt2 (16)" in [t.get_text() for t in axes[1].texts]
    assert len(axes[0].collections) == len(ranker.links)  # one band per transition


def test_rank_flow_hand_worked_and_glyph_safe(tmp_path: Path) -> None:
    panels = {"ranker": {"t1": ["🤖 bot", "doc\x07"], "t2": ["🤖 bot", "doc\x07"], "t3": ["doc\x07", "🤖 bot"]},
              "expert": {"t1": ["doc\x07", "🤖 bot"], "t2": ["doc\x07", "🤖 bot"], "t3": ["doc\x07", "🤖 bot"]}}
    flow = rank_flow_counts(panels["ranker"])
    assert flow.nodes == {(0, "doc\x07"): 1, (0, "🤖 bot"): 2, (1, "doc\x07"): 2, (1, "🤖 bot"): 1}
    assert flow.links == {(0, "doc\x07", "🤖 bot"): 1, (0, "🤖 bot", "doc\x07"): 2}
    figure = rank_flow_figure(panels, title="flow 🤖")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        save_figure(figure, tmp_path / "flow.png")
    assert not [w for w in caught if "Glyph" in str(w.message)], [str(w.message) for w in caught]
    assert (tmp_path / "flow.png").stat().st_size > 1000
