"""How the command line spells each input option and column role: one table, read by the data layer's messages
and by the commands' flag declarations alike. No imports, so ``stableval --help`` can read it cheaply.

>>> CLI_FLAGS["item"], CLI_FLAGS["format"]
('--item-col', '--input-format')
"""

from __future__ import annotations

__all__ = ["CLI_FLAGS"]

#: The command-line flag of each input option (``levels``, ``credit``, ``duplicates``, ``format``,
#: ``default_agent``) and of each column role (``item`` → ``--item-col``, ...): the only place the data layer
#: spells a flag. Its messages say what to pass both ways, e.g. ``columns={'item': NAME} (CLI: --item-col NAME)``;
#: the command line declares its input flags from this same table (``stableval.commands.common``), so the two
#: cannot drift apart.
CLI_FLAGS: dict[str, str] = {
    "levels": "--levels",
    "credit": "--credit",
    "duplicates": "--duplicates",
    "format": "--input-format",
    "default_agent": "--default-agent",
    "item": "--item-col",
    "agent": "--agent-col",
    "rater": "--rater-col",
    "label": "--label-col",
    "agent_a": "--agent-a-col",
    "agent_b": "--agent-b-col",
    "winner": "--winner-col",
    "criterion": "--criterion-col",
    "weight": "--weight-col",
    "flag": "--flag-col",
    "skip": "--skip-col",
}
