"""The docs site's generated parts, as an MkDocs hook (``hooks:`` in ``mkdocs.yml``); ``make docs`` builds the site.

Nothing here is written by hand twice: the guides are ``docs/*.md`` and the README (the home page) as they are on
GitHub, their links turned into site links; the navigation follows the README's "Where next" list; the Python API
reference lists the public names of ``import stableval`` (its lazy exports, ``stableval._lazy``) and renders their
docstrings with mkdocstrings; the command-line reference is every command's ``--help`` as the typer app prints it.
A griffe extension turns the docstrings' doctest examples into Python console code blocks.
"""

from __future__ import annotations

import importlib.util
import posixpath
import re
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]

#: Files of the repository outside docs/ that the site shows, and where: the README is the home page.
FROM_REPO = {"README.md": "index.md", "CONTRIBUTING.md": "CONTRIBUTING.md", "CHANGELOG.md": "CHANGELOG.md",
             "LICENSE": "LICENSE"}
API_PAGE = "reference/api.md"
CLI_PAGE = "reference/cli.md"
#: Markdown links ``[text](target)``; the target is rewritten, the text kept.
LINK = re.compile(r"(\]\()([^)\s]+)(\))")
#: The width the command-line reference is rendered at (its rich panels wrap to it).
HELP_WIDTH = 80


# ====================================================================================== links and navigation
def repo_path(site_uri: str) -> str:
    """The repository file a site page comes from.

    >>> repo_path("index.md"), repo_path("benchmarks/em.md")
    ('README.md', 'docs/benchmarks/em.md')
    """
    back = {site: repo for repo, site in FROM_REPO.items()}
    return back.get(site_uri, f"docs/{site_uri}")


def site_uri(path: str) -> str | None:
    """Where a repository file lands on the site (None: not on it); a folder of docs/ means its README.

    >>> site_uri("README.md"), site_uri("docs/scoring.md"), site_uri("docs/benchmarks/"), site_uri("src/x.py")
    ('index.md', 'scoring.md', 'benchmarks/README.md', None)
    """
    if path.endswith("/"):
        path += "README.md"
    if path in FROM_REPO:
        return FROM_REPO[path]
    return path.removeprefix("docs/") if path.startswith("docs/") else None


def rewrite_links(markdown: str, page_uri: str) -> str:
    """A page's relative links, written for GitHub (from the page's place in the repository), as site links.

    >>> rewrite_links("[scoring](docs/scoring.md#input) and [home](https://x.org)", "index.md")
    '[scoring](scoring.md#input) and [home](https://x.org)'
    >>> rewrite_links("[demo](../README.md#what-make-demo-prints), [how](../CONTRIBUTING.md)", "scoring.md")
    '[demo](index.md#what-make-demo-prints), [how](CONTRIBUTING.md)'
    """
    source = repo_path(page_uri)

    def fix(match: re.Match[str]) -> str:
        target = match.group(2)
        if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith(("#", "/")):
            return match.group(0)
        file, hash_, anchor = target.partition("#")
        directory = file.endswith("/")
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(source), file)) + ("/" if directory else "")
        landing = site_uri(joined)
        if landing is None:
            return match.group(0)  # not on the site: left for the strict build to report
        relative = posixpath.relpath(landing, posixpath.dirname(page_uri) or ".")
        return f"{match.group(1)}{relative}{hash_}{anchor}{match.group(3)}"

    return LINK.sub(fix, markdown)


def guide_order(readme: str) -> list[str]:
    """The site pages the README's "Where next" list links, in its order (the guides' navigation).

    >>> guide_order("## Where next\\n\\n- [a](docs/a.md): x\\n- [b](docs/b/README.md)\\n- [c](CONTRIBUTING.md)\\n")
    ['a.md', 'b/README.md', 'CONTRIBUTING.md']
    """
    section = readme.split("## Where next", 1)[1].split("\n## ", 1)[0]
    pages: list[str] = []
    for target in LINK.findall(section):
        landing = site_uri(target[1].partition("#")[0])
        if landing and landing not in pages:
            pages.append(landing)
    return pages


def navigation(readme: str, docs: Path) -> list[Any]:
    """The site's navigation: home, the guides in the README's order, the measurements, the references."""
    order = guide_order(readme)
    guides = [page for page in order if "/" not in page and page in {p.name for p in docs.glob("*.md")}]
    guides += sorted(p.name for p in docs.glob("*.md") if p.name not in guides)
    benchmarks = ["benchmarks/README.md", *sorted(p.relative_to(docs).as_posix()
                                                  for p in (docs / "benchmarks").glob("*.md")
                                                  if p.name != "README.md")]
    return ["index.md", {"Guides": guides}, {"Measurements": benchmarks},
            {"Reference": [CLI_PAGE, API_PAGE]}, "CONTRIBUTING.md", "CHANGELOG.md"]


# ====================================================================================== the Python API reference
def _source(module: str) -> str:
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin, module
    return Path(spec.origin).read_text(encoding="utf-8")


def public_api() -> dict[str, list[tuple[str, str]]]:
    """Subpackage → (public name, the module that defines it), from the lazy exports of ``stableval``, each name
    followed through the subpackages that re-export it to its home."""
    from stableval._lazy import declared_exports

    groups: dict[str, list[tuple[str, str]]] = {}
    for name, module in declared_exports(_source("stableval")).items():
        home = module
        while (further := declared_exports(_source(home)).get(name)) and further != home:
            home = further
        groups.setdefault(module, []).append((name, home))
    return groups


def api_markdown() -> str:
    """The API reference page: one section per subpackage, one mkdocstrings block per public name."""
    lines = ["# Python API", "",
             "The public names of `import stableval` (each also importable from its subpackage), generated from "
             "their docstrings. `stableval.__version__` is the installed version. Guides: "
             "[scoring](../scoring.md#python-api), [methods](../methods.md).", ""]
    for module, names in public_api().items():
        lines += [f"## `{module}`", ""]
        for name, home in sorted(names, key=lambda pair: pair[0].lower()):
            lines += [f"::: {home}.{name}", "    options:", "      show_root_heading: true",
                      "      show_root_full_path: false", "      heading_level: 3", ""]
    return "\n".join(lines)


# ====================================================================================== the command-line reference
def commands() -> list[tuple[list[str], Any]]:
    """Every command of the typer app (the group first, then each sub-command), skipping hidden ones."""
    import typer

    from stableval.cli import app

    found: list[tuple[list[str], Any]] = []

    def walk(command: Any, path: list[str]) -> None:
        if getattr(command, "hidden", False):
            return
        found.append((path, command))
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, [*path, name])

    walk(typer.main.get_command(app), [])
    return found


def command_help(path: list[str]) -> str:
    """``stableval PATH --help`` as the typer app prints it (plain text, trailing spaces trimmed)."""
    from typer.testing import CliRunner

    from stableval.cli import app

    result = CliRunner().invoke(app, [*path, "--help"], terminal_width=HELP_WIDTH,
                                env={"COLUMNS": str(HELP_WIDTH), "TERMINAL_WIDTH": str(HELP_WIDTH),
                                     "NO_COLOR": "1"})
    assert result.exit_code == 0, f"stableval {' '.join(path)} --help failed: {result.output}"
    return "\n".join(line.rstrip() for line in result.output.strip("\n").splitlines())


def cli_markdown() -> str:
    """The command-line reference page: every command's ``--help``, one section each."""
    lines = ["# Command line", "",
             "Every `stableval` command's `--help`, generated from the command line itself. Exit codes: 0 success, "
             "1 bad input (the message names file, row, column, value and what is allowed), 2 usage error.", ""]
    for path, _ in commands():
        title = " ".join(["stableval", *path])
        lines += [f"## `{title}`", "", "```text", command_help(path), "```", ""]
    return "\n".join(lines)


# ====================================================================================== doctest examples
def fence_doctests(text: str) -> str:
    """Doctest examples (``>>>`` lines with their output, up to a blank line) as ``pycon`` code blocks, so Markdown
    does not read them as quotes.

    >>> fence_doctests("Add one.\\n>>> 1 + 1\\n2\\n\\nDone.").splitlines()
    ['Add one.', '```pycon', '>>> 1 + 1', '2', '```', '', 'Done.']
    """
    out: list[str] = []
    fenced = in_code = False
    indent = ""
    for line in text.splitlines():
        stripped = line.lstrip()
        if fenced and not stripped:
            out.append(f"{indent}```")
            fenced = False
        elif not fenced and stripped.startswith("```"):
            in_code = not in_code
        elif not fenced and not in_code and stripped.startswith(">>>"):
            indent = line[:len(line) - len(stripped)]
            out.append(f"{indent}```pycon")
            fenced = True
        out.append(line)
    if fenced:
        out.append(f"{indent}```")
    return "\n".join(out)


try:  # the griffe extension exists where the docs extra is installed
    import griffe
except ImportError:  # pragma: no cover
    pass
else:
    class DoctestBlocks(griffe.Extension):
        """Fence every docstring's doctest examples (see :func:`fence_doctests`)."""

        def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
            if obj.docstring is not None:
                obj.docstring.value = fence_doctests(obj.docstring.value)


# ====================================================================================== the MkDocs hook
def on_config(config: Any) -> Any:
    """The navigation, derived from the README and docs/."""
    config["nav"] = navigation((REPO / "README.md").read_text(encoding="utf-8"), Path(config["docs_dir"]))
    return config


def on_files(files: Any, config: Any) -> Any:
    """Add the pages generated here and the repository files the site shows."""
    from mkdocs.structure.files import File

    for path, uri in FROM_REPO.items():
        if (REPO / path).exists():
            files.append(File.generated(config, uri, abs_src_path=str(REPO / path)))
    files.append(File.generated(config, API_PAGE, content=api_markdown()))
    files.append(File.generated(config, CLI_PAGE, content=cli_markdown()))
    return files


def on_page_markdown(markdown: str, page: Any, **kwargs: Any) -> str:
    """Links written for GitHub, made site links."""
    return rewrite_links(markdown, page.file.src_uri)
