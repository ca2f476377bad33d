"""The facts of an AgentClinic OSCE case's examination findings and test results.

One fact per finding (vital signs, a system's examination, general appearance) and one per test or panel
(analytes listed under a generic name are grouped into the panels clinicians order), with the triggers and
intents that ask for it, and ``critical`` when the finding or result is abnormal (``_osce_abnormal``). The mapping is
in ``_agentclinic.py``'s docstring (``Physical_Examination_Findings``, ``Test_Results``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from scenarios.importers._osce_abnormal import abnormal
from scenarios.importers._osce_sections import (
    _MEASUREMENT_KEYS,
    MAX_TRIGGERS,
    _Fact,
    _leaves,
    _scalar,
    _sentence_end,
    _split_name,
    not_provided,
)
from scenarios.importers._text import humanise, is_usable_trigger, lower_first, words

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
# What a result is like, not what test it is ("Stool_Test": {"Appearance": "Watery"} is the stool test).
_DESCRIPTORS = {"appearance", "color", "colour", "consistency", "odor", "odour", "clarity", "volume", "quality"}
_SECTION_SUFFIX = re.compile(r"\s+(?:examination|exam|findings|tests|test|results)$")

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


# --- examination --------------------------------------------------------------------------------

def _exam_facts(section: Any, adult: bool = True) -> list[_Fact]:
    """One fact per finding; ``critical`` when abnormal (``_osce_abnormal.abnormal``, adult limits if ``adult``)."""
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
                               intents=intents, critical=abnormal(value, name, adult), origin="physical examination"))
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
                           intents=intents, critical=abnormal(value, " ".join(path), adult),
                           origin="physical examination"))
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
            elif len(parts) == 1 and parts[0][0] and parts[0][0] not in _DESCRIPTORS:
                # "Imaging": {"Chest_CT": {"Findings": ...}}: the chest CT
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


def _test_fact(test: _Test, acronyms: set[str], adult: bool = True) -> _Fact:
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
                 critical=any(abnormal(v, " ".join(x for x in (test.context, test.name, n) if x), adult)
                              for n, v in test.parts),
                 origin="test results")


def _test_facts(section: Any, adult: bool = True) -> list[_Fact]:
    """One fact per test or panel; ``critical`` when a result of it is abnormal (``_osce_abnormal.abnormal``)."""
    acronyms = _acronyms(section)
    return [_test_fact(t, acronyms, adult) for t in _collect_tests(section)]
