"""One declared option: name, type, default, help and constraint, written once and read everywhere.

The shared shape of every user-settable value that is not an input flag: the dataset loaders' options
(:data:`stableval.datasets.registry.OPTIONS`), the portal's track settings, the aggregation methods'
hyper-parameters and the NRP rankers' options. Command-line flags, web forms, ``--help`` texts, docs tables and
validation are all derived from the declaration (the idea of ir_measures' ``ParamInfo`` and scikit-learn's
``_parameter_constraints``), so a default or a bound is never written twice.

>>> rounds = Option("rounds", int, "Passes over the data.", default=3, ge=1)
>>> rounds.cli, rounds.title, rounds.constraint
('--rounds', 'Rounds', 'an integer ≥ 1')
>>> rounds.from_text("5")
5
>>> rounds.check(0)
Traceback (most recent call last):
...
ValueError: rounds=0: allowed an integer ≥ 1
>>> Option("mode", str, "How.", default="fast", choices=("fast", "exact")).check("slow")
Traceback (most recent call last):
...
ValueError: mode='slow': allowed one of fast, exact
>>> prior = Option("prior", float, "Strength.", default=1.0, ge=1, choices=("auto",))  # a number, or a word
>>> prior.constraint, prior.from_text("auto"), prior.from_text("2")
('a number ≥ 1, or one of auto', 'auto', 2.0)
>>> Option("init", str, "Start.", choices=("paper", "soft"), aliases=(("majority", "paper"),)).check("majority")
'paper'
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["ALLOW_LARGE", "MAX_ITERATIONS", "MAX_SEED", "MAX_STARTS", "Option", "beyond_size_bound", "check_all",
           "large_allowed", "memory_text", "option_table"]

#: The environment variable that lifts every size bound (``STABLEVAL_ALLOW_LARGE=1 stableval score ... -B 1000000``):
#: replicates, random starts, EM iterations, simulated studies and grid trials. The bounds only guard against a typo
#: of a few zeros; a run that really needs more sets it. Read when a value is checked, so it reaches the command
#: line, config files and the Python API alike. Bounds that are not sizes (a seed's) stay.
ALLOW_LARGE = "STABLEVAL_ALLOW_LARGE"


def large_allowed() -> bool:
    """True when :data:`ALLOW_LARGE` is set to anything but empty, ``0``, ``false``, ``no`` or ``off``.

    >>> import os; os.environ.pop(ALLOW_LARGE, None) and None; large_allowed()
    False
    """
    return os.environ.get(ALLOW_LARGE, "").strip().lower() not in ("", "0", "false", "no", "off")


def beyond_size_bound(cost: str, bound: int | None = None) -> str:
    """The end of every refusal of a size above its bound: what the value asked would cost, the bound (unless the
    message already gives it) and the override.

    >>> beyond_size_bound("100000 starts take 100× as long as 1000", 1000)
    '100000 starts take 100× as long as 1000; the limit is 1,000; set STABLEVAL_ALLOW_LARGE=1 to run it anyway'
    """
    limit = "" if bound is None else f"; the limit is {bound:,}"
    return f"{cost}{limit}; set {ALLOW_LARGE}=1 to run it anyway"


def memory_text(nbytes: float) -> str:
    """A size in bytes as people read it.

    >>> memory_text(8 * 10**7), memory_text(48e9)
    ('76.3 MiB', '44.7 GiB')
    """
    return f"{nbytes / 2**20:,.1f} MiB" if nbytes < 2**30 else f"{nbytes / 2**30:,.1f} GiB"

#: The largest random seed every seeded step takes (numpy's legacy ``RandomState``, which MACE uses, stops at
#: 2**32 - 1); ``--seed`` and every method's ``seed`` parameter are bounded by it.
MAX_SEED = 2**32 - 1
#: The most random starts (restarts) and EM iterations a method's parameters allow: a typo of a few zeros would run for
#: hours, so it is refused before any work.
MAX_STARTS = 1000
#: EM stops at convergence long before this; the cap only stops a fit that never converges (crowd-kit users pass
#: n_iter=100500 in crowd-kit's own tests, so the cap sits above that).
MAX_ITERATIONS = 1_000_000


def _number(value: float) -> str:
    """An integer in full (``1000000``, a seed bound), any other number short (``1e+06``, ``0.5``)."""
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else f"{value:g}"


@dataclass(frozen=True)
class Option:
    """One option.

    Attributes:
        name: the Python keyword (``min_annotators``, ``qc_threshold``).
        kind: ``str``, ``int``, ``float``, ``bool`` or ``Path``: how text becomes a value.
        help: what it does, one or two sentences (no default: it is appended from ``default`` where shown).
        default: the value when not given (``None``: nothing, or the consumer's own default).
        choices: the values allowed, if they are a fixed list (for a number: the words allowed besides one).
        ge, gt, le, lt: numeric bounds (inclusive ``ge``/``le``, exclusive ``gt``/``lt``); a number must be finite
            unless a bound is infinite (``le=math.inf`` allows ``inf``).
        parse: turns text into the value (default: by ``kind``); it raises ``ValueError`` saying what is allowed.
        flag: the command-line spelling, if not ``--name-with-dashes`` (booleans: ``--on/--off``).
        label: a form's label, if not the name in words.
        none_ok: ``None`` is a valid value even when ``default`` is not ``None``.
        aliases: (word, value) pairs accepted for a value, such as old spellings (:meth:`check` returns the value).
        size_bound: ``le`` only guards against a typo of a few zeros (starts, iterations): a refusal says how many
            times the work of the bound the value asks, and :data:`ALLOW_LARGE` lifts it.
    """

    name: str
    kind: type
    help: str
    default: Any = None
    choices: tuple[str, ...] | None = None
    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    lt: float | None = None
    parse: Callable[[str], Any] | None = None
    flag: str | None = None
    label: str | None = None
    none_ok: bool = False
    aliases: tuple[tuple[str, Any], ...] = ()
    size_bound: bool = False

    @property
    def cli(self) -> str:
        """The command-line flag (``--min-annotators``)."""
        return self.flag or "--" + self.name.replace("_", "-")

    @property
    def title(self) -> str:
        """The label people read (``"Min annotators"``)."""
        return self.label or self.name.replace("_", " ").capitalize()

    @property
    def constraint(self) -> str:
        """What values are allowed, in words (``"a number in [0, 1]"``; ``""`` when anything of the kind is)."""
        if self.choices and self.kind not in (int, float):
            return "one of " + ", ".join(self.choices)
        number = self._number_constraint()
        return f"{number}, or one of {', '.join(self.choices)}" if self.choices else number

    def _number_constraint(self) -> str:
        noun = {int: "an integer", float: "a number", bool: "true or false", Path: "a path", str: "text"}.get(
            self.kind, self.kind.__name__)
        low = ("[", self.ge) if self.ge is not None else ("(", self.gt) if self.gt is not None else None
        high = ("]", self.le) if self.le is not None else (")", self.lt) if self.lt is not None else None
        if low and high:
            return f"{noun} in {low[0]}{_number(low[1])}, {_number(high[1])}{high[0]}"
        if low:
            return f"{noun} {'≥' if low[0] == '[' else '>'} {_number(low[1])}"
        if high:
            return f"{noun} {'≤' if high[0] == ']' else '<'} {_number(high[1])}"
        return noun if self.kind in (int, float, bool) else ""

    def check(self, value: Any) -> Any:
        """``value`` if it satisfies the declaration (an old spelling as its current value, a number as the
        declared kind), else ``ValueError`` naming the option, the value and what is allowed."""
        if value is None and (self.default is None or self.none_ok):
            return value
        value = dict(self.aliases).get(value, value) if isinstance(value, str) else value
        if self.choices is not None and (value in self.choices or self.kind not in (int, float)):
            if value not in self.choices:
                raise ValueError(f"{self.name}={value!r}: allowed {self.constraint}")
            return value
        if self.kind in (int, float):
            bad_type = isinstance(value, bool) or not isinstance(value, int | float) or (
                self.kind is int and not float(value).is_integer())
            if bad_type or (isinstance(value, float) and math.isnan(value)) or not self._in_bounds(float(value)):
                raise ValueError(f"{self.name}={value!r}: allowed {self.constraint}{self._beyond(value)}")
            return self.kind(value)
        if self.kind is bool and not isinstance(value, bool):
            raise ValueError(f"{self.name}={value!r}: allowed true or false")
        return value

    def _in_bounds(self, value: float) -> bool:
        if not math.isfinite(value) and value not in (self.ge, self.le):
            return False
        le = None if self.size_bound and large_allowed() else self.le
        return ((self.ge is None or value >= self.ge) and (self.gt is None or value > self.gt)
                and (le is None or value <= le) and (self.lt is None or value < self.lt))

    def _beyond(self, value: Any) -> str:
        """For a number above a size bound: what it asks and how to run it anyway (else nothing)."""
        if not (self.size_bound and self.le and isinstance(value, int | float) and math.isfinite(value)
                and value > self.le):
            return ""
        return "; " + beyond_size_bound(f"{_number(value)} would take about {value / self.le:,.0f}× as long as "
                                        f"{_number(self.le)}")

    def from_text(self, text: str) -> Any:
        """The value written as text (a flag, a form field, ``--param name=value``), parsed and checked."""
        if self.parse is not None:
            return self.check(self.parse(text))
        stripped = text.strip()
        if self.kind is bool:
            words = {"true": True, "yes": True, "1": True, "on": True,
                     "false": False, "no": False, "0": False, "off": False}
            if stripped.lower() not in words:
                raise ValueError(f"{self.name}={text!r}: allowed true or false")
            return words[stripped.lower()]
        if self.kind in (int, float):
            if stripped in (self.choices or ()) or stripped in dict(self.aliases):
                return self.check(stripped)
            try:
                number: int | float = int(stripped) if self.kind is int else float(stripped)
            except ValueError:
                raise ValueError(f"{self.name}={text!r}: allowed {self.constraint}") from None
            return self.check(number)
        if self.kind is Path:
            return Path(stripped)
        return self.check(stripped)

    def describe(self) -> str:
        """The help text with the constraint and default appended, for ``--help`` and docs tables."""
        extra = []
        if self.choices and self.kind not in (int, float):
            extra.append(f"Allowed: {', '.join(self.choices)}.")
        elif self.constraint and self.kind in (int, float):
            extra.append(f"Allowed: {self.constraint}.")
        if self.aliases:
            extra.append("Also accepted: " + ", ".join(f"{word} (= {value})" for word, value in self.aliases
                                                        if str(value) != word) + ".")
        if self.default is not None:
            extra.append(f"Default: {self.default}.")
        return " ".join([self.help, *extra])


def check_all(options: Iterable[Option], values: dict[str, Any]) -> dict[str, Any]:
    """Check every given value against its declaration; ``{name: message}`` of those that fail (empty: all fine).

    >>> check_all([Option("k", int, "Levels.", default=2, ge=2)], {"k": 1})
    {'k': 'k=1: allowed an integer ≥ 2'}
    """
    problems: dict[str, Any] = {}
    for option in options:
        if option.name in values:
            try:
                option.check(values[option.name])
            except ValueError as error:
                problems[option.name] = str(error)
    return problems


def option_table(options: Iterable[Option]) -> str:
    """A Markdown table of the options (name, default, allowed, what it does): the docs' reference tables are
    generated by this and compared with the committed ones.

    >>> print(option_table([Option("k", int, "Levels.", default=2, ge=2)]))
    | option | default | allowed | what it does |
    |---|---|---|---|
    | `k` | `2` | an integer ≥ 2 | Levels. |
    """
    rows = ["| option | default | allowed | what it does |", "|---|---|---|---|"]
    for option in options:
        default = "" if option.default is None else f"`{option.default}`"
        rows.append(f"| `{option.name}` | {default} | {option.constraint} | {option.help} |")
    return "\n".join(rows)
