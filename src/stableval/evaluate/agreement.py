"""Inter-rater agreement: raw agreement, Krippendorff's alpha, Fleiss' kappa, Gwet's AC1, Cohen's kappa.

The unit of analysis is the *response* (item, agent): every statistic compares the labels different
judgments gave to the same response. Everything is computed from the (N, K) counts of each level per response
(and, for Cohen's kappa, from one K × K table per rater pair), so the bootstrap over responses is one
multinomial draw-count matrix times a per-response statistics matrix (BLAS), chunk by chunk.

>>> import numpy as np
>>> counts = np.array([[3, 0], [2, 1], [0, 3], [1, 1]])     # 4 responses, 2 levels, counts per level
>>> round(unanimous_agreement(counts), 3), round(pairwise_agreement(counts), 3)
(0.5, 0.583)
>>> round(krippendorff_alpha(counts, "nominal"), 3), round(fleiss_kappa(counts), 3), round(gwet_ac1(counts), 3)
(0.333, 0.161, 0.172)
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd
import scipy.sparse as sp

from stableval._json import records
from stableval.console import Displayed
from stableval.data.table import AnnotationTable
from stableval.evaluate.intervals import percentile_interval
from stableval.progress import progress_bar
from stableval.wording import plural

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console

__all__ = [
    "ALPHA_METRICS",
    "COHEN_WEIGHTS",
    "AgreementResult",
    "agreement",
    "cohen_kappa",
    "fleiss_kappa",
    "gwet_ac1",
    "krippendorff_alpha",
    "pairwise_agreement",
    "unanimous_agreement",
]

ALPHA_METRICS: tuple[str, ...] = ("nominal", "ordinal", "interval")
COHEN_WEIGHTS: tuple[str, ...] = ("none", "linear", "quadratic")
Metric = Literal["nominal", "ordinal", "interval"]

#: Rows of :attr:`AgreementResult.statistics`, in order.
STATISTICS: tuple[str, ...] = (
    "unanimous_agreement",
    "pairwise_agreement",
    "krippendorff_alpha_nominal",
    "krippendorff_alpha_ordinal",
    "krippendorff_alpha_interval",
    "fleiss_kappa",
    "gwet_ac1",
    "cohen_kappa_mean",
)


# ====================================================================================== per-response statistics
def _as_counts(counts: np.ndarray) -> np.ndarray:
    counts = np.asarray(counts, dtype=np.float64)
    if counts.ndim != 2 or counts.shape[1] < 2:
        raise ValueError(f"counts must be a (units, levels) matrix with >= 2 levels, got shape {counts.shape}")
    if np.any(counts < 0):
        raise ValueError("counts must be non-negative")
    return counts


def _unit_stats(counts: np.ndarray) -> np.ndarray:
    """(N, D) per-response contributions whose column sums give every pooled statistic.

    Columns: K² coincidences ``(n_uc n_uk - [c=k] n_uc) / (m_u - 1)`` (pairable units only), K proportions
    ``n_uc / m_u``, then P_u (share of agreeing ordered pairs), unanimous_u, pairable_u, rated_u (m_u >= 1).
    """
    n_units, k = counts.shape
    m = counts.sum(axis=1)
    pairable = m >= 2
    rated = m >= 1
    safe_pairs = np.where(pairable, m - 1, 1.0)
    coincidence = (counts[:, :, None] * counts[:, None, :]).reshape(n_units, k * k)
    coincidence[:, :: k + 1] -= counts
    coincidence *= (pairable / safe_pairs)[:, None]
    proportions = counts / np.where(rated, m, 1.0)[:, None]
    agree = np.where(pairable, (counts * (counts - 1)).sum(axis=1) / (m * safe_pairs), 0.0)
    unanimous = pairable & (counts.max(axis=1) == m)
    return np.hstack([coincidence, proportions, agree[:, None], unanimous[:, None], pairable[:, None],
                      rated[:, None]]).astype(np.float64)


def _delta(metric: str, n_c: np.ndarray) -> np.ndarray:
    """Squared difference δ²(c, k) of Krippendorff (2011), batched over the leading axes of ``n_c`` (…, K)."""
    k = n_c.shape[-1]
    c = np.arange(k)
    if metric == "nominal":
        return np.broadcast_to(1.0 - np.eye(k), (*n_c.shape[:-1], k, k))
    if metric == "interval":
        return np.broadcast_to((c[:, None] - c[None, :]).astype(float) ** 2, (*n_c.shape[:-1], k, k))
    if metric == "ordinal":
        cumulative = np.cumsum(n_c, axis=-1)
        low, high = np.minimum.outer(c, c), np.maximum.outer(c, c)
        between = cumulative[..., high] - cumulative[..., low] + n_c[..., low]
        return np.asarray((between - (n_c[..., :, None] + n_c[..., None, :]) / 2.0) ** 2)
    raise ValueError(f"unknown metric {metric!r}; allowed: {', '.join(ALPHA_METRICS)}")


def _from_sums(sums: np.ndarray, k: int) -> dict[str, np.ndarray]:
    """Every pooled statistic from column sums of :func:`_unit_stats` (batched over leading axes)."""
    coincidence = sums[..., : k * k].reshape(*sums.shape[:-1], k, k)
    proportions = sums[..., k * k: k * k + k]
    agree, unanimous, pairable, rated = (sums[..., k * k + k + j] for j in range(4))
    out: dict[str, np.ndarray] = {}
    with np.errstate(divide="ignore", invalid="ignore"):
        out["unanimous_agreement"] = unanimous / pairable
        out["pairwise_agreement"] = agree / pairable
        n_c = coincidence.sum(axis=-1)
        n = n_c.sum(axis=-1)
        for metric in ALPHA_METRICS:
            delta = _delta(metric, n_c)
            observed = (coincidence * delta).sum(axis=(-2, -1))
            expected = (n_c[..., :, None] * n_c[..., None, :] * delta).sum(axis=(-2, -1))
            out[f"krippendorff_alpha_{metric}"] = np.where(expected > 0, 1.0 - (n - 1.0) * observed / expected,
                                                           np.nan)
        p_a = agree / pairable
        pi = proportions / rated[..., None]
        p_e_fleiss = (pi ** 2).sum(axis=-1)
        p_e_gwet = (pi * (1.0 - pi)).sum(axis=-1) / (k - 1)
        out["fleiss_kappa"] = np.where(p_e_fleiss < 1, (p_a - p_e_fleiss) / (1.0 - p_e_fleiss), np.nan)
        out["gwet_ac1"] = np.where(p_e_gwet < 1, (p_a - p_e_gwet) / (1.0 - p_e_gwet), np.nan)
    return out


# ====================================================================================== public coefficient functions
def unanimous_agreement(counts: np.ndarray) -> float:
    """Share of units with >= 2 values whose values are all equal (``counts``: (units, levels) counts).

    >>> unanimous_agreement([[2, 0], [1, 1], [1, 0]])
    0.5
    """
    counts = _as_counts(counts)
    return float(_from_sums(_unit_stats(counts).sum(axis=0), counts.shape[1])["unanimous_agreement"])


def pairwise_agreement(counts: np.ndarray) -> float:
    """Mean over units with >= 2 values of the share of agreeing value pairs, Σ_c n_c(n_c−1) / (m(m−1)).

    >>> pairwise_agreement([[2, 1], [3, 0]])   # (2/6 + 6/6) / 2
    0.6666666666666666
    """
    counts = _as_counts(counts)
    return float(_from_sums(_unit_stats(counts).sum(axis=0), counts.shape[1])["pairwise_agreement"])


def krippendorff_alpha(counts: np.ndarray, metric: Metric | str = "nominal") -> float:
    """Krippendorff's alpha from (units, values) counts, coincidence-matrix form.

    Krippendorff, K. (2011). *Computing Krippendorff's Alpha-Reliability*. Annenberg School for Communication,
    University of Pennsylvania, §C–E: coincidences ``o_ck = Σ_u (n_uc n_uk − [c=k] n_uc) / (m_u − 1)`` over
    pairable units (m_u >= 2), ``α = 1 − (n − 1) Σ o_ck δ²_ck / Σ n_c n_k δ²_ck``. Metrics: ``nominal``
    (δ² = [c≠k]), ``ordinal`` (δ² = (Σ_{g=c..k} n_g − (n_c + n_k)/2)²), ``interval`` (δ² = (c − k)², the
    level codes 0..K−1 as values). NaN when there is no variation at all.

    Krippendorff's own example (4 observers, 12 units, values 1..5; α = 0.743 nominal):

    >>> data = [[1, 1, None, 1], [2, 2, 3, 2], [3, 3, 3, 3], [3, 3, 3, 3], [2, 2, 2, 2], [1, 2, 3, 4],
    ...         [4, 4, 4, 4], [1, 1, 2, 1], [2, 2, 2, 2], [None, 5, 5, 5], [None, None, 1, 1], [None, None, 3, None]]
    >>> counts = [[sum(v == level for v in unit) for level in range(1, 6)] for unit in data]
    >>> [round(krippendorff_alpha(counts, m), 3) for m in ("nominal", "ordinal", "interval")]
    [0.743, 0.815, 0.849]
    """
    counts = _as_counts(counts)
    if metric not in ALPHA_METRICS:
        raise ValueError(f"unknown metric {metric!r}; allowed: {', '.join(ALPHA_METRICS)}")
    return float(_from_sums(_unit_stats(counts).sum(axis=0), counts.shape[1])[f"krippendorff_alpha_{metric}"])


def fleiss_kappa(counts: np.ndarray) -> float:
    """Fleiss' kappa from (units, levels) counts; with varying numbers of values per unit, Gwet's generalisation.

    Fleiss, J. L. (1971). Measuring nominal scale agreement among many raters. *Psychological Bulletin* 76(5),
    378–382: ``κ = (P̄ − P̄_e) / (1 − P̄_e)``. When units have different numbers of values (raters per item vary),
    Fleiss' formula does not apply as is; we use the generalisation of Gwet, K. L. (2014), *Handbook of
    Inter-Rater Reliability*, 4th ed., ch. 2 (as in his irrCAC package): P̄ = mean over units with >= 2 values
    of Σ_c n_c(n_c − 1) / (m(m − 1)), π_c = mean over units with >= 1 value of n_c / m, P̄_e = Σ_c π_c². It
    equals Fleiss (1971) when every unit has the same number of values.

    >>> round(fleiss_kappa([[3, 0], [0, 3], [2, 1], [1, 2]]), 4)
    0.3333
    """
    counts = _as_counts(counts)
    return float(_from_sums(_unit_stats(counts).sum(axis=0), counts.shape[1])["fleiss_kappa"])


def gwet_ac1(counts: np.ndarray) -> float:
    """Gwet's AC1 from (units, levels) counts, any number of raters per unit.

    Gwet, K. L. (2008). Computing inter-rater reliability and its variance in the presence of high agreement.
    *British Journal of Mathematical and Statistical Psychology* 61, 29–48: ``AC1 = (p_a − p_e) / (1 − p_e)``
    with ``p_e = Σ_c π_c (1 − π_c) / (K − 1)``; p_a and π_c as in :func:`fleiss_kappa` (Gwet 2014, ch. 2, for
    missing values). K is the number of levels of the scale (columns of ``counts``), observed or not.

    >>> round(gwet_ac1([[3, 0], [0, 3], [2, 1], [1, 2]]), 4)
    0.3333
    """
    counts = _as_counts(counts)
    return float(_from_sums(_unit_stats(counts).sum(axis=0), counts.shape[1])["gwet_ac1"])


def _disagreement_weights(k: int, weights: str) -> np.ndarray:
    c = np.arange(k, dtype=float)
    if weights == "none":
        return 1.0 - np.eye(k)
    if weights == "linear":
        return np.abs(c[:, None] - c[None, :]) / (k - 1)
    if weights == "quadratic":
        return (c[:, None] - c[None, :]) ** 2 / (k - 1) ** 2
    raise ValueError(f"unknown weights {weights!r}; allowed: {', '.join(COHEN_WEIGHTS)}")


def cohen_kappa(table: np.ndarray, weights: str = "none") -> np.ndarray | float:
    """Cohen's kappa of a K × K contingency table (rows: rater a's level, columns: rater b's), or a stack (…, K, K).

    Cohen, J. (1960). A coefficient of agreement for nominal scales. *Educational and Psychological Measurement*
    20, 37–46; weighted: Cohen, J. (1968). Weighted kappa. *Psychological Bulletin* 70(4), 213–220:
    ``κ_w = 1 − Σ w_ck o_ck / Σ w_ck e_ck`` with disagreement weights ``w = [c≠k]`` (``"none"``),
    ``|c−k|/(K−1)`` (``"linear"``) or ``(c−k)²/(K−1)²`` (``"quadratic"``). NaN when chance disagreement is 0.

    >>> cohen_kappa([[20, 5], [10, 15]])
    0.4
    """
    table = np.asarray(table, dtype=np.float64)
    k = table.shape[-1]
    w = _disagreement_weights(k, weights)
    total = table.sum(axis=(-2, -1))
    expected = table.sum(axis=-1)[..., :, None] * table.sum(axis=-2)[..., None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = expected / total[..., None, None]
        observed_w = (w * table).sum(axis=(-2, -1))
        expected_w = (w * expected).sum(axis=(-2, -1))
        kappa = np.where(expected_w > 0, 1.0 - observed_w / expected_w, np.nan)
    return float(kappa) if kappa.ndim == 0 else kappa


# ====================================================================================== rater pairs
@dataclass(frozen=True)
class _Pairs:
    rater_a: np.ndarray          # (P,) rater codes, a < b
    rater_b: np.ndarray
    tables: np.ndarray           # (P, K, K) contingency tables
    design: sp.csr_matrix        # (N, P·K²): per response, its contribution to every pair's table
    n_candidate: int             # rater pairs sharing >= 1 response
    dropped_repeats: int         # repeated (response, rater) judgments left out (first kept)


def _rater_pairs(table: AnnotationTable, min_shared: int) -> _Pairs:
    """Every pair of raters that judged the same response, with their K × K tables; vectorised self-join."""
    k, n_raters = table.n_levels, table.n_raters
    key = table.response.astype(np.int64) * n_raters + table.rater
    _, first = np.unique(key, return_index=True)           # one judgment per (response, rater): the first
    dropped = int(table.n_judgments - first.size)
    response, rater, label = table.response[first], table.rater[first], table.label[first].astype(np.int64)
    order = np.argsort(response, kind="stable")               # already sorted by key; keep explicit
    response, rater, label = response[order], rater[order], label[order]
    size = np.bincount(response, minlength=table.n_responses)
    start = np.concatenate([[0], np.cumsum(size)[:-1]])
    position = np.arange(response.size) - start[response]
    partners = size[response] - position - 1                  # judgments after this one in the same response
    left = np.repeat(np.arange(response.size), partners)
    offset = np.arange(left.size) - np.repeat(np.cumsum(partners) - partners, partners)
    right = left + 1 + offset
    ra, rb, la, lb = rater[left], rater[right], label[left], label[right]
    swap = ra > rb
    ra, rb = np.where(swap, rb, ra), np.where(swap, ra, rb)
    la, lb = np.where(swap, lb, la), np.where(swap, la, lb)
    pair_key = ra.astype(np.int64) * n_raters + rb
    keys, pair_index, shared = np.unique(pair_key, return_inverse=True, return_counts=True)
    chosen = shared >= min_shared
    new_index = np.cumsum(chosen) - 1
    keep = chosen[pair_index]
    p = int(chosen.sum())
    cell = new_index[pair_index[keep]] * (k * k) + la[keep] * k + lb[keep]
    tables = np.bincount(cell, minlength=p * k * k).reshape(p, k, k).astype(np.float64)
    design = sp.csr_matrix((np.ones(cell.size), (response[left[keep]], cell)),
                           shape=(table.n_responses, p * k * k))
    design.sum_duplicates()
    return _Pairs(rater_a=(keys[chosen] // n_raters).astype(np.int64),
                  rater_b=(keys[chosen] % n_raters).astype(np.int64), tables=tables, design=design,
                  n_candidate=int(keys.size), dropped_repeats=dropped)


# ====================================================================================== the bootstrap
def _draw_counts(rng: np.random.Generator, rows: int, n: int) -> np.ndarray:
    """(rows, n) multiplicities of n units drawn with replacement, one bincount for the whole chunk."""
    idx = rng.integers(0, n, size=(rows, n)) + (np.arange(rows) * n)[:, None]
    return np.bincount(idx.ravel(), minlength=rows * n).reshape(rows, n).astype(np.float64)


def _content_positions(units: np.ndarray, tiebreak: np.ndarray | None = None) -> np.ndarray:
    """Each response's place in the order of its per-response statistics, then ``tiebreak`` (then table order):
    the draws are made over that order, so they depend neither on row order nor on the names of items and agents.

    >>> _content_positions(np.array([[2.0, 0.0], [1.0, 1.0], [1.0, 0.0]])).tolist()
    [2, 1, 0]
    """
    keys = [np.round(units[:, j], 12) for j in reversed(range(units.shape[1]))]
    order = np.lexsort(tuple([np.round(tiebreak, 12)] if tiebreak is not None else []) + tuple(keys))
    position = np.empty_like(order)
    position[order] = np.arange(order.size)
    return position


def _fingerprints(table: AnnotationTable, units: np.ndarray, rounds: int = 3) -> np.ndarray:
    """(N,) rank of each response by a fingerprint of who rated it how that uses no name: its per-response
    statistics, refined ``rounds`` times by its raters' fingerprints (each the multiset of (response fingerprint,
    level) the rater gave), as in colour refinement (Weisfeiler–Lehman). It breaks ties between responses with the
    same statistics the same way whatever the items, agents and raters are called, so the bootstrap draws, and
    each rater pair's interval, do not move when they are renamed.

    >>> from stableval.data import annotations_from_frame
    >>> frame = pd.DataFrame({"item": list("aabbcc"), "agent": "A", "rater": list("xyxzyz"),
    ...                       "label": [1, 1, 1, 1, 0, 1]})     # a and b: the same counts, other raters
    >>> table = annotations_from_frame(frame)
    >>> renamed = annotations_from_frame(frame.assign(rater=frame["rater"].map({"x": "z", "y": "x", "z": "y"})))
    >>> units = _unit_stats(table.vote_counts())
    >>> _fingerprints(table, units).tolist(), _fingerprints(renamed, units).tolist()
    ([1, 2, 0], [1, 2, 0])
    """
    keys = np.round(units, 12)
    order = np.lexsort(keys.T[::-1])
    fresh = np.concatenate([[True], (keys[order][1:] != keys[order][:-1]).any(axis=1)])
    colour = np.empty(units.shape[0], dtype=np.uint64)
    colour[order] = np.cumsum(fresh) - 1                  # equal statistics, equal colour
    label, k = table.label.astype(np.uint64), np.uint64(table.n_levels)
    by_rater, by_response = _Groups(table.rater, table.n_raters), _Groups(table.response, table.n_responses)
    for _ in range(rounds):
        rater_colour = _mix(by_rater.sums(_mix(colour[table.response] * k + label)))
        colour = _mix(colour ^ _mix(by_response.sums(_mix(rater_colour[table.rater] * k + label))))
    return np.unique(colour, return_inverse=True)[1].reshape(-1).astype(np.int64)


def _mix(values: np.ndarray) -> np.ndarray:
    """splitmix64 of each value (uint64): well-spread keys whose wrapping sums identify a multiset, in any order."""
    z = values + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


class _Groups:
    """Values summed per group code (``codes`` 0..n-1), sorted once for every sum."""

    def __init__(self, codes: np.ndarray, n: int) -> None:
        self.order = np.argsort(codes, kind="stable")
        ordered = codes[self.order]
        self.starts = np.flatnonzero(np.concatenate([[True], ordered[1:] != ordered[:-1]])) if ordered.size else \
            np.zeros(0, dtype=np.int64)
        self.groups = ordered[self.starts]
        self.n = n

    def sums(self, values: np.ndarray) -> np.ndarray:
        """(n,) wrapping uint64 sum of ``values`` per group: exact, whatever the order of the values."""
        out = np.zeros(self.n, dtype=np.uint64)
        if self.starts.size:
            out[self.groups] = np.add.reduceat(values[self.order], self.starts)
        return out


def _chunks(total: int, size: int) -> Iterator[int]:
    done = 0
    while done < total:
        rows = min(size, total - done)
        yield rows
        done += rows


# ====================================================================================== the result
#: how each statistic is named in tables
STATISTIC_LABELS: dict[str, str] = {
    "unanimous_agreement": "Unanimous agreement",
    "pairwise_agreement": "Pairwise agreement",
    "krippendorff_alpha_nominal": "Krippendorff's alpha (nominal)",
    "krippendorff_alpha_ordinal": "Krippendorff's alpha (ordinal)",
    "krippendorff_alpha_interval": "Krippendorff's alpha (interval)",
    "fleiss_kappa": "Fleiss' kappa",
    "gwet_ac1": "Gwet's AC1",
    "cohen_kappa_mean": "Cohen's kappa, mean over rater pairs",
}


def _number(value: float, digits: int = 3) -> str:
    return "—" if value != value else f"{value:.{digits}f}"


@dataclass(frozen=True)
class AgreementResult(Displayed):
    """What :func:`agreement` returns.

    Attributes:
        dataset: counts (judgments, responses, items, agents, raters, mean judgments per response, responses
            with >= 2 judgments, min/max judgments per response, ...).
        statistics: one row per statistic (:data:`STATISTICS` order): ``statistic, value, ci_low, ci_high,
            units`` (responses, or rater pairs for ``cohen_kappa_mean``) and ``note``.
        pairs: one row per rater pair with >= ``min_shared`` shared responses: ``rater_a, rater_b, shared,
            agreement`` (observed share of equal labels), ``kappa, kappa_linear, kappa_quadratic``, and
            ``ci_low, ci_high`` for the kappa of the chosen weights.
        settings: bootstrap, seed, confidence, min_shared, cohen_weights.
        notes: what the user should know (responses left out, varying raters per response, ...).
    """

    dataset: dict[str, Any]
    statistics: pd.DataFrame
    pairs: pd.DataFrame
    settings: dict[str, Any]
    notes: tuple[str, ...] = field(default=())

    def to_frame(self) -> pd.DataFrame:
        """The statistics: one row per statistic."""
        return self.statistics

    def render(self, console: Console, pairs: int = 10) -> None:
        """The statistics with their intervals, then Cohen's kappa of the ``pairs`` rater pairs sharing most."""
        from rich import box
        from rich.table import Table

        from stableval.markup import literal

        data = self.dataset
        console.print(
            f"[bold]{literal(data['source'])}[/]: {plural(data['judgments'], 'judgment')} of "
            f"{plural(data['responses'], 'response')} ({plural(data['items'], 'item')} × "
            f"{plural(data['agents'], 'agent')}) by {plural(data['raters'], 'rater')}; "
            f"{data['mean_judgments_per_response']:.2f} judgments per response "
            f"({data['min_judgments_per_response']}–{data['max_judgments_per_response']}); "
            f"{data['responses_with_2_or_more']:,} responses with 2 or more; levels {' < '.join(data['levels'])}"
        )
        settings = self.settings
        ci = f"{round(settings['confidence'] * 100)}% CI" if settings["bootstrap"] else "CI"
        stats = Table(box=box.SIMPLE_HEAVY, title="Agreement", title_justify="left", show_edge=False)
        for name in ("Statistic", "Value", ci, "Units", "Note"):
            stats.add_column(name, justify="left" if name in ("Statistic", "Note") else "right")
        row: Any  # a row of the statistics or pairs frame (itertuples)
        for row in self.statistics.itertuples(index=False):
            interval = "" if row.ci_low != row.ci_low else f"[{row.ci_low:.3f}, {row.ci_high:.3f}]"
            unit = "pairs" if row.statistic == "cohen_kappa_mean" else "responses"
            stats.add_row(STATISTIC_LABELS.get(str(row.statistic), str(row.statistic)), _number(float(row.value)),
                          interval, f"{row.units:,} {unit}", str(row.note))
        console.print(stats)
        if pairs and len(self.pairs):
            shown = self.pairs.head(pairs)
            table = Table(box=box.SIMPLE_HEAVY, show_edge=False, title_justify="left",
                          title=f"Cohen's kappa per rater pair ({len(shown)} of {len(self.pairs):,}, most shared "
                                "responses first)")
            for name in ("Rater A", "Rater B", "Shared", "Agreement", "kappa", "linear", "quadratic",
                         f"{ci} ({settings['cohen_weights']})"):
                table.add_column(name, justify="left" if name.startswith("Rater") else "right")
            for row in shown.itertuples(index=False):
                interval = "" if row.ci_low != row.ci_low else f"[{row.ci_low:.3f}, {row.ci_high:.3f}]"
                table.add_row(literal(row.rater_a), literal(row.rater_b), f"{row.shared:,}", _number(row.agreement),
                              _number(row.kappa), _number(row.kappa_linear), _number(row.kappa_quadratic), interval)
            console.print(table)
        if settings["bootstrap"]:
            console.print(f"Percentile bootstrap over responses (B={settings['bootstrap']:,}, seed "
                          f"{settings['seed']}).")
        for note in self.notes:
            console.print(f"note: {literal(note)}")

    def value(self, statistic: str) -> float:
        """The point estimate of one statistic, e.g. ``result.value("fleiss_kappa")``."""
        rows = self.statistics.loc[self.statistics["statistic"] == statistic, "value"]
        if rows.empty:
            raise KeyError(f"no statistic {statistic!r}; allowed: {', '.join(self.statistics['statistic'])}")
        return float(rows.iloc[0])

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: NaN becomes None."""
        return {"dataset": self.dataset, "settings": self.settings, "statistics": records(self.statistics),
                "pairs": records(self.pairs), "notes": list(self.notes)}


def agreement(
    table: AnnotationTable,
    *,
    bootstrap: int = 1000,
    seed: int | None = 0,
    confidence: float = 0.95,
    min_shared: int = 20,
    cohen_weights: str = "quadratic",
    progress: bool = False,
) -> AgreementResult:
    """Agreement between the judgments of each response: raw agreement, α, Fleiss' κ, AC1, Cohen's κ per pair.

    Args:
        table: the annotation table; the unit is the response (item, agent).
        bootstrap: percentile-bootstrap replicates over responses (0 = no intervals); seeded by ``seed``.
        confidence: level of the intervals.
        min_shared: Cohen's kappa only for rater pairs that judged at least this many responses in common.
        cohen_weights: ``"none"``, ``"linear"`` or ``"quadratic"`` (default: the levels are ordered):
            the kappa whose mean over pairs is reported and bootstrapped. All three are in ``pairs``.
        progress: show a progress bar (CLI).

    Repeated judgments by the same rater of the same response (``duplicates="keep"``) all count as values for
    the pooled statistics; Cohen's kappa uses that rater's first one (the number left out is in ``notes``).

    >>> from stableval.data import read_any, example_path
    >>> result = agreement(read_any(example_path(), duplicates="keep"), bootstrap=0)
    >>> round(result.value("krippendorff_alpha_ordinal"), 3), round(result.value("pairwise_agreement"), 3)
    (0.322, 0.525)
    """
    if bootstrap < 0:
        raise ValueError("bootstrap must be >= 0")
    if not 0 < confidence < 1:
        raise ValueError("confidence must be between 0 and 1")
    if min_shared < 1:
        raise ValueError("min_shared must be >= 1")
    if cohen_weights not in COHEN_WEIGHTS:
        raise ValueError(f"unknown cohen_weights {cohen_weights!r}; allowed: {', '.join(COHEN_WEIGHTS)}")
    k = table.n_levels
    counts = table.vote_counts()
    per_response = counts.sum(axis=1)
    units = _unit_stats(counts)
    point = _from_sums(units.sum(axis=0), k)
    pairs = _rater_pairs(table, min_shared)
    kappas = {w: np.asarray(cohen_kappa(pairs.tables, w)).reshape(-1) for w in COHEN_WEIGHTS}
    chosen = kappas[cohen_weights]
    with np.errstate(invalid="ignore"):
        point["cohen_kappa_mean"] = np.asarray(np.nanmean(chosen) if np.isfinite(chosen).any() else np.nan)
    intervals = _Intervals.empty(chosen.size)
    if bootstrap and table.n_responses:
        replicates, pair_reps = _bootstrap(table, units, pairs, bootstrap=bootstrap, seed=seed,
                                           cohen_weights=cohen_weights, progress=progress)
        intervals = _intervals(replicates, pair_reps, chosen.size, confidence)
    notes = [*table.notes, *intervals.notes, *_notes(per_response, pairs, chosen.size, min_shared)]
    summary = table.summary()
    dataset = {**{key: summary[key] for key in ("source", "judgments", "responses", "items", "agents", "raters",
                                                "levels", "mean_judgments_per_response")},
               "responses_with_2_or_more": int((per_response >= 2).sum()),
               "min_judgments_per_response": int(per_response.min()) if per_response.size else 0,
               "max_judgments_per_response": int(per_response.max()) if per_response.size else 0}
    settings = {"bootstrap": bootstrap, "seed": seed, "confidence": confidence, "min_shared": min_shared,
                "cohen_weights": cohen_weights}
    return AgreementResult(dataset=dataset, statistics=_statistics_frame(point, intervals, per_response, chosen,
                                                                         cohen_weights),
                           pairs=_pairs_frame(table, pairs, kappas, intervals), settings=settings,
                           notes=tuple(notes))


# ====================================================================================== the steps of agreement()
@dataclass(frozen=True)
class _Intervals:
    """Percentile-bootstrap intervals of every statistic and of each rater pair's kappa."""

    low: dict[str, float]
    high: dict[str, float]
    pair_low: np.ndarray
    pair_high: np.ndarray
    notes: tuple[str, ...] = ()

    @classmethod
    def empty(cls, n_pairs: int) -> _Intervals:
        """No bootstrap: every bound NaN."""
        return cls(low={name: np.nan for name in STATISTICS}, high={name: np.nan for name in STATISTICS},
                   pair_low=np.full(n_pairs, np.nan), pair_high=np.full(n_pairs, np.nan))


def _bootstrap(table: AnnotationTable, units: np.ndarray, pairs: _Pairs, *, bootstrap: int, seed: int | None,
               cohen_weights: str, progress: bool) -> tuple[dict[str, np.ndarray], np.ndarray | None]:
    """Every statistic over ``bootstrap`` resamples of the responses, and each pair's kappa when that fits in
    memory (else None); chunk by chunk, each chunk one multinomial draw-count matrix times ``units``."""
    k = table.n_levels
    n_pairs = pairs.tables.shape[0]
    rng = np.random.default_rng(seed)
    replicates = {name: np.empty(bootstrap) for name in STATISTICS}
    pair_reps = np.empty((bootstrap, n_pairs)) if n_pairs * bootstrap <= 20_000_000 else None
    chunk = max(1, min(bootstrap, 4_000_000 // max(table.n_responses, 1)))
    position = _content_positions(units, _fingerprints(table, units).astype(np.float64))
    done = 0
    with progress_bar("bootstrap", total=bootstrap, enabled=progress) as bar:
        for rows in _chunks(bootstrap, chunk):
            draws = _draw_counts(rng, rows, table.n_responses)[:, position]
            stats = _from_sums(draws @ units, k)
            pair_tables = np.asarray(pairs.design.T @ draws.T).T.reshape(rows, -1, k, k)
            rep_kappa = np.asarray(cohen_kappa(pair_tables, cohen_weights)).reshape(rows, -1)
            with np.errstate(invalid="ignore"), _quiet_nanmean():
                stats["cohen_kappa_mean"] = np.nanmean(rep_kappa, axis=1) if rep_kappa.shape[1] else \
                    np.full(rows, np.nan)
            for name in STATISTICS:
                replicates[name][done:done + rows] = stats[name]
            if pair_reps is not None:
                pair_reps[done:done + rows] = rep_kappa
            done += rows
            bar.advance(rows)
    return replicates, pair_reps


def _intervals(replicates: dict[str, np.ndarray], pair_reps: np.ndarray | None, n_pairs: int,
               confidence: float) -> _Intervals:
    """Percentile intervals (over the finite replicates) of the statistics and of the per-pair kappas."""
    bounds = {name: percentile_interval(replicates[name], confidence) for name in STATISTICS}
    pair_low, pair_high = np.full(n_pairs, np.nan), np.full(n_pairs, np.nan)
    notes: tuple[str, ...] = ()
    if pair_reps is not None and n_pairs:
        pair_low, pair_high = percentile_interval(pair_reps, confidence)
    elif n_pairs:
        notes = (f"too many rater pairs ({n_pairs:,}) for per-pair bootstrap intervals; only the mean over pairs "
                 "has one",)
    return _Intervals(low={name: float(bounds[name][0]) for name in STATISTICS},
                      high={name: float(bounds[name][1]) for name in STATISTICS},
                      pair_low=np.asarray(pair_low, dtype=float), pair_high=np.asarray(pair_high, dtype=float),
                      notes=notes)


def _varying(per_response: np.ndarray) -> bool:
    return bool(per_response.size > 0 and per_response.min() != per_response.max())


def _notes(per_response: np.ndarray, pairs: _Pairs, n_pairs: int, min_shared: int) -> list[str]:
    """What the user should know: single-judgment responses, varying raters, repeats, pairs kept."""
    notes = []
    single = int(((per_response == 1)).sum())
    if single:
        notes.append(f"{single:,} response(s) with a single judgment have no pair to compare: left out of "
                     "every agreement statistic (they still count in Fleiss' and Gwet's chance-agreement "
                     "level shares)")
    if _varying(per_response):
        notes.append(f"judgments per response vary ({int(per_response.min())}–{int(per_response.max())}): "
                     "Fleiss' kappa uses Gwet's (2014) generalisation for varying raters per unit (equal to "
                     "Fleiss 1971 when every response has the same number)")
    if pairs.dropped_repeats:
        notes.append(f"Cohen's kappa: {pairs.dropped_repeats:,} repeated judgment(s) of a response by the same "
                     "rater left out (the first one is used)")
    notes.append(f"Cohen's kappa: {n_pairs:,} of {pairs.n_candidate:,} rater pairs share >= {min_shared} "
                 f"responses" + ("" if n_pairs else " (lower --min-shared to see pairs)"))
    return notes


def _statistics_frame(point: dict[str, np.ndarray], intervals: _Intervals, per_response: np.ndarray,
                      chosen: np.ndarray, cohen_weights: str) -> pd.DataFrame:
    """One row per statistic (:data:`STATISTICS` order) with its interval, units and a note."""
    unit_counts = {name: int((per_response >= 2).sum()) for name in STATISTICS}
    unit_counts["cohen_kappa_mean"] = int(np.isfinite(chosen).sum())
    stat_notes = {name: "" for name in STATISTICS}
    stat_notes["fleiss_kappa"] = "Gwet (2014) generalisation: raters per response vary" \
        if _varying(per_response) else "Fleiss (1971)"
    stat_notes["cohen_kappa_mean"] = f"mean over rater pairs, {cohen_weights} weights"
    stat_notes["krippendorff_alpha_interval"] = "level codes 0..K-1 as interval values"
    return pd.DataFrame({
        "statistic": list(STATISTICS),
        "value": [float(point[name]) for name in STATISTICS],
        "ci_low": [float(intervals.low[name]) for name in STATISTICS],
        "ci_high": [float(intervals.high[name]) for name in STATISTICS],
        "units": [unit_counts[name] for name in STATISTICS],
        "note": [stat_notes[name] for name in STATISTICS],
    })


def _pairs_frame(table: AnnotationTable, pairs: _Pairs, kappas: dict[str, np.ndarray],
                 intervals: _Intervals) -> pd.DataFrame:
    """One row per rater pair (most shared responses first) with its agreement and kappas."""
    tables = pairs.tables
    agree = np.trace(tables, axis1=1, axis2=2) / np.maximum(tables.sum(axis=(1, 2)), 1.0)
    return pd.DataFrame({
        "rater_a": table.raters.to_numpy()[pairs.rater_a] if pairs.rater_a.size else np.array([], dtype=object),
        "rater_b": table.raters.to_numpy()[pairs.rater_b] if pairs.rater_b.size else np.array([], dtype=object),
        "shared": tables.sum(axis=(1, 2)).astype(np.int64),
        "agreement": agree,
        "kappa": kappas["none"],
        "kappa_linear": kappas["linear"],
        "kappa_quadratic": kappas["quadratic"],
        "ci_low": intervals.pair_low,
        "ci_high": intervals.pair_high,
    }).sort_values(["shared", "rater_a", "rater_b"], ascending=[False, True, True], ignore_index=True)


@contextmanager
def _quiet_nanmean() -> Iterator[None]:
    """Silence numpy's 'Mean of empty slice' / 'All-NaN slice' RuntimeWarnings (pytest turns them into errors)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield
