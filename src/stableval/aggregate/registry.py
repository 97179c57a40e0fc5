"""The method registry: every aggregation method, declared once next to its estimator, listed here once.

``score``, ``stability``, ``diagnose``, ``report``, ``ablate``, the portal's results page and the CLI's
``--method`` / ``--param`` options all read this list; none of them names a method in its code. To add a method,
write its module (the estimator and its ``METHOD = Method(...)``) and add one line below (see CONTRIBUTING.md).

>>> method_names()
('mv', 'ds', 'stableval', 'glad', 'mace', 'ordinal', 'onecoin', 'wawa', 'zbs')
>>> get_method("stableval").label, get_method("DS").credit
('STABLEVAL', 'hard')
>>> from stableval.aggregate import Stableval
>>> [m.key for m in resolve_methods(["mv", Stableval(alpha_pi=2.0), Stableval()])]
['mv', 'stableval', 'stableval-2']
>>> get_method("nope")
Traceback (most recent call last):
...
ValueError: unknown method 'nope'; allowed: mv, ds, stableval, glad, mace, ordinal, onecoin, wawa, zbs
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from stableval.aggregate._base import Aggregator, clone
from stableval.aggregate.method import Method

__all__ = [
    "METHOD_MODULES",
    "REGISTRY",
    "Chosen",
    "Method",
    "common_parameters",
    "convergence_warnings",
    "default_methods",
    "distributed_methods",
    "get_method",
    "headline_rater_model",
    "method_entry",
    "method_label",
    "method_names",
    "method_of",
    "parse_param_value",
    "primary_method",
    "resolve_methods",
    "shared_params",
]

#: the modules of ``stableval.aggregate`` that declare a method (``METHOD = Method(...)``), in the order tables and
#: plots show them: adding a method is its module and one line here
METHOD_MODULES: tuple[str, ...] = (
    "majority_vote",
    "dawid_skene",
    "stableval",
    "glad",
    "mace",
    "ordinal",
    "one_coin",
    "wawa",
    "zero_based_skill",
)

#: name → method
REGISTRY: dict[str, Method] = {
    method.name: method
    for method in (importlib.import_module(f"stableval.aggregate.{module}").METHOD for module in METHOD_MODULES)
}


def method_names() -> tuple[str, ...]:
    """Every registered method's name, in registry order."""
    return tuple(REGISTRY)


def distributed_methods() -> tuple[str, ...]:
    """The methods that run on a table partitioned over a Dask cluster (``distributed=True``)."""
    return tuple(name for name, method in REGISTRY.items() if method.distributed)


def default_methods() -> tuple[str, ...]:
    """The methods an analysis runs when none is named."""
    return tuple(name for name, method in REGISTRY.items() if method.default)


def get_method(name: str) -> Method:
    """The registered method called ``name`` (case and surrounding blanks ignored)."""
    key = str(name).strip().lower()
    if key not in REGISTRY:
        raise ValueError(f"unknown method {name!r}; allowed: {', '.join(REGISTRY)}")
    return REGISTRY[key]


def method_of(estimator: Aggregator) -> Method:
    """The registry entry of an estimator's class; an unregistered aggregator gets a plain entry (soft credit,
    fitted one problem at a time, no rater model)."""
    for method in REGISTRY.values():
        if type(estimator) is method.estimator:
            return method
    name = type(estimator).__name__
    return Method(name=name.lower(), label=name, title=name, colour="#2ca02c", estimator=type(estimator))


@dataclass(frozen=True)
class Chosen:
    """One method of an analysis: its unique ``key`` in the results, its registry entry and an unfitted estimator."""

    key: str
    method: Method
    estimator: Aggregator

    @property
    def label(self) -> str:
        return method_label(self.key)

    def build(self) -> Aggregator:
        """A fresh unfitted copy of the estimator (for refits)."""
        return clone(self.estimator)

    def fit(self, table: Any) -> Aggregator:
        """A fresh copy of the estimator fitted on a table of either kind, in memory or on its Dask cluster
        (:meth:`Method.fit <stableval.aggregate.method.Method.fit>`)."""
        return self.method.fit(table, self.build())


def resolve_methods(methods: Iterable[str | Aggregator | Chosen] | str | Aggregator | None = None,
                    params: Mapping[str, Mapping[str, Any]] | None = None) -> list[Chosen]:
    """Names or estimator instances → the analysis' methods, in the given order.

    A name builds the registered estimator with ``params[name]`` (hyper-parameters by name, validated); an
    instance is used as it is (cloned for every fit); an already resolved :class:`Chosen` is kept. Repeated names
    are kept once; two instances of the same method get keys ``name``, ``name-2``, ... ``None`` = the default
    methods.
    """
    entries: list[str | Aggregator | Chosen]
    if methods is None:
        entries = list(default_methods())
    elif isinstance(methods, str | Aggregator):
        entries = [methods]
    else:
        entries = list(methods)
    params = params or {}
    unknown = sorted(set(params) - set(REGISTRY))
    if unknown:
        raise ValueError(f"parameters for unknown method {unknown[0]!r}; methods: {', '.join(REGISTRY)}")
    chosen: list[Chosen] = []
    for entry in entries:
        if isinstance(entry, Chosen):
            if any(c.key == entry.key for c in chosen):
                raise ValueError(f"method {entry.key!r} given twice")
            chosen.append(entry)
            continue
        if isinstance(entry, Aggregator):
            method = method_of(entry)
            estimator = clone(entry)
        else:
            method = get_method(entry)
            if any(c.key == method.name for c in chosen):
                continue
            estimator = method.build(**dict(params.get(method.name, {})))
        key = method.name
        taken = {c.key for c in chosen}
        number = 1
        while key in taken:
            number += 1
            key = f"{method.name}-{number}"
        chosen.append(Chosen(key=key, method=method, estimator=estimator))
    if not chosen:
        raise ValueError(f"no method given; allowed: {', '.join(REGISTRY)}")
    return chosen


def common_parameters(methods: Iterable[str]) -> tuple[str, ...]:
    """Every hyper-parameter name of the named methods (each once, first-seen order)."""
    names: dict[str, None] = {}
    for name in methods:
        names.update(dict.fromkeys(get_method(name).estimator.parameter_names()))
    return tuple(names)


def shared_params(methods: Iterable[str], values: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Give each value to every named method that has a hyper-parameter of that name (``max_iter=100`` reaches
    Dawid–Skene and STABLEVAL); a name none of them has raises, listing the names that exist.

    >>> shared_params(["mv", "ds", "stableval"], {"max_iter": 100, "ties": "lowest"})
    {'mv': {'ties': 'lowest'}, 'ds': {'max_iter': 100}, 'stableval': {'max_iter': 100}}
    """
    methods = list(methods)
    known = common_parameters(methods)
    for name in values:
        if name not in known:
            raise ValueError(f"no method among {', '.join(methods)} has a parameter {name!r}; parameters: "
                             + ", ".join(known))
    out: dict[str, dict[str, Any]] = {}
    for method in methods:
        own = get_method(method).estimator.parameter_names()
        given = {name: value for name, value in values.items() if name in own}
        if given:
            out[get_method(method).name] = given
    return out


def primary_method(keys: Iterable[str]) -> str:
    """The headline method among result keys: the first whose registry entry is ``primary`` (STABLEVAL), else the
    first key.

    >>> primary_method(["mv", "ds", "stableval"]), primary_method(["mv", "ds"])
    ('stableval', 'mv')
    """
    keys = list(keys)
    if not keys:
        raise ValueError("no methods")
    return next((key for key in keys if method_entry(key).primary), keys[0])


def headline_rater_model(chosen: Iterable[Chosen]) -> Aggregator | str:
    """The estimator whose rater model a report shows: the primary method if it has one, else the last chosen method
    with a rater model, else the primary registered method."""
    models = [c for c in chosen if c.method.rater_model]
    primary = [c for c in models if c.method.primary]
    if primary or models:
        return (primary or models)[-1].estimator
    return next(name for name, method in REGISTRY.items() if method.primary)


def method_label(key: str) -> str:
    """The display label of a result key: ``"stableval"`` → ``"STABLEVAL"``, ``"stableval-2"`` →
    ``"STABLEVAL #2"``; anything unregistered is shown as it is."""
    if key in REGISTRY:
        return REGISTRY[key].label
    base, _, number = key.rpartition("-")
    if base in REGISTRY and number.isdigit():
        return f"{REGISTRY[base].label} #{number}"
    return key


def method_entry(key: str) -> Method:
    """The registry entry behind a result key (``"stableval-2"`` → STABLEVAL's); unregistered keys get a plain
    entry."""
    base = key if key in REGISTRY else key.rpartition("-")[0]
    if base in REGISTRY:
        return replace(REGISTRY[base], name=key, label=method_label(key)) if base != key else REGISTRY[base]
    return Method(name=key, label=key, title=key, colour="#2ca02c", estimator=Aggregator)


def convergence_warnings(fits: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """One sentence per iterative fit that stopped at its iteration cap, naming the flags that raise it.

    >>> change = {"extra_iterations": 50, "max_abs_change": 0.0123, "agent": "gpt-4"}
    >>> [warning] = convergence_warnings({"ds": {"converged": False, "n_iter": 3, "score_change": change}, "mv": {}})
    >>> warning.startswith("DS: EM stopped at the cap of 3 iterations") and "--param ds.max_iter=N" in warning
    True
    >>> "50 more iterations move the scores by up to 0.0123 (gpt-4)" in warning
    True
    """
    out = []
    for key, fit in fits.items():
        if fit.get("converged", True):
            continue
        base = key if key in REGISTRY else key.rpartition("-")[0] or key
        change = fit.get("score_change")
        moved = (f" {change['extra_iterations']} more iterations move the scores by up to "
                 f"{change['max_abs_change']:.3g} ({change['agent']})." if change else "")
        out.append(f"{method_label(key)}: EM stopped at the cap of {fit.get('n_iter', '?')} iterations without "
                   f"converging; its estimates may still move.{moved} Raise the cap with --max-iter N (every EM "
                   f"method) or --param {base}.max_iter=N; on small data a stronger prior (STABLEVAL's "
                   "--alpha-pi 2) or fewer levels (recode rarely used ones before scoring) also help the fit settle.")
    return out


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def parse_param_value(method: Method, name: str, text: str) -> Any:
    """A hyper-parameter value given as text (``--param stableval.alpha_pi=2``), typed like its default."""
    defaults = method.estimator.default_params()
    if name not in defaults:
        raise ValueError(f"{method.name} has no parameter {name!r}; its parameters: "
                         + (", ".join(defaults) or "none"))
    default = defaults[name]
    text = text.strip()
    annotation = str(inspect.signature(method.estimator.__init__).parameters[name].annotation)
    if text.lower() in ("none", "null") and (default is None or "None" in annotation):
        return None
    try:
        if isinstance(default, bool):
            if text.lower() in ("true", "yes", "1"):
                return True
            if text.lower() in ("false", "no", "0"):
                return False
            raise ValueError(text)
        if isinstance(default, int) or (default is None and text.lstrip("-").isdigit()):
            return int(text)
        if isinstance(default, float):
            if "str" in annotation and not _is_number(text):  # e.g. alpha_pi: float | str ("auto")
                return text  # the estimator checks which words it takes
            return float(text)
    except ValueError:
        kind = "true/false" if isinstance(default, bool) else type(default).__name__
        raise ValueError(f"{method.name}.{name}={text!r} is not a {kind} (default {default!r})") from None
    return text
