"""Reading the free text of an AgentClinic NEJM case: the patient's brief, the test results, the question.

AgentClinic wrote these fields with a model, for actors, so they come in many shapes: prose, " - " bullet lists on
one line, numbered lists, markdown bold, "Label: text" items and headings ("Laboratory testing results:"), with notes
to the actor around the story ("For your role as a patient, ...", "Remember, you are not aware of your diagnosis").
Here they are cut into statements; the meaning of each is ``_nejm.py``'s business.

- :func:`patient_statements`: the brief to the patient actor (``patient_info``) as (label, sentence) pairs: the
  lead-in to the actor is cut ("For your role as a patient, here's what you need to know:"), and so are the
  sentences that speak to the actor rather than about the patient ("Remember, ...", "your character", "portray",
  "you are not aware of your diagnosis or the test results", "your knowledge is limited to ...") and bracketed
  notes to the actor ("(which you're not aware of, but might influence your portrayal)"). A heading or a label
  ("Symptoms:", "**Medical History**: ...") labels the items under it; an item that only restates the age or sex
  ("Age: 66 years old", "Gender: Female") is left out (the profile has them).
- :func:`finding_items`: the test results (``physical_exams``) as (heading, name, value) items: a preamble about
  the source ("The information extracted from the case report ... includes:", "The patient underwent the
  following tests:") and sentences about the text itself ("The provided text does not contain specific instrument
  readings ...") are cut; bullets and numbered items are items; "Name: value" gives the name; a heading, also one
  left at the end of the previous item ("... Negative Imaging results:"), is the heading of the items after it;
  "Ultrasound of the abdomen - Result: Normal" is one item.
- :func:`exam_sentences`: the sentences of the NEJM question that report the physical examination ("On physical
  examination, ..."), without references to the image's panels ("(left)", "(Panel A)").
"""

from __future__ import annotations

import re

from scenarios.importers._person import VERBS, is_verb_form
from scenarios.importers._text import sentences, words

_MARKDOWN = re.compile(r"\*\*|__|(?<!\w)#{1,6}\s+")
# The lead-in to the actor before the story: "For your role as a patient,", "As a patient actor, you should be aware
# of the following symptoms and history:", "For the patient actor portraying the baby girl:".
_LEAD_IN = re.compile(r"^(?:(?:for|in|as)\b[^.:]{0,160}?\b(?:role|actor|portray\w*)\b[^.:,]*[:,]\s*)", re.I)
# "You are playing the role of a 75-year-old woman" -> "You are a 75-year-old woman".
_PLAYING = re.compile(r"^(you are|you're)\s+(?:playing|portraying|acting as|taking on)\s+"
                      r"(?:the\s+(?:role|part)\s+of\s+)?", re.I)
_SAY_THIS = re.compile(r"^(?:mention|describe|report|say|explain|tell (?:the doctor|them|the physician))\s+"
                       r"(?:that\s+)?", re.I)
_ING_START = re.compile(r"^(?!(?:during|including|regarding|following|concerning|considering|according|morning|"
                        r"evening|nothing|something|everything|anything)\b)[A-Za-z]{3,}ing\b", re.I)
_FINITE = frozenset("is are was were has have had does do did can could will would am".split())
_BRIEFING = re.compile(r"^[^.:]{0,160}?\b(?:convey|need to know|should (?:be aware|know)|here'?s (?:the|what|some|"
                       r"a)|minimal information|information you need|portray\w*|play(?:ing)? the role)\b[^.:]*:\s*",
                       re.I)
_ACTOR_NOTE = re.compile(
    r"^\W*remember\b|\b(?:your character|the character|portray\w*|actor|role[- ]?play\w*|your role|(?:this|the) "
    r"scenario|you should (?:act|pretend|behave|respond|answer|speak|say|appear)|act as (?:though|if)|"
    r"simulat\w+|your knowledge is limited|stay in character)\b"
    r"|\b(?:you are|you're|you aren't|you are not|you do not|you don't)\s+(?:not\s+)?(?:un)?aware of\s+(?:your|the|any)"
    r"\s+(?:(?:specific|exact|technical|medical)\s+)*(?:diagnosis|test results?|results|details of|findings|terms)\b"
    r"|\b(?:do not|don't|does not|doesn't)\s+know\s+(?:your|the)\s+(?:(?:specific|exact|technical)\s+)*"
    r"(?:diagnosis|medical terms?)\b", re.I)
_NOTE_IN_BRACKETS = re.compile(r"\s*\([^()]*\b(?:aware|portray\w*|actor|your role|not provided|not mentioned|"
                               r"in the text|not specified|medical terms?|as the patient|the scenario)\b[^()]*\)", re.I)
# Where one item of a list ends and the next begins: " - " (not a range "120 - 250"), "1. " / "2) ", "•", a line end.
_ITEM_BREAK = re.compile(r"\s+-\s+(?!\d)|(?<!\d)\s+-\s+|(?:^|\s+)\d{1,2}[.)]\s+(?=[A-Z(])|\s*[•\u2022]\s*|\s*\n+\s*")
_LABELLED = re.compile(r"^(?P<label>[A-Z][^:.!?]{0,60}?)\s*:\s*(?P<rest>.*)$", re.S)
_PROFILE_LABEL = re.compile(r"^(?:age|gender|sex|name|patient|demographics?)\b", re.I)
_HEADING_VERB = re.compile(r"\s+(?:indicated|showed|revealed|demonstrated|included|includes?|were|are|was|is)$", re.I)
_SOURCE_PREAMBLE = re.compile(r"^[^:]{0,240}?\b(?:extracted|case report|instrument\w*|information|underwent the "
                              r"following|the following (?:tests|results|studies|information|investigations)|"
                              r"provided)\b[^:]*:\s*", re.I)
# What a row of results gives that is no test: the patient's age, history or symptoms, restated.
_NOT_A_TEST = re.compile(r"^(?:the\s+)?(?:patient'?s?\s+)?(?:age|sex|gender|demographics|(?:relevant\s+|past\s+)?"
                         r"(?:medical\s+)?history|(?:presenting\s+|current\s+)?symptoms?|(?:presenting|chief)\s+"
                         r"complaint|diagnosis)$", re.I)
_ABOUT_THE_TEXT = re.compile(
    r"\b(?:the (?:provided |given |above |original )?(?:text|case report|passage|description)|instrument reader|"
    r"for an? (?:instrument|actor)|(?:it|this) (?:only )?(?:describes|mentions|focuses)|cannot extract|instrument "
    r"readings?|provided information|not detailed|no (?:numerical|measurable|specific|"
    r"further|additional) (?:test|instrument|results?|readings?|values?|data|details)|there are no (?:details|"
    r"specific|test|instrument))\b|^(?:there (?:are|is) )?no\b[^.]*\b(?:results?|readings?|values?|data|information|"
    r"details)\b[^.]*\b(?:mentioned|provided|given|available|reported|included)\b|\bthe information (?:provided|"
    r"given)\b|\b(?:does|do) not (?:include|contain|provide|mention|list)\b[^.]*\b(?:readings?|results?|values?|"
    r"measurements?)\b", re.I)
_GENERIC_NAME = re.compile(r"^(?:results?|findings?|interpretation|impression|outcome|report)$", re.I)
_PANEL_REF = re.compile(r"\s*\((?:(?:left|right|middle|center|centre|top|bottom|upper|lower|inset|arrows?|"
                        r"arrowheads?|asterisks?|panels?\s+[A-Z](?:\s*(?:,|and|-|to)\s*[A-Z])*|[A-Z](?:\s*(?:,|and|-)"
                        r"\s*[A-Z])*)(?:\s+(?:panel|image|and|,)\s*(?:left|right|middle|[A-Z])?)*)\)", re.I)
_EXAM_SENTENCE = re.compile(r"\b(?:physical (?:exam|examination)|on (?:exam|examination|palpation|auscultation|"
                            r"inspection)|examination (?:revealed|showed|was notable|of the|found)|(?:was|were) "
                            r"noted on examination)\b", re.I)
_NOT_EXAM = re.compile(r"\b(?:shown|image|photograph|figure|biops\w*|computed tomography|ct|mri|magnetic resonance|"
                       r"radiograph\w*|x-ray|ultraso\w*|laborator\w*|histolog\w*|patholog\w*|stain\w*|dermoscop\w*|"
                       r"endoscop\w*|catheteri\w*)\b", re.I)


def _plain(text: str) -> str:
    return _MARKDOWN.sub("", text.replace("\u2019", "'").replace("\u2018", "'").replace("\r", ""))


def strip_panel_refs(text: str) -> str:
    """``... on the cheeks (left).`` -> ``... on the cheeks.``: references to the image's panels go."""
    return " ".join(_PANEL_REF.sub("", text).split())


def _items(text: str) -> list[str]:
    return [" ".join(p.strip().lstrip("-\u2022*").split()) for p in _ITEM_BREAK.split(text) if p and p.strip(" -*")]


def _cut_lead_in(text: str) -> str:
    text = _PLAYING.sub(r"\1 ", text.strip().lstrip("-\u2022* "), count=1)
    for pattern in (_LEAD_IN, _BRIEFING, _LEAD_IN, _BRIEFING):
        text = pattern.sub("", text, count=1).strip().lstrip("-\u2022* ")
    return text[:1].upper() + text[1:]


def _said_by_patient(sentence: str) -> str:
    """An instruction to say something, or a bare -ing phrase, as a statement of the patient's.

    "Mention noticing an unusual indentation of your eyelids" / "Experiencing painful swelling in your arms" ->
    "You've been noticing ..." / "You've been experiencing ...", in the brief's own second person.
    """
    text = _SAY_THIS.sub("", sentence, count=1)
    first = words(text)[0] if words(text) else ""
    base = first[:-3]
    progressive = any(b in VERBS for b in (base, base + "e", base[:-1] if base[-1:] == base[-2:-1] else base))
    if _ING_START.match(text) and progressive and not any(w in _FINITE or is_verb_form(w) for w in words(text)[1:]):
        return f"You've been {text[:1].lower()}{text[1:]}"
    return text if text != sentence else sentence


def actor_note(sentence: str) -> bool:
    """Whether a sentence of the brief speaks to the actor rather than about the patient (module docstring)."""
    return bool(_ACTOR_NOTE.search(sentence))


def patient_statements(info: str) -> list[tuple[str, str]]:
    """The patient's brief as (label, sentence) pairs, in order ("" when no heading or label says what it is)."""
    text = _NOTE_IN_BRACKETS.sub("", _cut_lead_in(_plain(info)))
    out: list[tuple[str, str]] = []
    heading = ""
    for item in _items(text):
        item = _cut_lead_in(item)
        label, body = "", item
        m = _LABELLED.match(item)
        if m and len(words(m.group("label"))) <= 10 and not re.search(r"\b(?:you|your|i|my)\b", m.group("label"),
                                                                   re.I):
            label, body = m.group("label").strip(), m.group("rest").strip()
            if not body:  # a heading: it labels what follows
                heading = label
                continue
            if _PROFILE_LABEL.match(label) and len(words(body)) <= 4:
                continue
        for sentence in sentences(body):
            if actor_note(sentence) or not words(sentence):
                continue
            out.append((label or heading, _said_by_patient(sentence.rstrip(":").strip())))
    return out


def _trailing_heading(item: str) -> tuple[str, str | None]:
    """``Negative Imaging results:`` -> (``Negative``, ``Imaging results``): a heading left at an item's end."""
    if not item.endswith(":") or item.count(":") < 2:  # one colon at the end: the item is a heading of its own
        return item, None
    body = item[:-1].rstrip()
    tokens = body.split(" ")
    for start in range(len(tokens) - 1, max(0, len(tokens) - 6), -1):  # the shortest capitalised ending
        if tokens[start][:1].isupper():
            head = " ".join(tokens[start:])
            rest = " ".join(tokens[:start]).rstrip()
            return rest, head
    return item, None


def _heading_name(heading: str) -> str:
    return re.sub(r"^the\s+", "", _HEADING_VERB.sub("", heading.strip().rstrip(":")).strip(), flags=re.I)


def finding_items(text: str) -> list[tuple[str, str, str]]:
    """The test results as (heading, name, value) items ("" for a heading or name not given); module docstring."""
    plain = _NOTE_IN_BRACKETS.sub("", _plain(text)).strip()
    plain = _SOURCE_PREAMBLE.sub("", plain, count=1) if _SOURCE_PREAMBLE.match(plain) and \
        len(plain.split(":", 1)[0]) < 240 else plain
    out: list[tuple[str, str, str]] = []
    heading = ""
    for raw in _items(plain):
        item, trailing = _trailing_heading(raw)
        if item.endswith(":") and len(words(item)) <= 8:  # a heading of its own
            heading = _heading_name(item)
            continue
        if item:
            name, value = "", item
            m = _LABELLED.match(item)
            if m and len(words(m.group("label"))) <= 10:
                name, value = m.group("label").strip(), m.group("rest").strip()
            kept = [s for s in sentences(value) if not _ABOUT_THE_TEXT.search(s)] if value else []
            value = " ".join(kept).strip()
            if value and _GENERIC_NAME.match(name) and out and not out[-1][1]:
                prev = out.pop()  # "Ultrasound of the abdomen - Result: Normal"
                out.append((prev[0], prev[2].rstrip(":. "), value))
            elif value and not (name and (_ABOUT_THE_TEXT.search(name) or _NOT_A_TEST.match(name))):
                out.append((heading, name, value))
        if trailing:
            heading = _heading_name(trailing)
    return out


def exam_sentences(question: str) -> list[str]:
    """The question's sentences that report the physical examination (not a test, not the image)."""
    out = []
    for s in sentences(_plain(question)):
        if _EXAM_SENTENCE.search(s) and not _NOT_EXAM.search(s):
            out.append(strip_panel_refs(s))
    return out
