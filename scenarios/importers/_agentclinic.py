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
- ``chief_complaint``: ``Primary_Symptom``; ``opening_line``: "I've come in because of <it>."
- ``information_tree`` (answers are the source text, turned into the first person where a simple
  pattern allows, e.g. "The patient reports that ..." / "She has ..." -> "I have ..."):

  - ``History``: one ``history`` fact per sentence; other ``Symptoms`` fields likewise.
  - ``Secondary_Symptoms``: one ``symptoms`` fact each ("Yes, I've also had <it>.").
  - ``Past_Medical_History`` (``past_history``), ``Social_History`` (``social``),
    ``Review_of_Systems`` (``symptoms``), and any other field (``Medications`` -> ``medications``,
    ``Allergies`` -> ``allergies``, ``Family_History`` -> ``family_history``, else ``history``): one
    fact per sentence or list item. Every fact of such a field also has the field's own triggers
    ("medical history", "social history", "review of systems", ...).
    Triggers of all these free-text facts are chosen from their own words: word pairs and single
    words that no other free-text fact of the case uses first (so one question does not reveal
    everything), then lay synonyms of clinical words in the text ("fatigue" -> "tired").
  - ``Physical_Examination_Findings``: one fact per leaf, category ``vitals`` under a vital-signs
    section, else ``exam``; answer "On examination - <finding>: <value>." (vitals: "Vital signs -
    ..."). Triggers: the finding's name ("heart auscultation"; a generic name such as "findings"
    or "inspection" is qualified by its section), the section names ("cardiovascular examination",
    "vital signs"), lay requests by body part ("listen to your heart", "look in your ears"), and
    "physical examination" / "physical exam" for every exam finding. The bare word "examine" is not
    a trigger: it would reveal the whole examination to any request to examine anything.
  - ``Test_Results``: one fact per leaf, category ``exam`` (the schema has no test-result category;
    a result is an objective finding the clinician obtains, like an examination finding), answer
    "Test result - <test> (<section>): <value>." Triggers: the test's name, its section names
    ("blood tests", "complete blood count") and common abbreviations ("ecg", "cbc", "cxr", ...).
    Generic words such as "order", "test" or "results" are not triggers.
- ``critical`` (a heuristic, so that the information score weighs what points to the diagnosis):
  every test result; every ``History`` sentence that shares a content word with the primary
  symptom (the details of the presenting complaint); and every fact whose text names a content
  word of the diagnosis. If that marks nothing, the first history fact.
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

from scenarios.importers._common import Converted, RowContext, RowError, sha_hex, slug
from scenarios.importers._text import (
    STOPWORDS,
    WEAK_WORDS,
    KeyPhrases,
    first_person,
    humanise,
    is_usable_trigger,
    lay_synonyms,
    lower_first,
    rough_stem,
    sentences,
    snippet,
    words,
)

DEFAULT_AGE = 40
DEFAULT_SEX = "other"
TURN_LIMIT = 20
MAX_TRIGGERS = 10
FALLBACK_LINES = ["I'm not sure.", "I don't know, sorry.", "Nothing else comes to mind."]

# Patient_Actor field (humanised, matched by substring) -> category and the field's own triggers.
_FIELDS: list[tuple[str, str, str, list[str]]] = [  # (name contains, fact id prefix, category, triggers)
    ("past medical", "pmh", "past_history", ["medical history", "past medical", "medical conditions",
                                             "health problems"]),
    ("surgical", "surgical", "past_history", ["surgery", "operations", "surgical history"]),
    ("social", "social", "social", ["social history"]),
    ("review of systems", "ros", "symptoms", ["review of systems", "other symptoms"]),
    ("medication", "medication", "medications", ["medications", "medicines"]),
    ("allerg", "allergy", "allergies", ["allergies", "allergic"]),
    ("family", "family", "family_history", ["family history", "family"]),
    ("obstetric", "obstetric", "obstetric", ["obstetric history", "pregnancies"]),
    ("gyn", "gynae", "obstetric", ["gynaecological history", "periods"]),
    ("menstrual", "menstrual", "obstetric", ["periods", "menstrual history"]),
]

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


@dataclass
class _Fact:
    prefix: str
    category: str
    answer: str
    text: str  # the words triggers are chosen from
    fixed: list[str] = field(default_factory=list)  # triggers given by structure, first
    extra: list[str] = field(default_factory=list)  # triggers appended after the chosen ones
    free_text: bool = True
    critical: bool = False
    origin: str = ""


# --- demographics -------------------------------------------------------------------------------

_AGE_UNIT = re.compile(r"(\d+(?:\.\d+)?)\s*[- ]?\s*(years?|yrs?|y/?o|months?|mos?|weeks?|wks?|days?)\b(?:[- ]?old)?",
                       re.I)
_AGE_BARE = re.compile(r"(?:\bage[d:]?\s*|^\s*)(\d{1,3})(?:\s*[mf]\b|\s*,|\s*$)", re.I)
_FEMALE = re.compile(r"(?:\b|(?<=\d))(?:female|woman|women|girl|lady|mother|she|her|pregnant|f)\b", re.I)
_MALE = re.compile(r"(?:\b|(?<=\d))(?:male|man|men|boy|gentleman|father|he|his|m)\b", re.I)
_GESTATIONAL = re.compile(r"\b(?:born\s+)?(?:at|after|before)?\s*(?:the\s+)?\d{1,2}\s*(?:st|nd|rd|th)?\s*[- ]?\s*"
                          r"(?:gestational\s+)?weeks?'?\s*(?:of\s+)?(?:gestation(?:al)?(?:\s+age)?|gestational\s+week)"
                          r"|\b\d{1,2}\s*(?:st|nd|rd|th)\s+gestational\s+week", re.I)
_NEWBORN = re.compile(r"\b(?:new[- ]?born|neonate|neonatal|hours?\s+(?:old|post[- ]?(?:delivery|partum)|after\s+birth))\b",
                      re.I)
_GESTATION = re.compile(r"(\d{1,2})\s*[- ]?\s*weeks?'?\s*(?:of\s+)?(?:gestation|pregnan)|\bat\s+(\d{1,2})\s*weeks\b", re.I)


# In a case's history only the patient's own pronouns and nouns say the sex: "the mother", "her pregnancy"
# and "his father" are about the parents of a newborn, not the patient.
_HISTORY_FEMALE = re.compile(r"\b(?:she|girl|woman|lady)\b", re.I)
_HISTORY_MALE = re.compile(r"\b(?:he|boy|man|gentleman)\b", re.I)


def _sex_in(text: str, female_re: re.Pattern[str] = _FEMALE, male_re: re.Pattern[str] = _MALE) -> str | None:
    """The sex a text names, when it names only one ("a 3-day-old boy", "she has been feeding poorly")."""
    female, male = len(female_re.findall(text)), len(male_re.findall(text))
    return "female" if female and not male else "male" if male and not female else None


def parse_demographics(text: Any, history: Any = None) -> tuple[dict[str, Any], list[str], list[str]]:
    """``Demographics`` -> (patient_profile data, warnings, tags); see the module docstring. ``history``
    (the case's own text) gives the sex when the demographics do not ("he", "she", "boy", "girl")."""
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


# --- building the information tree --------------------------------------------------------------

def _actor_fields(actor: dict[str, Any]) -> list[_Fact]:
    facts: list[_Fact] = []
    symptoms = actor.get("Symptoms") if isinstance(actor.get("Symptoms"), dict) else {}
    for key, value in actor.items():
        name = humanise(str(key))
        if name in ("demographics", "symptoms"):
            continue
        if name == "history":
            facts.extend(_Fact("history", "history", first_person(s), s, origin="history")
                         for s in _items(value))
            continue
        prefix, category, own = slug(name, 16) or "item", "history", [t for t in [name] if is_usable_trigger(t)]
        for needle, pre, cat, triggers in _FIELDS:
            if needle in name:
                prefix, category, own = pre, cat, triggers
                break
        facts.extend(_Fact(prefix, category, first_person(s), s, extra=list(own), origin=name) for s in _items(value))
    for key, value in symptoms.items():
        name = humanise(str(key))
        if name == "primary symptom":
            continue
        if name == "secondary symptoms":
            listed = [v for v in re.split(r"[;,]\s*", value) if v.strip()] if isinstance(value, str) else value
            for item in _items(listed, split_sentences=False):
                facts.append(_symptom_fact(item))
            continue
        own = [t for t in [name] if is_usable_trigger(t)]
        facts.extend(_Fact(slug(name, 16) or "symptom", "symptoms", first_person(s), s, extra=own, origin=name)
                     for s in _items(value))
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


def _symptom_fact(item: str) -> _Fact:
    text = item.strip().rstrip(".")
    if _NEGATIVE.match(text):
        rest = _NEGATIVE.sub("", text)
        answer = f"No, I haven't had {lower_first(rest)}." if rest else "No."
    else:
        answer = f"Yes, I've also had {lower_first(text)}."
    fixed = [text.lower()] if len(words(text)) <= 4 and is_usable_trigger(text) else []
    if _NEGATIVE.match(text) and fixed:
        fixed = [_NEGATIVE.sub("", text).lower()] if is_usable_trigger(_NEGATIVE.sub("", text)) else []
    return _Fact("symptom", "symptoms", answer, text, fixed=fixed, origin="secondary symptoms")


def _structured(section: Any, *, tests: bool) -> list[_Fact]:
    leaves = _leaves(section, ()) if isinstance(section, dict) else _leaves(section, (
        "test results" if tests else "physical examination",))
    acronyms = _acronyms(section)
    counts: dict[str, int] = {}
    for path, _ in leaves:
        if path:
            counts[_split_name(path[-1])[0]] = counts.get(_split_name(path[-1])[0], 0) + 1
    facts: list[_Fact] = []
    for path, value in leaves:
        name, alt = _finding_name(path, counts)
        sections = [s for p in path[:-1] for s in _section_forms(p) if is_usable_trigger(s)]
        path_words = {w for p in path for w in words(p)}
        if tests:
            context = ", ".join(p for p in path[:-1] if p not in _GENERIC_LEAVES)
            label = f"{name} ({context})" if context and context != name else name
            label = _shown(label, acronyms)
            lay = _test_lay([name, *path])
            fixed = [t for t in [name, *alt, *sections] if is_usable_trigger(t)]
            facts.append(_Fact("test", "exam", f"Test result - {label}: {_sentence_end(value)}", value,
                               fixed=fixed, extra=lay, free_text=False, critical=True, origin="test results"))
            continue
        vital = "vital" in path_words or "vitals" in path_words
        if vital:
            lay = _lay(path_words, _VITAL_LAY, need_all=True)
            fixed = [t for t in [name, *alt] if is_usable_trigger(t)]
            facts.append(_Fact("vital", "vitals", f"Vital signs - {_shown(name, acronyms)}: {_sentence_end(value)}", value,
                               fixed=fixed, extra=[*lay, "vital signs", "vitals"], free_text=False,
                               origin="physical examination"))
            continue
        lay = _lay(path_words, _EXAM_LAY, need_all=False)
        fixed = [t for t in [name, *alt, *sections] if is_usable_trigger(t)]
        facts.append(_Fact("exam", "exam", f"On examination - {_shown(name, acronyms)}: {_sentence_end(value)}", value, fixed=fixed,
                           extra=[*lay, "physical examination", "physical exam"], free_text=False,
                           origin="physical examination"))
    return facts


def _content_stems(text: str, filler: frozenset[str] | set[str]) -> set[str]:
    return {rough_stem(w) for w in words(text) if w not in filler and len(w) >= 3 and not w.isdigit()}


def _mark_critical(facts: list[_Fact], primary: str, diagnosis: str) -> None:
    primary_stems = _content_stems(primary, STOPWORDS | WEAK_WORDS)
    diagnosis_stems = _content_stems(diagnosis, _DIAGNOSIS_FILLER)
    for f in facts:
        stems = _content_stems(f.text, set())
        if f.origin == "history" and primary_stems & stems:
            f.critical = True
        if diagnosis_stems & (stems | _content_stems(f.answer, set())):
            f.critical = True
    if not any(f.critical for f in facts):
        first = next((f for f in facts if f.origin == "history"), facts[0])
        first.critical = True


def _to_tree(facts: list[_Fact]) -> list[dict[str, Any]]:
    phrases = KeyPhrases(f.text for f in facts if f.free_text)
    tree: list[dict[str, Any]] = []
    used: set[str] = set()
    for f in facts:
        chosen = phrases.triggers(f.text) if f.free_text else []
        triggers: list[str] = []
        for t in [*f.fixed, *chosen, *lay_synonyms(f.text), *f.extra]:
            t = " ".join(t.split()).lower()
            if t and t not in triggers and is_usable_trigger(t):
                triggers.append(t)
        if not triggers:  # nothing telling in the text: only the field's name can ask for it
            triggers = [humanise(f.origin) or "anything else"]
        base = f"{f.prefix}_{slug(' '.join(words(triggers[0])), 24)}".rstrip("_")
        fact_id, n = base, 2
        while fact_id in used:
            fact_id, n = f"{base}_{n}", n + 1
        used.add(fact_id)
        entry: dict[str, Any] = {"id": fact_id, "category": f.category, "triggers": triggers[:MAX_TRIGGERS],
                                 "answer": f.answer}
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
    symptoms = actor.get("Symptoms")
    primary = symptoms.get("Primary_Symptom") if isinstance(symptoms, dict) else None
    if isinstance(primary, list):
        primary = ", ".join(str(p) for p in primary if p)
    if not isinstance(primary, str) or not primary.strip():
        raise RowError("OSCE_Examination.Patient_Actor.Symptoms.Primary_Symptom is missing or empty; it is the "
                       "chief complaint and the patient's opening line")
    primary = " ".join(primary.split()).rstrip(".")

    profile, warnings, profile_tags = parse_demographics(actor.get("Demographics"), actor.get("History"))
    facts = _actor_fields(actor)
    facts += _structured(osce.get("Physical_Examination_Findings") or {}, tests=False)
    facts += _structured(osce.get("Test_Results") or {}, tests=True)
    if not facts:
        raise RowError("the case has no history, examination findings or test results to reveal")
    _mark_critical(facts, primary, diagnosis)

    scenario_id = agentclinic_id(row, diagnosis)
    if re.match(r"^(?:I|I'm|I've|My)\b", primary):
        opening = primary
    elif re.match(r"^(?:a|an|the|my|some|no|\d)", primary, re.I):
        opening = f"I've come in because of {lower_first(primary)}"
    else:
        opening = f"I've come in because of my {lower_first(primary)}"
    demographics = actor.get("Demographics") if isinstance(actor.get("Demographics"), str) else ""
    title = f"AgentClinic OSCE: {snippet(primary, 60)}" + (f" ({snippet(demographics, 40)})" if demographics else "")
    data: dict[str, Any] = {
        "id": scenario_id,
        "title": title,
        "suite": "ddx",
        "tags": ["source:agentclinic", "osce", *profile_tags],
        "tier": "A",
        "canary": f"encsim-canary-{sha_hex(scenario_id)}-{scenario_id.replace('_', '-')}",
        "patient_profile": profile,
        "chief_complaint": snippet(primary, 80),
        "opening_line": _sentence_end(opening),
        "fallback_lines": list(FALLBACK_LINES),
        "information_tree": _to_tree(facts),
        "expected": {"diagnoses": [_diagnosis(diagnosis)]},
        "turn_limit": TURN_LIMIT,
        "source": f"agentclinic:{ctx.file_name}#{ctx.line}",
    }
    return Converted(data=data, warnings=warnings)
