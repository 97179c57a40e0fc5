"""Small export files built the way each tool writes them, shared by the importer tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

import stableval
from stableval import InputOptions

runner = CliRunner()


def load(path: Path, importer: str, **options: Any) -> stableval.Loaded:
    return stableval.load(path, InputOptions(importer=importer, **options))


def write_json(path: Path, document: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def write_lines(path: Path, lines: list[Any]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


