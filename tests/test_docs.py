"""The documentation stays true: every command, flag and snippet in README.md and docs/*.md works as written.

* every command and every flag of the CLI is named somewhere in the docs, and every ``stableval ...`` line in the
  docs names a real command with real flags;
* every ``python`` block runs (blocks that read a placeholder file such as ``ratings.csv``, and the few that need
  the network, a GPU or a neural model, are skipped with the reason);
* every transcript (a block starting ``$ stableval ...``) whose input files are here is run, and each of its
  printed rows is compared number by number with the command's output today: docs drift fails.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import typer

from stableval.cli import app

REPO = Path(__file__).resolve().parents[1]
DOC_FILES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
COMMAND = typer.main.get_command(app)

#: Flags documented by the owners of other pages, not yet named anywhere: "command flag" (or a flag of every
#: command) → why it may be missing for now.
UNDOCUMENTED: dict[str, str] = {}
#: Command groups whose pages their own engineers are still writing: group → reason (checked once they are done).
OTHER_OWNERS: dict[str, str] = {}
#: Python blocks that cannot run in CI: a phrase of the block → the reason.
PYTHON_SKIPS: dict[str, str] = {
    "sentence_transformers": "needs a neural model",
    "CrossEncoder": "needs a neural model",
    "stableval.portal": "needs a portal database and web server",
    "create_app": "needs a portal database and web server",
    "run_grid(": "runs the ablation grid (minutes); tests/test_ablate.py covers it on a small grid",
}
#: Transcripts that are not run: a phrase of the command → the reason.
TRANSCRIPT_SKIPS: dict[str, str] = {
    "portal": "needs a portal database",
    "serve": "starts a web server",
    "export": "needs a portal database",
    "nrp": "NRP pages are checked by tests/test_nrp_docs.py",
    "cut -c": "shell, not stableval",
}


@dataclass(frozen=True)
class Block:
    path: Path
    line: int
    lang: str
    text: str

    @property
    def name(self) -> str:
        return f"{self.path.name}:{self.line}"


def blocks() -> Iterator[Block]:
    """Every fenced block of the docs: file, first line number, language, text."""
    for path in DOC_FILES:
        lines = path.read_text(encoding="utf-8").splitlines()
        start, lang, body = None, "", []
        for number, line in enumerate(lines, start=1):
            if line.startswith("```"):
                if start is None:
                    start, lang, body = number, line[3:].strip(), []
                else:
                    yield Block(path, start + 1, lang, "\n".join(body))
                    start = None
            elif start is not None:
                body.append(line)


def docs_text() -> str:
    return "\n".join(path.read_text(encoding="utf-8") for path in DOC_FILES)


def commands(group: Any = COMMAND, prefix: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    for name, command in group.commands.items():
        if hasattr(command, "commands"):
            yield from commands(command, (*prefix, name))
        else:
            yield (*prefix, name), command


# ====================================================================================== everything is documented
def test_every_command_is_documented() -> None:
    text = docs_text()
    missing = ["stableval " + " ".join(path) for path, _ in commands()
               if "stableval " + " ".join(path) not in text and path[0] not in OTHER_OWNERS]
    assert not missing, f"commands named nowhere in README.md or docs/*.md: {missing}"


def test_every_flag_is_documented() -> None:
    text = docs_text()
    missing = []
    for path, command in commands():
        if path[0] in OTHER_OWNERS:
            continue
        for param in command.params:
            for flag in [*param.opts, *param.secondary_opts]:
                key = f"{' '.join(path)} {flag}"
                if (flag.startswith("--") and flag != "--help" and key not in UNDOCUMENTED
                        and flag not in UNDOCUMENTED and not re.search(re.escape(flag) + r"(?![\w-])", text)):
                    missing.append(key)
    assert not missing, f"flags named nowhere in README.md or docs/*.md: {missing}"


def test_every_public_name_is_documented() -> None:
    import stableval

    text = docs_text()
    missing = [name for name in stableval.__all__ if not re.search(r"\b" + re.escape(name) + r"\b", text)]
    assert not missing, f"public names of `import stableval` named nowhere in README.md or docs/*.md: {missing}"


# ====================================================================================== command lines
def command_lines() -> list[tuple[str, str]]:
    """(where, command line) for every ``stableval ...`` line of a shell block or of a transcript."""
    found = []
    for block in blocks():
        shell = block.lang in ("bash", "sh", "shell", "console")
        if not shell and not (block.lang in ("", "text") and block.text.lstrip().startswith("$ ")):
            continue
        prompted = block.text.lstrip().startswith("$ ")  # a transcript: commands after "$ ", the rest is output
        for offset, line in enumerate(block.text.replace("\\\n", " ").splitlines()):
            if prompted and not line.startswith("$ "):
                continue  # printed output
            match = re.search(r"(?:^|\s)(stableval\s.*)$", line.removeprefix("$ "))
            if match:
                found.append((f"{block.name}+{offset}", match.group(1).split(" #")[0].strip()))
    return found


@pytest.mark.parametrize(("where", "line"), command_lines(), ids=[w for w, _ in command_lines()])
def test_documented_command_line_uses_real_flags(where: str, line: str) -> None:
    words = shlex.split(line)[1:]
    command: Any = COMMAND
    while hasattr(command, "commands") and words and words[0] in command.commands:
        command = command.commands[words.pop(0)]
    if hasattr(command, "commands"):
        assert not words or words[0].startswith("-"), f"{where}: unknown command in {line!r}"
        return
    known = {flag for param in command.params for flag in [*param.opts, *param.secondary_opts]} | {"--help"}
    for word in words:
        if word.startswith("-") and not re.fullmatch(r"-\d.*", word) and word not in ("-", "--"):
            flag = word.split("=", 1)[0]
            assert flag in known, f"{where}: {line!r} uses {flag}, which `{command.name}` does not have"


def prelude() -> dict[str, object]:
    """What a continuation snippet takes as already there: ``table`` (the bundled MT-Bench votes as judgments)
    and ``df`` (the same as a crowd-kit frame: task, worker, label)."""
    from stableval import example_path, read_any

    table = read_any(example_path("mt_bench"), duplicates="keep")
    frame = table.to_frame()
    df = frame.assign(task=frame["item"] + "|" + frame["agent"]).rename(columns={"rater": "worker"})
    return {"table": table, "df": df[["task", "worker", "label"]]}


def workdir(tmp_path: Path) -> Path:
    """A scratch folder where the docs' relative paths work as from the repository root (``src/...``,
    ``tests/...``, ``../shared/data/...``) while the files a snippet writes stay out of the repository."""
    work = tmp_path / "repo"
    work.mkdir()
    for name in ("src", "tests", "benchmarks"):
        if (REPO / name).exists():
            (work / name).symlink_to(REPO / name)
    if (REPO.parent / "shared").exists():
        (tmp_path / "shared").symlink_to(REPO.parent / "shared")
    return work


# ====================================================================================== python snippets
def python_blocks() -> list[Block]:
    return [block for block in blocks() if block.lang == "python"]


@pytest.mark.parametrize("block", python_blocks(), ids=[b.name for b in python_blocks()])
def test_python_snippet_runs(block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for phrase, reason in PYTHON_SKIPS.items():
        if phrase in block.text:
            pytest.skip(f"{block.name}: {reason}")
    if "../shared/" in block.text and not (REPO.parent / "shared").exists():
        pytest.skip(f"{block.name} reads ../shared/data, which is not beside this checkout")
    monkeypatch.chdir(workdir(tmp_path))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    from stableval.errors import InputError

    namespace: dict[str, object] = {"__name__": "__docs__", **prelude()}
    try:
        exec(compile(block.text, block.name, "exec"), namespace)
    except (FileNotFoundError, InputError) as error:
        message = str(error)
        if "not found" in message or "No such file" in message:
            pytest.skip(f"{block.name} reads a placeholder file: {message[:120]}")
        raise


# ====================================================================================== transcripts
NUMBER = re.compile(r"(?<![\w.])[-+−]?\d[\d,]*(?:\.\d+)?%?")


def transcripts() -> list[tuple[Block, str, list[str]]]:
    """(block, the command, the documented output lines) of every block starting ``$ stableval ...``."""
    found = []
    for block in blocks():
        lines = block.text.replace("\\\n", " ").splitlines()
        if block.lang or not lines or not lines[0].startswith("$ stableval "):
            continue
        output = []
        for line in lines[1:]:
            if line.startswith("$ "):
                break
            output.append(line)
        found.append((block, lines[0][2:].split(" #")[0], output))
    return found


def _runnable(command: str) -> list[str] | str:
    """The argv to run (files of the repo and ../shared/data made absolute), or why it cannot run here."""
    for phrase, reason in TRANSCRIPT_SKIPS.items():
        if re.search(r"(?<![\w-])" + re.escape(phrase) + r"(?![\w-])", command):
            return reason
    argv = shlex.split(command)
    out = []
    for word in argv[1:]:
        if "/" in word and not word.startswith("-"):
            path = REPO / word
            if not path.exists():
                return f"input not available here: {word}"
            word = str(path)
        elif re.fullmatch(r"[\w.-]+\.(csv|tsv|jsonl|json|parquet|txt|npy)", word) and not (REPO / word).exists():
            previous = out[-1] if out else ""
            if previous not in ("-o", "--output", "--gold-output", "--plot", "--answers-out", "--per-question"):
                return f"placeholder input file: {word}"
        out.append(word)
    return [sys.executable, "-m", "stableval", *out]


@pytest.mark.parametrize("entry", transcripts(), ids=[t[0].name for t in transcripts()])
def test_transcript_matches_the_command(entry: tuple[Block, str, list[str]], tmp_path: Path) -> None:
    block, command, documented = entry
    argv = _runnable(command)
    if isinstance(argv, str):
        pytest.skip(f"{block.name}: {argv}")
    env = {**os.environ, "COLUMNS": "200", "MPLBACKEND": "Agg"}
    run = subprocess.run(argv, cwd=workdir(tmp_path), capture_output=True, text=True, env=env, timeout=600)
    assert run.returncode == 0, f"{block.name}: {command} failed:\n{run.stderr[-2000:]}"
    printed = (run.stdout + run.stderr).replace(str(REPO.parent / "shared"), "../shared").replace(f"{REPO}/", "")
    problems = drift(documented, printed)
    assert not problems, f"{block.name}: `{command}` prints other numbers than the docs say:\n" + "\n".join(problems)


TIMING = re.compile(r"\d+(?:\.\d+)? ?(?:s|ms|min)\b")


def drift(documented: list[str], printed: str) -> list[str]:
    """Documented lines whose numbers differ from the printed ones.

    A documented line is matched to a printed line of the same shape (the text with every number replaced by
    ``#``); a line that wraps differently is found in the printed text as a whole. Timings (``15.2 s``) are not
    compared.

    >>> drift(["gpt-4  1175  [1150, 1200]"], "gpt-4 1175 [1150, 1201]\\nclaude 1090 [1, 2]")
    ["documented: 'gpt-4 1175 [1150, 1200]'\\n     printed: 'gpt-4 1175 [1150, 1201]'"]
    """
    actual = [" ".join(TIMING.sub("", line).split()) for line in printed.splitlines()]
    whole = " ".join(" ".join(actual).split())
    shapes: dict[str, list[str]] = {}
    for line in actual:
        shapes.setdefault(NUMBER.sub("#", line), []).append(line)
    problems = []
    for raw in documented:
        line = " ".join(TIMING.sub("", raw).split())
        numbers = NUMBER.findall(line)
        if not numbers or "…" in line or "..." in line or line in whole:
            continue
        same_shape = shapes.get(NUMBER.sub("#", line), [])
        if not same_shape:
            problems.append(f"documented line not printed: {line!r}")
        elif not any(NUMBER.findall(candidate) == numbers for candidate in same_shape):
            key = line.split()[0]
            closest = next((c for c in same_shape if c.startswith(key)), same_shape[0])
            problems.append(f"documented: {line!r}\n     printed: {closest!r}")
    return problems
