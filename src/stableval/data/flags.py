"""How the command line spells each input option and column role: one table, read by the commands' flag
declarations and by the command line's spelling of the option an :class:`~stableval.errors.InputError` names
(``stableval.commands.common.flag_spelling``). No imports, so ``stableval --help`` can read it cheaply.

>>> CLI_FLAGS["item"], CLI_FLAGS["format"]
('--item-col', '--input-format')
"""

from __future__ import annotations

__all__ = ["CLI_FLAGS"]

#: The command-line flag of each input option (``levels``, ``credit``, ``duplicates``, ``format``,
#: ``default_agent``, ``importer``, ``merge_levels``, ``bins``) and of each column role (``item`` →
#: ``--item-col``, ...). The data layer's
#: messages name options in Python terms only (``InputError.option``, e.g. ``columns.item``); the command line
#: declares its input flags from this table and spells those options with it, so the two cannot drift apart.
CLI_FLAGS: dict[str, str] = {
    "levels": "--levels",
    "credit": "--credit",
    "duplicates": "--duplicates",
    "format": "--input-format",
    "importer": "--from",
    "default_agent": "--default-agent",
    "merge_levels": "--merge-levels",
    "bins": "--bins",
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
    "flag_reason": "--flag-reason-col",
}
