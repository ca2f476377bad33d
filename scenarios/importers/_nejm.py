"""AgentClinic's NEJM Image Challenge cases -> an imaging item and an encounter each.

The format (one JSON object per line, AgentClinic's ``agentclinic_nejm*.jsonl``)::

    {"image_url": "https://...images?id=IC20240111&width=1500&height=4000",
     "question": "A 55-year-old woman presented ... (left) ... What is the most likely diagnosis?",
     "patient_info": "For your role as a patient, you are a 55-year-old woman who ...",
     "physical_exams": "... 1. Dermoscopy findings: ... 2. Skin biopsy results: ...",
     "answers": [{"text": "Contact dermatitis", "correct": false}, ..., {"text": "...", "correct": true}, ...],
     "type": ["dermatology"]}

``encsim import agentclinic`` recognises the shape by row (``question`` and ``answers``, no ``OSCE_Examination``).
Each row gives two scenarios, both ``source: agentclinic:<file>#<line>``, both tagged ``source:agentclinic``,
``nejm``, ``image_type:<type>`` per entry of ``type`` (as written: ``image_type:CT scan``) and ``question:diagnosis``
or ``question:other`` (a question about a cause, a treatment or a vector rather than the diagnosis; the import warns):

- **The imaging item** (``suite: imaging``, id ``acnejm_item_<slug of the answer>_<8 hex>``): the image, the question
  as written and the choices lettered A, B, ... in order; ``answer_type: multiple_choice``, the correct one's letter
  as ``answer``, scored right or wrong (``scorers._imaging``), as AgentClinic reports accuracy on these cases.
  ``modality`` from the first ``type`` (dermatology, physical, ophthalmology, surgical -> photo; hist/path, biopsy ->
  pathology; CT scan -> ct; xray; MRI -> mri; ultrasound and echocardiogram -> ultrasound; ECG -> ecg; else other),
  ``body_part`` the first body word of the complaint or question ("not stated" without one). No escalation target.
- **The encounter** (``suite: ddx``, id ``acnejm_enc_<slug>_<8 hex>``, ``turn_limit: 20`` as AgentClinic's): the
  patient tells their story in the first person from ``patient_info``, which is a brief to an actor in the second
  person: the notes to the actor are cut (``_nejm_text``) and every sentence is said by the patient
  (``_second_person``: "You are a 55-year-old woman who has noticed your skin darkening" -> "I am a 55-year-old
  woman who has noticed my skin darkening"; a sentence in the third person goes through ``_person`` as the OSCE
  importer's do). A child under 12 is brought by a parent, as in the OSCE importer (``_osce_voice``: "I've brought
  my son in because of ..."; the brief's "you" is then "he" / "she"). ``patient_profile`` comes from the question's
  first sentence ("A 55-year-old woman presented ...", ``_demographics``), ``chief_complaint`` from what she
  presented with, else the patient's first statement. Facts: the brief's sentences are ``history`` facts (a
  labelled part of it, "Medical History:", "Medications:", "Family History:", is that field: ``_osce_history``);
  the question's sentences on the physical examination ("On physical examination, ...", panel references such as
  "(left)" cut) are one ``exam`` fact revealed on examination; ``physical_exams`` (the results AgentClinic gives its
  measurement agent) gives one ``test`` fact per result or group of results under one heading (an examination
  finding or vital sign there is an ``exam`` / ``vitals`` fact), with the triggers and intents of the OSCE importer
  (``_osce_findings``); and the image is one more fact, shared when the agent asks to see it, as in the library's
  photo scenarios (triggers: photo, picture, image, show me, and the type's own words, "ct scan", "biopsy", "x-ray";
  intents ``photo`` and the type's: ``exam_skin``, ``test_imaging``, ``test_pathology``, ``test_cardiac``, ...).
  ``critical``: the abnormal findings and results, the history about the presenting complaint, what names the
  answer, and the image (``_agentclinic._mark_critical``). ``expected.diagnoses``: the correct answer with its
  other names (``_diagnosis_names``), scored top-1 / top-3 by the synonym matcher.

A case whose image is missing (``_nejm_images``) is imported all the same, as text only: the item has no image and
``image_unavailable`` says why (it is asked as text, of any model), the encounter has no image fact, and both are
tagged ``image:not_available``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scenarios.importers._agentclinic import (
    _PRESENTS,
    TURN_LIMIT,
    _complaint_from,
    _mark_critical,
    _opening,
    _to_tree,
)
from scenarios.importers._common import FALLBACK_LINES, Converted, ImageOutcome, RowContext, RowError, sha_hex, slug
from scenarios.importers._demographics import parse_demographics
from scenarios.importers._diagnosis_names import diagnosis_entry
from scenarios.importers._nejm_images import IMAGES_DIR, ImageProvider, NoImages, image_name
from scenarios.importers._nejm_text import exam_sentences, finding_items, patient_statements, strip_panel_refs
from scenarios.importers._osce_findings import _TEST_KINDS, _acronyms, _exam_facts, _Test, _test_fact
from scenarios.importers._osce_history import _FIELDS, _field_facts, _history_facts, _primary_stems
from scenarios.importers._osce_sections import _Fact, _sentence_end
from scenarios.importers._osce_voice import CARER_BELOW_AGE, _Voice, _voice
from scenarios.importers._second_person import SECOND_PERSON, to_first_person, to_third_person
from scenarios.importers._text import sentences, snippet, words

# type (lower case) -> (modality, fact category, what the patient hands over, intents, triggers)
_TYPES: dict[str, tuple[str, str, str, list[str], list[str]]] = {
    "dermatology": ("photo", "exam", "a photo of the skin", ["photo", "exam_skin", "skin"],
                    ["rash", "look at your skin", "skin lesion"]),
    "physical": ("photo", "exam", "a photo of it", ["photo", "physical_exam"], ["look at it", "see it"]),
    "ophthalmology": ("photo", "exam", "a photo of the eye", ["photo", "exam_eye"], ["look at your eyes", "eye exam"]),
    "surgical": ("photo", "exam", "a photo the surgeons took", ["photo", "physical_exam"], ["operation", "surgery"]),
    "hist/path": ("pathology", "test", "the biopsy slides", ["test_pathology", "investigations"],
                  ["biopsy", "histology", "pathology", "slides"]),
    "biopsy": ("pathology", "test", "the biopsy slides", ["test_pathology", "investigations"],
               ["biopsy", "histology", "pathology", "slides"]),
    "ct scan": ("ct", "test", "the CT scan", ["test_imaging", "investigations"], ["ct scan", "ct", "scan", "scans"]),
    "xray": ("xray", "test", "the X-ray", ["test_imaging", "investigations"], ["x-ray", "xray", "radiograph"]),
    "mri": ("mri", "test", "the MRI scan", ["test_imaging", "investigations"], ["mri", "mri scan", "scan"]),
    "ultrasound": ("ultrasound", "test", "the ultrasound", ["test_imaging", "investigations"],
                   ["ultrasound", "scan"]),
    "echocardiogram": ("ultrasound", "test", "the echocardiogram", ["test_cardiac", "test_imaging", "investigations"],
                       ["echo", "echocardiogram", "heart scan"]),
    "ecg": ("ecg", "test", "the ECG", ["test_cardiac", "investigations"], ["ecg", "ekg", "heart tracing"]),
    "instrument": ("other", "test", "the test recording", ["test_other", "investigations"], ["test results"]),
}
_OTHER_TYPE = ("other", "test", "the image from my tests", ["investigations"], ["test results"])
_IMAGE_TRIGGERS = ["photo", "picture", "image", "images", "show me", "send me"]
_BODY_PARTS = re.compile(r"\b(face|forehead|cheeks?|nose|lips?|mouth|tongue|ears?|earlobes?|eyes?|eyelids?|neck|"
                         r"scalp|head|brain|chest|lungs?|heart|breasts?|abdomen|abdominal|stomach|liver|kidneys?|"
                         r"pelvis|back|spine|arms?|forearms?|hands?|palms?|fingers?|legs?|shins?|thighs?|knees?|"
                         r"hips?|feet|foot|ankles?|toes?|skin|scrotum|penis|vulva|genital|trunk|torso|chin|nails?)\b",
                         re.I)
_WHO = re.compile(r"\b\d+[- ](?:year|month|week|day)s?[- ]old(?:\s+[a-z-]+){0,2}?\s+(?:man|woman|boy|girl|infant|baby|"
                  r"male|female|child|neonate|newborn)\b|\b(?:baby|newborn|infant)\s+(?:boy|girl)\b", re.I)
_DIAGNOSIS_QUESTION = re.compile(r"\bdiagnos|\betiology\b|\bcause of (?:his|her|their|the patient's) (?:presentation|"
                                 r"symptoms|condition|illness)\b", re.I)
_LAST_QUESTION = re.compile(r"[^.?!]*\?\s*$")


@dataclass
class NejmCase:
    """One row read: the question, the lettered choices and the correct one, the types, the texts."""

    question: str
    choices: list[str]
    answer: int  # index of the correct choice
    types: list[str]
    url: str | None
    patient_info: str
    exams: str
    warnings: list[str] = field(default_factory=list)

    @property
    def correct(self) -> str:
        return self.choices[self.answer]

    def last_question(self) -> str:
        """The question's last sentence (what it asks), without quotes around it, at most 70 characters."""
        m = _LAST_QUESTION.search(self.question)
        return snippet((m.group(0) if m else self.question).strip(" \"'\u201c\u201d"), 70)

    @property
    def asks_diagnosis(self) -> bool:
        """Whether the question's last sentence asks for the diagnosis (not a cause, a treatment, a vector)."""
        m = _LAST_QUESTION.search(self.question)
        return bool(_DIAGNOSIS_QUESTION.search(m.group(0) if m else self.question))


def is_nejm_row(row: dict[str, Any]) -> bool:
    """Whether a row has the NEJM image case's shape (``question`` and ``answers``, no ``OSCE_Examination``)."""
    return "OSCE_Examination" not in row and "question" in row and "answers" in row


def _flat(value: Any) -> str | None:
    """A field as text: a string as it is, a list one item per line, an object "Name: value" per line."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = [_flat(v) for v in value]
        return "\n".join(p for p in parts if p) if all(p is not None for p in parts) else None
    if isinstance(value, dict):
        parts = [_flat(v) for v in value.values()]
        if any(p is None for p in parts):
            return None
        return "\n".join(f"{str(k).replace('_', ' ')}: {p}" for k, p in zip(value, parts, strict=True) if p)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return None


def _text(row: dict[str, Any], key: str, *, required: bool = True) -> str:
    value = row.get(key)
    if value is None and not required:
        return ""
    text = _flat(value)
    if text is None or (required and not text.strip()):
        raise RowError(f"'{key}' is missing, empty or not text; an NEJM image case needs its {key.replace('_', ' ')}")
    return " ".join(text.replace("\r", "").split(" ")).strip()


def read_case(row: dict[str, Any]) -> NejmCase:
    """The case of one row; RowError when it lacks a question, two choices, exactly one correct one, or a story."""
    question = " ".join(_text(row, "question").split())
    answers = row.get("answers")
    if not isinstance(answers, list) or len(answers) < 2:
        raise RowError("'answers' must be a list of at least two choices ({\"text\": ..., \"correct\": true|false})")
    choices, correct = [], []
    for i, a in enumerate(answers):
        text = a.get("text") if isinstance(a, dict) else None
        if not isinstance(text, str) or not text.strip():
            raise RowError(f"answers[{i}] has no 'text'")
        choices.append(" ".join(text.split()))
        if a.get("correct") is True:
            correct.append(i)
    if len(correct) != 1:
        raise RowError(f"'answers' marks {len(correct)} choices correct; exactly one must be (\"correct\": true)")
    if len(choices) > 26:
        raise RowError(f"'answers' has {len(choices)} choices; at most 26 can be lettered A-Z")
    raw_types = row.get("type")
    types = [raw_types] if isinstance(raw_types, str) else raw_types if isinstance(raw_types, list) else []
    types = list(dict.fromkeys(" ".join(str(t).split()) for t in types if str(t).strip()))
    warnings = [] if types else ["no 'type': the image type is 'other'"]
    url = row.get("image_url")
    url = url.strip() if isinstance(url, str) and url.strip() else None
    return NejmCase(question=question, choices=choices, answer=correct[0], types=types or ["other"], url=url,
                    patient_info=_text(row, "patient_info"), exams=_text(row, "physical_exams", required=False),
                    warnings=warnings)


def _type_info(case: NejmCase) -> list[tuple[str, str, str, list[str], list[str]]]:
    return [_TYPES.get(t.lower(), _OTHER_TYPE) for t in case.types]


# --- the patient's story ----------------------------------------------------------------------------

def _told(sentence: str, voice: _Voice) -> str:
    """A sentence of the brief in the teller's person (before the voice): "you" -> "I", or the child's pronoun."""
    if not SECOND_PERSON.search(sentence):
        return sentence
    if voice.carer:
        return to_third_person(sentence, voice.pronoun if voice.pronoun in ("he", "she") else "they")
    return to_first_person(sentence)


def _field_of(label: str) -> str | None:
    low = label.lower()
    return next((needle for needle, *_ in _FIELDS if needle in low), None)


def _story_facts(case: NejmCase, voice: _Voice, primary: str) -> list[_Fact]:
    """History facts of the brief: the story in order, and each labelled field ("Medical History: ...") as that."""
    story: list[str] = []
    fields: dict[str, list[str]] = {}
    for label, sentence in patient_statements(case.patient_info):
        told = _told(sentence, voice)
        if _ONLY_WHO.match(told):  # the age and sex are the profile's
            continue
        if label and _field_of(label):
            fields.setdefault(label.lower(), []).append(told)
        else:
            story.append(told)
    facts = _history_facts(story, voice, _primary_stems({"Symptoms": {"Primary_Symptom": primary}}))
    for name, items in fields.items():
        facts += _field_facts(name, items, voice)
    return facts


# --- examination and results ---------------------------------------------------------------------

_EXAM_NAME = re.compile(r"\b(?:physical|examination|exam|auscultation|palpation|inspection|on exam)\b", re.I)
_VITAL_NAME = re.compile(r"\b(?:vital signs?|blood pressure|heart rate|pulse|temperature|respiratory rate|"
                         r"oxygen saturation|saturation|spo2)\b", re.I)
_TEST_WORDS = re.compile(r"\b(?:biops\w*|ct|mri|x-?rays?|radiograph\w*|ultraso\w*|laborator\w*|tests?|cultures?|"
                         r"stain\w*|histo\w*|patholog\w*|scans?|echo\w*|ecg|ekg|electrocardio\w*|levels?|counts?|"
                         r"serum|angiog\w*|endoscop\w*|dermoscop\w*|catheteri\w*|tomograph\w*|imaging|fundoscop\w*)\b",
                         re.I)


_EXAM_LEAD = re.compile(r"^(?:on|at|upon)\s+(?:the\s+)?(?:physical\s+)?exam(?:ination)?(?:\s+at the current "
                        r"presentation)?,?\s+", re.I)
_RESULT_WORDS = re.compile(r"\s+(?:results?|findings?|information|values?|readings?)$", re.I)


def _finding_facts(case: NejmCase, adult: bool) -> list[_Fact]:
    """The examination fact of the question, and the exam, vitals and test facts of ``physical_exams``."""
    facts: list[_Fact] = []
    exam = exam_sentences(case.question)
    exam_items: dict[str, str] = {}
    vitals: dict[str, str] = {}
    tests: dict[tuple[str, str], list[str]] = {}  # (heading, name) -> values, in order
    for heading, name, value in finding_items(case.exams) if case.exams else []:
        label = name or heading
        if label and _VITAL_NAME.search(label) and not _TEST_WORDS.search(label):
            vitals[label] = value
        elif label and _EXAM_NAME.search(label) and not _TEST_WORDS.search(label):
            exam_items[label] = value
        else:
            tests.setdefault((heading, name), []).append(value)
    if exam:
        said = " ".join(_EXAM_LEAD.sub(lambda m: "", s, count=1) for s in exam)
        found = _exam_facts({"Physical examination": said}, adult)
        for f in found:
            f.intents = list(dict.fromkeys(["physical_exam", *f.intents]))
            f.answer = f"On examination: {said[:1].upper()}{said[1:]}"
        facts += found
    if exam_items:
        facts += _exam_facts({"Physical examination": exam_items}, adult)
    if vitals:
        facts += _exam_facts({"Vital signs": vitals}, adult)
    acronyms = _acronyms({n: None for _, n in tests} | {h: None for h, _ in tests})
    for (heading, name), values in tests.items():
        label = name or heading or "test results"
        fact = _test_fact(_Test(_RESULT_WORDS.sub("", label) or label, "", [("", "; ".join(values))]), acronyms, adult)
        if label.lower() not in fact.triggers:
            fact.triggers.insert(0, label.lower())
        kinds = [k for pattern, ks in _TEST_KINDS if heading and re.search(pattern, heading, re.I) for k in ks]
        if kinds and "test_other" in fact.intents and not any(k in fact.intents for k in kinds):
            fact.intents = [*dict.fromkeys([*kinds, *(i for i in fact.intents if i != "test_other")])]
        if heading and name:
            fact.triggers.append(heading)
        facts.append(fact)
    return facts


def _image_fact(case: NejmCase, ref: dict[str, str]) -> dict[str, Any]:
    """The image as a fact the patient shares when asked to see it."""
    info = _type_info(case)
    shown = list(dict.fromkeys(what for _, _, what, _, _ in info))
    answer = (f"Here's {shown[0]}." if len(shown) == 1 else
              f"Here are the pictures I was given: {', '.join(shown[:-1])} and {shown[-1]}.")
    triggers = list(dict.fromkeys([*_IMAGE_TRIGGERS, *(t for *_, ts in info for t in ts)]))
    intents = list(dict.fromkeys(["photo", *(i for _, _, _, ins, _ in info for i in ins)]))
    return {"id": f"image_{slug(case.types[0], 20) or 'case'}", "category": info[0][1], "triggers": triggers,
            "intents": intents, "answer": answer, "critical": True, "image": ref}


# --- the two scenarios ---------------------------------------------------------------------------

# "I am a 59-year-old woman.", "He's a 4-year-old boy.": who the patient is, and nothing else
_ONLY_WHO = re.compile(r"^(?:i am|i'm|(?:he|she) is|(?:he|she)'s|my \w+ is)\s+an?\s+[\w-]+[- ]"
                       r"(?:years?|months?|weeks?|days?)[- ]old(?:\s+\w+){0,2}\s*[.!]?$", re.IGNORECASE)


def _primary(case: NejmCase, statements: list[str]) -> str:
    """The chief complaint: what the question says the patient presented with, else the patient's first statement."""
    first = strip_panel_refs(sentences(case.question)[0]) if sentences(case.question) else ""
    complaint = _complaint_from(first) if first and _PRESENTS.match(first.rstrip(".")) else ""
    if complaint and len(words(complaint)) >= 2:
        return complaint
    return statements[0].rstrip(".") if statements else (complaint or snippet(first, 80) or "a problem")


def _body_part(*texts: str) -> str:
    for text in texts:
        m = _BODY_PARTS.search(text)
        if m:
            return m.group(1).lower()
    return "not stated"


def nejm_id(row: dict[str, Any], kind: str, answer: str) -> str:
    """``acnejm_<kind>_<slug of the answer>_<8 hex of the row's canonical JSON>``."""
    canonical = json.dumps(row, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return f"acnejm_{kind}_{slug(answer, 30) or 'case'}_{sha_hex(canonical)}"


def _canary(scenario_id: str) -> str:
    return f"encsim-canary-{sha_hex(scenario_id)}-{scenario_id.replace('_', '-')}"


def nejm_scenarios(row: dict[str, Any], case: NejmCase, ctx: RowContext, image: ImageOutcome) -> list[Converted]:
    """The imaging item and the encounter of one case (module docstring)."""
    first = sentences(case.question)[0] if sentences(case.question) else case.question
    profile, warnings, profile_tags = parse_demographics(first, case.question)
    warnings = [*case.warnings, *warnings]
    voice = _voice(profile)
    statements = [t for _, s in patient_statements(case.patient_info)
                  if not _ONLY_WHO.match(t := _told(s, voice))]  # the age and sex are the profile's, not a fact
    primary = _primary(case, statements)
    type_tags = [f"image_type:{t}" for t in case.types]
    question_tag = "question:diagnosis" if case.asks_diagnosis else "question:other"
    if not case.asks_diagnosis:
        warnings.append(f"the question asks {case.last_question()!r} (tag question:other): the encounter scores the "
                        f"agent's diagnosis against its answer {case.correct!r}")
    missing = image.file is None
    image_tags = ["image:not_available"] if missing else []
    ref = None if image.file is None else {
        "path": image.file,
        "description": f"The image published with this NEJM Image Challenge case ({', '.join(case.types)}).",
        "source": f"{case.url} (NEJM Image Challenge, linked from AgentClinic's file; NEJM's image, not "
                  "redistributed: fetched or copied by encsim import)"}
    who = _WHO.search(first)
    demographics = who.group(0) if who else f"{profile.get('age_detail') or round(profile['age'])}, {profile['sex']}"
    source = f"agentclinic:{ctx.file_name}#{ctx.line}"
    info = _type_info(case)

    item_id = nejm_id(row, "item", case.correct)
    task: dict[str, Any] = {"images": [ref] if ref else [], "question": case.question}
    if missing:
        task["image_unavailable"] = f"image not available: {image.reason or 'not fetched'}"
    task |= {"answer_type": "multiple_choice", "choices": case.choices, "answer": chr(ord("A") + case.answer),
             "modality": info[0][0], "body_part": _body_part(primary, case.question)}
    opening = ("An NEJM Image Challenge case: look at the image and answer the question." if not missing else
               "An NEJM Image Challenge case. Its image is not available, so answer from the text alone.")
    item = {"id": item_id, "title": f"AgentClinic NEJM image item ({', '.join(case.types)}): {snippet(primary, 50)}",
            "suite": "imaging", "tags": ["source:agentclinic", "nejm", *type_tags, question_tag, *image_tags,
                                        *profile_tags],
            "tier": "A", "canary": _canary(item_id), "patient_profile": profile,
            "chief_complaint": snippet(primary, 80),
            "opening_line": opening, "fallback_lines": list(FALLBACK_LINES), "imaging": task, "expected": {},
            "source": source}

    enc_profile = dict(profile)
    if voice.carer:
        enc_profile["speaker"] = voice.speaker
    facts = _story_facts(case, voice, primary)
    facts += _finding_facts(case, profile["age"] >= CARER_BELOW_AGE)
    if not facts:
        raise RowError("'patient_info' and 'physical_exams' give nothing the patient could tell or the agent find")
    _mark_critical(facts, primary, case.correct)
    tree = _to_tree(facts)
    if ref is not None:
        tree.append(_image_fact(case, ref))
    enc_id = nejm_id(row, "enc", case.correct)
    encounter = {
        "id": enc_id, "title": f"AgentClinic NEJM encounter: {snippet(primary, 60)} ({demographics})",
        "suite": "ddx", "tags": ["source:agentclinic", "nejm", *type_tags, question_tag, *image_tags, *profile_tags,
                                 *(["voice:carer"] if voice.carer else [])],
        "tier": "A", "canary": _canary(enc_id), "patient_profile": enc_profile,
        "chief_complaint": snippet(primary, 80), "opening_line": _sentence_end(_opening(primary, voice)),
        "fallback_lines": list(FALLBACK_LINES), "information_tree": tree,
        "expected": {"diagnoses": [diagnosis_entry(case.correct)]}, "turn_limit": TURN_LIMIT, "source": source}
    return [Converted(data=item, warnings=warnings), Converted(data=encounter, warnings=[])]


# --- the converter of an import ------------------------------------------------------------------

def nejm_converter(out_dir: Path, provider: ImageProvider | None,
                   outcomes: list[ImageOutcome]) -> Callable[[dict[str, Any], RowContext], list[Converted]]:
    """The row converter of one import: gets each case's image from ``provider`` into ``out_dir/images``.

    Each case's image outcome is appended to ``outcomes`` (the import report's ``images``); a case whose image is
    missing or refused is converted as text only. The provider is asked once per case, in row order.
    """
    source = provider or NoImages()
    names: dict[str, str] = {}  # file name -> the URL it was given to (two URLs never share a file)

    def convert(row: dict[str, Any], ctx: RowContext) -> list[Converted]:
        case = read_case(row)
        outcome = _image_of(case, ctx, source, out_dir, names)
        outcomes.append(outcome)
        return nejm_scenarios(row, case, ctx, outcome)

    return convert


def _image_of(case: NejmCase, ctx: RowContext, provider: ImageProvider, out_dir: Path,
              names: dict[str, str]) -> ImageOutcome:
    if case.url is None:
        return ImageOutcome(row=ctx.line, url=None, status="missing", reason="the row has no image_url")
    name = image_name(case.url)
    if names.setdefault(name, case.url) != case.url:
        name = f"{name}_{sha_hex(case.url)}"
        names[name] = case.url
    try:
        got = provider.provide(case.url, name, out_dir / IMAGES_DIR)
    except Exception as exc:  # a provider must not raise; if one does, this case is text only, the import goes on
        return ImageOutcome(row=ctx.line, url=case.url, name=name, status="missing",
                            reason=f"the image source failed ({type(exc).__name__}: {exc})")
    file = None
    if got.status in ("fetched", "present") and got.path is not None:
        file = f"{IMAGES_DIR}/{got.path.name}"
    return ImageOutcome(row=ctx.line, url=case.url, name=name, status=got.status, file=file, reason=got.reason)
