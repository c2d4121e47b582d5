"""Numbers as operators write them: Arabic digits, Chinese numerals, English words.

``number("一百二十")`` is 120, ``number("两")`` 2, ``number("forty five")`` 45,
``number("1.5")`` 1.5. Anything else is ``None`` — the reader then asks rather
than guesses.
"""

from __future__ import annotations

import re

__all__ = ["CN_NUM", "EN_NUM", "NUM", "number"]

_CN_DIGIT = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_CN_UNIT = {"十": 10, "百": 100, "千": 1000}
_EN_SMALL = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
    "seventeen": 17, "eighteen": 18, "nineteen": 19,
}
_EN_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}

CN_NUM = r"[零〇一二两三四五六七八九十百千]{1,6}"
"""A Chinese numeral (regex)."""
EN_NUM = (
    r"(?:(?:" + "|".join(_EN_TENS) + r")(?:[- ](?:one|two|three|four|five|six|seven|eight|nine))?"
    r"|(?:" + "|".join(sorted(_EN_SMALL, key=len, reverse=True)) + r")(?: hundred)?)"
)
"""An English number word up to 999 (regex)."""
NUM = rf"(?:\d+(?:\.\d+)?|{CN_NUM}|{EN_NUM})"
"""Any number (regex)."""


def _cn(token: str) -> int | None:
    if not token or any(ch not in _CN_DIGIT and ch not in _CN_UNIT for ch in token):
        return None
    if all(ch in _CN_DIGIT for ch in token):
        if len(token) == 1:
            return _CN_DIGIT[token]
        return int("".join(str(_CN_DIGIT[ch]) for ch in token))  # 二〇二六
    total, digit = 0, None
    for ch in token:
        if ch in _CN_DIGIT:
            if digit is not None and _CN_DIGIT[ch] != 0:
                return None  # 三五十: not a number
            digit = _CN_DIGIT[ch]
        else:
            unit = _CN_UNIT[ch]
            total += (1 if digit is None else digit) * unit
            digit = None
    return total + (digit or 0)


def _en(token: str) -> int | None:
    words = re.split(r"[- ]+", token.strip())
    if words[-1] == "hundred" and len(words) == 2 and words[0] in _EN_SMALL:
        return _EN_SMALL[words[0]] * 100
    if len(words) == 1:
        return _EN_SMALL.get(words[0], _EN_TENS.get(words[0]))
    if len(words) == 2 and words[0] in _EN_TENS and words[1] in _EN_SMALL and 0 < _EN_SMALL[words[1]] < 10:
        return _EN_TENS[words[0]] + _EN_SMALL[words[1]]
    return None


def number(token: str) -> float | None:
    """The value of one number token, or ``None`` when it is not one this module reads exactly."""
    token = token.strip()
    if re.fullmatch(r"\d+(?:\.\d+)?", token):
        value = float(token)
        return int(value) if value.is_integer() and "." not in token else value
    return _cn(token) if re.fullmatch(CN_NUM, token) else _en(token)
