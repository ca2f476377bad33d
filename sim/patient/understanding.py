"""How the simulated patient understands the clinician: words, sentences, speech acts, intents.

Layers, each recorded on the facts it reveals:

1. **Normalisation** (all layers): lower case; the lexicon's ``words`` table maps lay and clinical
   words and abbreviations (``tummy`` -> ``abdomen``, ``bp`` -> ``blood pressure``); each word is
   Snowball-stemmed until it stops changing, which links noun, adjective and verb forms
   (dizziness / dizzy, lightheadedness / lightheaded, confusion / confused, severity / severe); a long word the
   lexicon does not know that is one slip of the keyboard from one it does is read as that word (``respelt``:
   "diziness", "headahces"), and hedges ("actually", "honestly") are dropped.
2. **Question filter**: the message is split into sentences (lines, then ``. ? ! ;``, markdown list
   markers and emphasis removed) and each is classified. A *question* (ends in ``?`` or opens like
   one: "Any fever", "Did you ...") or a *request* ("Tell me about ...", "Describe ...", "Can you
   check ...", "I'd like to know ...") may reveal facts, and so may an instruction to examine or
   observe something now ("Ask him to smile.", "Please send a photo of the rash.", "Press where it
   hurts and tell me if it's sore."); a *statement*, explanation, plan, deferral ("I'll ask about your
   family later.") or piece of advice ("Keep him warm and let me know if he gets worse.", "Check his
   sugar again in an hour.") does not, nor do the items of a list under a statement heading ("Call
   999 if you notice:" followed by "- Any blue lips"), unless an item has its own question mark. An
   item that does not ask for itself under a lead-in that asks ("Could you tell me:" followed by
   "- whether your neck is stiff") is read with the lead-in. A short topic lead-in, a manoeuvre, or a
   statement the question refers back to ("... Have you had thoughts like that?") before a question
   ("Now, your family. Has anyone had heart trouble?", "Press on the bone. Does that hurt?") is read
   together with that question (instructions and manoeuvres: ``sim.patient._instructions``). A voice agent's
   transcript loses its hesitations ("um", "uh"), and an unpunctuated run is split before the question it holds
   ("that must be worrying for you has the rash spread": ``sim.patient._speech``).
3. **Triggers** (layer ``trigger``): a fact's own trigger phrases, contiguous, in an asking sentence.
4. **Intents** (layer ``intent``): the shared lexicon (``scenarios/intents.yaml``); a fact that lists
   an intent is revealed by an asking sentence that matches one of the intent's cues. Each item of a
   bundled sentence ("When did it start, is she drinking, and has she felt hot?") is also read on its
   own (``clauses``), and what a question sets aside ("Apart from the asthma, ...") is not asked for.
5. **Model** (layer ``model``, optional, ``sim.patient.model``): a model maps the message to fact ids.

``Understanding.match`` returns the facts a message asks for and the layer of each, regardless of
``requires`` (the patient simulator applies ordering).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from scenarios.lexicon import (
    broad_intents,
    compiled_intents,
    intents_in,
    load_lexicon,
    normalise,  # noqa: F401 - re-exported: the patient simulator normalises with the same rules
    padded,
    stem,  # noqa: F401 - re-exported
    vetoed_intents,
)
from scenarios.schema import Fact, Scenario
from sim.patient._compound import cue_only_modifies, only_modifies
from sim.patient._instructions import HAVE_SOMEONE, instructs, manoeuvre
from sim.patient._speech import split_run, without_disfluencies
from sim.patient._wh import declarative_wh

Layer = Literal["trigger", "intent", "model", "volunteered", "barge_in"]
SpeechAct = Literal["question", "request", "statement"]

# ------------------------------------------------------------------------------------------ sentences

_LIST_MARK = re.compile(r"^\s*(?:[#>]+\s*|[-*+\u2022\u2023\u25e6]\s+|\(?\d{1,2}[.)]\s+|\(?[a-z][.)]\s+)+", re.I)
_EMPHASIS = re.compile(r"(\*\*|__|\*|`|~~)")
_ABBREV = re.compile(r"\b(e\.g|i\.e|dr|mr|mrs|ms|vs|approx|etc|st|no)\.$", re.I)
_SPLIT = re.compile(r"(?<=[.?!;])\s+|(?<=\?)(?=\S)")


def sentences(message: str) -> list[str]:
    """The message's sentences, markdown list markers and emphasis removed, end punctuation kept."""
    return [sentence for sentence, _ in _pieces(message)]


# A line that introduces a list ("Have you had any of these?", "Any of the following:") and a line that can be an
# item of it without a list mark ("neck stiffness,", "Passing out", "fainting?"): short, no sentence inside.
_LIST_LEAD = re.compile(r":\s*$|\b(?:any|all|some|one|none|either|each) of (?:these|those|the following|the below)\b"
                        r"|\bthe following\b|\b(?:listed )?below\s*[:?]?\s*$", re.I)
_BARE_ITEM = re.compile(r"^[^.!?:;]{1,60}[,;?]?$")


def _pieces(message: str) -> list[tuple[str, bool]]:
    """Each sentence of the message and whether it belongs to a list item.

    A list's items may come without marks, one a line, under a line that introduces them ("Have you had any of
    these:" then "neck stiffness," / "light sensitivity," / "fainting?").
    """
    out: list[tuple[str, bool]] = []
    in_list = False  # the line before introduced a list, or was an item of an unmarked one
    for raw in map(without_disfluencies, message.splitlines()):  # a transcript's "um", "uh" (``_speech``)
        item = bool(_LIST_MARK.match(raw)) and bool(_LIST_MARK.sub("", raw).strip())
        line = _EMPHASIS.sub("", _LIST_MARK.sub("", raw)).strip()
        if not line:
            in_list = False
            continue
        if not item and in_list and _BARE_ITEM.match(line) and len(line.split()) <= 12:
            out.append((line, True))
            continue
        in_list = item or bool(_LIST_LEAD.search(line))
        buf = ""
        for piece in _SPLIT.split(line):
            buf = f"{buf} {piece}".strip() if buf else piece.strip()
            if _ABBREV.search(buf):
                continue
            if buf:
                out.append((buf, item))
            buf = ""
        if buf:
            out.append((buf, item))
    return out


_FILLER = re.compile(
    r"^(?:(?:ok(?:ay)?|so|and|also|now|right|alright|all right|great|good|well|first(?:ly)?|next|then|finally|"
    r"lastly|just|quickly|but|plus|sorry|please|thanks|thank you(?: for (?:that|telling me(?: that)?|"
    r"letting me know))?|got it|i see|understood|i understand|mm+|hmm+|oh|ah|yes|no|sure|one more thing|"
    r"another (?:quick )?question|quick question|a couple of (?:quick )?questions|a few (?:quick )?questions|"
    r"(?:one|two|three) (?:more )?(?:quick )?questions?|in addition|additionally|importantly|"
    r"to (?:help me|make sure|be safe|check)[^,:]*|mr\.? \w+|mrs\.? \w+|ms\.? \w+|"
    # a hedge before the question ("I know it's awkward, but ...", "Sorry to ask, but ...")
    r"(?:i know|i realise|i realize|i appreciate|i'm sorry|sorry|this (?:might|may|could|will) (?:feel|sound|seem|be)|"
    r"it (?:might|may|could) (?:feel|sound|seem))[^,.?!:;]{0,40}?,? but(?: it's important| i need to ask)?"
    r")[\s,:\-\u2013\u2014!.]+)+",
    re.I,
)
_DEFER = re.compile(
    r"\b(?:later|in a (?:moment|minute|bit|sec(?:ond)?|while|little while)|shortly|afterwards|after (?:that|this)|"
    r"come back to|get (?:on )?to (?:that|it|those|this)|at the end|next time|in due course|once we(?:'ve| have))\b",
    re.I,
)
_FIRST_PERSON_FUTURE = re.compile(
    r"^(?:i(?:'ll| will| am going to|'m going to| plan to| want to come back)|we(?:'ll| will| are going to|"
    r"'re going to| can come back))\b", re.I)
_REQUEST = re.compile(
    r"^(?:(?:can|could|would|will) you(?: please)?(?: just)? |(?:would you mind|do you mind) |please )?"
    r"(?:tell|describe|explain|list)\b|(?:walk|talk|run|take) (?:me|us) through\b|"
    r"^(?:please )?(?:describe|explain|list|clarify|specify|confirm|mention|name|detail|outline|summari[sz]e|"
    r"share|update me|fill me in)\b|"
    r"^(?:(?:can|could|would|will) you(?: please)?(?: just)? )?(?:give|send|show|read) (?:me|us)\b|"
    r"^(?:please )?go (?:over|through)\b|"
    r"^(?:please )?let (?:me|us) know\b(?! (?:if|when|whether you (?:need|want)|straight away|immediately|right away))|"
    r"^let me (?:just |quickly |also )?(?:ask|check(?! (?:that )?(?:i|we)\b))\b|"
    r"^(?:i|we)(?:'d| would)? (?:also |just )?(?:like|love|want|need|have|must) (?:you )?to "
    r"(?:know|ask|hear|check|understand|find out|confirm|clarify|get a sense|learn|establish|be sure|make sure|"
    r"rule out)\b|"
    r"^(?:i|we)(?:'m| am| was| were) (?:also )?(?:wondering|curious|interested to know|keen to know)\b|"
    r"^(?:may|can|could|might) (?:i|we) (?:also )?(?:ask|check|know)\b|"
    r"^(?:i|we) (?:also |just )?(?:need|want|have) to (?:ask|know|check)\b|"
    r"^(?:i|we)(?:'d| would) (?:also )?like (?:some|a bit of|more) (?:information|detail)",
    re.I,
)
# An examination or a test done now is a request for its findings, whoever says it ("I'm going to listen to
# your chest now.", "Let's get an ECG.", "I'd like to order a chest X-ray.", "Open your mouth for me."); a
# plan for later ("I'll examine you once we've talked") stays a statement (``_DEFER``).
_EXAM_VERB = (r"(?:examine|listen|look|have a (?:quick )?look|take a (?:quick )?look|feel|press|palpate|"
              r"check(?! (?:that )?(?:i|we)\b)|auscultate|percuss|test|order|request|measure|perform|shine|watch|"
              r"(?:arrange|send off|run|see|do|get|take)(?!\s+(?:for\s+)?(?:you|her|him|them|us)\b)"
              r"(?!\s+(?:an?\s+|the\s+|some\s+)?(?:ambulance|paramedics?|crew|help|someone|somebody)\b))")
_ACTION = re.compile(
    r"^(?:(?:let me|let's|let us|i'd like to|i would like to|i want to|i'm going to|i am going to|i'll|i will|"
    r"we'll|we will|we're going to|we are going to|i need to|we need to|we should|i'm just going to|i'll just)"
    r"(?:\s+(?:just|now|quickly|also|first|briefly|then))*\s+" + _EXAM_VERB + r"\b|"
    r"(?:open your mouth|say ah|show me|follow my finger|squeeze my|stick out your tongue|"
    r"take a deep breath|breathe in))", re.I)
# Opening words of a question written without its question mark ("Any fever." / "Did you fall"). "What" that opens a
# plan or an explanation ("What will happen at hospital:", "What's next", "What this means") does not ask.
_PRONOUN = r"(?:you|he|she|they|we|i|it|your|his|her|their|the|there|this|that|any|anyone|anybody|anything)"
_QUESTION_START = re.compile(
    r"^(?:any|anything|anyone|anybody|ever|did|does|is|are|was|were|has|can|could|would|will|shall|how|where|which|"
    r"who|whose|why|whereabouts|roughly how|approximately how|what(?! (?:to|you should|you can|we(?:'ll| will)|"
    rf"i(?:'ll| will| recommend|'d recommend| would recommend)|happens|will happen|is going to happen|this means|next|"
    r"(?:you|i|we)(?:'ve| have)? (?:told|said|described|mentioned|explained|heard|noticed) (?:me|us|so far|today)?"
    rf")\b)(?!'s (?:going to happen|next|the plan)\b)|(?:do|have|had) {_PRONOUN}|"
    r"when (?:did|was|were|is|are|does|do|had|has|will|would|could|exactly|roughly|approximately))\b", re.I)
# what the patient needs in order to do what follows: "If you've got a thermometer, ...", "If you can, ..."
_PRECONDITION = re.compile(r"^(?:if|when) (?:you(?:'ve| have)(?: got)?|there(?:'s| is) (?:one|someone|a)|you can|"
                           r"possible|you(?:'re| are) able(?: to)?)\b[^,]{0,60},\s*", re.I)
_CONDITION_LEAD = re.compile(r"^(?:if|when|whenever) ", re.I)
# a rule about any such person or thing, not a question: "Any baby under three months with a fever needs to be seen.",
# "Any temperature like that needs a doctor." So is what any such thing is: "Any sudden pain in the testicle is ...".
_ANY_RULE = re.compile(r"^any\b(?:(?!\b(?:you|he|she|they|i|we)\b)[^?])*\b(?:needs?|should|must|ha(?:s|ve) to|ought)\b"
                       r"|^any\b[^?]*\b(?:means?|(?:is|are)\s+(?:always\s+|never\s+|usually\s+)?(?:an?\s+|the\s+)?"
                       r"(?:emergency|medical emergency|serious|urgent|worrying|concerning|dangerous|normal|common|"
                       r"expected|(?:warning\s+)?sign|red flag|reason|cause for concern))\b", re.I)
# A short fronted phrase before the question proper ("Since it started, have you had ...", "Over the last week, any
# ..."): at most six words and a comma, then a question's opening words. Not a condition or a reason ("If it gets
# worse, ...", "Because you take a blood thinner, any bang on the head needs a scan": advice, see split_run), nor
# "any time" and its kin or a relative "which"/"who" after it ("Together these fit pre-eclampsia, which is ...").
_FRONTED = re.compile(r"^(?!(?:if|when|whenever|unless|once|until|in case|should|as soon as|because|as|although|"
                      r"though|while|whereas|so that)\b)(?:[^\s,.;:!?]+\s+){0,5}[^\s,.;:!?]+,\s+"
                      r"(?!any\s*(?:time|day|way|more|longer)\b|which\b|who\b|whose\b)", re.I)
_TOPIC_LEAD = re.compile(
    r"^(?:let'?s (?:talk|move on|turn|go on|switch|focus) (?:about|to|on)|moving on to|turning to|on to|onto|"
    r"regarding|about|as for|in terms of|with regard to|what about|how about|now|next)\b", re.I)


def _strip_filler(sentence: str) -> str:
    return _FILLER.sub("", sentence.strip()).strip()


def speech_act(sentence: str) -> SpeechAct:
    """Whether one sentence asks (question or request) or only states (statement, plan, deferral)."""
    s = _PRECONDITION.sub("", _strip_filler(sentence))  # "If you've got a thermometer, take her temperature ..."
    if not s:
        return "statement"
    asks_later = bool(_DEFER.search(s)) and bool(re.search(r"\b(?:ask|talk|discuss|cover|go over|come back|"
                                                           r"get to|return|look at|check|question)", s, re.I))
    if asks_later:
        return "statement"
    if _ACTION.match(s) and not _DEFER.search(s):  # "I'm going to listen to your chest", "Let's get an ECG"
        return "request"
    if _FIRST_PERSON_FUTURE.match(s):
        return "statement"
    if s.endswith("?") or re.search(r"\?\s*[)\"'*_]*$", s):
        return "question"
    if _REQUEST.match(s) or instructs(s):
        return "request"
    if HAVE_SOMEONE.match(s):  # an instruction that is not an examination: advice
        return "statement"
    if s.endswith(":"):  # a heading or lead-in ("What to watch for:"), not a question
        return "statement"
    for head in (s, _FRONTED.sub("", s, count=1)):
        if _QUESTION_START.match(head) and not _ANY_RULE.match(head) and not declarative_wh(head):
            return "question"
    return "statement"


def asking_sentences(message: str) -> list[str]:
    """The sentences of ``message`` that ask; a short topic lead-in is prefixed to the question after it.

    The items of a list are read with the sentence the list hangs from (``_item_unit``); a question that refers
    back to the statement before it ("Some people in pain feel life isn't worth living. Have you felt like that?")
    is read with that statement.
    """
    return list(_asking(message))


@lru_cache(maxsize=65536)
def _asking(message: str) -> tuple[str, ...]:
    pieces = _pieces(message)
    parts = [sentence for sentence, _ in pieces]
    out: list[str] = []
    lead = ""  # the last sentence that is not a list item: what a list hangs from
    for i, (sentence, item) in enumerate(pieces):
        if not item:
            lead = sentence if _strip_filler(sentence) else lead
        elif lead:
            unit = _item_unit(lead, sentence)
            if unit:
                out.append(unit)
            continue
        if speech_act(sentence) == "statement":
            run = split_run(sentence)  # a transcript's unpunctuated run: "that sounds awful is she breathing okay"
            if len(run) == 1 or speech_act(run[1]) == "statement":
                continue
            # "if you push on the sore spot does it hurt": the condition is the manoeuvre the question is about
            sentence = sentence if _CONDITION_LEAD.match(_strip_filler(run[0])) else run[1]
        if i > 0 and speech_act(parts[i - 1]) == "statement" and _leads_into(_strip_filler(parts[i - 1]), sentence):
            sentence = f"{_strip_filler(parts[i - 1])} {sentence}"
        out.append(sentence)
    return tuple(out)


def _leads_into(before: str, question: str) -> bool:
    """Whether the statement ``before`` is read with the question after it.

    A topic lead-in, a short one, a manoeuvre, or what the question refers back to (``_REFERS_TO_STATEMENT``);
    never a deferral.
    """
    if not before or _DEFER.search(before):
        return False
    return bool(_TOPIC_LEAD.match(before) or len(before.split()) <= 4 or manoeuvre(before)
                or _REFERS_TO_STATEMENT.search(question))


# A question about "that" which the statement before it described ("... Have you had thoughts like that?",
# "Has anything like this happened?", "Have you felt that way?").
_REFERS_TO_STATEMENT = re.compile(r"\b(?:like (?:that|this|those|these)|(?:that|this|the same) (?:way|kind|sort)|"
                                  r"such (?:thoughts?|feelings?|ideas?|things?)|anything similar|"
                                  r"crossed your mind)\b", re.I)


def _item_unit(lead: str, item: str) -> str:
    """What one list item asks, read with the sentence the list hangs from ("" when it asks nothing).

    An item that asks for itself ("- Any rash?", "- When did it start") is read on its own; one that does not
    ("- whether your neck is stiff", "- your current doses") asks with the lead-in when the lead-in asks ("Could you
    tell me:", "Has he had any of these:", "I need a few details:"). Under a statement heading ("Things to tell the
    crew about:", "Call 999 if you notice:") an item without a question mark asks nothing.
    """
    if item.rstrip(" )\"'*_").endswith("?"):
        return item
    if _lead_asks(lead):
        # "- how alert she is": a question in statement order, asked by the lead-in, is read on its own as before
        return item if speech_act(item) != "statement" or declarative_wh(item) else f"{_strip_filler(lead)} {item}"
    if lead.rstrip(" *_").endswith(":"):
        return ""
    return item if speech_act(item) != "statement" else ""


def _lead_asks(lead: str) -> bool:
    """Whether a list's lead-in asks (a question or request, with or without its colon) or heads questions."""
    if _QUESTION_HEADING.search(lead):
        return True
    if _ADVICE_HEADING.search(lead) or declarative_wh(lead, heading=lead.rstrip(" *_").endswith(":")):
        return False
    return speech_act(lead.rstrip(" *_").rstrip(":")) != "statement"


# The heading of a list of advice or warning signs, not of questions ("Call 999 if you notice:", "Red flags:",
# "What to watch for tonight:").
_ADVICE_HEADING = re.compile(
    r"\b(?:call|ring|phone|dial|999|111|112|911|a&e|seek|go (?:to|straight)|come (?:back|in)|watch (?:for|out)|"
    r"look out|keep an eye|warning|red flags?|danger|signs?|safety|if you (?:notice|get|develop|see|have)|"
    r"if (?:he|she|they|it) (?:has|have|gets?|develops?|becomes?|starts?)|get help|emergency|straight away|"
    r"immediately|urgently|what to do|do not|don't|avoid|make sure)\b[^:]*:\s*$", re.I)
_QUESTION_HEADING = re.compile(r"\b(?:ask(?:ing)?|questions?|checks|check (?:a|some|few|these|the following)|"
                               r"(?:need|like|want) to know|tell me|details?|(?:a )?(?:few|couple of) "
                               r"(?:things|points))\b", re.I)


# The items of a bundled sentence: split before a question word after a comma or a conjunction ("When did it
# start, where is it, and does it spread?", "Is it swollen and can you walk on it?"), at a slash, and before the
# last item of a list ("..., or weak legs?"); "or any" without a comma usually continues a list ("like trouble
# going or any accidents").
_QWORD = (r"(?:did|do|does|is|are|was|were|has|have|had|can|could|will|would|any|anything|anyone|how|what|when|where|"
          r"which|who|why|whether)")
_CLAUSE = re.compile(rf",\s*(?:(?:and|or|but|plus|also|then)\s+)?(?={_QWORD}\b)|"
                     rf"\s+(?:and|or|but|plus)\s+(?!any)(?={_QWORD}\b)|\s+/\s+|,\s+(?:and|or)\s+", re.I)
# An item that asks a question of its own ("..., and has she felt hot?") is read without the rest of the sentence;
# one that continues a list ("..., or any accidents?", "..., or at rest?") is not; one that asks about what the
# sentence named before ("Does the eye hurt, or is it itchy?") keeps the vetoes that reach into it.
_OWN_QUESTION = re.compile(r"^(?:(?:and|or|but|plus|also|then)\s+)*(?:did|do|does|is|are|was|were|has|have|had|can|"
                           r"could|will|would|how|what|when|where|which|who|why|whether)\b", re.I)
_REFERS_BACK = re.compile(r"^(?:\S+\s+){0,4}?(?:it|its|it's|that|this|they|them|those|these)\b", re.I)


# What a question sets aside is not asked for ("Apart from the blood pressure, any other conditions?").
_EXCEPT = re.compile(r"\b(?:apart from|aside from|other than|besides|except(?: for)?) (?:the |your |his |her |their )?"
                     r"[\w' -]{1,30}?(?=,|\?|$| (?:do|does|did|is|are|have|has|any|anything)\b)", re.I)


def clauses(sentence: str) -> list[str]:
    """The questions bundled in one asking sentence, in order (the sentence itself when it asks one thing)."""
    return [c.strip() for c in _CLAUSE.split(sentence) if c.strip()] or [sentence]


# ------------------------------------------------------------------------------------------ matching


# Words too common to say which of several facts a question means (stemmed, as ``padded`` gives them).
_STOP = frozenset(padded("""
a about after again all also am an and any anyth anything are as at be been before being but by can could did do
does doing done for from get got had has have having he her here him his how i if in into is it its just like
me more much my no not now of on one or other our out over please since so some still tell than that the their
them then there these they this those to too up us very was we were what when where which while who why will
with would yes you your yourself feel feeling felt pain hurt any ever notice noticed problem problems
""").split())
# Verbs of asking, looking and measuring, and vague nouns: they do not say which of several facts a question means
# either ("take her temperature" asks for the reading, not how it was taken; "have a look at your testicles" is not
# "do they look different"; "this kind of pain" is not "kind of sideways").
_GENERIC = frozenset(padded("""
take took taken look looked check checked tell told let know see saw seen manage managed say said
kind sort type bit lot thing things way
""").split())


# The words of open questions ("Any medicines?", "Any medical problems?", "Anything else?"): a trigger made of
# nothing else does not ask for a fact specifically (``Understanding.specific``).
_OPEN_WORDS = frozenset(padded("""
medicine medicines medication medications tablet tablets pill pills prescription prescriptions drug drugs
medical history past problem problems condition conditions health illness illnesses issue issues else other
symptom symptoms going happening matter wrong regular regularly
""").split())


@dataclass(frozen=True)
class Layers:
    """Which deterministic layers are on (all by default; the bench switches them one by one)."""

    triggers: bool = True
    intents: bool = True
    question_filter: bool = True


class Understanding:
    """The deterministic layers for one scenario: message -> {fact id: layer} (``requires`` ignored)."""

    def __init__(self, scenario: Scenario, *, layers: Layers = Layers()) -> None:
        self.scenario = scenario
        self.layers = layers
        self._triggers: list[tuple[Fact, list[str]]] = [
            (fact, [p for p in (padded(t) for t in fact.triggers) if p]) for fact in scenario.information_tree
        ]
        self._own_words = {f.id: set(padded(" ".join([*f.triggers, f.answer])).split()) - _STOP - _GENERIC
                           for f in scenario.information_tree}
        self._topic_cache: dict[str, set[str]] | None = None

    def units(self, message: str) -> list[str]:
        """What is matched: the asking sentences, or the whole message without the question filter."""
        if self.layers.question_filter:
            return asking_sentences(message)
        return [message]

    def match(self, message: str) -> dict[str, Layer]:
        """Fact id -> layer for every fact ``message`` asks for, over its asking sentences (first layer wins)."""
        found: dict[str, Layer] = {}
        for unit in self.units(message):
            for fid, layer in self._match_unit(unit).items():
                found.setdefault(fid, layer)
        return found

    def match_by_unit(self, message: str) -> list[tuple[str, dict[str, Layer]]]:
        """Each asking sentence (or the whole message without the question filter) and the facts it asks for."""
        return [(unit, self._match_unit(unit)) for unit in self.units(message)]

    def specific(self, message: str) -> set[str]:
        """The facts ``message`` asks for *specifically*: by a trigger or by an intent that is not ``broad``.

        An open question ("Anything else going on?", "Any medicines?": the lexicon's ``broad`` intents) asks for
        every fact of its intent at once, and a patient with poor recall or a minimiser answers it without the
        critical facts or the red flags (``sim.patient.persona``). A trigger made only of the words of open questions
        (``_OPEN_WORDS``: "medicines", "medical history") is not specific either.
        ``requires`` is ignored, as in ``match``.
        """
        return {fid for unit in self.units(message) for fid in self._match_unit(unit, specific_only=True)}

    def _match_unit(self, unit: str, *, specific_only: bool = False) -> dict[str, Layer]:
        """The facts one asking sentence reveals: the sentence as a whole, and each of its items on its own.

        A bundled question ("How's she breathing, is she drinking, and has she felt hot?") asks each item for
        itself: a veto in one item does not silence another ("drinking" vetoes a "hot" that means a hot drink,
        not the fever asked in the third item), and the words of one item do not choose between the facts of
        another's intent. The sentence's vetoes still hold in an item that continues a list ("..., like trouble
        going, or any accidents?"), and those that reach into an item that asks about what was named before
        ("Does the eye hurt, or is it itchy?"). The whole sentence then adds the intents whose words no single
        item holds ("How often are you going, and what does the urine look like?").
        """
        unit = _EXCEPT.sub(" ", unit) if self.layers.question_filter else unit
        parts = clauses(unit) if self.layers.question_filter else []
        if len(parts) < 2:
            return self._match_text(unit, specific_only=specific_only)
        vetoed = vetoed_intents(unit)
        found: dict[str, Layer] = {}
        decided: set[str] = set()
        for k, part in enumerate(parts):
            held = self._held(unit, part, vetoed) if k else set()  # the first item continues nothing
            decided |= intents_in(part) - held
            for fid, layer in self._match_text(part, specific_only=specific_only, held=held).items():
                found.setdefault(fid, layer)
        for fid, layer in self._match_text(unit, specific_only=specific_only, skip=decided).items():
            found.setdefault(fid, layer)
        return found

    @staticmethod
    def _held(sentence: str, item: str, vetoed: set[str]) -> set[str]:
        """The sentence's vetoes that still hold in one of its later items (see ``_OWN_QUESTION``)."""
        if not _OWN_QUESTION.match(item):
            return vetoed
        if not _REFERS_BACK.match(item):
            return set()
        own, text = padded(item), padded(sentence)
        return {i for i in vetoed
                if any(v.hit(text) and any(p in own for p in v.phrases) for v in compiled_intents()[i][1])}

    def _match_text(self, unit: str, *, specific_only: bool = False, skip: frozenset[str] | set[str] = frozenset(),
                    held: set[str] | None = None) -> dict[str, Layer]:
        """The facts one asking sentence or question reveals (fact id -> the layer that matched).

        Rules that keep one question from revealing unrelated facts: a fact whose every intent is vetoed in this
        sentence ("allergic to any medicines" vetoes ``medications``) is not revealed by its one-word triggers either
        (a phrase still counts); a trigger or cue that only modifies the head of a compound does not count
        (``_compound``); when one matched intent belongs to several facts ("Can he lift both arms?" matches
        ``neuro_deficit``, which the face, arm and speech facts share), ``_tie_break`` picks among them.
        """
        text = padded(unit)
        vetoed = vetoed_intents(unit) | (held or set()) if self.layers.intents else set()
        intents = intents_in(unit) - skip - vetoed if self.layers.intents else set()
        if specific_only:
            intents -= broad_intents()
        found: dict[str, Layer] = {}
        by_intent: dict[str, list[Fact]] = {}
        words: dict[str, set[str]] = {}  # the words of each fact's one-word triggers that fired (all of its hits)
        for fact, triggers in self._triggers:
            hits = [t for t in triggers if t in text and not only_modifies(t, unit, self._own_words[fact.id])] \
                if self.layers.triggers else []  # not "blood pressure" in "blood pressure tablets" (``_compound``)
            if specific_only:  # a trigger of open-question words only ("medications") is not specific
                hits = [t for t in hits if set(t.split()) - _STOP - _OPEN_WORDS]
            # a veto silences a fact's one-word triggers too ("allergic to any medicines"), never its phrases
            if hits and (any(len(t.split()) > 1 for t in hits) or not (fact.intents and set(fact.intents) <= vetoed)):
                found[fact.id] = "trigger"
                if all(len(t.split()) == 1 for t in hits):
                    words[fact.id] = {t.strip() for t in hits}
            for iid in intents.intersection(fact.intents):  # trigger-matched facts take part in the tie-break
                if not cue_only_modifies(iid, unit, self._own_words[fact.id]):  # "blood pressure tablets"
                    by_intent.setdefault(iid, []).append(fact)
        by_topic: set[str] = set()  # the facts the sentence's intents ask about
        for iid, facts in by_intent.items():
            triggered = any(found.get(f.id) == "trigger" for f in facts)
            fired = {w for f in facts for w in words.get(f.id, ())}  # "testicle" said the testicle: not a cue word
            for fact in self._tie_break(iid, facts, text, triggered=triggered, fired=fired) if len(facts) > 1 \
                    else facts:
                found.setdefault(fact.id, "intent")
                by_topic.add(fact.id)
        return {fid: layer for fid, layer in found.items() if not self._only_named(fid, words, by_topic, intents)}

    def _only_named(self, fid: str, words: dict[str, set[str]], by_topic: set[str], intents: set[str]) -> bool:
        """Whether ``fid`` fired only on words of a fact the intents ask, in a question on none of its topics.

        "Had a stomach ulcer?" asks the history; "stomach" also triggers the belly pain, which it does not ask.
        """
        fired = words.get(fid)
        if not fired or fid in by_topic:
            return False
        if self._wide(intents) & self._topics()[fid]:
            return False
        return any(fired <= self._own_words[other] for other in by_topic if other != fid)

    def _tie_break(self, iid: str, facts: list[Fact], text: str, *, triggered: bool = False,
                   fired: set[str] | frozenset[str] = frozenset()) -> list[Fact]:
        """Which of the facts that share one matched intent the sentence (padded ``text``) means.

        Words beyond those that made the intent match say it; when nothing more is said and one of the facts was
        ``triggered`` by its own trigger, that trigger has said it ("How many puffs of the blue inhaler?" is the
        reliever, not the preventer too).
        """
        cue_words = {w for c in compiled_intents()[iid][0] if c.hit(text) for p in c.phrases for w in p.split()}
        said = set(text.split()) - _STOP - _GENERIC - cue_words
        specific = [f for f in facts if said & self._own_words[f.id]]
        tied = {f.id for f in facts}
        # nothing more specific said: the basic fact, not its follow-up detail ("Any black stools?" reveals the
        # melaena, not how much of it there was)
        # the cue's own words name some of the facts and not the others ("Does one testicle sit higher?": the
        # position, whose answer says it sits higher, not the testicle's pain that "testicle" triggered)
        cued = [f for f in facts if (cue_words - fired) & self._own_words[f.id]]
        if specific or (triggered and not 0 < len(cued) < len(facts)):
            return specific
        if cued and len(cued) < len(facts):
            facts = cued
        return [f for f in facts if f.requires not in tied] or facts

    def recognised(self, message: str) -> set[str]:
        """The lexicon intents the message's asking sentences ask for (vetoed ones left out).

        Whether or not the scenario has a fact for them.
        """
        if not self.layers.intents:
            return set()
        return {iid for unit in self.units(message) for iid in intents_in(unit)}

    def near(self, intents: set[str]) -> list[str]:
        """Facts about one of ``intents`` in a wider sense.

        Listed by the fact or matched by one of its triggers, or about an intent of the same ``related`` group of
        the lexicon (spotting is vaginal_bleeding; "any blood when you wipe?" asks blood_in_stool; a near-faint is
        dizziness_fainting, "have you blacked out?" asks loss_of_consciousness). A question about such an intent
        must not be answered with a closed-world "no".
        """
        wide = self._wide(intents)
        return [fid for fid, topics in self._topics().items() if topics & wide]

    @staticmethod
    def _wide(intents: set[str]) -> set[str]:
        """``intents`` and every intent that shares a ``related`` group of the lexicon with one of them."""
        lexicon = load_lexicon()
        return set().union(*(lexicon.related_to(i) for i in intents)) if intents else set()

    def _topics(self) -> dict[str, set[str]]:
        if self._topic_cache is None:
            self._topic_cache = {f.id: set(f.intents).union(*(intents_in(t) for t in f.triggers))
                                 for f in self.scenario.information_tree}
        return self._topic_cache

    def explain(self, message: str) -> list[str]:
        """Why each fact was matched: the sentence and the trigger or intent cue that fired (for tuning)."""
        out: list[str] = []
        units = self.units(message)
        if self.layers.question_filter:  # each question of a bundled sentence is read on its own too
            units += [c for u in units if len(clauses(u)) > 1 for c in clauses(_EXCEPT.sub(" ", u))]
        for unit in units:
            text = padded(unit)
            for fact, triggers in self._triggers:
                hit = next((t for t in triggers if t in text), None) if self.layers.triggers else None
                if hit is not None:
                    out.append(f"{fact.id} <- trigger '{hit.strip()}' in {unit!r}")
                    continue
                for iid in fact.intents if self.layers.intents else []:
                    cues, vetoes = compiled_intents()[iid]
                    cue = next((c for c in cues if c.hit(text)), None)
                    if cue is not None and not any(v.hit(text) for v in vetoes):
                        out.append(f"{fact.id} <- intent {iid} cue {[p.strip() for p in cue.phrases]} in {unit!r}")
        return out

    def facts(self, ids: Iterable[str]) -> list[Fact]:
        """The scenario's facts whose ids are in ``ids``, in tree order."""
        wanted = set(ids)
        return [f for f in self.scenario.information_tree if f.id in wanted]
