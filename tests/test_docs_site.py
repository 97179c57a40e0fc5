"""Issue 32: the docs site's generated parts (``scripts/docs_site.py``, the MkDocs hook): the API reference lists
exactly the public names of ``import stableval``, the command-line reference every command, the navigation every
guide, and every link of the guides lands on a page of the site. ``make docs`` (run by ``.ci/run``) builds the
site itself in strict mode."""

from __future__ import annotations

import doctest
import importlib
import re

import typer

import stableval
from stableval.cli import app

from paths import REPO, script

site = script("docs_site")


def test_docs_site_doctests_pass() -> None:
    assert doctest.testmod(site).failed == 0


def test_the_api_reference_is_the_public_names_each_at_its_home() -> None:
    groups = site.public_api()
    names = {name for pairs in groups.values() for name, _ in pairs}
    assert names == set(stableval.__all__) - {"__version__"}
    for pairs in groups.values():
        for name, home in pairs:
            value = getattr(importlib.import_module(home), name)
            assert value is getattr(stableval, name)
            assert getattr(value, "__module__", home) == home, f"{name}: documented at {home}, defined elsewhere"
    page = site.api_markdown()
    assert "::: stableval.aggregate.dawid_skene.DawidSkene\n" in page and "## `stableval.evaluate`" in page
    assert page.count("\n::: ") == len(names)


def test_the_command_line_reference_has_every_command() -> None:
    def count(command: object) -> int:
        subs = getattr(command, "commands", {}).values()
        return 1 + sum(count(sub) for sub in subs if not getattr(sub, "hidden", False))

    page = site.cli_markdown()
    titles = re.findall(r"^## `(stableval[^`]*)`$", page, flags=re.M)
    assert len(titles) == count(typer.main.get_command(app))
    assert "stableval score" in titles and "stableval portal track" in titles
    score = page.split("## `stableval score`", 1)[1].split("\n## ", 1)[0]
    assert "--from" in score and "--bootstrap" in score
    helps = re.findall(r"```text\n(.*?)```", page, flags=re.S)
    assert len(helps) == len(titles) and all(len(line) <= site.HELP_WIDTH for help_ in helps
                                             for line in help_.splitlines())


def test_the_navigation_has_every_guide_and_measurement() -> None:
    docs = REPO / "docs"
    nav = site.navigation((REPO / "README.md").read_text(encoding="utf-8"), docs)
    listed: list[str] = []

    def walk(entry: object) -> None:
        if isinstance(entry, str):
            listed.append(entry)
        elif isinstance(entry, dict):
            for value in entry.values():
                walk(value)
        elif isinstance(entry, list):
            for value in entry:
                walk(value)

    walk(nav)
    pages = {path.relative_to(docs).as_posix() for path in docs.rglob("*.md")}
    assert pages <= set(listed), f"pages of docs/ missing from the site's navigation: {pages - set(listed)}"
    assert listed[:2] == ["index.md", "scoring.md"]  # the README first, then its "Where next" order


def test_every_relative_link_of_the_guides_lands_on_the_site() -> None:
    """A link written for GitHub (``docs/scoring.md`` from the README, ``../README.md`` from a guide) becomes a link
    to a page the site has; a link to a file the site does not show would fail the strict build."""
    on_site = {path.relative_to(REPO / "docs").as_posix() for path in (REPO / "docs").rglob("*.md")}
    on_site |= set(site.FROM_REPO.values())
    pages = {"index.md": REPO / "README.md", "CONTRIBUTING.md": REPO / "CONTRIBUTING.md",
             **{uri: REPO / "docs" / uri for uri in on_site if (REPO / "docs" / uri).exists()}}
    stray = []
    for uri, path in pages.items():
        text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", site.rewrite_links(text, uri)):
            if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                continue
            landing = site.posixpath.normpath(site.posixpath.join(site.posixpath.dirname(uri),
                                                                  target.partition("#")[0]))
            if landing not in on_site:
                stray.append(f"{uri}: {target}")
    assert not stray, "links to files the site does not show:\n" + "\n".join(stray)
