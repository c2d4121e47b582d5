"""`sortie monitor` of a dispatched vehicle that never takes off says what it waits for, then ends NOT_STARTED.

Real parts: the vehicle simulator on 127.0.0.1 UDP (like ArduCopter it stays on the ground, disarmed, with
the mission it was sent until a ground station launches it: FACTS.md, "ArduCopter 4.6.3 SITL, observed"),
and the ``sortie`` CLI as a process, embedded (SORTIE_HOME), following it over MAVLink.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from control.controlkit import NOW, OPERATOR, Flight

pytestmark = pytest.mark.timeout(90)

SORTIE = Path(sys.executable).parent / "sortie"


def test_monitor_of_a_vehicle_that_never_takes_off_says_what_it_waits_for_and_ends_not_started(
        fly: Callable[..., Flight]) -> None:
    f = fly("ardupilot", monitor=False, launch=False)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}  # SORTIE_HOME: the fly fixture's
    env.pop("SORTIE_SERVER", None)
    env["COLUMNS"] = "400"  # one line per notice (rich wraps at the terminal's width)
    t0 = time.monotonic()
    done = subprocess.run([str(SORTIE), "monitor", f.draft_id, "--as", OPERATOR, "--now", NOW.isoformat(),
                           "--timeout", "22"], env=env, capture_output=True, text=True, timeout=80)
    took_s = time.monotonic() - t0
    said = done.stdout + done.stderr
    assert done.returncode == 2, said  # not flown: never a success
    waiting = [line for line in said.splitlines() if "waiting for take-off" in line]
    # every 10 s of the watch, bounded: at 10 s and 20 s, then the end at 22 s
    assert len(waiting) == 2, said
    assert all(line.startswith("M3TD-01: waiting for take-off: the vehicle is on the ground, disarmed, mode STABILIZE")
               for line in waiting), waiting  # ArduCopter boots in STABILIZE (Copter::init_ardupilot)
    assert "nothing flies until it is launched (`sortie launch`)" in waiting[0] and "ends NOT_STARTED after 22 s" in \
        waiting[0], waiting[0]
    assert "waited 10 s" in waiting[0] and "waited 20 s" in waiting[1], waiting
    assert f"{f.draft_id} v{f.version}: NOT_STARTED (state DISPATCHED)" in said, said
    ended = [line for line in said.splitlines() if line.startswith("M3TD-01: NOT_STARTED (")]
    assert len(ended) == 1 and "did not take off within" in ended[0] and "22 s: the vehicle is on the ground, " \
        "disarmed, mode STABILIZE" in ended[0], said  # by start_wait_s or by the watch's end: the same words
    assert took_s < 60, took_s
    assert f.flight.commands == [] and not f.flight.armed  # the monitor never commands anything
    assert f.ledger.get_draft(f.draft_id, f.version).state == "DISPATCHED"  # still loaded, still launchable
