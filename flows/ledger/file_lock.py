"""The cross-process turn at the ledger file: who may have it open now, and how to ask for it.

Why: DuckDB lets one process at a time open a file for writing; the others
get a lock error when they try to connect, and retrying connections under
contention burns the CPU the holder needs. So every process first waits its
turn on an advisory ``flock`` of ``<ledger>.lock`` (polled with a bounded,
jittered backoff; past the budget ``LedgerUnavailable``).

Two kinds of holder:

- **a unit of work** (the CLI, a Prefect worker, a test): takes the turn,
  opens, works, closes, gives the turn back (``turn``);
- **a server** (``flows.ledger.shared``): takes the turn once and keeps the
  file open. Anyone else who wants the file *knocks* first: a shared ``flock``
  on ``<ledger>.knock`` held while it waits and works. The server looks for a
  knock a few dozen times a second (``knocking``: an exclusive non-blocking
  ``flock`` that fails while anyone holds it shared), finishes what it is
  doing, closes the file, gives the turn up, and takes it back only when no
  one knocks any more. So ``sortie admin …``, ``sortie ledger backup --home``
  or a test reading the server's ledger still work while a server runs; they
  only pause it for their own unit of work.

A knock costs an ``open`` and a ``flock`` per unit of work: microseconds.
"""

from __future__ import annotations

import fcntl
import os
import random
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from flows.errors import LedgerUnavailable

__all__ = ["turn", "take_turn", "give_back", "knocking", "wait_unknocked", "open_knock_probe", "lock_path", "knock_path"]


def lock_path(ledger: Path) -> Path:
    return ledger.with_name(ledger.name + ".lock")


def knock_path(ledger: Path) -> Path:
    return ledger.with_name(ledger.name + ".knock")


def _open_private(path: Path) -> int:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        if os.fstat(fd).st_mode & 0o077:
            os.fchmod(fd, 0o600)
    except OSError:
        pass
    return fd


def _poll_flock(fd: int, how: int, deadline: float, *, what: str, ledger: Path, budget_s: float) -> None:
    delay = 0.002
    while True:
        try:
            fcntl.flock(fd, how | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise LedgerUnavailable(
                    f"the ledger {ledger} stayed locked by another process for {budget_s:g} s ({what}); "
                    "try again when it is free"
                ) from None
            time.sleep(delay * (0.5 + random.random()))
            delay = min(delay * 1.5, 0.05)


def take_turn(ledger: Path, deadline: float, budget_s: float) -> int:
    """Wait for the exclusive turn at ``ledger`` until ``deadline``; the descriptor that holds it."""
    ledger.parent.mkdir(parents=True, exist_ok=True)
    fd = _open_private(lock_path(ledger))
    try:
        _poll_flock(fd, fcntl.LOCK_EX, deadline, what="its turn", ledger=ledger, budget_s=budget_s)
    except BaseException:
        os.close(fd)
        raise
    return fd


def give_back(fd: int) -> None:
    try:
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


@contextmanager
def turn(ledger: Path, budget_s: float) -> Iterator[float]:
    """One unit of work's turn: knock (so a server holding the file lets go), then take the turn.

    Yields the deadline left for connecting. Serialises the threads of one
    process too (each ``flock`` is on its own open file description).
    """
    deadline = time.monotonic() + budget_s
    ledger.parent.mkdir(parents=True, exist_ok=True)
    knock = _open_private(knock_path(ledger))
    try:
        _poll_flock(knock, fcntl.LOCK_SH, deadline, what="knocking", ledger=ledger, budget_s=budget_s)
        fd = take_turn(ledger, deadline, budget_s)
        try:
            yield deadline
        finally:
            give_back(fd)
    finally:
        os.close(knock)  # closing drops the shared lock


def knocking(probe_fd: int) -> bool:
    """Whether someone holds ``<ledger>.knock`` (``probe_fd`` is the server's own descriptor of it)."""
    try:
        fcntl.flock(probe_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    fcntl.flock(probe_fd, fcntl.LOCK_UN)
    return False


def wait_unknocked(probe_fd: int, deadline: float, *, ledger: Path, budget_s: float) -> None:
    """Wait until nobody knocks (a server taking the file back lets every waiting unit of work go first)."""
    delay = 0.002
    while knocking(probe_fd):
        if time.monotonic() >= deadline:
            raise LedgerUnavailable(
                f"the ledger {ledger} was kept by other processes for {budget_s:g} s; try again when it is free"
            )
        time.sleep(delay * (0.5 + random.random()))
        delay = min(delay * 1.5, 0.05)


def open_knock_probe(ledger: Path) -> int:
    """The server's own descriptor of ``<ledger>.knock`` (never held: only probed)."""
    return _open_private(knock_path(ledger))
