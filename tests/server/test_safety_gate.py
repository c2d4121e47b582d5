"""The safety gate (``flows.server.gate``) and the read audits that pass through it (``flows.server.audit_queue``).

Unit-level, real threads and a real event loop; the behaviour under a real server's load is
``test_safety_under_load.py``. Timings are generous bounds: the machine is shared.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Sequence
from datetime import datetime

from flows.ledger import AuditEntry
from flows.server.audit_queue import AuditQueue
from flows.server.gate import SafetyGate

NOW = datetime.fromisoformat("2026-11-29T07:00:00+02:00")


def _entry(i: int) -> AuditEntry:
    return AuditEntry(actor="t", command=f"server.show.{i}", args={}, result_code="OK", duration_s=0.0, started=NOW)


def test_an_open_gate_costs_a_read_nothing() -> None:
    gate = SafetyGate()
    assert gate.pause() == 0.0 and asyncio.run(gate.passage()) == 0.0
    assert gate.to_dict() == {"open": True, "closed": 0, "held": 0, "hold_max_s": gate.hold_max_s}


def test_a_read_waits_until_the_last_safety_request_ends() -> None:
    gate = SafetyGate(hold_max_s=30.0)
    gate.close()
    gate.close()  # two safety requests in progress
    waited: list[float] = []
    reader = threading.Thread(target=lambda: waited.append(gate.pause()))
    reader.start()
    time.sleep(0.3)
    gate.open()  # one of two ended: still closed
    time.sleep(0.3)
    assert reader.is_alive()
    gate.open()
    reader.join(10)
    assert not reader.is_alive() and 0.5 <= waited[0] < 10
    assert gate.to_dict()["closed"] == 1 and gate.held == 1 and gate.pause() == 0.0


def test_a_long_safety_request_keeps_reads_out_at_most_hold_max_s() -> None:
    gate = SafetyGate(hold_max_s=0.4)
    gate.close()  # a recall that follows its vehicle down: its request lasts minutes
    t0 = time.monotonic()
    assert 0.3 <= gate.pause() and time.monotonic() - t0 < 5
    assert gate.pause() == 0.0  # its hold is over: reads go on while it waits for the vehicle
    gate.open()
    gate.close()  # the next safety request closes it afresh
    assert gate.left_s() > 0.2
    gate.open()


def test_the_event_loop_side_waits_without_a_thread_and_opens_with_the_gate() -> None:
    async def scenario() -> tuple[float, float]:
        gate = SafetyGate(hold_max_s=30.0)
        gate.close()
        waiter = asyncio.create_task(gate.passage())
        await asyncio.sleep(0.3)
        assert not waiter.done()
        gate.open()
        waited = await asyncio.wait_for(waiter, 10)
        gate.close()
        timed_out = SafetyGate(hold_max_s=0.3)
        timed_out.close()
        return waited, await asyncio.wait_for(timed_out.passage(), 10)

    waited, held_longest = asyncio.run(scenario())
    assert 0.25 <= waited < 10 and 0.2 <= held_longest < 10


def test_read_audits_are_written_in_chunks_each_after_the_gate() -> None:
    gate = SafetyGate(hold_max_s=30.0)
    chunks: list[int] = []
    gate_open_at_write: list[bool] = []

    def write(rows: Sequence[AuditEntry]) -> int:
        chunks.append(len(rows))
        gate_open_at_write.append(gate.left_s() == 0)
        return len(rows)

    q = AuditQueue(write, flush_s=3600, batch=10_000, pause=gate.pause, chunk=16)
    try:
        for i in range(40):
            q.put(_entry(i))
        gate.close()
        flusher = threading.Thread(target=q.flush)
        flusher.start()
        time.sleep(0.3)
        assert chunks == []  # nothing written while a safety request is in progress
        gate.open()
        flusher.join(10)
        assert chunks == [16, 16, 8] and all(gate_open_at_write) and q.written == 40
    finally:
        q.close()
