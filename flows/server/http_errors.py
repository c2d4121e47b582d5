"""How the API says no: the same stable codes as the CLI, with an HTTP status, never a 500 for bad input.

``{"error": {"code": ..., "message": ..., "details": ...}}`` for every refusal.
The status follows the code (UNAUTHENTICATED 401, FORBIDDEN 403, NOT_FOUND
404, CONFLICT and the approval/dispatch refusals 409, INVALID_ARGUMENT 422 —
400 for a body that is not JSON — WORLD_UNAVAILABLE 503, …); a client maps it
back to the same exception, so the CLI exits the same way in both modes.

Every refusal is audited (``Kit.refused``) unless the request's ``Kit.call``
already wrote its row: a service token approving, another tenant's approve,
reject or cancel, a body that does not validate, a token that does not verify
(then with the token id it claimed and the client's address). Messages and
details never name a path on the server host: the home and the world become
``<home>`` and ``<world>``, any other absolute path its last part.

``BodyLimit`` reads a request's body before any handler runs: over the limit
it is 413 (by ``Content-Length``, and by counting a chunked body as it
arrives), and a JSON object with a key twice (``{"version": 1, "version": 2}``:
which one would a check have seen?) is 400 ``INVALID_ARGUMENT``; a body that
has not arrived ``body_timeout_s`` after it was first waited for is 408
``REQUEST_TIMEOUT`` (``flows.server.timeouts``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from flows.server.timeouts import BODY_TIMEOUT_S
from flows.server.tokens import claimed_token_id
from planner.errors import InvalidArgument, SortieError

if TYPE_CHECKING:
    from flows.server.kit import Kit

__all__ = ["STATUS", "install", "BodyLimit", "RequestTimeout", "error_response", "scrub"]

_log = logging.getLogger("sortie.server")

STATUS: dict[str, int] = {
    "INVALID_ARGUMENT": 422,
    "OVERRIDE_REFUSED": 422,
    "UNAUTHENTICATED": 401,
    "FORBIDDEN": 403,
    "NOT_FOUND": 404,
    "CONFLICT": 409,
    "APPROVAL_REQUIRED": 409,
    "APPROVAL_STALE": 409,
    "APPROVAL_INVALID": 409,
    "AIRSPACE_BLOCKED": 409,
    "DEVICE_UNAVAILABLE": 409,
    "DEVICE_BUSY": 409,
    "DEVICE_MISMATCH": 409,
    "DISPATCH_FAILED": 502,
    "DISPATCH_UNCERTAIN": 502,
    "WORLD_UNAVAILABLE": 503,
    "LEDGER_UNAVAILABLE": 503,
    "LEDGER_TAMPERED": 503,
    "LLM_UNAVAILABLE": 503,
    "INTENT_INVALID": 422,
    "PLAN_INFEASIBLE": 422,
    "NEEDS_CLARIFICATION": 422,
    "TOO_MANY_ATTEMPTS": 429,
    "TOO_MANY_REQUESTS": 429,
    "REQUEST_TIMEOUT": 408,
}


class RequestTimeout(SortieError):
    """A request's body did not arrive in time (``flows.server.timeouts``)."""

    code = "REQUEST_TIMEOUT"

#: An absolute path of two parts or more (not an API path, not inside a URL): what ``scrub`` shortens.
_ABS_PATH = re.compile(r"(?<![\w:/.~-])(?!/v1/)(?:/[\w.@+~-]+){2,}/?")


def scrub(value: Any, roots: Mapping[str, str] = MappingProxyType({})) -> Any:
    """``value`` (a message, or details) with no path of the server host: each root by its name (``<home>``, the
    app's own: ``install``), any other absolute path by ``…/`` and its last part."""
    if isinstance(value, str):
        for root in sorted(roots, key=len, reverse=True):
            if root and root != "/":
                value = value.replace(root, roots[root])
        return _ABS_PATH.sub(lambda m: "…/" + m.group().rstrip("/").rsplit("/", 1)[-1], value)
    if isinstance(value, Mapping):
        return {k: scrub(v, roots) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [scrub(v, roots) for v in value]
    return value


def error_response(code: str, message: str, details: Any = None, status: int | None = None, *,
                   roots: Mapping[str, str] = MappingProxyType({})) -> JSONResponse:
    body: dict[str, Any] = {"code": code, "message": scrub(message, roots)}
    if details is not None:
        body["details"] = scrub(details, roots)
    headers = None
    if isinstance(details, Mapping) and "retry_after_s" in details:
        headers = {"Retry-After": str(int(details["retry_after_s"]))}
    return JSONResponse({"error": body}, status_code=status or STATUS.get(code, 409), headers=headers)


def install(app: FastAPI, kit: "Kit | None" = None, scrub_roots: Mapping[str, str] | None = None) -> None:
    """Register the handlers that turn every refusal into the error body (and audit it through ``kit``); the paths
    ``scrub_roots`` names (this server's home and world) are shown by their names, never the host's paths."""
    roots = MappingProxyType(dict(scrub_roots or {}))

    async def audited(request: Request, exc: SortieError) -> None:
        if kit is None or getattr(request.state, "sortie_audited", False):
            return
        ctx = getattr(request.state, "sortie_ctx", None)
        if ctx is not None and ctx.audited:
            return
        endpoint = request.scope.get("endpoint")
        command = getattr(endpoint, "__name__", None) or f"{request.method} {request.url.path}"
        params = dict(request.path_params)
        args = {**params, **{k: v for k, v in request.query_params.items()}, "method": request.method,
                "path": request.url.path}
        client = request.client.host if request.client else None
        if ctx is None:
            auth = request.headers.get("authorization", "")
            kit.refused(None, command, args, exc, client_addr=client, draft_id=params.get("draft_id"),
                        token_id=claimed_token_id(auth[7:].strip() if auth.lower().startswith("bearer ") else None))
            return
        import anyio.to_thread

        await anyio.to_thread.run_sync(lambda: kit.refused(ctx, command, args, exc, draft_id=params.get("draft_id")))

    @app.exception_handler(SortieError)
    async def _sortie(request: Request, exc: SortieError) -> JSONResponse:
        await audited(request, exc)
        return error_response(exc.code, exc.message, exc.details, roots=roots)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        errs = exc.errors()
        if any(e.get("type") == "json_invalid" for e in errs):
            refusal = InvalidArgument("the request body is not valid JSON")
            await audited(request, refusal)
            return error_response(refusal.code, refusal.message, status=400, roots=roots)
        problems = [{"where": ".".join(str(x) for x in e.get("loc", ())), "problem": e.get("msg", "")} for e in errs]
        text = "; ".join(f"{p['where']}: {p['problem']}" for p in problems[:5])
        refusal = InvalidArgument(f"the request is not valid: {text}", details=problems)
        await audited(request, refusal)
        return error_response(refusal.code, refusal.message, problems, roots=roots)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {401: "UNAUTHENTICATED", 403: "FORBIDDEN", 404: "NOT_FOUND", 405: "INVALID_ARGUMENT",
                413: "INVALID_ARGUMENT"}.get(exc.status_code, "INVALID_ARGUMENT")
        refusal = SortieError(str(exc.detail))
        refusal.code = code
        await audited(request, refusal)
        return error_response(code, str(exc.detail), status=exc.status_code, roots=roots)

    @app.exception_handler(Exception)
    async def _internal(request: Request, exc: Exception) -> JSONResponse:
        _log.exception("internal error in %s %s", request.method, request.url.path)
        refusal = SortieError(f"{type(exc).__name__} (the server's log has the details)")
        refusal.code = "INTERNAL"
        await audited(request, refusal)
        return error_response("INTERNAL", refusal.message, status=500, roots=roots)


OnRefused = Callable[..., None]


class BodyLimit:
    """Pure ASGI middleware: the whole body read first; 413 over ``limit`` bytes, 400 for a JSON key given twice."""

    def __init__(self, app: Any, limit: int, on_refused: OnRefused | None = None,
                 body_timeout_s: float = BODY_TIMEOUT_S) -> None:
        self.app = app
        self.limit = limit
        self.on_refused = on_refused
        self.body_timeout_s = body_timeout_s

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        length = headers.get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > self.limit):
            await self._refuse(scope, send, 413, InvalidArgument(f"the request body is larger than {self.limit} bytes"))
            return
        chunks: list[bytes] = []
        seen = 0
        due = asyncio.get_running_loop().time() + self.body_timeout_s
        while True:
            try:  # a body that trickles in holds a connection and a lane: it arrives in time or not at all
                message = await asyncio.wait_for(receive(), max(0.0, due - asyncio.get_running_loop().time()))
            except asyncio.TimeoutError:
                await self._refuse(scope, send, 408, RequestTimeout(
                    f"the request body did not arrive within {self.body_timeout_s:g} s (slow clients are cut off)"))
                return
            if message["type"] != "http.request":  # the client left before its body arrived
                return
            chunk = message.get("body", b"")
            seen += len(chunk)
            if seen > self.limit:
                await self._refuse(scope, send, 413,
                                   InvalidArgument(f"the request body is larger than {self.limit} bytes"))
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        twice = _duplicate_key(body) if body.lstrip()[:1] in (b"{", b"[") else None
        if twice is not None:
            await self._refuse(scope, send, 400, InvalidArgument(
                f"the request body gives the key {twice!r} more than once: send each field once"))
            return
        given = False

        async def replay() -> dict[str, Any]:
            nonlocal given
            if not given:
                given = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # after the body: the disconnect, when it comes

        await self.app(scope, replay, send)

    async def _refuse(self, scope: dict[str, Any], send: Any, status: int, exc: SortieError) -> None:
        if self.on_refused is not None:
            auth = dict(scope.get("headers") or []).get(b"authorization", b"").decode("latin-1")
            client = scope.get("client")
            self.on_refused(None, f"body {scope.get('method')} {scope.get('path')}", {}, exc,
                            token_id=claimed_token_id(auth[7:].strip() if auth.lower().startswith("bearer ") else None),
                            client_addr=client[0] if client else None)
        body = json.dumps({"error": {"code": exc.code, "message": exc.message}}).encode()
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})


class _Twice(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise _Twice(k)
        out[k] = v
    return out


def _duplicate_key(body: bytes) -> str | None:
    """The first key an object of this JSON body gives twice (None: none, or not JSON: the handler says so)."""
    try:
        json.loads(body, object_pairs_hook=_pairs)
    except _Twice as twice:
        return twice.key
    except (ValueError, RecursionError):
        return None
    return None
