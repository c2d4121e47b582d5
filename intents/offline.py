"""The offline grammar: a deterministic Chinese + English request → ``Intent`` extractor.

Used when no language model is configured (the demo, CI) and as the baseline the
LLM is scored against. It is a set of small, ordered pattern tables rather than a
parser: requests are short, the vocabulary is closed, and a table is easy to
extend and to review. Same text in, same Intent out; no clock, no network.

What it understands (see ``tests/intents/corpus.jsonl`` for labelled examples):

* days: 今天/今晚/明天/明早/后天, 周一/星期一/礼拜一 (this week's, on or after
  today), 下周一 (next calendar week); today, tonight, tomorrow (and common
  typos: tomorow, tmrw), day after tomorrow, (on/this) Monday, next Monday;
* clock times: 上午9点, 九点半, 下午3点, 三点一刻, 15:30, 9am, 3:30 pm, at 9,
  9 o'clock. A bare hour 1–5 without 上午/下午/am/pm means the afternoon
  (13:00–17:00): nobody means a 3 a.m. inspection flight without saying so.
  A part of the day named elsewhere in the request (今天下午…3点, tonight at 9)
  decides am/pm;
* parts of the day: 上午/早上 (MORNING), 中午 (NOON), 下午 (AFTERNOON),
  晚上/今晚/tonight (EVENING), 夜里/at night (NIGHT); now/asap/马上/立刻/尽快;
* missions, by precedence: point targets (消防栓, 屋顶, 铁塔, 大门; hydrants,
  roofs, masts, gates) → POINT_INSPECTION, so "巡检消防栓" is an inspection of
  hydrants; then fire lanes (消防通道, fire lane) → FIRE_LANE_PATROL; then survey
  words (测绘, 航测, 扫一遍, survey, map the …) → AREA_SURVEY; then inspection
  words (检查, inspect, check) → POINT_INSPECTION; then patrol words (巡一遍,
  巡查, 巡检, patrol) → FIRE_LANE_PATROL; otherwise no mission, and the Intent
  asks a clarification question;
* sensors (热成像/红外/thermal/IR, 变焦/zoom, 激光雷达/lidar, 激光测距/rangefinder,
  可见光/RGB, 探照灯/spotlight, 喊话/speaker) and their negation (不要用热成像,
  热成像就不用了, no thermal, without IR, "no thermal or zoom") → excluded_sensors;
* times a ``TimeSpec`` cannot hold (两小时后, in 2 hours, 下周 without a day,
  周末, next week) are not guessed: they go to ``missing`` with a question;
* altitude (高度50米, 飞60米, 50米高, at 60 m, altitude 80 m), priority
  (紧急/urgent → URGENT, 尽快/优先 → HIGH, 不急/no rush → LOW).

Text that tries to give orders is data, not an instruction: a sentence from an
injection marker on ("ignore previous instructions", 忽略之前的指令, "system:",
"skip approval", 绕过审批, …) is dropped before parsing, and drone ids with a
launch word ("launch drone 7 now", 7号机立刻起飞) are cut out. Whatever remains
can only ever become an ``Intent``.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from intents.intent import (
    Intent,
    MissionType,
    PartOfDay,
    Priority,
    RelativeDay,
    Sensor,
    Target,
    TimeSpec,
)

__all__ = ["EXTRACTOR_NAME", "parse_offline", "sanitize"]

EXTRACTOR_NAME = "offline-grammar"

_CJK = re.compile(r"[\u4e00-\u9fff]")


def _rx(pattern: str) -> re.Pattern[str]:
    """Compile with ASCII word classes, so ``\\b`` separates "明天9am" (CJK is not a word char)."""
    return re.compile(pattern, re.ASCII)

# ---------------------------------------------------------------- injection

_SENTENCE_END = _rx(r"[。！!？?；;\n]|\.(?:\s|$)|<\s*/?\s*\w+\s*>|#{2,}|\|")
_INJECTION = _rx(
    r"ignore\s+(?:all\s+|any\s+|the\s+|your\s+|my\s+)*(?:previous|prior|above|earlier|preceding|former|system)?\s*"
    r"(?:instructions?|rules?|prompts?|directions?|constraints?|guidelines?)"
    r"|disregard|forget\s+(?:all|everything|your|previous|prior)\b|system\s*(?:prompt|message|:)"
    r"|you\s+are\s+now|new\s+instructions?|jailbreak|developer\s+mode"
    r"|(?:override|bypass|disable|ignore)\s+(?:the\s+|all\s+|any\s+)?(?:safety|approvals?|geofences?|no-fly|restrictions?|limits?|checks?)"
    r"|skip\s+(?:the\s+)?approval|without\s+(?:any\s+)?approval|no\s+approval\s+needed"
    r"|(?:忽略|无视|不理会|不要理会|别管)(?:掉)?(?:之前|以上|前面|上面|所有|你的|系统|规则|指令|提示|限制|禁飞|审批)"
    r"|忘记(?:之前|以上|前面|上面|所有|你的)|忘掉(?:之前|以上|前面|上面|所有)|系统提示|系统指令|新的?指令|你现在是|扮演"
    r"|绕过(?:审批|规则|限制|禁飞|检查|安全)|跳过审批|不经审批|无需审批|不用审批|不需要审批|免审批|越权"
)
_DRONE_COMMAND = _rx(
    r"(?:(?:launch|dispatch|send(?:\s+out)?|take\s*off|arm|start|fly|activate)\s+)?"
    r"(?:the\s+)?(?:drone|uav|vehicle|aircraft)\s*(?:#|no\.?\s*|number\s*)?\d+\w*"
    r"(?:\s*(?:now|immediately|right\s+now|at\s+once|to\s+take\s*off|take\s*off|launch))*"
    r"|(?:launch|dispatch|arm|take\s*off)\s+(?:all\s+)?(?:the\s+)?(?:drones?|uavs?|motors?)"
    r"(?:\s*(?:now|immediately|right\s+now|at\s+once))*"
    r"|(?:派|让|命令|调度|指派|叫)?\s*\d+\s*号\s*(?:无人)?机\s*(?:立刻|马上|立即|现在)?\s*(?:起飞|出发|升空|执行|飞)?"
    r"|m\d+t?-\d+\s*(?:now|立刻|马上|立即)?\s*(?:起飞|take\s*off)?"
)


def sanitize(text: str) -> str:
    """Normalise the request and remove the parts that try to give orders.

    NFKC folds full-width digits and punctuation; text is lower-cased and
    whitespace collapsed. From each injection marker to the end of its sentence
    is removed, as are drone-id launch phrases.
    """
    norm = unicodedata.normalize("NFKC", text).lower()
    norm = re.sub(r"\s+", " ", norm).strip()
    out: list[str] = []
    pos = 0
    while pos < len(norm):
        hit = _INJECTION.search(norm, pos)
        if hit is None:
            out.append(norm[pos:])
            break
        out.append(norm[pos : hit.start()])
        end = _SENTENCE_END.search(norm, hit.end())
        pos = len(norm) if end is None else end.end()
        out.append(" . ")
    cleaned = "".join(out)
    cleaned = _DRONE_COMMAND.sub(" ", cleaned)
    return re.sub(r"\s+", " ", cleaned).strip()


# ---------------------------------------------------------------- numbers

_CN_DIGIT = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_CN_NUM = r"[零〇一二两三四五六七八九十]{1,3}"
_EN_NUM = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
}


def _number(token: str) -> int | None:
    """An int from Arabic digits, Chinese numerals up to 99, or an English word one..twelve."""
    token = token.strip()
    if token.isdigit():
        return int(token)
    if token in _EN_NUM:
        return _EN_NUM[token]
    if not token or any(ch not in _CN_DIGIT and ch != "十" for ch in token):
        return None
    if "十" in token:
        tens, _, ones = token.partition("十")
        value = (_CN_DIGIT.get(tens, 0) if tens else 1) * 10
        return value + (_CN_DIGIT.get(ones, 0) if ones else 0)
    if len(token) == 1:
        return _CN_DIGIT[token]
    return None


# ---------------------------------------------------------------- days

_CN_WEEKDAY = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6, "七": 6}
_EN_WEEKDAY = [  # (index, full names and typos, abbreviation allowed only after next/on/this)
    (0, r"monday|mondya", r"mon"),
    (1, r"tuesday|tuseday|tues", r"tue"),
    (2, r"wednesday|wednsday|wensday|wendsday|wedensday", r"wed"),
    (3, r"thursday|thurs|thrusday|thursay", r"thu"),
    (4, r"friday|firday", r"fri"),
    (5, r"saturday|saterday", r"sat"),
    (6, r"sunday", r"sun"),
]
_WEEKDAY_NAMES = ("MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY", "SUNDAY")
_TOMORROW_EN = r"tomorrow|tomorow|tommorow|tommorrow|tomorro|tmrw|tmr|tmrow|2morrow|2moro"


def _weekday_day(which: str, index: int) -> RelativeDay:
    return RelativeDay[f"{which}_{_WEEKDAY_NAMES[index]}"]


def _find_day(text: str) -> RelativeDay | None:
    m = _rx(r"(?:下个?|下一个?)\s*(?:周|星期|礼拜|週)\s*([一二三四五六日天七])").search(text)
    if m:
        return _weekday_day("NEXT", _CN_WEEKDAY[m.group(1)])
    m = _rx(r"(?:这个?|本|这一?)?\s*(?:周|星期|礼拜|週)\s*([一二三四五六日天七])").search(text)
    if m:
        return _weekday_day("THIS", _CN_WEEKDAY[m.group(1)])
    for index, full, abbr in _EN_WEEKDAY:
        if _rx(rf"\bnext\s+(?:week\s+)?(?:{full}|{abbr})\b").search(text):
            return _weekday_day("NEXT", index)
    for index, full, abbr in _EN_WEEKDAY:
        if _rx(rf"\b(?:{full})\b|\b(?:on|this|coming)\s+(?:{abbr})\b").search(text):
            return _weekday_day("THIS", index)
    if _rx(r"(?<!大)后天|day after (?:" + _TOMORROW_EN + r")").search(text):
        return RelativeDay.DAY_AFTER_TOMORROW
    if _rx(r"明天|明日|明儿|明早|明晚|明晨|明个|\b(?:" + _TOMORROW_EN + r")\b").search(text):
        return RelativeDay.TOMORROW
    if _rx(r"今天|今日|今儿|今晚|今早|今晨|当天|\btoday\b|\btonight\b|\btonite\b").search(text):
        return RelativeDay.TODAY
    return None


# ---------------------------------------------------------------- parts of day and clock

_PART_PATTERNS: list[tuple[PartOfDay, str]] = [
    (PartOfDay.NIGHT, r"夜里|夜间|半夜|深夜|\bat night\b|\bovernight\b|\bmidnight\b"),
    (PartOfDay.EVENING, r"晚上|今晚|明晚|傍晚|晚间|\bevening\b|\btonight\b|\btonite\b"),
    (PartOfDay.AFTERNOON, r"下午|午后|\bafternoon\b|\bpm\b"),
    (PartOfDay.NOON, r"中午|正午|\bnoon\b|\bmidday\b|\blunch ?time\b"),
    (PartOfDay.MORNING, r"凌晨|清晨|早上|早晨|上午|今早|明早|一早|明晨|今晨|\bmorning\b"),
]
_PM_PARTS = {PartOfDay.AFTERNOON, PartOfDay.EVENING, PartOfDay.NIGHT}

_CN_QUAL = r"凌晨|清晨|早上|早晨|上午|今早|明早|明晨|一早|中午|正午|午后|下午|傍晚|晚上|今晚|明晚|夜里|夜间|半夜|深夜|早|晚"
_CN_CLOCK = _rx(
    rf"(?P<qual>{_CN_QUAL})?\s*(?P<h>\d{{1,2}}|{_CN_NUM})\s*(?:点|點|时|時)\s*(?:钟)?\s*"
    rf"(?P<m>半|一刻|三刻|\d{{1,2}}|{_CN_NUM})?\s*(?:分)?"
)
_EN_AMPM = _rx(r"(?<![\d.:])(?P<h>\d{1,2})(?::(?P<m>\d{2}))?\s*(?P<ampm>a\.?m\.?|p\.?m\.?)(?![a-z])")
_HHMM = _rx(r"(?<![\d.])(?P<h>[01]?\d|2[0-3])\s*:\s*(?P<m>[0-5]\d)(?!\d)")
_EN_AT = _rx(
    r"\b(?:at|around|about|by|@)\s+(?P<h>\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
    r"(?:\s*o'?clock)?\b(?!\s*(?:m\b|meters?|metres?|米|ft|feet|%|km|mps|m/s|knots?))"
)
_EN_OCLOCK = _rx(
    r"\b(?P<h>\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\s*o'?clock\b"
)


def _find_part(text: str) -> PartOfDay | None:
    for part, pattern in _PART_PATTERNS:
        if _rx(pattern).search(text):
            return part
    return None


def _part_of_qualifier(qual: str) -> PartOfDay:
    if qual in ("中午", "正午"):
        return PartOfDay.NOON
    if qual in ("午后", "下午"):
        return PartOfDay.AFTERNOON
    if qual in ("傍晚", "晚上", "今晚", "明晚", "晚"):
        return PartOfDay.EVENING
    if qual in ("夜里", "夜间", "半夜", "深夜"):
        return PartOfDay.NIGHT
    return PartOfDay.MORNING


def _to_24h(hour: int, part: PartOfDay | None) -> int:
    """Apply the part of the day; with none, a bare 1–5 is the afternoon."""
    if part in _PM_PARTS and hour < 12:
        return hour + 12
    if part is PartOfDay.NOON and 1 <= hour <= 5:
        return hour + 12
    if part is None and 1 <= hour <= 5:
        return hour + 12
    return hour


def _cn_minutes(token: str | None) -> int | None:
    if not token:
        return 0
    if token == "半":
        return 30
    if token == "一刻":
        return 15
    if token == "三刻":
        return 45
    return _number(token)


def _clock(hour: int | None, minute: int | None) -> str | None:
    if hour is None or minute is None or not (0 <= hour <= 23 and 0 <= minute <= 59):
        return None
    return f"{hour:02d}:{minute:02d}"


def _find_clock(text: str, part: PartOfDay | None) -> str | None:
    """The first clock time in ``text`` as "HH:MM", or None."""
    for m in _CN_CLOCK.finditer(text):
        qual, h_tok, m_tok = m.group("qual"), m.group("h"), m.group("m")
        hour = _number(h_tok)
        if hour is None:
            continue
        if not qual and not m_tok and h_tok in ("一", "两") and part is None:
            continue  # 快一点, 高一点: "a little", not one o'clock
        qual_part = _part_of_qualifier(qual) if qual else part
        clock = _clock(_to_24h(hour, qual_part), _cn_minutes(m_tok))
        if clock:
            return clock
    m = _EN_AMPM.search(text)
    if m:
        hour = int(m.group("h"))
        minute = int(m.group("m") or 0)
        if 1 <= hour <= 12:
            hour = hour % 12 + (12 if m.group("ampm").startswith("p") else 0)
            clock = _clock(hour, minute)
            if clock:
                return clock
    m = _HHMM.search(text)
    if m:
        hour, minute = int(m.group("h")), int(m.group("m"))
        if part in _PM_PARTS and hour < 12:
            hour += 12
        elif part is None and len(m.group("h")) == 1:
            hour = _to_24h(hour, None)  # "2:30" reads like "at 2"; "02:30" is a 24-hour time
        return _clock(hour, minute)
    for pattern in (_EN_AT, _EN_OCLOCK):
        m = pattern.search(text)
        if m:
            hour = _number(m.group("h"))
            if hour is not None and hour <= 23:
                return _clock(_to_24h(hour, part) if hour <= 12 else hour, 0)
    return None


_ASAP = _rx(
    r"\basap\b|a\.s\.a\.p|\bright (?:now|away)\b|\bimmediately\b|\bnow\b|\bat once\b|\bstraight away\b"
    r"|立刻|马上|立即|现在|赶紧|尽快|即刻|火速|赶快"
)


_VAGUE_TIME = [
    (
        _rx(r"\d+\s*(?:个)?\s*(?:小时|分钟|钟头)\s*(?:以?后|之后)|[一二两三四五六七八九十半]+\s*(?:个)?\s*(?:小时|分钟|钟头)\s*(?:以?后|之后)"
            r"|\bin\s+(?:\d+|an?|one|two|three|half an?)\s+(?:hours?|minutes?|mins?)\b"),
        "start time",
        ("请给出具体的开始时间（例如 下午3点）。", "Please give a clock time to start (e.g. 3 pm)."),
    ),
    (
        _rx(r"下个?(?:周|星期|礼拜)(?![一二三四五六日天七])|周末|\bnext week\b(?!\s+(?:mon|tue|wed|thu|fri|sat|sun))|\bweekend\b"),
        "day",
        ("请说明哪一天（例如 下周一）。", "Which day exactly (e.g. next Monday)?"),
    ),
]


def _vague_time(text: str, chinese: bool, *, has_clock: bool, has_day: bool) -> tuple[str, str] | None:
    """(missing item, question) when the request names a time the TimeSpec cannot express."""
    for pattern, missing, (question_zh, question_en) in _VAGUE_TIME:
        if (missing == "start time" and has_clock) or (missing == "day" and has_day):
            continue
        if pattern.search(text):
            return missing, question_zh if chinese else question_en
    return None


def _find_when(text: str) -> TimeSpec:
    day = _find_day(text)
    part = _find_part(text)
    clock = _find_clock(text, part)
    asap = bool(_ASAP.search(text)) and clock is None and part is None
    if asap and day not in (None, RelativeDay.TODAY):
        asap = False  # "明天尽快" names a day; the time within it is open
    return TimeSpec(day=day or RelativeDay.TODAY, clock=clock, part_of_day=part, asap=asap)


# ---------------------------------------------------------------- sensors

_SENSOR_PATTERNS: list[tuple[Sensor, str]] = [
    (Sensor.LASER_RANGEFINDER, r"激光测距|测距仪|测距|\brange ?finder\b|\blaser rang\w*"),
    (Sensor.LIDAR, r"激光雷达|激光扫描|激光(?!测距)|点云|\blidar\b|\bli-dar\b|\blaser scan\w*"),
    (
        Sensor.THERMAL_CAMERA,
        r"热成像|热成象|热像|热红外|红外|热感|热力图|\bthermal\w*|\bthermla\b|\bthemal\b|\btermal\b|\bthremal\b"
        r"|\binfra-?red\b|\bir\b|\bflir\b|\bheat camera\b",
    ),
    (Sensor.ZOOM_CAMERA, r"变焦|长焦|\bzoom\w*|\btelephoto\b"),
    (
        Sensor.RGB_CAMERA,
        r"可见光|普通相机|光学相机|彩色相机|\brgb\b|\bvisible(?:[- ]light)?\b|\bcolou?r camera\b|\bvisual camera\b",
    ),
    (Sensor.SPOTLIGHT, r"探照灯|照明灯|补光灯|\bspot ?light\b|\bsearch ?light\b"),
    (Sensor.SPEAKER, r"喊话|喇叭|扬声器|\b(?:loud)?speaker\b|\bmegaphone\b"),
]
_NEG_BEFORE = _rx(
    r"(?:不要|不用|别|甭|不需要|不需|无需|不必|不带|不开|别开|关掉|关闭|不使用|禁用|勿|除了|不准|不许)"
    r"\s*(?:再)?\s*(?:用|使用|开|带|上|开启|启用|要)?\s*(?:的)?\s*$"
    r"|\b(?:no|without|not|don'?t|dont|do not|never|skip|except|minus|w/o|exclude|excluding)\b"
    r"(?:\s+(?:use|using|need|needed|the|any|a|an|with|bring|take|turn on|want|for|camera|cameras|sensor|sensors))*\s*$"
)
_NEG_AFTER = _rx(
    r"^\s*(?:相机|摄像头|镜头|camera|cameras|sensor)?\s*(?:就|也|可以)?\s*"
    r"(?:不用了?|不要了?|不需要了?|不必了?|免了|关掉|别开|不开|\boff\b|\bnot needed\b|\bis not needed\b|\bisn'?t needed\b"
    r"|\bnot required\b|\bnot necessary\b)"
)
_CONJ = _rx(r"^\s*(?:和|与|跟|及|以及|、|,|，|/|or|and|nor|或|或者)\s*$")


def _find_sensors(text: str) -> tuple[list[Sensor], list[Sensor]]:
    """(required, excluded) sensors; a negation also covers the next sensor joined by and/or/和."""
    hits: list[tuple[int, int, Sensor]] = []
    taken: list[tuple[int, int]] = []
    for sensor, pattern in _SENSOR_PATTERNS:
        for m in _rx(pattern).finditer(text):
            if any(m.start() < end and start < m.end() for start, end in taken):
                continue  # 激光测距 is a rangefinder, not also a lidar
            hits.append((m.start(), m.end(), sensor))
            taken.append((m.start(), m.end()))
    hits.sort()
    required: set[Sensor] = set()
    excluded: set[Sensor] = set()
    prev_end, prev_negated = -1, False
    for start, end, sensor in hits:
        before = text[max(0, start - 24) : start]
        negated = bool(_NEG_BEFORE.search(before)) or bool(_NEG_AFTER.search(text[end : end + 24]))
        if not negated and prev_negated and _CONJ.match(text[prev_end:start]):
            negated = True
        (excluded if negated else required).add(sensor)
        prev_end, prev_negated = end, negated
    return sorted(required - excluded, key=lambda s: s.value), sorted(excluded, key=lambda s: s.value)


# ---------------------------------------------------------------- targets and mission

_TARGET_PATTERNS: list[tuple[Target, str]] = [
    (Target.HYDRANTS, r"消防栓|消火栓|消防拴|消防桩|\bhydr[ae]nts?\b|\bhydrnts?\b|\bfire plugs?\b"),
    (Target.ROOFS, r"屋顶|楼顶|房顶|天台|屋面|顶棚|\broof(?:s|tops?)?\b|\broves\b"),
    (Target.MASTS, r"铁塔|通信塔|信号塔|基站|桅杆|电塔|\bmasts?\b|\btowers?\b|\bantennas?\b"),
    (Target.GATES, r"大门|门口|闸口|出入口|\bgates?\b|\bentrances?\b"),
    (Target.ASSETS, r"变压器|光伏板|太阳能板|储罐|\btransformers?\b|\bsolar panels?\b|\btanks?\b"),
    (
        Target.FIRE_LANES,
        r"消防通道|消防车道|消防道|消防通路|消防通到|消防车通道|生命通道|疏散通道"
        r"|\bfire[- ]?(?:lanes?|lnaes?|roads?|access(?: roads?)?|routes?)\b|\bemergency lanes?\b|\bfirelanes?\b",
    ),
]
_POINT_TARGETS = {Target.HYDRANTS, Target.ROOFS, Target.MASTS, Target.GATES, Target.ASSETS}

_SURVEY = _rx(
    r"测绘|航测|侧绘|测一?下?图|建模|三维|正射|扫一遍|扫一下|扫描|扫一圈|全覆盖|航拍|地形图|测量一下"
    r"|\bsurvey\w*|\bsurvay\w*|\bservey\w*|\bmapping\b|\bmap (?:the|this|that|it|out|our|a)\b|\bortho\w*"
    r"|\bphotogrammetry\b|\b3d model\w*|\bscan(?:s|ning)?\b|\baerial (?:photos?|images?|imagery)\b"
    r"|\bcover (?:the )?(?:whole|entire)\b"
)
_INSPECT = _rx(
    r"检查|检测|排查|查验|\binspect\w*|\binspct\w*|\binsepct\w*|\bexamine\b|\blook at\b"
    r"|\bcheck\w*(?!\s+(?:the\s+|on\s+|if\s+|whether\s+)?(?:weather|forecast|status|battery|if|whether|wind))"
)
_PATROL = _rx(
    r"巡一遍|巡一下|巡一圈|巡逻|巡查|巡检|巡视|巡航|寻检|巡|转一圈|飞一圈|绕一圈|溜一圈"
    r"|\bpatrol\w*|\bpartol\w*|\bpatrl\w*|\bpatorl\w*|\bsweep the lanes?\b|\bdo a round\b|\bdo the rounds\b"
)


def _find_targets(text: str) -> set[Target]:
    return {target for target, pattern in _TARGET_PATTERNS if _rx(pattern).search(text)}


def _mission(text: str, targets: set[Target]) -> MissionType | None:
    if targets & _POINT_TARGETS:
        return MissionType.POINT_INSPECTION
    if Target.FIRE_LANES in targets:
        return MissionType.FIRE_LANE_PATROL
    if _SURVEY.search(text):
        return MissionType.AREA_SURVEY
    if _INSPECT.search(text):
        return MissionType.POINT_INSPECTION
    if _PATROL.search(text):
        return MissionType.FIRE_LANE_PATROL
    return None


# ---------------------------------------------------------------- altitude and priority

_ALTITUDE = [
    _rx(
        r"(?:飞行高度|高度|航高|离地|高)\s*(?:设为|设成|设置为|为|是|在|保持|定在|控制在|:)?\s*"
        r"(?P<v>\d{1,4}(?:\.\d+)?)\s*(?:米|m\b|公尺)"
    ),
    _rx(r"(?P<v>\d{1,4}(?:\.\d+)?)\s*(?:米|公尺|m)\s*(?:的)?\s*(?:高度|高空|高)"),
    _rx(r"飞\s*(?P<v>\d{1,4}(?:\.\d+)?)\s*米"),
    _rx(
        r"\b(?:at|altitude(?: of)?|height(?: of)?|alt\.?|agl)\s*(?P<v>\d{1,4}(?:\.\d+)?)\s*(?:m|meters?|metres?)\b"
    ),
    _rx(r"\b(?P<v>\d{1,4}(?:\.\d+)?)\s*(?:m|meters?|metres?)\s*(?:altitude|agl|high|height|up)\b"),
]
_PRIORITY = [
    (Priority.URGENT, r"紧急|加急|特急|十万火急|急件|\burgent\w*|\bemergency\b|\bcritical\b"),
    (Priority.LOW, r"不急|不着急|有空|闲时|低优先|\blow priority\b|\bwhenever\b|\bno rush\b|\bwhen convenient\b"),
    (Priority.HIGH, r"尽快|优先|抓紧|高优先|\bhigh priority\b|\basap\b|\bas soon as possible\b|\bimportant\b"),
]


def _find_altitude(text: str) -> tuple[float | None, str | None]:
    """(altitude in metres, or None; a question when the stated one is out of 10–120 m)."""
    for pattern in _ALTITUDE:
        m = pattern.search(text)
        if m:
            value = float(m.group("v"))
            if 10 <= value <= 120:
                return value, None
            return None, f"Altitude {value:g} m is outside 10–120 m AGL; which altitude should be flown?"
    return None, None


def _find_priority(text: str) -> Priority:
    for priority, pattern in _PRIORITY:
        if _rx(pattern).search(text):
            return priority
    return Priority.NORMAL


# ---------------------------------------------------------------- the Intent

_QUESTION_MISSION_ZH = "请说明任务：巡查消防通道、区域测绘，还是检查消防栓/屋顶等点位？"
_QUESTION_MISSION_EN = "What should the drone do: patrol the fire lanes, survey the area, or inspect points (hydrants, roofs)?"


@dataclass(frozen=True)
class _Parts:
    when: TimeSpec
    sensors: list[Sensor]
    excluded: list[Sensor]
    targets: set[Target]
    mission: MissionType | None


def _summary(parts: _Parts, altitude_m: float | None) -> str:
    """A one-line restatement built from the fields only (never echoes the user's text)."""
    when = parts.when
    bits = [parts.mission.value if parts.mission else "UNSPECIFIED_MISSION", when.day.value]
    if when.clock:
        bits.append(when.clock)
    elif when.part_of_day:
        bits.append(when.part_of_day.value)
    elif when.asap:
        bits.append("ASAP")
    if parts.sensors:
        bits.append("with " + "+".join(s.value for s in parts.sensors))
    if parts.excluded:
        bits.append("without " + "+".join(s.value for s in parts.excluded))
    if altitude_m is not None:
        bits.append(f"at {altitude_m:g} m")
    return " ".join(bits)[:120]


def parse_offline(text: str) -> Intent:
    """Extract an ``Intent`` from ``text`` with the deterministic grammar (no area: the caller sets it)."""
    clean = sanitize(text)
    targets = _find_targets(clean)
    mission = _mission(clean, targets)
    sensors, excluded = _find_sensors(clean)
    if mission is MissionType.AREA_SURVEY and not targets:
        targets = {Target.AREA}
    parts = _Parts(_find_when(clean), sensors, excluded, targets, mission)
    altitude_m, altitude_question = _find_altitude(clean)
    missing: list[str] = []
    questions: list[str] = []
    chinese = bool(_CJK.search(text))
    if mission is None:
        missing.append("mission type")
        questions.append(_QUESTION_MISSION_ZH if chinese else _QUESTION_MISSION_EN)
    vague = _vague_time(clean, chinese, has_clock=parts.when.clock is not None, has_day=parts.when.day is not RelativeDay.TODAY)
    if vague:
        missing.append(vague[0])
        questions.append(vague[1])
    if altitude_question:
        questions.append(altitude_question)
    return Intent(
        mission_type=mission,
        when=parts.when,
        sensors=sensors,
        excluded_sensors=excluded,
        altitude_m=altitude_m,
        targets=sorted(targets, key=lambda t: t.value),
        priority=_find_priority(clean),
        summary=_summary(parts, altitude_m),
        missing=missing,
        clarification_questions=questions,
    )
