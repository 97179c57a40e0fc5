"""The ablation grid's definition: sweeps over simulator settings, trials, methods; from code or a TOML file.

A *sweep* varies one setting of the simulator (:class:`~stableval.simulate.SimulationConfig`) while the others stay
at the base configuration (Bonagiri et al. 2026, arXiv:2605.02122, Sections 5–6). :func:`default_grid` is the
spec's grid; :func:`load_grid` reads one from a TOML file, checking every key.

>>> grid = default_grid().select(["gap"]).with_trials(2)
>>> grid.base.replace(items=20).items, [s.name for s in grid.sweeps], grid.trials, grid.methods
(20, ['gap'], 2, ('mv', 'ds', 'stableval'))
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stableval._options import beyond_size_bound, large_allowed
from stableval.aggregate.registry import (
    Chosen,
    common_parameters,
    default_methods,
    get_method,
    resolve_methods,
    shared_params,
)
from stableval.data.files.formats import not_utf8, utf8_problem
from stableval.errors import InputError
from stableval.simulate.simulator import NARROW_GAP, WIDE_GAP, SimulationConfig

__all__ = ["MAX_TRIALS", "PARAMETER_LABELS", "GridConfig", "Sweep", "check_grid", "default_grid", "load_grid"]

#: The most trials per setting (and subsamples per trial) a grid runs: a typo of a few zeros is refused up front
#: (``STABLEVAL_ALLOW_LARGE=1`` lifts the bound).
MAX_TRIALS = 100_000

#: axis label of each simulator setting a sweep can vary
PARAMETER_LABELS: dict[str, str] = {
    "adversarial": "adversarial raters (fraction of the pool)",
    "strict": "strict raters (fraction of the pool)",
    "lenient": "lenient raters (fraction of the pool)",
    "hard": "hard responses (probability per response)",
    "hard_noise": "random judgments on hard responses (probability)",
    "labels_per_response": "labels per response (judgments)",
    "qualities": "agent qualities (profile)",
    "items": "items per agent (count)",
    "raters": "rater pool (raters)",
    "levels": "levels K (count)",
    "accuracy": "reliable accuracy range (probability)",
    "shift": "strict/lenient shift range (probability)",
    "neighbour": "errors to adjacent levels (share)",
    "adversarial_mode": "adversarial behaviour (mode)",
}

_TUPLE_FIELDS = {"qualities", "agents", "level_names", "credit", "accuracy", "shift"}

@dataclass(frozen=True)
class Sweep:
    """One sweep: ``parameter`` of the simulator takes each of ``values`` (display names in ``labels``)."""

    name: str
    parameter: str
    values: tuple[Any, ...]
    labels: tuple[str, ...]

    @property
    def axis_label(self) -> str:
        return PARAMETER_LABELS.get(self.parameter, self.parameter)


@dataclass(frozen=True)
class GridConfig:
    """A whole ablation: base configuration, sweeps, trials per setting, methods and metric settings."""

    base: SimulationConfig
    sweeps: tuple[Sweep, ...]
    trials: int = 100
    seed: int = 0
    methods: tuple[str, ...] = field(default_factory=default_methods)
    subsamples: int = 10
    subsample_fraction: float = 0.5
    params: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def chosen(self) -> list[Chosen]:
        """The grid's methods with their hyper-parameters (validated against the registry)."""
        return resolve_methods(self.methods, self.params)

    def select(self, names: Sequence[str]) -> GridConfig:
        """Only the named sweeps (in the given order)."""
        by_name = {sweep.name: sweep for sweep in self.sweeps}
        unknown = [name for name in names if name not in by_name]
        if unknown:
            raise InputError("no such sweep", column="sweep", value=unknown[0], allowed=", ".join(by_name))
        return dataclasses.replace(self, sweeps=tuple(by_name[name] for name in names))

    def with_trials(self, trials: int) -> GridConfig:
        return dataclasses.replace(self, trials=trials)

    def settings(self) -> list[tuple[Sweep, int, SimulationConfig]]:
        """Every (sweep, value index, simulator config) of the grid."""
        return [(sweep, i, self.base.replace(**{sweep.parameter: value}))
                for sweep in self.sweeps for i, value in enumerate(sweep.values)]

    def setting_id(self, config: SimulationConfig) -> str:
        """Short hash of everything that determines a setting's trials (resumable runs key on it)."""
        payload = {"config": config.to_dict(), "trials": self.trials, "seed": self.seed, "methods": self.methods,
                   "subsamples": self.subsamples, "fraction": self.subsample_fraction,
                   "params": {c.key: c.estimator.get_params() for c in self.chosen()}, "version": 2}
        text = json.dumps(payload, sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def default_grid() -> GridConfig:
    """The spec's grid: adversarial, strict and lenient fractions 0–40%, hard responses 0–20%, 3/5/7/9 labels per
    response, and a wide vs narrow agent-quality gap; everything else at the base :class:`SimulationConfig`
    (6 agents × 100 items, 30 raters, 5 labels per response, K = 3, 10% each strict / lenient / adversarial,
    5% hard responses), 100 trials per setting, stability over 10 subsets of half the raters."""
    fractions = (0.0, 0.1, 0.2, 0.3, 0.4)
    hard = (0.0, 0.05, 0.1, 0.15, 0.2)
    labels = (3, 5, 7, 9)

    def numeric(name: str, values: tuple[Any, ...]) -> Sweep:
        return Sweep(name, name, values, tuple(f"{v:g}" for v in values))

    return GridConfig(
        base=SimulationConfig(),
        sweeps=(
            numeric("adversarial", fractions),
            numeric("strict", fractions),
            numeric("lenient", fractions),
            numeric("hard", hard),
            Sweep("labels", "labels_per_response", labels, tuple(str(v) for v in labels)),
            Sweep("gap", "qualities", (WIDE_GAP, NARROW_GAP), ("wide", "narrow")),
        ),
    )


# ---------------------------------------------------------------------- configuration files
def _as_setting(name: str, value: Any) -> Any:
    return tuple(value) if name in _TUPLE_FIELDS and isinstance(value, list) else value


def load_grid(path: str | os.PathLike[str]) -> GridConfig:
    """Read a grid from a TOML file (see ``examples/ablation/*.toml``); every key is checked.

    Top level: ``trials``, ``seed``, ``methods``, ``subsamples``, ``subsample_fraction``; ``[base]``: any
    :class:`SimulationConfig` setting; ``[options]``: hyper-parameters applied to every method that has one of
    that name (e.g. ``max_iter``, ``alpha_pi``); ``[params.METHOD]``: one method's hyper-parameters (e.g.
    ``[params.stableval]`` ``alpha_pi = 2``); ``[[sweep]]``: ``name``, ``parameter``, ``values`` and optional
    ``labels``. Without any ``[[sweep]]`` the default sweeps are used on the given base.
    """
    source = str(path)
    if Path(path).is_dir():
        raise InputError("is a directory, not a file", file=source, allowed="a TOML file")
    try:
        raw = Path(path).read_bytes()
        problem = utf8_problem(raw)
        if problem is not None:
            raise not_utf8(Path(path), problem, "a UTF-8 TOML file")
        data = tomllib.loads(raw.decode("utf-8"))
    except FileNotFoundError:
        raise InputError("config file not found", file=source) from None
    except tomllib.TOMLDecodeError as error:
        raise InputError(f"not valid TOML ({error})", file=source) from None
    top = {"trials", "seed", "methods", "subsamples", "subsample_fraction", "base", "options", "params", "sweep"}
    _check_keys(data, top, source, "top level")
    setting_names = {f.name for f in dataclasses.fields(SimulationConfig)}
    base_data = data.get("base", {})
    _check_keys(base_data, setting_names, source, "[base]")
    try:
        base = SimulationConfig(**{k: _as_setting(k, v) for k, v in base_data.items()})
    except InputError as error:
        raise InputError(error.problem, file=source, column="base" + (f".{error.option}" if error.option else ""),
                         value=error.value, allowed=error.allowed) from None
    except TypeError as error:
        raise InputError(f"a [base] setting has the wrong type ({error})", file=source) from None
    sweeps_data = data.get("sweep")
    if sweeps_data is not None and not isinstance(sweeps_data, list):
        raise InputError("sweep must be a list of [[sweep]] tables", file=source, column="sweep", value=sweeps_data,
                         allowed="[[sweep]] tables with name and values")
    sweeps = default_grid().sweeps if sweeps_data is None else tuple(
        _parse_sweep(entry, base, setting_names, source, n) for n, entry in enumerate(sweeps_data, 1))
    if len({s.name for s in sweeps}) != len(sweeps):
        raise InputError("sweep names must be distinct", file=source, column="sweep.name",
                         value=[s.name for s in sweeps])
    methods, params = _methods_and_params(data, source)
    grid = GridConfig(base=base, sweeps=sweeps, trials=data.get("trials", 100), seed=data.get("seed", 0),
                      methods=methods, subsamples=data.get("subsamples", 10),
                      subsample_fraction=data.get("subsample_fraction", 0.5), params=params)
    check_grid(grid, source)
    return grid


def _methods_and_params(data: dict[str, Any], source: str) -> tuple[tuple[str, ...], dict[str, dict[str, Any]]]:
    """The grid's methods and their hyper-parameters, from ``methods``, ``[options]`` and ``[params.METHOD]``."""
    given = data.get("methods", default_methods())
    if not isinstance(given, list | tuple) or not all(isinstance(name, str) for name in given):
        raise InputError("methods must be a list of method names", file=source, column="methods", value=given,
                         allowed="e.g. methods = [\"mv\", \"ds\", \"stableval\"]")
    try:
        methods = tuple(c.key for c in resolve_methods(given))
    except ValueError as error:
        raise InputError(str(error), file=source, column="methods", value=data.get("methods")) from None
    shared = data.get("options", {})
    per_method = data.get("params", {})
    _check_keys(shared, set(common_parameters(methods)), source, "[options]")
    _check_keys(per_method, set(methods), source, "[params]")
    params = shared_params(methods, shared)
    for name, values in per_method.items():
        _check_keys(values, set(get_method(name).parameter_names), source, f"[params.{name}]")
        params[name] = {**params.get(name, {}), **values}
    try:
        resolve_methods(methods, params)
    except (ValueError, TypeError) as error:
        raise InputError(str(error), file=source, column="options") from None
    return methods, params


def _check_keys(data: dict[str, Any], allowed: set[str], source: str, where: str) -> None:
    if not isinstance(data, dict):
        raise InputError(f"{where} must be a table", file=source, value=data)
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise InputError(f"unknown key in {where}", file=source, column=unknown[0], value=data[unknown[0]],
                         allowed=", ".join(sorted(allowed)))


def _parse_sweep(entry: dict[str, Any], base: SimulationConfig, setting_names: set[str], source: str,
                 number: int) -> Sweep:
    _check_keys(entry, {"name", "parameter", "values", "labels"}, source, f"sweep #{number}")
    parameter = entry.get("parameter", entry.get("name"))
    if parameter not in setting_names:
        raise InputError(f"sweep #{number}: unknown parameter", file=source, column="sweep.parameter",
                         value=parameter, allowed=", ".join(sorted(setting_names)))
    values = entry.get("values")
    if not isinstance(values, list) or not values:
        raise InputError(f"sweep #{number}: values must be a non-empty list", file=source, column="sweep.values",
                         value=values)
    values_t = tuple(_as_setting(parameter, v) for v in values)
    for value in values_t:
        try:
            base.replace(**{parameter: value})
        except InputError as error:
            raise InputError(f"sweep #{number} ({parameter}): {error.problem}", file=source,
                             column=f"sweep.values ({error.option or parameter})", value=value,
                             allowed=error.allowed) from None
    labels = entry.get("labels")
    if labels is None:
        labels = [f"{v:g}" if isinstance(v, float) else str(v) for v in values]
    if not isinstance(labels, list) or len(labels) != len(values):
        raise InputError(f"sweep #{number}: one label per value", file=source, column="sweep.labels", value=labels,
                         allowed=f"a list of {len(values)} names")
    return Sweep(str(entry.get("name", parameter)), parameter, values_t, tuple(str(x) for x in labels))


def _beyond_trials(value: Any) -> str:
    """For a count above :data:`MAX_TRIALS`: what it asks and how to run it anyway (else nothing)."""
    if not (isinstance(value, int) and value > MAX_TRIALS):
        return ""
    return "; " + beyond_size_bound(f"{value:,} would take about {value / MAX_TRIALS:,.0f}× as long as "
                                    f"{MAX_TRIALS:,}")


def check_grid(grid: GridConfig, source: str | None = None) -> None:
    """Validate the run settings of a grid (trials, subsamples, methods)."""
    most = math.inf if large_allowed() else MAX_TRIALS
    checks = [
        ("trials", isinstance(grid.trials, int) and 2 <= grid.trials <= most,
         f"an integer from 2 (a CI needs two trials) to {MAX_TRIALS:,}" + _beyond_trials(grid.trials)),
        ("seed", isinstance(grid.seed, int) and grid.seed >= 0, "an integer >= 0"),
        ("subsamples", isinstance(grid.subsamples, int) and 1 <= grid.subsamples <= most,
         f"an integer from 1 to {MAX_TRIALS:,}" + _beyond_trials(grid.subsamples)),
        ("subsample_fraction", isinstance(grid.subsample_fraction, int | float)
         and 0 < grid.subsample_fraction < 1, "a number strictly between 0 and 1"),
    ]
    for name, ok, allowed in checks:
        if not ok:
            raise InputError("invalid grid setting", file=source, column=name, value=getattr(grid, name),
                             allowed=allowed)
    try:
        grid.chosen()
    except (ValueError, TypeError) as error:
        raise InputError(str(error), file=source, column="methods", value=list(grid.methods)) from None
