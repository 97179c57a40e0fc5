"""The ranking method registry: every ranking aggregation method, declared once
(:mod:`stableval.aggregate.rankings.methods`), by name — the sibling of :mod:`stableval.aggregate.registry` for
partial rankings.

``stableval ddx --method`` and ``--compare-methods``, the DDx study (:mod:`stableval.studies.ddx`), ``stableval
plot ddx-case --ranking-method``, ``nrp agree --aggregate`` and the docs tables read this list; none of them names
a method in its code (the DDx bootstrap only takes a faster exact path for IRN's own class). To add a method,
write its estimator module in ``stableval/aggregate/rankings/`` and its declaration in
:mod:`stableval.aggregate.rankings.methods`. Reading the registry imports neither numpy nor pandas.

>>> ranking_method_names()
('irn', 'borda', 'pl', 'bayes-pl', 'rater-pl')
>>> default_ranking_method(), get_ranking_method("PL").title
('irn', 'Plackett–Luce, maximum a posteriori (Hunter 2004; Maystre & Grossglauser 2015)')
>>> [key for key, _, _ in resolve_ranking_methods("irn,pl", {"pl": {"prior_shape": 1.5}})]
['irn', 'pl']
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from stableval.aggregate.rankings.method import RankingMethod
from stableval.aggregate.rankings.methods import RANKING_METHODS

if TYPE_CHECKING:  # pragma: no cover
    from stableval.aggregate.rankings.base import RankingAggregator

__all__ = [
    "RANKING_MODULES",
    "RANKING_REGISTRY",
    "default_ranking_method",
    "get_ranking_method",
    "parse_ranking_param",
    "parse_ranking_params",
    "ranking_method_names",
    "ranking_method_table",
    "ranking_parameter_table",
    "resolve_ranking_methods",
]

#: name → method, in the order tables show them (:data:`stableval.aggregate.rankings.methods.RANKING_METHODS`)
RANKING_REGISTRY: dict[str, RankingMethod] = {method.name: method for method in RANKING_METHODS}

#: the modules of ``stableval.aggregate.rankings`` that hold the registered estimators, in registry order
RANKING_MODULES: tuple[str, ...] = tuple(str(method.estimator_at).partition(":")[0].rpartition(".")[2]
                                         for method in RANKING_METHODS)


def ranking_method_names() -> tuple[str, ...]:
    """Every registered ranking method's name, in registry order."""
    return tuple(RANKING_REGISTRY)


def default_ranking_method() -> str:
    """The method ``stableval ddx`` runs when none is named (the one declared ``default=True``)."""
    return next(name for name, method in RANKING_REGISTRY.items() if method.default)


def get_ranking_method(name: str) -> RankingMethod:
    """The registered ranking method called ``name`` (case and surrounding blanks ignored)."""
    key = str(name).strip().lower()
    if key not in RANKING_REGISTRY:
        raise ValueError(f"unknown ranking method {name!r}; allowed: {', '.join(RANKING_REGISTRY)}")
    return RANKING_REGISTRY[key]


def resolve_ranking_methods(names: str | Iterable[str] | None = None,
                            params: Mapping[str, Mapping[str, Any]] | None = None
                            ) -> list[tuple[str, RankingMethod, RankingAggregator]]:
    """Names (a comma-separated text, a list, ``all``, or ``None`` for the default) → ``(name, method, unfitted
    estimator)`` in the given order, each built with ``params[name]`` (validated by its declarations)."""
    if names is None:
        wanted = [default_ranking_method()]
    elif isinstance(names, str):
        wanted = list(RANKING_REGISTRY) if names.strip().lower() == "all" else [
            n for n in (part.strip() for part in names.split(",")) if n]
    else:
        wanted = list(names)
    params = params or {}
    unknown = sorted(set(params) - set(RANKING_REGISTRY))
    if unknown:
        raise ValueError(f"parameters for unknown ranking method {unknown[0]!r}; methods: "
                         f"{', '.join(RANKING_REGISTRY)}")
    out: list[tuple[str, RankingMethod, RankingAggregator]] = []
    for name in wanted:
        method = get_ranking_method(name)
        if any(key == method.name for key, _, _ in out):
            continue
        out.append((method.name, method, method.build(**dict(params.get(method.name, {})))))
    if not out:
        raise ValueError(f"no ranking method given; allowed: {', '.join(RANKING_REGISTRY)}")
    return out


def parse_ranking_param(text: str) -> tuple[str, str, Any]:
    """``METHOD.NAME=VALUE`` → (method, parameter, value read and checked by its declaration).

    >>> parse_ranking_param("pl.prior_shape=2")
    ('pl', 'prior_shape', 2.0)
    >>> parse_ranking_param("pl.prior_shape=0.5")
    Traceback (most recent call last):
    ...
    ValueError: pl.prior_shape=0.5: allowed a number ≥ 1
    """
    target, equals, value = text.partition("=")
    method_name, dot, name = target.strip().partition(".")
    if not equals or not dot:
        raise ValueError(f"{text!r}: expected METHOD.NAME=VALUE, e.g. pl.prior_shape=2")
    method = get_ranking_method(method_name)
    option = method.param(name.strip())
    value = value.strip()
    if value.lower() in ("none", "null") and (option.default is None or option.none_ok):
        return method.name, option.name, None
    try:
        return method.name, option.name, option.from_text(value)
    except ValueError as error:
        raise ValueError(f"{method.name}.{error}") from None


def parse_ranking_params(entries: Iterable[str], chosen: Iterable[str] | None = None) -> dict[str, dict[str, Any]]:
    """Several ``METHOD.NAME=VALUE`` texts → ``{method: {name: value}}`` (:func:`parse_ranking_param` each); with
    ``chosen`` (the methods that will run), a parameter of any other method is refused rather than ignored.

    >>> parse_ranking_params(["pl.prior_shape=3", "pl.solver=ilsr"], chosen=["irn", "pl"])
    {'pl': {'prior_shape': 3.0, 'solver': 'ilsr'}}
    >>> parse_ranking_params(["pl.prior_shape=3"], chosen=["irn"])
    Traceback (most recent call last):
    ...
    ValueError: pl.prior_shape=3 sets a parameter of pl, which is not among the chosen ranking methods (irn)
    """
    running = None if chosen is None else [get_ranking_method(name).name for name in chosen]
    params: dict[str, dict[str, Any]] = {}
    for text in entries:
        method, name, value = parse_ranking_param(text)
        if running is not None and method not in running:
            raise ValueError(f"{text.strip()} sets a parameter of {method}, which is not among the chosen ranking "
                             f"methods ({', '.join(running)})")
        params.setdefault(method, {})[name] = value
    return params


def ranking_method_table() -> str:
    """The table of docs/rankings.md that says what each registered ranking method is (Markdown): label, where its
    uncertainty comes from, whether it models raters, the default.

    >>> print(ranking_method_table().splitlines()[2])
    | `irn` | IRN | `IRN` | rater bootstrap | no | yes |
    """
    rows = ["| method | label | estimator | samples | rater model | default |", "|---|---|---|---|---|---|"]
    for name, method in RANKING_REGISTRY.items():
        samples = "posterior" if method.samples == "posterior" else "rater bootstrap"
        rows.append(f"| `{name}` | {method.label} | `{method.estimator.__name__}` | {samples} | "
                    f"{'yes' if method.rater_model else 'no'} | {'yes' if method.default else 'no'} |")
    return "\n".join(rows)


def ranking_parameter_table() -> str:
    """The hyper-parameter table of docs/rankings.md (Markdown), one row per declared parameter."""
    rows = ["| method | parameter | default | allowed | meaning |", "|---|---|---|---|---|"]
    for name, method in RANKING_REGISTRY.items():
        for option in method.params:
            text = option.help.replace("|", "\\|")
            rows.append(f"| `{name}` | `{option.name}` | `{option.default}` | {option.constraint} | {text} |")
    return "\n".join(rows)
