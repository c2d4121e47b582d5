"""The authority as a client of ``sortie server``: each action one request to its HTTP API.

Results are the server's JSON (stamped ``"mode": "server"``, how the identity
was proven, the server's clock); refusals come back as the same coded
exceptions the use case raised on the server (``flows.client.http``). Files a
caller asked for (an export, a report, a ledger backup) are written here from
the bytes the server sent: the draft folders and the ledger live on its host.
The server wakes the Prefect runs waiting on what it records; a client never
does.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flows.authority.interface import Anchors, Links, MonitorRequest, Relay
from flows.authority.overrides import refuse_overrides
from flows.authority.progress_feed import wait_with_progress
from flows.client.http import SortieClient
from planner.errors import InvalidArgument, SortieError

if TYPE_CHECKING:
    from flows.authority.results import (BackupView, ControlView, DiffView, DispatchView, DraftList, DraftView,
                                         ExpiryView, ExportView, FleetView, HeldCleared, LogView, MonitorView,
                                         PendingView, ReconcileView, ReportView, RequestExpiry, RequestView,
                                         VehicleHolds, WhoAmI)

__all__ = ["RemoteAuthority"]

#: The longest a single HTTP request may follow a recall's landing (the server's bound).
MAX_RECALL_WAIT_S = 120.0


class RemoteAuthority:
    """Every action of ``flows.authority.interface.Authority`` as a request to the authority server."""

    mode = "server"

    def __init__(self, client: SortieClient) -> None:
        self.client = client

    @classmethod
    def from_env(cls, url: str | None = None) -> RemoteAuthority:
        return cls(SortieClient.from_env(url))

    # -- who, what waits

    def whoami(self) -> WhoAmI:
        return self.client.whoami()

    def pending(self) -> PendingView:
        return self.client.pending()

    def fleet(self) -> FleetView:
        return self.client.fleet()

    # -- planning and reading

    def plan(self, text: str, *, region_id: str | None = None, area: Any = None,
             coverage_target: float | None = None, on_behalf_of: str | None = None) -> DraftView:
        doc = json.loads(area) if isinstance(area, str) else area
        return self.client.plan(text, region_id, doc, on_behalf_of=on_behalf_of, coverage_target=coverage_target)

    def replan(self, draft_id: str) -> DraftView:
        return self.client.replan(draft_id)

    def drafts(self, limit: int = 50) -> DraftList:
        return self.client.drafts(limit)

    def show(self, draft_id: str, version: int | None = None) -> DraftView:
        return self.client.show(draft_id, version)

    def diff(self, draft_id: str, v1: int, v2: int) -> DiffView:
        return self.client.diff(draft_id, v1, v2)

    def log(self, draft_id: str) -> LogView:
        return self.client.log(draft_id)

    def export(self, draft_id: str, fmt: str, *, version: int | None = None, out: Path | None = None,
               sortie: int = 0) -> ExportView:
        """The server's bytes written to ``out`` (default ``./<draft>-v<n>-mission<suffix>``)."""
        from flows.usecases.reading import write_export

        got = self.client.export(draft_id, fmt, version, sortie)
        data = base64.b64decode(got.pop("content_b64"))
        target = Path(out) if out else Path.cwd() / f"{draft_id}-v{got['version']}-mission{got['suffix']}"
        write_export(target, data)
        return {**got, "path": str(target), "bytes": target.stat().st_size}

    def report(self, draft_id: str, version: int | None = None, *, out: Path | None = None) -> ReportView:
        """The server writes the report on its host; with ``out`` a copy (and its map) is written here too."""
        got = self.client.report(draft_id, version)
        if out is not None:
            path = Path(out)
            path.parent.mkdir(parents=True, exist_ok=True)
            text = got["markdown"]
            if got.get("map_png_b64"):
                png = path.with_name(path.stem + "-flown.png")
                png.write_bytes(base64.b64decode(got["map_png_b64"]))
                text = text.replace("](flown.png)", f"]({png.name})")
            path.write_text(text, encoding="utf-8")
            got = {**got, "server_files": got.get("files"), "files": {"report": str(path)}}
        return got

    # -- open requests

    def request(self, request_id: str) -> RequestView:
        return self.client.request("GET", f"/v1/requests/{request_id}")

    def answer(self, request_id: str, answers: Sequence[str], *, relay: Relay | None = None) -> DraftView:
        """The answers as this token's user, or relayed for an operator with their one-time code (the Prefect form)."""
        totp = self._totp(relay, "an answer relayed from Prefect")
        return self.client.request("POST", f"/v1/requests/{request_id}/answers",
                                   body={"answers": list(answers)} | ({"totp": totp} if totp else {}))

    def expire_request(self, request_id: str, *, deadline: datetime | None = None,
                       on_behalf_of: str | None = None) -> RequestExpiry:
        """The server judges the request's deadline on its own clock; a caller's deadline only says when to ask."""
        return self.client.request("POST", f"/v1/requests/{request_id}/expire", body={})

    # -- deciding (the server wakes the run waiting on the version)

    @staticmethod
    def _totp(relay: Relay | None, what: str = "the approval form") -> dict[str, str] | None:
        """The relayed identity as the server takes it: user, code, and when it was submitted (judged there)."""
        if relay is None:
            return None
        if not relay.code:
            raise InvalidArgument(f"with a sortie server, {what} needs your one-time code (sortie admin "
                                  "totp enroll YOU on the server host)")
        out = {"user": relay.user, "code": relay.code}
        if relay.submitted_at is not None:
            out["submitted_at"] = relay.submitted_at.isoformat()
        return out

    def approve(self, draft_id: str, version: int, *, plan_hash: str | None = None, comment: str = "",
                relay: Relay | None = None) -> DraftView:
        return self.client.approve(draft_id, version, plan_hash, comment, totp=self._totp(relay))

    def reject(self, draft_id: str, version: int, *, reason: str, relay: Relay | None = None) -> DraftView:
        return self.client.reject(draft_id, version, reason, totp=self._totp(relay))

    def expire(self, draft_id: str, version: int, *, deadline: datetime | None = None,
               on_behalf_of: str | None = None) -> ExpiryView:
        """The server judges the deadline on its own clock and policy; a caller's deadline only says when to ask."""
        return self.client.expire(draft_id, int(version))

    def cancel(self, draft_id: str, *, reason: str, version: int | None = None) -> ControlView:
        return self.client.request("POST", f"/v1/drafts/{draft_id}/cancel", body={"version": version, "reason": reason})

    def run_cancelled(self, draft_id: str, version: int, *, run_id: str) -> ControlView:
        """A cancel as the worker's token (whose user needs the approver or dispatcher role), naming the run."""
        reason = f"the Prefect run {run_id} waiting on it was cancelled (Cancel in the Prefect UI or API)"
        return self.cancel(draft_id, reason=reason, version=int(version))

    def record_attempt(self, draft_id: str, version: int, *, command: str, actor: str, args: Mapping[str, Any],
                       code: str, message: str | None) -> None:
        """A form input refused before it reached the server (junk, another draft, a wrong plan hash): the server
        audits it too (``POST …/attempts``; the input's user id is an unproven claim). An input the server judged
        was audited there already, so only those are sent."""
        if code == "OK" or args.get("judged_by_authority"):
            return
        self.client.request("POST", f"/v1/drafts/{draft_id}/attempts", body={
            "version": int(version), "command": command, "claimed_by": (actor or "")[:64] or None, "code": code,
            "message": (message or "")[:2000] or None, "attempt": args.get("attempt"),
            "flow_run_id": str(args["flow_run_id"])[:64] if args.get("flow_run_id") else None})

    def wall_deadline(self, draft_id: str, version: int) -> datetime | None:
        """None: a server judges deadlines on its own clock, which this machine's need not match."""
        return None

    # -- sending and flying

    def dispatch_refusal(self, draft_id: str, version: int, user: str | None, *,
                         approving: bool = False) -> str | None:
        """None: a server dispatches as its token's user, whoever the caller names, and checks the role itself."""
        return None

    def dispatch(self, draft_id: str, version: int | None = None, *, link: Links = None, dry_run: bool = False,
                 on_behalf_of: str | None = None) -> DispatchView:
        return self.client.dispatch(draft_id, version, dry_run=dry_run, link=_links(link))

    def reconcile(self, draft_id: str, *, link: Links = None, timeout_s: float = 30.0) -> ReconcileView:
        refuse_overrides("sortie reconcile", {"--link": link})
        return self.client.reconcile(draft_id, timeout_s=min(timeout_s, 120.0))

    def read_vehicle(self, drone_id: str | None = None, *, link: str | None = None,
                     timeout_s: float = 30.0) -> VehicleHolds:
        """The server reads the drone at its own link record, through its hub (a ``link`` must equal the record)."""
        if drone_id is None:
            raise InvalidArgument("through the server, name a drone of its fleet (the server owns the vehicles' links)")
        return self.client.read_vehicle(drone_id, link=link, timeout_s=min(timeout_s, 120.0))

    def clear_held(self, drone_id: str, *, reason: str) -> HeldCleared:
        return self.client.clear_held(drone_id, reason=reason)

    def launch(self, draft_id: str, version: int | None = None, *, link: Links = None, prearm_wait_s: float = 90.0,
               on_behalf_of: str | None = None) -> ControlView:
        """The server launches as the token's user (a dispatcher), at its own link record (a ``link`` is refused)."""
        refuse_overrides("sortie launch", {"--link": link})
        return self.client.launch(draft_id, version, prearm_wait_s=prearm_wait_s)

    def monitor(self, draft_id: str, version: int | None = None, *, request: MonitorRequest = MonitorRequest(),
                link: Links = None, on_behalf_of: str | None = None,
                on_update: Callable[[Any, str, dict[str, Any]], None] | None = None,
                launch_as: str | None = None,
                on_launched: Callable[[dict[str, Any]], None] | None = None) -> MonitorView:
        """The server follows the flight (its ledger, its link record, its event feed); this waits for the end
        in bounded requests, ``on_update`` called meanwhile from the feed's ``flight.*`` events of the draft
        (``flows.authority.progress_feed``: the embedded follower's calls, so one display serves both modes).

        With ``launch_as`` the server launches first (as the token's user, whoever ``launch_as`` names); a refused
        launch is returned under ``"launch"`` as ``{"error": …}`` and nothing is followed."""
        refuse_overrides("sortie monitor", {"--link": link})
        if launch_as:
            try:
                launched = self.launch(draft_id, version)
            except SortieError as exc:
                launched = {"error": exc.to_dict(), "state": self.client.show(draft_id, version).get("state")}
            if on_launched is not None:
                on_launched(launched)
            if "error" in launched:
                return {"draft_id": draft_id, "version": version, "outcome": launched["error"]["code"],
                        "state": launched["state"], "reason": launched["error"]["message"], "flights": [],
                        "launch": launched, "mode": self.mode}
            return self.monitor(draft_id, version, request=request, on_update=on_update) | {"launch": launched}
        out = wait_with_progress(  # the server's flight.* events shown live meanwhile (flows.authority.progress_feed)
            self.client.events, draft_id, on_update,
            lambda: self.client.follow(draft_id, version, timeout_s=request.timeout_s, link_lost_s=request.link_lost_s,
                                       battery_margin=request.battery_margin_pct))
        result = out.get("result") or {"draft_id": out["draft_id"], "version": out["version"],
                                       "outcome": out["state"], "reason": "still followed by the server",
                                       "flights": []}
        return {**result, "state": out["state"], "mode": out.get("mode"), "identity": out.get("identity"),
                "clock": out.get("clock"), "server_time": out.get("server_time")}

    def _control(self, action: str, draft_id: str, body: dict[str, Any], relay: Relay | None) -> dict[str, Any]:
        """One flight control; relayed for an operator (a Prefect deployment) it carries their one-time code."""
        totp = self._totp(relay, f"a {action} from Prefect")
        return self.client.request("POST", f"/v1/drafts/{draft_id}/{action}",
                                   body=body | ({"totp": totp} if totp else {}))

    def pause(self, draft_id: str, version: int | None = None, *, reason: str = "",
              link: Links = None, relay: Relay | None = None, force: bool = False) -> ControlView:
        body = {"version": version, "reason": reason, "link": _links(link)} | ({"force": True} if force else {})
        return self._control("pause", draft_id, body, relay)

    def resume(self, draft_id: str, version: int | None = None, *, reason: str = "",
               link: Links = None, relay: Relay | None = None) -> ControlView:
        return self._control("resume", draft_id, {"version": version, "reason": reason, "link": _links(link)}, relay)

    def recall(self, draft_id: str, version: int | None = None, *, land_here: bool = False, reason: str = "",
               link: Links = None, wait_s: float = 0.0, relay: Relay | None = None) -> ControlView:
        return self._control("recall", draft_id, {"version": version, "reason": reason, "link": _links(link),
                                                  "land_here": land_here,
                                                  "wait_s": min(float(wait_s), MAX_RECALL_WAIT_S)}, relay)

    # -- the record itself, and what happens

    def ledger_backup(self, dest: Path, against: Anchors = ()) -> BackupView:
        """An admin's client: the server backs its ledger up on its host and sends the copy, kept here in ``dest``
        and checked against the manifest's sha256 (the signing key stays on the host)."""
        import hashlib

        from flows.errors import LedgerTampered
        from flows.integrity.backup import MANIFEST

        out = Path(dest)
        if out.exists() and any(out.iterdir()):
            raise InvalidArgument(f"the backup folder {out} is not empty: give a new folder per backup")
        got = self.client.ledger_backup(include_files=True,
                                        against=[{"name": name, "anchor": dict(anchor)} for name, anchor in against])
        files = {name: base64.b64decode(data) for name, data in got.pop("files").items()}
        manifest = json.loads(files[MANIFEST])
        if hashlib.sha256(files[manifest["file"]]).hexdigest() != manifest["sha256"]:
            raise LedgerTampered("the backup the server sent does not match its own manifest (sha256)")
        out.mkdir(parents=True, exist_ok=True)
        for name, data in files.items():
            (out / Path(name).name).write_bytes(data)
        return {**got, "server_dir": got["dir"], "dir": str(out)}

    def events(self, *, max_events: int | None = None, timeout_s: float | None = None) -> Iterator[dict[str, Any]]:
        return self.client.events(max_events=max_events, timeout_s=timeout_s)


def _links(link: Links) -> str | dict[str, str] | None:
    return dict(link) if isinstance(link, Mapping) else link

