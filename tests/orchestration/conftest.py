"""One real Prefect server on 127.0.0.1 for the whole test session (tests marked ``prefect``).

Starting a server on a fresh database runs every migration (tens of seconds
on this machine), so the migrated SQLite file is made once with ``prefect
server database upgrade`` and cached under the system tmp dir, keyed by the
Prefect version; each session starts from a copy of it. The test process
points ``PREFECT_API_URL`` (and ``PREFECT_HOME``, so result storage is shared
with the subprocesses the tests start) at that server and refreshes Prefect's
process-global settings, so threads see it too. At teardown the log and
event workers are drained first (otherwise the process stalls ~70 s at exit,
FACTS), then the server is stopped.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from testkit import free_port, stop_process_group

REPO = Path(__file__).resolve().parents[2]
PREFECT_BIN = Path(sys.executable).with_name("prefect")
SERVER_START_BUDGET_S = 120.0


@dataclass(frozen=True)
class PrefectServer:
    """A running server and the environment that points a process at it."""

    api_url: str
    home: Path
    env: dict[str, str]
    log_path: Path


def _base_env(home: Path, db_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        PREFECT_HOME=str(home),
        PREFECT_API_DATABASE_CONNECTION_URL=f"sqlite+aiosqlite:///{db_path}",
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        PREFECT_SERVER_UI_ENABLED="false",
        PREFECT_UI_ENABLED="false",
        PREFECT_LOGGING_LEVEL="WARNING",
        PREFECT_SERVER_LOGGING_LEVEL="WARNING",
    )
    env.pop("PREFECT_API_URL", None)
    return env


def migrated_database() -> Path:
    """The cached, fully migrated SQLite file for this Prefect version (made once per machine)."""
    import importlib.metadata

    version = importlib.metadata.version("prefect")
    cache = Path(tempfile.gettempdir()) / "sortie-prefect-cache"
    cache.mkdir(parents=True, exist_ok=True)
    target = cache / f"prefect-{version}.db"
    if target.exists():
        return target
    work = Path(tempfile.mkdtemp(prefix="migrate-", dir=cache))
    db = work / "prefect.db"
    subprocess.run(
        [str(PREFECT_BIN), "server", "database", "upgrade", "-y"],
        env=_base_env(work / "home", db),
        check=True,
        capture_output=True,
        timeout=300,
    )
    os.replace(db, target)  # atomic: a concurrent session sees either nothing or the whole file
    shutil.rmtree(work, ignore_errors=True)
    return target


def start_server(root: Path, *, ui: bool = False, database_url: str | None = None,
                 budget_s: float = SERVER_START_BUDGET_S, settings: dict[str, str] | None = None,
                 ) -> tuple[subprocess.Popen[bytes], PrefectServer]:
    """Start ``prefect server start`` on a free 127.0.0.1 port from a copy of the migrated database, or on
    ``database_url`` (say PostgreSQL: its migrations then run at the server's first start); ``settings``: more
    ``PREFECT_…`` settings of the server process (say its scheduler's loop)."""
    root.mkdir(parents=True, exist_ok=True)
    db = root / "prefect.db"
    if database_url is None:
        shutil.copyfile(migrated_database(), db)
    home = root / "home"
    home.mkdir(exist_ok=True)
    port = free_port()
    env = _base_env(home, db)
    if database_url is not None:
        env["PREFECT_API_DATABASE_CONNECTION_URL"] = database_url
    if ui:  # the UI's JavaScript calls the API at PREFECT_UI_API_URL (default :4200), not where it was served from
        env.update(PREFECT_SERVER_UI_ENABLED="true", PREFECT_UI_ENABLED="true",
                   PREFECT_UI_API_URL=f"http://127.0.0.1:{port}/api", PREFECT_SERVER_UI_API_URL=f"http://127.0.0.1:{port}/api")
    env.update(settings or {})
    log_path = root / "server.log"
    log = log_path.open("wb")
    proc = subprocess.Popen(
        [str(PREFECT_BIN), "server", "start", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    api_url = f"http://127.0.0.1:{port}/api"
    deadline = time.monotonic() + budget_s
    while True:
        try:
            with urllib.request.urlopen(f"{api_url}/health", timeout=2) as resp:
                if resp.status == 200:
                    break
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            stop_process_group(proc)
            raise RuntimeError(f"prefect server did not start; see {log_path}:\n{log_path.read_text(errors='replace')[-3000:]}")
        time.sleep(0.3)
    client_env = dict(env)
    client_env["PREFECT_API_URL"] = api_url
    client_env.pop("PREFECT_API_DATABASE_CONNECTION_URL", None)
    return proc, PrefectServer(api_url=api_url, home=home, env=client_env, log_path=log_path)


def drain_prefect_workers() -> None:
    """Flush Prefect's background log and event workers so the process can exit promptly."""
    from prefect.events.worker import EventsWorker
    from prefect.logging.handlers import APILogWorker

    try:
        APILogWorker.drain_all(timeout=5)
    except Exception:  # noqa: BLE001 - a worker that never started has nothing to drain
        pass
    try:
        EventsWorker.drain_all(timeout=5)
    except Exception:  # noqa: BLE001
        pass


@contextlib.contextmanager
def pointed_at(proc: subprocess.Popen[bytes], server: PrefectServer) -> Iterator[PrefectServer]:
    """This process (threads included) talks to ``server`` inside the block; after it, Prefect's workers are
    drained, the server stopped and the environment restored."""
    import prefect.context

    saved = {k: os.environ.get(k) for k in ("PREFECT_API_URL", "PREFECT_HOME", "PREFECT_SERVER_ANALYTICS_ENABLED", "PREFECT_LOGGING_LEVEL")}
    os.environ.update(
        PREFECT_API_URL=server.api_url,
        PREFECT_HOME=str(server.home),
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        PREFECT_LOGGING_LEVEL="WARNING",
    )
    prefect.context.refresh_global_settings_context()
    try:
        yield server
    finally:
        drain_prefect_workers()
        stop_process_group(proc)
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        prefect.context.refresh_global_settings_context()


@pytest.fixture(scope="session")
def prefect_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrefectServer]:
    """The session's server; the test process talks to it (threads included)."""
    with pointed_at(*start_server(tmp_path_factory.mktemp("prefect"))) as server:
        yield server
