"""One interface, two implementations, chosen in one place (``flows.authority``), without a server running.

- Both implementations have every method of the ``Authority`` interface with the same parameters, so a
  caller written against the interface runs on either.
- ``authority(...)`` reads ``SORTIE_SERVER`` once: unset → the embedded authority on ``SORTIE_HOME``
  (``mode: local``); set → the server's client (``mode: server``), a ``--home`` → the host's own ledger.
- One override rule for the CLI and the Prefect workers: a caller's identity, world, time and rules, as
  options or parameters, and ``SORTIE_USER/NOW/WORLD`` in the environment, are ``OVERRIDE_REFUSED`` before
  anything is sent (the server's address is a discard port: a request would be ``SERVER_UNAVAILABLE``).
- Waking without a Prefect API is a quick no-op (no ephemeral server is started).
"""

from __future__ import annotations

import inspect
import time
from pathlib import Path

import pytest

from flows.authority import Authority
from flows.authority.choice import authority
from flows.authority.local import LocalAuthority
from flows.authority.remote import RemoteAuthority
from flows.errors import OverrideRefused, ServerUnavailable
from planner.errors import InvalidArgument

DISCARD = "http://127.0.0.1:9"
TOKEN = "sortie_0123456789abcdef_" + "x" * 43


def _methods(cls: type) -> dict[str, list[tuple[str, object]]]:
    out = {}
    for name, fn in inspect.getmembers(cls, inspect.isfunction):
        if not name.startswith("_"):
            out[name] = [(p.name, p.kind) for p in inspect.signature(fn).parameters.values()]
    return out


def test_both_implementations_have_every_method_of_the_interface_with_its_parameters() -> None:
    interface = _methods(Authority)
    assert {"approve", "reject", "cancel", "expire", "dispatch", "monitor", "recall", "pending", "whoami",
            "ledger_backup", "events", "report"} <= set(interface)
    for impl in (LocalAuthority, RemoteAuthority):
        mine = _methods(impl)
        for name, params in interface.items():
            assert name in mine, f"{impl.__name__} has no {name}"
            assert mine[name] == params, (impl.__name__, name, mine[name], params)


def test_without_a_server_the_embedded_authority_answers_stamped_local_and_asserted(
        sortie_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SORTIE_SERVER", raising=False)
    a = authority("sortie drafts", as_user="li.wei")
    assert isinstance(a, LocalAuthority) and a.mode == "local"
    assert a.drafts(5) == {"drafts": [], "mode": "local", "identity": "asserted"}
    who = a.whoami()
    assert (who["user"], who["mode"], who["identity"]) == ("li.wei", "local", "asserted") and "planner" in who["roles"]
    with pytest.raises(ServerUnavailable, match="SORTIE_SERVER"):
        next(iter(a.events(max_events=1)))
    with pytest.raises(InvalidArgument, match="who is acting"):
        authority("sortie approve").approve("d-x", 1)


def test_with_a_server_the_client_is_chosen_and_a_home_means_the_hosts_own_ledger(
        sortie_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SORTIE_SERVER", DISCARD)
    monkeypatch.setenv("SORTIE_TOKEN", TOKEN)
    a = authority("sortie drafts")
    assert isinstance(a, RemoteAuthority) and a.mode == "server"
    with pytest.raises(ServerUnavailable):
        a.drafts(5)
    host = authority("sortie reconcile", as_user="chen.jing", home=sortie_home)  # on the authority's own host
    assert isinstance(host, LocalAuthority) and host.drafts(1)["mode"] == "local"


@pytest.mark.parametrize(("caller", "given", "named"), [
    ("cli", {"as_user": "chen.jing"}, "--as"),
    ("cli", {"world": "data/demo-helsinki"}, "--world"),
    ("cli", {"now": "2026-12-06T07:00:00+02:00"}, "--now"),
    ("cli", {"rules": "data/rules.yaml"}, "--rules"),
    ("prefect", {"world": "data/demo-helsinki"}, "world"),
    ("prefect", {"now": "2026-12-06T07:00:00+02:00"}, "now"),
])
def test_one_override_rule_for_the_cli_and_the_prefect_workers(caller: str, given: dict[str, str], named: str,
                                                               sortie_home: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SORTIE_SERVER", DISCARD)
    monkeypatch.setenv("SORTIE_TOKEN", TOKEN)
    with pytest.raises(OverrideRefused) as refused:
        authority("a command", caller=caller, **given)  # type: ignore[arg-type]
    assert refused.value.details == {"refused": [named], "command": "a command"}
    for env in ("SORTIE_USER", "SORTIE_NOW", "SORTIE_WORLD"):  # the environment, whoever the caller
        with monkeypatch.context() as m:
            m.setenv(env, "chen.jing" if env == "SORTIE_USER" else "x")
            with pytest.raises(OverrideRefused) as refused:
                authority("a command", caller=caller)  # type: ignore[arg-type]
            assert refused.value.details["refused"] == [f"${env}"]
    assert not (sortie_home / "ledger.duckdb").exists()


def test_a_server_reaches_each_vehicle_at_its_own_record_so_a_link_to_follow_or_read_back_is_refused(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SORTIE_SERVER", DISCARD)
    monkeypatch.setenv("SORTIE_TOKEN", TOKEN)
    a = authority("sortie monitor")
    for call in (lambda: a.monitor("d-x", link="udpout:127.0.0.1:9"), lambda: a.reconcile("d-x", link="udpout:127.0.0.1:9")):
        with pytest.raises(OverrideRefused) as refused:
            call()
        assert refused.value.details["refused"] == ["--link"]


def test_a_relayed_decision_needs_its_one_time_code_with_a_server(monkeypatch: pytest.MonkeyPatch) -> None:
    from flows.authority import Relay

    monkeypatch.setenv("SORTIE_SERVER", DISCARD)
    monkeypatch.setenv("SORTIE_TOKEN", TOKEN)
    with pytest.raises(InvalidArgument, match="one-time code"):
        authority("prefect approve", caller="prefect").approve("d-x", 1, relay=Relay("chen.jing"))


def test_waking_without_a_prefect_api_is_a_quick_no_op(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from flows.authority.waking import Waker

    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    monkeypatch.setenv("PREFECT_HOME", str(tmp_path))  # no profile names an API either
    started = time.monotonic()
    assert Waker().wake("d-1", 1, plan_hash=None, actor="chen.jing", decision="approve", comment="") is None
    assert time.monotonic() - started < 1.0
