# Two entry points, each creating/using the local virtual environment .venv:
#   make demo   install stableval and score the bundled MT-Bench expert votes (prints the leaderboard)
#   make test   install the dev extras, then lint (ruff), type-check (mypy; --strict on aggregate, data, evaluate,
#               portal) and run the whole test suite
#   make test-fast  the tests not marked slow, without the lint step: the quick loop while editing
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test test-fast lint bench clean

# The neural NRP rankers need torch. Install them only where the machine carries the CPU build of torch 2.13.0
# (never let pip pull a CUDA torch); elsewhere their tests skip with the reason.
comma := ,
TORCH_WHEEL := $(firstword $(wildcard /opt/wheels/torch-2.13.0*.whl))
DEV_EXTRAS := dev$(if $(TORCH_WHEEL),$(comma)neural,)
FIND_LINKS := $(if $(TORCH_WHEEL),--find-links /opt/wheels,)

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.dev-installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet $(FIND_LINKS) -e ".[$(DEV_EXTRAS)]"
	touch $@ $(VENV)/.installed

demo: $(VENV)/.installed
	$(BIN)/stableval demo

lint: $(VENV)/.dev-installed
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/mypy
	$(BIN)/mypy --strict src/stableval/aggregate src/stableval/data src/stableval/evaluate src/stableval/portal

test: lint
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest

test-fast: $(VENV)/.dev-installed
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -m "not slow" -q

bench: $(VENV)/.installed
	$(BIN)/python benchmarks/bench_em.py
	$(BIN)/python benchmarks/bench_ablation.py
	$(BIN)/python benchmarks/bench_nrp.py
	$(BIN)/python benchmarks/bench_accuracy.py
	$(BIN)/python benchmarks/bench_convergence.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
