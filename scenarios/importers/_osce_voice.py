"""Who tells an AgentClinic case: the patient, or someone who speaks for them, and in whose words.

A patient who can give their own history tells it in the first person (``_voice.patient_words``). Someone
else tells it when the patient cannot:

- a child under ``CARER_BELOW_AGE``: the parent who brings them (``speaker: parent``; "my son", "my baby");
- a patient the case describes as unable to give a history *now*: confused, disoriented, delirious, with an
  altered mental status or level of consciousness, unresponsive, unconscious, obtunded, comatose, non-verbal,
  mute or aphasic, intubated or sedated, or with a low Glasgow Coma Scale (``cannot_tell``). A relative or
  carer tells it: the one the case names as reporting, finding or bringing the patient ("His wife found him ...",
  "brought in by her daughter"), else a parent for a patient under ``YOUNG_ADULT_BELOW`` (30), a partner for one
  under 65 and a son or daughter for an older one. ``speaker`` is ``partner``, ``parent`` or ``caregiver``
  (anyone else), the patient is "my husband", "my mother", ... (``carer_voice``), and what the case says the
  teller did is said as theirs ("His wife found him unconscious" -> "I found him unconscious"; "The family
  mentions that she has been confused" -> "She has been confused").

The current state is what counts: an examination that finds the patient alert and oriented (or GCS 15), or a
history in which consciousness returned ("regained consciousness", "now alert"), means the patient tells it
even when the story mentions an earlier episode ("found him unconscious"); a negated mention ("without any
confusion", "denies confusion", "not confused") is no evidence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from scenarios.importers._demographics import DEFAULT_AGE
from scenarios.importers._osce_sections import _leaves
from scenarios.importers._person import _SUBJECTLESS, base_form
from scenarios.importers._text import sentences
from scenarios.importers._voice import carer_voice, patient_words

CARER_BELOW_AGE = 12  # a younger patient's history is given by the carer who brings them
YOUNG_ADULT_BELOW = 30  # a patient who cannot tell their history: below this age a parent tells it, else a partner

# Evidence that the patient cannot give a history now.
_CANNOT_TELL = re.compile(
    r"\b(?:confused|confusion|disoriented|disorientated|disorientation|not (?:oriented|orientated)|"
    r"altered (?:mental (?:status|state)|sensorium|(?:level of )?consciousness|mentation)|"
    r"(?:decreased|reduced|depressed|impaired) (?:level of )?consciousness|delirium|delirious|obtunded|stupor|"
    r"stuporous|comatose|coma|unresponsive(?!\s+to\b)|unrousable|unarousable|unconscious|non-?verbal|nonverbal|mute|"
    r"aphasic|aphasia|unable to (?:speak|talk|communicate|give (?:a |any )?history|provide (?:a |any )?history|"
    r"answer questions|follow commands)|cannot (?:speak|communicate|give (?:a |any )?history)|intubated|sedated|"
    r"responds only to (?:pain|painful stimuli|voice)|"
    r"(?:gcs|glasgow coma scale)(?: score)?(?: of| is|:)?\s*(?:[3-9]|1[0-3])(?!\d)|"
    r"(?:severe|advanced|end-stage) dementia)\b", re.I)
# Evidence that the patient can: alert and oriented now, consciousness regained.
_CAN_TELL = re.compile(
    r"\b(?:alert and (?:fully )?orient\w*|fully (?:oriented|orientated)|orient\w* (?:x|times|×)\s*(?:3|4|three|four)|"
    r"orient\w* to (?:\w+,\s*)+\w+,?\s+and\s+\w+|a\s*&\s*o\s*x?\s*[34]|"
    r"aox[34]|(?:gcs|glasgow coma scale)(?: score)?(?: of| is|:)?\s*15\b|regained (?:full )?consciousness|"
    r"(?:is )?now (?:alert|awake and alert|fully alert|conscious)|returned to (?:his|her|their) baseline|"
    r"back to (?:his|her|their) (?:normal|usual) self)", re.I)
_NEGATION = re.compile(r"\b(?:no|not|without|denies|denied|negative for|absence of|absent|never|free of|resolved)\b",
                       re.I)

# A relative or carer the case names as reporting, bringing or finding the patient.
_RELATION = (r"wife|husband|partner|girlfriend|boyfriend|fiancee?|daughter|son|mother|father|mum|mom|dad|parents?|"
             r"sister|brother|roommate|flatmate|friend|caregivers?|carers?|niece|nephew|granddaughter|grandson")
_TELLER = re.compile(
    rf"\b(?:his|her|their|the patient's|the patient’s)\s+(?P<rel>{_RELATION})\s+(?:also\s+|has\s+|have\s+|had\s+)?"
    r"(?:reports?|reported|states?|stated|mentions?|mentioned|notes?|noted|says?|said|adds?|added|describes?|"
    r"described|explains?|explained|found|finds|noticed|notices|observed|observes|brought|brings|called|calls|"
    r"is concerned|was concerned|recalls?|recalled|witnessed|saw)\b"
    rf"|\b(?:brought(?:\s+in)?|accompanied|found|witnessed)\s+by\s+(?:his|her|their)\s+(?P<rel2>{_RELATION})\b", re.I)
# What the teller calls the patient: (for a male patient, a female one, unknown).
_INVERSE: dict[str, tuple[str, str, str]] = {
    "wife": ("husband", "wife", "partner"), "husband": ("husband", "wife", "partner"),
    "partner": ("partner", "partner", "partner"), "girlfriend": ("boyfriend", "girlfriend", "partner"),
    "boyfriend": ("boyfriend", "girlfriend", "partner"), "fiance": ("fiance", "fiancee", "partner"),
    "fiancee": ("fiance", "fiancee", "partner"),
    "daughter": ("father", "mother", "parent"), "son": ("father", "mother", "parent"),
    "mother": ("son", "daughter", "child"), "father": ("son", "daughter", "child"), "mum": ("son", "daughter", "child"),
    "mom": ("son", "daughter", "child"), "dad": ("son", "daughter", "child"), "parent": ("son", "daughter", "child"),
    "parents": ("son", "daughter", "child"),
    "sister": ("brother", "sister", "sibling"), "brother": ("brother", "sister", "sibling"),
    "niece": ("uncle", "aunt", "relative"), "nephew": ("uncle", "aunt", "relative"),
    "granddaughter": ("grandfather", "grandmother", "grandparent"),
    "grandson": ("grandfather", "grandmother", "grandparent"),
    "roommate": ("roommate", "roommate", "roommate"), "flatmate": ("flatmate", "flatmate", "flatmate"),
    "friend": ("friend", "friend", "friend"),
}
_PARTNERS = {"wife", "husband", "partner", "girlfriend", "boyfriend", "fiance", "fiancee"}
_PARENTS = {"mother", "father", "mum", "mom", "dad", "parent", "parents"}


@dataclass(frozen=True)
class _Voice:
    """Who answers: the patient (first person) or someone who speaks for them (``my son``, ``my husband``, ``he``).

    ``child`` is what the teller calls the patient ("son", "daughter", "baby", "child", "husband", "mother", ...),
    ``teller`` the teller's own relation as the case names it ("wife", "daughter"; "" when the case names none),
    ``speaker`` the schema's ``patient_profile.speaker``.
    """

    carer: bool
    child: str = ""
    speaker: str = "patient"
    pronoun: str = ""  # the patient as the teller speaks of them: "he", "she", "they"
    teller: str = ""

    def say(self, sentence: str) -> str:
        """A sentence of the case in the teller's words (``carer_voice`` or ``patient_words``)."""
        if not self.carer:
            return patient_words(sentence)
        return carer_voice(_as_teller(_subject_named(sentence, self.pronoun), self.teller, self.pronoun), self.child)


def _subject_named(sentence: str, pronoun: str) -> str:
    """A sentence whose subject, the patient, is left out or bare, with its subject.

    "Drinks alcohol socially." -> "He drinks alcohol socially."; "Patient has ..." -> "The patient has ...";
    "Denies any fever" -> "Denies fever".
    """
    text = re.sub(r"^patient\b(?!')", "The patient", sentence.strip(), flags=re.I)
    text = re.sub(r"^(denies|denied)\s+any\s+", r"\1 ", text, flags=re.I)
    first = text.split(" ", 1)[0]
    if first.lower() in _SUBJECTLESS and first.lower() not in ("denies", "had", "was", "is", "has") or \
            first.lower() in ("has", "is", "was", "had") and len(text.split()) > 2:
        text = f"{(pronoun or 'they').capitalize()} {first.lower()} {text.split(' ', 1)[1]}" if " " in text else text
    return text


_REPORTING = (r"(?:also\s+)?(?:reports?|states?|notes?|mentions?|says?|explains?|describes?|adds?|recalls?|reported|"
              r"stated|noted|mentioned|said|explained|described|added|recalled)\s+(?:that\s+)?")


def _as_teller(sentence: str, teller: str, pronoun: str = "") -> str:
    """What the case says the teller (or the family) did or said, in the teller's own words.

    "His wife found him unconscious" told by his wife -> "I found him unconscious"; "The family mentions that she has
    been confused" -> "She has been confused".
    """
    names = "|".join([*([re.escape(teller)] if teller else []), "family", "relatives", "family members"])
    report = re.match(rf"^(?:(?:the|his|her|their|the patient's)\s+)?(?:{names})\s+{_REPORTING}(?P<rest>.+)$", sentence,
                      flags=re.I)
    text = sentence
    if report:  # what they report: a clause as it is, a symptom as something the patient has had
        rest, that = report.group("rest"), bool(re.search(r"\bthat\s+$", sentence[:report.start("rest")]))
        clause = that or re.match(r"(?:he|she|they|the patient|patient|his|her|their|there)\b", rest, re.I)
        has = "have" if pronoun in ("", "they") else "has"
        text = rest if clause else f"{(pronoun or 'they').capitalize()} {has} had {rest}"
    text = re.sub(r"^(?:(?:the|his|her|their|the patient's)\s+)?(?:family|relatives|family members)\s+(?:have|has)\b",
                  "We have", text, flags=re.I)
    if text != sentence or not teller:
        return text[:1].upper() + text[1:]

    def subject(m: re.Match[str]) -> str:
        verb = m.group("verb")
        return f"I {base_form(verb) or verb}"

    text = re.sub(rf"^(?:the|his|her|their|the patient's)\s+{re.escape(teller)}\s+(?P<verb>[a-z]+)\b", subject,
                  sentence, flags=re.I)
    return re.sub(rf"\b(?:his|her|their|the patient's)\s+{re.escape(teller)}\b", "me", text, flags=re.I)


def _current_state(osce: dict[str, Any]) -> str:
    """The mental-status findings of the examination, as one text."""
    exam = osce.get("Physical_Examination_Findings")
    return " ".join(text for path, text in _leaves(exam or {}) if re.search(
        r"mental|conscious|orient|gcs|glasgow|general|appearance|neuro|cognit|alert|behaviou?r", " ".join(path)))


def _state(text: str) -> bool | None:
    """What ``text`` last says of the patient's state: True (cannot tell), False (can), None (nothing).

    Clause by clause, in order; a clause that negates its mention ("without any confusion") says nothing.
    """
    state: bool | None = None
    for sentence in sentences(text):
        for clause in re.split(r"[;,:]|\bbut\b|\balthough\b|\bthough\b|\bthen\b", sentence):
            if _CAN_TELL.search(clause):
                state = False
            elif _CANNOT_TELL.search(clause) and not _NEGATION.search(_CANNOT_TELL.sub(" ", clause)):
                state = True
    return state


# The fields that tell the patient's present state (not the past history: "intubated for surgery in 2010").
_STORY_FIELDS = re.compile(r"^(?:demographics|history|history of present illness|hpi|presenting complaint|symptoms|"
                           r"review of systems|primary symptom|secondary symptoms)$")


def cannot_tell(osce: dict[str, Any]) -> bool:
    """Whether the case says the patient cannot give their own history now (see the module docstring).

    The examination's mental-status findings decide when they say anything; else the story's last word.
    """
    exam = _state(_current_state(osce))
    if exam is not None:
        return exam
    actor = osce.get("Patient_Actor") if isinstance(osce.get("Patient_Actor"), dict) else {}
    story = " ".join(text for path, text in _leaves(actor) if path and _STORY_FIELDS.match(path[0]))
    return bool(_state(story))


def _named_teller(osce: dict[str, Any]) -> str:
    """The relative or carer the history names first ("wife", "daughter"), or ""."""
    actor = osce.get("Patient_Actor") if isinstance(osce.get("Patient_Actor"), dict) else {}
    story = " ".join(text for _, text in _leaves(actor))
    m = _TELLER.search(story)
    return (m.group("rel") or m.group("rel2")).lower() if m else ""


def _voice(profile: dict[str, Any], osce: dict[str, Any] | None = None) -> _Voice:
    """Who tells the case of ``profile`` (the patient's profile) and ``osce`` (the case): see the module docstring."""
    age, sex = profile.get("age", DEFAULT_AGE), profile.get("sex")
    he = "he" if sex == "male" else "she" if sex == "female" else "they"
    if age < CARER_BELOW_AGE:
        child = "baby" if age < 1 else "son" if sex == "male" else "daughter" if sex == "female" else "child"
        return _Voice(carer=True, child=child, speaker="parent", pronoun=he)
    if osce is None or not cannot_tell(osce):
        return _Voice(carer=False)
    teller = _named_teller(osce)
    if teller not in _INVERSE or (teller in _PARENTS and age >= 65):
        teller = ""
    if teller:
        male, female, other = _INVERSE[teller]
        child = male if sex == "male" else female if sex == "female" else other
    elif age < YOUNG_ADULT_BELOW:  # a parent
        teller, child = "parent", "son" if sex == "male" else "daughter" if sex == "female" else "child"
    elif age < 65:  # a partner
        teller, child = "partner", "husband" if sex == "male" else "wife" if sex == "female" else "partner"
    else:  # a grown-up son or daughter
        teller, child = "child", "father" if sex == "male" else "mother" if sex == "female" else "parent"
    speaker = "partner" if teller in _PARTNERS else "parent" if teller in _PARENTS else "caregiver"
    return _Voice(carer=True, child=child, speaker=speaker, pronoun=he, teller=teller.rstrip("s") if teller in (
        "parents", "caregivers", "carers") else teller)
