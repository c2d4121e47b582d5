"""How the ``sortie`` executable ends (``flows.cli.console``, issue 27).

After a planning command the process skips the interpreter's teardown (0.10-0.20 of the demo plan's CPU s) but
keeps everything a caller can see: the exit code, all of standard output, the atexit functions. A probe process
runs ``console`` the way the ``sortie`` script does, with two witnesses: an atexit function (must run) and an
object whose ``__del__`` runs only in the interpreter's teardown (must not, after a planning command; must, after
any other command or while a thread is still running).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEMO = ["plan", "这块地今天巡一遍消防通道", "--region", "region-1001", "--now", "2026-11-29T07:00:00+02:00"]

_PROBE = """
import atexit, sys, threading, time
marks = sys.argv.pop(1)
thread = sys.argv.pop(1) == "thread"

def mark(word):
    with open(marks, "a", encoding="utf-8") as fh:
        fh.write(word + "\\n")

class Teardown:
    def __init__(self):  # what __del__ needs, held here: the module's globals may be gone by then
        self.path, self.open = marks, open

    def __del__(self):  # runs when the interpreter clears this module at exit, and only then
        with self.open(self.path, "a", encoding="utf-8") as fh:
            fh.write("teardown\\n")

witness = Teardown()
atexit.register(mark, "atexit")
if thread:
    def late():  # still running when the command ends, whatever the machine's load: it waits for the main thread
        threading.main_thread().join()
        time.sleep(0.2)
        mark("thread")
    threading.Thread(target=late).start()
from flows.cli import console
sys.argv = ["sortie", *sys.argv[1:]]
console()
"""


def _run(tmp_path: Path, *args: str, thread: bool = False) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    marks = tmp_path / "marks.txt"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SORTIE_")}
    env["SORTIE_HOME"] = str(tmp_path / "home")
    p = subprocess.run([sys.executable, "-c", _PROBE, str(marks), "thread" if thread else "-", *args], cwd=ROOT,
                       env=env, capture_output=True, text=True, timeout=120)
    return p, marks.read_text(encoding="utf-8").split() if marks.exists() else []


@pytest.mark.timeout(180)
def test_a_plan_ends_without_the_interpreters_teardown_and_keeps_its_output_code_and_atexit(tmp_path: Path) -> None:
    p, marks = _run(tmp_path, *DEMO, "--as", "li.wei", "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["plan_hash"]  # every byte of the JSON reached the pipe
    assert marks == ["atexit"]  # atexit functions ran; the teardown did not


@pytest.mark.timeout(180)
def test_a_refused_plan_keeps_its_exit_code_and_its_error(tmp_path: Path) -> None:
    p, marks = _run(tmp_path, *DEMO, "--json")  # nobody acting: a user error, exit 2
    assert p.returncode == 2
    assert json.loads(p.stdout)["error"]["code"] == "INVALID_ARGUMENT"
    assert marks == ["atexit"]


@pytest.mark.timeout(180)
def test_other_commands_end_with_the_normal_teardown(tmp_path: Path) -> None:
    p, marks = _run(tmp_path, "drafts", "--help")
    assert p.returncode == 0, p.stderr
    assert "teardown" in marks and "atexit" in marks


@pytest.mark.timeout(180)
def test_a_plan_waits_for_a_thread_that_is_still_running(tmp_path: Path) -> None:
    """Python waits for a non-daemon thread before it exits; so does a planning command (the normal exit)."""
    p, marks = _run(tmp_path, "plan", "--help", thread=True)
    assert p.returncode == 0, p.stderr
    assert marks[0] == "thread" and "teardown" in marks and "atexit" in marks
