"""Issue 31: the released CLEF eHealth / Webis data is read as shipped: ``qcredibility.txt`` and
``qreadability.txt`` under their own names, the crawled texts as the release writes them (``docid, text`` TSV,
zipped or not), credibility 3 ("unable to judge") unjudged by default with a note, and every file the reader
does not read named in the notes."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from stableval.cli import app
from stableval.errors import InputError
from stableval.nrp import read_collection

from paths import shared_file

TOPICS = """<topics>
\t<topic>
\t\t<id>1</id>
\t\t<query> flu fever cough
\t\t</query>
\t</topic>
\t<topic>
\t\t<id>8</id>
\t\t<query> diabetes diet
\t\t</query>
\t</topic>
</topics>
"""
PAGES = {"p1": "flu gives fever and a cough", "p2": "tax forms", "p3": "diabetes and a good diet",
         "p4": "diet pills online", "p5": "fever in children"}


def _qrels(rows: list[tuple[str, str, int]]) -> str:
    return "".join(f"{q}\t0\t{d}\t{g}\n" for q, d, g in rows)


def _release(root: Path, *, texts: str | None = "zip") -> Path:
    """A small copy of the release's layout: topics, the three assessment files, the helper files, the crawled
    texts (``txt_min_length_50.tsv``, zipped or plain, or absent) and one top-k file."""
    (root / "dataset" / "topics").mkdir(parents=True)
    (root / "dataset" / "topics" / "topics.txt").write_text(TOPICS)
    (root / "dataset" / "topics" / "reddit-topics.txt").write_text(TOPICS)
    assessments = root / "dataset" / "assessments"
    assessments.mkdir()
    judged = [("1", "p1"), ("1", "p2"), ("1", "p5"), ("8", "p3"), ("8", "p4")]
    for name, grades in (("qrels.txt", [2, 0, 1, 2, 0]), ("qcredibility.txt", [2, 3, 1, 1, 0]),
                         ("qreadability.txt", [1, 2, 2, 0, 1])):
        (assessments / name).write_text(_qrels([(q, d, g) for (q, d), g in zip(judged, grades, strict=True)]))
    (assessments / "qrels_cred_read.txt").write_text("qid docno rel cred read\n1 p1 2 2 1\n")
    (assessments / "assessed_docs.csv").write_text("i,url\n1,https://example.org\n")
    (assessments / "README.md").write_text("# Task 2\n")
    (assessments / "qrels_extra.tsv").write_text("something else\n")  # a file nobody declared
    data = root / "dataset" / "Webdoc" / "data"
    data.mkdir(parents=True)
    table = pd.DataFrame({"docid": list(PAGES), "text": list(PAGES.values())}).to_csv(sep="\t", index=False)
    if texts == "zip":
        with zipfile.ZipFile(data / "txt_min_length_50.tsv.zip", "w") as archive:
            archive.writestr("txt_min_length_50.tsv", table)
    elif texts == "tsv":
        (data / "txt_min_length_50.tsv").write_text(table)
    top = root / "top_k_rankings" / "top_1_answers_with_original_ranking"
    top.mkdir(parents=True)
    pd.DataFrame({"docno": ["chatgpt_1_multimedqa_3", "p1", "p5"], "text": ["an answer", PAGES["p1"], PAGES["p5"]],
                  "score": [-0.1, -0.2, -0.3]}).to_csv(top / "qid_1.csv", index=False)
    return root


@pytest.mark.parametrize("texts", ["zip", "tsv"])
def test_release_layout_reads_every_dimension_as_shipped(tmp_path, texts) -> None:
    collection = read_collection(_release(tmp_path, texts=texts))
    assert collection.dimensions == ("relevance", "credibility", "readability")
    assert collection.n_questions == 2 and collection.n_documents == 5
    # credibility 3 = "unable to judge": that judgment is gone by default, and the notes say why
    assert collection.qrels("credibility").set_index("docno")["grade"].to_dict() == {
        "p1": 2.0, "p5": 1.0, "p3": 1.0, "p4": 0.0}
    assert collection.grade_maps["credibility"][3.0] is None
    notes = " | ".join(collection.notes)
    assert "grade 3 of qcredibility.txt is CLEF eHealth's 'unable to judge', read as unjudged" in notes
    assert "credibility: 1 judgment(s) with a grade mapped to 'unjudged' left out" in notes
    # the known helper files are named with the reason; the unknown one is a warning; README is documentation
    assert "'qrels_cred_read.txt' (the three qrels files joined" in notes and "'assessed_docs.csv'" in notes
    assert "'reddit-topics.txt' (25 of the 55 topics)" in notes
    assert "warning: not read, not a recognised collection file: 'qrels_extra.tsv'" in notes
    assert "README.md" not in notes


def test_release_grade_map_overrides_the_credibility_default(tmp_path) -> None:
    root = _release(tmp_path)
    (tmp_path / "map.csv").write_text("dimension,grade,gain\ncredibility,0,0\ncredibility,1,1\ncredibility,2,2\n"
                                      "credibility,3,0\n")
    collection = read_collection(root, grade_map=tmp_path / "map.csv")
    assert collection.qrels("credibility").set_index("docno")["grade"]["p2"] == 0.0
    assert "unable to judge" not in " ".join(collection.notes)


def test_release_without_the_crawled_texts_says_what_to_do(tmp_path) -> None:
    root = _release(tmp_path, texts=None)
    with pytest.raises(InputError, match=r"txt_min_length_50\.tsv\.zip: 3 of 5 judged pages have no text.*"
                                         r"--drop-missing-text"):
        read_collection(root)
    collection = read_collection(root, missing_text="drop")  # the judged pages among the top k have a text
    assert set(collection.documents["docno"]) == {"p1", "p5"} and collection.n_questions == 1
    assert "2 of 5 judged pages have a text" in " ".join(collection.notes)


def test_generic_directory_reads_clef_names_and_reports_unread_files(tmp_path) -> None:
    """Before: qcredibility.txt and qreadability.txt were ignored unless renamed qrels-<dim>.txt (two of three
    dimensions vanished), and a file the reader did not know was passed over silently."""
    root = tmp_path / "c"
    root.mkdir()
    (root / "topics.txt").write_text(TOPICS)
    pd.DataFrame({"docid": list(PAGES), "text": list(PAGES.values())}).to_csv(root / "documents.tsv", sep="\t",
                                                                               index=False)
    release = _release(tmp_path / "r")
    for name in ("qrels.txt", "qcredibility.txt", "qreadability.txt"):
        (root / name).write_text((release / "dataset" / "assessments" / name).read_text())
    (root / "judgements.csv").write_text("qid,docno,grade\n1,p1,2\n")  # a misspelt name
    collection = read_collection(root)
    assert collection.dimensions == ("relevance", "credibility", "readability")
    assert "p2" not in set(collection.qrels("credibility")["docno"])  # its 3 is unjudged, as in the release
    assert "warning: not read, not a recognised collection file: 'judgements.csv'" in " ".join(collection.notes)


def test_release_on_the_command_line(tmp_path) -> None:
    result = CliRunner().invoke(app, ["nrp", "evaluate-rankers", str(_release(tmp_path)), "-r", "bm25",
                                      "--format", "json"])
    assert result.exit_code == 0, result.output
    import json

    payload = json.loads(result.stdout)
    assert {row["dimension"] for row in payload["rows"]} == {"relevance", "credibility", "readability"}
    assert any("unable to judge" in note for note in payload["notes"])


def test_shipped_release_as_it_is_here() -> None:
    root = shared_file("webis_ecir25_ranking_generated_answers")
    with pytest.raises(InputError, match=r"9946 of 10182 judged pages have no text"):
        read_collection(root)
    collection = read_collection(root, missing_text="drop")
    assert collection.dimensions == ("relevance", "credibility", "readability")
    assert collection.n_documents == 236 and collection.n_questions == 50
    notes = " | ".join(collection.notes)
    assert "credibility: 600 judgment(s) with a grade mapped to 'unjudged'" in notes
    assert "236 of 10182 judged pages have a text" in notes
    assert "'qrels_cred_read_rel2.txt' (a 4-line excerpt" in notes and "warning: not read" not in notes


def test_shipped_answers_folder_reads_as_answers() -> None:
    from stableval.nrp.collection import read_answers

    folder = shared_file("webis_ecir25_ranking_generated_answers", "indexing", "results", "monoT5")
    notes: list[str] = []
    answers = read_answers(folder, notes=notes)
    assert len(answers) == 15_987 and answers["model"].nunique() == 8
    assert notes == ["13 answer(s) of the release have no text and are left out"]
    from stableval.nrp import read_webis_rank_files

    ranks = read_webis_rank_files(folder)  # the same ids as the shipped ranks, so the two can be joined
    assert set(answers["answer_id"]) < set(ranks["answer_id"]) and len(ranks) == 16_000
