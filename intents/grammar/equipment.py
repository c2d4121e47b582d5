"""The word in the place of equipment: what follows "with", "w/", "using", "bring", 用, 带, 配, 装 … with no list around it.

"patrol the fire lanes now w/ LR", "survey the quay asap w/ the scanner", 用LR巡查消防通道: the word there names what the
drone should carry. A sensor the reader knows is read by the sensor patterns; a certain slip of one ("with lidr") is
read as that sensor (``intents.grammar.sensor_slips``); anything else would be dropped without a word, so the reader
asks about it (``intents.grammar.reader``). The boundaries keep ordinary requests from asking:

- the item is the open words right after the marker, up to a claimed word (a sensor, a target, a mission word, a time),
  the end of the clause or a word that ends it ("then", "please"), three words at most;
- what is no equipment is no item: care, caution, the drone(s), 2 drones, a pilot, the team, priority, the wind,
  defaults, 无人机, 用心 … (``NOT_EQUIPMENT``); a number, a unit or a time word is left to the residual step, which asks
  with its own question ("with 2 drones");
- the Chinese markers only where they are a verb of carrying or using: not 不用, 使用时, 一带, 配合, 安装, 传送带 ….
"""

from __future__ import annotations

import re

import intents.grammar.vocabulary as V
from intents.grammar.lists import ListItem

__all__ = ["NOT_EQUIPMENT", "equipment_items"]

_MARKER = re.compile(
    r"(?:\b(?:with|using|use|bring(?:ing)?|carry(?:ing)?|equipped\s+with|fitted\s+with|mount(?:ing)?)\s+"
    r"|\bw/(?!o\b)\s*"
    r"|使用|采用|利用|(?<![不使试备可通专费作信应采运利享起无])用(?!时|途|于|来|的|户|品|处|法|力|意|上了|完|掉|过)"
    r"|(?<![一地皮送传磁绷鞋领])带(?:上|着)?(?!队|电|领|走|回|头|来|去|宽)"
    r"|(?<![分搭匹支标])配(?:上|备|个|一个)?(?!合|送|额|比|置|套|件|电|色|方)"
    r"|(?<![安包服假改伪武])装(?:上|备|个|一个|着)(?!卸|车|修|饰|载)|搭载|挂载|携带)",
)
_WORD = re.compile(r"[a-z0-9][a-z0-9\-.]*|[\u4e00-\u9fff]+")
_CLAUSE = re.compile(r"[，,。;；!！?？:：\n\x00(（)）]")
# What stands after "with"/用/带 but is no equipment: the manner, the aircraft, the people, the priority, the weather.
NOT_EQUIPMENT = re.compile(
    r"^(?:(?:extra|great|due|special|some|more|real|full|utmost|the\s+utmost|all|no|minimal|minimum|maximum|max|least)\s+)*"
    r"(?:care(?:fully)?|caution|attention|precautions?|priority|urgency|haste|hurry|speed|delay|rush|fuss|noise|disruption"
    r"|drones?|uavs?|aircraft|quad(?:copter)?s?|copters?|multirotors?|vehicles?|birds?|team|crew|pilots?|observers?|spotters?"
    r"|operators?|this|that|these|those|everything|all|permission|approval|confidence|notice|judge?ment|discretion"
    r"|photos?|pictures?|images?|imagery|shots?"
    r"|wind|weather|rain|sun|sunlight|daylight|light|defaults?|default\s+settings|standard\s+settings|settings|setup"
    r"|(?:the\s+)?usual(?:\s+(?:settings|setup|profile|config\w*))?|same\s+(?:settings|setup|profile)|respect|regard|regards"
    r"|thanks|pleasure|luck|a\s+view|an\s+eye|eyes)$"
    r"|^(?:me|us|you|him|her|them|it|everyone|someone|somebody|nobody)\b"  # "with me watching": a clause, no equipment
    r"|^(?:无人机|飞机|飞行器|多旋翼|心|点心|全力|最快|尽快)",  # a CJK item runs on to the next claimed word: its start
)
_ARTICLES = re.compile(r"^(?:the|a|an|our|my|your|their|its|some|any|one|that|this|those|these|new|usual|same|other)$")


def _item(view: str, start: int) -> tuple[int, int] | None:
    """The open words from ``start`` (after a marker) to a claimed word, the clause's end or a word that ends it."""
    end = start
    for m in _WORD.finditer(view, start):
        if _CLAUSE.search(view, end, m.start()):
            break
        if V.LIST_STOP.match(m.group(0)) or m.group(0) in ("and", "plus", "or"):
            break
        end = m.end()
        if len(_WORD.findall(view[start:end])) >= 3:
            break
    return (start, end) if end > start else None


def equipment_items(view: str, sensor_starts: frozenset[int] = frozenset()) -> list[ListItem]:
    """The item in the place of equipment after each marker in ``view`` (claimed characters are ``\\x00``), articles
    left out; what is no equipment (``NOT_EQUIPMENT``) is none, and neither is a word right before a sensor read (at
    one of ``sensor_starts``: "with hd zoom", 带上高清变焦): it says which of that sensor, the sensor is the item.
    Every item is ``sure``: asked when it is no sensor."""
    found: list[ListItem] = []
    for m in _MARKER.finditer(view):
        span = _item(view, m.end())
        if span is None:
            continue
        words = list(_WORD.finditer(view, span[0], span[1]))
        while words and _ARTICLES.match(words[0].group(0)):
            words.pop(0)
        if not words:
            continue
        s, e = words[0].start(), words[-1].end()
        if len(view[e:]) - len(view[e:].lstrip()) + e in sensor_starts:
            continue
        if NOT_EQUIPMENT.match(" ".join(view[s:e].split())):
            continue
        found.append(ListItem(s, e, sure=True))
    return found
