"""Where the tests' files are: the repository, the small fixture files beside the tests, and the public datasets
in ``../shared/data`` (a test that needs one skips, naming it, where that folder is absent)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src" / "stableval"
FIXTURES = REPO / "tests" / "fixtures"
SHARED_DATA = REPO.parent / "shared" / "data"

SMALL_ANNOTATIONS = FIXTURES / "small_annotations.csv"
SMALL_PAIRWISE = FIXTURES / "small_pairwise.csv"
RELIABILITY_FLAGS = FIXTURES / "reliability_flags.csv"

MT_BENCH = ("mt_bench_human_judgments", "mt_bench_human_votes_available.jsonl")
WEBIS = "webis_ecir25_ranking_generated_answers"
WEBIS_EXPORT = SHARED_DATA / WEBIS / "top_k_rankings" / "expert-annotations.json"


def shared_file(*parts: str) -> Path:
    """Path of a file under ../shared/data, or skip the test with the reason when it is absent."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"public dataset not available here: {path} (it lives in ../shared/data beside the repo)")
    return path


def nvidia_toy_files() -> tuple[Path, Path]:
    """NVIDIA's toy reliability example: its judgments and the metrics its notebook computes."""
    return (shared_file("nvidia_reliability_wtl_toy", "toy_data.json"),
            shared_file("nvidia_reliability_wtl_toy", "expected_metrics_recomputed.csv"))


def script(name: str) -> ModuleType:
    """The module ``scripts/NAME.py`` (the repository's build and docs scripts), imported from its file."""
    spec = importlib.util.spec_from_file_location(f"scripts_{name}", REPO / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
