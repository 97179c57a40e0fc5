"""The self-contained HTML report: every analysis, its figure (inline SVG) and one or two plain sentences.

>>> import stableval, tempfile, pathlib
>>> html = build_report(stableval.example_path(), inputs=stableval.InputOptions(duplicates="keep"), quick=True,
...                     sections=("summary",))
>>> "<svg" in html or "Dataset" in html
True
"""

from __future__ import annotations

import hashlib
import html as html_lib
import platform
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from stableval._version import __version__
from stableval.aggregate.registry import (
    Chosen,
    convergence_warnings,
    headline_rater_model,
    method_label,
    primary_method,
    resolve_methods,
)
from stableval.data.labels import credit_text
from stableval.progress import progress_bar
from stableval.report.options import ReportOptions
from stableval.wording import plural

if TYPE_CHECKING:  # pragma: no cover
    from stableval.aggregate import Aggregator
    from stableval.data import InputOptions, Loaded


@dataclass(frozen=True)
class Section:
    """One part of the report: an anchor id, a title, a plain-language explanation and the HTML body."""

    id: str
    title: str
    explanation: str
    body: str


#: columns that hold counts: printed as integers even when a missing value made them float
COUNT_COLUMNS = frozenset({
    "judgments", "responses", "items", "agents", "raters", "ratings", "units", "votes", "compared", "correct",
    "applicable", "flag_mismatches", "flag_compared", "total_items", "skipped", "excluded", "qc_items", "qc_flagged",
    "evaluators", "games", "wins", "losses", "ties", "decisive", "shared",
})

#: words of a snake_case column name that read better spelled otherwise
_HEADER_WORDS = {"ci": "CI", "pct": "%", "sd": "SD", "mv": "MV", "ds": "DS"}


def readable_header(name: object) -> str:
    """A column name for a reader: snake_case keys become words.

    >>> readable_header("flag_mismatch_pct"), readable_header("ci_low"), readable_header("agent")
    ('flag mismatch %', 'CI low', 'agent')
    """
    text = str(name)
    if "_" not in text:
        return text
    return " ".join(_HEADER_WORDS.get(word, word) for word in text.split("_") if word)


def _is_count(column: object, values: pd.Series) -> bool:
    if column not in COUNT_COLUMNS and not str(column).startswith("n_"):
        return False
    if not pd.api.types.is_float_dtype(values):
        return False
    finite = values.dropna()
    return bool((finite == finite.round()).all())


def table_html(frame: pd.DataFrame, *, digits: int = 3) -> str:
    """A DataFrame as an escaped HTML table inside a box that scrolls sideways when the table is wider than the
    page; counts print as integers, snake_case column names as words and method keys as their labels.

    >>> print(table_html(pd.DataFrame({"ratings": [12.0, None], "ci_low": [0.5, 0.25]})).count("12.0"))
    0
    """
    from stableval.aggregate.registry import method_label

    shown = frame.copy()
    if "method" in shown.columns:  # result keys as the labels every other table and figure shows
        shown["method"] = shown["method"].map(lambda key: method_label(str(key)))
    for column in shown.columns:
        if _is_count(column, shown[column]):
            shown[column] = shown[column].map(lambda v: "" if pd.isna(v) else str(int(v)))
    shown.columns = [readable_header(c) for c in shown.columns]
    table = shown.to_html(index=False, escape=True, border=0, na_rep="", float_format=lambda v: f"{v:.{digits}f}")
    return f"<div class='table-box'>{table}</div>"


def figure_html(fig: Any, caption: str) -> str:
    """A matplotlib figure as inline SVG inside <figure>, with a caption (the figure is closed)."""
    from stableval.report.figures import figure_to_svg

    svg = figure_to_svg(fig)
    return f"<figure>{svg}<figcaption class='note'>{html_lib.escape(caption)}</figcaption></figure>"


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass
class ReportContext:
    """Everything the section builders share (the table is read once, analyses are cached)."""

    path: Path
    table: Any
    votes: Any | None
    methods: list[Chosen]
    seed: int
    bootstrap: int
    quick: bool
    command: str
    options: ReportOptions
    cache: dict[str, Any]
    shown_notes: set[str] = field(default_factory=set)

    def notes_html(self, notes: Iterable[str], css: str = "note") -> str:
        """``notes`` as escaped paragraphs, leaving out any already shown earlier in the report."""
        fresh = [n for n in dict.fromkeys(notes) if n not in self.shown_notes]
        self.shown_notes.update(fresh)
        return "".join(f"<p class='{css}'>{html_lib.escape(n)}</p>" for n in fresh)

    def scores(self) -> Any:
        if "scores" not in self.cache:
            from stableval.evaluate import score_agents

            self.cache["scores"] = score_agents(self.table, self.methods, bootstrap=self.bootstrap, seed=self.seed)
        return self.cache["scores"]

    def rater_model(self) -> Any:
        """The estimator the rater sections diagnose (:func:`~stableval.aggregate.registry.headline_rater_model`)."""
        return headline_rater_model(self.methods)


def _summary(ctx: ReportContext) -> Section:
    data = ctx.table.summary()
    rows = pd.DataFrame({
        "quantity": ["judgments", "responses (item × agent)", "items", "agents", "raters",
                     "mean judgments per response", "levels (worst → best)", "credit per level"],
        "value": [f"{data['judgments']:,}", f"{data['responses']:,}", f"{data['items']:,}", str(data["agents"]),
                  f"{data['raters']:,}", f"{data['mean_judgments_per_response']:.2f}", " < ".join(data["levels"]),
                  credit_text(data["credit"])],
    })
    fresh = [n for n in dict.fromkeys(data["notes"]) if n not in ctx.shown_notes]
    ctx.shown_notes.update(fresh)
    notes = "".join(f"<li>{html_lib.escape(n)}</li>" for n in fresh)
    body = table_html(rows) + (f"<p class='note'>Input notes:</p><ul class='note'>{notes}</ul>" if notes else "")
    return Section("summary", "Dataset", "What was rated, by whom, and how often: the size of the evidence behind "
                   "every number below.", body)


def _agreement(ctx: ReportContext) -> Section:
    from stableval.evaluate.agreement import STATISTIC_LABELS, agreement

    result = agreement(ctx.table, bootstrap=min(ctx.bootstrap, 500), seed=ctx.seed)
    stats = result.statistics.assign(statistic=lambda f: f["statistic"].map(lambda s: STATISTIC_LABELS.get(s, s)))
    keep = [c for c in ("statistic", "value", "ci_low", "ci_high", "note") if c in stats.columns]
    body = table_html(stats[keep])
    body += ctx.notes_html(result.notes)
    return Section("agreement", "How much do raters agree?", "Chance-corrected agreement between raters on the same "
                   "response: 1 is perfect agreement, 0 is what random labels would give. Low agreement is why a "
                   "model of each rater (Dawid–Skene, STABLEVAL) matters.", body)


def _reliability(ctx: ReportContext) -> Section:
    import base64
    import tempfile

    from stableval.datasets.gold import read_gold
    from stableval.evaluate.reliability import reliability_vs_qc
    from stableval.report.figures import reliability_figure, save_figure

    qc = ctx.options.qc
    assert qc is not None  # the section is only built with QC
    gold = read_gold(qc.file, levels=list(ctx.table.levels), every_agent=True) if qc.file is not None else None
    result = reliability_vs_qc(ctx.table, qc_rater=list(qc.raters) if qc.raters else None, gold=gold,
                               consensus=qc.consensus, source=str(ctx.path))
    with tempfile.TemporaryDirectory() as folder:
        png = save_figure(reliability_figure(result), Path(folder) / "reliability.png").read_bytes()
    image = base64.b64encode(png).decode("ascii")
    body = (f"<figure><img alt='Reliability against QC per evaluator' style='max-width:100%' "
            f"src='data:image/png;base64,{image}'><figcaption class='note'>Share of applicable items on which each "
            "evaluator matched QC, flag mismatches and item counts (N in each cell).</figcaption></figure>")
    body += table_html(result.table())
    body += ctx.notes_html(result.notes)
    return Section("reliability", "Reliability against quality control", "How often each evaluator gave the same "
                   "label as the quality-control reference, on the items both could rate. The interval is a Wilson "
                   "95% interval; evaluators marked * rated few items.", body)


def _leaderboard(ctx: ReportContext) -> Section:
    from stableval.report.figures import forest_plot

    result = ctx.scores()
    body = figure_html(forest_plot(result), "Dots: scores; bars: 95% percentile bootstrap intervals over each "
                       "agent's responses.") + table_html(result.display_frame())
    comparison = result.comparison()
    if comparison is not None:
        label, base = method_label(comparison.method), method_label(comparison.baseline)
        shown = comparison.agents.rename(columns={
            "baseline_score": base, "score": label, "change": f"{label} − {base}",
            "baseline_rank": f"{base} rank", "rank": f"{label} rank", "rank_change": "rank change"})
        body += (f"<h3>{html_lib.escape(label)} against {html_lib.escape(base)}</h3>" + table_html(shown)
                 + f"<p class='note'>{html_lib.escape(comparison.lines()[-1])} Rank change: {html_lib.escape(base)}"
                 f" rank − {html_lib.escape(label)} rank (positive: {html_lib.escape(label)} ranks the agent "
                 "higher).</p>")
    fits = "; ".join(f"{method_label(m)}: {'converged' if f['converged'] else 'NOT converged'} in {f['n_iter']} EM "
                     "iterations" for m, f in result.fits.items())
    body += f"<p class='note'>{html_lib.escape(fits)}</p>"
    body += "".join(f"<p class='warning'>{html_lib.escape(text)}</p>" for text in convergence_warnings(result.fits))
    return Section("leaderboard", "Leaderboard", "Each agent's score is the average credit of its responses. "
                   "Majority vote counts votes; Dawid–Skene and STABLEVAL first learn how strict or reliable each "
                   "rater is. Overlapping bars mean the data cannot separate the agents.", body)


def _win_probability(ctx: ReportContext) -> Section:
    from stableval.report.figures import win_heatmap

    result = ctx.scores()
    method = primary_method(result.methods)
    board = result.leaderboard()
    order = board["agent"].tolist()
    matrix = result.win_probability[method].loc[order, order]
    body = figure_html(win_heatmap(matrix, f"P(row agent scores above column agent) — {method_label(method)}"),
                       "Share of bootstrap replicates in which the row agent scored above the column agent.")
    return Section("win-probability", "How sure is the ranking?", "Each cell is the probability that the row agent "
                   "really scores above the column agent. Values near 0.5 mean the order of those two agents is "
                   "a coin flip on this data.", body)


def _stability(ctx: ReportContext) -> Section:
    from stableval.evaluate.stability import ranking_stability
    from stableval.report.figures.stability import stability_figure

    result = ranking_stability(ctx.table, ctx.methods, repetitions=10 if ctx.quick else 50, seed=ctx.seed,
                               jobs=ctx.options.jobs)
    columns = ["method", "raters", "tau_mean", "tau_ci_low", "tau_ci_high", "mean_rank_sd", "mean_rank_range",
               "p_top_change", "responses_dropped_mean"]
    body = figure_html(stability_figure(result), "Mean Kendall tau-b between the ranking from all raters and "
                       "from random subsets of raters; bands: 95% intervals of the mean.")
    body += table_html(result.summary[columns])
    body += "".join(f"<p class='warning'>Trivial: {html_lib.escape(note)}.</p>" for note in result.settings["trivial"])
    return Section("stability", "Would other raters give the same ranking?", "We re-ran every method on random "
                   "subsets of the raters. A tau-b of 1 means the ranking never changed; lower values and a high "
                   "chance of a new leader mean the ranking depends on who happened to rate.", body)


def _diagnostics(ctx: ReportContext) -> Any:
    if "diagnostics" not in ctx.cache:
        from stableval.evaluate.diagnostics import diagnose

        ctx.cache["diagnostics"] = diagnose(ctx.table, ctx.rater_model())
    return ctx.cache["diagnostics"]


def _raters(ctx: ReportContext) -> Section:
    from stableval.report.figures import confusion_grid, rater_scatter

    result = _diagnostics(ctx)
    body = figure_html(rater_scatter(result), "Each dot is a rater (size: number of ratings). Red crosses: at or "
                       "below chance, or near-uniform (spammer score < threshold).")
    body += figure_html(confusion_grid(result), f"Rows: the level {result.settings['method']} believes is true; "
                        "columns: what the rater said. A reliable rater has a dark diagonal.")
    flagged = result.raters[result.raters["below_chance"] | result.raters["near_uniform"]]
    columns = ["rater", "ratings", "accuracy", "leniency", "strictness", "over_rating", "under_rating",
               "spammer_score"]
    if len(flagged):
        body += (f"<p>{len(flagged)} of {plural(len(result.raters), 'rater')} flagged:</p>"
                 + table_html(flagged[columns]))
    else:
        body += (f"<p>None of the {len(result.raters)} raters is flagged; the five least accurate:</p>"
                 + table_html(result.raters.tail(5)[columns]))
    return Section("raters", "Which raters to trust", "Estimated from each rater's confusion matrix: accuracy "
                   "(how often they give the true level), leniency (how often they give the top level) and "
                   "strictness (the bottom level). Raters near chance add noise, not information.", body)


def _ambiguous(ctx: ReportContext) -> Section:
    result = _diagnostics(ctx)
    top = result.ambiguous.head(20)
    threshold = result.settings.get("ambiguity_threshold", 0.3)
    keep = [c for c in ("item", "agent", "judgments", "predicted", "confidence", "ambiguity", "details")
            if c in top.columns]
    body = (f"<p>{len(result.ambiguous):,} of {len(result.responses):,} responses have ambiguity above "
            f"{threshold:g}; the 20 most ambiguous:</p>" + table_html(top[keep]))
    return Section("ambiguous", "The most ambiguous responses", "Responses where even after weighing each rater's "
                   "reliability the true level stays uncertain: worth a second look, a clearer rubric, or more "
                   "ratings.", body)


def _pairwise(ctx: ReportContext) -> Section:
    from stableval.evaluate.pairwise import pairwise_leaderboard
    from stableval.report.figures import rating_plot, win_heatmap

    assert ctx.votes is not None
    board = pairwise_leaderboard(ctx.votes, bootstrap=ctx.bootstrap, seed=ctx.seed)
    body = figure_html(rating_plot(board), "Bradley–Terry ratings (1000 + 400·log10 strength) with 95% bootstrap "
                       "intervals over votes.")
    body += table_html(board.ratings.drop(columns=["strength"]), digits=1)
    for criterion, rate in board.win_rate.items():
        order = board.ratings[board.ratings["criterion"] == criterion]["agent"].tolist()
        body += figure_html(win_heatmap(rate.loc[order, order], f"Observed win rate (ties = ½) — {criterion}"),
                            "Share of head-to-head votes won by the row agent (ties count one half).")
    body += table_html(board.position_bias)
    return Section("pairwise", "Pairwise ratings (Bradley–Terry)", "The votes read directly as matches: an agent "
                   "that wins more head-to-head votes gets a higher rating; 400 points means 10:1 odds. Position "
                   "bias: if the first-shown answer wins clearly more than half of the decisive votes, raters "
                   "favour a side.", body)


def _rater_kinds(ctx: ReportContext) -> Section:
    from stableval.evaluate.judges import judge_diagnostics, leaderboards_by_kind

    info = ctx.options.rater_info
    assert info is not None  # the section is only built with rater kinds
    primary = next(c for c in ctx.methods if c.key == primary_method(c.key for c in ctx.methods))
    board = leaderboards_by_kind(ctx.table, info, primary, bootstrap=min(ctx.bootstrap, 200), seed=ctx.seed)
    names = {"all": "all raters", "human": "people", "llm": "LLM judges"}
    shown = pd.DataFrame({"agent": board["agent"]})
    for kind in ("all", "human", "llm"):
        if f"{kind}_score" in board.columns:
            score = board[f"{kind}_score"].map(lambda v: "" if pd.isna(v) else f"{v:.3f}")
            low = board[f"{kind}_ci_low"].map(lambda v: "" if pd.isna(v) else f" [{v:.3f}, ")
            high = board[f"{kind}_ci_high"].map(lambda v: "" if pd.isna(v) else f"{v:.3f}]")
            shown[f"{names[kind]}: score"] = score + (low + high if ctx.bootstrap else "")
            shown[f"{names[kind]}: rank"] = board[f"{kind}_rank"].astype(str).replace("<NA>", "")
    if "rank_change" in board.columns:
        shown["rank change (people − judges)"] = board["rank_change"].map(lambda v: "" if pd.isna(v) else f"{v:+d}")
    counts = info.counts()
    body = (f"<p>{counts['human']:,} human rater(s) and {counts['llm']:,} LLM judge(s); "
            f"{html_lib.escape(primary.label)} fitted on each group separately.</p>" + table_html(shown))
    if counts["human"] and counts["llm"]:
        judges = judge_diagnostics(ctx.table, info, primary, votes=ctx.votes, lengths=ctx.options.lengths,
                                   bootstrap=min(ctx.bootstrap, 500), seed=ctx.seed)
        columns = [c for c in ("judge", "family", "compared", "agreement", "leniency", "leniency_ci_low",
                               "leniency_ci_high", "self_preference", "self_preference_ci_low",
                               "self_preference_ci_high", "length_slope", "length_corr", "left_share")
                   if judges.judges[c].notna().any()]
        body += "<h3>LLM judges against the human consensus</h3>" + table_html(judges.judges[columns])
        body += ctx.notes_html(judges.notes)
    return Section("rater-kinds", "People and LLM judges", "The leaderboard from the people only and from the LLM "
                   "judges only, side by side: a positive rank change means the judges rank the agent higher than "
                   "the people do. Below, each judge against the people's consensus: leniency is the credit it "
                   "gives beyond the people's, self-preference the extra it gives agents of its own model family, "
                   "length slope the extra per standard deviation of answer length, left share the share of "
                   "decisive pairwise votes won by the first-shown answer (0.5 = no position bias).", body)


def _has_both_kinds(ctx: ReportContext) -> bool:
    info = ctx.options.rater_info
    return info is not None and all(info.counts()[kind] for kind in ("human", "llm"))


def _ppi(ctx: ReportContext) -> Section:
    from stableval.errors import InputError
    from stableval.evaluate.ppi import ppi_scores

    info = ctx.options.rater_info
    assert info is not None  # the section is only built with people and LLM judges
    primary = next(c for c in ctx.methods if c.key == primary_method(c.key for c in ctx.methods))
    try:
        result = ppi_scores(ctx.table, info, primary, bootstrap=min(ctx.bootstrap, 500), seed=ctx.seed)
    except InputError as error:
        body = ctx.notes_html([str(error)])
    else:
        body = table_html(result.display_frame()) + ctx.notes_html(result.footnotes(report=True))
    return Section("ppi", "People, judges and both (prediction-powered scores)", "Each agent's score from the "
                   "people only, from the LLM judges only, and from both (PPI++): the judges' score corrected by "
                   "how far they are from the people on the answers both rated. The combined interval stays honest "
                   "about the judges' bias and is narrower than the people's when the judges track the people; "
                   "the width ratio is the combined interval's width over the people's.", body)


def _reproducibility(ctx: ReportContext) -> Section:
    import matplotlib
    import numpy
    import scipy

    rows = pd.DataFrame({
        "what": ["command", "stableval", "python", "numpy / scipy / pandas / matplotlib", "seed",
                 "bootstrap replicates", "input file", "input sha256"],
        "value": [ctx.command, __version__, platform.python_version(),
                  f"{numpy.__version__} / {scipy.__version__} / {pd.__version__} / {matplotlib.__version__}",
                  str(ctx.seed), f"{ctx.bootstrap:,}", str(ctx.path),
                  sha256(ctx.path) if ctx.path.is_file() else "(not a file)"],
    })
    return Section("reproducibility", "Reproducibility", "Everything needed to recompute this report exactly.",
                   table_html(rows))


#: section name -> builder, in report order
BUILDERS: dict[str, Callable[[ReportContext], Section]] = {
    "summary": _summary,
    "agreement": _agreement,
    "leaderboard": _leaderboard,
    "win-probability": _win_probability,
    "stability": _stability,
    "raters": _raters,
    "ambiguous": _ambiguous,
    "pairwise": _pairwise,
    "reliability": _reliability,
    "rater-kinds": _rater_kinds,
    "ppi": _ppi,
    "reproducibility": _reproducibility,
}


def build_report(
    source: str | Path | Loaded,
    *,
    inputs: InputOptions | None = None,
    methods: Iterable[str | Aggregator | Chosen] | None = None,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    quick: bool = False,
    seed: int = 0,
    bootstrap: int | None = None,
    sections: Sequence[str] | None = None,
    command: str = "",
    progress: bool = False,
    options: ReportOptions | Mapping[str, Any] | None = None,
) -> str:
    """Run every analysis of a ratings file (read once with ``inputs``, or already :func:`~stableval.data.load`-ed)
    and return the report as one self-contained HTML string.

    ``methods``/``params``: the aggregation methods of the leaderboard and stability sections (default: the
    registry's defaults); the rater sections use the last of them with a rater model. ``options``: a
    :class:`~stableval.report.options.ReportOptions` (or a mapping of its fields): ``jobs`` (worker processes for
    the stability analysis), ``qc`` (a :class:`~stableval.report.options.QualityControl`, or a mapping with
    ``rater``, ``file`` or ``consensus``: adds the reliability-against-QC section), ``rater_info`` (a
    :class:`~stableval.data.raters.RaterInfo`: adds the people-vs-LLM-judges section) and ``lengths`` (answer length
    per response, for its length bias). Pairwise input adds the Bradley–Terry section.
    """
    from jinja2 import Environment, PackageLoader, select_autoescape
    from markupsafe import Markup

    from stableval.data import Loaded, load

    loaded = source if isinstance(source, Loaded) else load(source, inputs)
    path = Path(loaded.table.source)
    table = loaded.table
    ctx = ReportContext(path=path, table=table, votes=loaded.votes, methods=resolve_methods(methods, params),
                        seed=seed, bootstrap=bootstrap if bootstrap is not None else (200 if quick else 1000),
                        quick=quick, command=command, options=ReportOptions.of(options), cache={})
    chosen = [name for name in (sections or BUILDERS) if name in BUILDERS and (name != "pairwise" or ctx.votes)
              and (name != "reliability" or ctx.options.qc is not None)
              and (name != "rater-kinds" or ctx.options.rater_info is not None)
              and (name != "ppi" or _has_both_kinds(ctx))]
    built = []
    with progress_bar("report", total=len(chosen), enabled=progress, lines=True) as bar:
        for name in chosen:
            bar.stage(name)
            built.append(BUILDERS[name](ctx))
            bar.advance()
    env = Environment(loader=PackageLoader("stableval.report", "templates"), autoescape=select_autoescape())
    template = env.get_template("report.html.j2")
    return template.render(
        title=f"stableval report — {path.name}",
        subtitle=f"{plural(table.n_judgments, 'judgment')} of {plural(table.n_responses, 'response')} by "
                 f"{plural(table.n_raters, 'rater')}; {plural(table.n_agents, 'agent')}. "
                 f"Generated by stableval {__version__}.",
        sections=[{"id": s.id, "title": s.title, "explanation": s.explanation, "body": Markup(s.body)}
                  for s in built],
    )
