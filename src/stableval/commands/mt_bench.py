"""``stableval mt-bench PATH``: the MT-Bench human votes under the six vote mappings of the paper's appendix C, in
one table (agents × mapping × method) with the STABLEVAL − MV comparison per mapping."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from stableval.commands.common import (
    MethodSelection,
    Output,
    SeedOpt,
    bad_input_exits,
    bootstrap_flag,
    method_options,
    output_options,
)
from stableval.data.options import DuplicatePolicy
from stableval.datasets.registry import OPTIONS
from stableval.wording import plural

#: the vote mappings, as the dataset registry declares them (read without pandas)
MAPPING_NAMES: tuple[str, ...] = OPTIONS["mapping"].choices or ()


def _paper_pair() -> str:
    """The default methods: the pair the paper's tables compare — the registry's first method (majority vote) and
    its primary one (STABLEVAL)."""
    from stableval.aggregate.registry import REGISTRY, method_names

    primary = [name for name, method in REGISTRY.items() if method.primary]
    return ",".join(dict.fromkeys([method_names()[0], *primary[:1]]))


def register(app: typer.Typer) -> None:
    app.command("mt-bench")(mt_bench)


def _mappings(text: str) -> list[str]:
    """``all`` or comma-separated mapping names → the mappings, in the registry's order (usage error otherwise)."""
    parts = [part.strip().lower() for part in text.split(",") if part.strip()]
    if not parts or parts == ["all"]:
        return list(MAPPING_NAMES)
    unknown = [part for part in parts if part not in MAPPING_NAMES]
    if unknown:
        raise typer.BadParameter(f"{unknown[0]!r}; allowed: all, {', '.join(MAPPING_NAMES)}", param_hint="--mapping")
    return [name for name in MAPPING_NAMES if name in parts]


@method_options(_paper_pair())
@output_options()
def mt_bench(
    path: Annotated[Path, typer.Argument(help="MT-Bench human votes: mt_bench_human_votes_available.jsonl (fields "
                                              "question_id, turn, model_a, model_b, winner, judge) or its folder.",
                                         show_default=False)],
    methods: MethodSelection,
    out: Output,
    mapping: Annotated[str, typer.Option("--mapping", help="all, or comma-separated vote mappings: "
                                         + ", ".join(MAPPING_NAMES) + ".")] = "all",
    turns: Annotated[str, typer.Option("--turns", help=OPTIONS["turns"].help)] = "1",
    duplicates: Annotated[DuplicatePolicy, typer.Option("--duplicates", help="The same vote given twice by one "
                                                        "judge: keep (default), first, last or error.")
                          ] = DuplicatePolicy.KEEP,
    bootstrap: Annotated[int, bootstrap_flag("Bootstrap replicates per mapping (intervals in the JSON output; "
                                             "0 = point scores only).")] = 0,
    seed: SeedOpt = 0,
) -> None:
    """Score the MT-Bench human votes under every vote mapping of the STABLEVAL paper's appendix C (baseline,
    drop-ties, tie-as-win, tie-as-loss, tie-0.25, tie-0.75): one table of agents × mapping × method, and per
    mapping the headline method against majority vote (correlation, largest change, rank changes)."""
    from stableval.datasets.mt_bench import MAPPINGS, TURN_COVERAGE, load_mt_bench
    from stableval.evaluate.across import score_across

    chosen_mappings = _mappings(mapping)
    assert OPTIONS["turns"].parse is not None
    try:
        chosen_turns = OPTIONS["turns"].parse(turns)
    except ValueError as error:
        raise typer.BadParameter(str(error), param_hint="--turns") from None
    with bad_input_exits():
        tables = {name: load_mt_bench(path, mapping=name, turns=chosen_turns, duplicates=duplicates.value)
                  for name in chosen_mappings}
        first = next(iter(tables.values()))
        notes = [f"turn(s) {', '.join(map(str, chosen_turns))}: "
                 + "; ".join(TURN_COVERAGE[t] for t in chosen_turns),
                 *(f"{name}: {MAPPINGS[name].description}" for name in chosen_mappings)]
        result = score_across(tables, methods.chosen(seed=seed), bootstrap=bootstrap, seed=seed,
                              title=f"{first.source}: MT-Bench human votes, {plural(first.n_agents, 'agent')}, "
                                    f"{plural(first.n_items, 'item')}, {plural(first.n_raters, 'judge')}",
                              notes=notes, progress=True)
    out.emit(result)
