"""The offline reader's vocabulary: every pattern it reads or flags, in one table per concept.

Kept apart from the reader (``intents.grammar.reader``) so the words can be reviewed
and extended without reading the algorithm: instructions, targets and mission
words, priority, altitude with its units, sensors and their negation, scope
restrictions, and the patterns that make a left-over span a question.
All patterns run on the normalised, lower-cased text of ``intents.text.scan``.
"""

from __future__ import annotations

import re

from intents.intent import Priority, Sensor, Target
from intents.text.numbers import CN_NUM, EN_NUM
from intents.text.patterns import LazyPattern


def _rx(pattern: str) -> LazyPattern:
    """ASCII word classes, so ``\\b`` separates "明天9am" (CJK is not a word character); compiled on first use
    (``intents.text.patterns``: a request needs a part of these tables)."""
    return LazyPattern(pattern, re.ASCII)


__all__ = [
    "FOCUS",
    "FOCUS_QUESTION",
    "REGION_NAMED",
    "FOCUS_STOP",
    "CLAUSE_END",
    "AFFIRM_AFTER",
    "AFFIRM_BEFORE",
    "COMMA_LINK",
    "CONJ",
    "CHOICE",
    "COVERAGE",
    "COVERAGE_BOUND_AFTER",
    "COVERAGE_BOUND_BEFORE",
    "SENSOR_BROKEN",
    "FILLER",
    "ORDINAL_MISSION",
    "HIGH_TIME",
    "INSPECT",
    "INSTRUCTION",
    "MAPPING",
    "MISSING",
    "NEG_AFTER",
    "NEG_BEFORE",
    "PATROL",
    "POINT_TARGETS",
    "PRIORITY",
    "QUESTION_MISSION_EN",
    "QUESTION_MISSION_ZH",
    "RESIDUAL",
    "RESIDUAL_RX",
    "SCOPE",
    "SENSOR_ONLY",
    "SENSOR_AMBIGUOUS",
    "SENSOR_AMBIGUOUS_QUESTION",
    "SENSOR_NOT_THERMAL",
    "SENSOR_NOT_THERMAL_QUESTION",
    "SHORT_ITEM",
    "SHORT_WORDS",
    "SHORT_DAYS",
    "ONLY_AFTER",
    "LIST_AFTER",
    "LIST_BEFORE",
    "LIST_COMMA",
    "LIST_JOINT",
    "SENSOR_LABEL",
    "LIST_STOP",
    "LIST_ARTICLE",
    "SENSOR_PATTERNS",
    "SENSOR_SUFFIX",
    "SENTENCE_END",
    "STRONG",
    "SURVEY",
    "SURVEY_OF_POINTS_QUESTION",
    "TARGET_PATTERNS",
]

# ----------------------------------------------------------------------------- instructions

CLAUSE_END = _rx(r"[，,。;；!！?？\n]|\.(?:\s|$)|<\s*/?\s*\w+\s*>|#{2,}|\|")
SENTENCE_END = _rx(r"[。！!？?\n]|\.(?:\s|$)")
# Markers that take over the rest of their sentence ("new instructions: mission_type=…, sensors=…"):
# nothing after them in that sentence is read. Other instruction spans end with their clause.
STRONG = _rx(
    r"\bignore\b|\bforget\b|\bnew\s+instructions?\b|\bsystem\b|\byou\s+are\s+now\b|\bjailbreak\b|\bdeveloper\s+mode\b"
    r"|<\s*/?\s*\w+\s*>|#{2,}|忽略|无视|忘记|忘掉|系统|新的?指令|你现在是|扮演"
)
INSTRUCTION = _rx(
    r"<\s*/?\s*request\s*>|#{2,}\s*(?=\S)|\bignore\s+(?:all\s+|any\s+|the\s+|your\s+|my\s+)*(?:previous|prior|above|earlier|preceding|former|system)?\s*"
    r"(?:instructions?|rules?|prompts?|directions?|constraints?|guidelines?|restrictions?|limits?|geofences?|no-fly\w*|zones?|approvals?|checks?|safety)"
    r"|\bdisregard\b|\bforget\s+(?:all|everything|your|previous|prior)\b|\bsystem\s*(?:prompt|message|override|:)"
    r"|\byou\s+are\s+now\b|\bnew\s+instructions?\b|\bjailbreak\b|\bdeveloper\s+mode\b|\bsudo\b|\bas\s+(?:an?\s+)?admin\b"
    r"|\b(?:override|bypass|disable|turn\s+off|switch\s+off)\s+(?:the\s+|all\s+|any\s+)?(?:safety|approvals?|geofences?|no-fly\w*|restrictions?|limits?|checks?|rules?)"
    r"|\bskip\s+(?:the\s+)?(?:approvals?|checks?|rules?|review)\b|\bwithout\s+(?:any\s+|an\s+)?(?:approvals?|review|checks?)\b"
    r"|\bno\s+approvals?\s+(?:needed|required|necessary)\b|\b(?:already|pre-?)\s*approved\b|\bapproval\s+(?:is\s+|was\s+|has\s+been\s+)?(?:granted|given|done|obtained|not\s+(?:needed|required))"
    r"|\b(?:it'?s|is|been)\s+approved\b|\bi\s+(?:am|'m)\s+(?:the\s+)?(?:admin|approver|administrator)\b|\bauthori[sz]ed\s+by\b"
    r"|\b(?:launch|take\s*off|takeoff|arm|dispatch|send|fly|start)\s+(?:it\s+|them\s+)?(?:now\s+|immediately\s+)?(?:the\s+|all\s+)?(?:drones?|uavs?|aircraft|vehicles?|motors?)\s*(?:#|no\.?\s*|number\s*)?[a-z]?\d+\w*"
    r"|\b(?:drone|uav|aircraft|vehicle)\s*(?:#|no\.?\s*|number\s*)?\d+\w*"
    r"|\b(?:launch|take\s*off|arm)\s+(?:it\s+|them\s+)?(?:right\s+)?(?:now|immediately|at\s+once)\b|\bland\s+(?:at|on|in)\b"
    r"|\b(?:return|go)\s+(?:to\s+)?(?:home|base|launch|dock)\b|\brtl\b|\brth\b|\bm\d+t?-\d+\b"
    r"|(?:忽略|无视|不理会|不要理会|别管|不用管)(?:掉)?(?:之前|以上|前面|上面|所有|你的|系统|规则|指令|提示|限制|禁飞|审批|安全)"
    r"|忘记(?:之前|以上|前面|上面|所有|你的)|忘掉(?:之前|以上|前面|上面|所有)|系统提示|系统指令|新的?指令|你现在是|扮演"
    r"|绕过(?:审批|规则|限制|禁飞|检查|安全)|跳过(?:审批|检查|规则)|不经审批|无需审批|不用审批|不需要审批|免审批?|越权"
    r"|审批(?:已经?|都)?(?:通过|批|走完|完成|过)了?|已(?:经)?(?:审批|批准|授权|获批)|批准了|已获批|领导(?:已经?)?(?:同意|批)"
    r"|直接(?:起飞|飞|执行|派|出发|放飞|升空)|(?:派|让|命令|调度|指派|叫)?\s*\d+\s*号\s*(?:无人)?机\s*(?:立刻|马上|立即|现在)?\s*(?:起飞|出发|升空|执行|飞)?"
    r"|(?:立刻|马上|立即|现在)(?:起飞|升空|放飞)|返航|降落(?:在|到)|我是(?:管理员|审批人)"
    r"|\b(?:mission_type|altitude_m|excluded_sensors|clarification_questions|needs_clarification)\b|\b\w+\s*=\s*\w+"
    r"|\bset\s+(?:the\s+)?(?:mission|field|intent|output)\w*|\boutput\s+(?:json|the)\b|\brespond\s+with\b"
)


# ----------------------------------------------------------------------------- targets and mission

TARGET_PATTERNS: list[tuple[Target | None, str]] = [
    (None, r"tank ?farms?|油库|罐区|储罐区|solar (?:farm|park)s?|光伏电站|光伏区"),  # areas, not points
    (
        Target.FIRE_LANES,
        r"消防通道|消防车道|消防道|消防通路|消防通到|消防车通道|生命通道|疏散通道|应急通道|救援通道|消防登高面"
        r"|\bfire[- ]?(?:lanes?|lnaes?|roads?|access(?: roads?| routes?| lanes?| ways?)?|routes?|apparatus (?:access )?roads?)\b"
        r"|\bemergency (?:vehicle )?(?:access )?(?:lanes?|roads?|routes?|access(?: roads?| routes?| ways?)?)\b|\bfirelanes?\b"
        r"|\bevacuation (?:routes?|lanes?|roads?)\b|\baccess roads?\b"
        r"|\blanes\b|(?<=\bthe )lane\b",  # "patrol the lanes": the site's lanes are its fire lanes
    ),
    (Target.HYDRANTS, r"消防栓|消火栓|消防拴|消防桩|\bhydr[ae]nts?\b|\bhydrnts?\b|\bfire plugs?\b"),
    (Target.ROOFS, r"屋顶|楼顶|房顶|天台|屋面|顶棚|\broof(?:s|tops?)?\b|\broves\b"),
    # the Chinese words as many as the English ones: 水塔 is a tower as "water tower" is
    (Target.MASTS, r"铁塔|通信塔|信号塔|基站|桅杆|电塔|水塔|冷却塔|塔吊|烟囱|\bmasts?\b|\btowers?\b|\bantennas?\b|\bchimneys?\b"),
    (Target.GATES, r"大门|门口|闸口|出入口|(?<![部专热厂])[东南西北正侧后前]门|\bgates?\b|\bentrances?\b"),
    (Target.ASSETS, r"变压器|光伏板|太阳能板|储罐|配电箱|配电柜|配电房|变电箱|箱变|变电站|\btransformers?\b|\bsolar panels?\b"
                    r"|\btanks?\b|\bsubstations?\b"),
]
POINT_TARGETS = {Target.HYDRANTS, Target.ROOFS, Target.MASTS, Target.GATES, Target.ASSETS}

MAPPING = _rx(
    r"测绘|航测|侧绘|航侧|测一?下?图|建模|三维|正射|地形图|全覆盖|\bmapping\b|\bmap (?:the|this|that|it|out|our|a|of)\b"
    r"|\bortho\w*|\bphotogrammetry\b|\b3d model\w*|\bdigital twin\b|\bcover (?:the )?(?:whole|entire)\b"
)
SURVEY = _rx(
    r"扫一遍|扫一下|扫描(?!仪)|扫一圈|航拍|拍一遍|测量|测一遍|测一下|\bsurvey\w*|\bsurvay\w*|\bservey\w*|\bscan(?:s|ning)?\b"
    r"|\baerial (?:photos?|images?|imagery|shots?)\b|\bgrid\b|\b(?:pass|fly|flight) over\b|\boverfly\b|\bflyover\b"
)
INSPECT = _rx(
    r"检查|检测|排查|查验|查看|查一遍|捡查|检察|\binspect\w*|\binspct\w*|\binsepct\w*|\bexamine\b"
    r"|\blook at\b|\btake a look\b|\bhave a look\b|\bcheck\w*(?!\s+(?:the\s+|on\s+|if\s+|whether\s+)?(?:weather|forecast|status|battery|if|whether|wind))"
)
PATROL = _rx(
    r"巡一遍|巡一下|巡一圈|巡逻|巡查|巡检|巡视|巡航|寻检|寻查|巡捡|巡|转一圈|飞一圈|绕一圈|溜一圈|走一遍"
    r"|\bpatrol\w*|\bpartol\w*|\bpatrl\w*|\bpatorl\w*|\bsweep\w*|\bdo a round\b|\bdo the rounds\b|\bfly (?:along|down)\b"
)


# ----------------------------------------------------------------------------- priority, altitude, sensors

PRIORITY = [
    (Priority.URGENT, r"紧急|加急|特急|十万火急|急件|\burgent\w*|\bemergency\b|\bcritical\b"),
    (Priority.LOW, r"不急|不着急|有空的?时候|有空|闲时|低优先级?|优先级\s*[:：=]?\s*(?:很|较)?低|\blow priority\b|\bwhenever\b|\bno rush\b"
     r"|\bwhen convenient\b|\bwhen you can\b|\bprio(?:rity)?\s*[:=\-]?\s*(?:is\s+)?low\b|\blow prio\b"),
    (Priority.NORMAL, r"\bprio(?:rity)?\s*[:=\-]?\s*(?:is\s+)?(?:normal|medium|routine)\b|\b(?:normal|medium|routine) priority\b"
     r"|优先级\s*[:：=]?\s*(?:普通|一般|中|正常)"),
    (Priority.HIGH, r"优先级\s*[:：=]?\s*(?:很|最|较)?高|高优先级?|优先|抓紧|\bhigh prio(?:rity)?\b|\bprio(?:rity)?\s*[:=\-]?\s*(?:is\s+)?high\b"
     r"|\bpriority\b|\bimportant\b"),
]
HIGH_TIME = _rx(r"尽快|\basap\b|\bas soon as possible\b")  # HIGH, but the time reader claims them



# A priority inside the area ("重点看3号消防栓", "especially the north gate"): the plan treats the selected area
# evenly and has no field for it, so the clause is claimed to its end and asked about, never dropped.
# An order of priority ("先看北门那个", 优先拍东侧那几栋楼, "start with the ones near the gate", "most important is the
# east lane", "the priority is the loading dock") is a focus as well: the plan has no order inside the area either.
_FOCUS_EN_OBJECT = (
    r"(?=(?:the|a|an|those|these|that|this|our|north\w*|south\w*|east\w*|west\w*|buildings?|blocks?|gates?|hydrants?"
    r"|roofs?|rooftops?|lanes?|masts?|towers?|tanks?|entrances?|transformers?)\b)"
)
# The same said of a part of the area as a predicate ("the east gate is the priority", "hydrants matter most", "the
# north block takes precedence", "gate 3 comes first"). Said of the request itself ("this is top priority", "the job
# is a priority", "it's critical") it is urgency (``PRIORITY``), so a pronoun or a word for the job before the verb
# is no focus.
_NOT_THE_JOB = "".join(
    rf"(?<!\b{w})" for w in ("it", "this", "that", "job", "task", "mission", "request", "work", "one", "flight", "survey",
                             "inspection", "patrol", "everything", "all", "which", "what", "speed", "time", "timing", "safety")
)
_PREDICATE = (
    rf"{_NOT_THE_JOB}(?:\s+(?:is|are|remains?|should\s+be|will\s+be|becomes?|was)\s+|['’]s\s+)(?:(?:the|our|my|a|an|top"
    r"|main|first|highest|high|biggest|key|real|primary|overriding|absolute|number\s+one|no\.?\s*1|#1)\s+)*"
    r"(?:priorit(?:y|ies)|(?:the\s+)?(?:most\s+)?(?:important|urgent|key|crucial|critical|essential|paramount|vital)"
    r"|what\s+matters|(?:the\s+)?(?:main|key|primary|biggest|real|chief|top|greatest|first|number\s+one|most\s+important)\s+"
    r"(?:concern|focus|thing|target|point|worry|issue|interest|one))"
    rf"|{_NOT_THE_JOB}\s+(?:needs?|deserves?|gets?|should\s+get)\s+(?:the\s+)?(?:most|more|extra|special|closer|close)\s+"
    r"(?:attention|care|look|time|focus)|\bcares?\s+(?:the\s+)?most\s+about"
    rf"|{_NOT_THE_JOB}\s+(?:matters?|counts?)\s+(?:the\s+)?most"
    rf"|{_NOT_THE_JOB}\s+(?:takes?|gets?|has|have|should\s+(?:take|get|have))\s+(?:top\s+|first\s+|highest\s+)?(?:priority|precedence)"
    r"|\s(?:comes?|goes?|go)\s+first|\bfirst\s+and\s+foremost|\bbefore\s+(?:the\s+)?(?:rest|others|anything\s+else"
    r"|everything\s+else|the\s+other\s+\w+)"
    r"|\b(?:the\s+|our\s+|my\s+)?focus\s+(?:is|are|should\s+be|will\s+be)|\blargely|\bpredominantly"
)
FOCUS = _rx(
    r"\b(?:especially|particularly|in\s+particular|focus(?:ing|ed)?\s+on|with\s+(?:a\s+|an\s+)?(?:focus|emphasis)\s+on"
    r"|concentrat(?:e|ing)\s+on|pay\s+(?:special\s+|extra\s+|close\s+)?attention\s+to|prioriti[sz](?:e|es|ed|ing)|primarily|mainly"
    r"|mostly|chiefly|above\s+all|the\s+main\s+(?:thing|focus|concern|target|point)|above\s+everything|most\s+of\s+all|before\s+anything\s+else|first\s+of\s+all"
    r"|make\s+sure\s+(?:to|you)\s+(?:check|look\s+at|cover|get)|(?:extra|special|close|closer)\s+(?:attention|look)"
    r"|take\s+a\s+closer\s+look|zoom\s+in\s+on|key\s+(?:areas?|points?)\s*:"
    r"|(?<!the\s)(?<!our\s)(?<!my\s)(?<!today's\s)(?<!tomorrow's\s)(?<!this\s)first\s+(?:check|look|inspect|survey|patrol|do|cover|go|fly|visit|scan|take|hit|get)"
    r"(?!\w*\s+(?:of\s+the\s+(?:day|morning|week|month|night|shift|year)|today|tomorrow|tonight|this\s+(?:morning|week|month)))"
    rf"|(?:start|begin)(?:s|ning|ing)?\s+(?:with|from|at|by)\s+{_FOCUS_EN_OBJECT}"
    r"|(?:most|more)\s+important(?:ly)?|the\s+important\s+(?:thing|part|one|ones|bit)|what\s+matters\s+most"
    r"|(?:(?:the|top|first|main|highest|key|biggest|my|our)\s+)?priorit(?:y|ies)\s+(?:is|are|should\s+be|goes\s+to|will\s+be|on|for(?!\s+(?:us|me|them|everyone)\s*(?:$|[,.;!?]))|to|being)"  # "a priority for us.": the job's
    r"|give\s+priority|with\s+priority|priority\s+(?:areas?|targets?|zones?)|then\s+(?:the\s+)?(?:rest|others|remaining|remainder))\b"
    rf"|(?:{_PREDICATE})\b"
    r"|\besp\.?(?=\s)"
    r"|重点|着重|尤其|特别是|特别注意|特别关注|主要(?:是|看|拍|查|检查|巡|测|针对|关注)|多看看|多看|多拍|多查|仔细看看|仔细看|仔细拍|关注一下|留意|注意一下"
    r"|优先(?!级|处理|安排|执行|派|进行|办理|完成)(?=\s*[\u4e00-\u9fff])|(?<=[侧边面门头部角楼栋段号的栓塔口道器板罐区库场灯])(?:要|得|应该|需要|必须)?优先(?!级)"
    r"|(?<=[\u4e00-\u9fff])(?<!安全)第一(?=\s*(?:$|[，,。;；!！]))"
    r"|最重要|最关键|关键是|重中之重|第一个(?:看|查|拍|检查)|以[^，,。;；]{1,12}(?:为主|为重点|为先)"
    r"|(?<![不么没])(?:最)?(?:要紧|紧要)|最主要|(?<=[\u4e00-\u9fff])(?:为主|为重|为先|打头)|首要(?:的)?(?:是|目标|关注)|是首要"
    r"|(?:排|放|摆)(?:在)?(?:第一|首位|最前)|是(?:关键|第一位)|最急|先来"
    r"|(?<=[，,;；。])\s*(?:请)?\s*(?:首先|先|第一步)(?!\s*(?:确保|保证|记得|别忘))(?:从)?"
    r"|先(?:看|查|拍|检查|巡|测|扫|飞)(?=\s*(?:$|[，,。;；]))"
    r"|从(?!明|今|后天|下|这|本|现在|早|晚|上午|下午|中午|凌晨|[0-9一二三四五六七八九十两])[^，,。;；]{1,10}?(?:开始|查起|看起|拍起|巡起|入手)"
)
FOCUS_QUESTION = (
    "the plan covers the whole area evenly and cannot give extra attention to this; plan it evenly (answer \"evenly\"), or restate what is needed?",
    "规划会均匀覆盖整个区域，无法对这里特别关注；按均匀覆盖规划（回答“均匀”），还是重新说明需求？",
)
FOCUS_STOP = _rx(  # a focus ends at a day, clock, height or sensor: quoted with it, "evenly" removed them unread
    r"\s+(?=(?:tomorrow|today|tonight|this\s+(?:morning|afternoon|evening)|next\s+(?:week|mon|tue|wed|thu|fri|sat|sun)\w*"
    r"|(?:on\s+)?(?:mon|tue|wed|thu|fri|sat|sun)\w*day|with|using|altitude|\d{1,2}\s*(?:am|pm))\b"
    r"|(?:at|from|by)\s+\d|\d{1,2}[:.h]\d{2}|w/)"
    r"|(?=明天|今天|后天|今晚|明早|明晚|上午|下午|晚上|早上|中午|高度|离地|\d{1,2}\s*[点:：]"
    r"|[用带开]\s*(?:热成像|红外|可见光|变焦|激光|探照灯|喊话|喇叭|相机|摄像))"
)

# The selected region named in the text, in any common form ("region 1001", "Region 1001:", "region_1001", "the 1001
# area", its short forms "R1001", "R-1001", "reg. 1001", 区域1001, 1001区, 第1001区, 1001片区): read when it is the
# selected one, asked when it is another.
_NOT_AFTER_ID = r"(?!\s*(?:m\b|ft\b|km\b|meters?|metres?|feet|%|:\s*\d|\.\d|米))"

REGION_NAMED = _rx(
    r"\b(?:region|area|zone|sector|district|site|parcel|plot)\s*(?:no\.?|number|#|:|-)?\s*(?P<id>[a-z]?\d{2,6}[a-z]?)\b" + _NOT_AFTER_ID
    + r"|\b(?:r|rg|rgn|reg)\.?\s*[-_#]?\s*(?P<rid>\d{3,6})\b" + _NOT_AFTER_ID  # R1003, R-1003, reg. 1003
    + r"|\b(?P<raw>region[-_][a-z0-9_.\-]+)"
    r"|(?<![\d:.,])\b(?P<eid>\d{2,6})\s*(?:region|area|zone|sector|district|site|parcel|plot)\b"  # not a clock's "10:00"
    r"|(?:区域|片区|地块|(?<![\u4e00-\u9fff])区)\s*(?P<zid>\d{2,6})(?![\d:.点时])(?:\s*号)?"
    r"|第?\s*(?P<zid2>\d{2,6})\s*(?:号)?\s*(?:区域|片区|地块|区)"
)


# ----------------------------------------------------------------------------- coverage target (area surveys)
# "cover at least 99.5 %", "99.5% coverage", "覆盖率不低于99.5%", "覆盖率 99%", "99%以上的覆盖率": a share of
# the area the survey must image. "At least" is what a target means; "about", "at most", 以下 are not a
# target and are asked (``COVERAGE_BOUND_*``), as is any other wording with a number (the residual).
_PCT = r"(?P<v>\d{1,3}(?:\.\d{1,3})?)\s*(?:%|percent\b|per cent\b|pct\b)"
_PCT_ZH = rf"百分之\s*(?P<w>{CN_NUM}|\d{{1,3}}(?:\.\d{{1,3}})?)"
_AT_LEAST = r"(?:at least|no less than|not less than|minimum(?: of)?|>=|≥)"
COVERAGE = [
    _rx(
        r"\b(?:cover(?:s|ing)?|coverage(?: target| goal)?|imag(?:e|ing))\s*(?:(?:of|to|:|=|is|should be|must be)\s*)?"
        rf"(?:{_AT_LEAST}\s*)?{_PCT}(?:\s*(?:of (?:the|this|that|our) (?:area|site|field|parcel|block|yard|lot)\b|coverage\b))?"
    ),
    _rx(rf"(?:{_AT_LEAST}\s*)?{_PCT}\s*(?:coverage|covered)\b"),
    _rx(
        r"覆盖率?\s*(?:要求|要|需要|须|必须|应|得)?\s*(?:不低于|不少于|至少|达到|达|为|是|在|>=|≥|:|=)?\s*"
        rf"(?:{_PCT}|{_PCT_ZH})(?:\s*(?:或以上|及以上|以上))?"
    ),
    _rx(rf"(?:至少|不低于)?\s*(?:{_PCT}|{_PCT_ZH})\s*(?:以上)?\s*(?:的)?\s*覆盖率?"),
]
COVERAGE_BOUND_AFTER = _rx(r"\s*(?:以下|以内|之内|左右|上下|or (?:less|lower|below)|at most\b|max\b|maximum\b|tops\b)")
COVERAGE_BOUND_BEFORE = _rx(
    r"(?:约|大约|最多|不超过|不高于|\b(?:about|around|approx\.?|approximately|roughly|up to|at most|no more than"
    r"|not more than|max(?:imum)?|under|below|less than))\s*$"
)

SENSOR_PATTERNS: list[tuple[Sensor, str]] = [
    (Sensor.LASER_RANGEFINDER, r"激光测距仪?|激光侧距仪?|测距仪|侧距仪|测距|\brange ?finder\b|\blaser rang\w*"),
    (Sensor.LIDAR, r"激光雷达|激光扫描|点云|\blidar\b|\bli-dar\b|\blaser scan\w*"),
    (
        Sensor.THERMAL_CAMERA,
        r"热成像|热成象|热成相|热呈像|热程像|热像|热红外|长波红外|红外|热感|热力图|\bthermal\w*|\bthermla\b|\bthemal\b|\btermal\b|\bthremal\b"
        r"|\binfra-?red\b|\bir\b|\bflir\b|\bheat cam(?:era)?s?\b|\btir\b|\blwir\b|\bthermograph\w*"
    r"|\blong[- ]?wave (?:infra-?red|ir)\b",  # thermal / long-wave infrared: the band the fleet's thermal cameras image
    ),
    (Sensor.ZOOM_CAMERA, r"变焦|变交|变蕉|便焦|边焦|变角相机|长焦|常焦|\bzoom\w*|\btelephoto\b"),  # and IME slips of 变焦/长焦
    (
        Sensor.RGB_CAMERA,
        r"可见光|普通相机|光学相机|彩色相机|\brgb\b|\bvisible(?:[- ]light)?\b|\bcolou?r camera\b|\bvisual camera\b|\boptical camera\b",
    ),
    (Sensor.SPOTLIGHT, r"探照灯|照明灯|补光灯|\bspot ?lights?\b|\bsearch ?lights?\b"),
    (Sensor.SPEAKER, r"喊话器?|喇叭|扬声器|\b(?:loud)?speakers?\b|\bmegaphone\b"),
]
# A word that names more than one sensor of the fleet: 激光 / "laser" alone is the lidar or the laser rangefinder (both
# are laser sensors). Asked, never taken as either; the words that certainly mean one (激光雷达, 激光测距, "laser
# rangefinder", "laser scanner") are read above. "IR", 红外 and "infrared" stay read: the fleet's one infrared sensor is
# the thermal camera (``Sensor`` has no near-infrared payload). "camera"/"cam" alone is asked by the residual step.
SENSOR_AMBIGUOUS = _rx(r"激光(?!雷|测|侧|扫描|点云)|\blasers?\b(?!\s*(?:-\s*)?(?:rang\w*|scan\w*|distance\w*|measur\w*))")
# An infrared word that is not the thermal camera: near-, short- or mid-wave infrared (MWIR is a cooled camera; the
# fleet's thermal cameras image the long-wave band, TIR/LWIR, read above), an infrared light. The fleet has none of
# them, and reading them as "thermal" would plan with the wrong sensor; asked, and kept from the thermal pattern.
SENSOR_NOT_THERMAL = _rx(
    r"近红外|短波红外|中波红外|红外(?:补光|照明|灯|射灯|探照)\w?|\b(?:near|short[- ]?wave|mid[- ]?wave)[- ]?(?:infra-?red|ir)\b"
    r"|\bs?nir\b|\bswir\b|\bmwir\b"
    r"|\b(?:ir|infra-?red)[- ]?(?:illuminat\w*|lights?|lamps?|flood\w*|spot\s?lights?|led\w*|beams?)"
)
SENSOR_NOT_THERMAL_QUESTION = (
    "the fleet's one infrared sensor is the thermal camera, and this is another; which sensor is meant?",
    "机队唯一的红外传感器是热成像相机，这里说的是另一种；指的是哪种传感器？",
)
SENSOR_AMBIGUOUS_QUESTION = ("which sensor is meant: the lidar or the laser rangefinder?", "指的是哪种传感器：激光雷达还是激光测距仪？")
SENSOR_SUFFIX = _rx(
    r"^\s*(?:相机|摄像头|摄像机|镜头|传感器|模块|cameras?|cams?|sensors?|imag(?:ing|er|ery)|payload|scanner)?"
    r"(?:\s*(?:only|alone|is enough|will do|is all (?:we|i) need|就行了?|就好了?|就可以了?|就够了?|即可))?"
)
# "RGB only", 变焦相机就行: the item is wanted (and the only one), also right after a negated one ("no thermal, RGB only")
ONLY_AFTER = _rx(r"(?:only|alone|is enough|will do|is all (?:we|i) need|就行了?|就好了?|就可以了?|就够了?|即可)$")
# The joints of a list of sensors ("laser range finder + zooom", 热成像和变交, "thermal & hd cam"): after a sensor any of
# them; before a sensor only a symbol, or "and"/和 right after "with"/用/带 ("with zooom and thermal"). What stands there
# and was read as nothing is a sensor the reader does not know: asked, never dropped.
LIST_AFTER = _rx(r"^\s*(?:\+|&|/|、|\band\b|\bplus\b|\bas well as\b|\bn?or\b|和|及|以及|与|跟|加上?|还有|或者?)\s*")
LIST_BEFORE = _rx(
    r"(?:(?:^|[\s,，])(?P<item>[^\s,，\x00+&/、]+)\s*(?:\+|&|/|、)"
    r"|(?:\b(?:with|use|using|bring)\s+|用|带上?|开)(?P<item2>[^\s,，\x00+&/、和跟及与]+)\s*(?:\band\b|和|及|跟|与)"
    r"|(?:^|[,，:：;；]\s*)(?P<item3>[^\s,，:：;；\x00+&/、和跟及与]+)\s*(?:\band\b|\bplus\b|和|及|跟|与|以及)"
    r"|(?:\b(?:with|use|using|bring)\s+|用|带上?|开)(?P<item5>[^\s,，\x00+&/、和跟及与]+)\s*[,，]"
    r"|(?:^|[\s,，:：;；])(?P<item4>[^\s,，:：;；\x00+&/、和跟及与]+)\s*[,，])\s*$"
)
# Between two sensors read, the joint itself is read too ("热成像以及变焦", "rgb as well as thermal"), and so is a label
# before a list ("sensors: lidar, rgb", "payload thermal + zoom", 传感器：热成像): neither is a question.
LIST_JOINT = _rx(r"^\s*(?:[,，]\s*)?(?:\+|&|/|、|\band\b|\bplus\b|\bas well as\b|\bn?or\b|和|及|以及|与|跟|加上?|还有|或者?)?\s*$")
# A short token listed with the sensors ("w/ rgb, zm and tmr"): an abbreviation that is no established one of a sensor
# (rgb, lrf, eo, ir are read above) is asked, never guessed — "tmr" is thermal or tomorrow, "zm" zoom or nothing. Only a
# bare item (followed by a joint or the end of its clause, "cam" allowed) of three letters or less, or a four-letter
# shorthand of a day ("tmrw"); the short words that follow a list in plain requests are no item (``SHORT_WORDS``).
SHORT_ITEM = _rx(
    r"\s*(?:[,，+&/]|\band\b|\bplus\b|\bor\b|和|跟|及|与)\s*(?P<tok>[a-z]{1,12})(?:\s*(?:cams?|cameras?))?"
    r"\s*(?=$|[,，;；.。!！?？+&/\x00]|\s+(?:and|plus|or)\b|\s*[\u4e00-\u9fff])"
)
SHORT_WORDS = frozenset({
    "ok", "okay", "pls", "plz", "thx", "thks", "ty", "tnx", "now", "asap", "too", "yes", "yep", "am", "pm", "etc", "all",
    "both", "on", "off", "no", "not", "none", "then", "also", "thx", "cheers", "soon", "here", "there", "it", "them", "me",
    "us", "go", "fly", "a", "an", "the", "is", "are", "be", "so", "to", "at", "in", "by", "up", "out", "for",
})
SHORT_DAYS = frozenset({"tmrw", "tmro", "tmmw"})
SENSOR_LABEL = _rx(r"(?:\b(?:sensors?|payloads?)|传感器|载荷)\s*[:：=]?\s*$")
# A comma after a sensor ("thermal, lidr"): a joint only sometimes ("thermal, quickly"), see ``intents.grammar.lists``.
LIST_COMMA = _rx(r"^\s*[,，]\s*")
LIST_ARTICLE = _rx(r"^(?:the|a|an|some|any|both|our|my|its|their)$")
LIST_STOP = _rx(
    r"^(?:then|also|too|as|well|please|pls|it|them|on|of|for|to|at|in|from|with|today|now|again|either|afterwards?|after"
    r"|before|come|go|return|fly|back|is|are|be|should|will|would|can|could|must|if|so|but|or|not|similar|equivalent"
    r"|whatever|something|anything|better|whichever|both|neither"
    r"|也|还|再|都|然后|一起|一下|同时|请|吧|的|之后|以后|回来|返回)$"
)
SENSOR_ONLY = _rx(
    r"(?:\b(?:only|just)\s+(?:use\s+|with\s+|the\s+)?|\b(?:don'?t|do not) forget (?:the\s+|to (?:bring|use) (?:the\s+)?)?"
    r"|\bremember (?:the\s+|to (?:bring|use) (?:the\s+)?)|只用|仅用|光用|只要|只开|只带上?|仅带上?|就带上?|只装|记得带上?|别忘了带上?|别忘了)\s*$"
)
NEG_BEFORE = _rx(
    r"(?:不要|不用|别|甭|不需要|不需|无需|不必|没必要|不必要|没有必要|用不着|毋须|无须|免|不带|不开|别开|关掉|关闭|不使用|禁用|勿|除了|不准|不许)"
    r"\s*(?:再)?\s*(?:用|使用|开|带|上|开启|启用|要)?\s*(?:的)?\s*$"
    r"|\b(?:no|neither|without|not|don'?t|dont|do not|never|skip|except|minus|w/o|exclude|excluding|no need for|leave (?:off|out)"
    r"|don'?t bother with|don'?t need|no use of)\b"
    r"(?:\s+(?:use|using|need|needed|the|any|a|an|with|bring|take|turn on|want|for|camera|cameras|sensor|sensors|bother))*\s*$"
)
NEG_AFTER = _rx(
    r"^\s*(?:相机|摄像头|镜头|camera|cameras|sensor)?\s*[:：=\-]?\s*(?:就|也|可以)?\s*"
    r"(?:不用了?|不要了?|不需要了?|不必了?|免了|关掉|别开|不开|\boff\b|\bnot needed\b|\bis not needed\b|\bisn'?t needed\b"
    r"|\b(?:no|nope|not|none|disabled|unnecessary|not wanted)\b(?=\s*(?:$|[,.;!?，。；]))"
    r"|\bnot required\b|\bnot necessary\b|\b(?:at\s+home|behind)\b)"  # "leave the thermal at home"
)
SENSOR_BROKEN = _rx(
    r"^\s*(?:相机|摄像头|镜头|cameras?|cams?|sensors?)?\s*(?:is|are|was|seems)?\s*"
    r"(?:broken|not working|out of order|unavailable|down|faulty|dead|offline|失灵|坏了|故障|不能用|用不了|不好使|没电|不行)"
)
# A negation covers its own item and the items listed with it ("no thermal or zoom", 不要热成像和变焦), never an item
# said to be wanted ("no spotlight, thermal yes", "with", "on", 要, 开): ``AFFIRM_*``. After a bare comma or "and" ("no
# thermal, zoom", "no spotlight and thermal") the second item is wanted or refused as often: asked.
CONJ = _rx(r"^\s*(?:和|与|跟|及|以及|、|/|or|nor|或|或者)\s*$")
# "rgb and lidar or thermal", 热成像或者变焦: a choice between two sensors, which the Intent cannot hold: asked.
CHOICE = _rx(r"^\s*(?:\bor\b|或者?|还是)\s*$")
COMMA_LINK = _rx(r"^\s*(?:[,，]|,?\s*and)\s*$")  # "no spotlight and thermal": the thermal refused too, or wanted?
AFFIRM_BEFORE = _rx(
    r"(?:\b(?:with|use|using|plus|but|bring|take|add|want|need|yes\s+to|turn\s+on|switch\s+on|enable)(?:\s+(?:the|a|an|with|use))*"
    r"|用|使用|带|带上|开|打开|开启|加|加上|要|需要|但|但是|而是|改用|换成|换用)\s*$"
)
AFFIRM_AFTER = _rx(
    r"^\s*(?:相机|摄像头|镜头|cameras?|cams?|sensors?)?\s*[:：=\-]?\s*(?:(?:yes|ok|okay|please|pls|needed|required|wanted|is fine|is ok|too|as well|also"
    r"|on(?!\s+(?:the|a|an|this|that|my|our|its|each|all|top|\w+day)\b))\b|要|要的|需要|开着|开启|打开|开|用|带上|带着|可以|也要|必须)"
)


# ----------------------------------------------------------------------------- scope and what is left

SCOPE = _rx(
    r"\b(?:except(?:\s+for)?|excluding|exclude|apart from|other than|but not|not including|leave out|skip(?:ping)?|avoid(?:ing)?"
    r"|stay (?:away from|out of|clear of)|keep (?:away from|out of|clear of)|without the|only|just the)\b"
    r"|除了|除去|除开|跳过|避开|绕开|绕过|不要去|别去|不去|不用去|不包括|不含|以外|之外|只|仅|光"
)
# "the first patrol of the day", "today's first survey": an ordinal of the flight, not of a target (read on the text
# itself, since the mission word is claimed by then): nothing to ask.
ORDINAL_MISSION = _rx(
    r"\b(?:the\s+|our\s+|today'?s\s+|tomorrow'?s\s+)?first\s+(?:patrol|survey|inspection|flight|sortie|round|run|mission|pass)"
    r"(?:s|es)?\b(?:\s+of\s+the\s+(?:day|morning|shift|night))?"
)
FILLER = _rx(
    r"\b(?:quick|this|that|which|no|each) one\b|\b(?:for\s+the\s+|the\s+|our\s+)?first\s+time\b"
    r"|快一点|早一点|一点儿|一下|一遍|一圈|一趟|一次|一个|一片|一块|一带(?=的)|一样|一起|\bquick(?:ly)?\b|\bone more time\b"
    r"|(?:首先|先)(?=\s*(?:确保|保证|记得|别忘))"  # 首先确保热成像开着: "first make sure", no order inside the area
)
RESIDUAL: list[tuple[str, str, str, str]] = [
    (
        "instruction",
        r"\b(?:ignore|disregard|forget|override|approv\w*|authori[sz]\w*|permission|admin\w*|system|prompt|instructions?"
        r"|sudo)\b|忽略|无视|审批|批准|授权|指令|命令|管理员|系统|直接|派机",
        "is this an instruction? it is not carried out; please confirm what you need",
        "这是一条指令吗？它不会被执行，请确认需求",
    ),
    (  # a named part of the site ("zone 4", "lot B", B区, 3号楼, A栋) is a restriction, asked as one whatever its name
        "scope",
        r"\b(?:block|zone|sector|building|bldg|hangar|pier|berth|lot|bay|wing|unit|pad|section|plot|parcel|field|yard|warehouse)\b"
        r"\s*(?:no\.?\s*|number\s*|#\s*)?(?:\d{1,3}|[a-z])\b(?!\s*(?:m|ft|km|meters?|metres?|feet|%|am|pm)\b|\s*[:.]\d)"
        r"|(?<![a-z0-9])[a-z]\s*(?:区|栋|座|幢|号楼|楼|片区|地块)|(?<![0-9])\d{1,3}\s*(?:号楼|栋|幢|座|号厂房|号仓库|号库|区(?!域))",
        "which part of the area is meant? only the selected area or a named region can be planned",
        "具体是哪一部分？只能按选定区域或已命名区域规划",
    ),
    (
        "number",
        r"\d+(?:[.:,/]\d+)*\s*(?:%|[a-z]+|[\u4e00-\u9fff])?|"
        rf"(?:{CN_NUM}|半)\s*(?:个\s*)?(?:点|时|分|秒|号|日|月|天|周|年|米|尺|度|倍|架|台|次|遍|趟|圈|层|栋|号楼|公里|千米|小时|钟头|分钟|个)"
        rf"|\b(?:{EN_NUM}|half|quarter|dozen|couple|several|few)\b|[零〇二两三四五六七八九十百千万]+",
        "this number is not a time, a date or an altitude the reader can use; what does it set?",
        "这个数字不是可用的时间、日期或高度，它指的是什么？",
    ),
    (
        "time",
        r"\b(?:a\.?m\.?|p\.?m\.?|o'?clock|hours?|hrs?|minutes?|mins?|days?|weeks?|weekends?|months?|years?|tonight"
        r"|morning|afternoon|evening|night|noon|midnight|dawn|dusk|sunrise|sunset|daybreak|first light|last light"
        r"|lunch|breakfast|dinner|later|soon\w*|shortly|early|earlier|late|before|after|until|till|asap|eod|cob|shift|schedule\w*"
        r"|in a (?:bit|while|moment|sec|second|minute|jiffy)|when (?:it|the)|once (?:it|the)|twice|thrice|times|ish"
        r"|tbd|tba|tbc|to be (?:confirmed|decided|determined|announced)|christmas|xmas|new year|easter|midsummer|holidays?"
        r"|hourly|nightly|every|each (?:day|morning|night|week)|regularly|periodically|recurring"
        r"|this time|same time|usual time|as usual|as before|same as|like last|last time|next"
        r"|daily|weekly|monday|tuesday|wednesday|thursday|friday|saturday|sunday|yesterday|fortnight|first thing"
        r"|jan(?:uary)?|feb(?:ruary)?|march|april|june|july|august|sept?(?:ember)?|october|november|december|dec|nov|oct)\b"
        r"|点钟|小时|钟头|分钟|凌晨|黎明|天亮|日出|日落|天黑|傍晚|稍后|待会|一会|回头|等下|等会|过会|改天|随后|之前|以前|之后|以后|左右|周末|月底|月初|年底"
        r"|上午|下午|中午|晚上|早上|夜里|今|明|昨|前天|后儿|星期|礼拜|[上下这本]个?(?:周|星期|礼拜|月)|周内|下班|上班|收工|开工|饭前|饭后|午饭|天黑|大概|大约|交接班|换班|待定|再定|再说|另行|择时|择日|回头|改天|春节|元旦|国庆|中秋|圣诞|除夕|清明|端午|节后|节前|假期|周[一二三四五六日天]|老时间|同一时间|这个时候|这个点|上次|照旧|老样子|早|晚|早点|晚点|早些|晚些|提前|推迟|延后|每天|每周|定时",
        "when exactly?",
        "具体是什么时间？",
    ),
    (  # "the first gate", "the last one": one of the targets, which the plan cannot single out (no focus: a selection)
        "scope",
        r"\bthe\s+(?:first|second|third|fourth|fifth|last|1st|2nd|3rd|4th|5th)\b(?=\s*(?:\x00|one\b|two\b|three\b))",
        "which part of the area is meant? only the selected area or a named region can be planned",
        "具体是哪一部分？只能按选定区域或已命名区域规划",
    ),
    (
        "focus",
        r"\bfirst(?:ly)?\b|(?<![事原领祖率抢预争优首])先(?![生前后进锋])|首先|其[余他]的|剩下的|\bthe\s+(?:rest|others)\b",
        *FOCUS_QUESTION,
    ),
    (
        "parameter",
        r"(?<!check )(?<!see )(?<!me )(?<!know )(?<!report )\bif\b|\bunless\b|\botherwise\b|\bin case\b|如果|要是|万一|假如|除非|否则|的话",
        "this is a condition; what should be planned?",
        "这是一个条件，应该按哪种情况规划？",
    ),
    (
        "parameter",
        r"\b(?:don'?t|do not|does not|doesn'?t|not|never|no need to|cancel\w*|call off|abort|stop|instead|actually|rather"
        r"|scratch that|correction|change (?:it|that|this) to|make (?:it|that)|wait|hold on|hang on|on second thought)\b"
        r"|不要|不用|不需要|无需|不必|别|取消|停止|不对|改成|改为|改到|换成|还是|算了|重新|等等|等一下",
        "this negates or corrects part of the request; what exactly should be planned?",
        "这里否定或更正了请求的一部分，具体应该规划什么？",
    ),
    (
        "scope",
        r"\b(?:along|near|nearby|next to|beside|behind|by the|opposite|around|between|north of|south of|east of|west of|outside|inside|within"
        r"|section|part|half|portion|corner|perimeter|side|sides|edge|end|(?:in|on|at|to) the (?:north|south|east|west)(?:ern)?(?=\s*(?:$|[,.;!?]|of\b))|(?:block|zone|area|sector|building|hangar|pier|berth|lot|bay|wing|unit|dock|pad|site) [a-z])\b"
        r"|\b(?:also|as well as|as well|plus|in addition|additionally)\b|另外|还有|顺便|再加上|以及"
        r"|沿着?|附近|旁边|周围|周边|一带|那段|这段|[东南西北]段|那边|这边|那一段|一半|半边|部分|范围|区域内|外围|以北|以南|以东|以西"
        r"|[东南西北](?:侧|边|面|头|部|角|半|片)(?!\s*(?:的|那|这|一|个))",  # 北边的空地 names the selection; 东侧多拍点 is a part
        "which part of the area is meant? only the selected area or a named region can be planned",
        "具体是哪一部分？只能按选定区域或已命名区域规划",
    ),
    (
        "sensor",
        r"\b(?:cameras?|cams?|sensors?|payloads?|gimbal|multispectral|hyperspectral|gas|night vision|ndvi|video|record\w*|photos? of)\b"
        r"|相机|摄像|镜头|传感器|载荷|云台|多光谱|高光谱|气体|夜视|录像|视频",
        "which sensor is meant?",
        "需要哪种传感器？",
    ),
    (
        "parameter",
        r"\b(?:altitude|height|elevation|agl|high|low|ceiling|speed|fast|slow(?:ly)?|overlap|sidelap|resolution|gsd|heading|angle"
        r"|direction|distance|radius|buffer|margin|battery|return|land|hover|loiter|orbit|circle|waypoints?|km/h|mph|knots?|kts)\b"
        r"|高度|速度|航速|重叠|分辨率|航向|角度|方向|距离|半径|电池|电量|降落|机场|机库|悬停|盘旋|航线|航点|路线|高|低|快速|慢",
        "this parameter cannot be set from the request; what is needed?",
        "这个参数无法从请求中设置，具体需要什么？",
    ),
]
RESIDUAL_RX = [(kind, _rx(pattern), en, zh) for kind, pattern, en, zh in RESIDUAL]

SURVEY_OF_POINTS_QUESTION = (
    "a survey of these points: inspect each of them (answer \"inspection\"), or survey the whole area (answer \"survey\")?",
    "对这些点位：逐个检查（回答“检查”），还是测绘整个区域（回答“测绘”）？",
)
QUESTION_MISSION_ZH = "请说明任务：巡查消防通道、区域测绘，还是检查消防栓/屋顶等点位？"
QUESTION_MISSION_EN = "What should the drone do: patrol the fire lanes, survey the area, or inspect points (hydrants, roofs)?"
MISSING = {
    "time": "start time", "day": "day", "altitude": "altitude", "number": "a number", "scope": "scope",
    "place": "scope", "sensor": "sensor", "parameter": "a parameter", "instruction": "confirmation of instructions",
    "mission": "mission type", "coverage": "coverage target", "mission_split": "mission type",
    "part_of_day": "start time", "time_zone": "time zone", "height_reference": "altitude", "focus": "focus",
    "region": "region",
}
