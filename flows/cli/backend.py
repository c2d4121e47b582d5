"""Where a workflow command runs: in-process on the local ledger, or through ``sortie server``.

``backend(...)`` is chosen once per command: with ``SORTIE_SERVER`` set, the
command is a client of the authority (``flows.client``): the token says who
acts, the server's clock and world are used, and ``--as``/``--world``/``--now``
are refused (``--world``/``--now`` only mean something to ``plan --what-if``
and the simulator, which never reach this). Without it, the same use cases run
in-process: the ledger is opened once here and handed to them, the identity is
*asserted* (``--as``/``SORTIE_USER``), and every result and audit row says
``"mode": "local"``.

Both backends have the same methods and return the same JSON-able dicts, so a
command renders and exits the same way in either mode.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from flows.context import resolve_now
from planner.errors import InvalidArgument, LedgerUnavailable, SortieError

__all__ = ["Backend", "LocalBackend", "backend", "server_url"]


def server_url() -> str | None:
    """``SORTIE_SERVER`` (the authority's base URL), or None for the embedded mode."""
    url = os.environ.get("SORTIE_SERVER", "").strip()
    return url or None


class Backend:
    """The workflow operations a command can ask for (see ``LocalBackend`` and ``flows.client.RemoteBackend``)."""

    mode = "local"

    def plan(self, text: str, region: str | None, area: Any, coverage_target: float | None = None) -> dict[str, Any]: raise NotImplementedError
    def drafts(self, limit: int) -> dict[str, Any]: raise NotImplementedError
    def show(self, draft_id: str, version: int | None) -> dict[str, Any]: raise NotImplementedError
    def diff(self, draft_id: str, v1: int, v2: int) -> dict[str, Any]: raise NotImplementedError
    def log(self, draft_id: str) -> dict[str, Any]: raise NotImplementedError
    def replan(self, draft_id: str) -> dict[str, Any]: raise NotImplementedError
    def approve(self, draft_id: str, version: int, plan_hash: str | None, comment: str) -> dict[str, Any]: raise NotImplementedError
    def reject(self, draft_id: str, version: int, reason: str) -> dict[str, Any]: raise NotImplementedError
    def dispatch(self, draft_id: str, version: int | None, link: str | dict[str, str] | None, dry_run: bool) -> dict[str, Any]: raise NotImplementedError
    def export(self, draft_id: str, version: int | None, fmt: str, out: Path | None, sortie: int) -> dict[str, Any]: raise NotImplementedError


class LocalBackend(Backend):
    """The embedded mode: the use cases in-process on ``SORTIE_HOME``'s ledger, identity asserted."""

    mode = "local"

    def __init__(self, *, actor: str | None, world: str | None, now: str | None, rules: str | None = None) -> None:
        from flows.ledger import open_ledger

        self.ledger = open_ledger()
        self.actor_id = actor
        self.world = world
        self.now_text = now
        self.rules = rules

    # -- plumbing

    def _svc(self) -> Any:
        from flows.usecases import service

        return service

    def _actor(self) -> Any:
        from flows.usecases.actor import Actor

        if not self.actor_id:
            raise InvalidArgument("who is acting? give --as USER or set SORTIE_USER")
        return Actor(self.actor_id)

    def _now(self) -> datetime:
        return resolve_now(self.now_text)

    def _stamp(self, out: dict[str, Any]) -> dict[str, Any]:
        out.setdefault("mode", "local")
        out.setdefault("identity", "asserted")
        return out

    def audited(self, command: str, args: dict[str, Any], work: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """Run one command body and write its audit row (with ``mode``/``identity``), whatever the outcome."""
        started = datetime.now(timezone.utc)
        t0 = time.perf_counter()
        code, message = "OK", None
        try:
            return self._stamp(work())
        except SortieError as exc:
            code, message = exc.code, exc.message
            raise
        except BaseException as exc:
            code = "INTERNAL" if isinstance(exc, Exception) else type(exc).__name__
            raise
        finally:
            if code not in ("LEDGER_UNAVAILABLE", "LEDGER_TAMPERED"):
                try:
                    self.ledger.audit(
                        actor=self.actor_id, command=command,
                        args={**args, "mode": "local", "identity": "asserted"},
                        result_code=code, duration_s=time.perf_counter() - t0, started=started,
                        draft_id=args.get("draft_id"), message=message,
                    )
                except (LedgerUnavailable, SortieError):
                    pass  # the ledger itself is the problem; the command's own error is what the user needs

    def _seen(self, draft_id: str) -> None:
        """With ``--as``/``SORTIE_USER``, only drafts of the user's tenants are shown."""
        if self.actor_id:
            self._svc().check_visible(draft_id, self.actor_id, world_dir=self.world, ledger=self.ledger)

    # -- operations

    def plan(self, text: str, region: str | None, area: Any, coverage_target: float | None = None) -> dict[str, Any]:
        return self._svc().plan_draft(
            text=text, region_id=region, area_geojson=area, requested_by=self._actor(), world_dir=self.world,
            now=self._now(), rules_path=self.rules, ledger=self.ledger, coverage_target=coverage_target,
        ).to_dict()

    def drafts(self, limit: int) -> dict[str, Any]:
        svc = self._svc()
        rows = svc.list_drafts(user=self.actor_id, world_dir=self.world, limit=limit, ledger=self.ledger)
        return {"drafts": [d.to_dict() for d in rows]}

    def show(self, draft_id: str, version: int | None) -> dict[str, Any]:
        self._seen(draft_id)
        return self._svc().show_draft(draft_id, version, ledger=self.ledger).to_dict()

    def diff(self, draft_id: str, v1: int, v2: int) -> dict[str, Any]:
        self._seen(draft_id)
        return self._svc().diff_versions(draft_id, v1, v2, ledger=self.ledger)

    def log(self, draft_id: str) -> dict[str, Any]:
        self._seen(draft_id)
        return self._svc().draft_log(draft_id, ledger=self.ledger)

    def replan(self, draft_id: str) -> dict[str, Any]:
        return self._svc().replan(
            draft_id, requested_by=self._actor(), world_dir=self.world, now=self._now(), rules_path=self.rules,
            ledger=self.ledger,
        ).to_dict()

    def approve(self, draft_id: str, version: int, plan_hash: str | None, comment: str) -> dict[str, Any]:
        return self._svc().approve(
            draft_id, version, approver=self._actor(), plan_hash=plan_hash, comment=comment, now=self._now(),
            world_dir=self.world, ledger=self.ledger,
        ).to_dict()

    def reject(self, draft_id: str, version: int, reason: str) -> dict[str, Any]:
        return self._svc().reject(
            draft_id, version, approver=self._actor(), reason=reason, now=self._now(), world_dir=self.world,
            ledger=self.ledger,
        ).to_dict()

    def dispatch(self, draft_id: str, version: int | None, link: str | dict[str, str] | None, dry_run: bool) -> dict[str, Any]:
        return self._svc().dispatch(
            draft_id, version, actor=self._actor(), now=self._now(), link=link, dry_run=dry_run,
            world_dir=self.world, rules_path=self.rules, ledger=self.ledger,
        ).to_dict()

    def export(self, draft_id: str, version: int | None, fmt: str, out: Path | None, sortie: int) -> dict[str, Any]:
        self._seen(draft_id)
        return self._svc().export(draft_id, version, fmt, out=out, world_dir=self.world, sortie=sortie,
                                  ledger=self.ledger)


def backend(*, command: str, as_user: str | None, world: str | None, now: str | None,
            rules: str | None = None) -> Backend:
    """The backend for one command: the server when ``SORTIE_SERVER`` is set, else the local ledger."""
    url = server_url()
    if url is None:
        return LocalBackend(actor=as_user or os.environ.get("SORTIE_USER") or None, world=world, now=now, rules=rules)
    if rules:
        raise InvalidArgument(f"--rules is not accepted by `sortie {command}` with SORTIE_SERVER set: the server "
                              "judges with its own rule set (try `sortie plan --what-if --rules FILE`)")
    if as_user:
        raise InvalidArgument(f"--as is not accepted with SORTIE_SERVER set: the token says who you are ({command})")
    if world:
        raise InvalidArgument(f"--world is not accepted by `sortie {command}` with SORTIE_SERVER set: the server "
                              "plans, approves and dispatches on its own world (try `sortie plan --what-if`)")
    if now:
        raise InvalidArgument(f"--now is not accepted by `sortie {command}` with SORTIE_SERVER set: the server's "
                              "clock stamps everything (try `sortie plan --what-if`)")
    from flows.cli.remote_backend import RemoteBackend

    return RemoteBackend.from_env(url)  # type: ignore[return-value]


