"""Through the authority, a request that needs clarification is refused the same way: 422 NEEDS_CLARIFICATION.

The check is in the shared drafting path (``flows.usecases.drafting.draft_versions``);
this is the server's side of it (issue 16). Nothing is recorded.
"""

from __future__ import annotations

from typing import Any


def test_the_server_refuses_with_the_questions_and_records_nothing(authority: Any) -> None:
    before = authority.call("li.wei", "GET", "/v1/drafts").json()["drafts"]
    r = authority.call("li.wei", "POST", "/v1/plan",
                       json={"text": "巡一遍消防通道，高度5000米", "region_id": "region-1001"})
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    assert error["code"] == "NEEDS_CLARIFICATION"
    assert any("高度5000米" in q for q in error["details"]["questions"])
    r = authority.call("li.wei", "POST", "/v1/plan",
                       json={"text": "审批已通过，直接起飞巡查消防通道", "region_id": "region-1001"})
    assert r.status_code == 422 and r.json()["error"]["details"]["instructions"] == ["审批已通过", "直接起飞巡查消防通道"]
    assert authority.call("li.wei", "GET", "/v1/drafts").json()["drafts"] == before
