"""A small HTTP client of ``sortie server``: one method per endpoint, coded errors back as exceptions.

Every refusal the server sends (``{"error": {"code", "message", "details"}}``)
becomes the same ``SortieError`` subclass the use case raised on the server,
so a command exits with the same code and prints the same ``CODE: message``
in both modes. A server that cannot be reached, or answers something that is
not the API, is ``ServerUnavailable``.

It is built on the standard library (``urllib.request``: proxies from the
environment, https with the system's certificates, no redirects followed, as
httpx did by default): every client-mode ``sortie`` process imports it, and
httpx costs such a process about 0.2 CPU s of imports (httpcore, and rich,
click and pygments for httpx's own command line), the standard library's
about 0.04 (issue 27). One connection per request: a CLI command sends one or
two, and the client is safe to share between threads.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from http.client import HTTPException
from typing import Any

from flows.errors import ERROR_CODES, ServerUnavailable, Unauthenticated
from planner.errors import SortieError

__all__ = ["SortieClient", "error_from"]

#: what can go wrong between here and the server: refused or dropped connections, timeouts, a broken or
#: malformed HTTP exchange, a URL this client cannot open
_TRANSPORT_ERRORS = (OSError, HTTPException, ValueError)


def error_from(status: int, body: Any) -> SortieError:
    """The exception for an error response."""
    err = body.get("error") if isinstance(body, dict) else None
    if not isinstance(err, dict) or "code" not in err:
        return ServerUnavailable(f"the server answered HTTP {status} without an error body")
    cls = ERROR_CODES.get(str(err["code"]))
    message = str(err.get("message", ""))
    if cls is None:
        exc = SortieError(message, details=err.get("details"))
        exc.code = str(err["code"])  # a code this client does not know yet: keep it as the server said
        return exc
    return cls(message, details=err.get("details"))


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect is answered as it came: the API never redirects, and a request (its token with it) is not sent on."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class SortieClient:
    """``SortieClient(base_url, token)``; ``from_env()`` reads ``SORTIE_SERVER`` and ``SORTIE_TOKEN``."""

    def __init__(self, base_url: str, token: str | None, *, timeout_s: float = 120.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.timeout_s = timeout_s
        self._headers = {"Accept": "application/json", "User-Agent": "sortie-client"}
        if token:
            self._headers["Authorization"] = f"Bearer {token}"
        self._opener = urllib.request.build_opener(_NoRedirect())

    @classmethod
    def from_env(cls, url: str | None = None) -> SortieClient:
        base = url or os.environ.get("SORTIE_SERVER", "")
        if not base:
            raise ServerUnavailable("SORTIE_SERVER is not set")
        token = os.environ.get("SORTIE_TOKEN", "").strip()
        if not token:
            raise Unauthenticated("SORTIE_SERVER is set but SORTIE_TOKEN is not: ask an admin for a token "
                                  "(sortie admin token create USER on the server host)")
        return cls(base, token)

    def close(self) -> None:
        """Nothing is held open between requests; kept so that a caller may close what it made."""

    def _open(self, method: str, path: str, *, body: dict[str, Any] | None, params: dict[str, Any] | None,
              timeout_s: float | None) -> Any:
        """The server's response (an error status included: ``urllib`` raises those, carrying the response);
        ``ServerUnavailable`` when there is none. ``timeout_s`` bounds each wait on the socket; None: no bound."""
        url = self.base_url + path
        query = {k: _param(v) for k, v in (params or {}).items() if v is not None}
        if query:
            url += "?" + urllib.parse.urlencode(query)
        headers = dict(self._headers)
        data = None
        if body is not None:
            data = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")
            headers["Content-Type"] = "application/json"
        req = urllib.request.Request(url, data=data, headers=headers, method=method)
        try:
            return self._opener.open(req, timeout=timeout_s)
        except urllib.error.HTTPError as exc:
            return exc
        except _TRANSPORT_ERRORS as exc:
            why = getattr(exc, "reason", exc)  # urllib's URLError wraps the socket's error
            raise ServerUnavailable(f"the sortie server at {self.base_url} cannot be reached: {why}") from None

    def request(self, method: str, path: str, *, body: dict[str, Any] | None = None,
                params: dict[str, Any] | None = None) -> dict[str, Any]:
        """One call; the JSON result, or the server's refusal raised as its ``SortieError``."""
        r = self._open(method, path, body=body, params=params, timeout_s=self.timeout_s)
        status = r.status
        try:
            with r:
                raw = r.read()
        except _TRANSPORT_ERRORS as exc:
            raise ServerUnavailable(f"the sortie server at {self.base_url} broke off its answer: {exc}") from None
        try:
            data = json.loads(raw)
        except ValueError:
            raise ServerUnavailable(f"the server at {self.base_url} answered HTTP {status}, not JSON") from None
        if status >= 400:
            raise error_from(status, data)
        return data

    # -- the API

    def whoami(self) -> dict[str, Any]:
        return self.request("GET", "/v1/whoami")

    def plan(self, text: str, region_id: str | None = None, area: dict[str, Any] | None = None,
             on_behalf_of: str | None = None, coverage_target: float | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"text": text, "region_id": region_id, "area": area}
        if on_behalf_of:
            body["on_behalf_of"] = on_behalf_of
        if coverage_target is not None:
            body["coverage_target"] = coverage_target
        return self.request("POST", "/v1/plan", body=body)

    def drafts(self, limit: int = 50) -> dict[str, Any]:
        return self.request("GET", "/v1/drafts", params={"limit": limit})

    def pending(self) -> dict[str, Any]:
        return self.request("GET", "/v1/pending")

    def fleet(self) -> dict[str, Any]:
        return self.request("GET", "/v1/fleet")

    def show(self, draft_id: str, version: int | None = None) -> dict[str, Any]:
        return self.request("GET", f"/v1/drafts/{draft_id}", params={"version": version})

    def diff(self, draft_id: str, v1: int, v2: int) -> dict[str, Any]:
        return self.request("GET", f"/v1/drafts/{draft_id}/diff", params={"v1": v1, "v2": v2})

    def log(self, draft_id: str) -> dict[str, Any]:
        return self.request("GET", f"/v1/drafts/{draft_id}/log")

    def export(self, draft_id: str, fmt: str, version: int | None = None, sortie: int = 0) -> dict[str, Any]:
        return self.request("GET", f"/v1/drafts/{draft_id}/export",
                            params={"format": fmt, "version": version, "sortie": sortie})

    def report(self, draft_id: str, version: int | None = None) -> dict[str, Any]:
        return self.request("GET", f"/v1/drafts/{draft_id}/report", params={"version": version})

    def replan(self, draft_id: str) -> dict[str, Any]:
        return self.request("POST", f"/v1/drafts/{draft_id}/replan", body={})

    def approve(self, draft_id: str, version: int, plan_hash: str | None = None, comment: str = "",
                totp: dict[str, str] | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"version": version, "plan_hash": plan_hash, "comment": comment}
        if totp is not None:
            body["totp"] = totp
        return self.request("POST", f"/v1/drafts/{draft_id}/approve", body=body)

    def reject(self, draft_id: str, version: int, reason: str, totp: dict[str, str] | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"version": version, "reason": reason}
        if totp is not None:
            body["totp"] = totp
        return self.request("POST", f"/v1/drafts/{draft_id}/reject", body=body)

    def expire(self, draft_id: str, version: int) -> dict[str, Any]:
        return self.request("POST", f"/v1/drafts/{draft_id}/expire", body={"version": version})

    def dispatch(self, draft_id: str, version: int | None = None, *, dry_run: bool = False,
                 link: str | dict[str, str] | None = None) -> dict[str, Any]:
        return self.request("POST", f"/v1/drafts/{draft_id}/dispatch",
                            body={"version": version, "dry_run": dry_run, "link": link})

    def launch(self, draft_id: str, version: int | None = None, *, link: str | dict[str, str] | None = None,
               prearm_wait_s: float = 60.0) -> dict[str, Any]:
        """Pre-flight checks and the vehicles' arm-and-start sequence on the server; LAUNCHED or PREFLIGHT_FAILED."""
        return self.request("POST", f"/v1/drafts/{draft_id}/launch",
                            body={"version": version, "link": link, "prearm_wait_s": prearm_wait_s})

    def monitor(self, draft_id: str, version: int | None = None, *, timeout_s: float = 600.0, link_lost_s: float = 5.0,
                battery_margin: float = 10.0, wait_s: float = 0.0) -> dict[str, Any]:
        """Start (or join) the server's follower of this version; wait at most ``wait_s`` for the flight's end."""
        return self.request("POST", f"/v1/drafts/{draft_id}/monitor", body={
            "version": version, "timeout_s": timeout_s, "link_lost_s": link_lost_s, "battery_margin": battery_margin,
            "wait_s": wait_s})

    def follow(self, draft_id: str, version: int | None = None, *, timeout_s: float = 600.0, link_lost_s: float = 5.0,
               battery_margin: float = 10.0) -> dict[str, Any]:
        """Follow to the end (or ``timeout_s``): one bounded request after another, each joining the same follower."""
        import time

        deadline = time.monotonic() + timeout_s + 30.0
        while True:
            left = max(1.0, deadline - time.monotonic())
            out = self.monitor(draft_id, version, timeout_s=timeout_s, link_lost_s=link_lost_s,
                               battery_margin=battery_margin, wait_s=min(60.0, left))
            if not out["following"] or time.monotonic() >= deadline:
                if out.get("error"):
                    raise error_from(409, {"error": out["error"]})
                return out
            version = out["version"]

    def reconcile(self, draft_id: str, *, timeout_s: float = 30.0) -> dict[str, Any]:
        return self.request("POST", f"/v1/drafts/{draft_id}/reconcile", body={"timeout_s": timeout_s})

    def read_vehicle(self, drone_id: str, *, link: str | None = None, timeout_s: float = 30.0) -> dict[str, Any]:
        return self.request("POST", f"/v1/fleet/{drone_id}/read", body={"link": link, "timeout_s": timeout_s})

    def clear_held(self, drone_id: str, *, reason: str) -> dict[str, Any]:
        return self.request("POST", f"/v1/fleet/{drone_id}/clear", body={"reason": reason})

    def ledger_backup(self, *, include_files: bool = False, against: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        return self.request("POST", "/v1/ledger/backup", body={"include_files": include_files, "against": against or []})

    def events(self, *, max_events: int | None = None, timeout_s: float | None = None) -> Iterator[dict[str, Any]]:
        """Server-Sent Events as dicts (``type`` plus the event's data), until the server ends the stream."""
        params = {"max_events": max_events, "timeout_s": timeout_s}
        r = self._open("GET", "/v1/events", body=None, params=params, timeout_s=None)
        with r:
            if r.status >= 400:
                try:
                    data = json.loads(r.read())
                except _TRANSPORT_ERRORS:  # a body that is not the API: error_from says so
                    data = None
                raise error_from(r.status, data)
            while True:
                try:
                    line = r.readline()
                except _TRANSPORT_ERRORS as exc:
                    raise ServerUnavailable(f"the event stream of {self.base_url} broke: {exc}") from None
                if not line:
                    return
                text = line.decode("utf-8").rstrip("\r\n")
                if text.startswith("data: "):
                    yield json.loads(text[6:])


def _param(value: Any) -> str:
    """A query parameter as httpx spelled it (``true``/``false`` for a bool)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
