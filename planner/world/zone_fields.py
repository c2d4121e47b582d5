"""The pieces both geozone formats are made of: positions, rings, limits, times, schedules.

``planner.world.ed269`` and ``planner.world.ed318`` parse the two documents with
these; each checker appends ``(json_path, message)`` problems and returns ``None`` for a
bad value, so parsing carries on and one run reports every problem. The geometry checkers
(``check_position``, ``polygon_from_coordinates``, ``linestring_from_coordinates``) also
serve ``planner.world.files``. The underscored names are this module's shared internals,
for the two format parsers only.
"""

from __future__ import annotations

from datetime import date, datetime, time, timezone
from collections.abc import Callable
from typing import Any, TypeVar

from shapely.geometry import LineString, Polygon
from shapely.validation import explain_validity

from planner.world.model import Applicability, CircleArea, Restriction, VerticalReference, WeeklySlot

T = TypeVar("T")

__all__ = ["ZoneProblem", "FT_TO_M", "UNBOUNDED_SENTINEL", "check_position", "polygon_from_coordinates", "linestring_from_coordinates"]

ZoneProblem = tuple[str, str]
"""One problem: (JSON path such as ``$.features[2].restriction``, message)."""

FT_TO_M = 0.3048
UNBOUNDED_SENTINEL = 99999  # Swiss ED-318 data uses it for "no upper limit"

_RESTRICTIONS = {
    "PROHIBITED": Restriction.PROHIBITED,
    "REQ_AUTHORISATION": Restriction.REQ_AUTHORISATION,
    "REQ_AUTHORIZATION": Restriction.REQ_AUTHORISATION,
    "CONDITIONAL": Restriction.CONDITIONAL,
    "NO_RESTRICTION": Restriction.NO_RESTRICTION,
}
_REFERENCES = {"AGL": VerticalReference.AGL, "AMSL": VerticalReference.AMSL, "WGS84": VerticalReference.WGS84}
_UOM = {"M": 1.0, "FT": FT_TO_M}
_DAYS = {"MON": 0, "TUE": 1, "WED": 2, "THU": 3, "FRI": 4, "SAT": 5, "SUN": 6}
_END_OF_DAY = time(23, 59, 59, 999999)

_SCHEDULE = {"day", "startTime", "endTime"}



# --------------------------------------------------------------------------- geometry checks


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def check_position(value: Any, path: str, problems: list[ZoneProblem]) -> tuple[float, float] | None:
    """A GeoJSON position ``[lon, lat]`` (an optional third altitude is ignored), range-checked."""
    if not isinstance(value, list) or len(value) not in (2, 3) or not all(_is_number(v) for v in value):
        problems.append((path, f"a position must be two numbers, lon then lat, got {value!r}"))
        return None
    lon, lat = float(value[0]), float(value[1])
    ok = True
    if not -180.0 <= lon <= 180.0:
        problems.append((path, f"longitude {lon} is outside [-180, 180] (positions are lon, lat in that order)"))
        ok = False
    if not -90.0 <= lat <= 90.0:
        hint = " — looks like swapped lat/lon" if -90.0 <= lon <= 90.0 else ""
        problems.append((path, f"latitude {lat} is outside [-90, 90] (positions are lon, lat in that order){hint}"))
        ok = False
    return (lon, lat) if ok else None


def _ring(value: Any, path: str, problems: list[ZoneProblem]) -> list[tuple[float, float]] | None:
    if not isinstance(value, list):
        problems.append((path, f"a linear ring must be a list of positions, got {type(value).__name__}"))
        return None
    before = len(problems)
    points = [check_position(p, f"{path}[{i}]", problems) for i, p in enumerate(value)]
    if len(problems) > before:
        return None
    pts = [p for p in points if p is not None]
    if len(pts) < 4:
        problems.append((path, f"a linear ring needs at least 4 positions (first = last), got {len(pts)}"))
        return None
    if pts[0] != pts[-1]:
        problems.append((path, f"ring is not closed: first position {list(pts[0])} != last {list(pts[-1])}"))
        return None
    return pts


def polygon_from_coordinates(coords: Any, path: str, problems: list[ZoneProblem]) -> Polygon | None:
    """A valid shapely Polygon from GeoJSON Polygon ``coordinates`` or ``None`` with problems added."""
    if not isinstance(coords, list) or not coords:
        problems.append((path, "polygon coordinates must be a non-empty list of rings"))
        return None
    rings = [_ring(r, f"{path}[{i}]", problems) for i, r in enumerate(coords)]
    if any(r is None for r in rings):
        return None
    poly = Polygon(rings[0], rings[1:])
    if not poly.is_valid:
        problems.append((path, f"polygon is not valid: {explain_validity(poly)}"))
        return None
    if poly.area <= 0:
        problems.append((path, "polygon has zero area"))
        return None
    return poly


def linestring_from_coordinates(coords: Any, path: str, problems: list[ZoneProblem]) -> LineString | None:
    """A shapely LineString of at least two distinct positions, or ``None`` with problems added."""
    if not isinstance(coords, list) or len(coords) < 2:
        problems.append((path, "a LineString needs at least 2 positions"))
        return None
    before = len(problems)
    pts = [check_position(p, f"{path}[{i}]", problems) for i, p in enumerate(coords)]
    if len(problems) > before:
        return None
    line = LineString(pts)
    if line.length <= 0:
        problems.append((path, "LineString has zero length (all positions equal)"))
        return None
    return line


# --------------------------------------------------------------------------- small parsers


def _unknown_keys(obj: dict[str, Any], allowed: set[str], path: str, problems: list[ZoneProblem]) -> None:
    for key in sorted(set(obj) - allowed):
        problems.append((f"{path}.{key}", f"unknown key {key!r}"))


def _obj(value: Any, path: str, problems: list[ZoneProblem], what: str) -> dict[str, Any] | None:
    if not isinstance(value, dict):
        problems.append((path, f"{what} must be an object, got {type(value).__name__}"))
        return None
    return value


def _text(value: Any) -> str:
    """A plain string, or ED-318's multilingual ``[{text, lang}]`` (English preferred)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        entries = [v for v in value if isinstance(v, dict) and isinstance(v.get("text"), str)]
        for prefix in ("en",):
            for v in entries:
                if str(v.get("lang", "")).lower().startswith(prefix):
                    return v["text"]
        return entries[0]["text"] if entries else ""
    return str(value)


def _restriction(value: Any, path: str, problems: list[ZoneProblem]) -> Restriction | None:
    r = _RESTRICTIONS.get(value) if isinstance(value, str) else None
    if r is None:
        problems.append((path, f"unknown restriction {value!r}; known: {', '.join(sorted(_RESTRICTIONS))}"))
    return r


def _reference(value: Any, path: str, problems: list[ZoneProblem]) -> VerticalReference | None:
    ref = _REFERENCES.get(value.upper()) if isinstance(value, str) else None
    if ref is None:
        problems.append((path, f"unknown vertical reference {value!r}; known: AGL, AMSL, WGS84"))
    return ref


def _uom(value: Any, path: str, problems: list[ZoneProblem]) -> float | None:
    factor = _UOM.get(value.upper()) if isinstance(value, str) else None
    if factor is None:
        problems.append((path, f"unknown unit {value!r}; known: M, FT"))
    return factor


def _limit(value: Any, factor: float, upper: bool, path: str, problems: list[ZoneProblem]) -> tuple[bool, float | None]:
    """(ok, metres or None = unbounded)."""
    if value is None:
        return True, None
    if not _is_number(value):
        problems.append((path, f"altitude limit must be a number or null, got {value!r}"))
        return False, None
    if upper and value >= UNBOUNDED_SENTINEL:
        return True, None
    return True, round(float(value) * factor, 3)


def _datetime(value: Any, path: str, problems: list[ZoneProblem]) -> datetime | None:
    if value is None:
        return None
    try:
        dt = datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        dt = None
    if dt is None:
        problems.append((path, f"not an ISO 8601 date-time: {value!r}"))
        return None
    if dt.tzinfo is None:
        problems.append((path, f"date-time {value!r} needs an offset (for example Z)"))
        return None
    return dt.astimezone(timezone.utc)


def _utc_time(value: Any, path: str, problems: list[ZoneProblem]) -> time | None:
    """A schedule time as a naive UTC ``time`` (times without an offset are taken as UTC)."""
    if isinstance(value, str) and value.rstrip("Z").startswith("24:00"):
        return _END_OF_DAY
    try:
        t = time.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        t = None
    if t is None:
        problems.append((path, f"not an ISO 8601 time: {value!r}"))
        return None
    if t.tzinfo is not None:
        t = datetime.combine(date(2000, 1, 3), t).astimezone(timezone.utc).time()
    return t.replace(tzinfo=None)


def _entries(
    value: list[Any], path: str, problems: list[ZoneProblem], what: str,
    parse: Callable[[dict[str, Any], str, list[ZoneProblem]], list[T] | None],
) -> tuple[T, ...] | None:
    """Every entry of a list, each an object at ``path[i]`` turned into values by ``parse`` (None = it failed).

    All entries are checked so every problem is reported at once; None when any failed."""
    out: list[T] = []
    ok = True
    for i, item in enumerate(value):
        p = f"{path}[{i}]"
        obj = _obj(item, p, problems, what)
        parsed = None if obj is None else parse(obj, p, problems)
        if parsed is None:
            ok = False
        else:
            out.extend(parsed)
    return tuple(out) if ok else None


def _schedule(value: Any, path: str, problems: list[ZoneProblem]) -> tuple[WeeklySlot, ...] | None:
    if value is None:
        return ()
    if not isinstance(value, list):
        problems.append((path, "schedule must be a list"))
        return None
    return _entries(value, path, problems, "a schedule entry", _schedule_entry)


def _schedule_entry(obj: dict[str, Any], p: str, problems: list[ZoneProblem]) -> list[WeeklySlot] | None:
    """One weekly slot, or two when it runs overnight (split at midnight UTC)."""
    before = len(problems)
    _unknown_keys(obj, _SCHEDULE, p, problems)
    raw_days = obj.get("day", ["ANY"])
    if isinstance(raw_days, str):
        raw_days = [raw_days]
    days: set[int] = set()
    if not isinstance(raw_days, list):
        problems.append((f"{p}.day", "day must be a list such as [\"FRI\", \"SAT\"]"))
    else:
        for j, d in enumerate(raw_days):
            if d == "ANY":
                days.update(range(7))
            elif d in _DAYS:
                days.add(_DAYS[d])
            else:
                problems.append((f"{p}.day[{j}]", f"unknown day {d!r}; known: {', '.join(_DAYS)}, ANY"))
    start = _utc_time(obj.get("startTime", "00:00:00Z"), f"{p}.startTime", problems)
    end = _utc_time(obj.get("endTime", "24:00Z"), f"{p}.endTime", problems)
    if len(problems) > before or start is None or end is None:
        return None
    if start < end:
        return [WeeklySlot(days=frozenset(days), start=start, end=end)]
    if start > end:  # overnight: split at midnight UTC
        return [
            WeeklySlot(days=frozenset(days), start=start, end=_END_OF_DAY),
            WeeklySlot(days=frozenset((d + 1) % 7 for d in days), start=time(0), end=end),
        ]
    problems.append((p, "schedule entry starts and ends at the same time"))
    return None


def _dates_and_schedule(obj: dict[str, Any], path: str, problems: list[ZoneProblem]) -> Applicability | None:
    before = len(problems)
    start = _datetime(obj.get("startDateTime"), f"{path}.startDateTime", problems)
    end = _datetime(obj.get("endDateTime"), f"{path}.endDateTime", problems)
    schedule = _schedule(obj.get("schedule"), f"{path}.schedule", problems)
    if len(problems) > before or schedule is None:
        return None
    if start is not None and end is not None and end <= start:
        problems.append((path, f"endDateTime {end.isoformat()} is not after startDateTime {start.isoformat()}"))
        return None
    return Applicability(permanent=False, start=start, end=end, schedule=schedule)


def _circle(center: Any, radius: Any, factor: float, path: str, center_path: str, radius_path: str,
            problems: list[ZoneProblem]) -> CircleArea | None:
    pos = check_position(center, center_path, problems)
    if not _is_number(radius) or radius <= 0:
        problems.append((radius_path, f"circle radius must be a number > 0, got {radius!r}"))
        return None
    if pos is None:
        return None
    return CircleArea(lon=pos[0], lat=pos[1], radius_m=round(float(radius) * factor, 3))
