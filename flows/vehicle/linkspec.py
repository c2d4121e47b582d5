"""Which link each drone of a dispatch uses: ``--link CONN`` or ``--link DRONE=CONN …``.

Kept apart from ``flows.vehicle.link`` (which loads pymavlink) so the CLI and
the dispatch use case can check a link override before anything is claimed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from planner.errors import InvalidArgument

__all__ = ["LinkOverride", "parse_links", "check_links"]

LinkOverride = str | Mapping[str, str] | None


def parse_links(values: list[str] | None) -> str | dict[str, str] | None:
    """``--link`` values → None, one connection string, or {drone id: connection string}.

    One value without ``=`` is the link of a one-drone plan (``check_links``
    refuses it for more drones); otherwise every value must be ``DRONE=CONN``
    and each drone named once.
    """
    if not values:
        return None
    if len(values) == 1 and "=" not in values[0]:
        return values[0]
    out: dict[str, str] = {}
    for value in values:
        drone, sep, conn = value.partition("=")
        drone, conn = drone.strip(), conn.strip()
        if not sep or not drone or not conn:
            raise InvalidArgument(f"--link {value!r}: with more than one --link, each is DRONE=CONN")
        if drone in out:
            raise InvalidArgument(f"--link names {drone} twice")
        out[drone] = conn
    return out


def check_links(drones: Iterable[str], link: LinkOverride) -> None:
    """``InvalidArgument`` unless ``link`` fits the plan's drones: one string for one drone, a mapping of its drones."""
    flying = sorted(set(drones))
    if isinstance(link, str) and len(flying) > 1:
        raise InvalidArgument(
            f"--link names one vehicle but the plan flies {len(flying)} drones ({', '.join(flying)}); "
            "give --link DRONE=CONN for each, or no --link (each drone's own link is used)"
        )
    if isinstance(link, Mapping):
        unknown = sorted(set(link) - set(flying))
        if unknown:
            raise InvalidArgument(
                f"--link names {', '.join(unknown)}, which this plan does not fly (it flies {', '.join(flying)})"
            )
