"""A vignette's information tree (``--as encounter``): its columns' statements as facts and answers.

``_SPECS`` says how each column's statements become facts (category, id prefix, triggers, own intent);
``_answer`` words a statement as the patient (or the parent of a child) says it; ``_case_facts`` sorts the
case text's sentences into history, examination and test facts; ``_information_tree`` builds the tree's
entries (ids, intents, ``critical``). The rules are in ``_vignettes.py``'s docstring (``--as encounter``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from scenarios.importers._case_text import child_word, patient_statement
from scenarios.importers._common import slug
from scenarios.importers._text import STOPWORDS, WEAK_WORDS, lower_first, rough_stem, sentences, words
from scenarios.importers._vignette_file import _text
from scenarios.lexicon import intent_ids, intents_in


@dataclass(frozen=True)
class _FieldSpec:
    """How one column's statements become facts (see the module docstring's table)."""

    category: str
    prefix: str
    triggers: tuple[str, ...]
    own_intents: tuple[str, ...]
    keep: str  # which lexicon intents of the text to keep: "history", "exam" or "test"


_SPECS: dict[str, _FieldSpec] = {
    "history": _FieldSpec("history", "hx", ("what happened", "what brings you", "how it started",
                                            "presenting complaint"), ("presenting_complaint",), "history"),
    "negatives": _FieldSpec("symptoms", "neg", ("other symptoms", "any other symptoms", "anything else"),
                            ("other_symptoms",), "history"),
    "exam": _FieldSpec("exam", "exam", ("examine you", "physical examination", "physical exam", "on examination",
                                        "examination findings"), ("physical_exam",), "exam"),
    "tests": _FieldSpec("test", "test", ("test results", "any tests", "investigations", "blood tests", "scans"),
                        ("investigations",), "test"),
    "medications": _FieldSpec("medications", "med", ("medications", "medicines", "tablets", "regular medication"),
                              ("medications",), "history"),
    "allergies": _FieldSpec("allergies", "allergy", ("allergies", "allergic"), ("allergies",), "history"),
    "social": _FieldSpec("social", "social", ("social history", "live with", "your work", "occupation"),
                         (), "history"),
    "family": _FieldSpec("family_history", "family", ("family history", "in your family", "runs in the family"),
                         ("family_history",), "history"),
    "past_history": _FieldSpec("past_history", "pmh", ("medical history", "past medical", "medical conditions",
                                                       "health problems"), ("medical_history",), "history"),
}
# History statements after the first: the open question ("What brings you in?") gets the first, "tell me more"
# the rest, and a question about one of them (its lexicon intents: onset, radiation, fever ...) that one.
_MORE_HISTORY = _FieldSpec("history", "hx", ("tell me more", "more about it", "more details"), (), "history")
_FACT_FIELDS = ("history", "negatives", "medications", "allergies", "past_history", "family", "social", "exam",
                "tests")
_EXAM_SENTENCE = re.compile(r"^(?:on\s+(?:physical\s+)?exam(?:ination)?\b|(?:the\s+)?(?:physical\s+)?exam(?:ination)?"
                            r"\s+(?:reveals|revealed|shows|showed|is|was|demonstrates|finds|notable|findings)\b|"
                            r"(?:his|her|their)\s+(?:vital\s+signs|vitals)\b|vital\s+signs\b|otoscopy\b)", re.I)
_TEST_SENTENCE = re.compile(r"^(?:(?:preliminary\s+|routine\s+|initial\s+)?(?:laboratory|lab|blood)\s+(?:studies|"
                            r"tests?|results|work|findings)\b|(?:an?\s+|the\s+)?(?:chest\s+)?(?:radiograph|x-ray|"
                            r"xray|cxr|ct|mri|ultrasound|ecg|ekg|electrocardiogram|urinalysis|rapid\s+\w+\s+test)\b|"
                            r"(?:the\s+)?white[- ](?:cell|blood\s+cell)\s+count\b)", re.I)
_NEGATION = re.compile(r"^(?:(?:the\s+)?patient\s+|he\s+|she\s+|they\s+)?(?:denies|denied|reports\s+no|has\s+no|"
                       r"had\s+no|no|not|without|absence\s+of|negative\s+for|never)\b[:\s-]*(?:any\s+)?", re.I)
_NONE = re.compile(r"^(?:none|nil|no|n/?a|nkda|nka|nkma|no known(?:\s+\w+)*|none known|not applicable|-+)\.?$", re.I)
_DIAGNOSIS_FILLER = STOPWORDS | WEAK_WORDS | {
    "acute", "chronic", "disease", "disorder", "syndrome", "infection", "primary", "secondary", "type", "bilateral",
    "benign", "malignant", "due", "induced", "related", "associated", "stage", "upper", "lower", "failure",
    "acceptable", "diagnosis", "include", "includes", "may", "exacerbation", "severe"}


def _items(value: Any) -> list[str]:
    """A column's statements: list items, then sentences, then ``;`` / ``|`` / line-separated parts."""
    if isinstance(value, list):
        return [i for v in value for i in _items(v)]
    raw = "" if value is None else str(value) if not isinstance(value, dict) else _text(value)
    out: list[str] = []
    for chunk in re.split(r"[;|\n]+", raw):
        out.extend(s.strip() for s in sentences(chunk) if s.strip())
    return out


def _end(text: str) -> str:
    text = text.strip()
    return text if text[-1:] in ".!?" else f"{text}."


@dataclass(frozen=True)
class _Voice:
    """Who answers: the patient (``I``) or a parent about the child (``he`` / ``she`` / ``they``)."""

    parent: bool
    sex: str

    @property
    def subj(self) -> str:
        return "I" if not self.parent else {"male": "he", "female": "she"}.get(self.sex, "they")

    @property
    def plural(self) -> bool:
        """Whether the subject takes the plural verb form (I have, they have; he has)."""
        return self.subj in ("I", "they")

    @property
    def have(self) -> str:
        """'I've' / 'He's' / 'They've'."""
        s = self.subj
        return f"{s[0].upper()}{s[1:]}'{'ve' if self.plural else 's'}"

    def verb(self, base: str) -> str:
        return base if self.plural else (base + "es" if base.endswith(("s", "sh", "ch")) else base + "s")

    @property
    def poss(self) -> str:
        return "my" if not self.parent else "our"

    def say(self, item: str) -> str:
        """A statement about the patient in the teller's words (``_case_text.patient_statement``)."""
        sex = self.sex if self.sex in ("male", "female") else None
        return patient_statement(item, by_parent=self.parent, sex=sex, child=child_word(sex, None))


def _is_phrase(item: str) -> bool:
    """A short noun phrase ("Lisinopril 10 mg daily"), not a sentence with its own subject."""
    return len(words(item)) <= 8 and not re.match(r"^(?:i|he|she|they|the patient|patient|his|her|my)\b", item, re.I) \
        and item[-1:] not in ".!?"


def _answer(field: str, item: str, voice: _Voice) -> str | None:
    """The patient's (or parent's) words for one statement of ``field`` (see the module docstring's table).

    A 'none' item ('NKDA', 'nil') says so ("I don't have any allergies that I know of."). None for a negative
    with nothing after its negation ("No.").
    """
    text = item.strip().rstrip(".")
    s = voice.subj
    cap = s[0].upper() + s[1:]
    if field == "negatives":
        rest = _NEGATION.sub("", text).strip() if _NEGATION.match(text) else text
        if not rest:
            return None
        return f"No, {s} {'haven' if voice.plural else 'hasn'}'t had {lower_first(rest)}."
    if field == "exam":
        return f"On examination - {_end(lower_first(text))}"
    if field == "tests":
        return f"Test result - {_end(lower_first(text))}"
    if field in ("history", "social"):
        return _end(voice.say(item))
    none = bool(_NONE.match(text))
    if field == "medications":
        if none:
            return f"{cap} {'do' if voice.plural else 'does'}n't take any regular medicines."
        return f"{cap} {voice.verb('take')} {lower_first(text)}." if _is_phrase(text) else \
            _end(voice.say(item))
    if field == "allergies":
        if none or re.match(r"^no\s+(?:known\s+)?(?:drug\s+)?allerg", text, re.I):
            return f"{cap} {'do' if voice.plural else 'does'}n't have any allergies that we know of." \
                if voice.parent else "I don't have any allergies that I know of."
        return f"{cap} {'am' if s == 'I' else 'are' if s == 'they' else 'is'} allergic to {lower_first(text)}." \
            if _is_phrase(text) else _end(voice.say(item))
    if field == "past_history":
        if none:
            return f"Nothing, {s} {'have' if voice.plural else 'has'} always been healthy."
        return f"{voice.have} had {lower_first(text)}." if _is_phrase(text) else \
            _end(voice.say(item))
    if field == "family":
        if none:
            return "Nothing runs in the family that I know of."
        return f"In {voice.poss} family: {lower_first(text)}." if _is_phrase(text) else \
            _end(voice.say(item))
    return _end(voice.say(item))  # pragma: no cover - every field is handled


def _fact_intents(spec: _FieldSpec, texts: list[str], known: frozenset[str]) -> list[str]:
    found: set[str] = set()
    for t in texts:
        found |= intents_in(t)
    if spec.keep == "exam":
        found = {i for i in found if i.startswith("exam_") or i in ("physical_exam", "vital_signs", "tenderness")}
    elif spec.keep == "test":
        found = {i for i in found if i.startswith("test_") or i == "investigations"}
    else:
        found = {i for i in found if not i.startswith(("exam_", "test_")) and i not in ("physical_exam",)}
    own = [i for i in spec.own_intents if i in known]
    return [*own, *sorted(found - set(own))]


def _stems(text: str, filler: frozenset[str] | set[str]) -> set[str]:
    return {rough_stem(w) for w in words(text) if w not in filler and len(w) >= 3 and not w.isdigit()}


@dataclass
class _Fact:
    field: str
    source: str
    answer: str
    critical: bool = False


def _case_facts(pairs: list[tuple[str, str]]) -> list[_Fact]:
    """History facts from the case's (as written, in the first person) sentences.

    Examination findings and test results among them are facts of those fields, answered as the sentence says them
    in the teller's words ("On examination, she is pale" -> "On examination, I am pale").
    """
    out: list[_Fact] = []
    for raw, spoken in pairs:
        if _EXAM_SENTENCE.match(raw):
            out.append(_Fact("exam", raw, _end(spoken)))
        elif _TEST_SENTENCE.match(raw):
            out.append(_Fact("tests", raw, _end(spoken)))
        else:
            out.append(_Fact("history", raw, _end(spoken)))
    return out


def _information_tree(facts: list[_Fact], diagnoses: list[str], voice: _Voice) -> list[dict[str, Any]]:
    known = intent_ids()
    diagnosis_stems = set().union(*(_stems(d, _DIAGNOSIS_FILLER) for d in diagnoses)) if diagnoses else set()
    tree: list[dict[str, Any]] = []
    used: set[str] = set()
    for f in facts:
        spec = _SPECS[f.field]
        answer = f.answer or _answer(f.field, f.source, voice)
        if not answer:
            continue
        critical = f.field == "history" or bool(diagnosis_stems & (_stems(f.source, set()) | _stems(answer, set())))
        base = f"{spec.prefix}_{slug(' '.join(words(_NEGATION.sub('', f.source) or f.source)[:6]), 24)}".rstrip("_")
        fact_id, n = base, 2
        while fact_id in used:
            fact_id, n = f"{base}_{n}", n + 1
        used.add(fact_id)
        if f.field == "history" and any(e["category"] == "history" for e in tree):
            spec = _MORE_HISTORY  # the story goes on when asked for more, or for this detail (its intents)
        entry: dict[str, Any] = {"id": fact_id, "category": spec.category, "triggers": list(spec.triggers)}
        intents = _fact_intents(spec, [f.source, answer], known)
        if intents:
            entry["intents"] = intents
        entry["answer"] = answer
        if critical:
            entry["critical"] = True
        tree.append(entry)
    return tree
