"""A control room's load on a server, in a process of its own (as ``python -m bench server`` makes it):
``python control_room_load.py URL TOKENS SECONDS READERS SUBSCRIBERS`` (``TOKENS``: comma-separated).

``READERS`` keep-alive connections read the drafts list, the fleet and the drafts they list, in turn (the first
token), and ``SUBSCRIBERS`` event streams stay open and idle, ten per token (a token holds at most 16), all on
one asyncio loop, until ``SECONDS`` have passed; then one JSON line: reads answered 200, the others, the
streams that opened. A process of its own so that the test's measurement shares no GIL with the load: what is
measured is the server.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

import httpx


async def _main(url: str, tokens: list[str], seconds: float, readers: int, subscribers: int) -> dict[str, int]:
    counts = {"reads": 0, "failed": 0, "streams": 0}
    deadline = time.monotonic() + seconds
    headers = {"Authorization": f"Bearer {tokens[0]}"}

    async def reader(k: int) -> None:
        async with httpx.AsyncClient(base_url=url, headers=headers, timeout=60) as c:
            ids: list[str] = []
            i = k
            while time.monotonic() < deadline:
                path = ("/v1/drafts", "/v1/fleet", f"/v1/drafts/{ids[i % len(ids)]}" if ids else "/v1/drafts")[i % 3]
                try:
                    r = await c.get(path)
                except httpx.HTTPError:
                    counts["failed"] += 1
                    continue
                if r.status_code == 200:
                    counts["reads"] += 1
                    if path == "/v1/drafts":
                        ids = [d["draft_id"] for d in r.json().get("drafts", [])][:20]
                else:
                    counts["failed"] += 1
                i += 1

    async def subscriber(c: httpx.AsyncClient, k: int) -> None:
        try:
            async with c.stream("GET", "/v1/events",
                                headers={"Authorization": f"Bearer {tokens[(k // 10) % len(tokens)]}"}) as r:
                if r.status_code == 200:
                    counts["streams"] += 1
                async for _ in r.aiter_lines():
                    if time.monotonic() >= deadline:
                        return
        except httpx.HTTPError:
            return

    limits = httpx.Limits(max_connections=subscribers + 4)
    async with httpx.AsyncClient(base_url=url, timeout=httpx.Timeout(seconds + 30), limits=limits) as streams:
        tasks = [asyncio.create_task(subscriber(streams, k)) for k in range(subscribers)]
        await asyncio.gather(*(reader(k) for k in range(readers)))
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return counts


if __name__ == "__main__":
    url, tokens, seconds, readers, subscribers = sys.argv[1:]
    print(json.dumps(asyncio.run(_main(url, tokens.split(","), float(seconds), int(readers), int(subscribers)))),
          flush=True)
