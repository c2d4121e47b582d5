"""What every use case gathers the same way: the world, the rule set, the acting user.

``load_world_at`` loads a world folder, a fresh snapshot each call; which
folder, and whether a call's one snapshot is used instead, is the grounds'
to say (``flows.usecases.grounds.Grounds.world``: ``sortie server`` loads its
world once per request and every use case the request runs sees that one).
In server mode it is loaded *strictly*: a world whose zone data cannot be
read — no ``zones/`` folder, a zone file that is not a regular file or cannot
be read — is refused with ``WorldUnavailable`` instead of being planned on as
a world without zones (which is what the lenient loader does, and what let an
old or partial copy of a world dispatch past a prohibited zone).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from flows.context import resolve_rules_file, resolve_world_dir
from planner.errors import Forbidden, InvalidArgument, NotFound, WorldUnavailable
from planner.world.model import User, World

__all__ = ["DEFAULT_PLAN_BUDGET_S", "PLAN_BUDGET_ENV", "load_world_at", "check_zones_readable", "load_rules",
           "planning_budget", "user_of"]


def check_zones_readable(world_dir: str | Path) -> None:
    """Fail closed unless ``world_dir/zones`` is a folder whose entries are regular, readable files."""
    root = Path(world_dir)
    zones = root / "zones"
    try:
        st = os.lstat(zones)
    except OSError:
        raise WorldUnavailable(f"the world {str(root)!r} has no zones/ folder: nothing is planned, approved or "
                               "dispatched until its zone data is back") from None
    if not stat.S_ISDIR(st.st_mode):
        raise WorldUnavailable(f"{str(zones)!r} is not a folder: the world's zone data cannot be read")
    try:
        entries = sorted(zones.iterdir())
    except OSError as exc:
        raise WorldUnavailable(f"the zone folder {str(zones)!r} cannot be listed: {exc.strerror}") from None
    for p in entries:
        if p.name.startswith("."):
            continue
        mode = os.lstat(p).st_mode
        if not stat.S_ISREG(mode):
            raise WorldUnavailable(f"zone entry {p.name!r} is not a regular file: the zone data cannot be trusted")
        try:
            with open(p, "rb") as fh:
                fh.read(1)
        except OSError as exc:
            raise WorldUnavailable(f"zone file {p.name!r} cannot be read: {exc.strerror}") from None


def load_world_at(world_dir: str | Path | None, *, strict: bool = False) -> World:
    """Load the world folder (``--world``, ``SORTIE_WORLD``, else the demo world); a fresh snapshot each call.

    ``strict`` (the server) checks the zone data first and refuses a world without it.
    """
    from flows.world_folder import load_world

    root = resolve_world_dir(world_dir)
    if strict:
        check_zones_readable(root)
    return load_world(root)


def load_rules(rules_path: str | Path | None) -> Any:
    """The rule set (``--rules``, ``SORTIE_RULES``, else the bundled ``data/rules.yaml``); a missing file is an
    error, never a skip."""
    from flows.rule_file import load_rules as _load

    path = resolve_rules_file(rules_path)
    if not path.is_file():
        raise InvalidArgument(f"rule file {str(path)!r} does not exist; sortie does not plan or dispatch without rules")
    return _load(path)


def user_of(world: World, user_id: str | None, what: str) -> User:
    """The acting user from the world's users.json; an unknown id may do nothing."""
    if not user_id:
        raise InvalidArgument(f"who is acting? give --as USER or set SORTIE_USER to {what}")
    try:
        return world.user(user_id)
    except NotFound:
        raise Forbidden(f"{user_id!r} is not a user of world {world.name!r}: they may not {what}") from None


#: The planner's deadline for one request unless ``SORTIE_PLAN_BUDGET_S`` says otherwise (seconds, from
#: the start of planning; a small job ends sooner, when more search buys nothing).
DEFAULT_PLAN_BUDGET_S = 20.0
#: ``sortie plan/replan --budget-s/--seed/--iterations`` set these for the process; a server reads its own.
PLAN_BUDGET_ENV = ("SORTIE_PLAN_BUDGET_S", "SORTIE_PLAN_SEED", "SORTIE_PLAN_ITERATIONS")


def planning_budget() -> Any:
    """The planning deadline, started now on the monotonic clock (``planner.routing.budget``).

    ``SORTIE_PLAN_BUDGET_S`` (default ``DEFAULT_PLAN_BUDGET_S``), ``SORTIE_PLAN_SEED`` and
    ``SORTIE_PLAN_ITERATIONS`` (a work cap: with a seed, a plan that ends on its cap repeats
    exactly); a value that is not a positive number is ``INVALID_ARGUMENT``.
    """
    import os
    import time

    from planner.routing.budget import Budget

    raw = {name: os.environ.get(name, "").strip() for name in PLAN_BUDGET_ENV}
    try:
        seconds = float(raw["SORTIE_PLAN_BUDGET_S"]) if raw["SORTIE_PLAN_BUDGET_S"] else DEFAULT_PLAN_BUDGET_S
        seed = int(raw["SORTIE_PLAN_SEED"]) if raw["SORTIE_PLAN_SEED"] else 0
        cap = int(raw["SORTIE_PLAN_ITERATIONS"]) if raw["SORTIE_PLAN_ITERATIONS"] else None
        return Budget.deadline(seconds, time.monotonic, seed=seed, iterations=cap)
    except ValueError as exc:
        raise InvalidArgument(f"the planning budget ({', '.join(f'{k}={v!r}' for k, v in raw.items() if v)}) "
                              f"is not usable: {exc}; give positive seconds, a seed >= 0, a cap >= 1") from None
