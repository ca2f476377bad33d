"""The word lists of diagnosis matching (``scorers._diagnosis``) and its lint (``scorers._diagnosis_lint``).

Hedges, negators and considerations, trailing exclusions, copulas and modals, prepositions, laterality, the
clause connectives (``_CONNECTIVES``: alternatives, causes, contexts, negation), the contrast classes
(``_CONTRAST``), the names that name no specific condition (``GENERIC``) with their lay equivalents, the neutral
modifiers a generic name may carry (``NEUTRAL``), and the common benign diagnoses (``COMMON_BENIGN``). Each is
normalised once, at import, with ``scorers._diagnosis_text.normalise``; ``scorers._diagnosis``'s docstring says
how the matcher reads them.
"""

from __future__ import annotations

from typing import Final, Literal

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
])
_TRAILING_HEDGES: Final = frozenset({"likely", "probable", "possible", "suspected", "presumed", "query", "most",
                                     "more", "very", "highly", "is", "was"})
_NEGATORS: Final = _phrases([
    "not", "no", "non", "never", "without", "ruled out", "excluded", "negative for", "unlikely",
    "less likely", "not likely", "improbable", "doubtful", "absent", "absence of", "free of", "resolved",
    "history of", "history", "hx", "previous", "prior", "past", "old", "remote", "treated", "status post",
    "mimic", "mimicking", "pseudo", "rather than", "instead of", "other than", "except", "excluding",
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


def _connectives(kind: ClauseKind, *phrases: str) -> list[tuple[Tokens, ClauseKind]]:
    return [(normalise(p), kind) for p in phrases]


_CONNECTIVES: Final[tuple[tuple[Tokens, ClauseKind], ...]] = tuple(sorted(
    [*_connectives("alt", "or", "and", "nor", "vs", "versus", "v", "/", "query"),
     *_connectives("cause", "with", "due to", "secondary to", "caused by", "from", "because of", "complicated by",
                   "leading to", "causing", "related to", "triggered by", "precipitated by", "consistent with",
                   "compatible with", "in keeping with"),
     *_connectives("context", "in", "on", "after", "following", "during", "at", "post"),
     *_connectives("neg", "without")],
    key=lambda c: len(c[0]), reverse=True))
_CONTRAST: Final[tuple[dict[str, str], ...]] = (
    {"viral": "viral", "adenoviral": "viral", "herpetic": "viral", "bacterial": "bacterial",
     "streptococcal": "bacterial", "staphylococcal": "bacterial", "pneumococcal": "bacterial",
     "meningococcal": "bacterial", "gonococcal": "bacterial", "chlamydial": "bacterial", "allergic": "allergic",
     "fungal": "fungal", "candidal": "fungal", "parasitic": "parasitic", "atopic": "atopic", "irritant": "irritant",
     "chemical": "chemical", "autoimmune": "autoimmune"},
    {"upper": "upper", "lower": "lower"},
    {"acute": "acute", "chronic": "chronic"},
    {"benign": "benign", "malignant": "malignant"},
    {"primary": "primary", "secondary": "secondary"},
    {"complicated": "complicated", "uncomplicated": "uncomplicated"},
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
    "trauma", "fracture", "sprain", "strain", "torsion", "aneurysm", "dissection", "ulcer", "cyst", "lesion",
    "tumor", "growth", "clot", "blood clot", "shock", "disease", "syndrome", "condition", "emergency",
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
