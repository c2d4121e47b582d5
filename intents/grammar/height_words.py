"""The words of heights: units, the ways an altitude is said, and what makes a length something else.

Kept apart from the rest of the vocabulary (``intents.grammar.vocabulary``) because a
height is read in three places (``intents.grammar.heights``) and each needs the same
words: the altitude patterns; the references a height can be said against (ground is
read, sea level converted when the ground's height is known, anything else — the top
of a mast, the treetops, the dock, 比塔顶高 — asked); and the context that makes a
length a distance, a radius, a spacing or the size of a thing ("15 m from the fence",
半径50米, "the 40 m high tower", 30米高的铁塔) rather than the height to fly.
All patterns run on the normalised, lower-cased text of ``intents.text.scan``.
"""

from __future__ import annotations

from intents.text.numbers import CN_NUM, EN_NUM
from intents.time.words import rx as _rx  # ASCII word classes, so \b separates "热成像50m"

__all__ = [
    "ALTITUDE",
    "ALTITUDE_BOUND_AFTER",
    "ALTITUDE_BOUND_BEFORE",
    "ALT_NUM",
    "BARE_LENGTH",
    "CLAUSE_END_AFTER",
    "GROUND",
    "GROUND_NOUN",
    "HEIGHT_LEAD_IN",
    "HEIGHT_REF_AFTER",
    "HEIGHT_REF_BEFORE",
    "KILOMETRES",
    "NOT_A_REFERENCE",
    "NOT_HEIGHT_AFTER",
    "NOT_HEIGHT_BEFORE",
    "OBJECT_SIZE_AFTER",
    "RELATIVE_BEFORE",
    "SEA_LEVEL",
    "UNIT",
    "VAGUE_ALTITUDE",
]


_LENGTH_UNIT = r"公里|千米|米|公尺|英尺|呎|km\b|kilomet(?:er|re)s?\b|m\b|meters?\b|metres?\b|ft\b|feet\b|foot\b"
UNIT = (
    rf"(?P<u>{_LENGTH_UNIT}|')"
    r"(?!\s*(?:/|per\b|每|一秒|a second|an? (?:second|minute|hour)|ps\b|ph\b))"  # 15 m/s, 5 米每秒: a speed
)
ALT_NUM = rf"(?P<v>\d{{1,5}}(?:\.\d+)?|{CN_NUM}|{EN_NUM})"
_LENGTH = ALT_NUM + r"\s*" + UNIT
ALTITUDE = [
    _rx(
        r"(?:飞行高度|高度|航高|离地|对地|高)\s*(?:设为|设成|设置为|为|是|在|保持|保持在|定在|控制在|:|=)?\s*(?:约|大约)?\s*"
        + _LENGTH
    ),
    _rx(_LENGTH + r"\s*(?:的)?\s*(?:高度|高空|高|航高)"),
    _rx(r"(?:飞|在)\s*" + _LENGTH),
    # "@ 0.06km": "@" is "at" (it is no word character, so it cannot follow \b)
    _rx(
        r"(?:\b(?:at|altitude(?: of)?|height(?: of)?|alt\.?|agl|fly(?:ing)? at|flight level|keep(?: it)? at|stay at|hold)|@)"
        r"\s*(?:[:=]\s*)?" + _LENGTH + r"(?:\s*(?:altitude|agl|above ground(?: level)?|high|height|alt)\b)?"
    ),
    _rx(_LENGTH + r"\s*(?:altitude|agl|above ground(?: level)?|high|height|up|alt)\b"),
    # a length standing alone as a clause ("航测，60米，热成像"): in a flight request that is the height
    _rx(r"(?:^|(?<=[，,;；、]))\s*" + _LENGTH + r"\s*(?=$|[，,。;；、])"),
]
ALTITUDE_BOUND_AFTER = _rx(
    r"\s*(?:以下|以上|以内|之内|之下|之上|左右|上下|or (?:less|more|lower|higher|below|above)|max\b|maximum\b|min\b|minimum\b"
    r"|tops\b|at most\b|at least\b)"
)
ALTITUDE_BOUND_BEFORE = _rx(
    r"(?:不超过|不低于|不高于|最高|最低|至少|最多|大约|约|\b(?:below|under|above|over|max(?:imum)?|min(?:imum)?|at most|at least|up to|no higher than"
    r"|no lower than|not above|not below|not more than|not less than|less than|more than|about|around|approx\.?|approximately|roughly)(?:\s+at)?)\s*$"
)
KILOMETRES = ("公里", "千米", "km", "kilometer", "kilometers", "kilometre", "kilometres")

VAGUE_ALTITUDE = _rx(
    r"飞?(?:高|低)一?(?:点|些)|飞低|飞高|低空|高空|\b(?:fly\s+|stay\s+|go\s+)?(?:higher|lower)\b|\b(?:low|high)(?:er)?\s+(?:altitude|level|pass)\b"
    r"|\bas (?:low|high) as\b"
)

# ----------------------------------------------------------------------------- what a height is said against
# Ground is read; sea level is converted when the caller knows the ground's height above sea level
# (``Limits.ground_amsl_m``); anything else — roofs, a mast's top, the treetops, the dock, the take-off point,
# 比塔顶高, 高出楼顶 — cannot be converted from what the reader knows, so it is asked (``height_reference``).
_REF_GROUND = r"(?:above\s+(?:the\s+)?ground(?:\s+level)?|agl|a\.g\.l\.?|离地|对地|距地面?|相对地面)"
_REF_SEA = r"(?:above\s+(?:mean\s+)?sea[- ]level|amsl|a\.m\.s\.l\.?|msl|asl|a\.s\.l\.?|海拔|绝对高度)"
# a short noun phrase after "above"/"over"/"higher than": up to five words, stopping at a word that starts
# something else (a time, a sensor, the next clause), so a question quotes "15 m above the top of the mast" only
_NP_STOP = (
    r"(?:at|on|in|with|and|or|then|for|by|to|from|using|use|before|after|until|during|tomorrow|today|tonight|this|that"
    r"|next|asap|now|please|pls|around|about|when|while|if|but|so|thermal|zoom|rgb|lidar|starting|start)"
)
_NP = (
    rf"(?:(?:the|a|an|its|their|our|all|each|every|this|that|those|these)\s+)?[a-z][a-z'\-]*"
    rf"(?:\s+(?!{_NP_STOP}\b)[a-z][a-z'\-]*){{0,4}}"
)
_ZH_NP = r"[^，,。;；!！?？\s\d\x00]{1,12}?"
_REF_OTHER_EN = rf"(?:above|over|higher\s+than|taller\s+than|on\s+top\s+of|atop|clear\s+of|up\s+from|relative\s+to)\s+{_NP}"
_REF_OTHER_ZH = (
    rf"比{_ZH_NP}(?:还要?|再)?高(?:出)?|高出(?:{_ZH_NP})?|高于{_ZH_NP}|超出{_ZH_NP}|(?:离(?!地)|(?<![间相])距(?!离?地)){_ZH_NP}(?:还要?|再)?高?"
    rf"|相对(?!于?地)(?:于)?{_ZH_NP}|在?[^，,。;；!！?？\s\d\x00]{{1,4}}?(?:顶部|顶端|顶上)?(?:以上|上方|之上|上空|上面)(?:约)?"
)
_REF_OTHER_BEFORE = (
    r"(?:above\s+(?:the\s+|our\s+|all\s+)?(?:roofs?|rooftops?|roof\s*(?:level|line|tops?)|roofline|buildings?|tallest\s+\w+|highest\s+\w+"
    r"|structures?|trees?|tree\s*tops?|canopy|obstacles?|take-?off(?:\s+point)?|launch(?:\s+point)?|home(?:\s+point)?|the\s+dock|dock|pad"
    r"|the\s+station|starting\s+point)|over\s+(?:the\s+)?(?:roofs?|rooftops?|buildings?|trees?|tree\s*tops?|canopy))"
)
HEIGHT_REF_AFTER = _rx(_LENGTH + r"\s*(?P<ref>" + _REF_SEA + "|" + _REF_GROUND + "|" + _REF_OTHER_EN + ")")
_REF_GROUND_BEFORE = r"(?:above\s+(?:the\s+)?ground(?:\s+level)?|离地面?|对地|距离?地面?|相对(?:于)?地面?|地面(?:以上|上方|之上))"
HEIGHT_REF_BEFORE = _rx(
    r"(?P<ref>" + _REF_SEA + "|" + _REF_GROUND_BEFORE + "|" + _REF_OTHER_BEFORE + "|" + _REF_OTHER_ZH + r")\s*(?:高度|的高度)?\s*(?:为|是|在|:)?\s*(?:约|大约)?\s*"
    + _LENGTH
)
# The words that say a height before a height said against something ("fly at altitude 120 m AMSL", 高度海拔120米 is
# read by HEIGHT_REF_BEFORE): part of the height, read or quoted with it, never left for the residual step to ask about.
HEIGHT_LEAD_IN = _rx(
    r"(?:(?:\b(?:fly(?:ing)?|stay(?:ing)?|keep(?:ing)?(?:\s+it)?|hold(?:ing)?)\s+)?(?:\bat\s+|@\s*)?(?:an?\s+|the\s+)?"
    r"(?:flight\s+|flying\s+)?\b(?:altitude|height|alt\.?|elevation)\s*(?:of\s+|:\s*|=\s*|is\s+)?"
    r"|(?:飞行高度|高度|航高)\s*(?:设为|设成|为|是|在|保持在?|定在|:|=)?\s*)$"
)
SEA_LEVEL = _rx(_REF_SEA)
GROUND = _rx(_REF_GROUND)
# said after "above"/"over", these are the ground itself (or the time "over the weekend", which is no height at all)
GROUND_NOUN = _rx(
    r"(?:above|over|up\s+from|relative\s+to)\s+(?:the\s+)?(?:ground|terrain|surface|grade|ground\s+level|area|site|yard|lot|field|parcel|land"
    r"|car\s*park|parking\s+lot|selection|selected\s+area)(?![\w'])(?:\s+level)?$"
    r"|(?:地面|地表|地)(?:以上|上方|之上|上空|上面)|[离距]地|相对(?:于)?地"
)
NOT_A_REFERENCE = _rx(
    r"over\s+(?:the\s+)?(?:weekend|next|coming|following|course|period|night|day|days|week|hours?|whole\s+(?:day|night|week))\b"
)

# ----------------------------------------------------------------------------- a length that is not the height to fly
# After a length: a distance, a spacing, a size ("15 m from the fence", "10 m apart", 50米外, 100米长).
NOT_HEIGHT_AFTER = _rx(
    r"\s*(?:(?:from|away|off|apart|wide|long|deep|across|radius|diameter|beyond|past|short\s+of|ahead|behind|outside|inside|within"
    r"|of(?!\s+(?:altitude|height|elevation)\b)|north\w*|south\w*|east\w*|west\w*|spacing|intervals?|each|per|between|buffer|offset"
    r"|distance|lower|higher|taller|below|under|beneath|more|less|further|farther|closer|nearer|left|right|down|tall|in\s+(?:radius"
    r"|diameter|length|width|size))\b"
    r"|外|以外|之外|开外|内|以内|之内|远|处|长|宽|深|半径|范围|间隔|间距|距离|多|的(?!\s*(?:高度|航高|高空|飞行高度)))"
)
# Before a length: its relation to something else (比…高, 离塔顶, "within", "radius", "every").
NOT_HEIGHT_BEFORE = _rx(
    r"(?:\b(?:from|within|radius(?:\s+of)?|diameter(?:\s+of)?|every|spacing(?:\s+of)?|buffer(?:\s+of)?|offset(?:\s+of)?|distance(?:\s+of)?"
    r"|width(?:\s+of)?|length(?:\s+of)?|wide|long|deep|apart|by|than|first|last|next|another|extra|more|further|farther|additional|each"
    r"|to|until|till|after|for|in|the|a|an|this|that|these|those|its|their)"
    r"|半径|方圆|间隔|间距|每隔|每|相距|距离|宽|长|深|宽度|长度|深度)\s*(?:为|是|约|:)?\s*$"
)
RELATIVE_BEFORE = _rx(
    r"(?:比(?!较|如)|高出|高于|超出|离(?!地)|(?<![间相])距(?!地|离地)|(?<!间)距离(?!地)|相对(?!地)|相距)[^，,。;；!！?？]{0,12}$|\b(?:than|relative\s+to)\b[^,;.!?]{0,30}$"
)
# "the 40 m high tower", 30米高的铁塔: the size of a thing, not the height to fly
OBJECT_SIZE_AFTER = _rx(
    r"(?<=high)\s+(?!(?:with|at|on|in|and|then|for|tomorrow|today|tonight|please|pls|over|above|across|along|using|from|to|this"
    r"|next|asap|now|altitude|agl|up|when|while|if)\b)(?=[a-z])|(?<=tall)\b|(?<=高)\s*的(?!\s*(?:高度|航高|高空))"
)
# A length standing on its own at the end of a clause ("…with thermal, 40 m.", "热成象 50m"): the height to fly,
# unless the words before it make it something else (``NOT_HEIGHT_BEFORE``) or another height is given too.
BARE_LENGTH = _rx(
    r"(?<![\w.])" + ALT_NUM + rf"\s*(?P<u>{_LENGTH_UNIT})(?!\s*(?:/|per\b|每))"  # no "'": alone, 40' is no height
)
CLAUSE_END_AFTER = _rx(r"[\s.]*(?:(?:(?:please|pls|plz|thanks|thank you|thx|ok)\b|请|谢谢)[\s.!]*)?(?:$|[，,。;；!！?？、\n])")
