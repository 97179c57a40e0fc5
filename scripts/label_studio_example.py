"""Write a small Label Studio JSON export (Export → JSON), as the tool writes it, for trying stableval on one.

Eight prompts answered by three models, each answer rated 1–5 stars on a Rating control (``quality``) by four
annotators of different strictness; one annotation skipped (cancelled) and one task nobody annotated, which
stableval leaves out and counts. Seeded, so the file is the same every time. Standard library only, so any
Python runs it (``make wheel-check`` runs it with the freshly installed wheel's interpreter).

    python scripts/label_studio_example.py export.json
    stableval score --from label-studio export.json
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

MODELS = {"model-a": 4.2, "model-b": 3.4, "model-c": 2.3}  # each model's true mean rating
ANNOTATORS = {"ann@lab.org": 0.0, "bo@lab.org": -0.6, "cy@lab.org": 0.5, "di@lab.org": 0.0}  # strictness offset
PROMPTS = 8


def annotation(annotation_id: int, task_id: int, user: str, rating: int | None) -> dict[str, Any]:
    """One annotation; ``rating=None`` is a skipped (cancelled) one, with no result."""
    result = [] if rating is None else [{"id": f"r{annotation_id}", "from_name": "quality", "to_name": "answer",
                                         "type": "rating", "origin": "manual", "value": {"rating": rating}}]
    return {"id": annotation_id, "completed_by": {"id": annotation_id % 97, "email": user}, "result": result,
            "was_cancelled": rating is None, "ground_truth": False, "lead_time": 12.5, "task": task_id,
            "created_at": "2026-11-02T10:00:00.000000Z", "updated_at": "2026-11-02T10:00:00.000000Z"}


def export(seed: int = 0) -> list[dict[str, Any]]:
    """The export: one task per (prompt, model), each with its annotations."""
    rng = random.Random(seed)
    tasks = []
    for prompt in range(1, PROMPTS + 1):
        for model, mean in MODELS.items():
            task_id = len(tasks) + 1
            annotations = []
            for user, offset in ANNOTATORS.items():
                stars = min(5, max(1, round(rng.gauss(mean + offset, 0.8))))
                annotations.append(annotation(100 * task_id + len(annotations), task_id, user, stars))
            tasks.append({"id": task_id, "data": {"prompt_id": f"p{prompt}", "model": model,
                                                  "answer": f"{model}'s answer to prompt {prompt}"},
                          "annotations": annotations, "predictions": [], "project": 1,
                          "created_at": "2026-11-01T09:00:00.000000Z", "updated_at": "2026-11-02T10:00:00.000000Z"})
    tasks[0]["annotations"][-1] = annotation(9999, 1, "di@lab.org", None)  # skipped
    tasks.append({"id": len(tasks) + 1, "data": {"prompt_id": "p9", "model": "model-a", "answer": "..."},
                  "annotations": [], "predictions": [], "project": 1})  # nobody annotated it
    return tasks


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    Path(argv[0]).write_text(json.dumps(export(), indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
