"""``sortie server``, ``sortie admin …`` and ``sortie watch``: running the authority and following it.

``sortie server --world DIR --home DIR --listen 127.0.0.1:PORT [--clock ISO]``
starts the authority (``flows.server``). The admin commands run on the server
host against its ``--home`` (default ``$SORTIE_HOME``): tokens are issued and
revoked there, one-time-code secrets enrolled there, the policy changed there
(an audited act: a row in the ledger's audit table). A token is printed once
and stored only as a hash. ``sortie watch`` is a client: it prints the
server's live events.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any

import typer

from flows.cli.app import JsonOpt, WorldOpt, app, console, run
from flows.context import sortie_home
from planner.errors import InvalidArgument

__all__ = ["admin_app", "token_app", "totp_app", "policy_app", "link_app", "vehicle_app"]

admin_app = typer.Typer(help="Administer the authority on its host: tokens, one-time codes, policy.",
                        no_args_is_help=True)
token_app = typer.Typer(help="Bearer tokens: create (shown once), list, revoke.", no_args_is_help=True)
totp_app = typer.Typer(help="One-time codes (TOTP, RFC 6238) for approvals at a shared screen.",
                       no_args_is_help=True)
policy_app = typer.Typer(help="The approval policy: four-eyes, approval window.", no_args_is_help=True)
link_app = typer.Typer(help="The vehicles' link addresses the server dispatches to (over the fleet file's).",
                       no_args_is_help=True)
vehicle_app = typer.Typer(help="Bind a drone to its vehicle: system id and MAVLink 2 signing key (SETUP_SIGNING).",
                          no_args_is_help=True)
admin_app.add_typer(token_app, name="token")
admin_app.add_typer(link_app, name="link")
admin_app.add_typer(vehicle_app, name="vehicle")
admin_app.add_typer(totp_app, name="totp")
admin_app.add_typer(policy_app, name="policy")
app.add_typer(admin_app, name="admin")

HomeOpt = Annotated[Path | None, typer.Option("--home", help="The server's home (default: $SORTIE_HOME).")]


def _home(home: Path | None) -> Path:
    return Path(home).expanduser() if home else sortie_home()


def _server_world(world: str | None, home: Path) -> Any:
    from flows.authority.host import server_world

    return server_world(world, home)


def _known_user(user: str, world: str | None, home: Path) -> None:
    from flows.authority.host import known_user

    known_user(user, world, home)


def _admin_audit(home: Path, command: str, args: dict[str, Any], code: str = "OK") -> None:
    from flows.authority.host import admin_audit

    admin_audit(home, command, args, code)


@app.command("server")
def server_cmd(
    world: Annotated[Path, typer.Option("--world", help="The authority's world folder (the only one it uses).")],
    home: Annotated[Path, typer.Option("--home", help="The authority's home: ledger, tokens, TOTP, policy.")],
    listen: Annotated[str, typer.Option("--listen", help="HOST:PORT to listen on.")] = "127.0.0.1:8770",
    clock: Annotated[str | None, typer.Option(
        "--clock", help="Start the server's clock at this instant and let it run (demos and simulation only)."
    )] = None,
    rules: Annotated[Path | None, typer.Option(
        "--rules", help="The rule set it plans inside and judges with (default: $SORTIE_RULES, then the bundled one)."
    )] = None,
    sweep_s: Annotated[float, typer.Option(
        "--sweep-s", help="Seconds between the sweeper's rounds (overdue drafts expire, versions whose run was "
                          "cancelled in Prefect are withdrawn); 0 turns it off."
    )] = 10.0,
    fleet: Annotated[str, typer.Option(
        "--fleet", help="live: hold one MAVLink link per drone and take ONLINE, battery and position from the "
                        "vehicles (default); file: take them from fleet.json (simulations without vehicles)."
    )] = "live",
    fleet_silent_s: Annotated[float, typer.Option(
        "--fleet-silent-s", help="A vehicle with no heartbeat for this many seconds is OFFLINE (with --fleet live)."
    )] = 10.0,
    allow_unsigned: Annotated[bool, typer.Option(
        "--allow-unsigned", help="Serve drones with no system id or signing key (shown in /v1/health, on every "
                                 "fleet row and in the audit); without it such a fleet does not start."
    )] = False,
) -> None:
    """Run the authority: the only writer of the ledger; identity, time, world and policy are its own."""

    def body() -> dict[str, Any]:
        from flows.server.run import make_config, parse_listen, serve

        parse_listen(listen)
        config = make_config(world, home, clock, rules, sweep_s, fleet=fleet, fleet_silent_s=fleet_silent_s,
                             allow_unsigned=allow_unsigned)
        console.print(f"sortie server on http://{listen}  world {config.world}  home {config.home}  "
                      f"clock {config.clock.describe()}  fleet {config.fleet}"
                      + ("  UNSIGNED VEHICLES ALLOWED" if allow_unsigned else ""), markup=False, highlight=False)
        serve(config, listen)
        return {}

    run(body, False, lambda d: None)


@token_app.command("create")
def token_create(
    user: Annotated[str, typer.Argument(help="The user id (from the server world's users.json).")],
    expires: Annotated[str | None, typer.Option(
        "--expires", help="Lifetime, e.g. 30d, 12h, or 'never' (default: 90d).")] = None,
    scope: Annotated[str, typer.Option(
        "--scope", help="Comma-separated: read, plan, approve, dispatch, service. A Prefect worker: service,plan,read,dispatch."
    )] = "read,plan,approve,dispatch",
    label: Annotated[str, typer.Option("--label", help="A note for the token list (e.g. the machine).")] = "",
    home: HomeOpt = None,
    world: WorldOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Issue a token for USER; it is printed once and stored only as a hash."""

    def body() -> dict[str, Any]:
        from flows.server.tokens import TokenStore, parse_lifetime

        _known_user(user, world, _home(home))
        scopes = tuple(s.strip() for s in scope.split(",") if s.strip())
        info, token = TokenStore(_home(home)).create(user, expires=parse_lifetime(expires), scopes=scopes, label=label)
        _admin_audit(_home(home), "token.create", {"user": user, "token_id": info.token_id, "scopes": list(scopes),
                                                   "expires": info.expires})
        return {"token": token, "token_id": info.token_id, "user": user, "scopes": sorted(info.scopes),
                "expires": info.expires}

    def show(d: dict[str, Any]) -> None:
        console.print(d["token"], markup=False, highlight=False)
        console.print(f"token {d['token_id']} for {d['user']} ({', '.join(d['scopes'])}), expires "
                      f"{d['expires'] or 'never'}; shown once: export SORTIE_TOKEN=…", markup=False, highlight=False,
                      style="dim")

    run(body, as_json, show)


@token_app.command("revoke")
def token_revoke(
    token_id: Annotated[str | None, typer.Argument(help="The token id (see `sortie admin token list`).")] = None,
    user: Annotated[str | None, typer.Option("--user", help="Revoke every live token of this user.")] = None,
    home: HomeOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Revoke a token (or all of a user's); the next request with it gets UNAUTHENTICATED."""

    def body() -> dict[str, Any]:
        from flows.server.tokens import TokenStore

        done = TokenStore(_home(home)).revoke(token_id, user=user)
        _admin_audit(_home(home), "token.revoke", {"token_id": token_id, "user": user, "revoked": done})
        return {"revoked": done}

    run(body, as_json, lambda d: console.print(f"revoked: {', '.join(d['revoked']) or 'none'}", highlight=False))


@token_app.command("list")
def token_list(home: HomeOpt = None, as_json: JsonOpt = False) -> None:
    """Every token (never the token itself, nor its hash)."""

    def body() -> dict[str, Any]:
        from flows.server.tokens import TokenStore

        return {"tokens": TokenStore(_home(home)).list()}

    def show(d: dict[str, Any]) -> None:
        for t in d["tokens"]:
            state = f"revoked {t['revoked']}" if t.get("revoked") else f"expires {t.get('expires') or 'never'}"
            console.print(f"{t['token_id']}  {t['user']}  {','.join(t['scopes'])}  {state}  {t.get('label', '')}",
                          markup=False, highlight=False)

    run(body, as_json, show)


@totp_app.command("locks")
def totp_locks(home: HomeOpt = None, as_json: JsonOpt = False) -> None:
    """The (person, caller) pairs whose one-time codes are locked out now, and for how long (each lock is also an
    audit row ``server.<action>.totp.lockout``)."""

    def body() -> dict[str, Any]:
        from flows.server.totp import TotpStore

        return {"locks": TotpStore(str(_home(home))).locks()}

    run(body, as_json, lambda d: [console.print(f"{x['user']} from {x['caller']}: locked {x['left_s']} s more",
                                                markup=False, highlight=False) for x in d["locks"]]
        or console.print("no lock in force", markup=False, highlight=False))


@totp_app.command("enroll")
def totp_enroll(
    user: Annotated[str, typer.Argument(help="The approver's user id.")],
    home: HomeOpt = None,
    world: WorldOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Make USER's one-time-code secret: prints the otpauth URI and a QR code to scan."""

    def body() -> dict[str, Any]:
        from flows.server.totp import TotpStore

        _known_user(user, world, _home(home))
        uri = TotpStore(str(_home(home))).enroll(user)
        _admin_audit(_home(home), "totp.enroll", {"user": user})
        return {"user": user, "otpauth_uri": uri}

    def show(d: dict[str, Any]) -> None:
        import io

        import segno

        buf = io.StringIO()
        segno.make(d["otpauth_uri"], error="m").terminal(out=buf, compact=True)
        console.print(buf.getvalue(), markup=False, highlight=False)
        console.print(d["otpauth_uri"], markup=False, highlight=False)

    run(body, as_json, show)


@policy_app.command("show")
def policy_show(home: HomeOpt = None, as_json: JsonOpt = False) -> None:
    """The approval policy the server applies now."""

    def body() -> dict[str, Any]:
        from flows.server.config import PolicyStore

        return PolicyStore(_home(home)).current().to_dict()

    run(body, as_json, None)


@policy_app.command("set")
def policy_set(
    four_eyes: Annotated[str | None, typer.Option("--four-eyes", help="on | off")] = None,
    approval_window: Annotated[str | None, typer.Option("--approval-window", help="e.g. 30m")] = None,
    home: HomeOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Change the policy (an audited admin act; every later approval records the new one)."""

    def body() -> dict[str, Any]:
        from flows.server.config import PolicyStore
        from flows.server.tokens import parse_duration

        fe = None
        if four_eyes is not None:
            if four_eyes.lower() not in ("on", "off"):
                raise InvalidArgument("--four-eyes is on or off")
            fe = four_eyes.lower() == "on"
        before, after = PolicyStore(_home(home)).set(
            four_eyes=fe, approval_ttl=parse_duration(approval_window) if approval_window else None
        )
        _admin_audit(_home(home), "policy.set", {"before": before.to_dict(), "after": after.to_dict()})
        return {"before": before.to_dict(), "after": after.to_dict()}

    run(body, as_json, None)


@link_app.command("set")
def link_set(
    drone: Annotated[str, typer.Argument(help="The drone id (from the server world's fleet.json).")],
    conn: Annotated[str, typer.Argument(help="Its pymavlink connection string, e.g. udpout:10.0.0.7:14550.")],
    home: HomeOpt = None,
    world: WorldOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Record where the server reaches DRONE (an audited admin act; dispatch, control, monitor use it)."""

    def body() -> dict[str, Any]:
        from flows.server.links import LinkStore

        fleet_link = _server_world(world, _home(home)).drone(drone).link  # NOT_FOUND for a drone not in the fleet
        before = LinkStore(_home(home)).set(drone, conn)
        _admin_audit(_home(home), "link.set", {"drone_id": drone, "before": before or fleet_link, "after": conn})
        return {"drone_id": drone, "link": conn, "before": before or fleet_link}

    run(body, as_json, lambda d: console.print(f"{d['drone_id']}: {d['before']} → {d['link']}", markup=False,
                                               highlight=False))


@vehicle_app.command("bind")
def vehicle_bind(
    drone: Annotated[str, typer.Argument(help="The drone id (from the server world's fleet.json).")],
    system_id: Annotated[int, typer.Option("--system-id", help="The vehicle's MAVLink system id (SYSID_THISMAV).")],
    component_id: Annotated[int | None, typer.Option("--component-id", help="Its autopilot's component id.")] = None,
    link: Annotated[str | None, typer.Option("--link", help="Set its link too (default: the server's record).")] = None,
    setup_link: Annotated[str | None, typer.Option(
        "--setup-link", help="Send the key over this link, one the vehicle trusts (ArduPilot: SERIAL0) when it "
                             "already signs with a key the server does not hold (default: the link).")] = None,
    key_ref: Annotated[str | None, typer.Option("--key-ref", help="The key's name in <home>/keys.")] = None,
    home: HomeOpt = None,
    world: WorldOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Give DRONE's vehicle a new signing key (SETUP_SIGNING), prove it signs with it, and record the binding
    (system id, key reference) the server then holds its link with (an audited admin act; never the key)."""

    def body() -> dict[str, Any]:
        from flows.server.vehicle_admin import bind_vehicle

        done = bind_vehicle(_home(home), _server_world(world, _home(home)), drone, system_id=system_id,
                            component_id=component_id, link=link, setup_link=setup_link, key_ref=key_ref)
        _admin_audit(_home(home), "vehicle.bind", {  # "key_id": the key's reference (the audit masks other *key*)
            "drone_id": drone, "system_id": done["system_id"], "component_id": component_id, "key_id": done["key_ref"],
            "link": done["link"], "setup_link": done["setup_link"], "proof": done["proof"],
            "binding_before": done["before"], "replaced_existing": done["replaced_key"]})
        return done

    run(body, as_json, lambda d: console.print(
        f"{d['drone_id']}: system {d['system_id']} on {d['link']}, signing key {d['key_ref']} provisioned over "
        f"{d['setup_link']} and proven ({d['proof']['signed_frames_verified']} signed frames verified)",
        markup=False, highlight=False))


@link_app.command("unset")
def link_unset(
    drone: Annotated[str, typer.Argument(help="The drone id.")],
    home: HomeOpt = None,
    world: WorldOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Forget the server's own record of DRONE's link: the fleet file's is used again (audited)."""

    def body() -> dict[str, Any]:
        from flows.server.links import LinkStore

        fleet_link = _server_world(world, _home(home)).drone(drone).link
        before = LinkStore(_home(home)).unset(drone)
        _admin_audit(_home(home), "link.unset", {"drone_id": drone, "before": before, "after": fleet_link})
        return {"drone_id": drone, "link": fleet_link, "before": before}

    run(body, as_json, lambda d: console.print(f"{d['drone_id']}: {d['before']} → {d['link']} (fleet file)",
                                               markup=False, highlight=False))


@link_app.command("list")
def link_list(home: HomeOpt = None, world: WorldOpt = None, as_json: JsonOpt = False) -> None:
    """Each drone's link as the server uses it, and where it comes from (links.json or fleet.json)."""

    def body() -> dict[str, Any]:
        from flows.server.links import LinkStore

        recorded = LinkStore(_home(home)).all()
        drones = _server_world(world, _home(home)).drones
        return {"links": [{"drone_id": d.id, "link": recorded.get(d.id) or d.link,
                           "source": "links.json" if d.id in recorded else "fleet.json"} for d in drones]}

    run(body, as_json, lambda d: [console.print(f"{x['drone_id']}  {x['link']}  ({x['source']})", markup=False,
                                                highlight=False) for x in d["links"]])


@app.command("watch")
def watch_cmd(
    count: Annotated[int | None, typer.Option("--count", help="Stop after this many events (of the --progress "
                                                                "choice).")] = None,
    timeout: Annotated[float | None, typer.Option("--timeout", help="Stop after this many seconds.")] = None,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="Show each flight's progress "
                                                                          "(flight.progress, about 1 a second).")] = True,
    as_json: JsonOpt = False,
) -> None:
    """Print the server's live events (SORTIE_SERVER, SORTIE_TOKEN): drafts, approvals, dispatches, flights."""

    def body() -> dict[str, Any]:
        import json

        from flows.authority.choice import authority

        seen = 0
        t0 = time.monotonic()
        from flows.safe_text import clean_tree, escape_json_text

        for ev in authority("sortie watch").events(timeout_s=timeout):
            if not progress and ev.get("type") == "flight.progress":
                continue  # the flight's 1 Hz figures: the ops page and `sortie monitor` show them
            seen += 1
            if as_json:
                print(escape_json_text(json.dumps(ev, ensure_ascii=False, sort_keys=True)), flush=True)
            else:
                ev = clean_tree(ev)  # a reason is someone's text: one line, no control characters
                what = " ".join(f"{k}={ev[k]}" for k in ("draft_id", "version", "status", "draft_status", "state",
                                                           "drone_id", "reason") if k in ev)
                console.print(f"{ev['type']:<20} {what}", markup=False, highlight=False)
            if count is not None and seen >= count:
                break
        return {"events": seen, "seconds": round(time.monotonic() - t0, 1)}

    run(body, False, lambda d: None)
