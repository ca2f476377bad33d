"""The word lists of diagnosis matching (``scorers._diagnosis``) and its lint (``scorers._diagnosis_lint``).

Hedges, negators and considerations, trailing exclusions, copulas and modals, prepositions, laterality, organs
and location words (``ORGANS``, ``LOCATION``), the clause connectives (``_CONNECTIVES``: alternatives, causes,
contexts, negation), the contrast classes (``CONTRASTS``), the names that name no specific condition
(``GENERIC``) with their lay equivalents, the neutral modifiers a generic name may carry (``NEUTRAL``), and the
common benign diagnoses (``COMMON_BENIGN``). Each is normalised once, at import, with
``scorers._diagnosis_text.normalise``; ``scorers._diagnosis``'s docstring says how the matcher reads them.
"""

from __future__ import annotations

from typing import Final, Literal, NamedTuple

from scorers._diagnosis_text import Tokens, _phrases, normalise

ClauseKind = Literal["start", "boundary", "alt", "cause", "context", "neg"]

# -------------------------------------------------------------------------------------------- word lists
_HEDGES: Final = _phrases([
    "likely", "most likely", "more likely", "very likely", "highly likely", "probable", "probably", "possible",
    "possibly", "suspected", "suspect", "presumed", "presumptive", "provisional", "query", "questionable",
    "working diagnosis", "differential diagnosis", "differential", "diagnosis", "impression", "clinical",
    "consider", "considering", "concern for", "concerning for", "suspicion of", "suspicion for",
    "high suspicion of", "high suspicion for", "suspicious for", "rule out", "to rule out", "need to rule out",
    "must rule out", "exclude", "to exclude", "need to exclude", "must exclude", "cannot exclude",
    "can not exclude", "cant exclude", "cannot rule out", "can not rule out", "cant rule out", "dont miss",
    "do not miss", "must not miss", "not to miss", "cant miss", "cannot miss", "early features of",
    # "X" is the diagnosis being named after these, not the object of a preposition
    "diagnosis of", "working diagnosis of", "provisional diagnosis", "provisional diagnosis of",
    "presumed diagnosis of", "clinical diagnosis of", "likely diagnosis", "likely diagnosis of", "impression of",
    "features of", "clinical features of", "features suggestive of", "features consistent with", "suggestive of",
    "picture of", "clinical picture of", "picture consistent with", "presentation consistent with",
    "presentation suggestive of", "in keeping with", "consistent with", "compatible with", "typical of",
    "suspicious of", "highly suspicious of", "highly suspicious for", "high probability of",
    "high likelihood of", "possibility of", "probable diagnosis of", "differential of", "differential includes",
    "evolving",
])
_TRAILING_HEDGES: Final = frozenset({"likely", "probable", "probably", "possible", "possibly", "suspected",
                                     "presumed", "query", "most", "more", "very", "highly", "is", "was"})
_NEGATORS: Final = _phrases([
    "not", "no", "non", "never", "without", "ruled out", "excluded", "negative for", "unlikely",
    "less likely", "not likely", "improbable", "doubtful", "absent", "absence of", "free of", "resolved",
    "history of", "history", "hx", "previous", "prior", "past", "old", "remote", "treated", "status post",
    "mimic", "mimicking", "pseudo", "rather than", "instead of", "other than", "except", "excluding",
    "low suspicion", "low probability", "low likelihood", "low index of suspicion", "doubt", "neither",
])
# negation words that are part of a consideration, masked before looking for a negator
_CONSIDERATIONS: Final = _phrases([
    "cannot exclude", "can not exclude", "cant exclude", "cannot rule out", "can not rule out", "cant rule out",
    "not excluded", "not ruled out", "not yet excluded", "not yet ruled out", "dont miss", "do not miss",
    "must not miss", "not to miss", "cannot be excluded", "can not be excluded", "cant be excluded",
    "cannot be ruled out", "can not be ruled out", "cant be ruled out",
])
_TRAILING_NEGATORS: Final = _phrases([
    "ruled out", "excluded", "unlikely", "less likely", "not likely", "improbable", "doubtful", "negative",
    "not suspected", "not supported", "not favoured", "not favored", "not present", "absent", "resolved",
    "not found", "not seen", "not diagnosis", "not cause", "not consistent", "not in keeping",
])
_COPULAS: Final = frozenset({"is", "are", "was", "were", "be", "been", "being", "has", "have", "had", "now",
                             "already", "considered", "felt", "thought", "deemed", "clinically", "essentially",
                             "effectively", "largely", "also", "very", "much", "far"})
_PROSPECTIVE: Final = frozenset({"to", "must", "should", "need", "needs", "cannot", "cant", "can", "not", "yet",
                                 "still", "will", "may", "might", "until"})
_UNTIL_PROVEN: Final = normalise("until proven otherwise")
_OF_UNKNOWN: Final = frozenset({"unknown", "undetermined", "uncertain", "unclear"})
_PREPOSITIONS: Final = frozenset({"of", "for", "about", "to", "at", "by", "into", "than", "like", "over", "under",
                                  "toward", "towards", "regarding", "re", "concerning", "complaining"})
_OTHER_STRUCTURE: Final = frozenset({"appendix", "appendage", "appendice", "hydatid"})
_LATERALITY: Final = frozenset({"left", "right", "bilateral", "unilateral", "sided", "side", "both"})
# organs and body parts, normalised (an organ's noun is its adjective: "testis" is "testicular"): an "of" phrase
# that ends in one is reordered ("torsion of the left testis" = "left testicular torsion", ``of_variant``)
ORGANS: Final = frozenset(w for t in (
    "testis", "kidney", "lung", "heart", "brain", "liver", "stomach", "ovary", "aorta", "radius", "ulna", "fibula",
    "tibia", "femur", "humerus", "esophagus", "uterus", "leg", "arm", "limb", "calf", "thigh", "shin", "heel", "foot",
    "toe", "ankle", "wrist", "hand", "finger", "knee", "hip", "shoulder", "elbow", "chest", "abdomen", "head", "neck",
    "back", "spine", "shaft", "malleolus", "bladder", "gallbladder", "pancreas", "cervix", "breast", "throat", "eye",
    "ear", "skin", "appendix", "tube", "fallopian tube", "colon", "bowel", "scrotum", "hemisphere", "lobe",
    "adnexa", "flank", "ureter", "orbit", "cornea", "ligament", "tendon", "muscle", "joint", "bone",
) for w in normalise(t))
# words that place a lesion; with the organs, an aside made only of them qualifies the name before it
# ("Ischaemic stroke - right MCA territory", "Ectopic pregnancy (left adnexa)")
_POSITIONS: Final = frozenset({
    *_LATERALITY, "upper", "lower", "lateral", "medial", "anterior", "posterior", "inferior", "superior", "proximal",
    "distal", "middle", "central", "peripheral", "hemispheric", "territory", "quadrant", "iliac", "fossa",
    "adnexal", "region", "zone", "artery", "lobar", "distribution", "cerebral", "pectoral", "lumbar", "paraspinal",
    "thoracic", "cervical",
})
LOCATION: Final = ORGANS | _POSITIONS


def _connectives(kind: ClauseKind, *phrases: str) -> list[tuple[Tokens, ClauseKind]]:
    return [(normalise(p), kind) for p in phrases]


_CONNECTIVES: Final[tuple[tuple[Tokens, ClauseKind], ...]] = tuple(sorted(
    [*_connectives("alt", "or", "and", "nor", "vs", "versus", "v", "/", "query"),
     *_connectives("cause", "with", "due to", "secondary to", "caused by", "from", "because of", "complicated by",
                   "leading to", "causing", "related to", "triggered by", "precipitated by", "consistent with",
                   "compatible with", "in keeping with"),
     *_connectives("context", "in", "on", "after", "following", "during", "at", "post", "given", "in view of",
                   "based on", "despite", "failing", "not responding to", "unresponsive to", "refractory to"),
     *_connectives("neg", "without")],
    key=lambda c: len(c[0]), reverse=True))
class Contrast(NamedTuple):
    """A class of mutually exclusive qualifiers: each member phrase stands for one or more values of the class.

    Two qualifier sets contrast when both hold members and share no value ("mild" vs "severe", "left" vs
    "right"); "bilateral" is both sides and "infectious" every infective cause, so they contrast with neither.
    ``anchor``: the class applies only when the expected diagnosis holds one of these words (empty: always).
    """

    name: str
    members: tuple[tuple[Tokens, frozenset[str]], ...]  # longest phrase first
    anchor: frozenset[str] = frozenset()


def _contrast(name: str, members: dict[str, str], anchor: tuple[str, ...] = ()) -> Contrast:
    pairs = {normalise(p): frozenset(v.split()) for p, v in members.items()}
    return Contrast(name, tuple(sorted(pairs.items(), key=lambda kv: len(kv[0]), reverse=True)),
                    frozenset(w for a in anchor for w in normalise(a)))


_INFECTIVE: Final = "viral bacterial fungal parasitic"
_NON_INFECTIVE: Final = "allergic atopic irritant chemical autoimmune alcoholic drug"
CONTRASTS: Final[tuple[Contrast, ...]] = (
    _contrast("cause", {
        "viral": "viral", "adenoviral": "viral", "herpetic": "viral", "bacterial": "bacterial",
        "streptococcal": "bacterial", "staphylococcal": "bacterial", "pneumococcal": "bacterial",
        "meningococcal": "bacterial", "gonococcal": "bacterial", "chlamydial": "bacterial", "pyogenic": "bacterial",
        "allergic": "allergic", "fungal": "fungal", "candidal": "fungal", "parasitic": "parasitic",
        "atopic": "atopic", "irritant": "irritant", "chemical": "chemical", "autoimmune": "autoimmune",
        "alcoholic": "alcoholic", "drug induced": "drug", "infectious": _INFECTIVE,
        "noninfectious": _NON_INFECTIVE, "aseptic": "viral chemical autoimmune drug"}),
    # look-alikes named by their cause: starvation or alcoholic ketoacidosis is not diabetic ketoacidosis
    _contrast("metabolic cause", {"diabetic": "diabetic", "euglycemic": "diabetic", "alcoholic": "alcoholic",
                                  "alcohol": "alcoholic", "starvation": "starvation", "fasting": "starvation"}),
    _contrast("trauma", {"traumatic": "traumatic", "spontaneous": "spontaneous", "nontraumatic": "spontaneous",
                         "atraumatic": "spontaneous"}),
    # "left" and "right" in the name of a heart structure are no side of the body ("" : read, no value)
    _contrast("side", {"left": "left", "right": "right", "bilateral": "left right", "both": "left right",
                       **{f"{s} {part}": "" for s in ("left", "right") for part in (
                           "ventricular", "ventricle", "atrial", "atrium", "bundle", "coronary", "anterior descending",
                           "main", "circumflex", "heart", "sided heart", "cardiac", "sided cardiac")}}),
    _contrast("severity", {
        "mild": "mild", "minor": "mild", "moderate": "moderate", "severe": "severe", "life threatening": "severe",
        "near fatal": "severe", "critical": "severe", "fulminant": "severe", "massive": "severe",
        "shock": "severe", "with severe feature": "severe", "without severe feature": "mild moderate"}),
    _contrast("stability", {"stable": "stable", "unstable": "unstable"}),
    _contrast("acute coronary syndrome", {"st elevation": "stemi", "nonst elevation": "nstemi",
                                          "unstable angina": "unstable_angina"}),
    # the universal definition's types: an ACS and a STEMI are type 1, a type 2 MI (supply and demand) is neither
    _contrast("infarct type", {"type 1": "1", "type 2": "2", "type 3": "3", "st elevation": "1",
                               "acute coronary syndrome": "1"}, anchor=("myocardial", "coronary")),
    _contrast("infarct territory", {
        "anterior": "anterior", "anteroseptal": "anterior septal", "anterolateral": "anterior lateral",
        "inferior": "inferior", "inferolateral": "inferior lateral", "inferoposterior": "inferior posterior",
        "posterior": "posterior", "lateral": "lateral", "high lateral": "lateral", "septal": "septal"},
        anchor=("myocardial", "infarction")),
    _contrast("type", {"type 1": "1", "insulin dependent": "1", "type 2": "2", "noninsulin dependent": "2",
                       "type 3": "3", "type a": "a", "type b": "b"}),
    _contrast("stroke", {"ischemic": "ischemic", "thrombotic": "ischemic", "embolic": "ischemic",
                         "cardioembolic": "ischemic", "thromboembolic": "ischemic", "lacunar": "ischemic",
                         "hemorrhagic": "hemorrhagic"}),
    _contrast("pregnancy site", {"ectopic": "ectopic", "tubal": "ectopic", "extrauterine": "ectopic",
                                 "cornual": "ectopic", "intrauterine": "intrauterine"},
              anchor=("pregnancy", "gestation")),
    _contrast("miscarriage", {"threatened": "threatened", "inevitable": "inevitable", "incomplete": "incomplete",
                              "complete": "complete", "missed": "missed", "septic": "septic"},
              anchor=("miscarriage", "abortion", "pregnancy loss")),
    _contrast("aura", {"with aura": "aura", "classic": "aura", "without aura": "no_aura", "common": "no_aura"},
              anchor=("migraine",)),
    _contrast("suicidal ideation", {"passive": "passive", "active": "active", "with plan": "active",
                                    "with intent": "active", "without plan": "passive"},
              anchor=("suicidal", "suicide")),
    # a cystitis is a lower, a pyelonephritis an upper urinary tract infection
    _contrast("level", {"upper": "upper", "lower": "lower", "cystitis": "lower", "pyelonephritis": "upper",
                        "pyelo": "upper"}),
    _contrast("segment", {"proximal": "proximal", "distal": "distal", "shaft": "shaft", "midshaft": "shaft",
                          "diaphyseal": "shaft"}),
    _contrast("course", {"acute": "acute", "chronic": "chronic"}),
    _contrast("stage", {"early": "early", "late": "late"}),
    _contrast("spread", {"localized": "localized", "disseminated": "disseminated"}),
    _contrast("position", {"medial": "medial", "lateral": "lateral", "bimalleolar": "medial lateral",
                           "high ankle": "syndesmotic", "syndesmotic": "syndesmotic", "syndesmosis": "syndesmotic"}),
    _contrast("malignancy", {"benign": "benign", "malignant": "malignant"}),
    _contrast("origin", {"primary": "primary", "secondary": "secondary"}),
    _contrast("complication", {"complicated": "complicated", "complex": "complicated",
                               "uncomplicated": "uncomplicated", "simple": "uncomplicated"}),
    _contrast("rupture", {"ruptured": "ruptured", "unruptured": "unruptured"}),
    _contrast("displacement", {"displaced": "displaced", "undisplaced": "undisplaced",
                               "nondisplaced": "undisplaced"}),
)


# What names no specific condition on its own. Diagnoses that name one are not here even when broad ("sepsis",
# "pneumonia", "meningitis", "migraine", "conjunctivitis": the last is caught by COMMON_BENIGN instead).
GENERIC_TERMS: Final[tuple[str, ...]] = (
    # symptoms and signs
    "pain", "ache", "fever", "pyrexia", "high temperature", "temperature", "febrile", "headache", "head pain",
    "chest pain", "abdominal pain", "abdo pain", "stomach pain", "stomach ache", "tummy ache", "belly pain",
    "back pain", "pelvic pain", "bleeding", "bleed", "hemorrhage", "blood loss", "rash", "cough", "wheeze",
    "wheezing", "vomiting", "nausea", "diarrhea", "dizziness", "vertigo", "syncope", "collapse", "faint",
    "fainting", "blackout", "fall", "weakness", "fatigue", "tiredness", "malaise", "swelling", "lump", "mass",
    "shortness of breath", "breathlessness", "dyspnea", "palpitation", "tachycardia", "sore throat", "earache",
    "confusion", "anxiety", "panic", "stress", "distress", "low mood",
    # findings
    "hypertension", "high blood pressure", "hypotension", "low blood pressure", "hyperglycemia",
    "high blood sugar", "hypoglycemia", "low blood sugar", "hypoxia",
    # categories, mechanisms and lesions that name no specific condition
    "infection", "bacterial infection", "viral infection", "viral illness", "illness", "inflammation", "injury",
    "trauma", "fracture", "sprain", "strain", "torsion", "aneurysm", "dissection", "ulcer", "gangrene", "cyst",
    "lesion", "tumor", "growth", "clot", "blood clot", "shock", "disease", "syndrome", "condition", "emergency",
    # organs and adjectives used as nouns
    "appendix", "ectopic",
)
GENERIC: Final = frozenset(normalise(t) for t in GENERIC_TERMS)
# a generic term and its lay equivalents: a diagnosis whose name *is* the term may list them (see synonym_problems)
_GENERIC_EQUIVALENTS: Final = tuple(frozenset(normalise(t) for t in group) for group in (
    ("hypertension", "high blood pressure"), ("hypotension", "low blood pressure"),
    ("hyperglycemia", "high blood sugar"), ("hypoglycemia", "low blood sugar"),
    ("fever", "pyrexia", "high temperature"), ("dyspnea", "shortness of breath", "breathlessness"),
    ("syncope", "faint", "fainting", "blackout"),
))
NEUTRAL: Final = frozenset({"acute", "severe", "mild", "moderate", "high", "low", "very", "significant",
                            "uncontrolled", "controlled", "poorly", "well", "known", "new", "onset", "recurrent",
                            "persistent", "ongoing", "worsening", "sudden", "isolated", "prolonged", "intractable",
                            "refractory", "stage", "grade", "1", "2", "3", "4", *_LATERALITY})

# Common, usually self-limiting or primary-care diagnoses that an agent names *instead of* a serious one. A name
# that ends with one of these makes its diagnosis benign for the lint; keep organ-qualified serious forms out
# (no bare "colic": renal colic; no "contusion": pulmonary contusion).
COMMON_BENIGN_TERMS: Final[tuple[str, ...]] = (
    "viral fever", "viral illness", "viral infection", "viral syndrome", "viral URI", "viral URTI",
    "upper respiratory tract infection", "common cold", "head cold", "flu", "influenza like illness",
    "tension headache", "tension type headache", "migraine", "non-cardiac chest pain", "musculoskeletal chest pain",
    "chest wall pain", "costochondritis", "muscle strain", "pulled muscle", "musculoskeletal pain",
    "mechanical back pain", "simple back pain", "mechanical low back pain", "anxiety", "anxiety attack",
    "panic attack", "health anxiety", "stress", "hyperventilation", "allergic conjunctivitis",
    "viral conjunctivitis", "simple UTI", "lower UTI", "lower urinary tract infection", "cystitis",
    "bladder infection", "essential hypertension", "white coat hypertension", "gastroenteritis",
    "viral gastroenteritis", "stomach bug", "food poisoning", "constipation", "indigestion", "dyspepsia",
    "acid reflux", "GORD", "GERD", "heartburn", "irritable bowel syndrome", "functional abdominal pain",
    "benign positional vertigo", "BPPV", "vasovagal syncope", "simple faint", "ankle sprain", "sprained ankle",
    "soft tissue injury", "bruise", "minor head injury", "otitis media", "sinusitis", "pharyngitis",
    "tonsillitis", "viral rash", "eczema", "contact dermatitis", "insect bite", "urticaria", "hives", "hay fever",
    "allergic rhinitis", "teething", "infant colic", "period pain", "dysmenorrhea", "ovulation pain",
)
COMMON_BENIGN: Final = frozenset(normalise(t) for t in COMMON_BENIGN_TERMS)
# (term, normalised, normalised without prefix joining)
_BENIGN_FORMS: Final = tuple((t, normalise(t), normalise(t, join_prefixes=False)) for t in COMMON_BENIGN_TERMS)
