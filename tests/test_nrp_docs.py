"""The transcripts of docs/nrp.md (blocks starting ``$ stableval nrp ...``) are run and each printed row is
compared number by number with the docs, as tests/test_docs.py does for the other pages (which leaves the NRP
page to the NRP tests)."""

from __future__ import annotations

import os
import subprocess

import pytest

from test_docs import TRANSCRIPT_SKIPS, _runnable, drift, transcripts, workdir

from conftest import REPO

NRP_TRANSCRIPTS = [entry for entry in transcripts() if entry[0].path.name == "nrp.md"]


@pytest.mark.parametrize("entry", NRP_TRANSCRIPTS, ids=[entry[0].name for entry in NRP_TRANSCRIPTS])
def test_nrp_transcript_matches_the_command(entry, tmp_path, monkeypatch) -> None:
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
