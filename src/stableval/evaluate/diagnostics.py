"""Rater and item diagnostics from a fitted confusion-matrix model (STABLEVAL by default, or Dawid–Skene).

Per rater r, from its confusion matrix ``pi_r[c, o]`` = P(rater gives level o | true level c) and the class priors
``mu`` (the model's estimate of the distribution of the true level):

* ``accuracy`` (class-balanced) = mean_c pi_r[c, c]; ``weighted_accuracy`` = sum_c mu_c pi_r[c, c];
* ``leniency`` = mean_c pi_r[c, K-1] (how often the top level is given, whatever the truth) and
  ``strictness`` = mean_c pi_r[c, 0] (Bonagiri et al. 2026, arXiv:2605.02122, Section 5.3);
* ``over_rating`` = P(label > truth) = sum_c mu_c sum_{o > c} pi_r[c, o] and ``under_rating`` = P(label < truth)
  = sum_c mu_c sum_{o < c} pi_r[c, o], with the truth distributed as mu (so weighted accuracy + over + under = 1);
* ``spammer_score`` (Raykar & Yu 2012, "Eliminating spammers and ranking annotators for crowdsourced labeling
  tasks", JMLR 13:491–518): the squared Frobenius distance of pi_r to the closest rank-one matrix (all rows
  equal: labels independent of the truth), normalised to [0, 1]:
  S_r = 1 / (K (K-1)) · sum_{c < c'} sum_o (pi_r[c, o] − pi_r[c', o])². 0 = a spammer, 1 = a perfect rater; for
  K = 2 it is (sensitivity + specificity − 1)².

Per response: the posterior over levels, the predicted (most probable) level, ``confidence`` = max posterior,
``ambiguity`` = 1 − confidence and the posterior ``entropy`` in nats (natural logarithm; divide by ln 2 for bits).
With GLAD (Whitehill et al. 2009, NIPS; :mod:`stableval.aggregate.glad`) — the diagnosed method, or fitted beside
it with ``difficulty=True`` — also ``difficulty`` = 1/beta_i: how hard the response is for every rater (GLAD's
P(correct) = sigma(ability · beta)), as opposed to the entropy, which says how unsure the model is of its level.

>>> import numpy as np
>>> confusion = np.array([[[0.8, 0.2], [0.3, 0.7]]])          # one rater, K = 2
>>> frame = rater_metrics(confusion, np.array([0.5, 0.5]))
>>> frame[["accuracy", "leniency", "strictness", "spammer_score"]].round(4).to_dict("records")
[{'accuracy': 0.75, 'leniency': 0.45, 'strictness': 0.55, 'spammer_score': 0.25}]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from stableval._json import records
from stableval.aggregate import Aggregator
from stableval.aggregate.method import Method
from stableval.aggregate.registry import (
    REGISTRY,
    convergence_warnings,
    method_base,
    method_label,
    method_of,
    primary_method,
    resolve_methods,
    spell_setting,
)
from stableval.console import Displayed
from stableval.data.table import AnnotationTable, JudgmentTable
from stableval.wording import plural

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console


def rater_model_methods() -> tuple[str, ...]:
    """The registered methods that estimate a confusion matrix per rater (those ``diagnose`` accepts)."""
    return tuple(name for name, method in REGISTRY.items() if method.rater_model)


def refuse_without_rater_model(method: Method) -> None:
    """``ValueError`` saying why, for a method without a rater model (no confusion matrix per rater to judge the
    raters by)."""
    if not method.rater_model:
        raise ValueError(f"diagnostics need a model with rater confusion matrices: {method.name} has none (it "
                         "estimates no confusion matrix per rater, which the rater diagnostics are read from); "
                         f"allowed: {', '.join(rater_model_methods())}")

#: default: responses whose ambiguity (1 − max posterior) exceeds this are listed
AMBIGUITY_THRESHOLD = 0.3
#: default: raters whose spammer score is below this are flagged as near-uniform (labels nearly independent of
#: the truth); 0.05 ≈ a chance-corrected accuracy (K·p − 1)/(K − 1) of 0.22 for a rater with symmetric errors
SPAMMER_THRESHOLD = 0.05

#: GLAD's hardest responses listed in the JSON and the ``hardest`` table
HARDEST_SHOWN = 50

RATER_COLUMNS = ("accuracy", "weighted_accuracy", "leniency", "strictness", "over_rating", "under_rating",
                 "spammer_score")


# ====================================================================================== the metrics
def spammer_score(confusion: np.ndarray) -> np.ndarray:
    """(R,) Raykar & Yu (2012) spammer score of (R, K, K) confusion matrices [rater, true, given].

    Uses sum_{c<c'} ||row_c − row_c'||² = K · sum_c ||row_c − mean row||², so it is one vectorised pass.

    >>> spammer_score(np.array([np.eye(3), np.full((3, 3), 1 / 3)])).tolist()
    [1.0, 0.0]
    """
    confusion = np.asarray(confusion, dtype=float)
    k = confusion.shape[-1]
    centred = confusion - confusion.mean(axis=1, keepdims=True)
    return np.asarray(k * (centred ** 2).sum(axis=(1, 2)) / (k * (k - 1)))


def rater_metrics(confusion: np.ndarray, priors: np.ndarray) -> pd.DataFrame:
    """One row per rater: ``accuracy, weighted_accuracy, leniency, strictness, over_rating, under_rating,
    spammer_score`` from (R, K, K) confusion matrices [rater, true, given] and (K,) class priors."""
    confusion = np.asarray(confusion, dtype=float)
    priors = np.asarray(priors, dtype=float)
    k = confusion.shape[-1]
    diagonal = np.diagonal(confusion, axis1=1, axis2=2)  # (R, K)
    above = np.triu(np.ones((k, k), dtype=bool), 1)        # o > c
    below = np.tril(np.ones((k, k), dtype=bool), -1)       # o < c
    return pd.DataFrame({
        "accuracy": diagonal.mean(axis=1),
        "weighted_accuracy": diagonal @ priors,
        "leniency": confusion[:, :, k - 1].mean(axis=1),
        "strictness": confusion[:, :, 0].mean(axis=1),
        "over_rating": (confusion * above).sum(axis=2) @ priors,
        "under_rating": (confusion * below).sum(axis=2) @ priors,
        "spammer_score": spammer_score(confusion),
    })


def posterior_entropy(posteriors: np.ndarray) -> np.ndarray:
    """(N,) entropy in nats of each row of an (N, K) distribution (0 · log 0 = 0).

    >>> posterior_entropy(np.array([[0.5, 0.5], [1.0, 0.0]])).round(4).tolist()
    [0.6931, 0.0]
    """
    p = np.asarray(posteriors, dtype=float)
    logs = np.log(np.where(p > 0, p, 1.0))
    return np.asarray(-(p * logs).sum(axis=1)) + 0.0  # + 0.0 turns -0.0 into 0.0


def fragile_majorities(counts: np.ndarray) -> np.ndarray:
    """(N,) bool: responses whose majority (plurality) changes when one of their raters is removed, from the
    (N, K) judgments per level: the top level leads the next by at most one vote (removing one of its raters
    turns a one-vote lead into a tie, and breaks a tie). A response with fewer than 2 judgments is never fragile.

    >>> fragile_majorities(np.array([[3, 0, 0], [2, 1, 0], [1, 1, 0], [1, 0, 0], [0, 3, 1], [2, 2, 1]])).tolist()
    [False, True, True, False, False, True]
    """
    counts = np.asarray(counts, dtype=float)
    if counts.shape[1] < 2:
        return np.zeros(counts.shape[0], dtype=bool)
    top2 = np.sort(counts, axis=1)[:, -2:]
    return np.asarray((counts.sum(axis=1) >= 2) & (top2[:, 1] - top2[:, 0] <= 1))


def _shortened(text: str, width: int = 80) -> str:
    """``text`` on one line, cut to ``width`` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


# ====================================================================================== result
@dataclass(frozen=True)
class Diagnostics(Displayed):
    """Result of :func:`diagnose`.

    Attributes:
        raters: one row per rater, best class-balanced accuracy first: ``rater, ratings, responses, accuracy,
            weighted_accuracy, leniency, strictness, over_rating, under_rating, spammer_score, below_chance``
            (accuracy <= 1/K) ``, near_uniform`` (spammer score < ``spammer_threshold``); for the ordinal model also
            ``shift`` (> 0 lenient, < 0 strict, in levels) and ``spread``.
        responses: one row per response (table order): ``item, agent, judgments``, ``n_<level>`` (judgments per
            level), ``p_<level>`` (posterior), ``predicted`` (level name), ``confidence, ambiguity, entropy``
            (nats), ``ambiguous`` (ambiguity > threshold), ``fragile`` (:func:`fragile_majorities`); ``text``
            with :meth:`with_item_text`.
        ambiguous: the ambiguous responses, most ambiguous first, with ``details``: every judgment as
            ``rater=level`` (sorted by rater); with :meth:`with_item_text` also the item's ``text``.
        confusion: (R, K, K) confusion matrices [rater, true, given], rater order of ``raters_order``.
        raters_order: rater names in the order of ``confusion``'s first axis.
        priors: (K,) estimated class priors mu.
        levels: the level names.
        method: the method's key (``"stableval"``, ``"ds"``, ...).
        fit: ``n_iter, converged, log_likelihood, objective`` of the EM fit.
        dataset: counts from :meth:`AnnotationTable.summary`.
        settings: thresholds, the method's label and its hyper-parameters (``params``).
        difficulty_source: the method key whose GLAD fit gave ``responses["difficulty"]`` (``None``: no
            difficulty); ``hardest`` then lists the responses, hardest first (:data:`HARDEST_SHOWN` of them).
    """

    raters: pd.DataFrame
    responses: pd.DataFrame
    ambiguous: pd.DataFrame
    confusion: np.ndarray
    raters_order: list[str]
    priors: np.ndarray
    levels: tuple[str, ...]
    method: str
    fit: dict[str, Any]
    dataset: dict[str, Any]
    settings: dict[str, Any] = field(default_factory=dict)
    difficulty_source: str | None = None

    @property
    def hardest(self) -> pd.DataFrame:
        """The responses with the largest GLAD difficulty first (ties: table order): ``item, agent, predicted,
        difficulty, ambiguity, entropy``; empty without a difficulty."""
        if self.difficulty_source is None:
            return pd.DataFrame(columns=["item", "agent", "predicted", "difficulty", "ambiguity", "entropy"])
        order = np.argsort(-self.responses["difficulty"].to_numpy(), kind="stable")[:HARDEST_SHOWN]
        return self.responses.iloc[order][["item", "agent", "predicted", "difficulty", "ambiguity",
                                           "entropy"]].reset_index(drop=True)

    def _difficulty_dict(self) -> dict[str, Any]:
        difficulty = self.responses["difficulty"].to_numpy(float)
        entropy = self.responses["entropy"].to_numpy(float)
        together = pd.Series(difficulty).corr(pd.Series(entropy), method="spearman") if len(difficulty) > 1 else None
        return {"source": method_label(self.difficulty_source or ""), "definition": "1/beta of GLAD (Whitehill et al. "
                "2009): P(rater r right) = sigma(alpha_r * beta); larger = harder",
                "mean": float(difficulty.mean()) if difficulty.size else None,
                "median": float(np.median(difficulty)) if difficulty.size else None,
                "spearman_with_entropy": None if together is None or np.isnan(together) else float(together),
                "hardest": records(self.hardest)}

    def confusion_frame(self, rater: str) -> pd.DataFrame:
        """One rater's confusion matrix as a frame: rows = true level, columns = given level."""
        index = self.raters_order.index(str(rater))
        return pd.DataFrame(self.confusion[index], index=pd.Index(self.levels, name="true"),
                            columns=pd.Index(self.levels, name="given"))

    def with_item_text(self, texts: Mapping[str, str] | pd.Series) -> Diagnostics:
        """The same diagnostics with each response's item text (column ``text``; empty for an item without one)."""
        lookup = pd.Series(texts, dtype=object)
        lookup.index = lookup.index.astype(str)
        lookup = lookup[~lookup.index.duplicated()]

        def texted(frame: pd.DataFrame) -> pd.DataFrame:
            found = lookup.reindex(frame["item"].astype(str).to_numpy())
            return frame.assign(text=found.where(found.notna(), "").to_numpy(dtype=object))

        return replace(self, responses=texted(self.responses), ambiguous=texted(self.ambiguous))

    def key_findings(self) -> dict[str, Any]:
        """The paper's key findings in numbers: responses, ambiguous ones, the mean ambiguity (1 − largest
        posterior) and entropy, and the fragile majorities (:func:`fragile_majorities`; ``ties``: of them, the
        responses whose top levels are already tied)."""
        responses = self.responses
        fragile = responses["fragile"].to_numpy(bool) if "fragile" in responses else np.zeros(len(responses), bool)
        counts = responses[[f"n_{level}" for level in self.levels]].to_numpy(float)
        top2 = np.sort(counts, axis=1)[:, -2:] if counts.shape[1] >= 2 else np.zeros((len(responses), 2))
        return {"responses": len(responses), "ambiguous": len(self.ambiguous),
                "mean_ambiguity": float(responses["ambiguity"].mean()) if len(responses) else 0.0,
                "mean_entropy": float(responses["entropy"].mean()) if len(responses) else 0.0,
                "fragile_majorities": int(fragile.sum()),
                "ties": int((fragile & (top2[:, 1] == top2[:, 0])).sum())}

    def _warnings(self) -> list[str]:
        return convergence_warnings({self.method: self.fit}) if self.fit else []

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: settings, priors, raters (each with its confusion matrix), ambiguous responses; ``warnings``
        says when the EM fit stopped at its iteration cap (:func:`convergence_warnings`)."""
        position = {name: i for i, name in enumerate(self.raters_order)}
        raters = records(self.raters)
        for row in raters:
            row["confusion"] = np.round(self.confusion[position[str(row["rater"])]], 6).tolist()
        return {
            "dataset": self.dataset,
            "settings": self.settings,
            "method": method_label(self.method),
            "warnings": self._warnings(),
            "fit": self.fit,
            "levels": list(self.levels),
            "priors": {level: float(p) for level, p in zip(self.levels, self.priors, strict=True)},
            "confusion_axes": "confusion[true level][given level] = P(rater gives the given level | true level)",
            "raters": raters,
            "responses_total": len(self.responses),
            "ambiguous_count": len(self.ambiguous),
            "key_findings": self.key_findings(),
            "ambiguous": records(self.ambiguous),
            **({"difficulty": self._difficulty_dict()} if self.difficulty_source is not None else {}),
        }

    def render(self, console: Console, top: int = 20) -> None:
        """The fit, the rater table (best first, flags), and the ``top`` most ambiguous responses."""
        from rich import box
        from rich.table import Table

        from stableval.markup import literal

        data, settings = self.dataset, self.settings
        console.print(f"[bold]{literal(data['source'])}[/]: {plural(data['judgments'], 'judgment')} of "
                      f"{plural(data['responses'], 'response')} by {plural(data['raters'], 'rater')}; levels "
                      f"{' < '.join(data['levels'])}")
        for note in data["notes"]:
            console.print(f"  note: {literal(note)}")
        priors = ", ".join(f"{level} {p:.3f}" for level, p in zip(self.levels, self.priors, strict=True))
        fit = self.fit
        if fit:
            raise_cap = spell_setting(method_base(self.method), "max_iter", "N")
            state = "converged" if fit["converged"] else f"[bold red]did NOT converge[/] (raise {raise_cap})"
            console.print(f"{settings['method']}: EM {state} in {plural(fit['n_iter'], 'iteration')}; "
                          f"estimated class priors: {priors}")
        else:
            console.print(f"{settings['method']}: estimated class priors: {priors}")
        if fit and fit.get("starts"):
            starts = ", ".join(f"{row['start']} {row['objective']:,.2f}"
                               + ("" if row["admissible"] else " (label-swapped: refused)")
                               for row in fit["starts"])
            console.print(f"  starts (log posterior after screening): {starts}; kept: {fit['start']}")
        for text in self._warnings():
            console.print(f"[bold red]warning:[/] {text}")
        raters = Table(box=box.SIMPLE_HEAVY, show_edge=False, title_justify="left",
                       title="Raters (best class-balanced accuracy first)")
        for name in ("Rater", "Ratings", "Accuracy", "Weighted acc.", "Leniency", "Strictness", "Over", "Under",
                     "Spammer", "Flags"):
            raters.add_column(name, justify="left" if name in ("Rater", "Flags") else "right")
        for row in self.raters.itertuples(index=False):
            flags = [text for flag, text in ((row.below_chance, "[red]at/below chance[/]"),
                                             (row.near_uniform, "[yellow]near-uniform[/]")) if flag]
            raters.add_row(literal(row.rater), f"{row.ratings:,}", f"{row.accuracy:.3f}",
                           f"{row.weighted_accuracy:.3f}", f"{row.leniency:.3f}", f"{row.strictness:.3f}",
                           f"{row.over_rating:.3f}", f"{row.under_rating:.3f}", f"{row.spammer_score:.3f}",
                           ", ".join(flags))
        console.print(raters)
        if "shift" in self.raters:  # the ordinal model: each rater's shift (leniency > 0, strictness < 0) and spread
            by_shift = self.raters.sort_values(["shift", "rater"], kind="stable")
            shown = by_shift if len(by_shift) <= 10 else pd.concat([by_shift.head(5), by_shift.tail(5)])
            console.print("Ordinal reading, shift / spread in levels (shift > 0 lenient, < 0 strict; strictest first"
                          + ("" if len(by_shift) <= 10 else ", 5 at each end") + "): "
                          + ", ".join(f"{row.rater} {row.shift:+.2f} / {row.spread:.2f}"
                                      for row in shown.itertuples(index=False)))
        below = int(self.raters["below_chance"].sum())
        uniform = int(self.raters["near_uniform"].sum())
        console.print(f"Accuracy = mean over true levels of P(correct); weighted by the class priors in 'Weighted "
                      f"acc.'. Over/Under = P(label above/below the truth). {below} rater(s) at or below chance "
                      f"(accuracy <= 1/{len(self.levels)}), {uniform} near-uniform (spammer score < "
                      f"{settings['spammer_threshold']:g}).")
        total = len(self.responses)
        count = len(self.ambiguous)
        share = count / total if total else 0.0
        console.print(f"\n{count:,} of {total:,} responses ({share:.1%}) are ambiguous (ambiguity > "
                      f"{settings['ambiguity_threshold']:g}); mean entropy {self.responses['entropy'].mean():.3f} "
                      "nats.")
        findings = self.key_findings()
        console.print(f"Mean ambiguity {findings['mean_ambiguity']:.3f}; {findings['fragile_majorities']:,} "
                      f"fragile majorities (the majority changes when one rater is removed; "
                      f"{findings['ties']:,} of them already tied).")
        if count and top:
            shown = self.ambiguous.head(top)
            items = Table(box=box.SIMPLE_HEAVY, show_edge=False, title_justify="left",
                          title=f"Most ambiguous responses (top {len(shown)} of {count:,})")
            hard = self.difficulty_source is not None
            texts = "text" in shown.columns
            numbers = ("Confidence", "Ambiguity", "Entropy") + (("Difficulty",) if hard else ())
            for name in ("Item", *(("Text",) if texts else ()), "Agent", "Predicted", *numbers, "Judgments"):
                items.add_column(name, justify="right" if name in numbers else "left", overflow="fold")
            for row in shown.itertuples(index=False):
                extra = (f"{row.difficulty:.3f}",) if hard else ()
                text_cell = (literal(_shortened(str(row.text))),) if texts else ()
                items.add_row(literal(row.item), *text_cell, literal(row.agent), str(row.predicted),
                              f"{row.confidence:.3f}", f"{row.ambiguity:.3f}", f"{row.entropy:.3f}", *extra,
                              literal(row.details))
            console.print(items)
        if self.difficulty_source is not None and top:
            self._render_difficulty(console, top)

    def _render_difficulty(self, console: Console, top: int) -> None:
        """GLAD's hardest responses beside their posterior ambiguity."""
        from rich import box
        from rich.table import Table

        from stableval.markup import literal

        summary = self._difficulty_dict()
        together = summary["spearman_with_entropy"]
        console.print(f"\nDifficulty 1/β from {summary['source']} (Whitehill et al. 2009; larger = harder for every "
                      f"rater): median {summary['median']:.3f}"
                      + ("" if together is None else f"; Spearman correlation with the posterior entropy "
                                                     f"{together:.2f}") + ".")
        shown = self.hardest.head(top)
        hard = Table(box=box.SIMPLE_HEAVY, show_edge=False, title_justify="left",
                     title=f"Hardest responses (top {len(shown)})")
        for name in ("Item", "Agent", "Predicted", "Difficulty", "Ambiguity", "Entropy"):
            hard.add_column(name, justify="right" if name in ("Difficulty", "Ambiguity", "Entropy") else "left",
                            overflow="fold")
        for row in shown.itertuples(index=False):
            hard.add_row(literal(row.item), literal(row.agent), str(row.predicted), f"{row.difficulty:.3f}",
                         f"{row.ambiguity:.3f}", f"{row.entropy:.3f}")
        console.print(hard)

    def to_frame(self, which: str = "raters") -> pd.DataFrame:
        """One of the tables: ``"raters"``, ``"responses"`` (all, with posteriors) or ``"ambiguous"``."""
        tables = {"raters": self.raters, "responses": self.responses, "ambiguous": self.ambiguous}
        if which not in tables:
            raise ValueError(f"no table {which!r}; allowed: {', '.join(tables)}")
        return tables[which]


# ====================================================================================== diagnose
def diagnose(
    table: JudgmentTable,
    method: str | Aggregator | None = None,
    *,
    params: Mapping[str, Any] | None = None,
    ambiguity_threshold: float = AMBIGUITY_THRESHOLD,
    spammer_threshold: float = SPAMMER_THRESHOLD,
    difficulty: bool | None = None,
) -> Diagnostics:
    """Fit a rater model and derive rater and response diagnostics.

    Args:
        table: the annotation table, or a table partitioned over a Dask cluster
            (:class:`~stableval.data.partitioned.PartitionedTable`: the model is fitted there, and the counts and
            the flagged responses' judgments are fetched from the partitions).
        method: a registered method with a rater model (:func:`rater_model_methods`), by name or as an estimator
            instance such as ``Stableval(alpha_pi=2)``; default: the registry's primary method (STABLEVAL).
        params: the method's hyper-parameters by name (with a method name), e.g. ``{"alpha_pi": 2.0}``.
        ambiguity_threshold: responses with ambiguity (1 − max posterior) above it are listed (0 <= t < 1).
        spammer_threshold: raters with a spammer score below it are flagged near-uniform.
        difficulty: each response's GLAD difficulty 1/beta (column ``difficulty``, the ``hardest`` table and JSON):
            ``None`` (default) when the diagnosed method is GLAD, ``True`` also fits GLAD (default settings) beside
            another method, ``False`` never.

    A rater who never judged a response of some true level has no evidence for that row of pi_r; the model
    then leaves the row uniform (DS) or at its prior (STABLEVAL), and the class-balanced metrics average it in.

    >>> import pandas as pd
    >>> frame = pd.DataFrame({"item": [1, 1, 1, 2, 2, 2, 3, 3, 3], "agent": "A", "rater": list("abcabcabc"),
    ...                       "label": [1, 1, 0, 0, 0, 1, 1, 1, 1]})
    >>> result = diagnose(AnnotationTable.from_frame(frame, levels=("no", "yes")), "ds")
    >>> result.raters["rater"].tolist(), int(result.raters["ratings"].sum())
    (['a', 'b', 'c'], 9)
    """
    if method is None:
        method = primary_method(rater_model_methods())
    if isinstance(method, str) and method.strip().lower() in REGISTRY:
        refuse_without_rater_model(REGISTRY[method.strip().lower()])
    if not 0.0 <= ambiguity_threshold < 1.0:
        raise ValueError(f"ambiguity threshold must be in [0, 1), got {ambiguity_threshold}")
    if not 0.0 <= spammer_threshold <= 1.0:
        raise ValueError(f"spammer threshold must be in [0, 1], got {spammer_threshold}")
    chosen = resolve_methods([method], {method.strip().lower(): params or {}} if isinstance(method, str) else None)[0]
    refuse_without_rater_model(chosen.method)
    name = chosen.key
    model = chosen.fit(table)
    priors = np.asarray(model.priors_, dtype=float)
    posteriors = np.asarray(model.posteriors_, dtype=float)
    confusion = rater_evidence(table, model)
    k = table.n_levels

    # ---- raters
    metrics = rater_metrics(confusion, priors)
    raters = pd.concat([pd.DataFrame({
        "rater": [str(r) for r in table.raters],
        "ratings": table.judgments_per_rater(),
        "responses": table.responses_per_rater(),
    }), metrics], axis=1)
    raters["below_chance"] = chance_flags(raters["accuracy"].to_numpy(), k)
    raters["near_uniform"] = raters["spammer_score"] < spammer_threshold
    from stableval.aggregate.ordinal import OrdinalRaters

    if isinstance(model, OrdinalRaters):  # its ordinal reading of each rater: shift > 0 lenient, < 0 strict
        raters["shift"], raters["spread"] = model.shift_, model.spread_
    raters = raters.sort_values(["accuracy", "rater"], ascending=[False, True], kind="stable").reset_index(drop=True)

    # ---- responses
    responses = response_columns(table.response_frame(), table.vote_counts(), posteriors, table.levels)
    difficulty_source = _difficulty(responses, table, model, name, difficulty)
    responses["fragile"] = fragile_majorities(table.vote_counts())
    flagged = mark_ambiguous(responses, ambiguity_threshold)
    ambiguous = responses.iloc[flagged].drop(columns="ambiguous").reset_index(drop=True)
    ambiguous["details"] = table.judgment_details(flagged)

    settings: dict[str, Any] = {"method": chosen.label, "ambiguity_threshold": ambiguity_threshold,
                                "spammer_threshold": spammer_threshold, "chance_accuracy": 1.0 / k,
                                "entropy_unit": "nats", "params": chosen.estimator.get_params(),
                                **({} if isinstance(table, AnnotationTable) else {"executor": "dask"})}
    return Diagnostics(
        raters=raters, responses=responses, ambiguous=ambiguous, confusion=confusion,
        raters_order=[str(r) for r in table.raters], priors=priors, levels=table.levels, method=name,
        fit=model.fit_summary(),
        dataset=table.summary(), settings=settings, difficulty_source=difficulty_source,
    )


def rater_evidence(table: JudgmentTable, model: Aggregator) -> np.ndarray:
    """(R, K, K) the confusion matrices the diagnostics read. For the Dawid–Skene-type EM models (DS, STABLEVAL) each
    rater's own evidence against the fitted consensus: the expected counts sum_i posterior_i(c) · [r gave o to i],
    row-normalised — the maximum-likelihood rows, which a Dirichlet prior (STABLEVAL's pooled default shrinks every
    row towards the crowd's) would pull towards looking like the crowd, hiding a careless rater; a row without
    evidence keeps the model's. Other models' matrices are their own structure (GLAD, MACE, ordinal), used as fitted.

    >>> import pandas as pd
    >>> from stableval.aggregate import Stableval
    >>> frame = pd.DataFrame({"item": [1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4], "agent": "A", "rater": list("abc") * 4,
    ...                       "label": [1, 1, 1, 0, 0, 1, 1, 1, 1, 0, 0, 1]})  # rater c always says 1
    >>> table = AnnotationTable.from_frame(frame, levels=("no", "yes"))
    >>> rater_evidence(table, Stableval().fit(table))[2].round(3).tolist()
    [[0.0, 1.0], [0.0, 1.0]]
    """
    from stableval.aggregate.em_fit import EMAggregator

    fitted = np.asarray(model.confusion_, dtype=float)
    if not isinstance(model, EMAggregator):
        return fitted
    from stableval.aggregate.responses import ResponseMatrix, WholeMatrix

    if isinstance(table, AnnotationTable):
        responses: ResponseMatrix = WholeMatrix.of_table(table)
    else:  # on the Dask cluster the table lives on
        from stableval.aggregate.distributed import PartitionedMatrix
        from stableval.data.partitioned import PartitionedTable

        assert isinstance(table, PartitionedTable)
        responses = PartitionedMatrix(table)
    k = table.n_levels
    counts = responses.expected_rows(np.asarray(model.posteriors_, dtype=float)).reshape(-1, k, k)
    mass = counts.sum(axis=2, keepdims=True)
    return np.asarray(np.where(mass > 1e-12, counts / np.maximum(mass, 1e-300), fitted))


def response_columns(responses: pd.DataFrame, counts: np.ndarray, posteriors: np.ndarray,
                     levels: Sequence[str]) -> pd.DataFrame:
    """``responses`` (one row per response) with the vote counts ``n_<level>``, posteriors ``p_<level>``, the
    ``predicted`` level, ``confidence`` (largest posterior), ``ambiguity`` (1 − confidence) and ``entropy``."""
    counts = np.asarray(counts).astype(np.int64)
    for c, level in enumerate(levels):
        responses[f"n_{level}"] = counts[:, c]
    for c, level in enumerate(levels):
        responses[f"p_{level}"] = posteriors[:, c]
    confidence = posteriors.max(axis=1)
    responses["predicted"] = np.asarray(levels, dtype=object)[posteriors.argmax(axis=1)]
    responses["confidence"] = confidence
    responses["ambiguity"] = 1.0 - confidence
    responses["entropy"] = posterior_entropy(posteriors)
    return responses


def mark_ambiguous(responses: pd.DataFrame, threshold: float) -> np.ndarray:
    """Add the ``ambiguous`` column (ambiguity above ``threshold``); the flagged rows, most ambiguous first (ties
    in row order)."""
    responses["ambiguous"] = responses["ambiguity"] > threshold
    flagged = np.flatnonzero(responses["ambiguous"].to_numpy())
    return flagged[np.lexsort((flagged, -responses["ambiguity"].to_numpy()[flagged]))]


def _difficulty(responses: pd.DataFrame, table: JudgmentTable, model: Aggregator, name: str,
                wanted: bool | None) -> str | None:
    """Add GLAD's ``difficulty`` column to ``responses`` (from ``model`` if it is a GLAD fit, else from a GLAD fit
    of its own when ``wanted``); returns the key of the method it came from, or ``None``."""
    from stableval.aggregate.glad import GLAD

    if wanted is False:
        return None
    if isinstance(model, GLAD):
        responses["difficulty"] = model.difficulty_
        return name
    if not wanted:
        return None
    glad = method_of(GLAD())
    responses["difficulty"] = glad.fit(table).difficulty_
    return glad.name


def chance_flags(accuracy: Sequence[float] | np.ndarray, n_levels: int) -> np.ndarray:
    """Whether each class-balanced accuracy is at or below chance, 1/K.

    >>> chance_flags([0.5, 0.25, 0.9], 3).tolist()
    [False, True, False]
    """
    return np.asarray(accuracy, dtype=float) <= 1.0 / n_levels + 1e-12
