"""How the API says no: the same stable codes as the CLI, with an HTTP status, never a 500 for bad input.

``{"error": {"code": ..., "message": ..., "details": ...}}`` for every refusal.
The status follows the code (UNAUTHENTICATED 401, FORBIDDEN 403, NOT_FOUND
404, CONFLICT and the approval/dispatch refusals 409, INVALID_ARGUMENT 422 —
400 for a body that is not JSON — WORLD_UNAVAILABLE 503, …); a client maps it
back to the same exception, so the CLI exits the same way in both modes.

``BodyLimit`` refuses a request body over the limit before any handler runs
(by ``Content-Length``, and by counting a chunked body as it arrives).
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from planner.errors import SortieError

__all__ = ["STATUS", "install", "BodyLimit", "error_response"]

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
}


def error_response(code: str, message: str, details: Any = None, status: int | None = None) -> JSONResponse:
    body: dict[str, Any] = {"code": code, "message": message}
    if details is not None:
        body["details"] = details
    return JSONResponse({"error": body}, status_code=status or STATUS.get(code, 409))


def install(app: FastAPI) -> None:
    """Register the handlers that turn every refusal into the error body."""

    @app.exception_handler(SortieError)
    async def _sortie(_: Request, exc: SortieError) -> JSONResponse:
        return error_response(exc.code, exc.message, exc.details)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        errs = exc.errors()
        if any(e.get("type") == "json_invalid" for e in errs):
            return error_response("INVALID_ARGUMENT", "the request body is not valid JSON", status=400)
        problems = [{"where": ".".join(str(x) for x in e.get("loc", ())), "problem": e.get("msg", "")} for e in errs]
        text = "; ".join(f"{p['where']}: {p['problem']}" for p in problems[:5])
        return error_response("INVALID_ARGUMENT", f"the request is not valid: {text}", problems)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {401: "UNAUTHENTICATED", 403: "FORBIDDEN", 404: "NOT_FOUND", 405: "INVALID_ARGUMENT",
                413: "INVALID_ARGUMENT"}.get(exc.status_code, "INVALID_ARGUMENT")
        return error_response(code, str(exc.detail), status=exc.status_code)

    @app.exception_handler(Exception)
    async def _internal(_: Request, exc: Exception) -> JSONResponse:
        return error_response("INTERNAL", f"{type(exc).__name__}: {exc}", status=500)


class BodyLimit:
    """Pure ASGI middleware: 413 ``INVALID_ARGUMENT`` for a body over ``limit`` bytes."""

    def __init__(self, app: Any, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        length = headers.get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > self.limit):
            await self._refuse(send)
            return
        seen = 0

        async def counted() -> dict[str, Any]:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise _TooLarge
            return message

        try:
            await self.app(scope, counted, send)
        except _TooLarge:
            await self._refuse(send)

    async def _refuse(self, send: Any) -> None:
        body = json.dumps({"error": {"code": "INVALID_ARGUMENT",
                                     "message": f"the request body is larger than {self.limit} bytes"}}).encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})


class _TooLarge(Exception):
    pass
