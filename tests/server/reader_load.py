"""A control room's readers, in a process of their own: ``python reader_load.py URL TOKEN SECONDS N ID [ID …]``.

``N`` concurrent readers (one asyncio loop, a keep-alive connection each) read
the drafts list and one draft, in turn, until ``SECONDS`` have passed, then
print one JSON line: how many reads answered 200, how many did not, and the
reads' median latency. A process of its own so that the test's probes do not
share a GIL with the readers: what is measured is the server.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time

import httpx


async def _main(url: str, token: str, seconds: float, n: int, ids: list[str]) -> dict[str, float | int]:
    ok: list[float] = []
    failed = 0
    deadline = time.monotonic() + seconds

    async def reader(k: int) -> None:
        nonlocal failed
        async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60) as c:
            i = k
            while time.monotonic() < deadline:
                path = "/v1/drafts" if i % 2 == 0 else f"/v1/drafts/{ids[i % len(ids)]}"
                t = time.perf_counter()
                try:
                    r = await c.get(path)
                except httpx.HTTPError:
                    failed += 1
                    continue
                if r.status_code == 200:
                    ok.append(time.perf_counter() - t)
                else:
                    failed += 1
                i += 1

    await asyncio.gather(*(reader(k) for k in range(n)))
    return {"reads": len(ok), "failed": failed, "read_p50_s": statistics.median(ok) if ok else -1.0}


if __name__ == "__main__":
    url, token, seconds, n, *ids = sys.argv[1:]
    print(json.dumps(asyncio.run(_main(url, token, float(seconds), int(n), ids))), flush=True)
