"""``python -m bench intents CORPUS.jsonl [--extractor offline|llm [--base-url URL --model NAME]]``: score an extractor.

Each corpus line is ``{"text", "now", "timezone", "region"?, "expect": {...}}``
(``../shared/bench/README.md`` section 6). The extractor runs through the same
``extract_intent`` the CLI uses, so the score is the product's score.

Scoring (section 6): when ``expect.needs_clarification`` is true only that field
is compared. A request is **exact** when every expected field matches; **asked**
when the extractor asks although nothing needed asking (safe, not exact);
**silent_wrong** when it does not ask and some field is wrong, or should have
asked and did not. ``asked`` and ``silent_wrong`` are counts; ``exact`` and the
per-field accuracies are fractions (a field's accuracy is over the requests that
compare it). A request whose extraction raises (LLM down, invalid answer) is
wrong on every field, neither asked nor silent, and listed with kind ``error``.

With ``--extractor llm`` the model is reached at ``--base-url``/``--model`` (else
``SORTIE_LLM_*``), scored through the same product path (its answer checked against
the offline reading), and ``disagreement`` adds, per field, the share of requests on
which the model's own answer (before the check) differed from the offline reader's.
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
from intents.intent import Intent
from planner.errors import InvalidArgument, SortieError

__all__ = ["FIELDS", "load_corpus", "observed", "run", "score"]

FIELDS = ("mission_type", "date", "start_time", "sensors", "altitude_m", "needs_clarification")
ALTITUDE_TOLERANCE_M = 0.01


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
    """The fields the corpus labels, as the extractor produced them."""
    intent = extraction.intent
    return {
        "mission_type": intent.mission_type.value if intent.mission_type else None,
        "date": extraction.date.isoformat(),
        "start_time": extraction.start_time,
        "sensors": sorted(s.value for s in intent.sensors),
        "altitude_m": intent.altitude_m,
        "needs_clarification": intent.needs_clarification,
    }


def _same(key: str, got: Any, want: Any) -> bool:
    if key == "sensors":
        return isinstance(got, list) and sorted(got) == sorted(want)
    if key == "altitude_m" and got is not None and want is not None:
        return abs(float(got) - float(want)) <= ALTITUDE_TOLERANCE_M
    return bool(got == want)


def _model_fields(proposed: Intent, row: dict[str, Any]) -> dict[str, Any]:
    """The labelled fields of the model's own answer, resolved as the product resolves any Intent."""
    return observed(Extraction.resolve(proposed, "llm", now=datetime.fromisoformat(row["now"]), timezone=row["timezone"]))


def score(rows: list[dict[str, Any]], extractor: str, settings: LlmSettings | None = None) -> dict[str, Any]:
    """Exact, asked, silent-wrong and per-field accuracy of ``extractor`` ("offline" or "llm") over ``rows``."""
    differ = dict.fromkeys(FIELDS, 0)
    proposals = 0
    hits = dict.fromkeys(FIELDS, 0)
    compared = dict.fromkeys(FIELDS, 0)
    exact = asked = silent_wrong = 0
    failures: list[dict[str, Any]] = []
    for row in rows:
        expect = row["expect"]
        common: dict[str, Any] = dict(region_id=row.get("region"), now=datetime.fromisoformat(row["now"]),
                                      timezone=row["timezone"])
        try:
            extraction = extract_intent(row["text"], extractor=extractor, settings=settings, **common)  # type: ignore[arg-type]
            got: dict[str, Any] = observed(extraction)
            if extraction.proposed is not None:
                proposals += 1
                mine = observed(extract_intent(row["text"], extractor="offline", **common))
                theirs = _model_fields(extraction.proposed, row)
                for k in FIELDS:
                    differ[k] += not _same(k, theirs[k], mine[k])
        except SortieError as exc:
            got = {"error": exc.code, "message": exc.message}
        must_ask = bool(expect.get("needs_clarification"))
        keys = ["needs_clarification"] if must_ask else [k for k in FIELDS if k in expect]
        ok = {k: k in got and _same(k, got[k], expect[k]) for k in keys}
        for k, good in ok.items():
            compared[k] += 1
            hits[k] += good
        if all(ok.values()):
            exact += 1
            continue
        if "error" in got:
            kind = "error"
        elif got["needs_clarification"] and not must_ask:
            kind = "asked"
            asked += 1
        else:
            kind = "silent_wrong"
            silent_wrong += 1
        failures.append({"text": row["text"], "expected": {k: expect[k] for k in keys}, "got": got, "kind": kind})
    n = len(rows)
    extra = {"disagreement": {k: round(differ[k] / proposals, 4) if proposals else None for k in FIELDS},
             "model_answers": proposals} if extractor == "llm" else {}
    return {
        **extra,
        "n": n,
        "exact": round(exact / n, 4) if n else 0.0,
        "asked": asked,
        "silent_wrong": silent_wrong,
        "fields": {k: round(hits[k] / compared[k], 4) if compared[k] else 1.0 for k in FIELDS},
        "failures": failures,
    }


def run(corpus_path: str, args: argparse.Namespace) -> dict[str, Any]:
    """Entry point for ``python -m bench intents``."""
    extractor = getattr(args, "extractor", None) or "offline"
    settings = None
    if extractor == "llm":
        base_url, model = getattr(args, "base_url", None), getattr(args, "model", None)
        settings = LlmSettings(base_url=base_url, model=model or "") if base_url else LlmSettings.from_env()
        if settings is None:
            raise InvalidArgument("--extractor llm needs --base-url and --model (or SORTIE_LLM_BASE_URL and SORTIE_LLM_MODEL)")
    started = time.perf_counter()
    rows = load_corpus(corpus_path)
    result = score(rows, extractor, settings)
    return {
        "corpus": str(corpus_path),
        "extractor": extractor,
        **result,
        "seconds": round(time.perf_counter() - started, 3),
    }
