"""``python -m bench intents``: the scorer's output contract (bench README §6) and the offline reader's score."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from bench.intents import FIELDS, load_corpus, run
from planner.errors import InvalidArgument
from testkit import free_port

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(__file__).with_name("corpus.jsonl")
FROZEN = Path(__file__).with_name("frozen.jsonl")
FRESH = Path(__file__).with_name("fresh_issue30.jsonl")  # written after issue 30's reader, scored once before any fix
FRESH_B = Path(__file__).with_name("fresh_issue30b.jsonl")  # written after issue 30 part 2's fixes, scored once
FRESH_C = Path(__file__).with_name("fresh_issue30c.jsonl")  # written after the fixes for the lead's batch c, scored once
FRESH_D = Path(__file__).with_name("fresh_issue30d.jsonl")  # written after the fixes for the lead's batch d, scored once
FRESH_41 = Path(__file__).with_name("fresh_issue41.jsonl")  # written after issue 41's reader, scored once, not tuned on
HELDOUT_S3 = Path(__file__).with_name("heldout_session3.jsonl")  # an independent writer, after session 3's reader
KEYS = {"corpus", "extractor", "n", "exact", "asked", "silent_wrong", "fields", "failures", "seconds"}


@pytest.mark.parametrize("path", [CORPUS, FROZEN, FRESH, FRESH_B, FRESH_C, FRESH_D, FRESH_41, HELDOUT_S3])
def test_the_shipped_corpora_are_varied_and_well_formed(path: Path) -> None:
    rows = load_corpus(path)
    texts = [r["text"] for r in rows]
    assert len(set(texts)) == len(texts)
    chinese = sum(any("\u4e00" <= ch <= "\u9fff" for ch in t) for t in texts)
    assert chinese >= len(rows) // 4 and len(rows) - chinese >= len(rows) // 4
    must_ask = [r for r in rows if r["expect"]["needs_clarification"]]
    assert len(must_ask) >= len(rows) // 6
    assert len({r["now"] for r in rows}) >= 2
    for r in rows:
        expect = r["expect"]
        assert set(expect) <= set(FIELDS) and "needs_clarification" in expect, r["text"]
        if not expect["needs_clarification"]:
            assert {"mission_type", "date", "start_time", "sensors"} <= set(expect), r["text"]
            assert expect["mission_type"] is not None, r["text"]
            assert expect["sensors"] == sorted(expect["sensors"])
            datetime.fromisoformat(expect["date"])


def test_the_corpus_grew_with_operator_phrasings() -> None:
    rows = load_corpus(CORPUS)
    texts = [r["text"] for r in rows]
    assert len(rows) >= 270
    assert len({datetime.fromisoformat(r["now"]).weekday() for r in rows}) >= 5
    assert any("不要用热成像" in t for t in texts)
    assert sum(("ignore" in t.lower() or "忽略" in t) for t in texts) >= 3
    assert sum(r["expect"].get("altitude_m") is not None for r in rows) >= 20


def _bench(path: Path) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SORTIE_LLM_")}
    out = subprocess.run([sys.executable, "-m", "bench", "intents", str(path), "--extractor", "offline"],
                         capture_output=True, text=True, timeout=120, cwd=ROOT, env=env, check=False)
    assert out.returncode == 0, out.stderr
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def test_offline_reader_on_its_corpus_is_exact_and_never_silently_wrong() -> None:
    result = _bench(CORPUS)
    assert set(result) == KEYS
    assert result["extractor"] == "offline" and result["n"] == len(load_corpus(CORPUS))
    assert set(result["fields"]) == set(FIELDS)
    assert all(0.0 <= v <= 1.0 for v in result["fields"].values())
    assert result["silent_wrong"] == 0, json.dumps(result["failures"], ensure_ascii=False, indent=1)
    assert result["exact"] >= 0.97, json.dumps(result["failures"], ensure_ascii=False, indent=1)
    assert len(result["failures"]) == round((1 - result["exact"]) * result["n"])
    assert {f["kind"] for f in result["failures"]} <= {"asked"}


def test_offline_reader_on_the_frozen_set_is_never_silently_wrong() -> None:
    """Written before issue 16's tuning and tuned on after it (so not held out); frozen since issue 30: no change
    to the reader is tuned against it, its lines change only when the corpus contract does."""
    result = _bench(FROZEN)
    assert result["n"] == len(load_corpus(FROZEN)) >= 40
    assert result["silent_wrong"] == 0, json.dumps(result["failures"], ensure_ascii=False, indent=1)


@pytest.mark.parametrize("path", [FRESH, FRESH_B, FRESH_C, FRESH_D])
def test_offline_reader_on_the_fresh_batches_meets_issue_30s_targets(path: Path) -> None:
    """Issue 30: silent-wrong 0, exact at least 0.9, needless questions at most 10 % on text written after the reader
    (``FRESH_B``: after part 2's fixes, covering the classes the lead's independent batch found; ``FRESH_C``: after
    the fixes for the lead's batch c, scored once at exact 0.98, asked 1, silent-wrong 0, nothing fixed after;
    ``FRESH_D``: after the fixes for the lead's batch d, scored once at exact 0.925, asked 3, silent-wrong 0, nothing
    fixed after)."""
    result = _bench(path)
    assert result["n"] == len(load_corpus(path)) >= 40
    assert result["silent_wrong"] == 0, json.dumps(result["failures"], ensure_ascii=False, indent=1)
    assert result["exact"] >= 0.9 and result["asked"] <= 0.1 * result["n"]


def _row(text: str, **expect: Any) -> dict[str, Any]:
    return {"text": text, "now": "2026-12-02T07:30:00+02:00", "timezone": "Europe/Helsinki", "expect": expect}


def test_exact_asked_and_silent_wrong_are_told_apart(tmp_path: Path) -> None:
    good = dict(mission_type="FIRE_LANE_PATROL", date="2026-12-03", start_time="09:00", sensors=[], needs_clarification=False)
    rows = [
        _row("明天上午9点巡查消防通道", **good),                                   # exact
        _row("明天上午9点巡查消防通道", **dict(good, mission_type="AREA_SURVEY")),  # silent-wrong: a wrong field
        _row("明天上午9点巡查消防通道", needs_clarification=True),                  # silent-wrong: should have asked
        _row("明天上午9点巡查消防通道，高度500米", **good),                          # asked
        _row("patrol the fire lanes at 100 ft", mission_type="FIRE_LANE_PATROL", date="2026-12-02", start_time=None, sensors=[],
             altitude_m=30.48, needs_clarification=False),                       # exact, altitude in feet
        _row("巡一遍消防通道，高度5000米", needs_clarification=True),                 # exact: asked when it must
    ]
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n\n", encoding="utf-8")
    result = run(str(corpus), argparse.Namespace(extractor="offline"))
    assert result["n"] == 6 and result["exact"] == 0.5
    assert (result["asked"], result["silent_wrong"]) == (1, 2)
    assert [f["kind"] for f in result["failures"]] == ["silent_wrong", "silent_wrong", "asked"]
    assert result["fields"]["mission_type"] == 0.75  # compared only where no question was expected
    assert result["fields"]["altitude_m"] == 1.0
    assert result["fields"]["needs_clarification"] == 4 / 6 or result["fields"]["needs_clarification"] == 0.6667


def test_llm_extractor_without_settings_is_invalid_argument(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SORTIE_LLM_BASE_URL", raising=False)
    with pytest.raises(InvalidArgument, match="SORTIE_LLM_BASE_URL"):
        run(str(CORPUS), argparse.Namespace(extractor="llm"))


def test_malformed_corpus_line_names_the_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "x", "now": "2026-12-02T07:30:00+02:00", "timezone": "UTC"}\n', encoding="utf-8")
    with pytest.raises(InvalidArgument, match=r"bad.jsonl:1: missing expect"):
        load_corpus(bad)
    bad.write_text("not json\n", encoding="utf-8")
    with pytest.raises(InvalidArgument, match=r":1: not JSON"):
        load_corpus(bad)


def test_llm_errors_count_as_wrong_rows_but_not_as_silent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    port = free_port()  # a closed port: every extraction is LLM_UNAVAILABLE
    monkeypatch.setenv("SORTIE_LLM_BASE_URL", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setenv("SORTIE_LLM_MODEL", "m")
    monkeypatch.setenv("SORTIE_LLM_TIMEOUT_S", "1")
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("\n".join(CORPUS.read_text(encoding="utf-8").splitlines()[:2]) + "\n", encoding="utf-8")
    result = run(str(corpus), argparse.Namespace(extractor="llm"))
    assert result["extractor"] == "llm" and result["n"] == 2 and result["exact"] == 0.0
    assert result["silent_wrong"] == 0 and result["asked"] == 0
    assert {k: v for k, v in result["fields"].items() if k != "altitude_m"} == dict.fromkeys(
        [k for k in FIELDS if k != "altitude_m"], 0.0
    )
    assert [(f["kind"], f["got"]["error"]) for f in result["failures"]] == [("error", "LLM_UNAVAILABLE")] * 2


def test_offline_reader_on_the_batch_written_after_issue_41_meets_its_targets() -> None:
    """Issue 41: exact at least 0.95 and no silent-wrong on requests written after the change (52, 20 must-ask, 17 zh;
    scored once at exact 0.981, 1 needless question — "nxet friday", a swap of a four-letter word, asked — nothing
    fixed after; main before the change: exact 0.789, 8 silent-wrong)."""
    result = _bench(FRESH_41)
    assert result["n"] == len(load_corpus(FRESH_41)) >= 40
    assert result["silent_wrong"] == 0, json.dumps(result["failures"], ensure_ascii=False, indent=1)
    assert result["exact"] >= 0.95 and result["asked"] <= 0.05 * result["n"]


def test_offline_reader_on_session_3s_independent_batch_meets_issue_41s_targets() -> None:
    """Issue 41 on requests written after the change by a writer who never read the reader (60: 31 en, 29 zh, 21
    must-ask; sealed before the reader ran, scored once on main 18a7dae: exact 1.000, 21/21 asked, 0 silent-wrong,
    0 needless). The reader changed after that score (docs/intents.md, session 3): this holds it to the same bar."""
    result = _bench(HELDOUT_S3)
    assert result["n"] == len(load_corpus(HELDOUT_S3)) == 60
    assert result["silent_wrong"] == 0, json.dumps(result["failures"], ensure_ascii=False, indent=1)
    assert result["exact"] >= 0.95 and result["asked"] <= 0.05 * result["n"]
