"""``python -m bench intents CORPUS.jsonl [--extractor offline|llm]``: score an extractor.

Each corpus line is ``{"text", "now", "timezone", "region"?, "expect": {...}}``
(``../shared/bench/README.md`` section 6). The extractor runs through the same
``extract_intent`` the CLI uses, so the score is the product's score. A request
whose extraction raises (LLM down, invalid answer) counts as wrong on every field
and is listed among the failures with its error code.
"""

from __future__ import annotations

import argparse
import json
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from intents import LlmSettings, extract_intent
from intents.extract import Extraction
from planner.errors import InvalidArgument, SortieError

__all__ = ["FIELDS", "load_corpus", "observed", "run", "score"]

FIELDS = ("mission_type", "date", "start_time", "sensors", "needs_clarification")


def load_corpus(path: str | Path) -> list[dict[str, Any]]:
    """The labelled requests; a malformed line is an ``INVALID_ARGUMENT`` naming the line."""
    rows: list[dict[str, Any]] = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InvalidArgument(f"{path}:{number}: not JSON: {exc}") from None
        missing = {"text", "now", "timezone", "expect"} - set(row)
        if missing:
            raise InvalidArgument(f"{path}:{number}: missing {', '.join(sorted(missing))}")
        rows.append(row)
    return rows


def observed(extraction: Extraction) -> dict[str, Any]:
    """The fields the corpus labels, as the extractor produced them.

    ``needs_clarification`` follows the bench's definition (the mission type
    cannot be determined), which is narrower than ``Intent.needs_clarification``
    (that one is also true when, say, a vague "next week" left the day missing).
    """
    intent = extraction.intent
    return {
        "mission_type": intent.mission_type.value if intent.mission_type else None,
        "date": extraction.date.isoformat(),
        "start_time": extraction.start_time,
        "sensors": sorted(s.value for s in intent.sensors),
        "needs_clarification": intent.mission_type is None,
    }


def score(rows: list[dict[str, Any]], extractor: str) -> dict[str, Any]:
    """Exact-match and per-field accuracy of ``extractor`` ("offline" or "llm") over ``rows``."""
    hits = dict.fromkeys(FIELDS, 0)
    exact = 0
    failures: list[dict[str, Any]] = []
    for row in rows:
        expect = row["expect"]
        try:
            got: dict[str, Any] = observed(
                extract_intent(
                    row["text"],
                    region_id=row.get("region"),
                    now=datetime.fromisoformat(row["now"]),
                    timezone=row["timezone"],
                    extractor=extractor,  # type: ignore[arg-type]
                )
            )
        except SortieError as exc:
            got = {"error": exc.code, "message": exc.message}
        keys = [k for k in FIELDS if k in expect]
        ok = {k: k in got and got[k] == (sorted(expect[k]) if k == "sensors" else expect[k]) for k in keys}
        for k, good in ok.items():
            hits[k] += good
        if all(ok.values()):
            exact += 1
        else:
            failures.append({"text": row["text"], "expected": {k: expect[k] for k in keys}, "got": got})
    n = len(rows)
    return {
        "n": n,
        "exact": round(exact / n, 4) if n else 0.0,
        "fields": {k: round(hits[k] / n, 4) if n else 0.0 for k in FIELDS},
        "failures": failures,
    }


def run(corpus_path: str, args: argparse.Namespace) -> dict[str, Any]:
    """Entry point for ``python -m bench intents``."""
    extractor = getattr(args, "extractor", None) or "offline"
    if extractor == "llm" and LlmSettings.from_env() is None:
        raise InvalidArgument("--extractor llm needs SORTIE_LLM_BASE_URL and SORTIE_LLM_MODEL")
    started = time.perf_counter()
    rows = load_corpus(corpus_path)
    result = score(rows, extractor)
    return {
        "corpus": str(corpus_path),
        "extractor": extractor,
        **result,
        "seconds": round(time.perf_counter() - started, 3),
    }
