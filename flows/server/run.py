"""Start the authority: check the world and home, build the app, serve it with uvicorn.

The world is checked strictly before the server listens (a server whose world
has no readable zone data does not start); the same check runs again on every
request, so a world that breaks while the server runs blocks everything until
it is fixed.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from flows.ledger import claim_home
from flows.server.config import ServerClock, ServerConfig
from flows.rule_file import rule_set
from flows.server.links import LinkStore, require_bound
from flows.server.timeouts import timed_h11
from flows.world_folder import load_world_at
from planner.errors import InvalidArgument

__all__ = ["parse_listen", "make_config", "serve"]


def parse_listen(listen: str) -> tuple[str, int]:
    """``HOST:PORT`` → (host, port)."""
    host, _, port = listen.rpartition(":")
    if not host or not port.isdigit() or not 0 <= int(port) < 65536:
        raise InvalidArgument(f"--listen {listen!r}: expected HOST:PORT, e.g. 127.0.0.1:8770")
    return host, int(port)


def make_config(world: str | Path, home: str | Path, clock: str | None = None,
                rules: str | Path | None = None, sweep_s: float = 10.0, *, fleet: str = "live",
                fleet_silent_s: float = 10.0, allow_unsigned: bool = False) -> ServerConfig:
    """The server's configuration; the world must load strictly now, and every drone must bind its vehicle (a
    system id and a signing key the home holds) unless ``allow_unsigned`` (``flows.server.links.require_bound``)."""
    world_dir = Path(world).expanduser().resolve()
    home_dir = Path(home).expanduser().resolve()
    start = None
    if clock:
        try:
            start = datetime.fromisoformat(clock)
        except ValueError as exc:
            raise InvalidArgument(f"--clock {clock!r} is not an ISO 8601 time: {exc}") from None
    require_bound(LinkStore(home_dir).apply(load_world_at(world_dir, strict=True)), home_dir / "keys",
                  allow_unsigned=allow_unsigned)
    rules_file = None if rules is None else Path(rules).expanduser().resolve()
    if rules_file is not None:
        rule_set(rules_file)  # a rule file that does not load stops the server here, not at the first plan
    if sweep_s < 0:
        raise InvalidArgument(f"--sweep-s {sweep_s}: give a period in seconds, or 0 to turn the sweeper off")
    if fleet not in ("live", "file"):
        raise InvalidArgument(f"--fleet {fleet!r}: live (the vehicles say) or file (fleet.json says)")
    if not 0 < fleet_silent_s <= 300:
        raise InvalidArgument(f"--fleet-silent-s {fleet_silent_s}: give 0 < seconds <= 300")
    claim_home(home_dir)  # one server per home: a second one stops here (CONFLICT), before it changes anything
    config = ServerConfig(world=world_dir, home=home_dir, clock=ServerClock(start), rules=rules_file, sweep_s=sweep_s,
                          fleet=fleet, fleet_silent_s=fleet_silent_s, allow_unsigned=allow_unsigned)
    # So the admin commands on this host check user ids against the server's own world by default.
    (home_dir / "server.json").write_text(json.dumps({"world": str(world_dir)}, indent=1) + "\n", encoding="utf-8")
    return config


def serve(config: ServerConfig, listen: str) -> None:
    """Run until interrupted."""
    import uvicorn

    from flows.server.api import create_app

    host, port = parse_listen(listen)
    uvicorn.run(create_app(config), host=host, port=port, log_level="warning", timeout_graceful_shutdown=2,
                access_log=False, http=timed_h11(config.header_timeout_s))  # slow headers: flows.server.timeouts
