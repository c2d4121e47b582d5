"""What every use case gathers the same way: the acting user, the planning budget; the world and the rule set.

The world and the rule file are read at the edge (``flows.world_folder.load_world_at``,
``flows.rule_file.rule_set``, re-exported here for the use cases); which folder, and whether
a call's one snapshot is used instead, is the grounds' to say
(``flows.usecases.grounds.Grounds.world``: ``sortie server`` takes its world once per
request and every use case the request runs sees that one).
"""

from __future__ import annotations

from typing import Any

from flows.errors import Forbidden
from flows.rule_file import rule_set as load_rules
from flows.world_folder import check_zones_readable, load_world_at
from planner.errors import InvalidArgument, NotFound
from planner.world.model import User, World

__all__ = ["DEFAULT_PLAN_BUDGET_S", "PLAN_BUDGET_ENV", "load_world_at", "check_zones_readable", "load_rules",
           "planning_budget", "user_of"]


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
