"""Progress on stderr (``stableval/progress.py``): a bar on a terminal; plain stage lines in a pipe or a log for the
long analyses (issue 27: ``report`` and ``stability`` printed nothing for minutes when piped)."""

from __future__ import annotations

import io
from pathlib import Path

from typer.testing import CliRunner

from stableval.cli import app
from stableval.progress import progress_bar

from command_line import renamed_pairwise

runner = CliRunner()


def test_lines_every_tenth_then_done() -> None:
    log = io.StringIO()
    with progress_bar("rater subsets", total=100, lines=True, stream=log, clock=lambda: 0.0) as bar:
        for _ in range(100):
            bar.advance()
    shown = log.getvalue().splitlines()
    assert shown[0] == "rater subsets: 10/100 (0 s)" and len(shown) == 10
    assert shown[-1] == "rater subsets: done (100/100) in 0 s"


def test_silent_without_lines_or_when_disabled() -> None:
    for lines, enabled in ((False, True), (True, False)):
        log = io.StringIO()
        with progress_bar("x", total=3, lines=lines, enabled=enabled, stream=log) as bar:
            bar.stage("a")
            bar.advance(3)
        assert log.getvalue() == "" or not lines, log.getvalue()
        if not enabled:
            assert log.getvalue() == ""


def test_report_names_its_sections_and_stability_reports_progress_when_piped(tmp_path: Path) -> None:
    path, columns = renamed_pairwise(tmp_path)
    result = runner.invoke(app, ["report", str(path), *columns, "--quick", "-B", "20", "-o",
                                 str(tmp_path / "r.html")])
    assert result.exit_code == 0, result.output
    assert "report: leaderboard (" in result.stderr and "report: stability (" in result.stderr
    assert "report: done (" in result.stderr
    result = runner.invoke(app, ["stability", str(path), *columns, "-R", "3", "-j", "1", "-f", "json"])
    assert result.exit_code == 0, result.output
    assert "rater subsets: done (" in result.stderr and "rater subsets" not in result.stdout


def test_jobs_default_to_every_core() -> None:
    from stableval.commands import load_command

    for name in ("report", "stability"):
        [jobs] = [p for p in load_command(name).params if "--jobs" in p.opts]
        assert jobs.default == 0, name
