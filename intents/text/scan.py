r"""The request as a sequence of characters, each either read (claimed) or still open.

The offline reader accounts for every span: each recogniser claims the spans it
understood, and whatever is left open at the end is looked at again for
anything that looks like a parameter. ``Scan`` is that bookkeeping: the
normalised text, a view in which claimed characters are blanked out (so a later
pattern cannot read a word twice, and "emergency" inside "emergency access
road" is never also a priority), and the original spelling for quoting a span
back to the operator. A claimed character reads as ``CLAIMED`` (NUL), which no
pattern matches and ``\s*`` does not skip, so "3点" and "一下" with a claimed
"检查" between them never join into "3点一(分)".

Normalisation: NFKC (full-width digits and punctuation), a few traditional
characters folded to simplified (這週五 reads as 这周五), whitespace collapsed,
lower case. Positions in the normalised text map one to one to ``shown``
(the same text before lower-casing) so questions quote what the operator wrote.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

__all__ = ["CLAIMED", "Scan", "normalise"]

CLAIMED = "\x00"

_TRAD = str.maketrans(
    "這週點時後間飛檢測繪紅熱門頂樓區燈機號晚鐘個兩當車禮裡開變雷達來請幫準備圖鏡頭無關閉為設離審規則們過邊"
    "現馬刻調派讓應急勢風險預報從將於與並對線處氣溫場館庫廠戶內東習讀寫畫錄視頻雜線斷續務範圍劃",
    "这周点时后间飞检测绘红热门顶楼区灯机号晚钟个两当车礼里开变雷达来请帮准备图镜头无关闭为设离审规则们过边"
    "现马刻调派让应急势风险预报从将于与并对线处气温场馆库厂户内东习读写画录视频杂线断续务范围划",
)


def normalise(text: str) -> str:
    """NFKC, traditional → simplified for common characters, single spaces (case kept)."""
    norm = unicodedata.normalize("NFKC", text).translate(_TRAD)
    return re.sub(r"\s+", " ", norm).strip()


def _aligned(text: str) -> tuple[str, str]:
    """(normalised text, the operator's spelling) of equal length, character for character.

    Each character is normalised on its own; where that keeps it one character
    long the original is kept for quoting (a full-width comma is read as "," but
    quoted as "，"); where it does not ("㎡" → "m2") the normalised form is used
    for both. Runs of whitespace become one space.
    """
    read: list[str] = []
    shown: list[str] = []
    for ch in text.strip():
        norm = unicodedata.normalize("NFKC", ch).translate(_TRAD)
        if norm.isspace() or ch.isspace():
            if read and read[-1] == " ":
                continue
            norm, ch = " ", " "
        if len(norm) == 1:
            read.append(norm)
            shown.append(ch)
        else:
            read.extend(norm)
            shown.extend(norm)
    return "".join(read).strip(), "".join(shown).strip()


class Scan:
    """Normalised request text with a claimed/open mark per character."""

    def __init__(self, text: str) -> None:
        read, self.shown = _aligned(text.replace(CLAIMED, " "))
        self.text = read.lower()
        if len(self.text) != len(self.shown):  # a character whose lower case is longer: quote the lower case
            self.shown = self.text
        self._open = [True] * len(self.text)

    def view(self) -> str:
        """The text with every claimed character replaced by ``CLAIMED``."""
        return "".join(ch if free else CLAIMED for ch, free in zip(self.text, self._open))

    def claim(self, start: int, end: int) -> None:
        for i in range(max(0, start), min(end, len(self._open))):
            self._open[i] = False

    def is_open(self, start: int, end: int) -> bool:
        return all(self._open[start:end])

    def finditer(self, pattern: re.Pattern[str]) -> Iterator[re.Match[str]]:
        """Matches of ``pattern`` in the open text (a snapshot: claims made while iterating do not show)."""
        return pattern.finditer(self.view())

    def quote(self, start: int, end: int) -> str:
        """The operator's spelling of ``[start, end)``, trimmed."""
        return self.shown[start:end].strip(" ,，。.;；:：!！?？、")

    def open_run(self, start: int, end: int) -> tuple[int, int]:
        """The maximal open stretch around ``[start, end)`` within its clause: what a question quotes."""
        stop = "，,。;；!！?？\n()（）"
        s = start
        while s > 0 and self._open[s - 1] and self.text[s - 1] not in stop:
            s -= 1
        e = end
        while e < len(self.text) and self._open[e] and self.text[e] not in stop:
            e += 1
        return s, e
