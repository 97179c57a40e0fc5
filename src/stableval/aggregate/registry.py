"""The method registry: every aggregation method, declared once (:mod:`stableval.aggregate.methods`), by name.

``score``, ``stability``, ``diagnose``, ``report``, ``ablate``, the portal's results page and the CLI's
``--method`` / ``--param`` options all read this list; none of them names a method in its code. To add a method,
write its estimator module and its declaration in :mod:`stableval.aggregate.methods` (see CONTRIBUTING.md).
Reading the registry imports no numerical code (the command line's help and usage errors need none); an
estimator's module is imported when its method is built.

>>> method_names()[:3], default_methods()
(('mv', 'ds', 'stableval'), ('mv', 'ds', 'stableval'))
>>> get_method("stableval").label, get_method("DS").credit
('STABLEVAL', 'hard')
>>> from stableval.aggregate import Stableval
>>> [m.key for m in resolve_methods(["mv", Stableval(alpha_pi=2.0), Stableval()])]
['mv', 'stableval', 'stableval-2']
>>> get_method("nope")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: unknown method 'nope'; allowed: mv, ds, stableval, ...
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from stableval.aggregate.method import Method
from stableval.aggregate.methods import METHODS

if TYPE_CHECKING:  # pragma: no cover
    from stableval.aggregate._base import Aggregator

__all__ = [
    "METHOD_MODULES",
    "REGISTRY",
    "SETTING_SPELLING",
    "Chosen",
    "Method",
    "common_parameters",
    "convergence_warnings",
    "default_methods",
    "distributed_methods",
    "get_method",
    "headline_rater_model",
    "method_base",
    "method_entry",
    "method_label",
    "method_names",
    "method_of",
    "method_table",
    "parameter_table",
    "parse_param_value",
    "primary_method",
    "python_setting",
    "resolve_methods",
    "shared_params",
    "spell_setting",
]

#: name → method, in the order tables and plots show them (:data:`stableval.aggregate.methods.METHODS`)
REGISTRY: dict[str, Method] = {method.name: method for method in METHODS}

#: the modules of ``stableval.aggregate`` that hold the registered estimators, in registry order
METHOD_MODULES: tuple[str, ...] = tuple(str(method.estimator_at).partition(":")[0].rpartition(".")[2]
                                        for method in METHODS)


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
    cls = type(estimator)
    for method in REGISTRY.values():
        if method.implemented_by(cls):
            return method
    name = cls.__name__
    return Method(name=name.lower(), label=name, title=name, colour="#2ca02c", estimator_at=cls)


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
        from stableval.aggregate._base import clone

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
    from stableval.aggregate._base import Aggregator, clone

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
        names.update(dict.fromkeys(get_method(name).parameter_names))
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
        own = get_method(method).parameter_names
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


def method_base(key: str) -> str:
    """The registered method behind a result key (``"stableval-2"`` → ``"stableval"``); other keys as they are.

    >>> method_base("stableval-2"), method_base("ds"), method_base("mine")
    ('stableval', 'ds', 'mine')
    """
    base = key.rpartition("-")[0]
    return base if key not in REGISTRY and base in REGISTRY else key


def method_entry(key: str) -> Method:
    """The registry entry behind a result key (``"stableval-2"`` → STABLEVAL's); unregistered keys get a plain
    entry."""
    base = key if key in REGISTRY else key.rpartition("-")[0]
    if base in REGISTRY:
        return replace(REGISTRY[base], name=key, label=method_label(key)) if base != key else REGISTRY[base]
    return Method(name=key, label=key, title=key, colour="#2ca02c", estimator_at="stableval.aggregate._base:Aggregator")


def python_setting(method: str, name: str, value: str) -> str:
    """A method's setting as Python spells it: ``max_iter=N``."""
    return f"{name}={value}"


#: How messages name a setting of a method, ``(method, parameter, value) -> words``: Python's spelling by default;
#: the command line installs its flags while a command runs (``stableval.commands.common.method_options``).
SETTING_SPELLING: ContextVar[Callable[[str, str, str], str]] = ContextVar("setting_spelling",
                                                                         default=python_setting)


def spell_setting(method: str, name: str, value: str) -> str:
    """``method``'s hyper-parameter ``name`` set to ``value``, in the words of the caller (:data:`SETTING_SPELLING`).

    >>> spell_setting("ds", "max_iter", "N")
    'max_iter=N'
    """
    return SETTING_SPELLING.get()(method, name, value)


def convergence_warnings(fits: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """One sentence per iterative fit that stopped at its iteration cap: what happened, and the settings that help
    (named by :func:`spell_setting`: Python's names, or the command line's flags).

    >>> change = {"extra_iterations": 50, "max_abs_change": 0.0123, "agent": "gpt-4"}
    >>> [warning] = convergence_warnings({"ds": {"converged": False, "n_iter": 3, "score_change": change}, "mv": {}})
    >>> warning.startswith("DS: EM stopped at the cap of 3 iterations") and "raise the cap (max_iter=N)" in warning
    True
    >>> "50 more iterations move the scores by up to 0.0123 (gpt-4)" in warning
    True
    """
    primary = primary_method(method_names())
    out = []
    for key, fit in fits.items():
        if fit.get("converged", True):
            continue
        base = method_base(key)
        change = fit.get("score_change")
        moved = (f" {change['extra_iterations']} more iterations move the scores by up to "
                 f"{change['max_abs_change']:.3g} ({change['agent']})." if change else "")
        out.append(f"{method_label(key)}: EM stopped at the cap of {fit.get('n_iter', '?')} iterations without "
                   f"converging; its estimates may still move.{moved} To let it settle, raise the cap "
                   f"({spell_setting(base, 'max_iter', 'N')}); on small data a stronger prior "
                   f"({REGISTRY[primary].label}'s {spell_setting(primary, 'alpha_pi', '2')}) or fewer levels (recode "
                   "rarely used ones before scoring) also help.")
    return out


def parse_param_value(method: Method, name: str, text: str) -> Any:
    """A hyper-parameter value given as text (``--param stableval.alpha_pi=2``), read and checked by its
    declaration (:attr:`Method.params <stableval.aggregate.method.Method.params>`); ``none`` or ``null`` where
    ``None`` is allowed.

    >>> parse_param_value(get_method("stableval"), "alpha_pi", "2"), parse_param_value(get_method("mv"), "seed", "none")
    (2.0, None)
    >>> parse_param_value(get_method("stableval"), "alpha_mu", "0.5")
    Traceback (most recent call last):
    ...
    ValueError: stableval.alpha_mu=0.5: allowed a number ≥ 1
    """
    option = method.param(name)
    text = text.strip()
    if text.lower() in ("none", "null") and (option.default is None or option.none_ok):
        return None
    try:
        return option.from_text(text)
    except ValueError as error:
        raise ValueError(f"{method.name}.{error}") from None


def parameter_table() -> str:
    """The hyper-parameter table of docs/methods.md (Markdown), one row per declared parameter of every registered
    method; a docs test compares it with the committed page.

    >>> parameter_table().splitlines()[2].split(" | ")[:3]
    ['| `mv`', '`ties`', '`split`']
    """
    rows = ["| method | parameter | default | allowed | meaning |", "|---|---|---|---|---|"]
    for name, method in REGISTRY.items():
        for option in method.params:
            allowed = option.constraint + "".join(f"; {word} (= {value})" for word, value in option.aliases
                                                  if str(value) != word)
            text = option.help.replace("|", "\\|")  # |x| inside a table cell
            rows.append(f"| `{name}` | `{option.name}` | `{option.default}` | {allowed} | {text} |")
    return "\n".join(rows)


def method_table() -> str:
    """The table of docs/methods.md that says where each registered method runs (Markdown): its label, item
    credit, rater model, the simulator's batching, the Dask executor (or why not) and the default set.

    >>> print(method_table().splitlines()[2])
    | `mv` | MV | hard | no | stacked | yes | yes |
    """
    rows = ["| method | label | credit | rater model | simulator | `--executor dask` | default |",
            "|---|---|---|---|---|---|---|"]
    for name, method in REGISTRY.items():
        dask = "yes" if method.distributed else f"no: {method.why_in_memory}"
        rows.append(f"| `{name}` | {method.label} | {method.credit} | {'yes' if method.rater_model else 'no'} | "
                    f"{method.batch} | {dask} | {'yes' if method.default else 'no'} |")
    return "\n".join(rows)
