"""The notebooks of docs/notebooks run top to bottom in a real Jupyter kernel and show their results as tables and
figures (issue 32), so they never rot."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parents[1] / "docs" / "notebooks"
SRC = Path(__file__).resolve().parents[1] / "src"


def kernel_or_skip() -> str:
    """The name of an installed Python kernel, or skip (nbclient or ipykernel missing)."""
    pytest.importorskip("nbclient", reason="nbclient is not installed (pip install 'stableval[dev]')")
    pytest.importorskip("ipykernel", reason="ipykernel is not installed: no Python kernel to run notebooks")
    from jupyter_client.kernelspec import KernelSpecManager

    if "python3" not in KernelSpecManager().find_kernel_specs():
        pytest.skip("no python3 Jupyter kernel is installed")
    return "python3"


@pytest.mark.slow
@pytest.mark.parametrize("path", sorted(NOTEBOOKS.glob("*.ipynb")), ids=lambda path: path.name)
def test_notebook_runs_and_shows_tables_and_figures(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kernel = kernel_or_skip()
    import nbformat
    from nbclient import NotebookClient

    # the kernel imports this checkout's stableval (the source tree, as the tests do)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")])))
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(notebook, timeout=300, kernel_name=kernel,
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    outputs = [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs]
    assert not [output for output in outputs if output.output_type == "error"]
    kinds = [set(output.get("data", {})) for output in outputs]
    assert any("text/html" in kind for kind in kinds), "no result showed as a table"
    assert any("image/png" in kind for kind in kinds), "no figure showed inline"
    tables = [output["data"]["text/html"] for output in outputs if "text/html" in output.get("data", {})]
    assert any("gpt-4" in table and "<pre" in table for table in tables)  # the scores table, drawn as HTML
