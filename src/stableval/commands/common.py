"""What every command shares: the input flags, the method flags, the error exit and the output choices.

A command that reads ratings declares ``inputs: InputOptions`` and is decorated with :func:`input_options`; one
that fits aggregation methods declares ``methods: MethodSelection`` (:func:`method_options`); one that writes a
result declares ``out: Output`` (:func:`output_options`). The decorators add the flags (declared once, here) to the
command's signature and hand the command one record each (:func:`record_options` builds such a decorator)::

    @input_options("ratings")
    @method_options()
    @output_options()
    def my_command(file: FileArg, inputs: InputOptions, methods: MethodSelection, out: Output,
                   seed: SeedOpt = 0) -> None:
        with bad_input_exits():
            result = analyse(read_input(file, inputs).table, methods.chosen(seed=seed))
        out.emit(result)
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import typing
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from stableval._options import ALLOW_LARGE, MAX_SEED, beyond_size_bound, large_allowed, memory_text
from stableval.commands.output import Output, OutputFormat, check_output_path, write_output
from stableval.data.flags import CLI_FLAGS
from stableval.data.importers.registry import IMPORTERS
from stableval.data.options import DuplicatePolicy
from stableval.evaluate.ppi_options import INTERVAL

#: The ``--duplicates`` values: :class:`~stableval.data.options.DuplicatePolicy` (its earlier name here).
Duplicates = DuplicatePolicy

__all__ = [
    "INPUT_FLAGS",
    "INPUT_PROFILES",
    "MAX_REPLICATES",
    "PARAM_FLAGS",
    "QC_FLAGS",
    "BinsOpt",
    "BootstrapOpt",
    "ClusterChoice",
    "Combine",
    "CombineOpt",
    "ConfidenceOpt",
    "CreditOpt",
    "DrawnRatersOpt",
    "DrawsOpt",
    "Duplicates",
    "ExecutorKind",
    "FileArg",
    "FormatOpt",
    "GoldOpt",
    "JobsOpt",
    "LengthColOpt",
    "MergeLevelsOpt",
    "MethodSelection",
    "Output",
    "OutputFormat",
    "OutputOpt",
    "PredictionsOpt",
    "RaterInfoOpt",
    "RaterKinds",
    "RatersOpt",
    "SeedOpt",
    "VoteRule",
    "bad_input_exits",
    "bootstrap_flag",
    "cli_setting",
    "executor_options",
    "fail",
    "flag_spelling",
    "input_options",
    "method_options",
    "named_files",
    "output_options",
    "qc_options",
    "read_chosen_raters",
    "read_input",
    "read_partitioned",
    "read_rated_input",
    "read_table",
    "record_options",
    "replicates_flag",
    "write_output",
]

F = TypeVar("F", bound=Callable[..., Any])


def flag_spelling(option: str, value: str | None = None) -> str:
    """How the command line sets an option an error names (:class:`~stableval.errors.InputError` ``option``): its
    flag, then the value. The flag is the input flag of :data:`~stableval.data.flags.CLI_FLAGS` (a column role
    ``columns.ROLE`` is the role's), else the flag a ranker declares for its option (duoT5's ``k`` is
    ``--duo-k``: :data:`stableval.nrp.rankers.REGISTRY`), else the flag typer derives from a Python name
    (``rater_info`` is ``--rater-info``), which the commands' other flags keep (``tests/test_commands.py`` checks
    every option an error names).

    >>> flag_spelling("duplicates", "first|last|keep"), flag_spelling("columns.item", "NAME")
    ('--duplicates first|last|keep', '--item-col NAME')
    >>> flag_spelling("format"), flag_spelling("rater_info", "FILE"), flag_spelling("first_stage")
    ('--input-format', '--rater-info FILE', '--duo-first-stage')
    """
    from stableval.errors import COLUMN_OPTION
    from stableval.nrp.rankers import REGISTRY

    name = option.removeprefix(COLUMN_OPTION)
    declared = {setting.name: setting.cli for spec in REGISTRY.values() for setting in spec.options}
    flag = CLI_FLAGS.get(name) or declared.get(name) or "--" + name.replace("_", "-")
    return flag if value is None else f"{flag} {value}"


def fail(message: str) -> typer.Exit:
    """Print ``error: message`` on stderr (the message shown as written, control characters escaped); raise the
    returned exit (code 1: bad input)."""
    from rich.text import Text

    from stableval.commands.output import make_console, visible

    text = Text.assemble(("error:", "bold red"), " ", visible(message))
    make_console(to_file=False, stderr=True).print(text, soft_wrap=True)
    return typer.Exit(code=1)


# ====================================================================================== signature surgery
def _extend_signature(func: Callable[..., Any], replaced: str, added: Sequence[inspect.Parameter],
                      build: Callable[[dict[str, Any]], Any]) -> Callable[..., Any]:
    """``func`` with its parameter ``replaced`` swapped for the ``added`` parameters (typer options); the wrapper
    collects their values with ``build`` and calls ``func`` with ``replaced=build(values)``."""
    signature = inspect.signature(func)
    if replaced not in signature.parameters:
        raise TypeError(f"{func.__name__} must take a parameter {replaced!r}")
    namespace = dict(getattr(func, "__globals__", {}))
    kept = [p.replace(annotation=_resolve(p.annotation, namespace)) for p in signature.parameters.values()
            if p.name != replaced]
    names = [p.name for p in added]
    clash = set(names) & {p.name for p in kept}
    if clash:
        raise TypeError(f"{func.__name__} already has parameters {sorted(clash)}")
    parameters = kept + [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in added]
    parameters = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
                  and p.default is not inspect.Parameter.empty else p for p in parameters]
    parameters.sort(key=lambda p: p.kind)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if replaced in kwargs:  # called from Python with the record itself (e.g. demo calls score)
            return func(*args, **kwargs)
        values = {name: kwargs.pop(name) for name in names if name in kwargs}
        return func(*args, **{replaced: build(values)}, **kwargs)

    wrapper.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in parameters}
    return wrapper


def _resolve(annotation: Any, namespace: dict[str, Any]) -> Any:
    """A postponed annotation (``from __future__ import annotations``: a string) resolved in the command's module as
    :func:`typing.get_type_hints` resolves one, which accepts only a type expression; one that names a
    type-checking-only import (the record another decorator replaces) stays a string.

    >>> _resolve("Annotated[int | None, 'flag']", {"Annotated": Annotated}), _resolve("InputOptions", {})
    (typing.Annotated[int | None, 'flag'], 'InputOptions')
    """
    if not isinstance(annotation, str):
        return annotation
    try:
        return typing.get_type_hints(_Annotated(annotation), globalns=namespace, include_extras=True)["value"]
    except NameError:
        return annotation


class _Annotated:
    """An object with one annotation, ``value``, for :func:`typing.get_type_hints` to resolve."""

    def __init__(self, annotation: str) -> None:
        self.__annotations__ = {"value": annotation}


def _option(name: str, annotation: Any, default: Any) -> inspect.Parameter:
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)


def record_options(parameter: str, flags: Sequence[tuple[str, Any, Any]],
                   build: Callable[[dict[str, Any]], Any]) -> Callable[[F], F]:
    """Decorator: the command's ``parameter`` (a record) is replaced on the command line by ``flags`` — (python
    name, typer ``Annotated`` type, default) each — and the command receives ``build(values)``. Calling the
    command from Python with the record itself works too."""

    def decorate(func: F) -> F:
        added = [_option(name, annotation, default) for name, annotation, default in flags]
        return typing.cast(F, _extend_signature(func, parameter, added, build))

    return decorate


@contextmanager
def bad_input_exits() -> Iterator[None]:
    """Turn a :class:`~stableval.errors.StableValError` (bad input) into ``error: ...`` on stderr and exit code 1;
    the options an :class:`~stableval.errors.InputError` names are spelled as flags (:func:`flag_spelling`)."""
    from stableval.errors import InputError, StableValError

    try:
        yield
    except StableValError as error:
        raise fail(error.spelled(flag_spelling) if isinstance(error, InputError) else str(error)) from None


# ====================================================================================== input
FileArg = Annotated[Path, typer.Argument(help="Ratings file: CSV, TSV, JSONL or Parquet (or a folder or quoted glob "
                                              "of Parquet files); one row per judgment "
                                              "(item, agent, rater, label) or per pairwise vote "
                                              "(item, agent_a, agent_b, rater, winner).",
                                         show_default=False)]


def _flag(target: str, kind: Any, help: str) -> Any:
    """A typer option for an input option or column role, spelled as the data layer's messages spell it."""
    return Annotated[kind, typer.Option(CLI_FLAGS[target.removeprefix("column:")], help=help, rich_help_panel="Input")]


# python name → (the InputOptions field it fills, or ``column:ROLE`` for a column role; type; default; help)
_SPECS: dict[str, tuple[str, Any, Any, str]] = {
    "levels": ("levels", str | None, None, "Ordered level names, worst first, e.g. incorrect,partial,correct. "
               "Default: integer labels 0..K-1."),
    "credit": ("credit", str | None, None, "Credit per level, e.g. 0,0.5,1. Default: evenly spaced from 0 to 1."),
    "merge_levels": ("merge_levels", str | None, None, "Merge label values into ordered levels, worst first, e.g. "
                     "'1,2=low 3=mid 4,5=high' (quoted; groups separated by spaces or ;). The mapping is printed "
                     "in the notes and kept in the JSON output."),
    "bins": ("bins", str | None, None, "Cut numeric labels into levels at increasing cut points, e.g. 2.5,3.5 "
             "(v < 2.5, 2.5 <= v < 3.5, v >= 3.5); --levels names the bins, worst first."),
    "duplicates": ("duplicates", DuplicatePolicy, DuplicatePolicy.ERROR, "Same (item, agent, rater) judged twice: "
                   "error, keep the first or last, or keep all as independent repeated judgments."),
    "one_judgment_duplicates": ("duplicates", StrEnum("OneJudgmentPolicy", {
        policy.name: policy.value for policy in DuplicatePolicy if policy is not DuplicatePolicy.KEEP}),
        DuplicatePolicy.ERROR.value, "Same (item, agent, rater) judged twice: error, or keep the first or last "
        "(an evaluator has one judgment per item)."),
    "item_col": ("column:item", str | None, None, "Column holding the item id."),
    "agent_col": ("column:agent", str | None, None, "Column holding the agent (system) name."),
    "rater_col": ("column:rater", str | None, None, "Column holding the rater id."),
    "label_col": ("column:label", str | None, None, "Column holding the label."),
    "default_agent": ("default_agent", str | None, None, "Agent name for every row when the file has no agent "
                      "column."),
    "agent_a_col": ("column:agent_a", str | None, None, "Pairwise votes: column of the first agent."),
    "agent_b_col": ("column:agent_b", str | None, None, "Pairwise votes: column of the second agent."),
    "winner_col": ("column:winner", str | None, None, "Pairwise votes: column of the winner (a, b or tie)."),
    "criterion_col": ("column:criterion", str | None, None, "Pairwise votes: column of the criterion, if any."),
    "weight_col": ("column:weight", str | None, None, "Pairwise votes: column of the vote weight (a number >= 0; "
                   "default 1)."),
    "flag_col": ("column:flag", str | None, None, "Column holding the flag (item not ratable, e.g. NSFW): yes/no."),
    "skip_col": ("column:skip", str | None, None, "Column holding the skip mark: yes/no."),
    "flag_reason_col": ("column:flag_reason", str | None, None, "Column holding why a row is flagged (PII, medical "
                        "advice, NSFW, ...), for --flag-reasons."),
    "input_format": ("format", str | None, None, "csv, tsv, jsonl or parquet (default: from the file suffix)."),
    "importer": ("importer", str | None, None, "Read FILE as a tool's export: " + "; ".join(
        f"{name} ({importer.tool})" for name, importer in IMPORTERS.items()) + ". The column flags then name the "
        "tool's fields (--label-col: the question, control or scorer to read); see docs/importers.md."),
}
#: Every input flag, declared once: python name → (typer annotation, default, target). The flags' spellings come
#: from :data:`stableval.data.flags.CLI_FLAGS`, the table the data layer's messages use.
INPUT_FLAGS: dict[str, tuple[Any, Any, str]] = {name: (_flag(target, kind, help), default, target)
                                                for name, (target, kind, default, help) in _SPECS.items()}
INPUT_FLAGS["pairwise"] = (Annotated[bool | None, typer.Option(
    "--pairwise/--no-pairwise", help="Treat the file as pairwise votes (default: detected from the columns).",
    rich_help_panel="Input", show_default=False)], None, "pairwise")

#: ``--merge-levels`` and ``--bins`` for a command that reads labels with its own flags (rater-bootstrap).
MergeLevelsOpt = INPUT_FLAGS["merge_levels"][0]
BinsOpt = INPUT_FLAGS["bins"][0]

#: Which input flags each kind of input takes.
INPUT_PROFILES: dict[str, tuple[str, ...]] = {
    # annotations or pairwise votes, converted to an annotation table (score, stability, diagnose, report, ...)
    "ratings": ("levels", "merge_levels", "bins", "credit", "duplicates", "item_col", "agent_col", "rater_col",
                "label_col", "default_agent", "agent_a_col", "agent_b_col", "winner_col", "criterion_col", "pairwise",
                "input_format", "importer"),
    # pairwise votes only (Bradley–Terry)
    "votes": ("duplicates", "item_col", "agent_a_col", "agent_b_col", "rater_col", "winner_col", "criterion_col",
              "weight_col", "input_format", "importer"),
    # single judgments with optional flag / skip marks (reliability against QC)
    "judgments": ("levels", "merge_levels", "bins", "one_judgment_duplicates", "item_col", "agent_col", "rater_col",
                  "label_col", "flag_col", "skip_col", "flag_reason_col", "default_agent", "input_format"),
}


def _input_record(values: dict[str, Any]) -> Any:
    from stableval.data import InputOptions

    fields: dict[str, Any] = {}
    columns: dict[str, str] = {}
    for name, value in values.items():
        target = INPUT_FLAGS[name][2]
        if target == "importer" and value is not None:
            value = _importer_name(value)
        if target.startswith("column:"):
            if value:
                columns[target.split(":", 1)[1]] = value
        else:
            fields[target] = value.value if isinstance(value, StrEnum) else value
    return InputOptions(columns=columns or None, **fields)


def _importer_name(value: str) -> str:
    """A ``--from`` value as its importer's name; an unknown one is a usage error (exit 2) listing the names."""
    key = value.strip().lower().replace("_", "-")
    if key not in IMPORTERS:
        raise typer.BadParameter(f"{value!r}; allowed: {', '.join(IMPORTERS)}", param_hint=CLI_FLAGS["importer"])
    return key


def input_options(profile: str = "ratings") -> Callable[[F], F]:
    """Give the decorated command the input flags of ``profile`` (see :data:`INPUT_PROFILES`), collected into its
    ``inputs: InputOptions`` parameter."""
    flags = [(name, INPUT_FLAGS[name][0], INPUT_FLAGS[name][1]) for name in INPUT_PROFILES[profile]]
    return record_options("inputs", flags, _input_record)


def output_options() -> Callable[[F], F]:
    """Give the decorated command ``--format/-f`` and ``--output/-o``, collected into its ``out: Output``
    parameter (``out.emit(result)`` writes the result; a table fits the terminal, and is never wrapped in a file
    or a pipe)."""
    flags = [("output_format", FormatOpt, OutputFormat.TABLE), ("output", OutputOpt, None)]
    return record_options("out", flags, lambda values: Output(values.get("output_format", OutputFormat.TABLE),
                                                              check_output_path(values.get("output"))))


def read_input(file: Path, inputs: Any) -> Any:
    """Read FILE once with the collected input flags: a :class:`stableval.data.Loaded` (table and, for pairwise
    input, the raw votes)."""
    from stableval.data import load
    from stableval.data.labels import WARNING_PREFIX

    loaded = load(file, inputs)
    for note in loaded.table.notes:  # a warning about the data is repeated on stderr, where it cannot be missed
        if note.startswith(WARNING_PREFIX):
            warn(note.removeprefix(WARNING_PREFIX))
    return loaded


def warn(message: str) -> None:
    """Print ``warning: message`` on stderr in bold yellow (shown as written, control characters escaped)."""
    from rich.text import Text

    from stableval.commands.output import make_console, visible

    make_console(to_file=False, stderr=True).print(Text.assemble(("warning:", "bold yellow"), " ", visible(message)),
                                                   soft_wrap=True)


def read_chosen_raters(file: Path, inputs: Any, rater_info: Path | None, raters: RaterKinds) -> Any:
    """The annotation table of FILE with only the judgments of ``--raters`` (human, llm or all), whose kinds
    come from ``--rater-info`` or ``rater_kind`` columns; every rater when ``raters`` is ALL."""
    from stableval.data.raters import select_raters

    if raters is RaterKinds.ALL and rater_info is None:
        return read_input(file, inputs).table
    loaded, info, _ = read_rated_input(file, inputs, rater_info)
    table = select_raters(loaded.table, info, raters.value)
    if info is not None and info.notes:  # names the metadata lists but the ratings do not use
        table = dataclasses.replace(table, notes=(*table.notes, *info.notes))
    return table


def read_rated_input(file: Path, inputs: Any, rater_info: Path | None = None, length_col: str | None = None,
                     dask: Any = None) -> tuple[Any, Any, Any]:
    """Read FILE once with the input flags, its rater metadata (``--rater-info`` and/or ``rater_kind`` columns)
    and answer lengths (``--length-col``): ``(Loaded, RaterInfo or None, lengths or None)``. With ``dask`` (the
    Dask executor of :meth:`ClusterChoice.session`, which takes neither metadata nor lengths) the table is read
    onto its cluster."""
    from stableval.data import Loaded
    from stableval.data.raters import load_with_raters

    if dask is not None:
        return Loaded(read_partitioned(file, inputs, dask.client)), None, None
    return load_with_raters(file, inputs, rater_info, length=length_col)


# ====================================================================================== methods
#: Shorthand flags kept from earlier versions: each sets the hyper-parameter of that name on every chosen method
#: that has one (``--max-iter 100`` reaches Dawid–Skene and STABLEVAL). ``--param METHOD.NAME=VALUE`` reaches any.
#: Their spelling, help and values come from the methods' declarations (:attr:`Method.params
#: <stableval.aggregate.method.Method.params>`).
PARAM_FLAGS: tuple[str, ...] = ("ties", "alpha_mu", "alpha_pi", "epsilon", "max_iter", "tol")


def _declaration(name: str, allowed: Sequence[str]) -> Any:
    """The declaration of hyper-parameter ``name`` in the first of the ``allowed`` methods that has it."""
    from stableval.aggregate.registry import get_method

    return next(get_method(m).param(name) for m in allowed
                if name in get_method(m).parameter_names)


#: The largest magnitude a numeric hyper-parameter may take on the command line (``--alpha-pi 1e308`` overflows EM).
MAX_PARAM_MAGNITUDE = 1e6


@dataclass(frozen=True)
class MethodSelection:
    """The methods a command runs: their names and hyper-parameters, validated against the registry."""

    names: tuple[str, ...]
    params: dict[str, dict[str, Any]] = field(default_factory=dict)

    def chosen(self, seed: int | None = None) -> list[Any]:
        """The methods with their estimators; ``seed`` reaches every method with a ``seed`` parameter (the
        majority vote's random tie-break) unless ``--param`` set one."""
        from stableval.aggregate.registry import get_method, resolve_methods

        params = {name: dict(values) for name, values in self.params.items()}
        if seed is not None:
            for name in self.names:
                if "seed" in get_method(name).parameter_names:
                    params.setdefault(name, {}).setdefault("seed", seed)
        return resolve_methods(self.names, params)


def _method_help(allowed: Sequence[str], single: bool) -> str:
    from stableval.aggregate.registry import get_method

    listed = "; ".join(f"{name} ({get_method(name).title})" for name in allowed)
    return ("Method: " if single else "Comma-separated methods: ") + listed + "."


def _param_help(allowed: Sequence[str]) -> str:
    from stableval.aggregate.registry import get_method

    parts = []
    for name in allowed:
        parts.append(", ".join(f"{name}.{option.name} ({option.default!r})" for option in get_method(name).params))
    return ("A method's hyper-parameter, METHOD.NAME=VALUE (repeatable), e.g. stableval.alpha_pi=2. Available "
            "(default): " + "; ".join(part for part in parts if part) + ". What each does and allows: "
            "docs/methods.md.")


def method_options(default: str | None = None, *, single: bool = False, rater_model: bool = False
                   ) -> Callable[[F], F]:
    """Give the decorated command ``--method``, ``--param`` and the shorthand parameter flags, collected into its
    ``methods: MethodSelection`` parameter.

    Args:
        default: the default ``--method`` value (default: the registry's default methods).
        single: one method only.
        rater_model: only methods with a rater model (per-rater confusion matrices) are allowed.
    """
    from stableval.aggregate.registry import REGISTRY, common_parameters, default_methods

    def allowed_now() -> tuple[str, ...]:  # read when the command runs, so the registry is the one in use
        return tuple(name for name, method in REGISTRY.items() if method.rater_model or not rater_model)

    allowed = allowed_now()
    default_text = default if default is not None else ",".join(n for n in default_methods() if n in allowed)
    shorthand = [name for name in PARAM_FLAGS if name in common_parameters(allowed)]

    def build(values: dict[str, Any]) -> MethodSelection:
        return _selection(values, allowed_now(), single, shorthand)

    flags: list[tuple[str, Any, Any]] = [
        ("method", Annotated[str, typer.Option("--method", "-m", help=_method_help(allowed, single),
                                               rich_help_panel="Methods")], default_text),
        ("param", Annotated[list[str] | None, typer.Option(
            "--param", "-p", help=_param_help(allowed), rich_help_panel="Methods", show_default=False)], None),
    ]
    for name in shorthand:
        option = _declaration(name, allowed)
        flags.append((name, Annotated[_value_type(name, allowed) | None, typer.Option(
            option.cli, help=_shorthand_help(name, allowed), rich_help_panel="Methods", show_default=False)], None))
    add_flags = record_options("methods", flags, build)

    def decorate(func: F) -> F:
        command = add_flags(func)

        @functools.wraps(command)
        def with_flag_words(*args: Any, **kwargs: Any) -> Any:
            """The command, its results naming a method's settings by the flags that set them."""
            from stableval.aggregate.registry import SETTING_SPELLING

            token = SETTING_SPELLING.set(cli_setting)
            try:
                return command(*args, **kwargs)
            finally:
                SETTING_SPELLING.reset(token)

        return with_flag_words  # type: ignore[return-value]

    return decorate


def cli_setting(method: str, name: str, value: str) -> str:
    """A method's setting as the command line spells it: its shorthand flag (``--max-iter N``) or ``--param``.

    >>> cli_setting("ds", "max_iter", "N"), cli_setting("glad", "m_step_tol", "0.1")
    ('--max-iter N', '--param glad.m_step_tol=0.1')
    """
    from stableval.aggregate.registry import get_method

    if name in PARAM_FLAGS:
        return f"{get_method(method).param(name).cli} {value}"
    return f"--param {method}.{name}={value}"


def _shorthand_help(name: str, allowed: Sequence[str]) -> str:
    """A shorthand flag's help: its declaration's (the first method that has it), the methods it reaches and their
    defaults."""
    from stableval.aggregate.registry import get_method

    takers = [m for m in allowed if name in get_method(m).parameter_names]
    option = _declaration(name, allowed)
    constraint = f" Allowed: {option.constraint}." if option.constraint else ""
    return f"{option.help}{constraint} Sets {name} of {', '.join(takers)}.{_defaults_note(name, allowed)}"


def _value_type(name: str, allowed: Sequence[str]) -> type:
    """The type of a shorthand flag's value: its default's type when every method that has it agrees, else text."""
    from stableval.aggregate.registry import get_method

    kinds = {type(get_method(m).param(name).default) for m in allowed
             if name in get_method(m).parameter_names}
    kind = kinds.pop() if len(kinds) == 1 else str
    return kind if kind in (int, float, str) else str


def _defaults_note(name: str, allowed: Sequence[str]) -> str:
    from stableval.aggregate.registry import get_method

    defaults = {get_method(m).param(name).default for m in allowed
                if name in get_method(m).parameter_names}
    return f" Default: {', '.join(map(str, sorted(defaults, key=str)))}." if defaults else ""


def _selection(values: dict[str, Any], allowed: Sequence[str], single: bool,
               shorthand: Sequence[str]) -> MethodSelection:
    """Validate ``--method``, ``--param`` and the shorthand flags against the registry (usage errors, exit 2)."""
    from stableval.aggregate.registry import REGISTRY, get_method, parse_param_value, resolve_methods

    names = [part.strip().lower() for part in str(values.get("method") or "").split(",") if part.strip()]
    for name in names:
        if name in REGISTRY and name not in allowed:  # registered, but this command reads the raters' model
            raise typer.BadParameter(f"{name} has no rater model (it estimates no confusion matrix per rater, which "
                                     f"this command reads); allowed: {', '.join(allowed)}", param_hint="--method")
        if name not in allowed:
            raise typer.BadParameter(f"unknown method {name!r}; allowed: {', '.join(allowed)}", param_hint="--method")
    names = list(dict.fromkeys(names))
    if not names:
        raise typer.BadParameter(f"no method given; allowed: {', '.join(allowed)}", param_hint="--method")
    if single and len(names) > 1:
        raise typer.BadParameter(f"give one method, not {', '.join(names)}", param_hint="--method")
    given = {name: values[name] for name in shorthand if values.get(name) is not None}
    params: dict[str, dict[str, Any]] = {}
    for name, text in given.items():
        takers = [m for m in names if name in get_method(m).parameter_names]
        flag = _declaration(name, allowed).cli
        if not takers:
            typer.echo(f"note: {flag} is not used: none of {', '.join(names)} has a parameter {name!r}", err=True)
        for method in takers:
            try:
                params.setdefault(method, {})[name] = parse_param_value(get_method(method), name, str(text))
            except ValueError as error:
                raise typer.BadParameter(str(error), param_hint=flag) from None
    for entry in values.get("param") or []:
        target, sep, text = entry.partition("=")
        method, dot, name = target.strip().partition(".")
        if not sep or not dot or not name:
            raise typer.BadParameter(f"{entry!r} is not METHOD.NAME=VALUE (e.g. stableval.alpha_pi=2)",
                                     param_hint="--param")
        method = method.lower()
        if method not in allowed:
            raise typer.BadParameter(f"unknown method {method!r} in {entry!r}; allowed: {', '.join(allowed)}",
                                     param_hint="--param")
        if method not in names:
            raise typer.BadParameter(f"{entry!r} sets a parameter of {method}, which is not among the chosen "
                                     f"methods ({', '.join(names)}); add it to --method", param_hint="--param")
        try:
            params.setdefault(method, {})[name.strip()] = parse_param_value(get_method(method), name.strip(), text)
        except ValueError as error:
            raise typer.BadParameter(str(error), param_hint="--param") from None
    for method, values_set in params.items():
        for name, value in values_set.items():
            if isinstance(value, float) and not abs(value) <= MAX_PARAM_MAGNITUDE:
                flag = _declaration(name, allowed).cli if name in given else "--param"
                raise typer.BadParameter(f"{method}.{name}={value!r} is out of range; allowed: a finite number of "
                                         f"magnitude at most {MAX_PARAM_MAGNITUDE:g} (a prior or step this large "
                                         "swamps the data and overflows the fit)", param_hint=flag)
    try:
        resolve_methods(names, params)
    except (ValueError, TypeError) as error:
        flags = [_declaration(n, allowed).cli for n in given] + (["--param"] if values.get("param") else [])
        raise typer.BadParameter(str(error), param_hint=" / ".join(flags) or "--method") from None
    return MethodSelection(tuple(names), params)


# ====================================================================================== shared options
CreditOpt = INPUT_FLAGS["credit"][0]
SeedOpt = Annotated[int, typer.Option("--seed", min=0, max=MAX_SEED,
                                       help=f"Random seed (a whole number 0..{MAX_SEED}).")]
#: worker processes of a long analysis; the default, 0, uses every core (results do not depend on it)
JobsOpt = Annotated[int, typer.Option("--jobs", "-j", min=0, help="Worker processes (0 = one per CPU core; 1 = in "
                                      "this process). Results do not depend on it.")]
FormatOpt = Annotated[OutputFormat, typer.Option("--format", "-f", help="table (readable), json or csv.",
                                                 rich_help_panel="Output")]
OutputOpt = Annotated[Path | None, typer.Option("--output", "-o", help="Write to this file instead of stdout.",
                                                rich_help_panel="Output")]


class RaterKinds(StrEnum):
    ALL = "all"
    HUMAN = "human"
    LLM = "llm"


RaterInfoOpt = Annotated[Path | None, typer.Option(
    "--rater-info", help="Rater metadata: CSV/TSV/JSONL/Parquet with columns name (or rater), kind (human, llm, or "
                         "agent for a rated agent) and family (the LLM's model family, e.g. gpt-4). Without it, "
                         "rater_kind / rater_family columns of the ratings file are used when present.",
    rich_help_panel="Raters", show_default=False)]
RatersOpt = Annotated[RaterKinds, typer.Option(
    "--raters", help="Use only the judgments of these raters: human, llm (LLM judges) or all. Needs the raters' "
                     "kinds (--rater-info or a rater_kind column).", rich_help_panel="Raters")]


class Combine(StrEnum):
    """How the ratings of people and LLM judges make one score (``--combine``)."""

    POOL = "pool"
    PPI = "ppi"


CombineOpt = Annotated[Combine, typer.Option(
    "--combine", help="How people's and LLM judges' ratings make a score: pool (every chosen rater's judgments in "
                      "one fit) or ppi (prediction-powered: the judges everywhere, their bias removed with the "
                      "people's ratings of the same answers; people-only, judge-only and PPI side by side; needs "
                      "the raters' kinds).", rich_help_panel="Raters")]


def _interval_choice(value: str | None) -> str | None:
    """``--interval``: one of :data:`~stableval.evaluate.ppi_options.INTERVAL`'s choices (a usage error otherwise)."""
    if value is None:
        return None
    try:
        return str(INTERVAL.from_text(value))
    except ValueError:
        raise typer.BadParameter(f"{value!r}; allowed: {', '.join(INTERVAL.choices or ())}",
                                 param_hint=INTERVAL.cli) from None


IntervalOpt = Annotated[str | None, typer.Option(
    INTERVAL.cli, help=f"With --combine ppi: {INTERVAL.describe()}", callback=_interval_choice,
    rich_help_panel="Raters", show_default=False)]
LengthColOpt = Annotated[str | None, typer.Option(
    "--length-col", help="Column(s) holding the answer length (e.g. tokens), for the LLM judges' length bias: one "
                         "column for annotations, LEN_A,LEN_B for pairwise votes.", rich_help_panel="Raters",
    show_default=False)]
ConfidenceOpt = Annotated[float, typer.Option("--confidence", min=0.5, max=0.999,
                                              help="Confidence level of the intervals.")]
GoldOpt = Annotated[Path | None, typer.Option("--gold", help="Gold labels (item[,agent],gold), e.g. a truth.csv: also "
                                              "report the accuracy against them.", rich_help_panel="Input")]


#: The most replicates (``--bootstrap``, ``--draws``, ``--repetitions``) a command draws: a typo of a few zeros
#: (``-B 1000000000``) would need tens of GiB or hours, so it is refused before any work, unless
#: ``STABLEVAL_ALLOW_LARGE=1`` (:data:`stableval._options.ALLOW_LARGE`).
MAX_REPLICATES = 100_000


def replicates_flag(*names: str, minimum: int, help: str) -> Any:
    """A count of replicates (``--bootstrap``, ``--draws``, ``--repetitions``): a whole number from ``minimum`` up
    to :data:`MAX_REPLICATES` (more with ``STABLEVAL_ALLOW_LARGE=1``), the refusal saying what the count asked
    would cost."""
    return typer.Option(*names, min=minimum, callback=_within_replicates,
                        help=f"{help} At most {MAX_REPLICATES:,} ({ALLOW_LARGE}=1 lifts the bound).")


def _within_replicates(value: int | None) -> int | None:
    """``value`` unless it is above :data:`MAX_REPLICATES` and the bound is not lifted (a usage error)."""
    if value is not None and value > MAX_REPLICATES and not large_allowed():
        raise typer.BadParameter(f"{value} is above the limit, {MAX_REPLICATES}: " + beyond_size_bound(
            f"{value:,} replicates would hold {memory_text(8 * value)} of draws for every number estimated (score: "
            f"agents × levels of them) and take about {value / MAX_REPLICATES:,.0f}× as long as "
            f"{MAX_REPLICATES:,}"))
    return value


def bootstrap_flag(help: str = "Bootstrap replicates for the intervals (0 = none).") -> Any:
    """``--bootstrap/-B``, a whole number 0..:data:`MAX_REPLICATES`, declared once; a command may say in ``help``
    what it resamples:
    ``bootstrap: Annotated[int, bootstrap_flag("Bootstrap replicates over votes (0 = none).")] = 1000``."""
    return replicates_flag("--bootstrap", "-B", minimum=0, help=help)


#: ``--bootstrap/-B`` with the common help text.
BootstrapOpt = Annotated[int, bootstrap_flag()]


# ====================================================================================== bootstrapped ground truths
class VoteRule(StrEnum):
    """How the ratings drawn for an item decide: by majority (plurality) or only when unanimous."""

    MAJORITY = "majority"
    UNANIMOUS = "unanimous"


#: The flags of the commands that score models against bootstrapped ground truths (rater-bootstrap, medqa, ddx).
DrawsOpt = Annotated[int, replicates_flag("--draws", "-B", minimum=1, help="Bootstrap draws of raters.")]
DrawnRatersOpt = Annotated[int, typer.Option("--raters", "-k", min=0, help="Ratings drawn per item with "
                                             "replacement (0 = as many as the item has).")]
PredictionsOpt = Annotated[list[str] | None, typer.Option(
    "--predictions", "-p", help="Model predictions as NAME=FILE (or FILE: the name is the file stem); repeatable.",
    show_default=False)]


def named_files(values: list[str] | None) -> dict[str, Path]:
    """``--predictions`` values (``NAME=FILE`` or ``FILE``, named by its stem) as name → path; a malformed or
    repeated name is a usage error.

    >>> named_files(["gpt=answers.csv", "runs/claude.csv"])
    {'gpt': PosixPath('answers.csv'), 'claude': PosixPath('runs/claude.csv')}
    """
    out: dict[str, Path] = {}
    for value in values or []:
        name, sep, path = value.partition("=")
        if not sep:
            name, path = Path(value).stem, value
        name = name.strip()
        if not name or not path.strip():
            raise typer.BadParameter(f"expected NAME=FILE, got {value!r}", param_hint="--predictions")
        if name in out:
            raise typer.BadParameter(f"model name {name!r} given twice", param_hint="--predictions")
        out[name] = Path(path.strip())
    return out


# ====================================================================================== quality control
class QcAlias(StrEnum):
    """The values of ``--qc``, the earlier spelling of ``--qc-consensus``."""

    CONSENSUS = "consensus"


#: The quality-control (QC) flags of ``reliability`` and ``report``, declared once: python name → (typer
#: annotation, default). ``--qc consensus`` is kept as an alias of ``--qc-consensus``.
QC_FLAGS: dict[str, tuple[Any, Any]] = {
    "qc_rater": (Annotated[str | None, typer.Option(
        "--qc-rater", help="QC is this rater (comma-separate several QC ids; at most one QC judgment per item).",
        rich_help_panel="Quality control", show_default=False)], None),
    "qc_file": (Annotated[Path | None, typer.Option(
        "--qc-file", help="QC (gold) file: item, label, and optionally agent, flag and skip; one row per item.",
        rich_help_panel="Quality control", show_default=False)], None),
    "qc_consensus": (Annotated[bool, typer.Option(
        "--qc-consensus", help="QC is the strict majority of the other raters of the item (leave-one-out); items "
                               "without one are excluded and counted.", rich_help_panel="Quality control")], False),
    "qc_alias": (Annotated[QcAlias | None, typer.Option(
        "--qc", help="Alias of --qc-consensus: --qc consensus (the earlier spelling).",
        rich_help_panel="Quality control", show_default=False)], None),
}


def qc_options() -> Callable[[F], F]:
    """Give the decorated command the QC flags (:data:`QC_FLAGS`), collected into its ``qc`` parameter: a
    :class:`~stableval.report.options.QualityControl`, or ``None`` when no QC source is given. More than one
    source is a usage error (exit 2)."""
    return record_options("qc", [(name, kind, default) for name, (kind, default) in QC_FLAGS.items()], _qc_record)


def _qc_record(values: dict[str, Any]) -> Any:
    from stableval.report.options import QualityControl

    consensus = bool(values.get("qc_consensus")) or values.get("qc_alias") is QcAlias.CONSENSUS
    given = [flag for flag, value in (("--qc-rater", values.get("qc_rater")), ("--qc-file", values.get("qc_file")),
                                      ("--qc-consensus", consensus)) if value]
    if len(given) > 1:
        raise typer.BadParameter(f"give one QC source, not {' and '.join(given)}",
                                 param_hint="--qc-rater / --qc-file / --qc-consensus")
    return QualityControl.of(values.get("qc_rater"), values.get("qc_file"), consensus)


# ====================================================================================== executor
class ExecutorKind(StrEnum):
    LOCAL = "local"
    DASK = "dask"


@dataclass(frozen=True)
class ClusterChoice:
    """Where ``--executor`` / ``--scheduler`` say the work runs: in this process (``local``) or on a Dask cluster
    (``dask``: the scheduler at ``scheduler``, or a local cluster started for the command). A ``--scheduler``
    alone means ``--executor dask``."""

    executor: ExecutorKind = ExecutorKind.LOCAL
    scheduler: str | None = None

    @property
    def dask(self) -> bool:
        return self.executor is ExecutorKind.DASK or self.scheduler is not None

    def refuse(self, flag: str, why: str) -> None:
        """A usage error (exit 2): ``flag`` cannot be used with the Dask executor, and why."""
        raise typer.BadParameter(f"{flag} is not supported with --executor dask: {why}", param_hint="--executor")

    def check_methods(self, names: Sequence[str]) -> None:
        """Refuse (exit 2) methods the Dask executor does not fit, with the reason each declares."""
        from stableval.aggregate.registry import distributed_methods, get_method

        for name in names:
            method = get_method(name)
            if not method.distributed:
                raise typer.BadParameter(f"{name} cannot be fitted with --executor dask: {method.why_in_memory}; "
                                         f"allowed there: {', '.join(distributed_methods())}", param_hint="--method")

    @contextmanager
    def session(self) -> Iterator[Any]:
        """The Dask executor (:class:`~stableval.parallel.DaskExecutor`) for the command, closed after it (the
        dashboard's address is printed on stderr); ``None`` with the local executor."""
        if not self.dask:
            yield None
            return
        from stableval.parallel import DaskExecutor

        executor = DaskExecutor(self.scheduler)
        try:
            link = executor.dashboard_link
            typer.echo(f"dask: {executor.describe()}" + (f"; dashboard {link}" if link else ""), err=True)
            yield executor
        finally:
            executor.close()


ExecutorOpt = Annotated[ExecutorKind, typer.Option(
    "--executor", help="Where the fits run: local (this process) or dask (a Dask cluster: the judgments are read "
                       "and kept on the workers, Parquet input only; see docs/scale.md).",
    rich_help_panel="Execution")]
SchedulerOpt = Annotated[str | None, typer.Option(
    "--scheduler", help="Address of the Dask scheduler (tcp://host:8786) for --executor dask; without it a local "
                        "cluster is started. Every worker must read the ratings file at the same path.",
    rich_help_panel="Execution", show_default=False)]


def executor_options() -> Callable[[F], F]:
    """Give the decorated command ``--executor`` and ``--scheduler``, collected into its ``cluster: ClusterChoice``
    parameter."""
    flags = [("executor", ExecutorOpt, ExecutorKind.LOCAL), ("scheduler", SchedulerOpt, None)]
    return record_options("cluster", flags, lambda values: ClusterChoice(values.get("executor", ExecutorKind.LOCAL),
                                                                         values.get("scheduler")))


def read_partitioned(file: Path, inputs: Any, client: Any) -> Any:
    """FILE (a Parquet file, directory or glob) read onto the Dask cluster of ``client``: a
    :class:`~stableval.data.partitioned.PartitionedTable`."""
    from stableval.data.partitioned import PartitionedTable

    if inputs.importer is not None:
        raise typer.BadParameter(f"--executor dask reads Parquet only, not a {inputs.importer} export; convert it "
                                 f"first with stableval convert {inputs.importer}", param_hint=CLI_FLAGS["importer"])
    if inputs.format not in (None, "parquet"):
        raise typer.BadParameter(f"--executor dask reads Parquet only, not {inputs.format}; convert the file with "
                                 "stableval convert", param_hint=CLI_FLAGS["format"])
    for name in ("merge_levels", "bins"):
        if getattr(inputs, name, None) is not None:
            raise typer.BadParameter("--executor dask reads the labels as stored; recode them in memory or write "
                                     "the recoded levels to Parquet first", param_hint=CLI_FLAGS[name])
    return PartitionedTable.read(file, client, inputs)


def read_table(file: Path, inputs: Any, dask: Any, rater_info: Path | None = None,
               raters: RaterKinds = RaterKinds.ALL) -> Any:
    """FILE as a table of judgments: on the Dask cluster of ``dask`` (:meth:`ClusterChoice.session`; a
    :class:`~stableval.data.partitioned.PartitionedTable`), else in memory with only ``--raters``' judgments
    (:func:`read_chosen_raters`). The analyses take either."""
    if dask is not None:
        return read_partitioned(file, inputs, dask.client)
    return read_chosen_raters(file, inputs, rater_info, raters)
