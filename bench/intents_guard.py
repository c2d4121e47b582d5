"""``python -m bench.intents_guard CORPUS.jsonl …``: the LLM path's guard, measured without a language model.

There is no language model on this machine, so the LLM path's *accuracy* cannot be measured here. What can be is
the guard every model answer passes (``intents.verify.check_against_text``): the product path — instructor, the
openai client, real HTTP to an OpenAI-compatible server on 127.0.0.1, the check against the offline reading —
with a stand-in "model" of a known behaviour:

* ``echo``: the model answers the offline reader's own Intent. The LLM path must then score exactly as the
  offline path (the plumbing changes nothing);
* ``wrong-<field>``: the model answers the offline reading with one field wrong (the day a day later, the clock an
  hour later, a sensor nobody asked for, another mission, a height the text does not give). A wrong value must
  never pass silently: each line is scored, and ``caught`` counts the lines where the product asked instead of
  planning the model's value.

What this does not measure: how often a real model is right, how it reads what the offline reader cannot, its
latency. Prints one JSON object per corpus and behaviour (counts, no timing).
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from bench.intents import load_corpus, score
from intents import LlmSettings, extract_intent
from intents.intent import MissionType, Sensor

__all__ = ["BEHAVIOURS", "guard"]


def _later_day(i: dict[str, Any], now: datetime) -> None:
    when = i["when"]
    day = datetime.fromisoformat(when["date"]).date() if when.get("date") else None
    when["date"] = ((day or now.date()) + timedelta(days=1)).isoformat()
    when["day"] = None


def _later_clock(i: dict[str, Any], now: datetime) -> None:
    clock = i["when"].get("clock") or "09:00"
    hh, mm = int(clock[:2]), clock[3:]
    i["when"]["clock"] = f"{(hh + 1) % 24:02d}:{mm}"


def _extra_sensor(i: dict[str, Any], now: datetime) -> None:
    unasked = [s.value for s in Sensor if s.value not in i["sensors"] and s.value not in i["excluded_sensors"]]
    i["sensors"] = sorted(i["sensors"] + unasked[:1])


def _other_mission(i: dict[str, Any], now: datetime) -> None:
    kinds = [m.value for m in MissionType]
    i["mission_type"] = kinds[(kinds.index(i["mission_type"]) + 1) % len(kinds)] if i["mission_type"] else kinds[0]


def _unsaid_height(i: dict[str, Any], now: datetime) -> None:
    i["altitude_m"] = 50.0 if i["altitude_m"] is None else float(i["altitude_m"]) + 10


BEHAVIOURS: dict[str, Callable[[dict[str, Any], datetime], None] | None] = {
    "echo": None,
    "wrong-day": _later_day,
    "wrong-clock": _later_clock,
    "wrong-sensor": _extra_sensor,
    "wrong-mission": _other_mission,
    "wrong-height": _unsaid_height,
}


def _answers(rows: list[dict[str, Any]], behaviour: str) -> dict[str, str]:
    """The stand-in model's answer to each request text: the offline Intent, changed as ``behaviour`` says."""
    change = BEHAVIOURS[behaviour]
    out: dict[str, str] = {}
    for row in rows:
        now = datetime.fromisoformat(row["now"])
        offline = extract_intent(row["text"], extractor="offline", region_id=row.get("region"), now=now,
                                 timezone=row["timezone"])
        intent = json.loads(offline.intent.model_dump_json())
        if change is not None:
            change(intent, now)
        out[" ".join(row["text"].split())] = json.dumps(intent, ensure_ascii=False)  # as the product sends it
    return out


@contextmanager
def _model(answers: dict[str, str]) -> Iterator[str]:
    """A chat-completions server on 127.0.0.1 answering each ``<request>`` with its scripted Intent."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
            user = next(m["content"] for m in body["messages"] if m["role"] == "user")
            said = user.split("<request>\n", 1)[-1].rsplit("\n</request>", 1)[0]
            content = answers.get(said, "{}")
            payload = {"id": "guard", "object": "chat.completion", "created": 0, "model": body.get("model", "?"),
                       "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                    "finish_reason": "stop", "logprobs": None}],
                       "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}}
            data = json.dumps(payload).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    host, port = server.server_address[:2]
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://{host}:{port}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def guard(path: str, behaviour: str) -> dict[str, Any]:
    """Score the LLM path on the corpus at ``path`` with the stand-in model ``behaviour``."""
    rows = load_corpus(path)
    with _model(_answers(rows, behaviour)) as url:
        settings = LlmSettings(base_url=url, model="stand-in", mode="json", timeout_s=5.0, max_retries=0)
        result = score(rows, "llm", settings)
    clear = [r for r in rows if not r["expect"].get("needs_clarification")]
    asked_texts = {f["text"] for f in result["failures"] if f["kind"] in ("asked", "error")}
    return {"corpus": path, "behaviour": behaviour, "n": result["n"], "exact": result["exact"],
            "asked": result["asked"], "silent_wrong": result["silent_wrong"],
            "errors": sum(f["kind"] == "error" for f in result["failures"]),
            "clear_lines": len(clear), "caught": sum(r["text"] in asked_texts for r in clear),
            "silent": [f["text"] for f in result["failures"] if f["kind"] == "silent_wrong"][:10]}


if __name__ == "__main__":
    corpora = [a for a in sys.argv[1:] if not a.startswith("--")]
    chosen = [a[2:] for a in sys.argv[1:] if a.startswith("--")] or list(BEHAVIOURS)
    for corpus in corpora:
        for name in chosen:
            print(json.dumps(guard(corpus, name), ensure_ascii=False), flush=True)
