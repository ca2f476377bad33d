"""A final assessment written as prose, without a marker or labelled fields (form ``prose``).

Chat models and voice agents often end an interview in plain sentences: "Putting it all together, this sounds like
a kidney infection. I'd rate it triage level three: please go to an urgent care centre today." A reply is read as
such a final when all of these hold:

- it **decides**: a sentence that is not a question, not conditional ("if it gets worse, call 999") and not
  hypothetical ("that could mean A&E") names a triage level or an escalation as a decision (``decisive``);
- it **concludes**: it names a diagnostic impression ("this sounds like X", "most likely X", "signs of X", "my main
  concern is that he could be having X") or says that it concludes ("my final assessment", "here's what I think",
  "putting it all together", "based on everything you've told me", "I've heard enough");
- it **asks nothing**: no sentence is an interview question, only closing checks ("Does that make sense?", "Is
  there someone who can drive you?") are allowed, unless the reply calls itself final ("final answer");
- it **does not defer**: no sentence says that more questions come first ("one more question", "let me ask",
  "before I decide"); the draft rules (``_draft``) apply as to any other form.

Read from such a reply: the triage level (the scale's phrases, spoken numbers included), the escalation of the
first decisive sentence, and the diagnoses the impression phrases name, in order, leaving out what the reply rules
out ("I don't think it's a clot"). The same two readers fill a marked assessment's escalation or diagnoses when its
fields do not give them (``prose_escalation``, ``prose_diagnoses``).
"""

from __future__ import annotations

import re

from sim.encounter.assessment._layout import _SPEAKER
from sim.encounter.assessment._triage import (
    _CONDITION_WORD,
    _escalation_from,
    _levels,
    decision_escalation,
    disposition_from,
)

_SENTENCE = re.compile(r"(?<=[.!?])[\"')\]]*\s+|\n+|\s+[\u2013\u2014]\s+(?=[A-Z])")
_HYPOTHETICAL = re.compile(
    r"\b(?:could|might|may|would)\s+(?:need|mean|require|have to|end up)\b|\bwould be\b(?![^.]*\b(?:best|safest"
    r"|wise)\b)"
    r"|\b(?:was|were|wondered|worried|thought)\b[^.]*\b(?:whether|might|if)\b|\bin the past\b|\blast time\b"
    r"|\b(?:used to|have been to|went to|was seen)\b", re.IGNORECASE)
# draft words that say a prose reply has not decided ("for now" and "working" fill ordinary advice, so they do not)
_PROSE_DRAFT = (r"provisional(?:ly)?|draft|interim|preliminary|tentative(?:ly)?|so far|in progress|pending"
                r"|not (?:yet )?final|tbd|tbc|to be (?:confirmed|decided|determined)")
_DEFER = re.compile(
    rf"\b(?:{_PROSE_DRAFT})\b|\b(?:one|two|a few|some|a couple of|couple more|few more|more) (?:more )?questions?\b"
    r"|\b(?:i'?m going to|i'?ll|i will|i need to|let me)(?: just)? ask\b(?! (?:you|him|her|them) to\b)"
    r"|\bwork out (?:how|whether|if|what)\b"
    r"|\bquestions? (?:for you|first)\b|\blet me (?:ask|check|just ask|confirm)\b"
    r"|\bi (?:need|want|would like|'d like) to (?:ask|know|check|confirm)\b"
    r"|\bbefore i (?:decide|give|make|can|tell|finali[sz]e|say)\b|\b(?:first|next),? (?:i|let)\b"
    r"|\bcan you tell me\b|\bcould you tell me\b|\bafter (?:you|that|your)\b[^.]*\bi(?:'ll| will)\b"
    r"|\bi(?:'ll| will) (?:then|come back|let you know|give you)\b|\bnot sure yet\b|\bstill (?:working|deciding)",
    re.IGNORECASE)
_CLOSING_QUESTION = re.compile("|".join((
    r"\bdoes (?:that|this|all that)(?: plan| advice)? (?:make sense|sound ok|sound okay|sound alright|sound right|help"
    r"|sound good|work for you)",
    r"\b(?:is|are) (?:that|you) (?:ok|okay|alright|all right|clear|happy|comfortable|able to)",
    r"\b(?:do|have) you (?:have|got) any (?:other |more |further )?questions|\banything else (?:i can|you)",
    r"\bis there (?:someone|anyone|somebody)|\b(?:can|could) you (?:do that|manage that|call|get someone|arrange)",
    r"^any (?:other |more |further )?questions|\bdo you understand|\bwould you like|\bshall i|\bdo you want me to",
    r"\bcan someone|\b(?:ok|okay|alright)\?$|\bdid you (?:get|catch) (?:all )?(?:that|of that)|\bgot (?:all )?that\?",
    r"\b(?:who|what) (?:can|could) (?:drive|take|stay)|\bare you (?:going|able) to")), re.IGNORECASE)
_FINAL_WORDS = re.compile(r"\bfinal\b|\bmy (?:verdict|decision|conclusion|recommendation)\b", re.IGNORECASE)
# care already on its way settles the decision; a practical question may follow ("Is there a defibrillator?")
_DISPATCHED = re.compile(r"\b(?:i'?m|i am|i'?ve|i have|we'?re|we are) (?:sending|calling|called|sent|dispatching"
                         r"|dispatched|arranging|arranged|getting) (?:an? |the )?(?:ambulance|paramedics|emergency"
                         r" services|crew)|\bambulance (?:is|has been) (?:on (?:its|the) way|dispatched|coming|called)"
                         # a hand-over to the crisis team: "I'm going to connect you with the crisis team right now"
                         r"|\b(?:i'?m|i am|we'?re|we are) (?:going to |now )?(?:connect|connecting|put|putting|transfer"
                         r"|transferring|refer|referring) you (?:through )?(?:to|with) (?:the |our )?(?:\w+ )?crisis"
                         r" (?:team|line|service)",
                         re.IGNORECASE)
_CONCLUDES = re.compile("|".join((
    r"\b(?:final|my) (?:assessment|answer|call|triage|decision|verdict|conclusion|recommendation|impression)\b",
    r"^\W*final\W*:|\(final\)",
    r"\bhere'?s (?:what i think|where i'?ve landed|my (?:thinking|view|advice))\b",
    r"\bputting (?:it|this|that|everything)(?: all)? together\b",
    r"\b(?:based on|given|considering|taking into account|from) (?:everything|all|what)(?: that)? "
    r"you(?:'?ve| have) (?:told|said|described|explained)|\btaking (?:everything|it all|all of this) into account\b",
    r"\bi'?ve (?:heard|got) enough\b|\b(?:that'?s|that is) (?:everything|all) i need(?:ed)?\b|\bstop the questions\b",
    r"\bi'?ve (?:got|have) a (?:good|clear) picture\b|\bhere'?s a summary\b|\bto summari[sz]e\b|\bin summary\b",
    r"\b(?:to sum|summing)(?: it| this| things)? up\b|\ball in all\b",
    r"\bsummary of (?:our|your|what|today)\b",
    r"\bbased on (?:your|ur|the|his|her|their) (?:symptoms|answers|description)\b|\bafter (?:carefully )?consider",
)), re.IGNORECASE | re.MULTILINE)
_IMPRESSION = re.compile("|".join((  # the words just before a diagnosis the reply gives as its impression
    r"\b(?:sounds?|looks?|seems?) (?:as if|as though|like) (?:you|he|she|they|your \w+|[A-Z]\w+)(?:'ve|'s)?"
    r" (?:(?:has|have|may have|might have|could have|is having|are having)(?: got)?|got)\s+",
    r"\b(?:seems?|appears?) to (?:have|be having)(?: got)?\s+",
    r"\b(?:could|may|might) (?:well )?(?:be (?:caused by|due to)|mean|indicate)\s+",
    r"\b(?:you|he|she|they) (?:may|might|could) (?:well )?have (?=an? )|\btreating (?:this|it|him|her) as\s+",
    r"^(?:most )?(?:likely|probably|prob\.?|possibly|poss\.?|suspected|probable|possible)\s+(?=\w)",
    r"\b(?:sounds?|looks?|seems?|is)\s+(?:(?:most|more|very|much|quite|a\s+lot|a\s+bit|a\s+little)\s+)*like\s+",
    r"\b(?:is|are) (?:a |an )?(?:possible|probable|likely|suspected)\s+(?=\w)",
    r"\bwhat (?:we'?re|we are|you'?re|you are|i'?m|i am) dealing with(?: here)? is\s+",
    r"\b(?:that'?s|this is|it'?s|that is|it is) (?:very |most |highly |quite )(?:likely|probably)(?: to be)?\s+",
    r"\bmost likely (?:diagnos[ie]s|causes?|explanations?|thing)(?: here| going on)?"
    r"(?: for [^.,;]{0,40}?)? (?:is|are)\s+",
    r"\b(?:i'?m|i am) (?:most |really |very |more )?(?:worried|concerned) (?:about"
    r"|(?:that )?(?:this|it|he|she|you|they) (?:is|are|has|have|could be"
    r"|may be|might be|may have|might have|could have)(?: got)?)\s+",
    r"\b(?:i am |i'?m )?concerned (?:that )?(?:you|he|she|they) (?:have|has|may have|might have|could have)\s+",
    r"\b(?:most|more)\s+(?:likely|probably|consistent with|in keeping with)\s+(?:to be\s+|is\s+|explanation is\s+)?",
    r"\b(?:most |usually |commonly |often )+(?:caused by|due to)\s+|\bis most (?:often|commonly)\s+",
    r"\b(?:concerning|suspicious|worrying|a concern|a red flag) for\s+",
    # "she is having a life-threatening asthma attack"
    r"\b(?:is|are|'s|'re) having (?=an? [\w -]{0,40}?\b(?:attack|stroke|reaction|seizure|fit|exacerbation|crisis"
    r"|bleed|infarction|miscarriage)\b)",
    r"\b(?:top|main|first|leading) (?:thought|suspicion|concern|possibility|diagnosis) is\s+",
    r"\bwhat i think is (?:going on|happening) is\s+|\bmost likely (?:thing )?going on is\s+",
    r"\b(?:typical|classic|characteristic)(?: \w+)? (?:of|for)\s+|\b(?:is|are) (?:a )?(?:classic|typical)\s+",
    r"\bfits\s+(?!with\b|best\b|better\b|most\b)|\bfits? (?:best|better|most closely) with\s+"
    r"|(?<=: )(?:most )?(?:likely|probably)\s+|\bappears? to be (?:a |an )?",
    r"\b(?:almost |most |pretty )?(?:certainly|definitely|clearly)\s+(?:a |an |the )?(?=\w)",
    r"\b(?:tells|shows) me (?:that )?(?:you|he|she|they)(?:'re| are|'s| is| have| has)(?: got)?(?: in| having)?\s+",
    r"\b(?:consistent|in keeping|fits|fit)\s+with\s+|\bsigns? of\s+|\bsuggest(?:s|ive of)?\s+",
    r"\bpoints? to(?:wards)?\s+",
    r"\bi (?:think|believe|suspect|suspected)\s+(?:this is|it'?s|it is|you(?:'ve| have)(?: got)?|(?:he|she|they)"
    r"(?:'s| has| have)(?: got)?|that (?:this|it) is|you may have|you might have)\s+|\bi suspect (?:that )?",
    r"\b(?:could|may|might|will) (?:well )?have been (?:a |an )?",
    r"\b(?:could|may|might) (?:well )?be (?:having |developing |experiencing )?",
    r"\bmy (?:main |biggest |chief |greatest |primary |major |first |top )?(?:concern|worry|working diagnosis"
    r"|impression) is(?: that)?\s+"
    r"(?:(?:you|he|she|they|your \w+) (?:could|may|might|are|is) (?:be )?(?:having |developing )?)?",
    r"\bmy (?:assessment|impression|diagnosis|view) is (?:that )?(?:you(?:'ve| have) (?:had|got) )?",
    r"\b(?:probably|likely)\s+(?=an?\s)|\bdiagnos(?:is|ed) (?:is|of|as)\s+",
)), re.IGNORECASE)
# the plainest statement of a diagnosis, read only where no impression phrase is: "This is a first-degree sunburn"
_PLAIN_IMPRESSION = re.compile(r"\b(?:this|that|it)(?:'s| is)(?: (?:likely|probably|almost certainly))? (?:a |an )?",
                               re.IGNORECASE)
# someone else's worry, or a judgement against: "you were worried about a clot, but I don't think it is"
_NOT_IT = re.compile(r"\b(?:don'?t|do not|doesn'?t|does not|isn'?t|is not|unlikely|rule[sd]? out|ruling out"
                     r"|not(?! (?:having|had|been|being|passed|passing|done|able|eating|drinking|sleeping|opened"
                     r"|moving|feeling)\b)"
                     r"|rather than|instead of|wondered|wondering|afraid|concerned that it"
                     r"|(?:you|he|she|they)(?: were| was|'re| are)? worried)\b", re.IGNORECASE)
_NAME_END = re.compile(
    r"\s*(?:[.,;:!?()\u2013\u2014]|\s-\s|\b(?:rather than|and (?:not|that|it|you|this|the|a|i)|which|because|given"
    r"|since|that|but|with|from|so|or|probably|possibly|made|caused|brought|triggered|due|after|as|in your|on your"
    r"|in the|on the|affecting|here|going on|than|while|although|though|for which|then|who|where|when|if"
    r"|it|it'?s|you|we|i|he|she|they|um|uh|okay|ok|secondary to|in the context of|likely due|called|known as|and$)\b)",
    re.IGNORECASE)
_CALLED = re.compile(r"\b(?:called|known as)\s+(?:an?\s+)?", re.IGNORECASE)  # "a tear ..., called an aortic dissection"
_ARTICLE = re.compile(r"^(?:(?:a|an|the|some|this|your|his|her|their)\s+|(?:kind|sort|type|form) of\s+)+",
                      re.IGNORECASE)
_NOT_A_NAME = re.compile(r"^(?:it|this|that|something|anything|nothing|what|one|you|he|she|they|we|i|there|here|me"
                         r"|serious|urgent|worse|better|more|less|very|quite|really|fine|ok|okay|much|good|bad"
                         r"|emergency|lot|bit|problem|worry|concern|mother|mum|mom|father|dad|son|daughter|husband"
                         r"|wife|partner|baby|child|boy|girl|sister|brother|friend|symptoms?|answers?"
                         r"|highest|lowest|top|priority|level|about|around|roughly|important|essential|vital"
                         r"|necessary|reassuring|shame|pity|sorry|glad|safe|not|esi|ctas|ats|mts|able|unable|triage"
                         r"|\d)\b",
                         re.IGNORECASE)
# "X can point to Y": what X means in general, not an impression of this patient
_GENERIC = re.compile(r"\bcan(?: sometimes| often| also)?\s*$", re.IGNORECASE)
_QUESTION = re.compile(r"\?[\"')\]]*\s*$")


# a transcript without punctuation is one long run: its clauses start at the words that join spoken clauses
_RUN_ON = 30  # words: a sentence this long with hardly a comma is a run-on transcript
_SPOKEN_JOIN = re.compile(r"\s+(?=(?:so|but|okay|ok|alright|um|uh|because|if|and if|which means"
                          r"|please|(?:your|my) (?:triage )?level|the most likely|the other (?:possibility|thing)"
                          r"|either way|i'?m going to|i want you to|you(?:'re| are) (?:safe|fine|okay) to)\s)",
                          re.IGNORECASE)


def sentences(text: str) -> list[str]:
    """``text`` split into sentences (and lines and dash-joined clauses), markup removed, empties dropped.

    An unpunctuated run-on (a transcript) is split where spoken clauses join ("so", "but", "if", "okay" ...).
    """
    out: list[str] = []
    text = "\n".join(_SPEAKER.sub("", line) for line in text.splitlines())  # "AGENT: ..." in a transcript
    for sentence in _SENTENCE.split(text):
        words = len(sentence.split())
        runs = _SPOKEN_JOIN.split(sentence) if words > _RUN_ON and sentence.count(",") * 15 < words else [sentence]
        out.extend(r.strip(" *_#>-") for r in runs if r.strip(" *_#>-"))
    return out


# the course of an illness is not a decision: "It should clear up within a week"
_PROGNOSIS = re.compile(r"\b(?:clears?|clearing) up\b|\bsettle|\bget(?:ting)? better\b|\bimprov|\brecover(?! at home)"
                        r"|\bgo(?:es)? away"
                        r"|\bheal(?:s|ed|ing)?\b|\bfeel(?:ing)? better\b|\bshould (?:pass|ease|last)\b"
                        r"|\bmade worse\b", re.IGNORECASE)
# words that place a decision in time but also fill any story ("since this morning", "you've hardly drunk today"):
# read only where no sentence names the category itself
_WEAK = re.compile(r"\b(?:today|tonight|this (?:morning|afternoon|evening|week)|within (?:24 hours|a few hours|a week)"
                   r"|(?:in the )?next (?:few )?(?:hours|days|week)|follow[\s-]?up)\b", re.IGNORECASE)
_CARE_BEFORE = re.compile(r"\b(?:gp|doctor|seen|care|cent(?:re|er)|clinic|appointment|surgery|nurse)\W+"
                          r"(?:\w+\W+){0,2}$", re.IGNORECASE)
_RULED_OUT_CATEGORY = re.compile(r"\b(?:isn'?t|is not|aren'?t|are not|not|non)[\s-]+(?:an? )?(?:urgent|emergency)\b",
                                 re.IGNORECASE)
# a clause ends at a comma, colon, semicolon or dash; in an unpunctuated transcript at "and", "so", "but" or "then"
_CLAUSE_BREAK = re.compile(r"[,:;\u2013\u2014]|\s-\s|\s(?:and|so|but|then)\s")


def _unconditional(sentence: str) -> str:
    """The sentence without its condition.

    Nothing when it opens with one ("If it gets worse, call 999") or the condition binds the whole clause ("Call 999
    if he turns blue"); else the clauses before the condition ("Go to A&E now, or call 999 if you cannot get a
    lift" keeps "Go to A&E now").
    """
    m = _CONDITION_WORD.search(sentence)
    if m is None:
        return sentence
    breaks = [b.start() for b in _CLAUSE_BREAK.finditer(sentence, 0, m.start())]
    return sentence[:breaks[-1]] if breaks else ""


_SO = re.compile(r",\s*(?:and\s+)?(?:so|which means)\s+", re.IGNORECASE)
# a clause that rules out a means of emergency care decides nothing: "It's not something that needs A&E, but ..."
_NEGATED_MEANS = re.compile(r"\b(?:not|n'?t|no need (?:for|to)|without)\b[^.,;]{0,30}?\b(?:a&e|a and e|er|ed"
                            r"|emergency (?:department|room)|hospital|ambulance|999|911|112|urgent care)\b",
                            re.IGNORECASE)
# the scale's own name for a level is not an escalation: "ATS 5 (non-urgent)", "P5 (non-urgent, advice only)"
_LEVEL_DESCRIPTOR = re.compile(r"(?<=\d)\s*\((?:non|less|semi)[\s-]?urgent\b[^)]*\)", re.IGNORECASE)


def decisive(sentence: str) -> str:
    """The part of a sentence that can state a decision ("" when nothing is left).

    Not a question, hypothetical, deferring or about the course of the illness; without its conditional clauses.
    """
    if _QUESTION.search(sentence) or _HYPOTHETICAL.search(sentence) or _DEFER.search(sentence):
        return ""
    if _PROGNOSIS.search(sentence):  # "It usually clears up in a week, so there's no need to see a doctor"
        sentence = "; ".join(c for c in _SO.split(sentence)[1:] if not _PROGNOSIS.search(c))
    if _NEGATED_MEANS.search(sentence):
        starts = [0, *(m.end() for m in _CLAUSE_BREAK.finditer(sentence))]
        clauses = [sentence[i:j] for i, j in zip(starts, [*starts[1:], len(sentence)], strict=True)]
        sentence = "".join(c for c in clauses if not _NEGATED_MEANS.search(c))
    return _unconditional(_LEVEL_DESCRIPTOR.sub("", sentence))


def prose_escalation(text: str) -> str | None:
    """The escalation of the first decisive sentence that decides one (``decision_escalation``), or None.

    Sentences are read first without the words that only place care in time (``_WEAK``: "today", "this week"),
    which fill any story; when none decides, the first that names a means of care only one category uses (a
    pharmacist, the emergency department ...) gives its category; only then are the time words read.
    """
    from scenarios.schema import Disposition

    parts = [d for s in sentences(text) if (d := decisive(s))]
    for part in parts:
        if (named := decision_escalation(_strong(part))) is not None:
            return named
    for part in parts:  # no category named: a means of care that only one category uses ("pop into a pharmacy")
        if (means := disposition_from(part)) in _DISTINCT_MEANS:
            return Disposition(means).escalation.value
    for part in parts:
        if (named := decision_escalation(part)) is not None:
            return named
    return None


_DISTINCT_MEANS = ("ambulance", "self_present_ed", "same_day_urgent_care", "crisis_team", "pharmacist")


def _strong(part: str) -> str:
    """The part without the words that do not decide.

    A time word that does not follow a place of care goes ("see a GP today" keeps it), and so does a category named
    only to rule it out ("it isn't urgent").
    """
    part = _RULED_OUT_CATEGORY.sub(" ", part)
    return _WEAK.sub(lambda m: m[0] if _CARE_BEFORE.search(part, 0, m.start()) else " ", part)


def prose_disposition(text: str, escalation: str | None) -> str | None:
    """The means of care the first decisive sentence names that belongs to ``escalation``, or None.

    "Call 999" is an ambulance, "have someone drive you to A&E" the emergency department on one's own.
    """
    from scenarios.schema import Disposition

    for part in (d for s in sentences(text) if (d := decisive(s))):
        named = disposition_from(part)
        if named is not None and Disposition(named).escalation.value == escalation:
            return named
    return None


# a name that holds a comma: "hand, foot and mouth disease"
_COMMA_NAME = re.compile(r"^(?:an?\s+|the\s+)?\w+, \w+,? (?:and|&) \w+ (?:disease|syndrome)\b", re.IGNORECASE)


def _name(after: str) -> str:
    if (whole := _COMMA_NAME.match(after.lstrip())) is not None:
        return _ARTICLE.sub("", whole[0])
    end = _NAME_END.search(after)
    name = _ARTICLE.sub("", (after[:end.start()] if end else after).strip())
    name = re.sub(r"^(?:(?:this|that|it) (?:could|may|might) (?:well )?be|"
                  r"what (?:we|doctors|they) call|you(?:'ve| have)(?: got)?|(?:he|she|they)(?:'s| has"
                  r"| have)(?: got)?|(?:most |more )?(?:likely"
                  r"|probably|possibly)|has(?: got)?|have(?: got)?|having|developing|experiencing|an? episode of"
                  r"|a case of|an attack of)\s+", "",
                  name, flags=re.I)
    name = _ARTICLE.sub("", name).strip(" '\"")
    return "" if not name or _NOT_A_NAME.match(name) or len(name.split()) > 7 else name


# a list named in a sentence: "My diagnoses, in order: X, Y, Z", "my top three possibilities are: one, X; two, Y"
_LIST_PHRASE = re.compile(r"\b(?:diagnos[ie]s|possibilities|differentials?|ddx)\b[^.:?!]{0,40}?(?::"
                          r"|\bare\b:?)\s*(?P<list>[^.?!]+)",
                          re.IGNORECASE)
_SPOKEN_ITEM = re.compile(r"(?:^|(?<=[\s,;]))(one|two|three|four|five|first|second|third)\b[,:]?\s+", re.IGNORECASE)
_ITEM_WORDS = {"one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "first": "1", "second": "2",
               "third": "3"}


def _listed(text: str) -> tuple[list[str], bool]:
    """The names of a list phrase, and whether it lists the other possibilities (read after the impression)."""
    from sim.encounter.assessment._diagnoses import _split_inline

    m = _LIST_PHRASE.search(text)
    if m is None:
        return [], False
    items = _SPOKEN_ITEM.sub(lambda d: f"; {_ITEM_WORDS[d[1].lower()]}. ", m["list"]).strip(" ;")
    names = [n for n in _split_inline(re.sub(r",?\s+(?:and|then)\s+(?=\S)", ", ", items)) if len(n.split()) <= 7]
    return names, bool(_OTHER_LIST.search(text[max(0, m.start() - 30):m.start()]))


_OTHER_LIST = re.compile(r"\b(?:other|alternative|less likely|also consider|else)\W*$", re.IGNORECASE)


def prose_diagnoses(text: str) -> list[str]:
    """The names the reply gives as its impression, most likely first, once each.

    A list phrase ("my diagnoses, in order: X, Y") first; else the impression phrases in order (a name the same
    sentence gives as what it is "called" replaces the lay words before it), leaving out what the words just before
    rule out or give as someone else's worry; a list of "other possibilities" comes after them. Only where none of
    these names anything, the plainest statement ("This is a first-degree sunburn").
    """
    listed, other = _listed(text)
    if listed and not other:
        return listed
    names: list[str] = []
    for sentence in sentences(text):
        if (until := _UNTIL.search(sentence)) and (name := _ARTICLE.sub("", until["name"]).strip()):
            names.append(name)
        if _QUESTION.search(sentence):
            continue
        names.extend(n for n in _impressions(sentence, _IMPRESSION) if n.lower() not in map(str.lower, names))
    names.extend(n for n in listed if n.lower() not in map(str.lower, names))
    if not names:
        for sentence in sentences(text):
            if not _QUESTION.search(sentence):
                names.extend(n for n in _impressions(sentence, _PLAIN_IMPRESSION)
                             if n.lower() not in map(str.lower, names))
    return names


def _impressions(sentence: str, cue: re.Pattern[str]) -> list[str]:
    names: list[str] = []
    for m in cue.finditer(sentence):
        clause = _CLAUSE_BREAK.split(sentence[:m.start()])[-1]  # the words just before the impression
        if _NOT_IT.search(clause) or _GENERIC.search(clause) or _CONDITION_WORD.search(clause):
            continue
        if _WHAT_IT_COULD_MEAN.match(m[0]) and _CONDITION_WORD.search(sentence[:m.start()]):
            continue  # "If you cough blood, call 999, as that could mean a clot in the lungs": safety-netting
        rest = sentence[m.end():]
        called = _CALLED.search(rest)
        name = _name(rest[called.end():] if called and called.start() < _CALLED_WITHIN else rest)
        if name and _escalation_from(name) == [] and name.lower() not in map(str.lower, names):
            names.append(name)
    return names


_WHAT_IT_COULD_MEAN = re.compile(r"(?:could|may|might) (?:well )?(?:mean|indicate)", re.IGNORECASE)
_CALLED_WITHIN = 80  # characters: "a tear in the main artery from the heart, called an aortic dissection"


# "That's a stroke until proven otherwise", "A - Long lie after fall - risk of X"
_UNTIL = re.compile(r"(?:^|\b(?:that'?s|this is|it'?s|is|as)\s+)(?P<name>[\w' -]{3,60}?)\s+until proven otherwise",
                    re.IGNORECASE)


def _asks(parts: list[str]) -> bool:
    return any(_QUESTION.search(s) and not _CLOSING_QUESTION.search(s) for s in parts)


def asks_interview_question(text: str) -> bool:
    """Whether ``text`` still asks the patient something: an unmarked block of fields that does is mid-interview.

    A question about the patient ("is the skin sucking in between his ribs?"); not a closing check, a practical
    question after a dispatch, a heading ("How urgent is this?") or a hedged diagnosis ("dx: anaemia?").
    """
    return not _DISPATCHED.search(text) and any(
        _QUESTION.search(s) and not _CLOSING_QUESTION.search(s) and _ABOUT_THEM.search(s) for s in sentences(text))


_ABOUT_THEM = re.compile(r"\b(?:you|your|he|she|his|her|him|they|them|their)\b", re.IGNORECASE)


def is_prose_final(text: str, named: bool = False) -> bool:
    """Whether ``text`` is a final assessment in prose (the module docstring).

    ``named``: a labelled diagnoses field ("Impression: X") already names the impression.
    """
    parts = sentences(text)
    settled = _FINAL_WORDS.search(text) or _DISPATCHED.search(text)
    if any(_DEFER.search(s) for s in parts) or (_asks(parts) and not settled):
        return False
    decides = any((d := decisive(s)) and (_levels(d) or decision_escalation(_strong(d)) or decision_escalation(d)
                                          or disposition_from(d) in _DISTINCT_MEANS) for s in parts)
    # a triage level stated as a decision concludes by itself ("This is a triage level 1 emergency.")
    levelled = any((d := decisive(s)) and _levels(d) for s in parts)
    return decides and bool(named or levelled or _CONCLUDES.search(text) or prose_diagnoses(text))
