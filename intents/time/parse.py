"""Reading *when* from a request, zh and en, exactly or not at all.

Every time expression the reader understands is claimed in the ``Scan`` and
becomes part of a ``TimeReading``; one it recognises as a time but cannot pin
down (two different days, "about an hour", 25点, "at dawn") becomes a
``Problem`` that the Intent asks about. Conventions, documented because the
corpus labels and the LLM prompt rely on them:

* **Absolute dates**: 2026-12-06, 2026/12/6, 2026年12月6日, 12月5日/号,
  December 5 / Dec 5th / 5 Dec / the 5th of December, ``M/D`` (12/5 is
  5 December, month first as in 12月5日), 5号 / the 5th (day of this month).
  A date without a year is its next occurrence on or after today; a day of
  the month alone is this month's, or next month's once it has passed.
* **Relative days**: 今天/明天/后天/大后天, today/tomorrow/day after tomorrow,
  in N days / N天后, 周五 / on Friday (this week's, on or after today), 下周五 /
  next Friday (the following calendar week).
* **Offsets**: 两小时后, 一个半小时后, 半小时后, 30分钟后, in 30 minutes, in 2 h,
  in an hour and a half, 90 minutes from now: ``now`` plus the offset, to the
  minute (seconds dropped). An offset with another day or time is a question.
* **Clock times**: 上午9点, 九点半, 四点一刻, 四点三刻, 差五分五点 (4:55),
  15:30, 9am, 3:30 pm, half past nine, quarter past 3, quarter to five, ten to
  five, 0900, 1600 hrs, 21h, at 9, 9 o'clock, noon; a part of the day named
  elsewhere decides am/pm. ``H:MM`` and ``HH:MM`` are the 24-hour notation
  (9:30 is 09:30) except a one-digit hour 1–5 ("2:30").
* **Twelve-hour times** said without a part of the day ("at 3", "quarter to
  five", 两点, "2:30") have two readings. The request's window decides when it
  can: on today, a reading that has already passed at ``now`` is impossible, so
  "at 3" at 07:30 is 15:00 (the note says so). Otherwise the reader asks
  (``part_of_day``).
* **Time zones** named in the text (``intents.time.zones``): the day and clock
  are taken in that zone and converted to the world's (``now``'s) zone; the
  reading keeps the clock as said (``said_in``). A zone whose calendar day
  differs from the world's at ``now`` while the day is relative or unnamed, a
  zone without a clock time, two zones, or an ambiguous one are asked.
* **Parts of the day** (``timeresolve.PART_OF_DAY_CLOCK``): morning 09:00,
  noon 12:00, afternoon 15:00, evening/tonight 19:00, night 22:00.
* Questions, never guesses: weekend, next week without a day, midnight,
  dawn/dusk, "before lunch", "about 10", "later", 下下周, and a recurrence
  ("every Monday", 每天早上: ``intents.time.recurrence``).
"""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta

from intents.intent import PartOfDay, RelativeDay
from intents.text.scan import Scan
from intents.time.clocks import ClockReading, twelve_hours_later, with_part
from intents.time.dates import DateReading
from intents.time.reading import Clock, Problem, TimeReading
from intents.time.recurrence import recurrences
from intents.time.resolve import resolve_relative
from intents.time.words import WEEKDAYS, rx
from intents.time.zones import ZONE, NamedZone, named_zone, offset_on

__all__ = ["Problem", "TimeReading", "read_time", "resolve_relative"]


_PART_HOURS = {PartOfDay.MORNING: range(0, 13), PartOfDay.NOON: range(11, 15), PartOfDay.AFTERNOON: range(12, 22),
               PartOfDay.EVENING: range(17, 24), PartOfDay.NIGHT: range(20, 24)}
"""The hours each part of the day holds, for a clock the part made p.m. ("tonight at 11" → 23:00): "1:30 in the
morning", 上午12点 are said; 晚上3点, "tonight at 1", 上午15点 are not that part, nor is "tomorrow afternoon at 11:00"
(it was 23:00, read without a question)."""
_SAID_HOURS = {PartOfDay.MORNING: range(0, 13), PartOfDay.NOON: range(11, 15), PartOfDay.AFTERNOON: range(12, 24),
               PartOfDay.EVENING: range(15, 24), PartOfDay.NIGHT: range(18, 24)}
"""The hours a part of the day agrees with when the clock's own words fix its half of the day (``Clock.explicit``):
"this evening at 4pm", "this afternoon at 7pm", "tomorrow pm at 9:30 pm" are p.m. with a p.m. part, said loosely;
"this morning at 9pm", "this afternoon at 11am" and "this evening at 1pm" still disagree."""
_SMALL_HOURS = range(0, 6)
"""An explicit clock in these hours with "tonight", 今晚 or the night of today (夜里, 半夜) is the night after today:
"tonight at 2am", 今晚凌晨2点, 夜里2点 are tomorrow's 02:00."""


class _Reader(DateReading, ClockReading):
    """Reads one scan: the day (``intents.time.dates``), the clock (``intents.time.clocks``), then settles."""

    def __init__(self, scan: Scan, now: datetime | None) -> None:
        self.scan = scan
        self.now = now
        self.today = now.date() if now is not None else None
        self.out = TimeReading()
        self.days: list[tuple[int, int, RelativeDay | date]] = []
        self.clocks: list[Clock] = []
        self.parts: list[tuple[int, int, PartOfDay]] = []
        self.offset: tuple[int, int, datetime] | None = None
        self.zones: list[tuple[int, int, NamedZone]] = []

    def problem(self, start: int, end: int, why_en: str, why_zh: str, kind: str = "time",
                choices: tuple[tuple[str, str], ...] = ()) -> None:
        self.scan.claim(start, end)
        self.out.problems.append(Problem(kind, start, end, why_en, why_zh, choices))

    def zones_(self) -> None:
        """Claim every zone or offset first, so "+08:00" is never read as a clock and "UTC" never left open."""
        for m in self.scan.finditer(ZONE):
            zone = named_zone(m)
            if isinstance(zone, str):
                self.problem(m.start(), m.end(), f"{zone}; which time zone?", f"{zone}：是哪个时区？", "time_zone")
                continue
            self.scan.claim(m.start(), m.end())
            self.out.found = True
            self.zones.append((m.start(), m.end(), zone))

    # --------------------------------------------------------------- putting it together

    def settle(self) -> TimeReading:
        out = self.out
        days = self.days
        absolute = [d for _, _, d in days if isinstance(d, date)]
        if absolute:
            # "Friday 11 December": a weekday beside a date checks the date, it does not name another day.
            weekdays = [x for x in days if isinstance(x[2], RelativeDay) and x[2].value.startswith(("THIS_", "NEXT_"))]
            if weekdays and all(WEEKDAYS.index(w[2].value.split("_", 1)[1]) == absolute[0].weekday() for w in weekdays):
                days = [x for x in days if x not in weekdays]
        if self.today is not None:
            resolved = {(d if isinstance(d, date) else resolve_relative(d, self.today)) for _, _, d in days}
        else:
            resolved = {d for _, _, d in days}  # type: ignore[misc]
        if len(resolved) > 1:
            s, e = min(x[0] for x in days), max(x[1] for x in days)
            self.problem(s, e, "two different days are named; which one?", "提到了两个不同的日子，是哪一天？", "day")
        elif days:
            values = [d for _, _, d in days]
            out.day = next((d for d in values if isinstance(d, RelativeDay)), None)
            out.date = next((d for d in values if isinstance(d, date)), None)
        clocks = {(c.value, c.twelve_hour) for c in self.clocks}
        clock: Clock | None = None
        if len(clocks) > 1:
            s, e = min(c.start for c in self.clocks), max(c.end for c in self.clocks)
            self.problem(s, e, "two different times are named; which one?", "提到了两个不同的时间，是几点？")
        elif clocks:
            clock = self.clocks[0]
            out.clock = clock.value
        # a part of the day inside a span asked about ("上午9点到11点") is part of that question, not read on its own
        self.parts = [p for p in self.parts if not any(q.start <= p[0] and p[1] <= q.end for q in out.problems)]
        parts = {p for _, _, p in self.parts}
        if len(parts) > 1 and out.clock is None:
            s, e = min(x[0] for x in self.parts), max(x[1] for x in self.parts)
            self.problem(s, e, "which part of the day?", "是一天中的哪个时段？")
        elif len(parts) == 1:
            out.part = parts.pop()
        if self.offset is not None:
            s, e, at = self.offset
            if days or self.clocks or self.parts:
                self.problem(s, e, "an offset and another time are both given; which one?", "同时给了时间间隔和时间，按哪个？")
            else:
                out.date, out.clock, out.day = at.date(), at.strftime("%H:%M"), None
        if clock is not None and out.clock is not None and not self._in_part(clock):
            clock = None
        if self.zones:
            self._in_zone(clock)
        elif clock is not None and clock.twelve_hour:
            self._twelve_hour(clock)
        if out.clock is not None or out.part is not None or out.day not in (None, RelativeDay.TODAY) or (
            out.date is not None and out.date != self.today
        ):
            out.asap = False
        return out

    def _in_part(self, clock: Clock) -> bool:
        """Whether the clock time falls in the part of the day said with it; else asked, both quoted. 夜里2点, 今晚3点,
        "tonight at 1" were 14:00, 15:00, 13:00 — the afternoon, read from words that say the night — and 上午15点 was
        15:00; a part and a clock that disagree are one question, never one of them chosen."""
        out = self.out
        hours = (_SAID_HOURS if clock.explicit else _PART_HOURS).get(out.part) if out.part is not None else None
        if hours is None or out.clock is None or int(out.clock[:2]) in hours:
            return True
        if self._night_after(clock):
            return True
        start = min([clock.start] + [s for s, _, _ in self.parts])
        end = max([clock.end] + [e for _, e, _ in self.parts])
        why_en, why_zh = f"{out.clock} is not in the {out.part.value.lower()}; which time is meant?", "所说的时段和钟点对不上，具体是几点？"
        choices: tuple[tuple[str, str], ...] = ()
        if clock.explicit and out.part in (PartOfDay.EVENING, PartOfDay.NIGHT) and int(out.clock[:2]) in _SMALL_HOURS \
                and self.today is not None:  # the night of another day: that day's small hours, or the next day's?
            night_of = self._day(self.today)
            after = (night_of + timedelta(days=1)).isoformat()
            why_en = f"the night after {night_of.isoformat()}: {out.clock} on {after}, or on {night_of.isoformat()}?"
            why_zh = f"{night_of.isoformat()}的夜里：是{after}的{out.clock}，还是{night_of.isoformat()}的{out.clock}？"
            # answered with a day alone ("the 4th", 4号): that day and the clock said, not the day alone at 09:00
            choices = tuple((day.isoformat(), f"{day.isoformat()} {out.clock}")
                            for day in (night_of + timedelta(days=1), night_of))
            for day_start, day_end, _ in self.days:  # 明天夜里2点: the day is asked with it, so a day answered replaces it
                if day_end <= start and re.fullmatch(r"[\s,，]*", self.scan.text[day_end:start]):
                    start = day_start
        self.problem(start, end, why_en, why_zh, choices=choices)
        out.clock = None
        return False

    def _night_after(self, clock: Clock) -> bool:
        """"tonight at 2am", "2am tonight", 今晚凌晨2点, 今天夜里2点, 夜里2点, "overnight at 01:30": an explicit small-hours
        clock in the night of today (or of no day named) is the next calendar day's. Read, with a note; the night of
        another day ("tomorrow night at 2am": the 3rd or the 4th?) is still asked."""
        out = self.out
        if not (clock.explicit and out.part in (PartOfDay.EVENING, PartOfDay.NIGHT) and out.clock is not None
                and int(out.clock[:2]) in _SMALL_HOURS and self.today is not None and self.offset is None):
            return False
        if out.date not in (None, self.today) or out.day not in (None, RelativeDay.TODAY):
            return False
        in_the_night = self.now is not None and self.now.hour in _SMALL_HOURS  # said at 01:00: this night's 02:00
        night_of = self.today - timedelta(days=1) if in_the_night else self.today
        out.date, out.day = night_of + timedelta(days=1), None
        quote = self.scan.quote(clock.start, clock.end)
        out.notes.append(f'"{quote}": {out.clock} in the night after {night_of.isoformat()} is {out.date.isoformat()}')
        return True

    def _day(self, today: date) -> date:
        out = self.out
        return out.date if out.date is not None else resolve_relative(out.day or RelativeDay.TODAY, today)

    def _day_named(self) -> bool:
        """Whether the request names its day (a day word, a date, an offset): else the next 24 hours are its window."""
        return bool(self.days) or self.offset is not None

    def _twelve_hour(self, clock: Clock) -> None:
        """a.m. or p.m.: asked, unless the day is named as today and one reading has already passed (then the other,
        with a note). With no day named, a bare time is its next occurrence, and both readings occur within the next
        24 hours ("quarter to five" at 07:30: 16:45 today or 04:45 tomorrow): asked, saying which day each is."""
        out = self.out
        out.clock = None
        early, late = clock.value, twelve_hours_later(clock.value)
        if self.now is None or self.today is None:
            self._ask_twelve_hour(clock, (early, None), (late, None))
            return
        now_hm = self.now.strftime("%H:%M")
        if self._day_named():
            if self._day(self.today) == self.today and early <= now_hm < late:
                out.clock = late
                quote = self.scan.quote(clock.start, clock.end)
                out.notes.append(f'"{quote}": {early} has already passed today ({now_hm}), so {late}')
                return
            self._ask_twelve_hour(clock, (early, None), (late, None))
            return
        self._ask_twelve_hour(clock, (early, early <= now_hm), (late, late <= now_hm))

    def _ask_twelve_hour(self, clock: Clock, early: tuple[str, bool | None], late: tuple[str, bool | None]) -> None:
        """The part_of_day question; each reading with its day when no day is named (``True``: tomorrow), and the
        words an answer "am"/"pm" puts in place of the time (``intents.time.clocks.with_part``)."""
        quote = self.scan.quote(clock.start, clock.end)
        day_en = {None: "", False: " today", True: " tomorrow"}
        day_zh = {None: "", False: "今天", True: "明天"}
        (e, e_tomorrow), (l, l_tomorrow) = early, late
        choices = (("am", with_part(quote, pm=False, tomorrow=bool(e_tomorrow))),
                   ("pm", with_part(quote, pm=True, tomorrow=bool(l_tomorrow))))
        first, second = ((l, l_tomorrow), (e, e_tomorrow)) if e_tomorrow and not l_tomorrow else (early, late)
        self.problem(clock.start, clock.end, f"{first[0]}{day_en[first[1]]} or {second[0]}{day_en[second[1]]}?",
                     f"是{day_zh[first[1]]}{first[0]}还是{day_zh[second[1]]}{second[0]}？", "part_of_day", choices)

    def _in_zone(self, clock: Clock | None) -> None:
        """The day and clock were said in another zone: convert them to the world's (``now``'s) zone."""
        out = self.out
        s, e = min(z[0] for z in self.zones), max(z[1] for z in self.zones)
        zones = {z.label for _, _, z in self.zones}
        zone = self.zones[0][2]
        if len(zones) > 1:
            self.problem(s, e, "two different time zones are named; which one?", "提到了两个不同的时区，按哪个？", "time_zone")
            return
        if out.clock is None or clock is None or self.now is None or self.now.tzinfo is None:
            if out.clock is None and any(p.kind in ("time", "part_of_day") for p in out.problems):
                return  # the clock itself is asked about already
            self.problem(s, e, "a time zone is named, but no clock time to apply it to; when exactly?",
                         "给了时区，却没有具体时间，具体几点？", "time_zone")
            out.clock = None
            return
        if clock.twelve_hour:
            out.clock = None
            self._ask_twelve_hour(clock, (clock.value, None), (twelve_hours_later(clock.value), None))
            return
        world = self.now.tzinfo
        tz = zone.tz or world
        zone_today = self.now.astimezone(tz).date()
        if out.date is None and zone_today != self.now.date():
            self.problem(s, e, f"it is already {zone_today.isoformat()} in {zone.label} but {self.now.date().isoformat()} here; "
                         "which day?", f"{zone.label}现在是{zone_today.isoformat()}，这里是{self.now.date().isoformat()}，是哪一天？",
                         "time_zone")
            out.clock = None
            return
        day = self._day(zone_today)
        wrong_season = offset_on(zone, day, out.clock)
        if wrong_season is not None:
            self.problem(s, e, wrong_season, f"{wrong_season}（{zone.label}）", "time_zone")
            out.clock = None
            return
        said = out.clock
        hh, mm = (int(x) for x in said.split(":"))
        here = datetime.combine(day, time(hh, mm), tzinfo=tz).astimezone(world)
        out.date, out.day, out.clock = here.date(), None, here.strftime("%H:%M")
        out.said_in = f"{said} {zone.label}"
        if zone.tz is not None:
            out.notes.append(f"{day.isoformat()} {said} {zone.label} is {here.date().isoformat()} {out.clock} here")


_GREETING = rx(
    r"^\s*(?:good\s+(?:morning|afternoon|evening|day|night)\b[!,.]?|(?:morning|afternoon|evening)\s*!+"
    r"|(?:早上好|早安|上午好|中午好|下午好|晚上好|晚安)[!！,，。]?)"
)


def read_time(scan: Scan, now: datetime | None) -> TimeReading:
    """Claim and read every time expression in ``scan``; ``now`` is local (``None``: no absolute dates)."""
    greeting = _GREETING.match(scan.view())
    if greeting:  # "Morning! …" greets; it does not schedule
        scan.claim(greeting.start(), greeting.end())
    reader = _Reader(scan, now)
    reader.zones_()
    reader.out.problems.extend(recurrences(scan))  # before the day and part readers take "Monday" out of "every Monday"
    reader.offsets()
    reader.dates()
    reader.day_words()
    reader.part_words()
    reader.clock_times()
    reader.claim_parts()
    return reader.settle()
