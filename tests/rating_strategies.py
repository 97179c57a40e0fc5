"""Hypothesis strategies and helpers of the semantic oracles (``tests/test_oracles.py``): small ratings files, the
same file with its rows shuffled or with every name (items, agents, raters, levels) consistently renamed, and a
command's JSON output put in a form two runs can be compared in (names mapped back, numbers rounded, lists sorted).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from hypothesis import strategies as st
from typer.testing import CliRunner

from stableval.cli import app

#: Level names of the generated files, worst first, and their consistent renaming (same order, other words).
LEVELS = ("bad", "fair", "good")
RENAMED_LEVELS = ("Lzz", "Lyy", "Lxx")


@dataclass(frozen=True)
class Ratings:
    """A generated ratings file: its rows (item, agent, rater, label) and the level names it uses, worst first."""

    frame: pd.DataFrame
    levels: tuple[str, ...]

    def write(self, path: Path) -> Path:
        self.frame.to_csv(path, index=False)
        return path

    @property
    def level_flag(self) -> list[str]:
        return ["--levels", ",".join(self.levels)] if self.levels else []


@st.composite
def ratings(draw: st.DrawFn) -> Ratings:
    """3-6 items × 2-3 agents, each response judged by 2-3 distinct raters of a pool of 3-4, on 2-3 levels; every
    level and every rater used, no repeated (item, agent, rater)."""
    n_items, n_agents = draw(st.integers(3, 6)), draw(st.integers(2, 3))
    n_raters, n_levels = draw(st.integers(3, 4)), draw(st.integers(2, 3))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    levels = LEVELS[:1] + LEVELS[3 - n_levels + 1:] if n_levels < 3 else LEVELS
    rows = []
    for item in range(n_items):
        for agent in range(n_agents):
            quality = (agent + 1) / (n_agents + 1)
            for rater in rng.choice(n_raters, size=int(rng.integers(2, min(3, n_raters) + 1)), replace=False):
                level = int(rng.binomial(n_levels - 1, quality))
                rows.append((f"it{item}", f"ag{agent}", f"ra{rater}", levels[level]))
    frame = pd.DataFrame(rows, columns=["item", "agent", "rater", "label"])
    # every level and rater present, so a renamed file declares the same scale and pool
    for position, level in enumerate(levels):
        frame.loc[position, "label"] = level
    missing = sorted(set(f"ra{r}" for r in range(n_raters)) - set(frame["rater"]))
    extra = pd.DataFrame([("it0", "ag0", name, levels[0]) for name in missing], columns=frame.columns)
    frame = pd.concat([frame, extra]) if missing else frame
    return Ratings(frame.reset_index(drop=True), tuple(levels))


@st.composite
def votes(draw: st.DrawFn) -> Ratings:
    """Pairwise votes (item, agent_a, agent_b, rater, winner): 3-6 items, 3-4 agents, each item compared by 2-3
    distinct raters of a pool of 3, each on one pair of agents; every agent in a vote, no repeated
    (item, pair, rater). ``levels`` is empty (the winner's words a, b, tie are the format's, not names)."""
    n_items, n_agents = draw(st.integers(3, 6)), draw(st.integers(3, 4))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    rows = []
    for item in range(n_items):
        for rater in rng.choice(3, size=int(rng.integers(2, 4)), replace=False):
            a, b = rng.choice(n_agents, size=2, replace=False)
            strength = (b - a) / n_agents  # the higher-numbered agent wins more often
            winner = rng.choice(["a", "b", "tie"], p=[0.4 - strength / 2, 0.4 + strength / 2, 0.2])
            rows.append((f"it{item}", f"ag{a}", f"ag{b}", f"ra{rater}", str(winner)))
    rows += [("it0", f"ag{agent}", f"ag{(agent + 1) % n_agents}", "ra9", "tie") for agent in range(n_agents)]
    return Ratings(pd.DataFrame(rows, columns=["item", "agent_a", "agent_b", "rater", "winner"]), ())


def shuffled(data: Ratings, seed: int) -> Ratings:
    """The same judgments in another row order."""
    order = np.random.default_rng(seed).permutation(len(data.frame))
    return Ratings(data.frame.iloc[order].reset_index(drop=True), data.levels)


def renaming(data: Ratings) -> dict[str, str]:
    """A consistent renaming of every item, agent, rater and level name that also reverses their sort order."""
    out: dict[str, str] = {}
    for columns, tag in ((["item"], "I"), (["agent", "agent_a", "agent_b"], "A"), (["rater"], "R")):
        names = sorted({name for column in columns if column in data.frame for name in data.frame[column]})
        out.update({name: f"z{tag}{len(names) - i:02d}q" for i, name in enumerate(names)})
    out.update(dict(zip(LEVELS, RENAMED_LEVELS, strict=True)))
    return out


def renamed(data: Ratings, mapping: dict[str, str]) -> Ratings:
    """``data`` with every name replaced by ``mapping`` (levels keep their order: the scale is the same; words that
    are not names, such as a pairwise winner's ``a``, stay)."""
    frame = data.frame.apply(lambda column: column.map(lambda value: mapping.get(value, value)))
    return Ratings(frame, tuple(mapping[level] for level in data.levels))


def report_text(html: str) -> list[str]:
    """The words and numbers a report shows (its tables and sentences), without its inline figures and styles and
    the input file's checksum."""
    for element in ("svg", "style", "script"):
        html = re.sub(rf"<{element}\b.*?</{element}>", " ", html, flags=re.S)
    text = re.sub(r"<[^>]+>", " ", re.sub(r"<img\b[^>]*>", " ", html))
    import html as html_lib

    words = (word.strip(",;") for word in html_lib.unescape(text).split())  # lists in name order: no separators
    return [word for word in words if word and not re.fullmatch(r"[0-9a-f]{64}", word)]  # the sha256 of the bytes


def figure_data(figure: Any) -> list[dict[str, Any]]:
    """What a matplotlib figure draws, per axes: its texts (title, axis labels, tick labels, annotations) and the
    numbers behind its lines, markers, bars, error bars and images, as lists two runs can compare."""
    axes = []
    for ax in figure.axes:
        texts = [ax.get_title(), ax.get_xlabel(), ax.get_ylabel(), *(t.get_text() for t in ax.texts),
                 *(t.get_text() for t in [*ax.get_xticklabels(), *ax.get_yticklabels()])]
        points: list[list[float]] = [[float(v) for v in xy] for line in ax.lines for xy in line.get_xydata()]
        for collection in ax.collections:
            points += [[float(v) for v in xy] for xy in np.asarray(collection.get_offsets()).reshape(-1, 2)]
            points += [[float(v) for v in path.vertices.ravel()] for path in collection.get_paths()]
            if collection.get_array() is not None:
                points.append([float(v) for v in np.asarray(collection.get_array()).ravel()])
        points += [[float(patch.get_x()), float(patch.get_y()), float(patch.get_width()), float(patch.get_height())]
                   for patch in ax.patches if hasattr(patch, "get_width")]  # bars, in data coordinates
        points += [[float(v) for v in np.asarray(image.get_array()).ravel()] for image in ax.images]
        axes.append({"texts": [t for t in texts if t], "points": points})
    return axes


def run_json(argv: list[str]) -> dict[str, Any]:
    """The JSON a command prints (exit 0 required), without the echo of its command line and the version."""
    result = CliRunner().invoke(app, [*argv, "-f", "json"])
    assert result.exit_code == 0, (argv, result.output, result.exception)
    payload = json.loads(result.stdout)
    for key in ("command", "version"):
        payload.pop(key, None)
    return payload


def comparable(payload: Any, back: dict[str, str] | None = None, digits: int = 6) -> Any:
    """``payload`` with the names of ``back`` mapped back (whole strings, dict keys and words inside sentences),
    numbers rounded to ``digits`` and every list sorted, so that outputs listing the same things in another order
    compare equal."""
    pattern = re.compile("|".join(sorted(map(re.escape, back), key=len, reverse=True))) if back else None

    def name(text: str) -> str:
        """Names mapped back; in a sentence (renamed names sort differently) the words compared as a multiset."""
        if pattern and back:
            text = pattern.sub(lambda m: back[m.group(0)], text)
        return " ".join(sorted(re.split(r"[\s,;]+", text.strip(" ,;")))) if " " in text else text

    def walk(value: Any) -> Any:
        if isinstance(value, dict):
            return {name(str(k)): walk(v) for k, v in value.items()}
        if isinstance(value, list):
            return sorted((walk(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True))
        if isinstance(value, float):
            return round(value, digits) if np.isfinite(value) else str(value)
        if isinstance(value, str):
            return name(value)
        return value

    return walk(payload)
