"""Item texts for the diagnosis (issue 31): from a column of the ratings file or from a file of their own."""

from __future__ import annotations

from pathlib import Path

import pytest

from stableval.data.item_text import read_item_text
from stableval.errors import InputError


def test_a_column_of_the_ratings_file(tmp_path: Path) -> None:
    ratings = tmp_path / "ratings.csv"
    ratings.write_text("question_id,rater,label,prompt\nq1,a,1,Hi?\nq1,b,0,Hi?\nq2,a,1,\n")
    assert read_item_text("prompt", ratings).to_dict() == {"q1": "Hi?", "q2": ""}
    with pytest.raises(InputError, match="no such item text column"):
        read_item_text("missing", ratings)


def test_a_file_of_item_texts(tmp_path: Path) -> None:
    texts = tmp_path / "texts.csv"
    texts.write_text("item,text\nq1,\"What is up, doc?\"\n")
    assert read_item_text(texts).to_dict() == {"q1": "What is up, doc?"}
    two = tmp_path / "two.csv"
    two.write_text("id_of_question,words\nq9,Why?\n")
    assert read_item_text(two).to_dict() == {"q9": "Why?"}
    three = tmp_path / "three.csv"
    three.write_text("item,a,b\nq1,x,y\n")
    with pytest.raises(InputError, match="no text column"):
        read_item_text(three)
