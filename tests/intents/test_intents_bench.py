"""``python -m bench intents``: the scorer's output contract and the offline grammar's score."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.intents import FIELDS, load_corpus, run
from planner.errors import InvalidArgument
from testkit import free_port

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(__file__).with_name("corpus.jsonl")


def test_the_shipped_corpus_is_big_varied_and_well_formed() -> None:
    rows = load_corpus(CORPUS)
    assert len(rows) >= 80
    texts = [r["text"] for r in rows]
    assert len(set(texts)) == len(texts)
    chinese = sum(any("\u4e00" <= ch <= "\u9fff" for ch in t) for t in texts)
    assert chinese >= 30 and len(rows) - chinese >= 30
    assert sum(r["expect"]["needs_clarification"] for r in rows) >= 8
    assert len({r["now"] for r in rows}) >= 5
    assert len({__import__("datetime").datetime.fromisoformat(r["now"]).weekday() for r in rows}) >= 5
    assert any("不要用热成像" in t for t in texts)
    assert sum(("ignore" in t.lower() or "忽略" in t) for t in texts) >= 3
    for r in rows:
        assert set(r["expect"]) == set(FIELDS), r["text"]
        assert r["expect"]["needs_clarification"] is (r["expect"]["mission_type"] is None), r["text"]
        assert r["expect"]["sensors"] == sorted(r["expect"]["sensors"])


def test_offline_grammar_reaches_95_percent_exact_via_the_bench_command() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SORTIE_LLM_")}
    out = subprocess.run([sys.executable, "-m", "bench", "intents", str(CORPUS), "--extractor", "offline"],
                         capture_output=True, text=True, timeout=120, cwd=ROOT, env=env, check=False)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert set(result) == {"corpus", "extractor", "n", "exact", "fields", "failures", "seconds"}
    assert result["extractor"] == "offline" and result["n"] == len(load_corpus(CORPUS))
    assert set(result["fields"]) == set(FIELDS)
    assert all(0.0 <= v <= 1.0 for v in result["fields"].values())
    assert result["exact"] >= 0.95, json.dumps(result["failures"], ensure_ascii=False, indent=1)
    assert len(result["failures"]) == round((1 - result["exact"]) * result["n"])


def test_wrong_labels_are_reported_as_failures(tmp_path: Path) -> None:
    corpus = tmp_path / "c.jsonl"
    rows = [
        {"text": "明天上午9点巡查消防通道", "now": "2026-12-02T07:30:00+02:00", "timezone": "Europe/Helsinki",
         "expect": {"mission_type": "FIRE_LANE_PATROL", "date": "2026-12-03", "start_time": "09:00", "sensors": [],
                    "needs_clarification": False}},
        {"text": "明天上午9点巡查消防通道", "now": "2026-12-02T07:30:00+02:00", "timezone": "Europe/Helsinki",
         "expect": {"mission_type": "AREA_SURVEY", "date": "2026-12-04", "start_time": "09:00", "sensors": [],
                    "needs_clarification": False}},
    ]
    corpus.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n\n", encoding="utf-8")
    result = run(str(corpus), argparse.Namespace(extractor="offline"))
    assert result["n"] == 2 and result["exact"] == 0.5
    assert result["fields"] == {"mission_type": 0.5, "date": 0.5, "start_time": 1.0, "sensors": 1.0,
                                "needs_clarification": 1.0}
    (failure,) = result["failures"]
    assert failure["got"]["mission_type"] == "FIRE_LANE_PATROL" and failure["expected"]["mission_type"] == "AREA_SURVEY"


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


def test_llm_errors_count_as_wrong_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    port = free_port()  # a closed port: every extraction is LLM_UNAVAILABLE
    monkeypatch.setenv("SORTIE_LLM_BASE_URL", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setenv("SORTIE_LLM_MODEL", "m")
    monkeypatch.setenv("SORTIE_LLM_TIMEOUT_S", "1")
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("\n".join(CORPUS.read_text(encoding="utf-8").splitlines()[:2]) + "\n", encoding="utf-8")
    result = run(str(corpus), argparse.Namespace(extractor="llm"))
    assert result["extractor"] == "llm" and result["n"] == 2 and result["exact"] == 0.0
    assert set(result["fields"].values()) == {0.0}
    assert [f["got"]["error"] for f in result["failures"]] == ["LLM_UNAVAILABLE", "LLM_UNAVAILABLE"]
