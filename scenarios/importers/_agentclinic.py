"""AgentClinic OSCE cases -> diagnostic scenarios with an information tree.

The format (one JSON object per line, AgentClinic's MedQA / MIMIC-IV OSCE files)::

    {"OSCE_Examination": {
        "Objective_for_Doctor": "...",
        "Patient_Actor": {"Demographics": "45-year-old male", "History": "...",
                          "Symptoms": {"Primary_Symptom": "...", "Secondary_Symptoms": ["...", ...]},
                          "Past_Medical_History": "...", "Social_History": "...", "Review_of_Systems": "..."},
        "Physical_Examination_Findings": {"Vital_Signs": {"Blood_Pressure": "150/90 mmHg", ...},
                                          "Cardiovascular_Examination": {"Auscultation": "..."}, ...},
        "Test_Results": {"Blood_Tests": {"Troponin_I": "2.3 ng/mL"}, "Imaging": {"Chest_X-Ray": {...}}, ...},
        "Correct_Diagnosis": "..."}}

Sections nest to any depth; a leaf is a string, number, boolean or list. Mapping:

- ``id``: ``ac_<slug of the diagnosis, 30 chars>_<8 hex of sha256 of the row's canonical JSON>``:
  stable across imports and file orderings, unique per distinct case (an identical repeated row is
  reported as a duplicate). ``canary``: ``encsim-canary-<8 hex of sha256(id)>-<id with dashes>``.
- ``patient_profile`` from ``Demographics`` (``45-year-old male``, ``6-month-old girl``, ``72 F``,
  ``pregnant woman, 32 weeks``): age and sex, pregnancy, and the pediatric (< 18) / geriatric
  (>= 65) context flags (``_demographics.parse_demographics``). An age under two years, or given in
  months, weeks or days, keeps its precision: years to two decimals, the stated age in ``age_detail``
  ("4 days" -> 0.01, "9 months" -> 0.75, "newborn" -> 0); a gestational age ("born at 33 weeks of
  gestation") is not the baby's age. An age in words only ("Woman in her late twenties") is an estimate
  (28, tag ``profile:age_approximate``). A sex the demographics do not give is taken from the history when
  it names only one ("he", "his", "boy"). An age not stated is a placeholder 40 with ``age_detail: not
  stated``, an unknown sex ``other``, each with a warning in the import report and the tag
  ``profile:age_unknown`` / ``profile:sex_unknown``.
- ``chief_complaint``: ``Primary_Symptom``; a row without one takes it from the history's first sentence
  ("presents with a 2-day history of <it>"), else the first secondary symptom, with a warning.
  ``opening_line``: "I've come in because of <it>." Who tells the case is ``_osce_voice``'s business: a
  patient under 12 is brought by a parent ("I've brought my son (daughter, baby) in because of ...",
  ``speaker: parent``, tag ``voice:carer``); a patient the case says cannot give a history now (confused,
  disoriented, unresponsive, non-verbal, intubated, low GCS; not when the examination finds them alert and
  oriented) is spoken for by the relative the case names, else a parent, partner or son or daughter by age
  (``speaker: parent | partner | caregiver``, tags ``voice:carer`` and ``voice:cannot_tell``; "I've brought
  my mother in because of her confusion"). Every answer is the teller's (``_voice.carer_voice``: "My son has
  had ...", the patient staying "he"/"she"), or the patient's own first person (``_voice.patient_words``:
  "The patient reports a 2-day history of fever" -> "I've had a 2-day history of fever"). Every field the
  patient speaks goes through the voice: the opening line, history, symptoms (a secondary symptom's name
  too: "swelling of her ankle" -> "swelling of my ankle"; one written as a sentence is said as one), and
  each value of a field given as sub-fields ("Smoking: I smoke 10 a day").
- ``information_tree``: one fact per sentence, list item or finding. A value that says nothing was given
  ("Information not provided.", "No additional symptoms mentioned.", "N/A", "Details are not provided in
  this scenario but imagine ...", "To be determined", "Pending", "Unknown at this time"), a note to the
  actor or examiner ("The patient should describe ...", "Actor instructions: ...", a field named
  ``Actor_Instructions`` or ``Optional``) yields no fact, and a note in brackets or an unfilled template slot
  is cut out of a sentence ("(actor instructions: ...)", "[insert duration]"; ``_osce_sections``). Triggers
  come from the OSCE structure and its clinical
  meaning (field names, examination section and finding names, test and analyte names, the lay names
  clinicians use for them), never n-grams of the answer text (from the text come only a listed
  symptom's own name, up to four words, and the curated lay words of ``_text.LAY_SYNONYMS`` for clinical
  terms in it; none for an examination finding or a test result, whose one-word triggers that the lexicon
  reads only as a history topic, like "cocaine" of a drug screen, are dropped too); what a fact is about is
  given as ``intents`` of the shared lexicon (``scenarios/intents.yaml``): the lexicon's cues found in the
  fact's text when the fact is about the intent's topic (``_osce_topics``: a cue of several words, the
  intent's own topic named, two of its topic words, or a short item that is the cue: "attempting to
  conceive" is no suicide attempt), write-up words for timing, course, habits, treatments and the clinical
  words of one sense (dysuria, seizure, jaundice, drug-name stems), and the field's own intent. Fields map to
  categories:

  - ``History``: ``history``; the story of the complaint (the first sentence, sentences about the primary
    symptom, and sentences about nothing else) also answers ``presenting_complaint`` ("What brings you
    in?", "Tell me more"); a sentence about medicines or the patient's life answers those questions.
  - ``Secondary_Symptoms``: one ``symptoms`` fact each ("Yes, I've also had <it>." / "No, I haven't had
    <it>."); positive ones answer ``other_symptoms`` ("Anything else?") and are critical.
  - ``Past_Medical_History`` / surgical -> ``past_history`` (``medical_history``); ``Social_History`` ->
    ``social`` (``smoking``, ``alcohol_drugs``, ``occupation``, ``travel``, ``sexual_history`` or else
    ``social_living``, by content); ``Review_of_Systems`` -> ``symptoms`` (``other_symptoms`` and the
    systems it names); ``Medications`` -> ``medications``; ``Allergies`` -> ``allergies``;
    ``Family_History`` -> ``family_history`` (only family questions); immunisation, birth, obstetric and
    diet fields likewise; any other field -> ``history``.
  - ``Physical_Examination_Findings``: one fact per finding, answered as a finding ("On examination -
    <finding>: <value>."). Vital signs are ``vitals`` (``vital_signs``, ``physical_exam`` and
    ``blood_pressure`` / ``fever`` / ``other_measurements`` by sign); other findings are ``exam`` facts
    revealed when the clinician examines that system (``exam_cardiac``, ``exam_respiratory``,
    ``exam_abdominal``, ``exam_neuro``, ``exam_skin``, ``exam_ent``, ``exam_eye``, ``exam_neck``,
    ``exam_limbs``, ``exam_msk``, ``exam_pelvic``, from the section and finding names); general
    appearance answers ``physical_exam`` ("Can I examine you?").
  - ``Test_Results``: ``test`` facts, one per test or panel ("The <test> results show: <values>."):
    a section of sections is read down to its tests ("Imaging" -> "Chest_CT"); analytes listed under a
    generic name ("Blood_Tests", "Laboratory_Tests") or at the top level (MIMIC-IV's
    "Hemoglobin_Blood": "13.8") are grouped into the panels clinicians order (full blood count, kidney
    function and electrolytes, liver function, clotting, thyroid function, inflammatory markers, cardiac
    markers, urine, CSF, ...). Each answers ``investigations`` and the intent of its kind
    (``test_blood``, ``test_urine``, ``test_imaging``, ``test_cardiac``, ``test_microbiology``,
    ``test_pathology``, ``test_other``), and its own name and panel names ("full blood count", "fbc").
- ``critical`` (a heuristic, so that the information score weighs what points to the diagnosis): the
  history sentences about the primary symptom, the positive secondary symptoms, abnormal examination
  findings, vital signs and test results (``_osce_abnormal``: an abnormal word or sign not negated in its
  clause, "elevated", "reduced", "positive", "free fluid", "obstruction", "count fingers", "absent bowel
  sounds"; a value outside the reference range the text gives; a standard threshold: FEV1/FVC below 0.70,
  ejection fraction below 50%, saturation below 94%, visual acuity worse than 20/40, fever, adult heart and
  breathing rates; not "Normal", "no masses", "no murmurs, rubs or gallops", "bowel sounds present"), and
  every fact whose text names a content word of the diagnosis (a finding or result only where it does not
  negate it). If that marks nothing, the first history fact.
- ``expected``: ``diagnoses: [{name: Correct_Diagnosis, synonyms}]``: the synonyms are the diagnosis's other
  names (``_diagnosis_names``): a parenthesised part and the rest ("Myocardial infarction (STEMI)"), the standard
  abbreviation or its expansion ("Chronic obstructive pulmonary disease" <-> "COPD", "PTSD"), and the name
  without qualifiers ("Acute appendicitis" -> "Appendicitis"). No triage level or escalation, unless a
  clinician's labels file gives them (``encsim import agentclinic --labels``, ``_labels.py``); without one the
  scorers score information, efficiency and the diagnosis.
- ``turn_limit: 20``: AgentClinic's default number of doctor turns; its trees are larger than the
  library's, so the adaptive 8-15 would cut most encounters short.
- ``suite: ddx``, ``tier: A``, ``tags: [source:agentclinic, osce]``,
  ``source: agentclinic:<file name>#<line>``. ``Objective_for_Doctor`` is not imported (the harness
  gives every agent the same instructions).

Where the code lives: this module maps one row to a scenario (``convert_agentclinic_row``: the chief
complaint, the opening line, ``critical``, the tree's ids and triggers, ``expected``); ``_demographics.py``
reads ``Demographics``; ``_osce_sections.py`` reads nested sections into text and statements (and drops
placeholders); ``_osce_voice.py`` decides who tells the case; ``_osce_topics.py`` which intents a statement is
about; ``_osce_abnormal.py`` which findings and results are abnormal; ``_diagnosis_names.py`` the diagnosis's
synonyms; ``_labels.py`` applies a clinician's labels file;
``_osce_history.py`` makes the facts of the ``Patient_Actor`` fields and ``_osce_findings.py`` those of
the examination findings and test results.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

from scenarios.importers._common import FALLBACK_LINES, Converted, RowContext, RowError, sha_hex, slug
from scenarios.importers._demographics import parse_demographics
from scenarios.importers._diagnosis_names import diagnosis_entry
from scenarios.importers._osce_abnormal import affirmed
from scenarios.importers._osce_findings import _exam_facts, _test_facts
from scenarios.importers._osce_history import _CLAUSE_ITEM, _actor_facts, _content_stems, _in_voice
from scenarios.importers._osce_sections import MAX_TRIGGERS, _Fact, _items, _sentence_end, not_provided
from scenarios.importers._osce_voice import CARER_BELOW_AGE, _Voice, _voice
from scenarios.importers._text import (
    STOPWORDS,
    WEAK_WORDS,
    humanise,
    is_usable_trigger,
    lay_synonyms,
    lower_first,
    snippet,
    words,
)
from scenarios.lexicon import compiled_intents, intents_in, normalise

TURN_LIMIT = 20

# Words of a diagnosis name that say nothing about which facts point to it.
_DIAGNOSIS_FILLER = STOPWORDS | WEAK_WORDS | {
    "acute", "chronic", "disease", "disorder", "syndrome", "infection", "primary", "secondary", "type",
    "bilateral", "benign", "malignant", "due", "induced", "related", "associated", "stage", "lobe", "upper",
    "lower", "deficiency", "failure", "with", "without", "syndrom"}


# --- critical facts and the tree -----------------------------------------------------------------

def _mark_critical(facts: list[_Fact], primary: str, diagnosis: str) -> None:
    """Mark the critical facts.

    The history of the presenting complaint, the symptoms that come with it, abnormal findings and results (set
    where the facts are made), and anything that names the diagnosis (a finding or result only where it does not
    negate it: "no evidence of pneumonia" is a normal result).
    """
    primary_stems = _content_stems(primary, STOPWORDS | WEAK_WORDS)
    diagnosis_stems = _content_stems(diagnosis, _DIAGNOSIS_FILLER)
    for f in facts:
        stems = _content_stems(f.text, set())
        if f.origin == "history" and primary_stems & stems:
            f.critical = True
        if f.category in ("exam", "test", "vitals"):  # a finding that names the diagnosis only to rule it out is not
            if any(diagnosis_stems & _content_stems(part, set()) for part in affirmed(f.answer)):
                f.critical = True
        elif diagnosis_stems & (stems | _content_stems(f.answer, set())) and f.category != "family_history":
            f.critical = True
    if not any(f.critical for f in facts):
        first = next((f for f in facts if f.origin == "history"), facts[0])
        first.critical = True


# One word that is about many things ("heart", "drink", "blood"): as a trigger it would fire on advice and on
# other topics' questions; the fact's intents ask for it instead.
_LOOSE_WORDS = frozenset({"heart", "blood", "drink", "drinking", "chest", "family", "weight", "sleep", "sleeping",
                          "breathing", "stomach", "abdomen", "skin", "head", "eyes", "back", "mood", "work", "color",
                          "colour", "appearance", "protein", "glucose", "value", "level", "general"})


# What a question about an examination finding or a test result is about: a one-word trigger of a finding or result
# that the lexicon reads as a question about anything else ("cocaine" of a drug screen, "syphilis" of a serology,
# "speech" of a mental-state finding) would let a history question reveal the finding.
_FINDING_INTENTS = frozenset({"investigations", "physical_exam", "vital_signs", "other_measurements", "blood_pressure",
                              "fever", "palpitations_pulse"})


@lru_cache(maxsize=1)
def _one_word_cues() -> dict[str, set[str]]:
    """The lexicon's one-word cues (normalised) -> the intents they ask for."""
    out: dict[str, set[str]] = {}
    for iid, (cues, _) in compiled_intents().items():
        for c in cues:
            if len(c.phrases) == 1 and len(c.phrases[0].split()) == 1:
                out.setdefault(c.phrases[0].strip(), set()).add(iid)
    return out


def _history_word(trigger: str) -> bool:
    """A one-word trigger the lexicon reads only as a history question, never as one about a finding or a test."""
    if len(words(trigger)) != 1:
        return False
    norm = normalise(trigger)
    found = _one_word_cues().get(norm[0], set()) if len(norm) == 1 else intents_in(trigger)
    return bool(found) and not any(i.startswith(("exam_", "test_")) or i in _FINDING_INTENTS for i in found)


def _to_tree(facts: list[_Fact]) -> list[dict[str, Any]]:
    tree: list[dict[str, Any]] = []
    used: set[str] = set()
    for f in facts:
        triggers: list[str] = []
        finding = f.category in ("exam", "test", "vitals")
        # a finding's own words are not the patient's: no lay words of its text, no one-word history topic
        for t in [*f.triggers, *([] if finding else lay_synonyms(f.text))]:
            t = " ".join(t.split()).lower()
            if (t in _LOOSE_WORDS and f.intents) or (finding and _history_word(t)):
                continue
            if t and t not in triggers and is_usable_trigger(t):
                triggers.append(t)
        if not triggers:  # intents reveal it; the schema wants a trigger: the field's own name
            name = "presenting complaint" if f.origin == "history" else humanise(f.origin)
            triggers = [name if is_usable_trigger(name) else "presenting complaint"]
        key = " ".join(words(triggers[0])) if f.triggers else " ".join(words(f.text)[:4])
        base = f"{f.prefix}_{slug(key, 24)}".rstrip("_")
        fact_id, n = base, 2
        while fact_id in used:
            fact_id, n = f"{base}_{n}", n + 1
        used.add(fact_id)
        entry: dict[str, Any] = {"id": fact_id, "category": f.category, "triggers": triggers[:MAX_TRIGGERS]}
        if f.intents:
            entry["intents"] = list(dict.fromkeys(f.intents))
        entry["answer"] = f.answer
        if f.critical:
            entry["critical"] = True
        tree.append(entry)
    return tree


def agentclinic_id(row: dict[str, Any], diagnosis: str) -> str:
    canonical = json.dumps(row, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return f"ac_{slug(diagnosis, 30) or 'case'}_{sha_hex(canonical)}"


def _chief_complaint(actor: dict[str, Any]) -> tuple[str, str | None]:
    """The chief complaint, and a warning when it is not the primary symptom: the primary symptom.

    Without one, the history's first sentence, or the first secondary symptom (and a warning).
    """
    symptoms = actor.get("Symptoms")
    primary = symptoms.get("Primary_Symptom") if isinstance(symptoms, dict) else None
    if isinstance(primary, list):
        primary = ", ".join(str(p) for p in primary if p)
    if isinstance(primary, str) and primary.strip() and not not_provided(primary):
        return " ".join(primary.split()).rstrip("."), None
    history = [s for s in _items(actor.get("History")) if not not_provided(s)] if actor.get("History") else []
    if history:
        complaint = _complaint_from(history[0])
        return complaint, (f"no Primary_Symptom; the chief complaint {snippet(complaint, 60)!r} is taken "
                           "from the history")
    secondary = symptoms.get("Secondary_Symptoms") if isinstance(symptoms, dict) else None
    items = _items(secondary, split_sentences=False) if secondary else []
    if items:
        return items[0].rstrip("."), "no Primary_Symptom or history; the first secondary symptom is the chief complaint"
    raise RowError("OSCE_Examination.Patient_Actor has no Primary_Symptom, History or Secondary_Symptoms: "
                   "nothing says why the patient came")


_PRESENTS = re.compile(r"^.*?\b(?:presents?|presented|comes?|came|brought|is brought|was brought|reports?|"
                       r"complains?|complained)\b(?:\s+(?:to|in)\s+[\w\s]+?)?\s+(?:with|of|because of|for)\s+"
                       r"(?:an?\s+|the\s+)?(?:\d+[- ](?:hour|day|week|month|year)[- ]history of\s+)?(?P<what>.+)$",
                       re.I)


def _complaint_from(sentence: str) -> str:
    """``A 45-year-old man presents with a 2-day history of fever and cough.`` -> ``fever and cough``."""
    text = sentence.rstrip(".")
    m = _PRESENTS.match(text)
    what = m.group("what") if m else text
    what = re.split(r"\s+(?:that|which|since|for the past|over the past|after)\b|,", what, maxsplit=1)[0]
    return snippet(what.strip(), 80)


def _opening(primary: str, voice: _Voice) -> str:
    """What the teller says first: why they came, in their own words (the complaint goes through the voice)."""
    if _CLAUSE_ITEM.match(primary):  # "Her right knee has been swollen for 3 days": a sentence of its own
        said = _sentence_end(voice.say(primary))
        return f"I've brought my {voice.child} in. {said}" if voice.carer else said
    primary = _in_voice(primary, voice)
    if voice.carer:
        if re.match(r"^(?:a|an|the|some|no|\d)", primary, re.I):
            return f"I've brought my {voice.child} in because of {lower_first(primary)}"
        pronoun = {"he": "his", "she": "her"}.get(voice.pronoun, "their")
        return f"I've brought my {voice.child} in because of {pronoun} {lower_first(primary)}"
    if re.match(r"^(?:I|I'm|I've|My)\b", primary):
        return primary
    if re.match(r"^(?:a|an|the|my|some|no|\d)", primary, re.I):
        return f"I've come in because of {lower_first(primary)}"
    return f"I've come in because of my {lower_first(primary)}"


def convert_agentclinic_row(row: dict[str, Any], ctx: RowContext) -> Converted:
    """One AgentClinic OSCE row -> the data of one scenario (raises RowError if unusable)."""
    osce = row.get("OSCE_Examination", row if "Patient_Actor" in row else None)
    if not isinstance(osce, dict):
        raise RowError("no 'OSCE_Examination' object, and not an NEJM image case either ('question', 'answers', "
                       "'image_url'): only AgentClinic OSCE cases (MedQA / MIMIC-IV format) and NEJM image cases "
                       "can be imported")
    diagnosis = osce.get("Correct_Diagnosis")
    if isinstance(diagnosis, list) and diagnosis and all(isinstance(d, str) for d in diagnosis):
        diagnosis = diagnosis[0]
    if not isinstance(diagnosis, str) or not diagnosis.strip():
        raise RowError("OSCE_Examination.Correct_Diagnosis is missing or empty; the diagnosis is what the case scores")
    diagnosis = " ".join(diagnosis.split())
    actor = osce.get("Patient_Actor")
    if not isinstance(actor, dict):
        raise RowError("OSCE_Examination.Patient_Actor is missing or not an object")
    primary, complaint_warning = _chief_complaint(actor)

    profile, warnings, profile_tags = parse_demographics(actor.get("Demographics"), actor.get("History"))
    if complaint_warning:
        warnings.append(complaint_warning)
    voice = _voice(profile, osce)
    if voice.carer:
        profile["speaker"] = voice.speaker
    facts = _actor_facts(actor, voice)
    adult = profile["age"] >= CARER_BELOW_AGE  # adult limits for the heart and breathing rates
    facts += _exam_facts(osce.get("Physical_Examination_Findings") or {}, adult)
    facts += _test_facts(osce.get("Test_Results") or {}, adult)
    if not facts:
        raise RowError("the case has no history, examination findings or test results to reveal")
    _mark_critical(facts, primary, diagnosis)

    scenario_id = agentclinic_id(row, diagnosis)
    demographics = actor.get("Demographics") if isinstance(actor.get("Demographics"), str) else ""
    title = f"AgentClinic OSCE: {snippet(primary, 60)}" + (f" ({snippet(demographics, 40)})" if demographics else "")
    data: dict[str, Any] = {
        "id": scenario_id,
        "title": title,
        "suite": "ddx",
        "tags": ["source:agentclinic", "osce", *profile_tags, *(["voice:carer"] if voice.carer else []),
                 *(["voice:cannot_tell"] if voice.carer and profile["age"] >= CARER_BELOW_AGE else [])],
        "tier": "A",
        "canary": f"encsim-canary-{sha_hex(scenario_id)}-{scenario_id.replace('_', '-')}",
        "patient_profile": profile,
        "chief_complaint": snippet(primary, 80),
        "opening_line": _sentence_end(_opening(primary, voice)),
        "fallback_lines": list(FALLBACK_LINES),
        "information_tree": _to_tree(facts),
        "expected": {"diagnoses": [diagnosis_entry(diagnosis)]},
        "turn_limit": TURN_LIMIT,
        "source": f"agentclinic:{ctx.file_name}#{ctx.line}",
    }
    return Converted(data=data, warnings=warnings)
