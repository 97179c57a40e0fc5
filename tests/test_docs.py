"""The documentation stays true: every command, flag and snippet in README.md and docs/**/*.md works as written.

* every command and every flag of the CLI is named somewhere in the docs, and every ``stableval ...`` line in the
  docs names a real command with real flags;
* every ``python`` block runs (blocks that read a placeholder file such as ``ratings.csv``, and the few that need
  the network, a GPU or a neural model, are skipped with the reason);
* every transcript (a block starting ``$ stableval ...``) whose input files are here is run, and each of its
  printed rows is compared number by number with the command's output today: docs drift fails;
* the README's tour runs, command after command, in an empty folder as in a fresh clone (issue 27);
* every relative link and anchor resolves; the README is a short guide (its length, its first commands, its
  performance section, a link to every page); guides cite papers, not the unshipped ``../shared/spec`` texts, and
  no issue numbers (measurement histories live in docs/benchmarks/; issue 25);
* the LICENSE file and pyproject's SPDX license agree (issue 27).
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

from paths import REPO

DOC_FILES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]

#: The user guides: README.md and docs/*.md (docs/benchmarks/ holds the measurement histories behind them).
GUIDES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]

#: The README section that test_the_readme_tour_runs runs, command after command, in one empty folder.
TOUR_HEADING = "## A tour"


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
    "run_grid(": "runs the ablation grid (minutes); tests/simulate/test_grid.py covers it on a small grid",
}


#: Transcripts that are not run: a phrase of the command → the reason.
TRANSCRIPT_SKIPS: dict[str, str] = {
    "portal": "needs a portal database",
    "serve": "starts a web server",
    "export": "needs a portal database",
    "nrp": "NRP transcripts run in test_nrp_transcript_matches_the_command (below)",
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
        where = self.path.relative_to(REPO)  # README.md, scale.md (docs/scale.md), benchmarks/em.md
        return f"{where.relative_to('docs') if where.parts[0] == 'docs' else where}:{self.line}"


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


def section(path: Path, heading: str) -> tuple[int, int]:
    """First and last line number (1-based) of the section of ``path`` that starts with the line ``heading``."""
    lines = path.read_text(encoding="utf-8").splitlines()
    level = len(heading.split(" ")[0])
    start = lines.index(heading) + 1
    fenced = False
    for number, line in enumerate(lines[start:], start=start + 1):
        fenced ^= line.startswith("```")
        if not fenced and re.match(rf"#{{1,{level}}} ", line):
            return start, number - 1
    return start, len(lines)


def tour_blocks() -> list[Block]:
    """The fenced blocks of the README's tour, in order."""
    first, last = section(REPO / "README.md", TOUR_HEADING)
    return [block for block in blocks() if block.path == REPO / "README.md" and first <= block.line <= last]


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


@pytest.mark.slow
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
    tour = {block.line for block in tour_blocks()}
    for block in blocks():
        lines = block.text.replace("\\\n", " ").splitlines()
        if block.lang or not lines or not lines[0].startswith("$ stableval ") or (
                block.path == REPO / "README.md" and block.line in tour):
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


@pytest.mark.slow
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


# ====================================================================================== the NRP page
NRP_TRANSCRIPTS = [entry for entry in transcripts() if entry[0].path.name == "nrp.md"]


@pytest.mark.parametrize("entry", NRP_TRANSCRIPTS, ids=[entry[0].name for entry in NRP_TRANSCRIPTS])
def test_nrp_transcript_matches_the_command(entry, tmp_path, monkeypatch) -> None:
    """Issue 31: the NRP page's transcripts (long-running, against the shipped release) run here, compared as the
    other pages' are."""
    block, command, documented = entry
    monkeypatch.delitem(TRANSCRIPT_SKIPS, "nrp")
    argv = _runnable(command)
    if isinstance(argv, str):
        pytest.skip(f"{block.name}: {argv}")
    env = {**os.environ, "COLUMNS": "200", "MPLBACKEND": "Agg", "HF_HUB_OFFLINE": "1"}
    run = subprocess.run(argv, cwd=workdir(tmp_path), capture_output=True, text=True, env=env, timeout=900)
    assert run.returncode == 0, f"{block.name}: {command} failed:\n{run.stderr[-2000:]}"
    printed = (run.stdout + run.stderr).replace(str(REPO.parent / "shared"), "../shared").replace(f"{REPO}/", "")
    problems = drift(documented, printed)
    assert not problems, f"{block.name}: `{command}` prints other numbers than the docs say:\n" + "\n".join(problems)


def test_the_nrp_page_has_transcripts() -> None:
    assert len(NRP_TRANSCRIPTS) >= 2


# ====================================================================================== the README's tour
def tour_steps() -> list[tuple[str, str, list[str]]]:
    """(where, command, documented output) of every ``stableval`` command of the tour, in order: each line of a
    shell block (no output to compare) and each ``$ stableval`` line of a transcript (with the lines under it)."""
    steps = []
    for block in tour_blocks():
        lines = block.text.replace("\\\n", " ").splitlines()
        for offset, line in enumerate(lines):
            if block.lang in ("bash", "sh", "shell", "console"):
                command = line.split(" #")[0].strip()
                if command:
                    steps.append((f"{block.name}+{offset}", command, []))
            elif line.startswith("$ "):
                output = []
                for after in lines[offset + 1:]:
                    if after.startswith("$ "):
                        break
                    output.append(after)
                steps.append((f"{block.name}+{offset}", line[2:].split(" #")[0].strip(), output))
    return steps


def test_the_tour_is_commands_of_stableval() -> None:
    """Issue 27: the tour starts from inputs a fresh clone has (it simulates its own study) and is only
    ``stableval`` commands, each with real flags (test_documented_command_line_uses_real_flags checks those)."""
    steps = tour_steps()
    assert steps and steps[0][1].startswith("stableval simulate -o "), "the tour starts by simulating its ratings"
    assert any(output for _, _, output in steps), "the tour shows the output of at least one command"
    not_ours = [command for _, command, _ in steps if not command.startswith("stableval ")]
    assert not not_ours, f"the README's tour may only run stableval commands: {not_ours}"


@pytest.mark.slow
def test_the_readme_tour_runs(tmp_path: Path) -> None:
    """Issue 27: every command of the README's tour runs, in order, in one empty folder beside the repository's
    ``src/`` (a fresh clone's root), and the numbers its transcripts show are the ones printed today."""
    work = workdir(tmp_path)
    env = {**os.environ, "COLUMNS": "200", "MPLBACKEND": "Agg"}
    for where, command, documented in tour_steps():
        argv = [sys.executable, "-m", "stableval", *shlex.split(command)[1:]]
        run = subprocess.run(argv, cwd=work, capture_output=True, text=True, env=env, timeout=600)
        assert run.returncode == 0, f"README tour, {where}: `{command}` failed:\n{run.stderr[-2000:]}"
        problems = drift(documented, (run.stdout + run.stderr).replace(f"{REPO}/", ""))
        assert not problems, f"README tour, {where}: `{command}` prints other numbers:\n" + "\n".join(problems)


# ====================================================================================== links and the guides' shape
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


def anchors(path: Path) -> set[str]:
    """GitHub's anchors of a Markdown file's headings: lower case, punctuation dropped, spaces to hyphens, a
    repeated heading numbered (``-1``, ``-2``)."""
    seen: dict[str, int] = {}
    found = set()
    fenced = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if fenced or not re.match(r"#{1,6} ", line):
            continue
        slug = re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def test_every_relative_link_and_anchor_resolves() -> None:
    """Issue 27/25: a link from one page to another (or to a file of the repository) and its ``#anchor`` exist, so
    moving a section to docs/benchmarks/ cannot leave a dead link behind."""
    broken = []
    for path in DOC_FILES:
        text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
        for target in LINK.findall(text):
            if re.match(r"[a-z]+:", target):
                continue  # https:, mailto:
            file, _, anchor = target.partition("#")
            linked = (path.parent / file).resolve() if file else path
            if not linked.exists():
                broken.append(f"{path.relative_to(REPO)}: {target} (no such file)")
            elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
                broken.append(f"{path.relative_to(REPO)}: {target} (no such heading)")
    assert not broken, "dead links:\n" + "\n".join(broken)


def test_the_readme_is_a_short_guide() -> None:
    """Issue 27: at most 250 lines; the two set-up commands first; a performance section of at most 30 lines that
    links to the measurements; a "where next" list linking every page of docs/."""
    readme = REPO / "README.md"
    lines = readme.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250, f"README.md has {len(lines)} lines; keep it a guide of at most 250"
    first = next(block for block in blocks() if block.path == readme)
    assert first.lang == "bash" and [line.split("#")[0].strip() for line in first.text.splitlines()] == [
        "make demo", "make test"], "the README starts with the two set-up commands"
    start, end = section(readme, "## Performance")
    performance = "\n".join(lines[start - 1:end]).strip()
    assert len(performance.splitlines()) <= 30, "the README's performance section: at most 30 lines"
    assert "docs/benchmarks/" in performance
    start, end = section(readme, "## Where next")
    where_next = "\n".join(lines[start - 1:end])
    missing = [page.name for page in sorted((REPO / "docs").glob("*.md")) if f"(docs/{page.name})" not in where_next]
    assert not missing, f"the README's 'Where next' does not link {missing}"


#: Guides that still cite issue numbers, with why (owned by another change in flight; remove the entry with it).
ISSUE_NUMBERS_PENDING: dict[str, str] = {}


def test_guides_cite_papers_not_unshipped_texts_nor_issues() -> None:
    """Issue 27/25: the docs ship without ``../shared/spec`` (cite the paper or the release itself), and a user
    guide names no issue number: per-issue measurement histories live in docs/benchmarks/."""
    spec = [str(path.relative_to(REPO)) for path in DOC_FILES if "shared/spec" in path.read_text(encoding="utf-8")]
    assert not spec, f"cite the papers themselves, not ../shared/spec/: {spec}"
    issues = [f"{path.relative_to(REPO)}: {match.group(0)!r}" for path in GUIDES
              if path.name not in ISSUE_NUMBERS_PENDING
              for match in re.finditer(r"\b[Ii]ssue[- ]\d+|\bissue's\b", path.read_text(encoding="utf-8"))]
    assert not issues, "guides cite no issue numbers (move the history to docs/benchmarks/):\n" + "\n".join(issues)


def test_license_file_and_pyproject_agree() -> None:
    """Issue 27: a LICENSE file (MIT) and pyproject's license in the SPDX form setuptools >= 77 reads without a
    deprecation warning (``license = "MIT"``, ``license-files``)."""
    import tomllib

    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    project = pyproject["project"]
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    assert any(re.fullmatch(r"setuptools>=(7[7-9]|[89]\d|\d{3,})(\.\d+)*", requirement)
               for requirement in pyproject["build-system"]["requires"]), "SPDX licenses need setuptools >= 77"
    text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License") and "the stableval authors" in text
