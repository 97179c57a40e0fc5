"""``stableval simulate``: write a synthetic annotation table and its truth (agents, responses, raters)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from stableval.commands.common import CreditOpt, SeedOpt, bad_input_exits
from stableval.wording import plural

SIM_PANEL = "Study design"
RATER_PANEL = "Rater population"


def register(app: typer.Typer) -> None:
    app.command()(simulate)


def _numbers(text: str, option: str, count: int | None = None) -> tuple[float, ...]:
    try:
        values = tuple(float(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise typer.BadParameter(f"{text!r} is not a comma-separated list of numbers", param_hint=option) from None
    if count is not None and len(values) != count:
        raise typer.BadParameter(f"{text!r}: expected {count} comma-separated numbers", param_hint=option)
    return values


def _check_suffix(path: Path) -> None:
    """Refuse an output file whose suffix names no table format (checked before anything is simulated)."""
    from stableval.commands.output import check_output_path
    from stableval.data.files import FORMATS, output_format

    try:
        output_format(path)
    except ValueError:
        raise typer.BadParameter(f"cannot tell the format of {path.name!r}; allowed suffixes: "
                                 f"{', '.join(FORMATS)}", param_hint="--output") from None
    check_output_path(path)


def simulate(
    output: Annotated[Path, typer.Option("--output", "-o", help="Annotation table to write (.csv, .tsv, .jsonl or "
                                         ".parquet). The truth goes beside it: NAME.agents.csv (true scores), "
                                         "NAME.responses.csv (true levels), NAME.raters.csv (rater types).",
                                         show_default=False)],
    qualities: Annotated[str, typer.Option("--qualities", help="One quality in (0, 1) per agent; a response's "
                                           "latent level is Binomial(K-1, quality).", rich_help_panel=SIM_PANEL)
                         ] = "0.85,0.8,0.7,0.55,0.35,0.2",
    agents: Annotated[str | None, typer.Option("--agents", help="Agent names, one per quality (default agent1, "
                                               "agent2, ...).", rich_help_panel=SIM_PANEL)] = None,
    items: Annotated[int, typer.Option("--items", min=1, help="Items per agent (every agent answers every item).",
                                       rich_help_panel=SIM_PANEL)] = 100,
    raters: Annotated[int, typer.Option("--raters", min=2, help="Size of the rater pool.",
                                        rich_help_panel=SIM_PANEL)] = 30,
    labels_per_response: Annotated[int, typer.Option("--labels-per-response", "-L", min=1,
                                                     help="Judgments per response, by distinct raters drawn "
                                                          "uniformly from the pool.", rich_help_panel=SIM_PANEL)] = 5,
    levels: Annotated[str, typer.Option("--levels", help="Number of ordered levels K, or their names worst first "
                                        "(e.g. incorrect,partial,correct).", rich_help_panel=SIM_PANEL)] = "3",
    credit: CreditOpt = None,
    strict: Annotated[float, typer.Option("--strict", min=0.0, max=1.0, help="Fraction of strict raters (move "
                                          "reports one level down).", rich_help_panel=RATER_PANEL)] = 0.1,
    lenient: Annotated[float, typer.Option("--lenient", min=0.0, max=1.0, help="Fraction of lenient raters (move "
                                           "reports one level up).", rich_help_panel=RATER_PANEL)] = 0.1,
    adversarial: Annotated[float, typer.Option("--adversarial", min=0.0, max=1.0, help="Fraction of adversarial "
                                               "raters.", rich_help_panel=RATER_PANEL)] = 0.1,
    adversarial_mode: Annotated[str, typer.Option("--adversarial-mode", help="reverse (mirror the scale) or "
                                                  "random (uniform labels).", rich_help_panel=RATER_PANEL)
                                ] = "reverse",
    accuracy: Annotated[str, typer.Option("--accuracy", help="Range LOW,HIGH of reliable accuracy, drawn per "
                                          "rater.", rich_help_panel=RATER_PANEL)] = "0.65,0.95",
    neighbour: Annotated[float, typer.Option("--neighbour", min=0.0, max=1.0, help="Share of a reliable rater's "
                                             "errors that go to adjacent levels.", rich_help_panel=RATER_PANEL)
                         ] = 0.8,
    shift: Annotated[str, typer.Option("--shift", help="Range LOW,HIGH of the probability that a strict/lenient "
                                       "rater moves a report.", rich_help_panel=RATER_PANEL)] = "0.5,0.9",
    hard: Annotated[float, typer.Option("--hard", min=0.0, max=1.0, help="Probability that a response is hard.",
                                        rich_help_panel=RATER_PANEL)] = 0.05,
    hard_noise: Annotated[float, typer.Option("--hard-noise", min=0.0, max=1.0, help="Probability that a judgment "
                                              "of a hard response is a uniformly random level.",
                                              rich_help_panel=RATER_PANEL)] = 1.0,
    seed: SeedOpt = 0,
) -> None:
    """Simulate a rating study with known truth: agents of given quality, a mixed rater population
    (reliable, strict, lenient, adversarial), hard responses and a sparse design.

    The table is a normal annotation table (item, agent, rater, label), so every stableval command runs on it;
    NAME.agents.csv holds each agent's true score (the exact expected credit of its latent levels).
    """
    from stableval.simulate import SimulationConfig, simulate as draw

    _check_suffix(output)
    level_text = levels.strip()
    if level_text.isdigit():
        n_levels, level_names = int(level_text), None
    else:
        level_names = tuple(part.strip() for part in level_text.split(",") if part.strip())
        n_levels = len(level_names)
    with bad_input_exits():
        config = SimulationConfig(
            qualities=_numbers(qualities, "--qualities"),
            agents=tuple(a.strip() for a in agents.split(",")) if agents else None,
            items=items, raters=raters, labels_per_response=labels_per_response, levels=n_levels,
            level_names=level_names, credit=_numbers(credit, "--credit") if credit else None,
            accuracy=_numbers(accuracy, "--accuracy", 2), neighbour=neighbour,  # type: ignore[arg-type]
            strict=strict, lenient=lenient, adversarial=adversarial,
            shift=_numbers(shift, "--shift", 2), adversarial_mode=adversarial_mode,  # type: ignore[arg-type]
            hard=hard, hard_noise=hard_noise,
        )
    sim = draw(config, seed)
    _write(sim, config, output, seed)


def _write(sim: Any, config: Any, output: Path, seed: int) -> None:
    """The table (format by suffix), its truth beside it (NAME.agents/responses/raters.csv), and a summary."""
    from stableval.commands.output import say, write_failed
    from stableval.data.files import write_frame

    stem = output.with_suffix("")
    truth = {"agents": sim.agent_truth(), "responses": sim.response_truth(), "raters": sim.rater_truth()}
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        write_frame(sim.frame(), output)
        for name, part in truth.items():
            write_frame(part, Path(f"{stem}.{name}.csv"))
    except OSError as error:
        raise write_failed(error.filename or output, error) from None
    types = truth["raters"]["type"].value_counts()
    say(f"wrote {output}: {plural(sim.n_judgments, 'judgment')} of {plural(sim.n_responses, 'response')} "
        f"({plural(config.items, 'item')} × {plural(config.n_agents, 'agent')}) by {plural(config.raters, 'rater')} "
        f"({', '.join(f'{types.get(t, 0)} {t}' for t in ('reliable', 'strict', 'lenient', 'adversarial'))});"
        f" {int(sim.hard.sum())} hard responses; seed {seed}")
    say(f"truth: {stem}.agents.csv, {stem}.responses.csv, {stem}.raters.csv")
    say("true agent scores (exact expected credit; realised mean credit of the drawn levels):")
    for row in truth["agents"].itertuples(index=False):
        say(f"  {row.agent}: {row.true_score:.4f} (realised {row.sample_score:.4f})")
