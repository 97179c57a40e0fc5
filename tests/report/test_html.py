"""The HTML report: self-contained, every section present, renders in headless chromium, its options a typed record."""

from __future__ import annotations

import io
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import stableval
from stableval import InputOptions
from stableval.report import build_report


def test_report_leaderboard_shows_the_comparison() -> None:
    """Issue 12: exact conventions."""
    import stableval

    html = build_report(stableval.example_path(), inputs=InputOptions(duplicates="keep"), quick=True, bootstrap=20,
                        sections=("leaderboard",))
    assert "STABLEVAL against MV" in html and "STABLEVAL − MV" in html and "Pearson r" in html
    html = build_report(stableval.example_path(), inputs=InputOptions(duplicates="keep"), quick=True, bootstrap=20,
                        sections=("leaderboard",), methods=["ds", "stableval"])
    assert "against MV" not in html


EXAMPLE = stableval.example_path()


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def report_html() -> str:
    return build_report(EXAMPLE, inputs=InputOptions(duplicates="keep"), quick=True, bootstrap=40,
                        command="stableval report test")


@pytest.mark.slow
def test_every_section_is_there_and_nothing_loads_from_the_network(report_html: str) -> None:
    for section in ("summary", "agreement", "leaderboard", "win-probability", "stability", "raters", "ambiguous",
                    "pairwise", "reproducibility"):
        assert f'<section id="{section}">' in report_html
    assert not re.search(r"<(script|link|img)[^>]+(src|href)=\"https?:", report_html)
    assert "<svg" in report_html and "input sha256" in report_html
    assert "stableval report test" in report_html
    import hashlib

    assert hashlib.sha256(EXAMPLE.read_bytes()).hexdigest() in report_html


def test_untrusted_names_are_escaped(tmp_path: Path) -> None:
    path = tmp_path / "x.csv"
    path.write_text("item,agent,rater,label\nq1,<script>alert(1)</script>,r1,1\nq1,B,r1,0\nq2,B,r2,1\n"
                    "q2,<script>alert(1)</script>,r2,0\n")
    html = build_report(path, bootstrap=10, quick=True)
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;" in html


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (apt-get install chromium)")
def test_report_renders_in_headless_chromium_without_errors(report_html: str, tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (Python) not installed")
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import image

    page_file = tmp_path / "report.html"
    page_file.write_text(report_html, encoding="utf-8")
    errors: list[str] = []
    args = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync"]
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=args)
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(page_file.as_uri())
        sections = page.locator("section")
        assert sections.count() == 9
        for k in range(sections.count()):
            shot = image.imread(io.BytesIO(sections.nth(k).screenshot()), format="png")
            assert shot.shape[0] > 50 and np.std(shot[..., :3]) > 0.01  # not blank
        browser.close()
    assert errors == []


@pytest.mark.slow
def test_report_on_ratings_with_quality_control(tmp_path: Path) -> None:
    from synthetic import synthetic_frame

    frame, _ = synthetic_frame(n_items=30, seed=2)
    path = tmp_path / "ratings.csv"
    frame.to_csv(path, index=False)
    html = build_report(path, quick=True, bootstrap=20, options={"qc": {"consensus": True}})
    for section in ("agreement", "reliability", "stability", "raters"):
        assert f'<section id="{section}">' in html
    assert '<section id="pairwise">' not in html  # not pairwise data
    assert "Krippendorff's alpha (ordinal)" in html and "data:image/png;base64," in html


@pytest.fixture(scope="module")
def qc_report_html(tmp_path_factory: pytest.TempPathFactory) -> str:
    from synthetic import synthetic_frame

    frame, _ = synthetic_frame(n_items=30, seed=2)
    path = tmp_path_factory.mktemp("qc") / "ratings.csv"
    frame.to_csv(path, index=False)
    return build_report(path, quick=True, bootstrap=10, sections=("summary", "agreement", "reliability"),
                        options={"qc": {"consensus": True}})


def _section(html: str, name: str) -> str:
    start = html.index(f'<section id="{name}">')
    return html[start:html.index("</section>", start)]


def test_report_tables_scroll_inside_their_box_not_the_page(qc_report_html: str) -> None:
    reliability = _section(qc_report_html, "reliability")
    assert "<div class='table-box'><table" in reliability
    assert re.search(r"\.table-box \{[^}]*overflow-x: auto", qc_report_html)
    assert qc_report_html.count("<table") == qc_report_html.count("<div class='table-box'><table")


def test_report_shows_readable_statistic_and_column_names(qc_report_html: str) -> None:
    agreement = _section(qc_report_html, "agreement")
    assert "Krippendorff's alpha (nominal)" in agreement and "Fleiss' kappa" in agreement
    assert "krippendorff_alpha" not in agreement and "fleiss_kappa" not in agreement
    headers = re.findall(r"<th>([^<]*)</th>", qc_report_html)
    assert "CI low" in headers and "flag mismatch %" in headers
    assert not [h for h in headers if "_" in h]


def test_report_shows_each_note_once(qc_report_html: str) -> None:
    # the input note ("integer labels 0..2: ...") is both a dataset note and an agreement note
    assert qc_report_html.count("integer labels 0..2") == 1


def test_report_counts_print_as_integers() -> None:
    from stableval.report.html import table_html

    html = table_html(pd.DataFrame({"evaluator": ["a", "b"], "ratings": [12.0, float("nan")],
                                    "correct": [3.0, 4.0], "reliability": [1.0, 0.5]}))
    cells = re.findall(r"<td>([^<]*)</td>", html)
    assert cells == ["a", "12", "3", "1.000", "b", "", "4", "0.500"]


def test_report_options_are_a_typed_record_and_a_mapping_of_its_fields_still_works(qc_report_html: str,
                                                                                     tmp_path: Path) -> None:
    """Issue 25: ``build_report(options=...)`` reads a :class:`ReportOptions` record (``qc`` a ``QualityControl``);
    the old mapping is converted to it, and a misspelt key is refused instead of silently ignored."""
    from stableval.report import QualityControl, ReportOptions

    from synthetic import synthetic_frame

    frame, _ = synthetic_frame(n_items=30, seed=2)
    path = tmp_path / "ratings.csv"
    frame.to_csv(path, index=False)
    html = build_report(path, quick=True, bootstrap=10, sections=("summary", "agreement", "reliability"),
                        options=ReportOptions(qc=QualityControl(consensus=True)))
    assert _section(html, "reliability") == _section(qc_report_html, "reliability")
    assert ReportOptions.of({"qc": {"rater": "a, b"}}).qc == QualityControl(raters=("a", "b"))
    assert ReportOptions.of({"qc": {}}).qc is None  # an empty QC mapping adds no section, as before
    with pytest.raises(TypeError, match="unknown report option"):
        build_report(path, sections=("summary",), options={"QC": {"consensus": True}})


def test_games_print_as_integers_and_methods_as_labels() -> None:
    """Issue 27: Bradley–Terry ``games`` showed as 519.0, the stability table said ``stableval``/``mv``."""
    from stableval.report.html import table_html

    html = table_html(pd.DataFrame({"method": ["stableval", "mv", "stableval-2"], "games": [519.0, 501.0, 2.0]}))
    assert re.findall(r"<td>([^<]*)</td>", html) == ["STABLEVAL", "519", "MV", "501", "STABLEVAL #2", "2"]
    fractional = table_html(pd.DataFrame({"games": [1.5, 2.0]}))  # weighted votes: not counts
    assert "1.500" in fractional


def test_headers_break_between_words_only() -> None:
    """Issue 27: the "Most ambiguous responses" headers broke mid-word (``overflow-wrap: anywhere``); a wide table
    scrolls in its box instead."""
    html = build_report(EXAMPLE, inputs=InputOptions(duplicates="keep"), quick=True, sections=("summary",))
    assert "anywhere" not in html and re.search(r"\bth \{[^}]*overflow-wrap: normal", html)
