"""The Authority's most used answers have one type each (``flows.authority.results``), checked where they leave the
server (the drafts list: its shape published, its rows those ``show`` checks), and the server's JSON is what it was:
every key the authority put in an answer goes out, each value as it was.

Against the real server of ``conftest.py`` over HTTP: each answer (a plan, the draft shown, the drafts list, an
approval, a dry-run dispatch, whoami, the fleet, what is pending) has every key its type says is always there, and
validated against that type it comes back the very same object (nothing dropped, nothing converted: an int stays an
int); the published OpenAPI schema names the type of each route's answer; a shape that lacks a key the type requires
is refused by the same type.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import pydantic
import pytest
from typing_extensions import is_typeddict

from flows.authority.results import (DispatchView, DraftList, DraftView, FleetView, PendingView, SortieRow, Stamped,
                                     WhoAmI)
from flows.usecases.views import DispatchSummary, DraftSummary, SortieSummary


def _required(shape: Any) -> frozenset[str]:
    return frozenset(shape.__required_keys__)


def _same_through(shape: Any, answer: dict[str, Any]) -> None:
    """``answer`` has every key ``shape`` requires and is unchanged by validating it against ``shape``."""
    missing = _required(shape) - answer.keys()
    assert not missing, (shape.__name__, sorted(missing))
    again = pydantic.TypeAdapter(shape).validate_python(answer)
    assert again == answer, shape.__name__
    assert [type(again[k]) for k in answer] == [type(answer[k]) for k in answer], shape.__name__


@pytest.mark.timeout(300)
def test_the_answers_have_their_types_and_keep_every_key(authority: Any) -> None:
    authority.end_flights()
    planned = authority.plan()
    _same_through(DraftView, planned)
    assert {"mode", "identity", "clock", "server_time"} <= planned.keys()  # the stamps go out as before
    assert all(isinstance(s["index"], int) for s in planned["sorties"])

    shown = authority.call("li.wei", "GET", f"/v1/drafts/{planned['draft_id']}").json()
    _same_through(DraftView, shown)
    assert shown["plan_hash"] == planned["plan_hash"]

    listed = authority.call("li.wei", "GET", "/v1/drafts", params={"limit": 5}).json()
    _same_through(DraftList, listed)
    for row in listed["drafts"]:
        _same_through(DraftView, row)

    approved = authority.call("chen.jing", "POST", f"/v1/drafts/{planned['draft_id']}/approve",
                              json={"version": planned["version"], "plan_hash": planned["plan_hash"]})
    assert approved.status_code == 200, approved.text
    _same_through(DraftView, approved.json())
    assert approved.json()["state"] == "APPROVED" and "resumed_run" in approved.json()

    dry = authority.call("chen.jing", "POST", f"/v1/drafts/{planned['draft_id']}/dispatch",
                         json={"version": planned["version"], "dry_run": True})
    assert dry.status_code == 200, dry.text
    _same_through(DispatchView, dry.json())
    assert dry.json()["dry_run"] is True

    who = authority.call("chen.jing", "GET", "/v1/whoami").json()
    _same_through(WhoAmI, who)
    assert {"scopes", "token_id"} <= who.keys()  # the server's own keys pass through

    for path, shape in (("/v1/fleet", FleetView), ("/v1/pending", PendingView)):
        _same_through(shape, authority.call("chen.jing", "GET", path).json())


def test_the_published_schema_names_each_answers_type_and_the_type_refuses_a_short_answer(authority: Any) -> None:
    schema = authority.call("li.wei", "GET", "/openapi.json").json()
    answers = {
        ("/v1/plan", "post"): "DraftView", ("/v1/drafts/{draft_id}", "get"): "DraftView",
        ("/v1/drafts", "get"): "DraftList", ("/v1/drafts/{draft_id}/approve", "post"): "DraftView",
        ("/v1/drafts/{draft_id}/reject", "post"): "DraftView", ("/v1/drafts/{draft_id}/dispatch", "post"): "DispatchView",
        ("/v1/whoami", "get"): "WhoAmI", ("/v1/fleet", "get"): "FleetView", ("/v1/pending", "get"): "PendingView",
    }
    for (path, method), name in answers.items():
        ok = schema["paths"][path][method]["responses"]["200"]["content"]["application/json"]["schema"]
        assert ok == {"$ref": f"#/components/schemas/{name}"}, (path, ok)
    draft = schema["components"]["schemas"]["DraftView"]
    assert {"draft_id", "version", "state", "plan_hash", "sorties"} <= set(draft["required"])

    assert all(is_typeddict(t) for t in (DraftView, DraftList, DispatchView, WhoAmI, FleetView, PendingView))
    with pytest.raises(pydantic.ValidationError, match="version"):
        pydantic.TypeAdapter(DraftView).validate_python({"draft_id": "d-1", "state": "DRAFT"})


def test_the_answer_types_name_every_field_of_the_views_they_carry() -> None:
    """The boundary's types mirror the use cases' views key for key (they are written twice on purpose: pydantic at
    the boundary, dataclasses inside): a field added to one and not the other fails here, not in a client."""
    def keys(shape: Any) -> set[str]:
        return set(shape.__annotations__) - set(Stamped.__annotations__)

    assert keys(DraftView) == {f.name for f in fields(DraftSummary)} | {"state", "resumed_run"}
    assert keys(SortieRow) == {f.name for f in fields(SortieSummary)}
    assert keys(DispatchView) == {f.name for f in fields(DispatchSummary)}
