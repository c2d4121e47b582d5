"""A recall is never refused by admission (issue 38): its own lane, no queue or wait limit, while an approval
beyond its lane's queue is 429. The server's admission middleware around a slow ASGI app, driven over ASGI."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from flows.server.admission import LaneSizes, Lanes, lane_of


async def _slow_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    await asyncio.sleep(0.3)
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"{}"})


def test_recalls_wait_their_turn_and_are_never_429_while_approvals_beyond_the_queue_are() -> None:
    assert lane_of("POST", "/v1/drafts/d-1/recall") == "stop"
    assert lane_of("POST", "/v1/drafts/d-1/approve") == "safety"
    lanes = Lanes(_slow_app, LaneSizes(stop=1, safety=1, queue=1, wait_s=0.5))

    async def fire(path: str, n: int) -> list[int]:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=lanes), base_url="http://t") as c:
            return [r.status_code for r in await asyncio.gather(*(c.post(path) for _ in range(n)))]

    recalls = asyncio.run(fire("/v1/drafts/d-1/recall", 6))  # one at a time: 6 x 0.3 s, past any wait limit
    approvals = asyncio.run(fire("/v1/drafts/d-1/approve", 6))
    assert recalls == [200] * 6, recalls
    assert 429 in approvals and 200 in approvals, approvals
    assert lanes.lanes["stop"].refused == 0 and lanes.lanes["stop"].admitted == 6
