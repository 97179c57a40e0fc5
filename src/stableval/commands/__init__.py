"""Sub-commands of ``stableval``: one module per command (or command group), each with ``register(app)``, listed once
in :data:`COMMANDS`.

To add a command, write ``stableval/commands/NAME.py`` with ``def register(app: typer.Typer) -> None`` (which adds
the command: ``app.command()(my_command)``) and add one line to :data:`COMMANDS` where ``stableval --help`` should
list it: ``"my-command": Listed("NAME", "The first paragraph of its help.")``. A command that reads ratings takes
its input flags from :func:`stableval.commands.common.input_options` and its method flags from
:func:`~stableval.commands.common.method_options`, and writes its result with :func:`stableval.commands.output.emit`
(see CONTRIBUTING.md).

A command's module is imported only when that command runs or shows its help (:class:`LazyGroup`), so
``stableval --help`` and a mistyped command answer at once without numpy or pandas: keep heavy imports inside the
command functions.

>>> list(COMMANDS)[:3], COMMANDS["demo"].module
(['score', 'demo', 'stability'], 'score')
"""

from __future__ import annotations

import functools
import importlib
import inspect
import os
import sys
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

import typer
from typer.core import TyperCommand, TyperGroup

__all__ = ["COMMANDS", "Group", "LazyGroup", "Listed", "load_command", "register_all", "tidy_help", "tidy_text"]


class Listed(NamedTuple):
    """A command as ``stableval --help`` lists it: the module of ``stableval.commands`` whose ``register(app)``
    adds it, the first paragraph of its help (a test checks that the command's own help starts with it) and the
    optional extra it needs (:data:`stableval.extras.EXTRAS`), checked before it runs."""

    module: str
    summary: str
    extra: str | None = None


#: every command of ``stableval``, in ``stableval --help`` order (``score`` adds ``score`` and ``demo``; ``nrp`` adds
#: a group; ``export`` adds ``export`` and the ``portal`` group, declared in ``portal``, with its ``export``)
COMMANDS: dict[str, Listed] = {
    "score": Listed("score", "Score every agent under MV, Dawid–Skene and STABLEVAL, with bootstrap CIs and rank "
                             "intervals."),
    "demo": Listed("score", "Score the bundled MT-Bench expert votes (turn 1, CC BY 4.0): the whole pipeline in one "
                            "command."),
    "stability": Listed("stability", "Ranking stability: Kendall tau-b between the all-rater ranking and rankings "
                                     "from random rater subsets."),
    "diagnose": Listed("diagnose", "Rater and item diagnostics from the fitted confusion matrices and posteriors."),
    "agreement": Listed("agreement", "Inter-rater agreement per response: unanimous and pairwise agreement, "
                                     "Krippendorff's alpha (nominal, ordinal, interval), Fleiss' kappa, Gwet's AC1 "
                                     "and Cohen's kappa per rater pair, with bootstrap CIs."),
    "reliability": Listed("reliability", "Reliability of every evaluator against QC: matches with QC over the items "
                                         "neither flagged nor skipped, flag-mismatch %, total items, a Wilson "
                                         "interval; pooled overall and the share of items QC flagged."),
    "convert": Listed("convert", "Convert a public rating dataset, or a tool's export, into a ratings file."),
    "mt-bench": Listed("mt_bench", "Score the MT-Bench human votes under every vote mapping of the STABLEVAL "
                                   "paper's appendix C (baseline, drop-ties, tie-as-win, tie-as-loss, tie-0.25, "
                                   "tie-0.75): one table of agents × mapping × method, and per mapping the headline "
                                   "method against majority vote (correlation, largest change, rank changes)."),
    "simulate": Listed("simulate", "Simulate a rating study with known truth: agents of given quality, a mixed rater "
                                   "population (reliable, strict, lenient, adversarial), hard responses and a sparse "
                                   "design."),
    "ablate": Listed("ablate", "Run the ablation grid: every setting of every sweep, many simulated studies each, "
                               "scored by MV, Dawid–Skene (hard) and STABLEVAL; reports MSE against the true scores, "
                               "ranking accuracy, Kendall tau and ranking stability under rater subsampling, with 95% "
                               "CIs over trials."),
    "rater-bootstrap": Listed("rater_bootstrap", "Accuracy of each model against bootstrapped ground truths: per "
                                                 "item, draw k ratings with replacement, aggregate, score; mean and "
                                                 "interval over draws."),
    "medqa": Listed("studies", "Relabeled MedQA: share of questions excluded for missing information, label errors "
                               "and multiple correct answers, and each model's accuracy (predictions: CSV with "
                               "qid,answer) after each exclusion."),
    "ddx": Listed("studies", "Dermatology DDx: top-k accuracy of N × C score matrices (.npy or numpy.savetxt text) "
                             "against ground truths sampled by a ranking aggregation method (rater bootstrap, or "
                             "posterior samples), by risk category, per-case plausibility and annotation certainty; "
                             "or a comparison of methods, or conformal prediction sets."),
    "pairwise": Listed("pairwise", "Bradley–Terry ratings (Elo-like scale) with bootstrap CIs, rank intervals, win "
                                   "rates and position bias."),
    "plan": Listed("plan", "Plan the human budget from a pilot (people on some responses, LLM judges on all): how "
                           "many more people-rated responses each agent needs to reach --target-width or "
                           "--target-correct, people only, with PPI++ on a random sample, and with active selection "
                           "(the judges' least certain responses first)."),
    "report": Listed("report", "Write one self-contained HTML report (inline figures, printable) of every analysis "
                               "of FILE."),
    "plot": Listed("report", "Draw one figure of the report to an image file; 'ddx-case' draws one case of a DDx "
                             "selectors FILE (its raters' partial rankings and the aggregated plausibility)."),
    "serve": Listed("serve", "Run the evaluation portal: experts compare and rate two models' answers per "
                             "question.", extra="portal"),
    "export": Listed("export", "Export the portal's confirmed judgments (one row per rater × item × criterion) as "
                               "stableval annotation or pairwise tables, without the web server; same as 'stableval "
                               "portal export'. Score one criterion with 'stableval score FILE --levels 1,2,3,4,5'.",
                     extra="portal"),
    "nrp": Listed("nrp", "NRP: score generated answers by their rank among human-judged documents (Heineking et al. "
                         "2024); choose the ranker; check agreement with experts.", extra="nrp"),
    "portal": Listed("export", "Portal admin tasks without the web server: migrate, tracks, question import, "
                               "invites, export.", extra="portal"),
}


#: a command as typer builds it (typer's click classes: its own copy of click in typer ≥ 0.17)
Command = Any


@functools.cache
def _registered(module: str) -> TyperGroup:
    """The click commands that ``stableval.commands.MODULE.register`` adds, built once per process."""
    app = typer.Typer()
    importlib.import_module(f"stableval.commands.{module}").register(app)
    group = typer.main.get_group(app)
    for command in group.commands.values():
        tidy_help(command)
    return group


def load_command(name: str) -> Command:
    """The click command ``name`` of :data:`COMMANDS`, its module imported now; ``KeyError`` for an unknown name."""
    module = COMMANDS[name].module
    command = _registered(module).commands.get(name)
    if command is None:
        raise LookupError(f"stableval.commands.{module}.register adds no command {name!r}")
    return command


class _Commands(Mapping[str, Command]):
    """The commands of :data:`COMMANDS` as click's ``Group.commands`` mapping, each module imported on first use."""

    def __getitem__(self, name: str) -> Command:
        if name not in COMMANDS:
            raise KeyError(name)
        return load_command(name)

    def __iter__(self) -> Iterator[str]:
        return iter(COMMANDS)

    def __len__(self) -> int:
        return len(COMMANDS)


class Group(TyperGroup):
    """A command group whose ``--help`` flag, when not given, is ``False`` rather than ``None``: typer then has no
    value to coerce, so running a sub-command or mistyping its flags does not import pydantic (typer's coercion,
    a tenth of a CPU-second). ``stableval`` and its groups (``nrp``, ``portal``) are built with it."""

    def get_help_option(self, ctx: Any) -> Any:
        option = super().get_help_option(ctx)
        if option is not None:
            option.default = False
        return option


class LazyGroup(Group):
    """The ``stableval`` group: it lists :data:`COMMANDS` and imports a command's module only when that command
    runs or shows its help; ``stableval --help`` lists the declared summaries without building any command."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.commands = _Commands()  # type: ignore[assignment]
        self._listing = False

    def list_commands(self, ctx: Any) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: Any, cmd_name: str) -> Command | None:
        if cmd_name not in COMMANDS:
            return None
        if self._listing:  # the list in --help: the name and summary suffice
            return TyperCommand(cmd_name, help=COMMANDS[cmd_name].summary)
        return load_command(cmd_name)

    def resolve_command(self, ctx: Any, args: list[str]) -> tuple[str | None, Command | None,
                                                                            list[str]]:
        """The command to run; before it runs (not for its ``--help``), a missing extra ends the run with the one
        line that installs it (exit 1)."""
        name, command, rest = super().resolve_command(ctx, args)
        showing_help = any(arg in ctx.help_option_names for arg in rest) or (
            not rest and isinstance(command, TyperGroup))
        extra = COMMANDS[name].extra if name in COMMANDS else None
        if extra is not None and not showing_help:
            from stableval.extras import require_extra

            try:
                require_extra(extra, f"stableval {name}")
            except Exception as error:
                from stableval.commands.common import fail

                raise fail(str(error)) from None
        return name, command, rest

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False


def tidy_help(command: Command) -> None:
    """Give ``command`` (and a group's commands) help without hard line breaks inside a paragraph
    (:func:`tidy_text`): typer keeps a docstring's line breaks, which break sentences mid-line in ``--help``."""
    command.help = tidy_text(command.help) if command.help else command.help
    for sub in getattr(command, "commands", {}).values():
        tidy_help(sub)


def tidy_text(text: str) -> str:
    r"""A docstring as help: paragraphs kept, the line breaks inside each joined; a paragraph whose lines all start
    with ``-`` or ``*`` (a list) is kept as written.

    >>> tidy_text('''Score every agent.
    ...
    ...     --raters human scores from one kind
    ...     of rater only.''')
    'Score every agent.\n\n--raters human scores from one kind of rater only.'
    >>> tidy_text("Kinds:\n\n- one\n- two")
    'Kinds:\n\n- one\n- two'
    """
    paragraphs = inspect.cleandoc(text).split("\n\n")
    return "\n\n".join(paragraph if _is_list(paragraph) else " ".join(line.strip() for line in paragraph.splitlines())
                       for paragraph in paragraphs)


def _is_list(paragraph: str) -> bool:
    lines = paragraph.splitlines()
    return len(lines) > 1 and all(line.lstrip().startswith(("-", "*", "\b")) for line in lines)


def register_all(app: typer.Typer) -> None:
    """Make ``app`` (the ``stableval`` command, whose group is a :class:`LazyGroup`) ready: on/off flags get no
    ``<bool>`` type hint in ``--help``, and third-party progress bars (tqdm: model downloads, embeddings) stay off
    when stderr is not a terminal. The commands themselves are loaded when used."""
    _flags_without_type_hint()
    if not sys.stderr.isatty():
        os.environ.setdefault("TQDM_DISABLE", "1")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")


def _flags_without_type_hint() -> None:
    """typer shows ``<bool>`` beside on/off flags such as ``--help`` and ``--quick``: say nothing there."""
    from typer.core import TyperOption

    shown = getattr(TyperOption, "display_type_rich", None)
    if shown is None or getattr(shown, "_stableval", False):
        return

    def display_type_rich(self: TyperOption, ctx: object) -> str | None:
        return None if self.is_flag else shown(self, ctx)

    display_type_rich._stableval = True  # type: ignore[attr-defined]
    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]
