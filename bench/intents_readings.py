"""``python -m bench.intents_readings CORPUS.jsonl …``: every line's reading, one JSON line each, for before/after diffs.

The intents bench scores only the labelled fields, and a must-ask line only on whether it
asks; a change to *what* is asked (two questions become one, a quote grows to the whole
phrase) is invisible to it. This prints, per corpus line, the labelled fields the bench
compares plus each question's kind and quote, so a reader change can be diffed line by
line against the reading of the code before it (run both, ``diff`` the outputs).
"""

from __future__ import annotations

import json
import sys
from datetime import datetime

from bench.intents import load_corpus, observed
from intents import extract_intent

__all__ = ["readings"]


def readings(path: str) -> list[dict[str, object]]:
    """One reading per line of the corpus at ``path``, offline extractor."""
    out: list[dict[str, object]] = []
    for row in load_corpus(path):
        extraction = extract_intent(row["text"], extractor="offline", region_id=row.get("region"),
                                    now=datetime.fromisoformat(row["now"]), timezone=row["timezone"])
        out.append({"text": row["text"], **observed(extraction),
                    "asked": [[q.kind.value, q.quote] for q in extraction.questions]})
    return out


if __name__ == "__main__":
    for corpus in sys.argv[1:]:
        for reading in readings(corpus):
            print(json.dumps({"corpus": corpus, **reading}, ensure_ascii=False, sort_keys=True))
