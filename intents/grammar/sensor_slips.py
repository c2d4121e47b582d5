"""An item of a list of sensors that no sensor pattern read: the one sensor it certainly means, or none.

The text-wide typo repair (``intents.text.typos``) guesses at nothing shorter than five
letters, because a short word one edit from a keyword is as often a real word ("room",
"liar"). Inside a list of sensors ("lidr and rgb cam", "thrml + zoom", 热成橡跟变焦) the
context says a sensor is meant, so the bound can be wider there: an item is read as a
sensor when it is a known abbreviation ("therm", "lrf") or within a small edit distance
of exactly one sensor word (one edit for short words, two for long ones; a swap counts as
one); one CJK character changed in a word of three or more (热成橡, 探照登). Two sensors
as near, a real word, or anything further is ``None``: the reader then asks about it
(``intents.grammar.reader``), never drops it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from intents.intent import Sensor
from intents.text.typos import distance

__all__ = ["ABBREVIATIONS", "sensor_meant"]

ABBREVIATIONS: dict[str, Sensor] = {
    "therm": Sensor.THERMAL_CAMERA, "thermo": Sensor.THERMAL_CAMERA, "thml": Sensor.THERMAL_CAMERA,
    "lrf": Sensor.LASER_RANGEFINDER, "rangefind": Sensor.LASER_RANGEFINDER, "vis": Sensor.RGB_CAMERA,
    "eo": Sensor.RGB_CAMERA, "spot": Sensor.SPOTLIGHT,
}
"""Shorthands operators write for a sensor (EO: electro-optical, the visible camera)."""

_EN_WORDS: dict[str, Sensor] = {
    "lidar": Sensor.LIDAR, "zoom": Sensor.ZOOM_CAMERA, "thermal": Sensor.THERMAL_CAMERA, "infrared": Sensor.THERMAL_CAMERA,
    "rgb": Sensor.RGB_CAMERA, "visible": Sensor.RGB_CAMERA, "rangefinder": Sensor.LASER_RANGEFINDER,
    "spotlight": Sensor.SPOTLIGHT, "searchlight": Sensor.SPOTLIGHT, "speaker": Sensor.SPEAKER,
    "megaphone": Sensor.SPEAKER, "telephoto": Sensor.ZOOM_CAMERA,
}
_ZH_WORDS: dict[str, Sensor] = {
    "激光雷达": Sensor.LIDAR, "热成像": Sensor.THERMAL_CAMERA, "可见光": Sensor.RGB_CAMERA, "测距仪": Sensor.LASER_RANGEFINDER,
    "探照灯": Sensor.SPOTLIGHT, "照明灯": Sensor.SPOTLIGHT, "喊话器": Sensor.SPEAKER, "扬声器": Sensor.SPEAKER,
    "变焦相机": Sensor.ZOOM_CAMERA, "长焦相机": Sensor.ZOOM_CAMERA, "红外相机": Sensor.THERMAL_CAMERA,
}
_REAL_WORDS = frozenset({
    "room", "rooms", "boom", "doom", "loom", "zoo", "zoos", "liar", "lid", "lids", "radar", "therms", "terminal",
    "visit", "vise", "spots", "sport", "spit", "spotted", "speakers", "eon", "thermos", "sneaker", "sneakers",
    "breaker", "breakers", "invisible", "visibly", "risible", "telephone", "telephones", "normal",
})
_SUFFIX_EN = re.compile(r"\s+(?:cameras?|cams?|sensors?|imag(?:ing|er|ery)|payloads?|scanners?|modules?)$")
_SUFFIX_ZH = re.compile(r"(?:相机|摄像头|摄像机|镜头|传感器|模块|设备)$")


def _bound(word: str) -> int:
    """Edits allowed from a sensor word: one for short words (a swap only for three letters), two from seven letters."""
    return 2 if len(word) >= 7 else 1


def _nearest(item: str, words: dict[str, Sensor], bound_of: Callable[[str], int]) -> Sensor | None:
    hits = {sensor for word, sensor in words.items() if distance(item, word, bound_of(word)) <= bound_of(word)}
    return hits.pop() if len(hits) == 1 else None


def sensor_meant(item: str) -> tuple[int, Sensor] | None:
    """Where in ``item`` the sensor it certainly means starts, and which ("lidr" → (0, LIDAR), "rbg cam" → RGB,
    不要热成橡 → (2, THERMAL): a CJK item is written without spaces, so a word before the slip stays outside it)."""
    item = item.lower()
    if re.fullmatch(r"[a-z][a-z \-]*", item):
        word = _SUFFIX_EN.sub("", item.strip()).replace("-", "")
        if " " in word or word in _REAL_WORDS or len(word) < 2:
            return None
        if word in ABBREVIATIONS:
            return 0, ABBREVIATIONS[word]
        if len(word) == 3:  # "rbg", "grb": a swap only; any other three-letter word is too near too much
            return (0, Sensor.RGB_CAMERA) if sorted(word) == sorted("rgb") and distance(word, "rgb", 1) == 1 else None
        meant = _nearest(word, _EN_WORDS, _bound) if len(word) >= 4 else None
        return None if meant is None else (0, meant)
    if re.fullmatch(r"[\u4e00-\u9fff]+", item):
        for at in range(len(item) - 2):
            tail = item[at:]
            for word in dict.fromkeys((tail, _SUFFIX_ZH.sub("", tail))):  # 变交相机 as written, then 热成橡 without 相机
                same_length = {w: s for w, s in _ZH_WORDS.items() if len(w) == len(word)}
                meant = _nearest(word, same_length, lambda _w: 1) if len(word) >= 3 else None
                if meant is not None:
                    return at, meant
    return None
