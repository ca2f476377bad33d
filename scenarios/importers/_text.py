"""Text helpers for importers: sentences, trigger phrases, first-person answers, field names.

Triggers must work with the patient simulator's matcher (``sim.patient``): the question and each
trigger are lower-cased, split into words, crudely stemmed and compared as contiguous word
sequences. Any trigger made of words taken from the text it reveals therefore matches a question
that repeats those words; what matters here is choosing words a clinician would say and that do
not fire on every question (``pain``, ``time``, ``any``, numbers and units never stand alone).
"""

from __future__ import annotations

import re

from scenarios.importers._person import speak

_WORD = re.compile(r"[a-z0-9]+")

# Words that never make a trigger: function words, narrative filler of case write-ups, the reference
# clinician's own question ("Thank you. Can you tell me about ...?"), time words and units.
STOPWORDS = frozenset("""
a about above after again against ago all also although am an and any anything are around as at be because been
before being below between both but by can cannot could did do does doing done during each either else ever every
few for from further had has have having he her here hers herself him himself his how however i if in into is it
its itself just me more most much must my myself near never no none nor not now of off often on once one only or
other our out over own per quite rather same she should since so some something sometimes still such than that
the their them then there these they this those though through throughout thus to too toward towards under until
up upon us very was we were what when where whether which while who whom whose why will with within without would
yet you your yours
patient patients reports reported report reporting states stated notes noted describes described mentions
mentioned says said complains complained presents presented presenting denies denied admits admitted endorses
endorsed tell thank thanks
approximately roughly almost nearly about several many multiple various
day days week weeks month months year years hour hours minute minutes time times today yesterday tonight morning
recently recent currently current previously previous prior past last first second third ago since began begin
begins beginning start started starts starting
zero two three four five six seven eight nine ten eleven twelve twice half
mg ml mmhg bpm kg cm mm min sec dl
""".split())

# Allowed inside a phrase ("chest pain", "left arm"), never as a trigger on its own.
WEAK_WORDS = frozenset("""
pain painful feel feels feeling felt see seen look looks looked left right side sides normal abnormal increased
decreased increase decrease severe mild moderate worse worsening worsened better improved improve also well
unremarkable noted present absent positive negative new old history medical symptom symptoms problem problems
sign signs test tests result results level levels examination exam findings finding general other episode
episodes unit units take takes taking took has had make made get gets got go goes went lot bit slightly very
high low loss gain treated treatment treat become became becomes bring brings brought come comes came usual
like significant despite along fine others date reduced sided deeply known none
""".split())

# Lay words a patient or a clinician may use for a clinical term found in the text: extra triggers.
LAY_SYNONYMS: dict[str, list[str]] = {
    "fatigue": ["tired", "tiredness", "energy"],
    "dyspnea": ["short of breath", "breathless", "breathing"],
    "dyspnoea": ["short of breath", "breathless", "breathing"],
    "shortness of breath": ["short of breath", "breathless", "breathing"],
    "nausea": ["nauseous", "feel sick"],
    "vomiting": ["vomit", "threw up", "throw up", "being sick"],
    "fever": ["temperature", "feverish"],
    "febrile": ["fever", "temperature"],
    "diarrhea": ["loose stools", "diarrhoea"],
    "diarrhoea": ["loose stools", "diarrhea"],
    "dizziness": ["dizzy", "lightheaded"],
    "palpitations": ["heart racing", "heart pounding", "palpitation"],
    "syncope": ["faint", "passed out", "pass out"],
    "weight loss": ["lost weight", "weight"],
    "weight gain": ["put on weight", "weight"],
    "cough": ["coughing"],
    "headache": ["headaches", "head hurt"],
    "insomnia": ["sleep", "sleeping"],
    "sleep": ["sleeping"],
    "rash": ["spots", "skin"],
    "itching": ["itchy", "itch"],
    "urination": ["urine", "peeing", "wee"],
    "dysuria": ["burning when you pee", "urine", "peeing"],
    "smokes": ["smoke", "smoking"],
    "smoker": ["smoke", "smoking"],
    "alcohol": ["drink", "drinking"],
    "drinks": ["alcohol", "drinking"],
    "swelling": ["swollen"],
    "swollen": ["swelling"],
    "tremor": ["shaking", "shaky"],
    "anxiety": ["anxious", "nervous"],
    "depression": ["depressed", "low mood"],
    "chest pain": ["chest"],
    "abdominal pain": ["abdomen", "stomach"],
}


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def rough_stem(word: str) -> str:
    """A stand-in for the simulator's stemmer, only used to count how many facts share a word."""
    for suffix in ("ations", "ation", "ings", "ing", "ies", "edly", "ed", "es", "s", "ly"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def humanise(key: str) -> str:
    """``Heart_Auscultation`` / ``heartAuscultation`` / ``heart-auscultation`` -> ``heart auscultation``."""
    text = re.sub(r"(?<=[a-z0-9])(?=[A-Z][a-z])", " ", key)
    text = re.sub(r"[_\s]+", " ", text.replace("-", " "))
    return " ".join(text.split()).lower()


# A full stop that ends a title or an initial, not a sentence: "Mr. Y is ...", "Mrs. S. Jones", "e.g. fever".
_NO_BREAK = re.compile(r"(?:\b(?:Mr|Mrs|Ms|Mx|Dr|Prof|Sr|Jr|St|Fig|vs|approx|e\.g|i\.e|cf|et al)\.|"
                       r"\b(?:Mr|Mrs|Ms|Miss|Mx|Dr)\.?\s+[A-Z]\.|\b[A-Z]\.\s?[A-Z]\.)$")


def sentences(text: str) -> list[str]:
    """Split prose on sentence ends: a full stop, ! or ? followed by space and a capital or digit.

    Not after a title or an initial ("Mr. Y is a ...").
    """
    parts = re.split(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])", " ".join(text.split()))
    merged: list[str] = []
    for part in parts:
        if merged and _NO_BREAK.search(merged[-1]):
            merged[-1] = f"{merged[-1]} {part}"
        else:
            merged.append(part)
    return [p.strip() for p in merged if p.strip() and words(p)]


def snippet(text: str, limit: int = 80) -> str:
    """The first ``limit`` characters of ``text`` on one line, cut at a word boundary."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[: limit - 3]
    return (cut.rsplit(" ", 1)[0] if " " in cut else cut).rstrip(" ,.;:") + "..."


def lower_first(text: str) -> str:
    """Lower-case the first letter unless the first word looks like an abbreviation (``ECG``)."""
    if len(text) > 1 and text[0].isupper() and not text[1].isupper():
        return text[0].lower() + text[1:]
    return text


def is_usable_trigger(trigger: str) -> bool:
    w = words(trigger)
    return bool(w) and not (len(w) == 1 and (w[0] in STOPWORDS or w[0] in WEAK_WORDS or w[0].isdigit()
                                                 or len(w[0]) < 3))


def lay_synonyms(text: str) -> list[str]:
    """Lay triggers for clinical terms that occur (as whole words) in ``text``."""
    padded = f" {' '.join(words(text))} "
    out: list[str] = []
    for term, extra in LAY_SYNONYMS.items():
        if f" {term} " in padded:
            out.extend(e for e in extra if e not in out)
    return out


# --- first person -------------------------------------------------------------------------------

def first_person(sentence: str) -> str:
    """Turn a case write-up sentence about the patient into the patient's words (``_person.speak``).

    ``The patient reports that the pain ...`` -> ``The pain ...``; ``She has had ...`` -> ``I have had ...``;
    ``Smokes 10 a day.`` -> ``I smoke 10 a day.``; ``his``/``her`` -> ``my``; verbs agree with ``I`` across the
    sentence. A sentence not about the patient is kept as written.
    """
    return speak(sentence)
