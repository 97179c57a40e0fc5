"""The expert user study of Heineking et al. (2024): per topic, the top answer (by NRP) of each model and the top
relevant document, shuffled, for an expert to rank; exported to the portal and to Label Studio.

"We sampled 20 topics and chose five answers for each topic for annotation: the top-ranked responses by ChatGPT,
Llama-2 13B, GPT-2 XL, GPT-2, and the top-ranked relevant Web page (as per monoT5)" (Heineking, Probst, Steinbach,
Potthast & Scells, arXiv 2024 / ECIR 2025, "User Study"). :func:`build_study` makes that selection for any ranker,
models and number of topics: topics drawn reproducibly (``seed``) among those where every model answered and a
document of grade >= ``min_grade`` exists; a model's top answer is its highest NRP (then ranker score, then
answer id); the top document is the ranker's highest-scored document of grade >= ``min_grade``; the items of each
topic are shuffled (the order shown, ``position``). The ranker's order of the items (``system_rank``) is what the
expert's ranking is later compared with (``stableval nrp agree``).

Exports: :func:`portal_questions` / :func:`write_portal_questions` (the portal's rank-documents question file,
JSONL, checked by :func:`check_portal_question`) and :func:`label_studio_tasks` / :func:`write_label_studio_tasks`
(Label Studio ranker tasks for :data:`LABEL_STUDIO_CONFIG`; an export of the annotated project is read back by
:func:`stableval.nrp.label_studio.read_label_studio`).

>>> check_portal_question({"id": "q1", "prompt": "flu?", "items": [
...     {"id": "a", "text": "rest", "kind": "answer", "model": "m"}, {"id": "d", "text": "...", "kind": "document",
...     "grade": 2}]})
>>> check_portal_question({"id": "q1", "prompt": "flu?", "items": []})
Traceback (most recent call last):
...
stableval.errors.InputError: column 'items': question 'q1': needs 2 to 20 items: got 0; allowed: a list of 2 to 20 \
items with unique ids
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from stableval.errors import InputError

if TYPE_CHECKING:  # pragma: no cover
    from stableval.nrp.rankers import Ranker
    from stableval.nrp.testcollection import TestCollection

__all__ = ["LABEL_STUDIO_CONFIG", "Study", "build_study", "check_portal_question", "item_sources", "label_studio_tasks",
           "portal_questions", "read_item_sources", "write_label_studio_tasks", "write_portal_questions"]

#: The authors' answer ids (``<model>_<qid>_<prompt>_<sample>``, e.g. ``gpt2-xl_22_multimedqa_10``).
_AUTHORS_ID = re.compile(r"^(?P<model>.+?)_(?P<qid>\d+)_(?P<prompt>[A-Za-z_]+)_(?P<sample>\d+)$")

#: The Label Studio labeling config the tasks are written for (a ranker over the ``items`` list).
LABEL_STUDIO_CONFIG = """<View>
  <Header value="Rank the texts: most relevant, readable and credible first"/>
  <Text name="query" value="$query"/>
  <List name="results" value="$items" title="Texts"/>
  <Ranker name="rank" toName="results"/>
</View>"""

_ITEM_KEYS: dict[str, type | tuple[type, ...]] = {"id": str, "text": str, "kind": str, "model": str,
                                                  "grade": (int, float)}


@dataclass(frozen=True)
class Study:
    """``items``: one row per shown item, ``qid, query, position`` (1 = shown first), ``item`` (answer id or
    docno), ``kind`` (answer or document), ``model`` (empty for documents), ``text``, ``score`` (the ranker's),
    ``system_rank`` (1 = the ranker's best), ``nrp`` (answers), ``grade`` (documents); ``notes``: how it was
    chosen."""

    items: pd.DataFrame
    notes: list[str] = field(default_factory=list)

    @property
    def topics(self) -> list[str]:
        return list(pd.unique(self.items["qid"]))


def build_study(collection: TestCollection, answers: pd.DataFrame, ranker: Ranker, *,
                models: Sequence[str] | None = None, prompt: str | None = None, topics: int = 20, seed: int = 0,
                min_grade: float = 1.0, dimension: str = "relevance", progress: bool = False) -> Study:
    """Choose ``topics`` topics and, per topic, the top answer of each model plus the top relevant document (see
    the module docstring). ``models``: default every model of ``answers``; ``prompt``: default the only prompt,
    or ``multimedqa`` (the paper's) when there are several."""
    from stableval.nrp.answers import answers_from_frame
    from stableval.nrp.score import score_answers

    answers = answers_from_frame(answers, collection=collection)
    prompts = list(pd.unique(answers["prompt"]))
    if prompt is None:
        if len(prompts) > 1 and "multimedqa" not in prompts:
            raise InputError("answers with several prompts", value=prompts,
                             allowed="{prompt} to choose the answers of one prompt", options={"prompt": "NAME"})
        prompt = prompts[0] if len(prompts) == 1 else "multimedqa"
    elif prompt not in prompts:
        raise InputError("no answers with this prompt", option="prompt", value=prompt, allowed=", ".join(prompts))
    answers = answers[answers["prompt"] == prompt]
    available = list(pd.unique(answers["model"]))
    chosen = list(models) if models else available
    unknown = [m for m in chosen if m not in available]
    if unknown:
        raise InputError("model without answers", option="models", value=unknown[0],
                         allowed=", ".join(available))
    if not 1 <= len(chosen) <= 19:
        raise InputError("a question shows 2 to 20 items: 1 to 19 models and the document", option="models",
                         value=len(chosen), allowed="1 to 19 models")
    if topics < 1:
        raise InputError("too few topics", option="topics", value=topics, allowed=">= 1")
    answers = answers[answers["model"].isin(chosen)].reset_index(drop=True)

    # topics: every model answered, and a relevant document exists
    qrels = collection.qrels(dimension)
    relevant = qrels[qrels["grade"] >= min_grade]
    per_topic = answers.drop_duplicates(["qid", "model"]).groupby("qid").size()
    eligible = sorted(set(per_topic.index[per_topic == len(chosen)]) & set(relevant["qid"]))
    if len(eligible) < topics:
        raise InputError(f"only {len(eligible)} topic(s) have answers of every model and a document of grade >= "
                         f"{min_grade:g}", option="topics", value=topics, allowed=f"at most {len(eligible)}")
    rng = np.random.default_rng(seed)
    picked = sorted(rng.choice(np.asarray(eligible, dtype=object), size=topics, replace=False).tolist())

    part = answers[answers["qid"].isin(picked)].reset_index(drop=True)
    scored = score_answers(collection, part, ranker, bootstrap=0, progress=progress).answers  # collection statistics
    scored = scored.assign(text=part["text"].to_numpy())
    top_answers = scored.sort_values(["qid", "model", "nrp", "score", "answer_id"],
                                     ascending=[True, True, False, False, True], kind="stable"
                                     ).drop_duplicates(["qid", "model"])

    # the top relevant document per topic, by the ranker's score among the pool's documents
    pool = collection.pool()
    pool = pool[pool["qid"].isin(picked)]
    queries = collection.queries.set_index("qid").loc[picked, "query"].tolist()
    lists = [pool.loc[pool["qid"] == q, "text"].tolist() for q in picked]
    doc_scores, _ = ranker.score(queries, lists, None, progress=progress)
    pool = pool.assign(score=np.concatenate(doc_scores)).merge(relevant, on=["qid", "docno"])
    top_docs = pool.sort_values(["qid", "score", "docno"], ascending=[True, False, True], kind="stable"
                                ).drop_duplicates("qid")

    items = pd.concat([
        pd.DataFrame({"qid": top_answers["qid"], "item": top_answers["answer_id"], "kind": "answer",
                      "model": top_answers["model"], "text": top_answers["text"], "score": top_answers["score"],
                      "nrp": top_answers["nrp"], "grade": np.nan}),
        pd.DataFrame({"qid": top_docs["qid"], "item": top_docs["docno"], "kind": "document", "model": "",
                      "text": top_docs["text"], "score": top_docs["score"], "nrp": np.nan,
                      "grade": top_docs["grade"].astype(float)}),
    ], ignore_index=True)
    clash = items.duplicated(["qid", "item"])
    if clash.any():
        raise InputError("an answer id equals a docno of the same topic", column="answer_id",
                         value=items.loc[clash, "item"].iloc[0], allowed="item ids unique within a topic")
    items["system_rank"] = items.groupby("qid")["score"].rank(ascending=False, method="min").astype(int)
    items["shuffle"] = rng.random(len(items))
    items = items.sort_values(["qid", "shuffle"], kind="stable").reset_index(drop=True)
    items["position"] = items.groupby("qid").cumcount() + 1
    items = items.merge(collection.queries[["qid", "query"]], on="qid", how="left")
    columns = ["qid", "query", "position", "item", "kind", "model", "text", "score", "system_rank", "nrp", "grade"]
    notes = [f"{topics} of {len(eligible)} eligible topics (seed {seed}); prompt {prompt}; models "
             f"{', '.join(chosen)}; top document = the ranker's best of grade >= {min_grade:g} ({dimension}); "
             f"ranked by {ranker.identity}"]
    return Study(items[columns], notes)


def portal_questions(study: Study) -> list[dict[str, Any]]:
    """One question per topic in the portal's rank-documents format (items in the shown order)."""
    out = []
    for qid, part in study.items.groupby("qid", sort=False):
        items: list[dict[str, Any]] = []
        for row in part.to_dict("records"):
            item: dict[str, Any] = {"id": str(row["item"]), "text": str(row["text"]), "kind": str(row["kind"])}
            if row["kind"] == "answer":
                item["model"] = str(row["model"])
            elif pd.notna(row["grade"]):
                item["grade"] = float(row["grade"])
            items.append(item)
        question = {"id": str(qid), "prompt": str(part["query"].iloc[0]), "items": items}
        check_portal_question(question)
        out.append(question)
    return out


def check_portal_question(question: Any) -> None:
    """Raise an :class:`InputError` unless ``question`` follows the portal's rank-documents format:
    ``{"id": str, "prompt": str, "items": [{"id": str, "text": str, "kind": "answer"|"document", "model": str
    (optional), "grade": number (optional)}, ...], "specialty": str (optional)}``, 2 to 20 items, unique ids."""
    if not isinstance(question, dict):
        raise InputError("a question is not a JSON object", value=type(question).__name__,
                         allowed='{"id", "prompt", "items"[, "specialty"]}')
    where = f"question {question.get('id')!r}"
    extra = set(question) - {"id", "prompt", "items", "specialty"}
    if extra:
        raise InputError(f"{where}: unknown key", value=sorted(extra)[0], allowed="id, prompt, items, specialty")
    for key in ("id", "prompt"):
        if not isinstance(question.get(key), str) or not question[key].strip():
            raise InputError(f"{where}: {key} must be a non-empty string", column=key, value=question.get(key))
    if "specialty" in question and not isinstance(question["specialty"], str):
        raise InputError(f"{where}: specialty must be a string", column="specialty", value=question["specialty"])
    items = question.get("items")
    if not isinstance(items, list) or not 2 <= len(items) <= 20:
        raise InputError(f"{where}: needs 2 to 20 items", column="items",
                         value=len(items) if isinstance(items, list) else items,
                         allowed="a list of 2 to 20 items with unique ids")
    seen: set[str] = set()
    for number, item in enumerate(items, start=1):
        if not isinstance(item, dict) or set(item) - set(_ITEM_KEYS):
            raise InputError(f"{where}, item {number}: not an item object", column="items",
                             value=sorted(set(item) - set(_ITEM_KEYS)) if isinstance(item, dict) else item,
                             allowed="keys id, text, kind, model, grade")
        for key in ("id", "text", "kind"):
            if key not in item:
                raise InputError(f"{where}, item {number}: missing {key}", column=f"items.{key}")
        for key, kind in _ITEM_KEYS.items():
            if key in item and (not isinstance(item[key], kind) or isinstance(item[key], bool)):
                raise InputError(f"{where}, item {number}: wrong type", column=f"items.{key}", value=item[key],
                                 allowed="a number" if key == "grade" else "a string")
        if item["kind"] not in ("answer", "document"):
            raise InputError(f"{where}, item {number}: unknown kind", column="items.kind", value=item["kind"],
                             allowed="answer, document")
        if not item["id"] or item["id"] in seen:
            raise InputError(f"{where}, item {number}: empty or repeated id", column="items.id", value=item["id"],
                             allowed="ids unique within the question")
        seen.add(item["id"])


def write_portal_questions(study: Study, path: str | Path) -> Path:
    """Write the portal's question file (JSONL, one question per line); ``stableval portal import --task
    rank-documents FILE`` reads it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in portal_questions(study)),
                    encoding="utf-8")
    return path


def label_studio_tasks(study: Study) -> list[dict[str, Any]]:
    """Label Studio tasks for :data:`LABEL_STUDIO_CONFIG`: ``data.query``, ``data.qid`` and ``data.items`` in the
    shown order, each with ``id``, a neutral ``title`` (``Text 1`` ...: the source is not shown), ``body`` (the
    text) and the ranker's ``score`` (so ``nrp agree EXPORT`` needs no RANKINGS), ``kind`` and ``model``."""
    tasks = []
    for qid, part in study.items.groupby("qid", sort=False):
        items = [{"id": str(row["item"]), "title": f"Text {row['position']}", "body": str(row["text"]),
                  "score": float(row["score"]), "kind": str(row["kind"]), "model": str(row["model"])}
                 for row in part.to_dict("records")]
        tasks.append({"data": {"qid": str(qid), "query": str(part["query"].iloc[0]), "items": items}})
    return tasks


def write_label_studio_tasks(study: Study, path: str | Path) -> Path:
    """Write the Label Studio import (a JSON list of tasks)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(label_studio_tasks(study), ensure_ascii=False, indent=1), encoding="utf-8")
    return path


def item_sources(items: Iterable[str], known: Mapping[str, str] | None = None) -> dict[str, str]:
    """The source of each item for the rank-flow plot: ``known[item]`` when given, else the model of the authors'
    answer ids (``gpt2-xl_22_multimedqa_10`` -> ``gpt2-xl``), else ``document``.

    >>> item_sources(["chatgpt_22_multimedqa_6", "01f617ac", "x"], {"x": "llama"})
    {'chatgpt_22_multimedqa_6': 'chatgpt', '01f617ac': 'document', 'x': 'llama'}
    """
    known = known or {}
    out = {}
    for item in items:
        match = _AUTHORS_ID.match(item)
        out[item] = known.get(item) or (match.group("model") if match else "document")
    return out


def read_item_sources(path: str | Path) -> dict[str, str]:
    """Item -> source (model, or ``document``) from a study file: a Label Studio export or import (items with
    ``model``/``kind``), or a table with ``item`` (or ``docno``) and ``source`` or ``model`` (``--rankings-out``);
    empty when the file names no sources."""
    from stableval.data.files import read_table_file

    path = Path(path)
    if path.is_dir():
        return {}
    if path.suffix.lower() == ".json":
        try:
            tasks = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            return {}
        out = {}
        for task in tasks if isinstance(tasks, list) else []:
            for item in (task.get("data", {}) if isinstance(task, dict) else {}).get("items", []) or []:
                if isinstance(item, dict) and ("model" in item or "kind" in item):
                    out[str(item.get("id"))] = str(item.get("model") or "") or (
                        "document" if item.get("kind") == "document" else "")
        return {k: v for k, v in out.items() if v}
    if path.suffix.lower() in (".run", ".trec", ".txt"):
        return {}
    table = read_table_file(path).rename(columns={"docno": "item"})
    column = "source" if "source" in table.columns else "model" if "model" in table.columns else None
    if "item" not in table.columns or column is None:
        return {}
    values = table[column].fillna("").astype(str)
    return {str(k): v for k, v in zip(table["item"], values, strict=True) if v}
