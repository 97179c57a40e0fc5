"""``stableval simulate``: write a synthetic annotation table and its truth (agents, responses, raters)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from stableval.commands.common import CreditOpt, SeedOpt, bad_input_exits
from stableval.wording import plural

SIM_PANEL = "Study design"
RATER_PANEL = "Rater population"
JUDGE_PANEL = "LLM judges"


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
    judges: Annotated[int, typer.Option("--judges", min=0, help="LLM-judge raters who rate every response (rater "
                                        "names judge1, judge2, ...; a rater_kind and a words column are added).",
                                        rich_help_panel=JUDGE_PANEL)] = 0,
    judge_accuracy: Annotated[str, typer.Option("--judge-accuracy", help="Range LOW,HIGH of the judges' accuracy "
                                                "before their biases.", rich_help_panel=JUDGE_PANEL)] = "0.75,0.9",
    judge_leniency: Annotated[float, typer.Option("--judge-leniency", min=0.0, max=1.0, help="Probability that a "
                                                  "judge moves a report one level up.", rich_help_panel=JUDGE_PANEL)
                              ] = 0.0,
    judge_family: Annotated[str | None, typer.Option("--judge-family", help="Agents of the judges' own family "
                                                     "(comma-separated), favoured by --judge-self-preference.",
                                                     rich_help_panel=JUDGE_PANEL)] = None,
    judge_self_preference: Annotated[float, typer.Option("--judge-self-preference", min=0.0, max=1.0,
                                                         help="Extra probability of moving up a report on an "
                                                              "answer of the judges' family.",
                                                         rich_help_panel=JUDGE_PANEL)] = 0.0,
    judge_length_bias: Annotated[float, typer.Option("--judge-length-bias", min=0.0, max=1.0, help="Extra "
                                                     "probability of moving a report up, times the answer's length "
                                                     "quantile.", rich_help_panel=JUDGE_PANEL)] = 0.0,
    judge_noise: Annotated[float, typer.Option("--judge-noise", min=0.0, max=1.0, help="Probability that a "
                                               "judge's report is a uniformly random level.",
                                               rich_help_panel=JUDGE_PANEL)] = 0.0,
    human_share: Annotated[float, typer.Option("--human-share", min=0.0, max=1.0, help="With --judges: share of "
                                               "the responses people rate (at random; the rest only judges rate).",
                                               rich_help_panel=JUDGE_PANEL)] = 1.0,
    seed: SeedOpt = 0,
    force: Annotated[bool, typer.Option("--force", help="Overwrite truth files that belong to another table of the "
                                        "same name (NAME.csv beside NAME.parquet).")] = False,
) -> None:
    """Simulate a rating study with known truth: agents of given quality, a mixed rater population
    (reliable, strict, lenient, adversarial), hard responses and a sparse design.

    The table is a normal annotation table (item, agent, rater, label), so every stableval command runs on it;
    NAME.agents.csv holds each agent's true score (the exact expected credit of its latent levels).
    """
    from stableval.simulate import SimulationConfig, simulate as draw

    _check_suffix(output)
    _check_truth_owner(output, force)
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
    if judges:
        from stableval.simulate import JudgeConfig, simulate_judged

        with bad_input_exits():
            low, high = _numbers(judge_accuracy, "--judge-accuracy", 2)
            judged = JudgeConfig(judges=judges, accuracy=(low, high),
                                 leniency=judge_leniency, self_preference=judge_self_preference,
                                 family=tuple(a.strip() for a in judge_family.split(",")) if judge_family else (),
                                 length_bias=judge_length_bias, noise=judge_noise, human_share=human_share)
        study = simulate_judged(config, judged, seed)
        _write(study.simulation, config, output, seed, frame=study.frame())
        typer.echo(f"LLM judges: {plural(judges, 'judge')} on every response; people keep their judgments on "
                   f"{int(study.people_rated.sum()):,} of {study.simulation.n_responses:,} responses "
                   f"({plural(len(study.frame()), 'judgment')} written)", err=True)
        return
    if human_share < 1:
        raise typer.BadParameter("needs --judges (the responses people do not rate are rated by judges only)",
                                 param_hint="--human-share")
    sim = draw(config, seed)
    _write(sim, config, output, seed)


def truth_paths(output: Path) -> list[Path]:
    """Where the truth of the table ``output`` goes: NAME.agents.csv, NAME.responses.csv, NAME.raters.csv.

    >>> [path.name for path in truth_paths(Path("runs/study.parquet"))]
    ['study.agents.csv', 'study.responses.csv', 'study.raters.csv']
    """
    stem = output.with_suffix("")
    return [Path(f"{stem}.{name}.csv") for name in ("agents", "responses", "raters")]


def _check_truth_owner(output: Path, force: bool) -> None:
    """Refuse (usage error) to overwrite truth files that another table of the same name wrote (``study.csv``
    beside the ``study.parquet`` being written), unless ``force``: that table would be left with another run's
    truth."""
    from stableval.data.files import FORMATS

    if force:
        return
    stem = output.with_suffix("")
    owners = [stem.with_suffix(suffix) for suffix in FORMATS
              if stem.with_suffix(suffix) != output and stem.with_suffix(suffix).exists()]
    existing = [path for path in truth_paths(output) if path.exists()]
    if owners and existing:
        raise typer.BadParameter(f"{existing[0]} is the truth of {owners[0]}, another run; give another --output "
                                 "name, or --force to overwrite it", param_hint="--output")


def _write(sim: Any, config: Any, output: Path, seed: int, frame: Any = None) -> None:
    """The table (format by suffix; ``frame`` in place of the simulation's), its truth beside it
    (NAME.agents/responses/raters.csv), and a summary."""
    from stableval.commands.output import say, write_failed
    from stableval.data.files import write_frame

    stem = output.with_suffix("")
    truth = {"agents": sim.agent_truth(), "responses": sim.response_truth(), "raters": sim.rater_truth()}
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        write_frame(sim.frame() if frame is None else frame, output)
        for part, path in zip(truth.values(), truth_paths(output), strict=True):
            write_frame(part, path)
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
