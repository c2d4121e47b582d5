"""Time zones and UTC offsets named in a request ("09:00 UTC", "北京时间上午9点", "+08:00", "CET").

A clock time said in another zone is converted to the world's zone (``intents.time.parse``
does the arithmetic); the reader must first know *which* zone. Names and offsets that
say it exactly are read: UTC/GMT/Z, ``UTC+8`` / ``GMT-05:30`` / ``+08:00`` after a clock,
named cities and countries (北京时间, Helsinki time, 当地时间 = the world's own zone), and
abbreviations with one meaning (CET, EET, JST, PST …). Asked, never picked:

* abbreviations with two meanings: CST (China +8 or US Central −6), IST (India, Israel,
  Ireland), BST (British Summer Time or Bangladesh);
* a standard-time abbreviation on a day its region keeps summer time (CET said for a July
  date: CET is UTC+1, but Central Europe is then on UTC+2, and people say CET for both) and
  the other way round; the check is against the zone the abbreviation belongs to.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo

__all__ = ["AMBIGUOUS", "NamedZone", "ZONE", "named_zone", "offset_on"]


@dataclass(frozen=True)
class NamedZone:
    """A zone the text names: ``tz`` to convert with (``None`` = the world's own), ``label`` as shown."""

    label: str
    tz: tzinfo | None
    fixed_offset_h: float | None = None  # an abbreviation's own offset, checked against ``region`` on the day
    region: str | None = None


def _fixed(hours: float) -> timezone:
    return timezone(timedelta(hours=hours))


_NAMES: dict[str, tuple[str | None, str]] = {
    # written name → IANA zone (None: the world's own zone), label
    "北京时间": ("Asia/Shanghai", "Beijing time"), "中国时间": ("Asia/Shanghai", "China time"),
    "东八区时间": ("Asia/Shanghai", "UTC+8"), "东八区": ("Asia/Shanghai", "UTC+8"),
    "东京时间": ("Asia/Tokyo", "Tokyo time"), "日本时间": ("Asia/Tokyo", "Japan time"),
    "莫斯科时间": ("Europe/Moscow", "Moscow time"), "伦敦时间": ("Europe/London", "London time"),
    "赫尔辛基时间": ("Europe/Helsinki", "Helsinki time"), "芬兰时间": ("Europe/Helsinki", "Finland time"),
    "格林尼治时间": ("UTC", "UTC"), "格林威治时间": ("UTC", "UTC"), "协调世界时": ("UTC", "UTC"), "世界时": ("UTC", "UTC"),
    "当地时间": (None, "local time"), "本地时间": (None, "local time"),
    "beijing time": ("Asia/Shanghai", "Beijing time"), "china time": ("Asia/Shanghai", "China time"),
    "helsinki time": ("Europe/Helsinki", "Helsinki time"), "finnish time": ("Europe/Helsinki", "Finnish time"),
    "london time": ("Europe/London", "London time"), "uk time": ("Europe/London", "UK time"),
    "tokyo time": ("Asia/Tokyo", "Tokyo time"), "moscow time": ("Europe/Moscow", "Moscow time"),
    "new york time": ("America/New_York", "New York time"), "berlin time": ("Europe/Berlin", "Berlin time"),
    "paris time": ("Europe/Paris", "Paris time"), "stockholm time": ("Europe/Stockholm", "Stockholm time"),
    "central european time": ("Europe/Berlin", "Central European time"),
    "eastern european time": ("Europe/Helsinki", "Eastern European time"),
    "local time": (None, "local time"), "utc": ("UTC", "UTC"), "gmt": ("UTC", "GMT"), "zulu": ("UTC", "UTC"),
}

_ABBREVIATIONS: dict[str, tuple[float, str]] = {
    # abbreviation → (its fixed offset in hours, the zone it is the standard or summer time of)
    "cet": (1, "Europe/Berlin"), "cest": (2, "Europe/Berlin"), "eet": (2, "Europe/Helsinki"),
    "eest": (3, "Europe/Helsinki"), "wet": (0, "Europe/Lisbon"), "msk": (3, "Europe/Moscow"),
    "jst": (9, "Asia/Tokyo"), "kst": (9, "Asia/Seoul"), "sgt": (8, "Asia/Singapore"), "hkt": (8, "Asia/Hong_Kong"),
    "est": (-5, "America/New_York"), "edt": (-4, "America/New_York"), "pst": (-8, "America/Los_Angeles"),
    "pdt": (-7, "America/Los_Angeles"), "aest": (10, "Australia/Sydney"), "aedt": (11, "Australia/Sydney"),
}

AMBIGUOUS: dict[str, str] = {
    "cst": "China Standard Time (UTC+8) or US Central Standard Time (UTC−6)",
    "ist": "India (UTC+5:30), Israel (UTC+2) or Irish Standard Time (UTC+1)",
    "bst": "British Summer Time (UTC+1) or Bangladesh Standard Time (UTC+6)",
}

_NAME_RX = "|".join(sorted((re.escape(k) for k in _NAMES if not k.isascii()), key=len, reverse=True))
_EN_NAME_RX = "|".join(sorted((re.escape(k) for k in _NAMES if k.isascii()), key=len, reverse=True))
_ABBR_RX = "|".join(sorted([*_ABBREVIATIONS, *AMBIGUOUS], key=len, reverse=True))

ZONE = re.compile(
    r"(?P<off>\b(?:utc|gmt)\s*(?P<sign>[+\-−])\s*(?P<h>\d{1,2})(?:\s*:?\s*(?P<m>[0-5]\d))?(?![\d:]))"
    r"|(?P<bare>(?<=\d)\s?(?P<bsign>\+)(?P<bh>[01]\d):?(?P<bm>[0-5]\d)(?!\d))"
    rf"|(?P<zh>(?:按|按照)?(?:{_NAME_RX}))"
    rf"|(?P<en>\b(?:in\s+)?(?:{_EN_NAME_RX})\b)"
    rf"|(?P<abbr>\b(?:{_ABBR_RX})\b)"
    r"|(?P<z>(?<=\d)z\b)",
    re.ASCII,
)
"""A zone or offset, on the normalised lower-case text. A bare offset ("+08:00") and "Z" count only right
after a clock, and a bare offset only with "+": "9:00-10:30" is a window, not UTC−10:30."""


def named_zone(m: re.Match[str]) -> NamedZone | str:
    """The zone a ``ZONE`` match names, or why it cannot be read (an ambiguous abbreviation)."""
    if m.group("off") or m.group("bare"):
        sign = m.group("sign") or m.group("bsign")
        hours = int(m.group("h") or m.group("bh"))
        minutes = int(m.group("m") or m.group("bm") or 0)
        if hours > 14 or minutes not in (0, 30, 45):
            return "this UTC offset does not exist"
        delta = timedelta(hours=hours, minutes=minutes) * (-1 if sign in "-−" else 1)
        tz = timezone(delta)
        return NamedZone(label=f"UTC{_offset_text(delta)}", tz=tz)
    if m.group("z"):
        return NamedZone(label="UTC", tz=timezone.utc)
    word = (m.group("zh") or m.group("en") or m.group("abbr") or "").strip()
    word = re.sub(r"^(?:按照?|in\s+)", "", word)
    if word in AMBIGUOUS:
        return f"{word.upper()} can mean {AMBIGUOUS[word]}"
    if word in _ABBREVIATIONS:
        hours, region = _ABBREVIATIONS[word]
        return NamedZone(label=word.upper(), tz=_fixed(hours), fixed_offset_h=hours, region=region)
    iana, label = _NAMES[word]
    return NamedZone(label=label, tz=None if iana is None else ZoneInfo(iana))


def _offset_text(delta: timedelta) -> str:
    total = int(delta.total_seconds() // 60)
    sign = "+" if total >= 0 else "-"
    hh, mm = divmod(abs(total), 60)
    return f"{sign}{hh:02d}:{mm:02d}"


def offset_on(zone: NamedZone, day: date, clock: str) -> str | None:
    """Why an abbreviation does not fit ``day`` (its region keeps the other offset then), else ``None``."""
    if zone.fixed_offset_h is None or zone.region is None:
        return None
    hh, mm = (int(x) for x in clock.split(":"))
    region = ZoneInfo(zone.region)
    actual = datetime.combine(day, time(hh, mm), tzinfo=region).utcoffset()
    said = timedelta(hours=zone.fixed_offset_h)
    if actual is None or actual == said:
        return None
    return (f"{zone.label} is UTC{_offset_text(said)}, but on {day.isoformat()} {zone.region} keeps "
            f"UTC{_offset_text(actual)}; which one is meant?")
