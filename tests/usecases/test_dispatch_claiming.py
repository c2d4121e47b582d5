"""One hello-and-claim per idempotency key at a time, and no lock left behind (a long-running server dispatches
thousands of keys: the per-key locks used to stay forever)."""

from __future__ import annotations

import threading
import time

from flows.usecases import dispatching


def test_one_claimer_per_key_at_a_time_and_no_lock_outlives_its_users() -> None:
    inside: dict[str, int] = {"a": 0, "b": 0}
    most: dict[str, int] = {"a": 0, "b": 0}
    guard = threading.Lock()

    def claim(key: str) -> None:
        with dispatching._claiming(key):
            with guard:
                inside[key] += 1
                most[key] = max(most[key], inside[key])
            time.sleep(0.01)
            with guard:
                inside[key] -= 1

    threads = [threading.Thread(target=claim, args=(k,)) for k in "ab" * 8]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10.0)
    assert not any(t.is_alive() for t in threads)
    assert most == {"a": 1, "b": 1}
    assert dispatching._CLAIMING == {}


def test_a_claim_that_raises_lets_its_lock_go() -> None:
    try:
        with dispatching._claiming("k"):
            raise RuntimeError("the upload failed")
    except RuntimeError:
        pass
    assert "k" not in dispatching._CLAIMING
    with dispatching._claiming("k"):  # not held by the failed one
        assert dispatching._CLAIMING["k"][1] == 1
