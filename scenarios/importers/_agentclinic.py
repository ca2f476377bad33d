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
  (>= 65) context flags. Newborns ("Newborn, female", "six hours post delivery") and infants under a
  year get age 0 with the stated age in ``age_detail`` ("4 days", "9 months", "newborn"); a
  gestational age ("born at 33 weeks of gestation") is not the baby's age. A sex the demographics do
  not give is taken from the history when it names only one ("he", "his", "boy"). What cannot be
  read defaults to age 40 / sex ``other``, with a warning in the import report and the tag
  ``profile:age_unknown`` / ``profile:sex_unknown``.
- ``chief_complaint``: ``Primary_Symptom``; a row without one takes it from the history's first sentence
  ("presents with a 2-day history of <it>"), else the first secondary symptom, with a warning.
  ``opening_line``: "I've come in because of <it>." A patient under 12 is brought by a carer: "I've
  brought my son (daughter, baby) in because of ...", tag ``voice:carer``, and every answer is the
  carer's ("My son has had ...", the child staying "he"/"she"; ``_voice.carer_voice``). Otherwise answers
  are the patient's own first person (``_voice.patient_words``: "The patient reports a 2-day history of
  fever" -> "I've had a 2-day history of fever"; "He denies chest pain" -> "I haven't had any chest pain").
- ``information_tree``: one fact per sentence, list item or finding. A value that says nothing was given
  ("Information not provided.", "No additional symptoms mentioned.", "N/A", "Details are not provided in
  this scenario but imagine ...") yields no fact. Triggers come from the OSCE structure and its clinical
  meaning (field names, examination section and finding names, test and analyte names, the lay names
  clinicians use for them), never n-grams of the answer text (from the text come only a listed
  symptom's own name, up to four words, and the curated lay words of ``_text.LAY_SYNONYMS`` for clinical
  terms in it); what a fact is about is given as
  ``intents`` of the shared lexicon (``scenarios/intents.yaml``): the lexicon's cues found in the fact's
  text (``scenarios.lexicon.intents_in``), write-up words for timing, course, habits and treatments, and
  the field's own intent. Fields map to categories:

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
  findings and test results (an abnormal word not negated in its clause: "elevated", "mass",
  "crackles"; not "Normal", "no masses"), and every fact whose text names a content word of the
  diagnosis. If that marks nothing, the first history fact.
- ``expected``: ``diagnoses: [{name: Correct_Diagnosis}]`` (a parenthesised part, as in
  "Myocardial infarction (STEMI)", also becomes a synonym with the rest); no triage level or
  escalation: the scorers then score information, efficiency and the diagnosis.
- ``turn_limit: 20``: AgentClinic's default number of doctor turns; its trees are larger than the
  library's, so the adaptive 8-15 would cut most encounters short.
- ``suite: ddx``, ``tier: A``, ``tags: [source:agentclinic, osce]``,
  ``source: agentclinic:<file name>#<line>``. ``Objective_for_Doctor`` is not imported (the harness
  gives every agent the same instructions).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from scenarios.importers._common import FALLBACK_LINES, Converted, RowContext, RowError, sha_hex, slug
from scenarios.importers._text import (
    STOPWORDS,
    WEAK_WORDS,
    humanise,
    is_usable_trigger,
    lay_synonyms,
    lower_first,
    rough_stem,
    sentences,
    snippet,
    words,
)
from scenarios.importers._voice import carer_voice, patient_words
from scenarios.lexicon import intents_in as lexicon_intents_in

DEFAULT_AGE = 40
DEFAULT_SEX = "other"
TURN_LIMIT = 20
MAX_TRIGGERS = 10
CARER_BELOW_AGE = 12  # a younger patient's history is given by the carer who brings them

# Words of an examination section or finding name -> what a clinician says to ask for it.
_EXAM_LAY: list[tuple[tuple[str, ...], list[str]]] = [
    (("heart", "cardiac", "cardiovascular", "precordial"), ["listen to your heart", "heart sounds"]),
    (("lung", "lungs", "respiratory", "pulmonary", "chest", "thorax", "thoracic"),
     ["listen to your chest", "listen to your lungs", "breath sounds"]),
    (("abdomen", "abdominal", "abdomin"), ["examine your abdomen", "press on your abdomen"]),
    (("neurological", "neurologic", "neuro", "neurology"), ["neurological exam", "neurological examination"]),
    (("skin", "dermatological", "dermatologic", "integumentary"), ["look at your skin"]),
    (("eye", "eyes", "ocular", "pupil", "pupils", "ophthalmic", "ophthalmologic", "fundoscopy", "fundus"),
     ["look at your eyes", "eye exam"]),
    (("throat", "pharynx", "oropharynx", "oral", "mouth", "tonsils"), ["look in your mouth", "look at your throat"]),
    (("ear", "ears", "otoscopy", "otoscopic", "tympanic"), ["look in your ears"]),
    (("lymph", "lymphatic", "nodes"), ["lymph nodes", "glands"]),
    (("neck", "thyroid"), ["examine your neck", "feel your neck"]),
    (("extremities", "extremity", "limb", "limbs", "leg", "legs", "calf"), ["look at your legs", "examine your legs"]),
    (("musculoskeletal", "joint", "joints", "spine", "back"), ["examine your joints", "examine your back"]),
    (("general", "appearance"), ["general appearance"]),
    (("pelvic", "genital", "genitourinary", "rectal"), ["pelvic examination", "intimate examination"]),
]

_VITAL_LAY: list[tuple[tuple[str, ...], list[str]]] = [
    (("blood", "pressure"), ["blood pressure"]),
    (("heart", "rate"), ["heart rate", "pulse"]),
    (("pulse",), ["pulse", "heart rate"]),
    (("respiratory", "rate"), ["respiratory rate", "breathing rate"]),
    (("temperature",), ["temperature"]),
    (("oxygen",), ["oxygen saturation", "oxygen level", "sats"]),
    (("saturation",), ["oxygen saturation", "oxygen level", "sats"]),
    (("spo2",), ["oxygen saturation", "oxygen level", "sats"]),
    (("weight",), ["weight"]),
    (("bmi",), ["bmi", "weight"]),
]

# Test names -> abbreviations and other names clinicians use for them.
_TEST_LAY: list[tuple[str, list[str]]] = [
    ("complete blood count", ["cbc", "blood count", "full blood count"]),
    ("full blood count", ["fbc", "blood count", "complete blood count"]),
    ("electrocardiogram", ["ecg", "ekg"]),
    ("ecg", ["electrocardiogram", "ekg"]),
    ("ekg", ["electrocardiogram", "ecg"]),
    ("chest x ray", ["cxr", "chest radiograph"]),
    ("x ray", ["xray", "radiograph"]),
    ("computed tomography", ["ct", "ct scan"]),
    ("ct", ["ct scan", "computed tomography"]),
    ("magnetic resonance", ["mri", "mri scan"]),
    ("mri", ["mri scan", "magnetic resonance"]),
    ("urinalysis", ["urine test", "urine sample"]),
    ("urine", ["urine test", "urine sample"]),
    ("arterial blood gas", ["abg", "blood gas"]),
    ("metabolic panel", ["electrolytes", "bmp", "cmp"]),
    ("electrolytes", ["metabolic panel"]),
    ("glucose", ["blood sugar"]),
    ("thyroid", ["thyroid function", "tsh"]),
    ("liver function", ["lfts", "liver tests"]),
    ("lumbar puncture", ["spinal tap", "csf"]),
    ("cerebrospinal fluid", ["csf", "lumbar puncture"]),
    ("ultrasound", ["ultrasound scan", "sonography"]),
    ("echocardiogram", ["echo", "echocardiography"]),
    ("d dimer", ["ddimer"]),
    ("troponin", ["cardiac enzymes"]),
    ("c reactive protein", ["crp"]),
    ("erythrocyte sedimentation rate", ["esr"]),
    ("blood culture", ["blood cultures", "cultures"]),
]
# Kinds of test a clinician names on their own ("any ultrasound?"): a trigger when in a test's name.
_MODALITIES = ("ultrasound", "x ray", "ct", "mri", "ecg", "ekg", "echocardiogram", "doppler", "angiogram", "endoscopy",
               "colonoscopy", "biopsy", "culture", "urinalysis", "spirometry", "eeg", "emg", "serology")

# Leaf names that say nothing by themselves: the section names the finding instead.
_GENERIC_LEAVES = {"findings", "finding", "result", "results", "value", "values", "interpretation", "impression",
                   "report", "description", "details", "other", "notes", "note", "comment", "comments", "summary",
                   "general findings", "observations", "status", "general"}
_MANOEUVRES = {"inspection", "palpation", "percussion", "auscultation"}
_SECTION_SUFFIX = re.compile(r"\s+(?:examination|exam|findings|tests|test|results)$")
# Words of a diagnosis name that say nothing about which facts point to it.
_DIAGNOSIS_FILLER = STOPWORDS | WEAK_WORDS | {
    "acute", "chronic", "disease", "disorder", "syndrome", "infection", "primary", "secondary", "type",
    "bilateral", "benign", "malignant", "due", "induced", "related", "associated", "stage", "lobe", "upper",
    "lower", "deficiency", "failure", "with", "without", "syndrom"}


# --- demographics -------------------------------------------------------------------------------

_AGE_UNIT = re.compile(r"(\d+(?:\.\d+)?)\s*[- ]?\s*(years?|yrs?|y/?o|months?|mos?|weeks?|wks?|days?)\b(?:[- ]?old)?",
                       re.I)
_AGE_BARE = re.compile(r"(?:\bage[d:]?\s*|^\s*)(\d{1,3})(?:\s*[mf]\b|\s*,|\s*$)", re.I)
_FEMALE = re.compile(r"(?:\b|(?<=\d))(?:female|woman|women|girl|lady|mother|she|her|pregnant|f)\b", re.I)
_MALE = re.compile(r"(?:\b|(?<=\d))(?:male|man|men|boy|gentleman|father|he|his|m)\b", re.I)
_GESTATIONAL = re.compile(r"\b(?:born\s+)?(?:at|after|before)?\s*(?:the\s+)?\d{1,2}\s*(?:st|nd|rd|th)?\s*[- ]?\s*"
                          r"(?:gestational\s+)?weeks?'?\s*(?:of\s+)?(?:gestation(?:al)?(?:\s+age)?|gestational\s+week)"
                          r"|\b\d{1,2}\s*(?:st|nd|rd|th)\s+gestational\s+week", re.I)
_NEWBORN = re.compile(r"\b(?:new[- ]?born|neonate|neonatal|"
                      r"hours?\s+(?:old|post[- ]?(?:delivery|partum)|after\s+birth))\b", re.I)
_GESTATION = re.compile(r"(\d{1,2})\s*[- ]?\s*weeks?'?\s*(?:of\s+)?(?:gestation|pregnan)|\bat\s+(\d{1,2})\s*weeks\b",
                        re.I)


# In a case's history only the patient's own pronouns and nouns say the sex: "the mother", "her pregnancy"
# and "his father" are about the parents of a newborn, not the patient.
_HISTORY_FEMALE = re.compile(r"\b(?:she|girl|woman|lady)\b", re.I)
_HISTORY_MALE = re.compile(r"\b(?:he|boy|man|gentleman)\b", re.I)


def _sex_in(text: str, female_re: re.Pattern[str] = _FEMALE, male_re: re.Pattern[str] = _MALE) -> str | None:
    """The sex a text names, when it names only one ("a 3-day-old boy", "she has been feeding poorly")."""
    female, male = len(female_re.findall(text)), len(male_re.findall(text))
    return "female" if female and not male else "male" if male and not female else None


def parse_demographics(text: Any, history: Any = None) -> tuple[dict[str, Any], list[str], list[str]]:
    """``Demographics`` -> (patient_profile data, warnings, tags); see the module docstring.

    ``history`` (the case's own text) gives the sex when the demographics do not ("he", "she", "boy", "girl").
    """
    demo = text if isinstance(text, str) else ""
    warnings: list[str] = []
    tags: list[str] = []
    age: float | None = None
    detail: str | None = None
    demo_age = _GESTATIONAL.sub(" ", demo)  # "born at 33 weeks of gestation" is not the baby's age
    if m := _AGE_UNIT.search(demo_age):
        n, unit = float(m.group(1)), m.group(2).lower()
        age = n / 12 if unit.startswith("mo") else n / 52 if unit.startswith("w") else n / 365 if unit.startswith(
            "d") else n
        if age < 1:
            word = {"mo": "month", "w": "week", "d": "day"}[next(k for k in ("mo", "w", "d") if unit.startswith(k))]
            detail = f"{m.group(1)} {word}{'' if n == 1 else 's'}"
    elif _NEWBORN.search(demo):
        age, detail = 0.0, "newborn"
    elif m := _AGE_BARE.search(demo_age):
        age = float(m.group(1))
    if age is not None and not 0 <= age <= 120:
        age = None
    if age is None:
        warnings.append(f"Demographics {snippet(demo, 60)!r}: no age found, using {DEFAULT_AGE}")
        tags.append("profile:age_unknown")
        age = DEFAULT_AGE
    age = 0 if age < 1 else round(age)  # newborns and infants: age 0, the stated age in age_detail
    sex = _sex_in(_AGE_UNIT.sub(" ", demo))
    if sex is None and isinstance(history, str) and \
            (sex := _sex_in(history, _HISTORY_FEMALE, _HISTORY_MALE)) is not None:
        warnings.append(f"Demographics {snippet(demo, 60)!r}: no sex given; {sex} from the case's history")
    if sex is None:
        warnings.append(f"Demographics {snippet(demo, 60)!r}: no sex found, using {DEFAULT_SEX!r}")
        tags.append("profile:sex_unknown")
        sex = DEFAULT_SEX
    profile: dict[str, Any] = {"age": age, "sex": sex}
    if detail is not None:
        profile["age_detail"] = detail
    context: dict[str, bool] = {}
    if sex == "female" and re.search(r"\bpregnan", demo, re.I):
        profile["pregnant"] = True
        context["pregnancy"] = True
        if g := _GESTATION.search(demo):
            weeks = int(g.group(1) or g.group(2))
            if 1 <= weeks <= 43:
                profile["gestation_weeks"] = weeks
    if age < 18:
        context["pediatric"] = True
    if age >= 65:
        context["geriatric"] = True
    if context:
        profile["context"] = context
    return profile, warnings, tags


# --- reading the nested sections ----------------------------------------------------------------

def _scalar(value: Any) -> str | None:
    if value is None or isinstance(value, dict):
        return None
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        parts = [_scalar(v) if not isinstance(v, dict) else _measurement(v) for v in value]
        text = "; ".join(p for p in parts if p)
        return text or None
    text = " ".join(str(value).split())
    return text or None


_MEASUREMENT_KEYS = {"value", "unit", "units", "reference range", "normal range", "range", "interpretation",
                     "result", "findings", "flag", "normal"}


def _measurement(d: dict[str, Any]) -> str | None:
    """``{"Value": 12, "Unit": "g/dL", "Reference_Range": "13-17"}`` -> ``12 g/dL; reference range: 13-17``."""
    if len(d) == 1:  # {"Findings": "..."}: the finding itself
        return _scalar(next(iter(d.values()))) if not isinstance(next(iter(d.values())), dict) else None
    keys = {humanise(str(k)): v for k, v in d.items()}
    head = " ".join(s for s in (_scalar(keys.pop("value", None)), _scalar(keys.pop("unit", keys.pop("units", None))))
                    if s)
    rest = [f"{k}: {s}" for k, v in keys.items() if (s := _scalar(v))]
    text = "; ".join([head, *rest] if head else rest)
    return text or None


def _leaves(value: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], str]]:
    """Flatten nested sections into (path of humanised names, text) leaves, in source order."""
    if isinstance(value, dict):
        named = {humanise(str(k)): v for k, v in value.items()}
        label = next((named[k] for k in ("name", "test", "test name") if isinstance(named.get(k), str)), None)
        if label and all(k in _MEASUREMENT_KEYS | {"name", "test", "test name"} for k in named):
            rest = {k: v for k, v in value.items() if humanise(str(k)) not in ("name", "test", "test name")}
            text = _measurement(rest) if rest else None
            return [((*path, humanise(label)), text)] if text else []
        if value and all(humanise(str(k)) in _MEASUREMENT_KEYS for k in value) and path:
            text = _measurement(value)
            return [(path, text)] if text else []
        out: list[tuple[tuple[str, ...], str]] = []
        for key, sub in value.items():
            out.extend(_leaves(sub, (*path, humanise(str(key)))))
        return out
    if isinstance(value, list) and any(isinstance(v, dict) for v in value):
        out = []
        for sub in value:  # a list of sub-sections: each under the list's own name
            out.extend(_leaves(sub, path))
        return out
    text = _scalar(value)
    return [(path, text)] if text else []


def _acronyms(value: Any) -> set[str]:
    """Lower-cased acronyms among the keys of nested sections (``TSH``, ``Free_T4`` -> {tsh, t4})."""
    out: set[str] = set()
    if isinstance(value, dict):
        for key, sub in value.items():
            out |= {t.lower() for t in re.split(r"[\s_\-()/]+", str(key))
                    if len(t) >= 2 and t.upper() == t and any(c.isalpha() for c in t)}
            out |= _acronyms(sub)
    elif isinstance(value, list):
        for sub in value:
            out |= _acronyms(sub)
    return out


def _shown(name: str, acronyms: set[str]) -> str:
    """A humanised name for an answer, with the source's acronyms in capitals (``free T4``)."""
    return " ".join(w.upper() if w in acronyms else w for w in name.split(" "))


def _split_name(name: str) -> tuple[str, list[str]]:
    """``electrocardiogram (ecg)`` -> (``electrocardiogram``, [``ecg``])."""
    m = re.match(r"^(.*?)\s*\((.*?)\)\s*(.*)$", name)
    if not m:
        return name, []
    base = " ".join(f"{m.group(1)} {m.group(3)}".split())
    return (base or m.group(2)), ([m.group(2)] if base and m.group(2) else [])


def _section_forms(section: str) -> list[str]:
    """``cardiovascular examination`` -> [``cardiovascular examination``, ``cardiovascular exam``]."""
    base, abbrev = _split_name(section)
    out = [base, *abbrev]
    stripped = _SECTION_SUFFIX.sub("", base)
    if stripped != base and re.search(r"\bexamination$", base):
        out.append(f"{stripped} exam")
    return out


def _finding_name(path: tuple[str, ...], leaf_counts: dict[str, int]) -> tuple[str, list[str]]:
    """The specific name of a finding and extra names (abbreviations, the bare leaf name)."""
    leaf, abbrev = _split_name(path[-1]) if path else ("", [])
    parents = [_SECTION_SUFFIX.sub("", _split_name(p)[0]) for p in path[:-1]]
    parent = next((p for p in reversed(parents) if p and p not in _GENERIC_LEAVES), "")
    if leaf in _GENERIC_LEAVES or not is_usable_trigger(leaf):
        return (parent or leaf), abbrev
    if (leaf in _MANOEUVRES or leaf_counts.get(leaf, 0) > 1) and parent:
        return f"{parent} {leaf}", [*abbrev, leaf]
    return leaf, abbrev


def _lay(path_words: set[str], table: list[tuple[tuple[str, ...], list[str]]], need_all: bool) -> list[str]:
    out: list[str] = []
    for keys, phrases in table:
        if (all if need_all else any)(k in path_words for k in keys):
            out.extend(p for p in phrases if p not in out)
    return out


def _test_lay(names: list[str]) -> list[str]:
    padded = f" {' '.join(w for n in names for w in words(n))} "
    out: list[str] = [m for m in _MODALITIES if f" {m} " in f" {' '.join(words(names[0]))} "]
    for key, extra in _TEST_LAY:
        if f" {key} " in padded:
            out.extend(e for e in extra if e not in out)
    return out


def _sentence_end(text: str) -> str:
    return text if text[-1:] in ".!?" else f"{text}."


# --- what a field, a sentence, a finding or a test is about --------------------------------------

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

# Examination: words of a section or finding name -> the system examination intent that reveals it.
_EXAM_SYSTEMS: list[tuple[tuple[str, ...], str]] = [
    (("heart", "cardiac", "cardiovascular", "precordial", "precordium", "cardiopulmonary", "murmur", "jvp",
      "jugular", "pulses", "peripheral"), "exam_cardiac"),
    (("lung", "lungs", "respiratory", "pulmonary", "chest", "thorax", "thoracic", "cardiopulmonary", "breath",
      "breathing"), "exam_respiratory"),
    (("abdomen", "abdominal", "liver", "spleen", "bowel", "hernia", "hepatic", "flank", "epigastric", "rectal"),
     "exam_abdominal"),
    (("neurological", "neurologic", "neuro", "neurology", "cranial", "reflex", "reflexes", "motor", "sensory",
      "sensation", "gait", "coordination", "cerebellar", "mental", "cognitive", "speech", "strength", "tone",
      "power", "consciousness", "orientation", "meningeal", "romberg", "nerve", "nerves", "straight"), "exam_neuro"),
    (("skin", "dermatological", "dermatologic", "integumentary", "rash", "lesion", "lesions", "wound", "hair",
      "nails", "nail", "derm"), "exam_skin"),
    (("ent", "ear", "ears", "nose", "nasal", "throat", "oral", "mouth", "pharynx", "oropharynx", "tonsil",
      "tonsils", "tympanic", "otoscopy", "otoscopic", "dental", "teeth", "tongue", "sinus", "sinuses", "audiological",
      "hearing", "oral cavity", "cavity"), "exam_ent"),
    (("eye", "eyes", "ocular", "ophthalmic", "ophthalmologic", "ophthalmological", "pupil", "pupils", "fundus",
      "fundoscopy", "fundoscopic", "visual", "conjunctiva", "conjunctivae", "retina", "retinal", "slit",
      "eyelid", "eyelids"), "exam_eye"),
    (("neck", "thyroid", "lymph", "lymphatic", "nodes", "node", "cervical", "lymphadenopathy"), "exam_neck"),
    (("extremities", "extremity", "limb", "limbs", "leg", "legs", "arm", "arms", "hand", "hands", "foot", "feet",
      "calf", "calves", "ankle", "ankles", "edema", "oedema", "finger", "fingers", "toes"), "exam_limbs"),
    (("musculoskeletal", "joint", "joints", "spine", "spinal", "back", "knee", "knees", "shoulder", "hip", "hips",
      "wrist", "elbow", "muscle", "muscles", "lumbar", "range"), "exam_msk"),
    (("pelvic", "genital", "genitalia", "genitourinary", "vaginal", "speculum", "cervix", "uterus", "adnexa",
      "adnexal", "testicular", "testes", "testis", "scrotal", "scrotum", "penis", "breast", "breasts",
      "obstetric", "fundal", "rectovaginal", "bimanual", "gynecological", "gynaecological", "perineal"),
     "exam_pelvic"),
]
_GENERAL = ("general", "appearance", "overall", "inspection", "constitutional", "remainder", "habitus")

# Tests: the panel an analyte belongs to (by its humanised name), what clinicians call the panel.
_PANELS: list[tuple[str, str, list[str]]] = [  # (regex on the analyte name, panel name, the panel's triggers)
    (r"\b(?:a1c|hba1c|glycated|glucose|sugar)\b", "blood glucose", ["blood glucose", "blood sugar", "glucose"]),
    (r"\b(?:hemoglobin|haemoglobin|hgb|hb|hematocrit|haematocrit|hct|wbc|white blood cells?|white cell count|"
     r"leukocytes? count|rbc|red blood cells?|platelets?|platelet count|plt|mcv|mch|mchc|rdw|neutrophils?|"
     r"lymphocytes?|lymphs|monocytes?|eosinophils?|basophils?|bands|atypical lymphocytes|metamyelocytes|"
     r"myelocytes|reticulocytes?|differential|leukocytes?|white count|blasts)\b", "full blood count",
     ["full blood count", "blood count", "fbc", "cbc", "complete blood count"]),
    (r"\b(?:sodium|potassium|chloride|bicarbonate|co2|urea|bun|creatinine|anion gap|calcium|magnesium|"
     r"phosphate|phosphorus|egfr|osmolality|electrolytes)\b", "kidney function and electrolytes",
     ["kidney function", "renal function", "electrolytes", "u and e", "urea and electrolytes"]),
    (r"\b(?:alt|ast|alanine|aspartate|asparate|alkaline phosphatase|alp|bilirubin|albumin|ggt|gamma|"
     r"total protein|protein total|transaminases?|liver enzymes)\b", "liver function",
     ["liver function", "liver tests", "lfts", "liver enzymes"]),
    (r"\b(?:lipase|amylase)\b", "pancreatic enzymes", ["lipase", "amylase"]),
    (r"\b(?:inr|pt|ptt|aptt|fibrinogen|d dimer|prothrombin|thromboplastin|coagulation)\b", "clotting",
     ["clotting", "coagulation", "inr"]),
    (r"\b(?:tsh|t3|t4|thyroxine|thyroid|triiodothyronine)\b", "thyroid function",
     ["thyroid function", "thyroid tests", "tsh"]),
    (r"\b(?:crp|c reactive|esr|sedimentation|procalcitonin)\b", "inflammatory markers",
     ["inflammatory markers", "crp", "esr"]),
    (r"\b(?:troponin|ck mb|bnp|natriuretic|creatine kinase|ck)\b", "cardiac markers",
     ["cardiac markers", "troponin", "cardiac enzymes"]),
    (r"\b(?:cholesterol|hdl|ldl|triglycerides?|lipid)\b", "lipids", ["cholesterol", "lipids"]),
    (r"\b(?:ferritin|iron|transferrin|tibc|b12|folate|vitamin)\b", "haematinics",
     ["iron", "ferritin", "vitamin levels"]),
    (r"\b(?:lactate|pco2|po2|base excess|blood gas|ph)\b", "blood gas", ["blood gas", "lactate"]),
]
_SPECIMENS: list[tuple[str, str, list[str]]] = [
    (r"\b(?:cerebrospinal|csf)\b", "lumbar puncture (CSF)", ["lumbar puncture", "csf", "spinal fluid", "spinal tap"]),
    (r"\burine\b", "urine tests", ["urine test", "urinalysis", "urine"]),
]
# Test kinds -> the intents that ask for them (every test also answers ``investigations``: "any results?").
_TEST_KINDS: list[tuple[str, list[str]]] = [
    (r"\b(?:x rays?|xrays?|radiographs?|ct|mri|ultrasounds?|sonograph\w*|sonograms?|echocardiogra\w*|echo|"
     r"scans?|imaging|"
     r"mammogra\w*|angiogra\w*|doppler|barium|fluoroscop\w*|pet|dexa|venogra\w*|radiolog\w*|tomograph\w*|"
     r"cholangiogra\w*|enema|swallow study|hida)\b", ["test_imaging"]),
    (r"\b(?:ecg|ekg|electrocardiogra\w*|holter|echocardiogra\w*|echo|stress test|troponin|cardiac)\b",
     ["test_cardiac"]),
    (r"\b(?:urine|urinalysis|urinary|dipstick)\b", ["test_urine"]),
    (r"\b(?:cultures?|swabs?|gram|pcr|microbiolog\w*|serolog\w*|antigen|viral|bacterial|stool|sputum|"
     r"monospot|strep|nucleic acid|torch|hiv|hepatitis|rapid|koh)\b", ["test_microbiology"]),
    (r"\b(?:biops\w*|histolog\w*|histopatholog\w*|patholog\w*|cytolog\w*|bone marrow|aspirat\w*|smear|"
     r"scraping|genetic|karyotyp\w*|chromosom\w*|flow cytometry|immunohistochem\w*|tissue)\b", ["test_pathology"]),
    (r"\b(?:blood|serum|plasma|laboratory|lab|labs|hematolog\w*|haematolog\w*|chemistry|biochemistry|"
     r"antibod\w*|igg|igm|iga|ige|ana|anca|complement|c3|c4|rheumatoid|hormone|levels?|panel|count|"
     r"markers?|enzymes?|toxicolog\w*|screen)\b", ["test_blood"]),
    (r"\b(?:emg|eeg|electromyogra\w*|electroencephalogra\w*|nerve conduction|spirometr\w*|pulmonary function|"
     r"lung function|peak flow|audiometr\w*|hearing|tympanometr\w*|endoscop\w*|colonoscop\w*|gastroscop\w*|"
     r"bronchoscop\w*|cystoscop\w*|laryngoscop\w*|lumbar puncture|csf|cerebrospinal|sleep study|"
     r"polysomnogra\w*|visual field|slit lamp|tonometr\w*|toxicolog\w*|drug screen|sweat|tilt|"
     r"manometr\w*|consult\w*)\b", ["test_other"]),
]
_GENERIC_PANELS = re.compile(r"^(?:blood|laboratory|lab|labs|additional|other|further|routine|basic|initial|"
                             r"relevant|serum|pertinent|key)?\s*(?:blood\s+)?(?:tests?|work|studies|results|"
                             r"investigations|labs?|laboratory|findings|values|chemistry|biochemistry|panel|"
                             r"chemistry panel|serum biochemistry)?$", re.I)

# Findings that are not normal (for ``critical``), and the words of an entirely normal finding.
_ABNORMAL = re.compile(
    r"\b(?:elevated|raised|high|increased|low|decreased|reduced|diminished|positive|present|presence|abnormal|"
    r"enlarged|enlargement|swollen|swelling|mass|masses|lesions?|nodules?|effusion|consolidation|opacit\w*|"
    r"infiltrat\w*|fracture|tender(?:ness)?|rash|murmur|crackles|rales|wheez\w*|rhonchi|absent|weak|weakness|"
    r"distended|distension|guarding|rigidity|rebound|jaundice|icterus|pallor|cyanosis|edema|oedema|erythema\w*|"
    r"ulcer\w*|deformit\w*|atrophy|ptosis|nystagmus|consistent with|suggest\w*|indicat\w*|reveal\w*|shows?|"
    r"dilat\w*|thicken\w*|stenosis|occlu\w*|thromb\w*|hemorrhage|haemorrhage|bleed\w*|inflam\w*|necro\w*|"
    r"malignan\w*|tumou?r|cyst\w*|stones?|calculi|obstruct\w*|irregular|asymmetr\w*|exudat\w*|vesicle\w*|"
    r"papule\w*|plaque\w*|pustule\w*|petechia\w*|purpura|bruis\w*|growth|grew|isolated|detected|seen|"
    r"hyper\w+|hypo\w+|tachy\w+|brady\w+|febrile|fever|[<>]|\((?:H|L|high|low)\))", re.I)
_NORMAL_ONLY = re.compile(r"^(?:\W*(?:normal|within normal (?:limits|range)|wnl|unremarkable|negative|none|nil|"
                          r"no abnormalit\w*(?: detected)?|clear|intact|non[- ]?tender|soft|regular|symmetric(?:al)?|"
                          r"normothermic|afebrile|not detected|no growth|nad)\W*)+$", re.I)
_NEGATED = re.compile(r"\bno\s+(?:\w+\s+){0,3}(?:seen|detected|noted|present|found)\b|\b(?:no|without|absence of|"
                      r"negative for|not)\b", re.I)

# A value that says nothing was given: the field yields no fact.
_NOT_PROVIDED = re.compile(r"\b(?:not|no|none)\b.*\b(?:provided|mentioned|specified|available|given|documented|"
                           r"recorded|stated|obtained|performed|done|applicable|reported in the case|described)\b",
                           re.I)
_EMPTY_VALUES = {"", "n/a", "na", "none", "unknown", "not applicable", "-", "nil", "not provided", "not available",
                 "not mentioned", "not specified", "not reported", "not done", "not performed"}


_NOTHING_GIVEN = re.compile(r"^(?:(?:the\s+)?(?:details?|information|data|findings?|results?|specifics?)\s+"
                            r"(?:are|is|were|was)\s+)?not\s+(?:provided|given|available|specified|mentioned)\b|"
                            r"^(?:the\s+)?patient\s+(?:didn't|did not|does not|doesn't)\s+"
                            r"(?:provide|give|mention|report)\s+any\b", re.I)


def not_provided(text: str) -> bool:
    """Whether ``text`` is a placeholder that says the source has nothing to tell.

    ``Information not provided.``, ``No additional symptoms mentioned.``, ``N/A``, ``Details are not provided
    in this scenario but imagine ...``.
    """
    t = " ".join(text.split()).strip().rstrip(".").lower()
    return t in _EMPTY_VALUES or bool(_NOTHING_GIVEN.match(t)) or (len(words(t)) <= 9 and bool(_NOT_PROVIDED.search(t)))


def _content_intents(text: str) -> list[str]:
    """The lexicon intents a statement is about (its cues in the text), then the write-up words above."""
    found = sorted(lexicon_intents_in(text))
    if "allergies" in found and not re.search(r"allerg|anaphyla", text, re.I):  # "heat intolerance" is no allergy
        found.remove("allergies")
    for pattern, iid in _CONTENT_INTENTS:
        if iid not in found and pattern.search(text):
            found.append(iid)
    return found


def _abnormal(text: str) -> bool:
    """A finding or result that is not simply normal (for ``critical``)."""
    t = text.strip()
    if _NORMAL_ONLY.match(t):
        return False
    hits = [m for m in _ABNORMAL.finditer(t)]
    if not hits:
        return False
    # "No masses, no tenderness": every abnormal word is negated within its clause
    clauses = re.split(r"[;,.]|\band\b|\bbut\b", t)
    for clause in clauses:
        if _ABNORMAL.search(clause) and not _NEGATED.search(clause):
            return True
    return False


@dataclass
class _Fact:
    prefix: str
    category: str
    answer: str
    text: str  # the source words (for ``critical`` and lay synonyms)
    triggers: list[str] = field(default_factory=list)
    intents: list[str] = field(default_factory=list)
    critical: bool = False
    origin: str = ""


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


def _items(value: Any, *, split_sentences: bool = True) -> list[str]:
    """A field's value as a list of statements: sentences of prose, list items, ``name: value`` pairs."""
    if isinstance(value, str):
        return sentences(value) if split_sentences else ([" ".join(value.split())] if value.strip() else [])
    if isinstance(value, list):
        out: list[str] = []
        for v in value:
            out.extend(_items(v, split_sentences=False) if not isinstance(v, dict) else _items(v))
        return out
    if isinstance(value, dict):
        return [f"{path[-1].capitalize()}: {text}" if path else text for path, text in _leaves(value)]
    text = _scalar(value)
    return [text] if text else []


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


# --- examination --------------------------------------------------------------------------------

def _exam_facts(section: Any) -> list[_Fact]:
    leaves = _leaves(section, ()) if isinstance(section, dict) else _leaves(section, ("physical examination",))
    acronyms = _acronyms(section)
    counts: dict[str, int] = {}
    for path, _ in leaves:
        if path:
            counts[_split_name(path[-1])[0]] = counts.get(_split_name(path[-1])[0], 0) + 1
    facts: list[_Fact] = []
    for path, value in leaves:
        if not_provided(value):
            continue
        name, alt = _finding_name(path, counts)
        path_words = {w for p in path for w in words(p)}
        if "vital" in path_words or "vitals" in path_words:
            lay = _lay(path_words, _VITAL_LAY, need_all=True)
            intents = ["vital_signs", "physical_exam"]
            low = " ".join(path).lower()
            if "pressure" in low:
                intents.append("blood_pressure")
            if "temperature" in low:
                intents.append("fever")
            if any(w in low for w in ("oxygen", "saturation", "spo2", "glucose")):
                intents.append("other_measurements")
            facts.append(_Fact("vital", "vitals", f"Vital signs - {_shown(name, acronyms)}: {_sentence_end(value)}",
                               value, triggers=[t for t in [name, *alt, *lay] if is_usable_trigger(t)],
                               intents=intents, origin="physical examination"))
            continue
        sections = [s for p in path[:-1] for s in _section_forms(p) if is_usable_trigger(s)]
        value_words = set(words(value))  # a finding whose names say no system: its own words may
        systems = [iid for keys, iid in _EXAM_SYSTEMS if any(k in path_words for k in keys)] or \
            [iid for keys, iid in _EXAM_SYSTEMS if any(k in value_words for k in keys)]
        general = any(w in path_words for w in _GENERAL) or not systems
        intents = list(dict.fromkeys([*systems, *(["physical_exam"] if general else [])]))
        lay = _lay(path_words, _EXAM_LAY, need_all=False)
        facts.append(_Fact("exam", "exam", f"On examination - {_shown(name, acronyms)}: {_sentence_end(value)}",
                           value, triggers=[t for t in [name, *alt, *sections, *lay] if is_usable_trigger(t)],
                           intents=intents, critical=_abnormal(value), origin="physical examination"))
    return facts


# --- tests ----------------------------------------------------------------------------------------

@dataclass
class _Test:
    name: str  # the test or panel, humanised
    context: str  # the section it is under, humanised ("" at the top)
    parts: list[tuple[str, str]]  # (analyte or finding name, value); a name of "" is the finding itself
    triggers: list[str] = field(default_factory=list)


def _is_flat(value: Any) -> bool:
    """A panel: a dict whose values are scalars, lists or measurement dicts (``{"Value": .., "Unit": ..}``)."""
    if not isinstance(value, dict):
        return False
    for v in value.values():
        if isinstance(v, dict) and not all(humanise(str(k)) in _MEASUREMENT_KEYS | {"name", "test", "test name"}
                                           for k in v):
            if not (len(v) == 1 and not isinstance(next(iter(v.values())), dict)):
                return False
    return True


def _parts(value: Any) -> list[tuple[str, str]]:
    if isinstance(value, (dict, list)):
        out: list[tuple[str, str]] = []
        for path, text in _leaves(value):
            leaf = path[-1] if path else ""
            out.append(("" if leaf in _GENERIC_LEAVES else leaf, text))
        return out
    scalar = _scalar(value)
    return [("", scalar)] if scalar else []


def _panel_of(name: str) -> tuple[str, list[str]] | None:
    for pattern, panel, triggers in _SPECIMENS:
        if re.search(pattern, name, re.I):
            return panel, triggers
    for pattern, panel, triggers in _PANELS:
        if re.search(pattern, name, re.I):
            return panel, triggers
    return None


def _collect_tests(section: Any, context: str = "") -> list[_Test]:
    """Tests and panels of ``Test_Results`` (see the module docstring)."""
    if not isinstance(section, dict):
        parts = _parts(section)
        return [_Test(context or "test results", "", parts)] if parts else []
    tests: list[_Test] = []
    loose: list[tuple[str, str]] = []  # top-level analytes (MIMIC-IV's "Hemoglobin_Blood": "13.8")
    for key, value in section.items():
        name = humanise(str(key))
        if isinstance(value, dict) and not _is_flat(value):
            tests.extend(_collect_tests(value, name))
        elif isinstance(value, dict) or (isinstance(value, list) and any(isinstance(v, dict) for v in value)):
            parts = [(n, v) for n, v in _parts(value) if not not_provided(v)]
            if not parts:
                continue
            if _GENERIC_PANELS.match(name) and len(parts) > 1:
                tests.extend(_group_analytes(parts, name))
            elif len(parts) == 1 and parts[0][0]:  # "Imaging": {"Chest_CT": {"Findings": ...}}: the chest CT
                tests.append(_Test(parts[0][0], name, [("", parts[0][1])]))
            else:
                tests.append(_Test(name, context, parts))
        else:
            text = _scalar(value)
            if text and not not_provided(text):
                loose.append((name, text))
    if loose:
        grouped = _group_analytes(loose, context)
        tests.extend(grouped)
    return tests


def _group_analytes(parts: list[tuple[str, str]], context: str) -> list[_Test]:
    """Analytes listed together under a generic name, grouped into panels.

    One panel each for the blood count, the kidney function... (by the analyte's name); an analyte of no known
    panel is a test of its own.
    """
    panels: dict[str, _Test] = {}
    out: list[_Test] = []
    for name, text in parts:
        found = _panel_of(name) if name else None
        if found is None:
            out.append(_Test(name or context or "test results", context, [("", text)]))
            continue
        panel, triggers = found
        if panel not in panels:
            panels[panel] = _Test(panel, context, [], triggers=list(triggers))
            out.append(panels[panel])
        panels[panel].parts.append((name, text))
    return out


def _test_fact(test: _Test, acronyms: set[str]) -> _Fact:
    label = _shown(test.name, acronyms)
    context = test.context if test.context and test.context not in _GENERIC_LEAVES and \
        not _GENERIC_PANELS.match(test.context) else ""
    if context and context != test.name:
        label = f"{label} ({_shown(context, acronyms)})"
    # MIMIC-IV names analytes with their specimen ("Hemoglobin_Blood"): in a panel the specimen goes without saying
    shown = [f"{_shown(re.sub(r' (?:blood|serum|plasma)$', '', n), acronyms)} {v}" if n else v for n, v in test.parts]
    value = "; ".join(shown)
    all_names = " ".join([test.name, test.context, *(n for n, _ in test.parts)])
    base, alt = _split_name(test.name)
    found = _panel_of(test.name)
    triggers = [base, *alt, *test.triggers, *(found[1] if found else []), *_test_lay([base, test.context])]
    triggers += [n for n, _ in test.parts if n and len(words(n)) <= 4][:MAX_TRIGGERS]
    intents: list[str] = []
    for pattern, kinds in _TEST_KINDS:
        if re.search(pattern, all_names, re.I):
            intents.extend(k for k in kinds if k not in intents)
    if re.match(r"(?:blood pressure|bmi|height|weight|heart rate|pulse|temperature|respiratory rate)\b", test.name):
        intents = ["vital_signs", *(["blood_pressure"] if "pressure" in test.name else [])]  # a measurement
    elif found and found[0] not in ("urine tests", "lumbar puncture (CSF)") and "test_blood" not in intents:
        intents.append("test_blood")
    if not intents:
        intents.append("test_other")
    intents.append("investigations")
    text = " ".join(v for _, v in test.parts)
    return _Fact("test", "test", f"The {lower_first(label)} results show: {_sentence_end(value)}", text,
                 triggers=[t for t in triggers if is_usable_trigger(t)], intents=intents,
                 critical=_abnormal(value), origin="test results")


def _test_facts(section: Any) -> list[_Fact]:
    acronyms = _acronyms(section)
    return [_test_fact(t, acronyms) for t in _collect_tests(section)]


# --- critical facts and the tree -----------------------------------------------------------------

def _content_stems(text: str, filler: frozenset[str] | set[str]) -> set[str]:
    return {rough_stem(w) for w in words(text) if w not in filler and len(w) >= 3 and not w.isdigit()}


def _mark_critical(facts: list[_Fact], primary: str, diagnosis: str) -> None:
    """Mark the critical facts.

    The history of the presenting complaint, the symptoms that come with it, abnormal findings and results (set
    where the facts are made), and anything that names the diagnosis.
    """
    primary_stems = _content_stems(primary, STOPWORDS | WEAK_WORDS)
    diagnosis_stems = _content_stems(diagnosis, _DIAGNOSIS_FILLER)
    for f in facts:
        stems = _content_stems(f.text, set())
        if f.origin == "history" and primary_stems & stems:
            f.critical = True
        if diagnosis_stems & (stems | _content_stems(f.answer, set())) and f.category != "family_history":
            f.critical = True
    if not any(f.critical for f in facts):
        first = next((f for f in facts if f.origin == "history"), facts[0])
        first.critical = True


# One word that is about many things ("heart", "drink", "blood"): as a trigger it would fire on advice and on
# other topics' questions; the fact's intents ask for it instead.
_LOOSE_WORDS = frozenset({"heart", "blood", "drink", "drinking", "chest", "family", "weight", "sleep", "sleeping",
                          "breathing", "stomach", "abdomen", "skin", "head", "eyes", "back", "mood", "work", "color",
                          "colour", "appearance", "protein", "glucose", "value", "level", "general"})


def _to_tree(facts: list[_Fact]) -> list[dict[str, Any]]:
    tree: list[dict[str, Any]] = []
    used: set[str] = set()
    for f in facts:
        triggers: list[str] = []
        for t in [*f.triggers, *lay_synonyms(f.text)]:
            t = " ".join(t.split()).lower()
            if t in _LOOSE_WORDS and f.intents:
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


def _diagnosis(name: str) -> dict[str, Any]:
    base, alt = _split_name(name)
    synonyms = [s for s in dict.fromkeys([base, *alt]) if s and s != name]
    return {"name": name, "synonyms": synonyms} if synonyms else {"name": name}


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
    if voice.carer:
        if re.match(r"^(?:a|an|the|some|no|\d)", primary, re.I):
            return f"I've brought my {voice.child} in because of {lower_first(primary)}"
        pronoun = "his" if voice.child == "son" else "her" if voice.child == "daughter" else "their"
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
        raise RowError("no 'OSCE_Examination' object; only AgentClinic OSCE cases (MedQA / MIMIC-IV format) "
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
    voice = _voice(profile)
    facts = _actor_facts(actor, voice)
    facts += _exam_facts(osce.get("Physical_Examination_Findings") or {})
    facts += _test_facts(osce.get("Test_Results") or {})
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
        "tags": ["source:agentclinic", "osce", *profile_tags, *(["voice:carer"] if voice.carer else [])],
        "tier": "A",
        "canary": f"encsim-canary-{sha_hex(scenario_id)}-{scenario_id.replace('_', '-')}",
        "patient_profile": profile,
        "chief_complaint": snippet(primary, 80),
        "opening_line": _sentence_end(_opening(primary, voice)),
        "fallback_lines": list(FALLBACK_LINES),
        "information_tree": _to_tree(facts),
        "expected": {"diagnoses": [_diagnosis(diagnosis)]},
        "turn_limit": TURN_LIMIT,
        "source": f"agentclinic:{ctx.file_name}#{ctx.line}",
    }
    return Converted(data=data, warnings=warnings)
