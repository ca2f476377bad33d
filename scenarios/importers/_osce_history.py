"""The facts of an AgentClinic OSCE case's ``Patient_Actor`` fields: history, symptoms, past and social history.

Who answers is ``_osce_voice``'s business (the patient in the first person, or someone who speaks for them); here,
what a field or a sentence is about (``_FIELDS`` and ``_content_intents``: the lexicon's cues and the words a
write-up uses), and one fact per history sentence, secondary symptom or item of the other fields. The mapping is
in ``_agentclinic.py``'s docstring (``information_tree``).
"""

from __future__ import annotations

import re
from typing import Any

from scenarios.importers._common import slug
from scenarios.importers._osce_sections import _Fact, _items, _leaves, _sentence_end, author_field, not_provided
from scenarios.importers._osce_topics import topic_intents
from scenarios.importers._osce_voice import _Voice
from scenarios.importers._text import (
    STOPWORDS,
    WEAK_WORDS,
    humanise,
    is_usable_trigger,
    lower_first,
    rough_stem,
    sentences,
    words,
)

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
    (r"\b(?:travel|trip|abroad|camping|hiking|vacation|holiday|flight|flew|flown|overseas|cruise|emigrated|"
     r"immigrated|returned from)", "travel"),
    (r"\b(?:sexual|sexually|intercourse|condoms?|partners|syphilis|gonorrho?ea|chlamydia|sti|std|stis|stds)\b",
     "sexual_history"),
    (r"\b(?:tak(?:es|ing)|medications?|medicines?|treated with|therapy|prescribed|tablets?|inhaler|insulin|"
     r"\d+\s*mg|contracepti|pills?|antibiotics?|antihypertensives?|antidepressants?|steroids?|"
     # drug names by their stems: penicillins, cephalosporins, macrolides, quinolones, ACE inhibitors, sartans,
     # beta blockers, statins, proton-pump inhibitors, calcium-channel blockers, H2 blockers, azoles
     r"\w+cillin|cef\w+|ceph\w+|\w+mycin|\w+floxacin|\w+cycline|\w+pril|\w+sartan|\w+olol|\w+statin|"
     r"\w+prazole|\w+dipine|\w+tidine|\w+conazole)\b", "medications"),
    (r"\ballerg", "allergies"),
    (r"\b(?:history of|diagnosed|known|underlying|chronic|previous|prior)\b", "medical_history"),
    (r"\b(?:surgery|operation|operated|resection|appendectomy|cholecystectomy|hysterectomy|transplant)",
     "medical_history"),
    (r"\b(?:immuni[sz]|vaccin)", "vaccinations"),
    (r"\b(?:born|delivery|delivered|gestation|apgar|birth weight)\b", "birth_history"),
    (r"\b(?:last menstrual|periods?|menstrua|menses|pregnan|gravida|g\dp\d)\b", "pregnancy_lmp"),
    (r"\b(?:fatigue|tired|energy|malaise|lethargy|weak(?:ness)?)\b", "other_symptoms"),
    # clinical words of one sense: a statement that uses one is about its topic, however long the sentence
    (r"\b(?:accident|collision|crash|trauma|traumatic|injur(?:y|ies|ed)|assault(?:ed)?|struck by|hit by|"
     r"fell (?!asleep)|fall(?:s|en)? (?:from|down|off|onto|on)\b)", "injury_mechanism"),
    (r"\b(?:dysuria|nocturia|urinary|urination|urinating|micturition|voiding|bladder|ha?ematuria|incontinen\w*)",
     "urinary"),
    (r"\b(?:respiratory (?:distress|support|failure|symptoms)|dyspno?ea|short(?:ness)? of breath|breathless\w*|"
     r"wheez\w*|stridor|tachypno?ea|apno?eic|apno?ea|grunting)", "breathing"),
    (r"\b(?:seizures?|convulsions?|convulsed|tonic-clonic|syncope|syncopal|fainted|fainting|passed out|blackouts?|"
     r"lost consciousness|loss of consciousness|unconscious)\b", "loss_of_consciousness"),
    (r"\b(?:sudden(?:ly)?|abrupt(?:ly)?|gradual(?:ly)?|insidious(?:ly)?)\b", "onset_speed"),
    (r"\b(?:rash(?:es)?|blisters?|itch\w*|prurit\w*|jaundice\w*|cyano\w*|bruis\w*|petechia\w*|purpura|hives|"
     r"urticaria|wounds?|skin lesions?)\b", "skin"),
    (r"\b(?:depress(?:ed|ion|ive)|anxiety|anxious|low mood|sad|sadness|hopeless\w*|worthless\w*|emptiness|"
     r"tearful|suicidal|irritab\w*|anhedoni\w*|(?:lost|loss of) interest|previously enjoyed|no longer enjoys?)\b",
     "mood"),
    (r"\b(?:ibuprofen|paracetamol|acetaminophen|aspirin|naproxen|nsaids?|antacids?|vitamins?|supplements?|herbal|"
     r"herbs|over[- ]the[- ]counter|otc)\b", "over_the_counter"),
    (r"\b(?:appetite|eating|feeding)\b", "eating_drinking"),
]]
# Intents that only say what kind of statement it is: they never make a fact about something else.
_NOT_FROM_HISTORY_PMH = {"onset_timing", "course"}


def _content_intents(text: str) -> list[str]:
    """The lexicon intents a statement is about (``_osce_topics``: its cues and its topic), then the write-up words."""
    found = sorted(topic_intents(text))
    if "allergies" in found and not re.search(r"allerg|anaphyla", text, re.I):  # "heat intolerance" is no allergy
        found.remove("allergies")
    for pattern, iid in _CONTENT_INTENTS:
        if iid not in found and pattern.search(text):
            found.append(iid)
    return found


def _content_stems(text: str, filler: frozenset[str] | set[str]) -> set[str]:
    return {rough_stem(w) for w in words(text) if w not in filler and len(w) >= 3 and not w.isdigit()}


# --- reading the patient's fields --------------------------------------------------------------

def _statements(value: Any) -> list[tuple[str, str]]:
    """A field's statements as (label, text).

    A sub-field's name and its value ("Smoking status", "He smokes 10 a day."), or "" and a sentence or list item of
    prose. Placeholders and notes to the actor are left out.
    """
    if isinstance(value, dict):
        pairs = [(path[-1].capitalize() if path else "", text) for path, text in _leaves(value)]
    else:
        pairs = [("", s) for s in _items(value)]
    return [(label, text) for label, text in pairs if not not_provided(text) and not not_provided(f"{label} {text}")]


def _said(voice: _Voice, label: str, text: str) -> str:
    """A statement in the teller's words: every sentence of it goes through the voice, a label stays as written."""
    spoken = " ".join(voice.say(s) for s in sentences(text)) or text
    return f"{label}: {spoken}" if label else spoken


def _field_facts(name: str, value: Any, voice: _Voice) -> list[_Fact]:
    prefix, category, own_intents, own = slug(name, 16) or "item", "history", ["presenting_complaint"], \
        [t for t in [name] if is_usable_trigger(t)]
    for needle, pre, cat, intents, triggers in _FIELDS:
        if needle in name:
            prefix, category, own_intents, own = pre, cat, intents, triggers
            break
    facts: list[_Fact] = []
    for label, text in _statements(value):
        s = f"{label}: {text}" if label else text
        intents = [i for i in _content_intents(s) if i not in _NOT_FROM_HISTORY_PMH]
        if category == "social":  # "no history of smoking" is about smoking, not a medical condition
            intents = [i for i in intents if i != "medical_history"]
        if category == "social" and not any(i in intents for i in ("smoking", "alcohol_drugs", "occupation",
                                                                   "social_living", "travel", "sexual_history")):
            intents.append("social_living")  # "Married with two children" / anything else of the social history
        if category == "family_history":  # a relative's illness is not the patient's: only family questions
            intents = []
        facts.append(_Fact(prefix, category, _said(voice, label, text), s, triggers=list(own),
                           intents=list(dict.fromkeys([*own_intents, *intents])), origin=name))
    return facts


def _actor_facts(actor: dict[str, Any], voice: _Voice) -> list[_Fact]:
    facts: list[_Fact] = []
    raw_symptoms = actor.get("Symptoms")
    symptoms: dict[str, Any] = raw_symptoms if isinstance(raw_symptoms, dict) else {}
    for key, value in actor.items():
        name = humanise(str(key))
        if name in ("demographics", "symptoms") or author_field(str(key)):
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
        facts.extend(_Fact(slug(name, 16) or "symptom", "symptoms", _said(voice, label, text),
                           f"{label}: {text}" if label else text, triggers=[t for t in [name] if is_usable_trigger(t)],
                           intents=list(dict.fromkeys(["other_symptoms", *_content_intents(text)])), origin=name)
                     for label, text in _statements(value))
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


# A secondary symptom written as a sentence about someone ("Patient shows irritability", "He wakes at night",
# "Her mother reports ..."), not as the name of a symptom.
_CLAUSE_ITEM = re.compile(r"^(?:(?:the|this)\s+(?:patient|child|infant|baby|newborn|boy|girl|man|woman)\b(?!'s)|"
                          r"patient\b(?!'s)|he|she|they|(?:his|her|their|the patient's)\s+(?:mother|father|parents?|"
                          r"wife|husband|partner|family|daughter|son|carer|caregiver|roommates?|friends?))\b", re.I)
_THIRD_PERSON = re.compile(r"\b(?:he|she|his|her|hers|him|himself|herself|they|their|them|patient|patient's)\b", re.I)


def _in_voice(phrase: str, voice: _Voice) -> str:
    """A symptom's name in the teller's words ("swelling of his ankles" -> "swelling of my ankles").

    By the voice itself: the phrase is said as the object of "The patient has had ..." and taken back out of what the
    voice makes of it.
    """
    if not _THIRD_PERSON.search(phrase):
        return phrase
    head = voice.say("The patient has had something.")
    said = voice.say(f"The patient has had {phrase}.")
    lead = head[:head.find("something")] if "something" in head else ""
    return said[len(lead):].rstrip(".") if lead and said.startswith(lead) else phrase


def _symptom_answer(text: str, voice: _Voice) -> tuple[str, bool, str]:
    """(the answer, whether the symptom is denied, the symptom's name without the denial) of one secondary symptom."""
    if _CLAUSE_ITEM.match(text):  # a sentence about the patient or someone else: said as the voice says sentences
        said = voice.say(text)
        negative = bool(re.match(r"(?i)(?:no|not|none|denies)\b|(?:I|he|she|they|my \w+) (?:haven't|hasn't|has not|"
                                 r"have not|denies|deny|did not|didn't|does not|doesn't|do not|don't)\b", said))
        return _sentence_end(said), negative, ""
    negative = bool(_NEGATIVE.match(text))
    rest = _in_voice(_NEGATIVE.sub("", text) if negative else text, voice)
    shown = _in_voice(text, voice)
    history = bool(re.match(r"(?i)(?:a )?history of\b", text))
    if voice.carer:
        he = voice.pronoun or "they"
        has = "have" if he == "they" else "has"
        answer = (f"No, {he} {has}n't had {lower_first(rest)}." if negative
                  else f"Yes, {he} {has} a {lower_first(shown).removeprefix('a ')}." if history
                  else f"Yes, {he}'{'ve' if he == 'they' else 's'} also had {lower_first(shown)}.")
    else:
        answer = ((f"No, I haven't had {lower_first(rest)}." if rest else "No.") if negative
                  else f"Yes, I have a {lower_first(shown).removeprefix('a ')}." if history
                  else f"Yes, I've also had {lower_first(shown)}.")
    return answer, negative, _NEGATIVE.sub("", text) if negative else text


def _symptom_fact(item: str, voice: _Voice) -> _Fact:
    text = item.strip().rstrip(".")
    answer, negative, rest = _symptom_answer(text, voice)
    triggers = [rest.lower()] if rest and len(words(rest)) <= 4 and is_usable_trigger(rest) else []
    intents = _content_intents(rest or text)
    intents = [i for i in intents if i not in _NOT_FROM_HISTORY_PMH]
    if not negative or not intents:
        intents = ["other_symptoms", *intents]
    return _Fact("symptom", "symptoms", answer, text, triggers=triggers, intents=intents,
                 critical=not negative, origin="secondary symptoms")
