"""The one rule for what a client of ``sortie server`` may not supply: who, when, which world, rules or link.

Why one rule: the CLI and the Prefect workers are both clients of the
authority, and they used to refuse different things. A caller's identity,
time, world, rule set — options and parameters, and ``SORTIE_USER`` /
``SORTIE_NOW`` / ``SORTIE_WORLD`` left in the environment — have no meaning
to a server, whose token says who, whose clock says when and whose world and
rule set say what; neither has a link address for an action where the server
reaches each vehicle at its own record. Each is refused with
``OVERRIDE_REFUSED``, never silently ignored, so nobody believes something
ran as a user, at a time or on a world the server never used. ``sortie plan
--what-if`` and the simulators take a world and a time; they never reach this.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from flows.errors import OverrideRefused

__all__ = ["LOCAL_ENV", "refuse_overrides", "server_url"]

#: The environment an embedded run reads for who, when and which world; a server owns all three.
LOCAL_ENV = ("SORTIE_USER", "SORTIE_NOW", "SORTIE_WORLD")


def server_url() -> str | None:
    """``SORTIE_SERVER`` (the authority's base URL), or None for the embedded mode: the one place it is read."""
    url = os.environ.get("SORTIE_SERVER", "").strip()
    return url or None


def refuse_overrides(command: str, given: Mapping[str, Any]) -> None:
    """``OverrideRefused`` naming every non-empty value of ``given`` (as the caller spells it: ``--as``,
    ``world``, …) and every variable of ``LOCAL_ENV`` set in this process."""
    refused = [name for name, value in given.items() if value not in (None, "", {}, [])]
    refused += [f"${name}" for name in LOCAL_ENV if os.environ.get(name, "").strip()]
    if refused:
        raise OverrideRefused(
            f"`{command}` with SORTIE_SERVER set refuses {', '.join(refused)} (refused, never ignored): the server's "
            "token says who you are, its clock says when, its world and rule set say what, and it reaches each vehicle at its own "
            "record of the link address (unset them; `sortie plan --what-if` plans on any world and time and "
            "records nothing)",
            details={"refused": refused, "command": command},
        )
