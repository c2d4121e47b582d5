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
lower case, common misspellings read as the word meant (``intents.text.typos``:
"teh" → "the", "w/" → "with"). Every character of the normalised text keeps the
span of the request it came from (``origin``), so a question quotes what the
operator wrote and its id names the offset there (``intents.questions``).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

from intents.text.patterns import LazyPattern
from intents.text.typos import repairs

__all__ = ["CLAIMED", "Scan", "normalise"]

CLAIMED = "\x00"

_TRAD = str.maketrans(
    "這週點時後間飛檢測繪紅熱門頂樓區燈機號晚鐘個兩當車禮裡開變雷達來請幫準備圖鏡頭無關閉為設離審規則們過邊"
    "現馬刻調派讓應急勢風險預報從將於與並對線處氣溫場館庫廠戶內東習讀寫畫錄視頻雜線斷續務範圍劃"
    "別儀聲話攝鐳見邏層電訊滅節還嗎麼沒確認題問條幾傳裝載帶換種類塊蓋較須謝煩給齊",
    "这周点时后间飞检测绘红热门顶楼区灯机号晚钟个两当车礼里开变雷达来请帮准备图镜头无关闭为设离审规则们过边"
    "现马刻调派让应急势风险预报从将于与并对线处气温场馆库厂户内东习读写画录视频杂线断续务范围划"
    "别仪声话摄镭见逻层电讯灭节还吗么没确认题问条几传装载带换种类块盖较须谢烦给齐",
)


def normalise(text: str) -> str:
    """NFKC, traditional → simplified for common characters, single spaces (case kept)."""
    norm = unicodedata.normalize("NFKC", text).translate(_TRAD)
    return re.sub(r"\s+", " ", norm).strip()


def _aligned(text: str) -> tuple[str, list[tuple[int, int]]]:
    """The normalised, lower-cased text and, per character, the span of ``text`` it came from.

    Each character is normalised on its own (a full-width comma is read as ","; "㎡" as
    "m2", both characters from the one written); runs of whitespace become one space.
    """
    read: list[str] = []
    origin: list[tuple[int, int]] = []
    for i, ch in enumerate(text):
        norm = unicodedata.normalize("NFKC", ch).translate(_TRAD).lower()
        if norm.isspace() or ch.isspace():
            if not read or read[-1] == " ":
                continue
            norm = " "
        for piece in norm:
            read.append(piece)
            origin.append((i, i + 1))
    while read and read[-1] == " ":
        read.pop()
        origin.pop()
    return "".join(read), origin


def _repaired(read: str, origin: list[tuple[int, int]]) -> tuple[str, list[tuple[int, int]], list[tuple[str, str]]]:
    """``read`` with each misspelling replaced by the word meant; the word meant keeps the typo's origin."""
    out: list[str] = []
    where: list[tuple[int, int]] = []
    done: list[tuple[str, str]] = []
    last = 0
    for start, end, meant in repairs(read):
        out.append(read[last:start])
        where.extend(origin[last:start])
        span = (origin[start][0], origin[end - 1][1])
        out.append(meant)
        where.extend([span] * len(meant))
        done.append((read[start:end], meant))
        last = end
    out.append(read[last:])
    where.extend(origin[last:])
    return "".join(out), where, done


class Scan:
    """Normalised request text with a claimed/open mark per character."""

    def __init__(self, text: str) -> None:
        self.written = text.replace(CLAIMED, " ")
        read, origin = _aligned(self.written)
        self.text, self.origin, self.repairs = _repaired(read, origin)
        self._open = [True] * len(self.text)

    def view(self) -> str:
        """The text with every claimed character replaced by ``CLAIMED``."""
        return "".join(ch if free else CLAIMED for ch, free in zip(self.text, self._open))

    def claim(self, start: int, end: int) -> None:
        for i in range(max(0, start), min(end, len(self._open))):
            self._open[i] = False

    def release(self, start: int, end: int) -> None:
        """Open ``[start, end)`` again: a word inside a span asked about that another step must still read."""
        for i in range(max(0, start), min(end, len(self._open))):
            self._open[i] = True

    def is_open(self, start: int, end: int) -> bool:
        return all(self._open[start:end])

    def finditer(self, pattern: re.Pattern[str] | LazyPattern) -> Iterator[re.Match[str]]:
        """Matches of ``pattern`` in the open text (a snapshot: claims made while iterating do not show)."""
        return pattern.finditer(self.view())

    def written_span(self, start: int, end: int) -> tuple[int, int]:
        """The span of the request as written that ``[start, end)`` of the normalised text came from."""
        if not self.origin or start >= end:
            at = self.origin[min(start, len(self.origin) - 1)][0] if self.origin else 0
            return at, at
        return self.origin[max(0, start)][0], self.origin[min(end, len(self.origin)) - 1][1]

    def quote(self, start: int, end: int) -> str:
        """The operator's spelling of ``[start, end)``, trimmed."""
        s, e = self.written_span(start, end)
        return re.sub(r"\s+", " ", self.written[s:e]).strip(" ,，。.;；:：!！?？、")

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
