"""Text helpers for importers: sentences, trigger phrases, first-person answers, field names.

Triggers must work with the patient simulator's matcher (``sim.patient``): the question and each
trigger are lower-cased, split into words, crudely stemmed and compared as contiguous word
sequences. Any trigger made of words taken from the text it reveals therefore matches a question
that repeats those words; what matters here is choosing words a clinician would say and that do
not fire on every question (``pain``, ``time``, ``any``, numbers and units never stand alone).
"""

from __future__ import annotations

import re

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


def sentences(text: str) -> list[str]:
    """Split prose on sentence ends (a full stop, ! or ? followed by space and a capital or digit)."""
    parts = re.split(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])", " ".join(text.split()))
    return [p.strip() for p in parts if p.strip() and words(p)]


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

_SUBJECT = r"(?:the\s+patient|patient|he|she|the\s+child|the\s+boy|the\s+girl|the\s+man|the\s+woman)"
_ADVERB = (r"(?:(?:also|still|never|often|usually|sometimes|occasionally|recently|previously|currently|"
           r"frequently|only|further|now|regularly|rarely|additionally)\s+)?")
_IRREGULAR = {"has": "have", "is": "am", "was": "was", "had": "had", "does": "do", "did": "did", "can": "can",
              "could": "could", "will": "will", "would": "would", "cannot": "cannot", "may": "may", "must": "must"}
_PHRASES = {"complains of": "have", "presents with": "have", "complained of": "had", "presented with": "had"}
_REPORTING = ("reports", "states", "notes", "mentions", "says", "explains", "adds", "recalls", "believes", "feels",
              "thinks", "reported", "stated", "noted", "mentioned", "said", "explained", "added", "recalled")
# Sentences of a history often drop the subject ("Smokes 10 cigarettes a day."): these verbs start them.
_SUBJECTLESS = ("works", "lives", "smokes", "drinks", "does", "attends", "uses", "takes", "exercises", "walks",
                "eats", "enjoys", "plays", "studies", "sleeps", "drives", "travels", "denies", "reports", "has",
                "is", "was", "had", "quit", "stopped", "started", "used", "drank", "smoked", "worked", "lived")


def _first_person_verb(verb: str) -> str | None:
    low = verb.lower()
    if low in _IRREGULAR:
        return _IRREGULAR[low]
    if low.endswith("ed"):
        return low
    if low.endswith("ies") and len(low) > 4:
        return low[:-3] + "y"
    if re.search(r"(?:ss|sh|ch|x|z|o)es$", low):
        return low[:-2]
    if low.endswith("s") and not low.endswith("ss") and len(low) > 3:
        return low[:-1]
    return None


def _rewrite_clause(match: re.Match[str]) -> str:
    adverb, verb = match.group("adv") or "", match.group("verb")
    phrase = f"{verb} {match.group('prep') or ''}".strip().lower()
    if phrase in _PHRASES:
        return f"I {adverb}{_PHRASES[phrase]}"
    base = _first_person_verb(verb)
    if base is None:
        return match.group(0)
    return f"I {adverb}{base}" + (f" {match.group('prep')}" if match.group("prep") else "")


_CLAUSE = re.compile(rf"\b(?P<subj>{_SUBJECT})\s+(?P<adv>{_ADVERB})(?P<verb>[A-Za-z]+)\b(?:\s+(?P<prep>of|with)\b)?",
                     re.I)


def first_person(sentence: str) -> str:
    """Turn a case write-up sentence about the patient into the patient's words, where a simple pattern allows.

    ``The patient reports that the pain ...`` -> ``The pain ...``; ``She has had ...`` -> ``I have had ...``;
    ``Smokes 10 a day.`` -> ``I smoke 10 a day.``; ``his``/``her`` -> ``my``. Anything else is kept as written.
    """
    text = " ".join(sentence.split())
    if not text:
        return text
    reporting = re.match(rf"^{_SUBJECT}\s+{_ADVERB}(?:{'|'.join(_REPORTING)})\s+that\s+(?P<rest>.+)$", text, re.I)
    if reporting:
        text = reporting.group("rest")
        text = text[0].upper() + text[1:]
    first = text.split(" ", 1)
    if first[0].lower() in _SUBJECTLESS and not reporting:
        text = f"patient {text[0].lower()}{text[1:]}"
    rewritten = text
    if _CLAUSE.match(text):  # the sentence is about the patient: so are its later he/she
        rewritten = _CLAUSE.sub(lambda m: m.group(0) if m.group("subj").lower().startswith("the ") and m.start() > 0
                                else _rewrite_clause(m), text)
    if rewritten != text or reporting:
        rewritten = re.sub(r"\b[Tt]he patient's\b", "my", rewritten)
        rewritten = re.sub(r"\b(?:his|His)\b", "my", rewritten)
        rewritten = re.sub(r"\b(?:her|Her)\b(?=\s+(?!to\b|and\b|at\b|in\b|on\b|for\b|with\b|from\b|that\b|"
                           r"as\b|by\b)[a-z])", "my", rewritten)
        rewritten = re.sub(r"\b(?:him|her)\b", "me", rewritten)
        rewritten = re.sub(r"\b(?:himself|herself)\b", "myself", rewritten)
        rewritten = re.sub(r"\bI am a (\d)", r"I'm a \1", rewritten)
    if rewritten.startswith("patient "):  # a subjectless sentence we could not rewrite
        rewritten = rewritten.removeprefix("patient ")
    return rewritten[0].upper() + rewritten[1:]
