# Two entry points, each creating/using the local virtual environment .venv:
#   make demo   install stableval and score the bundled MT-Bench expert votes (prints the leaderboard)
#   make test   install the dev extras, then lint (ruff), type-check (mypy; --strict on aggregate, data, evaluate,
#               portal) and run the whole test suite
#   make test-fast  the tests not marked slow, without the lint step: the quick loop while editing
#   make docs   build the docs site into site/ (MkDocs, strict: a broken link or reference fails)
#   make wheel  build the sdist and the wheel into dist/
#   make wheel-check  the wheel, checked: twine, its files, and installed into a fresh venv (not the source tree)
#               it runs `stableval --version`, `stableval demo` and a Label Studio export
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test test-fast lint bench docs wheel wheel-check clean

# The neural NRP rankers need torch. Install them only where the machine carries a CPU build of torch, handed to
# pip as the file itself so that it satisfies the `neural` extra's range (never let pip pull a CUDA torch);
# elsewhere their tests skip with the reason.
comma := ,
TORCH_WHEEL := $(firstword $(wildcard /opt/wheels/torch-*+cpu-*.whl))
DEV_EXTRAS := dev$(if $(TORCH_WHEEL),$(comma)neural,)

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.dev-installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet $(TORCH_WHEEL) -e ".[$(DEV_EXTRAS)]"
	touch $@ $(VENV)/.installed

$(VENV)/.docs-installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[docs]"
	touch $@ $(VENV)/.installed

demo: $(VENV)/.installed
	$(BIN)/stableval demo

lint: $(VENV)/.dev-installed
	$(BIN)/ruff check src tests benchmarks scripts
	$(BIN)/mypy
	$(BIN)/mypy --strict src/stableval/aggregate src/stableval/data src/stableval/evaluate src/stableval/portal

test: lint
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest

test-fast: $(VENV)/.dev-installed
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -m "not slow" -q

docs: $(VENV)/.docs-installed
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

wheel: $(VENV)/.dev-installed
	rm -rf dist
	$(BIN)/python -m build --quiet --outdir dist .

wheel-check: wheel
	$(BIN)/python scripts/check_wheel.py dist

bench: $(VENV)/.installed
	$(BIN)/python benchmarks/bench_em.py
	$(BIN)/python benchmarks/bench_ablation.py
	$(BIN)/python benchmarks/bench_nrp.py
	$(BIN)/python benchmarks/bench_accuracy.py
	$(BIN)/python benchmarks/bench_convergence.py

clean:
	rm -rf $(VENV) site dist build .pytest_cache .mypy_cache .ruff_cache .hypothesis
