"""Reading the clock time and the part of the day, for ``intents.time.parse``.

The other half of the time reader (``intents.time.dates`` reads the day): clock
times in all their zh and en forms, the part of the day, "as soon as possible".
A time said without a part of the day whose hour is 1–11 ("at 3", "quarter to five",
两点) is a ``Clock`` with ``twelve_hour`` set: a.m. and p.m. are both possible, and
``intents.time.parse`` decides by the request's window or asks.
A mixin over the reader's state, so the two halves share one scan.
"""

from __future__ import annotations

import re

from intents.intent import PartOfDay, RelativeDay
from intents.text.numbers import number
from intents.time.reading import Clock, ReaderState
from intents.time.words import (
    AFTER_MOD,
    ASAP,
    BARE_HOUR,
    BEFORE_MOD,
    BETWEEN_AND,
    CN_CLOCK,
    CN_DIFF,
    EN_AMPM,
    EN_AT,
    EN_HOUR_PART,
    EN_IDIOM,
    EN_OCLOCK,
    H24,
    HHMM,
    MIDNIGHT,
    NOON,
    PART_WORDS,
    PM_PARTS,
    QUAL_PART,
    RANGE_AFTER,
    RANGE_BEFORE,
    rx,
)

__all__ = ["ClockReading", "to_24h", "clock_text", "cn_minutes", "twelve_hours_later", "with_part"]


_SMALL_HOURS_QUALS = ("凌晨", "夜里", "夜间", "半夜", "深夜")
"""Words before a clock that put an hour up to 5 in the small hours: 夜里2点 is 02:00 (it was 14:00, then asked)."""


def to_24h(hour: int, part: PartOfDay | None) -> int:
    """Apply the part of the day; with none the hour is kept (its morning reading: see ``Clock.twelve_hour``)."""
    if part in PM_PARTS and hour < 12:
        return hour + 12
    if part is PartOfDay.NOON and 1 <= hour <= 5:
        return hour + 12
    return hour


def _twelve(value: str | None, part: PartOfDay | None) -> bool:
    """A time said without any part of the day whose hour is 1–11: a.m. and p.m. are both possible."""
    return part is None and value is not None and 1 <= int(value[:2]) <= 11


_CJK = re.compile(r"[\u4e00-\u9fff]")


def twelve_hours_later(value: str) -> str:
    """"03:45" → "15:45": the afternoon reading of a time said without a part of the day."""
    return f"{int(value[:2]) + 12:02d}:{value[3:]}"


def with_part(said: str, *, pm: bool, tomorrow: bool = False) -> str:
    """A time as said, with the part of the day an answer gives it (and "tomorrow" when that reading is then):
    "at 3" → "at 3 pm", 两点 → 下午两点, "quarter to five" → "quarter to five am tomorrow", 三点 → 明天上午三点."""
    said = said.strip()
    if _CJK.search(said):
        return ("明天" if tomorrow else "") + ("下午" if pm else "上午") + said
    return f"{said} {'pm' if pm else 'am'}" + (" tomorrow" if tomorrow else "")


def clock_text(hour: int | float | None, minute: int | float | None) -> str | None:
    if hour is None or minute is None or hour != int(hour) or minute != int(minute):
        return None
    if not (0 <= hour <= 23 and 0 <= minute <= 59):
        return None
    return f"{int(hour):02d}:{int(minute):02d}"


def cn_minutes(token: str | None) -> float | None:
    if not token:
        return 0
    token = token.replace("分", "").strip()
    return {"半": 30, "一刻": 15, "三刻": 45}.get(token, number(token))


class ClockReading(ReaderState):
    """The clock-reading steps of the time reader."""

    def part_words(self) -> None:
        for part, pattern in PART_WORDS:
            for m in self.scan.finditer(rx(pattern)):
                self.parts.append((m.start(), m.end(), part))

    def _context_part(self) -> PartOfDay | None:
        kinds = {p for _, _, p in self.parts}
        return next(iter(kinds)) if len(kinds) == 1 else None

    def _add_clock(self, start: int, end: int, value: str | None, twelve_hour: bool = False,
                   explicit: bool = False) -> None:
        if not self.scan.is_open(start, end):
            return  # the other end of a window asked about whole already ("9点到11点": "11点")
        if value is None:
            self.problem(start, end, "this is not a clock time", "这不是一个有效的时间")
            return
        text = self.scan.text
        window = RANGE_AFTER.match(text, end) or (RANGE_BEFORE.search(text[max(0, start - 40) : start]) and None)
        opening = RANGE_BEFORE.search(text[max(0, start - 40) : start])
        after = window or AFTER_MOD.match(text, end)
        before = opening or BEFORE_MOD.search(text[max(0, start - 16) : start])
        if before is not None and after is None and before.group(0).lstrip().startswith("between"):
            after = BETWEEN_AND.match(text, end)  # "between 14:00 and 16:00": both ends
        if after or before:
            # "about 9", "9点左右", "before 10", "9点前", "9-11", "9点到11点": an estimate or a window, not a start time;
            # a window is quoted whole, both its ends.
            lead = text[max(0, start - (40 if opening else 16)) : start]
            s = start - (len(lead) - before.start()) if before else start
            e = after.end() if after else end
            if window or opening or (after and before and before.group(0).lstrip().startswith("between")):
                self.problem(s, e, "this is a window, not a start time; when should the flight start?",
                             "这是一个时间段，不是开始时间；几点开始？")
            else:
                self.problem(s, e, "is this an exact start time?", "这是确切的开始时间吗？")
            return
        self.scan.claim(start, end)
        self.out.found = True
        self.clocks.append(Clock(start, end, value, twelve_hour, explicit))

    def _tonight(self) -> bool:
        """Whether the request says tonight (tonight, 今晚, 今天晚上/夜里): today, with the evening or the night."""
        return any(day is RelativeDay.TODAY for _, _, day in self.days) and any(
            p in (PartOfDay.EVENING, PartOfDay.NIGHT) for _, _, p in self.parts)

    def _beside_a_day(self, start: int, end: int) -> bool:
        """Whether a day the reader read sits right before ``start`` or right after ``end`` (spaces, a comma, "@")."""
        text = self.scan.text
        return any(
            re.fullmatch(r"[\s,，@]*", text[day_end:start]) or re.fullmatch(r"[\s,，]*", text[end:day_start])
            for day_start, day_end, _ in self.days
            if day_end <= start or day_start >= end
        )

    def clock_times(self) -> None:
        part = self._context_part()
        for m in self.scan.finditer(CN_DIFF):
            qual = m.group("qual") or m.group("qual2")
            hour, minutes = number(m.group("h") or m.group("h2")), cn_minutes(m.group("m") or m.group("m2"))
            qpart = QUAL_PART.get(qual or "", PartOfDay.MORNING if qual else part)
            if hour is None or minutes is None or not 0 < minutes < 60:
                self._add_clock(m.start(), m.end(), None)
                continue
            h24 = to_24h(int(hour), qpart)
            value = clock_text((h24 - 1) % 24, 60 - minutes)
            self._add_clock(m.start(), m.end(), value, _twelve(value, qpart))
        for m in self.scan.finditer(CN_CLOCK):
            qual, h_tok, m_tok = m.group("qual"), m.group("h"), m.group("m")
            hour = number(h_tok)
            before = self.scan.text[max(0, m.start() - 1) : m.start()]
            if not qual and not m_tok and h_tok == "一" and (re.match(r"[快早晚高低慢多少好近远大小轻重点些]", before) or
                                                            self.scan.text[m.end() : m.end() + 1] in ("儿", "点")):
                continue  # 快一点, 高一点: "a little", not one o'clock (the residual check still sees it)
            qpart = QUAL_PART.get(qual or "", PartOfDay.MORNING if qual else part)
            # 凌晨2点, 夜里2点, 半夜3点, 深夜1点: the small hours, the words say so (夜里 is the night, past midnight too)
            small_hours = qual in _SMALL_HOURS_QUALS and hour is not None and hour <= 5
            if small_hours:
                qpart = PartOfDay.MORNING
            if hour == 12 and qual != "凌晨" and not m_tok and self._tonight() and (qual or part in PM_PARTS):
                self._add_clock(m.start(), m.end(), "00:00", explicit=True)  # 今晚12点: the midnight ending today
                continue
            if hour == 12 and qual in ("凌晨", "晚上", "晚", "夜里", "夜间", "半夜", "深夜"):
                self._add_clock(m.start(), m.end(), None)  # midnight: which day's? ask
                continue
            minute = cn_minutes(m_tok)
            value = None if hour is None else clock_text(to_24h(int(hour), qpart), minute)
            self._add_clock(m.start(), m.end(), value, _twelve(value, qpart),
                            small_hours or (hour is not None and 13 <= hour <= 23))
        for m in self.scan.finditer(EN_IDIOM):
            hour = number(m.group("h"))
            if m.group("half"):
                minutes: float | None = 30
            elif m.group("quarter"):
                minutes = 15
            else:
                minutes = number(m.group("n") or m.group("n3"))
            if re.search(r"\b(?:from|between)\s*$", self.scan.text[max(0, m.start() - 10) : m.start()]):
                self._add_clock(m.start(), m.end(), None)  # "from nine to eleven" is a window, not 10:51
                continue
            if hour is None or minutes is None or not 0 < minutes < 60 or not 1 <= hour <= 12:
                self._add_clock(m.start(), m.end(), None)
                continue
            ampm = m.group("ampm")
            h24 = int(hour) % 12 + (12 if ampm.startswith("p") else 0) if ampm else to_24h(int(hour), part)
            forward = m.group("dir") in ("past", "after")
            total = h24 * 60 + (minutes if forward else -minutes)
            value = clock_text((total // 60) % 24, total % 60)
            self._add_clock(m.start(), m.end(), value, not ampm and _twelve(value, part), bool(ampm))
        for m in self.scan.finditer(EN_AMPM):
            hour, minute = int(m.group("h")), int(m.group("m") or 0)
            ok = 1 <= hour <= 12
            hour = hour % 12 + (12 if m.group("ampm").startswith("p") else 0)
            self._add_clock(m.start(), m.end(), clock_text(hour, minute) if ok else None, explicit=True)
        for m in self.scan.finditer(HHMM):
            said = m.group("h") or m.group("h2")
            hour, minute = int(said), int(m.group("m") or m.group("m2"))
            explicit = hour >= 13 or said.startswith("0")  # 21:00, 02:00: the 24-hour notation, whatever part is said
            if part in PM_PARTS and hour < 12 and not explicit:
                hour += 12
            # "9:30" and "10:30" are the 24-hour notation of the world's zones; "2:30" is as often 14:30 as 02:30.
            one_digit_night = part is None and len(said) == 1 and 1 <= hour <= 5
            self._add_clock(m.start(), m.end(), clock_text(hour, minute), one_digit_night, explicit)
        text = self.scan.view()
        for m in H24.finditer(text):
            if m.group("h") is not None:
                context = self.scan.text[max(0, m.start() - 14) : m.start()]
                after = self.scan.text[m.end() : m.end() + 14]
                days = r"今天|明天|后天|今晚|明早|today|tomorrow|tonight|tmrw"
                cued = (
                    m.group("suf") is not None
                    or self._beside_a_day(m.start(), m.end())  # "fri 1400", "1400 周五"
                    or any(z[0] == m.end() for z in self.zones)  # "1400Z"
                    or m.group("h").startswith("0")
                    or re.search(r"(?:\bat|@|\bfrom|\bstart\w*|\btime)\s*$", context)
                    or re.search(days, context)
                    or re.match(rf"\s*(?:{days})", after)
                    or (re.search(r"(?:^|[，,;；])\s*$", context) and re.match(r"\s*(?:$|[，,。;；])", after))
                )
                if not cued:
                    continue
                self._add_clock(m.start(), m.end(), clock_text(int(m.group("h")), int(m.group("m"))), explicit=True)
            elif m.group("h2") is not None:
                self._add_clock(m.start(), m.end(), clock_text(int(m.group("h2")), int(m.group("m2") or 0)),
                                explicit=True)
            else:  # "930h", "9h30": the 24-hour notation, but a one-digit hour 1-5 as often means the afternoon
                hour, minute = int(m.group("h3") or m.group("h4")), int(m.group("m3") or m.group("m4"))
                value = clock_text(hour, minute)
                self._add_clock(m.start(), m.end(), value, part is None and 1 <= hour <= 5)
        view = self.scan.view()
        for _, day_end, _ in self.days:
            m = BARE_HOUR.match(view, day_end)
            if m:
                hour = int(m.group("h"))
                value = clock_text(to_24h(hour, part) if hour <= 12 else hour, 0)
                self._add_clock(m.start("h"), m.end("h"), value, _twelve(value, part), hour >= 13)
        for pattern in (EN_AT, EN_OCLOCK):
            for m in self.scan.finditer(pattern):
                hour = number(m.group("h"))
                if hour is None or not 1 <= hour <= 23:
                    continue  # "at 0", "at 40": left for the reader to ask about
                hour = int(hour)
                groups = m.groupdict()
                if not groups.get("ampm") and (hp := EN_HOUR_PART.match(self.scan.text, m.start("h"))) and hp.end() >= m.end():
                    continue  # "tonight at 1 in the morning": the hour is read with its own part below (it was 13:00)
                words = re.sub(r"^o'?[- ]?", "", groups.get("mw") or "").replace("-", " ").strip()
                minute = number(words) if words else 0
                ampm = groups.get("ampm")
                if ampm and 1 <= hour <= 12:
                    h24 = hour % 12 + (12 if ampm.startswith("p") else 0)
                elif ampm:
                    h24 = -1  # "at 15 pm": not a clock time
                else:
                    h24 = to_24h(hour, part) if hour <= 12 else hour
                value = clock_text(h24, minute)
                self._add_clock(m.start(), m.end(), value, not ampm and _twelve(value, part), bool(ampm) or hour >= 13)
        for m in EN_HOUR_PART.finditer(self.scan.text):  # the part may be a day word read already ("this afternoon")
            if not self.scan.is_open(m.start(), m.end()):
                continue
            hour = number(m.group("h"))
            said = m.group("part") or m.group("this") or ("night" if m.group("night") else "evening")
            if hour is None or not 1 <= hour <= 11:
                continue  # "12 at night", "12 in the morning": midnight or noon? left for the reader to ask
            part = {"morning": PartOfDay.MORNING, "afternoon": PartOfDay.AFTERNOON, "evening": PartOfDay.EVENING,
                    "night": PartOfDay.NIGHT}[said]
            small = re.match(r"\s+in\s+the\s+morning\b", self.scan.text[m.end() :]) if hour <= 5 else None
            if small:  # "tonight at 1 in the morning": the small hours, said by the clock's own words (was today's 01:00)
                self.scan.claim(m.end(), m.end() + small.end())
                self.parts = [p for p in self.parts if not m.end() <= p[0] < m.end() + small.end()]
            self._add_clock(m.start(), m.end(), clock_text(to_24h(int(hour), part), int(m.group("m") or 0)),
                            explicit=bool(small))
        if self._tonight():  # "tonight at midnight", "midnight tonight": the midnight ending today (alone: asked)
            for m in self.scan.finditer(MIDNIGHT):
                self._add_clock(m.start(), m.end(), "00:00", explicit=True)
        for m in self.scan.finditer(NOON):
            self.scan.claim(m.start(), m.end())
            self.out.found = True
            self.parts.append((m.start(), m.end(), PartOfDay.NOON))

    def claim_parts(self) -> None:
        for part, pattern in PART_WORDS:
            for m in self.scan.finditer(rx(pattern)):
                self.scan.claim(m.start(), m.end())
                self.out.found = True
                if not any(s == m.start() for s, _, _ in self.parts):
                    self.parts.append((m.start(), m.end(), part))
        for m in self.scan.finditer(ASAP):
            self.scan.claim(m.start(), m.end())
            self.out.asap = True
            self.out.found = True
