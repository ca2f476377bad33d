"""The facts of an AgentClinic OSCE case's ``Patient_Actor`` fields: history, symptoms, past and social history.

Who answers (``_Voice``: the patient in the first person, or for a child under ``CARER_BELOW_AGE`` the carer),
what a field or a sentence is about (``_FIELDS`` and ``_content_intents``: the lexicon's cues and the words a
write-up uses), and one fact per history sentence, secondary symptom or item of the other fields. The mapping is
in ``_agentclinic.py``'s docstring (``information_tree``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from scenarios.importers._common import slug
from scenarios.importers._demographics import DEFAULT_AGE
from scenarios.importers._osce_sections import _Fact, _items, not_provided
from scenarios.importers._text import STOPWORDS, WEAK_WORDS, humanise, is_usable_trigger, lower_first, rough_stem, words
from scenarios.importers._voice import carer_voice, patient_words
from scenarios.lexicon import intents_in as lexicon_intents_in

CARER_BELOW_AGE = 12  # a younger patient's history is given by the carer who brings them

# Patient_Actor field (humanised, matched by substring) -> fact id prefix, category, the intents every fact
# of the field answers, and the field's own trigger phrases.
_FIELDS: list[tuple[str, str, str, list[str], list[str]]] = [
    ("past medical", "pmh", "past_history", ["medical_history"], ["medical history", "past medical history",
                                                                  "medical conditions", "health problems"]),
    ("surgical", "surgical", "past_history", ["medical_history"], ["operations", "surgical history"]),
    ("social", "social", "social", [], ["social history"]),
    ("review of systems", "ros", "symptoms", ["other_symptoms"], ["review of systems"]),
    ("medication", "medication", "medications", ["medications"], ["medications", "medicines"]),
    ("drug history", "medication", "medications", ["medications"], ["medications", "medicines"]),
    ("allerg", "allergy", "allergies", ["allergies"], ["allergies", "allergic"]),
    ("family", "family", "family_history", ["family_history"], ["family history"]),
    ("obstetric", "obstetric", "obstetric", ["pregnancy_lmp"], ["obstetric history", "pregnancies"]),
    ("gyn", "gynae", "obstetric", ["pregnancy_lmp"], ["gynaecological history", "periods"]),
    ("menstrual", "menstrual", "obstetric", ["pregnancy_lmp"], ["periods", "menstrual history"]),
    ("immuni", "vaccination", "past_history", ["vaccinations"], ["immunisations", "vaccinations"]),
    ("vaccin", "vaccination", "past_history", ["vaccinations"], ["immunisations", "vaccinations"]),
    ("birth", "birth", "past_history", ["birth_history"], ["birth history"]),
    ("perinatal", "birth", "past_history", ["birth_history"], ["birth history"]),
    ("development", "development", "history", ["medical_history"], ["development", "milestones"]),
    ("diet", "diet", "social", ["eating_drinking"], ["diet"]),
    ("nutrition", "diet", "social", ["eating_drinking"], ["diet"]),
]

# What a sentence of the history is about, beyond the lexicon's own cues (which are written for
# questions): words a write-up uses for the timing, the course, the patient's life and treatments.
_CONTENT_INTENTS: list[tuple[re.Pattern[str], str]] = [(re.compile(p, re.I), i) for p, i in [
    (r"\b(?:\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|several|few|past|last)[- ]"
     r"(?:hours?|days?|weeks?|months?|years?)\b|\bsince\b|\bago\b|\bhistory of\b|\bonset\b|\b(?:yesterday|"
     r"overnight|this morning|last night|earlier today)\b", "onset_timing"),
    (r"\b(?:wors|progress|improv|better|gradual|persist|intermittent|episod|constant|resolv|recurr|fluctuat|"
     r"spread|increas(?:ed|ing) in)", "course"),
    (r"\b(?:smok|tobacco|cigar|vap(?:e|ing)|pack[- ]years?)", "smoking"),
    (r"\b(?:alcohol|drinks?\b|drinking|wine|beer|spirits|ethanol|etoh|illicit|recreational|cocaine|heroin|"
     r"cannabis|marijuana|intravenous drug|iv drug|substance)", "alcohol_drugs"),
    (r"\b(?:works?\b|worked|working|job|employ|student|school|college|university|retired|occupation|profession|"
     r"teacher|nurse|farmer|engineer|manager|designer|worker|driver|accountant|lawyer|clerk|soldier|"
     r"military|construction|office)", "occupation"),
    (r"\b(?:lives?\b|living|married|single|divorced|widow|partner|husband|wife|children|alone|home|"
     r"nursing home|care home|hospice|homeless)", "social_living"),
    (r"\b(?:travel|trip|abroad|camping|hiking|vacation|holiday)", "travel"),
    (r"\b(?:sexual|sexually|intercourse|condom|partners)\b", "sexual_history"),
    (r"\b(?:tak(?:es|ing)|medications?|medicines?|treated with|therapy|prescribed|tablets?|inhaler|insulin|"
     r"\d+\s*mg|contracepti|pills?)\b", "medications"),
    (r"\ballerg", "allergies"),
    (r"\b(?:history of|diagnosed|known|underlying|chronic|previous|prior)\b", "medical_history"),
    (r"\b(?:surgery|operation|operated|resection|appendectomy|cholecystectomy|hysterectomy|transplant)",
     "medical_history"),
    (r"\b(?:immuni[sz]|vaccin)", "vaccinations"),
    (r"\b(?:born|delivery|delivered|gestation|apgar|birth weight)\b", "birth_history"),
    (r"\b(?:last menstrual|periods?|menstrua|menses|pregnan|gravida|g\dp\d)\b", "pregnancy_lmp"),
    (r"\b(?:fatigue|tired|energy|malaise|lethargy|weak(?:ness)?)\b", "other_symptoms"),
    (r"\b(?:appetite|eating|feeding)\b", "eating_drinking"),
]]
# Intents that only say what kind of statement it is: they never make a fact about something else.
_NOT_FROM_HISTORY_PMH = {"onset_timing", "course"}


def _content_intents(text: str) -> list[str]:
    """The lexicon intents a statement is about (its cues in the text), then the write-up words above."""
    found = sorted(lexicon_intents_in(text))
    if "allergies" in found and not re.search(r"allerg|anaphyla", text, re.I):  # "heat intolerance" is no allergy
        found.remove("allergies")
    for pattern, iid in _CONTENT_INTENTS:
        if iid not in found and pattern.search(text):
            found.append(iid)
    return found


def _content_stems(text: str, filler: frozenset[str] | set[str]) -> set[str]:
    return {rough_stem(w) for w in words(text) if w not in filler and len(w) >= 3 and not w.isdigit()}


# --- the patient's voice --------------------------------------------------------------------------

@dataclass(frozen=True)
class _Voice:
    """Who answers: the patient (first person) or, for a child, the carer (``my son``, ``he``)."""

    carer: bool
    child: str = ""  # "son", "daughter", "baby", "child"

    def say(self, sentence: str) -> str:
        return carer_voice(sentence, self.child) if self.carer else patient_words(sentence)


def _voice(profile: dict[str, Any]) -> _Voice:
    age, sex = profile.get("age", DEFAULT_AGE), profile.get("sex")
    if age >= CARER_BELOW_AGE:
        return _Voice(carer=False)
    child = "baby" if age < 1 else "son" if sex == "male" else "daughter" if sex == "female" else "child"
    return _Voice(carer=True, child=child)


# --- reading the patient's fields --------------------------------------------------------------

def _field_facts(name: str, value: Any, voice: _Voice) -> list[_Fact]:
    prefix, category, own_intents, own = slug(name, 16) or "item", "history", ["presenting_complaint"], \
        [t for t in [name] if is_usable_trigger(t)]
    for needle, pre, cat, intents, triggers in _FIELDS:
        if needle in name:
            prefix, category, own_intents, own = pre, cat, intents, triggers
            break
    facts: list[_Fact] = []
    for s in _items(value):
        if not_provided(s):
            continue
        intents = [i for i in _content_intents(s) if i not in _NOT_FROM_HISTORY_PMH]
        if category == "social":  # "no history of smoking" is about smoking, not a medical condition
            intents = [i for i in intents if i != "medical_history"]
        if category == "social" and not any(i in intents for i in ("smoking", "alcohol_drugs", "occupation",
                                                                   "social_living", "travel", "sexual_history")):
            intents.append("social_living")  # "Married with two children" / anything else of the social history
        if category == "family_history":  # a relative's illness is not the patient's: only family questions
            intents = []
        facts.append(_Fact(prefix, category, voice.say(s), s, triggers=list(own),
                           intents=list(dict.fromkeys([*own_intents, *intents])), origin=name))
    return facts


def _actor_facts(actor: dict[str, Any], voice: _Voice) -> list[_Fact]:
    facts: list[_Fact] = []
    raw_symptoms = actor.get("Symptoms")
    symptoms: dict[str, Any] = raw_symptoms if isinstance(raw_symptoms, dict) else {}
    for key, value in actor.items():
        name = humanise(str(key))
        if name in ("demographics", "symptoms"):
            continue
        if name in ("history", "history of present illness", "presenting complaint", "hpi"):
            facts.extend(_history_facts(value, voice, _primary_stems(actor)))
            continue
        facts.extend(_field_facts(name, value, voice))
    for key, value in symptoms.items():
        name = humanise(str(key))
        if name == "primary symptom":
            continue
        if name == "secondary symptoms":
            listed = [v for v in re.split(r"[;,]\s*", value) if v.strip()] if isinstance(value, str) else value
            facts.extend(_symptom_fact(item, voice) for item in _items(listed, split_sentences=False)
                         if not not_provided(item))
            continue
        facts.extend(_Fact(slug(name, 16) or "symptom", "symptoms", voice.say(s), s,
                           triggers=[t for t in [name] if is_usable_trigger(t)],
                           intents=list(dict.fromkeys(["other_symptoms", *_content_intents(s)])), origin=name)
                     for s in _items(value) if not not_provided(s))
    return facts


# Intents that make a history sentence about something other than the complaint itself.
_ASIDE_INTENTS = {"medications", "medical_history", "smoking", "alcohol_drugs", "occupation", "social_living",
                  "travel", "sexual_history", "family_history", "allergies", "vaccinations", "birth_history",
                  "pregnancy_lmp"}


def _primary_stems(actor: dict[str, Any]) -> set[str]:
    symptoms = actor.get("Symptoms")
    primary = symptoms.get("Primary_Symptom") if isinstance(symptoms, dict) else None
    return _content_stems(primary if isinstance(primary, str) else "", STOPWORDS | WEAK_WORDS)


def _history_facts(value: Any, voice: _Voice, primary: set[str]) -> list[_Fact]:
    """One fact per sentence of the history.

    The story of the complaint (the first sentence, those about the primary symptom, and those about nothing
    else) answers the open question ("What brings you in?", "Tell me more"); a sentence about medicines, past
    illness or the patient's life answers the question about that, as the same fact of its own field would.
    """
    facts: list[_Fact] = []
    for n, s in enumerate(x for x in _items(value) if not not_provided(x)):
        intents = _content_intents(s)
        story = n == 0 or bool(primary & _content_stems(s, set())) or not (set(intents) & _ASIDE_INTENTS)
        facts.append(_Fact("history", "history", voice.say(s), s, origin="history",
                           intents=list(dict.fromkeys([*(["presenting_complaint"] if story else []), *intents]))))
    return facts


_NEGATIVE = re.compile(r"^(?:no|denies|without|absence of|absent|not|none)\b\s*", re.I)


def _symptom_fact(item: str, voice: _Voice) -> _Fact:
    text = item.strip().rstrip(".")
    negative = bool(_NEGATIVE.match(text))
    rest = _NEGATIVE.sub("", text) if negative else text
    history = bool(re.match(r"(?i)(?:a )?history of\b", text))
    if voice.carer:
        he = {"son": "he", "daughter": "she"}.get(voice.child, "they")
        has = "have" if he == "they" else "has"
        answer = (f"No, {he} {has}n't had {lower_first(rest)}." if negative
                  else f"Yes, {he} {has} a {lower_first(text).removeprefix('a ')}." if history
                  else f"Yes, {he}'{'ve' if he == 'they' else 's'} also had {lower_first(text)}.")
    else:
        answer = ((f"No, I haven't had {lower_first(rest)}." if rest else "No.") if negative
                  else f"Yes, I have a {lower_first(text).removeprefix('a ')}." if history
                  else f"Yes, I've also had {lower_first(text)}.")
    triggers = [rest.lower()] if rest and len(words(rest)) <= 4 and is_usable_trigger(rest) else []
    intents = _content_intents(rest or text)
    intents = [i for i in intents if i not in _NOT_FROM_HISTORY_PMH]
    if not negative or not intents:
        intents = ["other_symptoms", *intents]
    return _Fact("symptom", "symptoms", answer, text, triggers=triggers, intents=intents,
                 critical=not negative, origin="secondary symptoms")
