"""Symptom-checker vignettes -> single-turn triage items or encounters with an information tree.

The classic vignette protocol (Semigran et al., BMJ 2015;351:h3480, and the studies that followed):
a written case, the urgency a panel gave it (e.g. emergent / non-emergent / self-care) and the correct
diagnosis; the tool under test reads the case and answers with its triage advice and a differential.

The format: any file with one vignette per row, as **JSON Lines** (one object per line) or **CSV**
(a header row, then one row per vignette; read with the stdlib ``csv`` module, UTF-8, a BOM
tolerated, quoted fields may span lines). The format is taken from the extension (``.jsonl``,
``.ndjson``, ``.json`` -> JSON Lines; ``.csv`` -> CSV; ``.tsv`` -> tab-separated) and, for any
other extension, from the content (a first character ``{`` is JSON Lines, anything else CSV). A JSON
value that is a list (several negatives, several medicines) is read as items. Row numbers are the
file's 1-based line numbers (a CSV row spanning lines: its first line; the header is line 1).

``--map`` says which column holds what: ``FIELD=COLUMN`` items separated by commas. Fields:

==================  ============================================================================
``case``            required: the case text (third person as published, or first person)
``diagnosis``       required: the correct diagnosis; a parenthesised part ("Asthma (or acute
                    asthma, status asthmaticus)") gives synonyms the diagnosis matcher accepts
``urgency``         required: the urgency label, mapped by ``--urgency-map``
``diagnoses``       further acceptable diagnoses, ranked, separated by ``;`` or ``|``
``age``, ``sex``    demographics (``45``, ``18 months``; ``M``/``male``/``F``/``female``); else read
                    from the case's opening sentence ("A 45-year-old man ...")
``complaint``       the chief complaint (else the case's first sentence)
``history``         history of the presenting complaint
``negatives``       pertinent negatives ("No fever; no neck stiffness")
``exam``, ``tests``  examination findings, test results
``medications``, ``allergies``, ``social``, ``family``, ``past_history``
``id``              the vignette's own id (else a hash of the row)
==================  ============================================================================

A column name is matched exactly, else ignoring case and surrounding spaces. ``--urgency-map``
maps the file's labels (case-insensitive, trimmed) to the four escalation categories ``emergency``,
``urgent``, ``routine``, ``self_care``: ``em=emergency,ne=routine,sc=self_care``; one label may map to
several acceptable categories joined by ``+``, best first and adjacent (``ne=routine+urgent``). Without
``--urgency-map`` the labels must be the category names themselves (``self-care`` and ``self care``
count). A label the map does not name fails that row. The urgency label is the source's: it is not
re-derived here, and ``expected.label_rationale`` cites the file, row, column and label.

Both modes (``--as``), per row:

- ``id``: ``vig_<slug of the diagnosis (a parenthesised part left out), 30 chars>_<8 hex of sha256 of the
  row's canonical JSON>``, or
  ``vig_<slug of the id column>``; the same in both modes, so import the two modes into different
  folders. ``canary``: ``encsim-canary-<8 hex>-<id with dashes>-<mode>``.
- ``suite: triage`` (the escalation is the target), ``tier: A``, ``source: vignettes:<file>#<line>``,
  ``tags``: ``source:vignettes``, ``vignette:<mode>``, ``urgency:<label>``.
- ``expected``: ``escalation`` (the label's first category), ``acceptable_escalations`` (all of them,
  when more than one), ``label_rationale``, ``diagnoses`` (the diagnosis, then the ``diagnoses``
  column's). No triage level: a vignette gives an urgency, not an acuity level, so the triage
  component is not applicable and the composite is the escalation score (plus information and
  efficiency in encounter mode); the diagnosis is scored beside it (top-1 / top-3).
- ``patient_profile``: age and sex (``parse_demographics``), the pediatric / geriatric context; a
  child's case (under 13, or an infant, baby, toddler, child) is told by a parent (``speaker: parent``).

``--as single-turn`` (default): a **replay** item with one patient message, the whole case in the
words of the person asking (``_case_text.case_in_first_person``: "A 45-year-old man presents to the emergency
department with chest pain. He ..." -> "I'm a 45-year-old man and I have chest pain. I ..."; a child's
case in a parent's words, "My 4-year-old boy has ..."). Only the grammatical person and the place of
presentation change; every clinical word is kept in order, and a case whose opening sentence is not
recognised is kept as written (with a warning). The agent replies once (the harness tells it the item
is single-turn) and that reply is read as its assessment: escalation and differential, scored by the
deterministic path; information and efficiency are not applicable.

``--as encounter``: an **information tree** the agent must ask for. The opening line is the chief
complaint ("I'd like some advice about my chest pain."), else the case's first sentence in the first
person. Each mapped column is split into statements (sentences; ``;``, ``|`` and line breaks too) and
each statement is one fact:

==============  ==============  ======================  =================================================
column          category        own intent (if in the   answer
                                lexicon)
==============  ==============  ======================  =================================================
history         history         presenting_complaint    the sentence in the first person
                                (the first only)
negatives       symptoms        other_symptoms          "No, I haven't had <it>."
exam            exam            physical_exam           "On examination - <it>."
tests           test            investigations          "Test result - <it>."
medications     medications     medications             "I take <it>." (a sentence: in the first person)
allergies       allergies       allergies               "I'm allergic to <it>."
social          social          -                       the sentence in the first person
family          family_history  family_history          "In my family: <it>."
past_history    past_history    medical_history         "I've had <it>."
==============  ==============  ======================  =================================================

(a parent's answers say he / she / they). With no ``history`` column, the case text's sentences
(after the first, when that is the opening line) are the history facts, except those that are plainly
examination findings ("On examination, ...") or test results ("A chest radiograph shows ...", which
become ``exam`` / ``test`` facts answered as written). ``intents``: the lexicon intents whose cues
occur in the statement (``intents_in``; an examination finding keeps only examination intents, a
test result only test intents, a history statement none of those) plus the column's own intent.
``triggers``: the column's clinical meaning ("medications", "allergies", "family history", "what
happened", ...), never words of the answer. The history is told as a patient tells it: the open
question ("What happened?", "What brings you in?": the first history fact's triggers and
``presenting_complaint``) gets its first statement, "tell me more" the rest (the other history facts'
triggers), and a question about one detail (its intents: onset, radiation, fever ...) that detail.
``critical``: every fact of the history of the presenting complaint and every fact whose text names a
content word of the diagnosis. ``turn_limit``: the adaptive default.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scenarios.importers._case_text import case_intro, case_sentences, patient_statement
from scenarios.importers._common import (
    FALLBACK_LINES,
    Converted,
    ImportReport,
    ImportSourceError,
    RowContext,
    RowError,
    SourceRow,
    import_rows,
    read_jsonl,
    read_source,
    sha_hex,
    slug,
)
from scenarios.importers._demographics import parse_demographics
from scenarios.importers._text import STOPWORDS, WEAK_WORDS, lower_first, rough_stem, sentences, snippet, words
from scenarios.lexicon import intent_ids, intents_in
from scenarios.schema import Escalation

REQUIRED_FIELDS = ("case", "diagnosis", "urgency")
OPTIONAL_FIELDS = ("diagnoses", "age", "sex", "complaint", "history", "negatives", "exam", "tests", "medications",
                   "allergies", "social", "family", "past_history", "id")
MODES = ("single-turn", "encounter")
CATEGORIES = tuple(e.value for e in Escalation)
_JSONL_SUFFIXES = {".jsonl", ".ndjson", ".json", ".jl"}
_CSV_SUFFIXES = {".csv": ",", ".tsv": "\t"}
_MAP_EXAMPLE = "--map case=case_description,diagnosis=correct_diagnosis,urgency=urgency_level"
_URGENCY_EXAMPLE = "--urgency-map em=emergency,ne=routine+urgent,sc=self_care"
_CATEGORY_ALIASES = {c: c for c in CATEGORIES} | {"self-care": "self_care", "self care": "self_care",
                                                   "selfcare": "self_care"}


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


# --- the flags ----------------------------------------------------------------------------------

def parse_field_map(spec: str | Mapping[str, str]) -> dict[str, str]:
    """``--map`` -> {field: column}.

    :class:`ImportSourceError` (one paragraph naming the flag) when it is malformed, names an unknown field,
    names a field twice or leaves a required field out.
    """
    known = (*REQUIRED_FIELDS, *OPTIONAL_FIELDS)
    fields_help = (f"the fields are {', '.join(REQUIRED_FIELDS)} (required) and {', '.join(OPTIONAL_FIELDS)} "
                   "(optional)")
    if isinstance(spec, Mapping):
        items = [(str(k), str(v)) for k, v in spec.items()]
    else:
        items = []
        for raw in spec.split(","):
            if not raw.strip():
                continue
            field, sep, column = raw.partition("=")
            if not sep or not field.strip() or not column.strip():
                raise ImportSourceError(f"--map {spec!r}: {raw.strip()!r} is not FIELD=COLUMN. Give comma-separated "
                                        f"FIELD=COLUMN items, e.g. {_MAP_EXAMPLE}.")
            items.append((field, column))
    out: dict[str, str] = {}
    for field, column in items:
        name = field.strip().lower().replace("-", "_")
        if name not in known:
            raise ImportSourceError(f"--map: {field.strip()!r} is not a field of the vignette importer; {fields_help}. "
                                    f"Example: {_MAP_EXAMPLE}.")
        if name in out:
            raise ImportSourceError(f"--map: the field {name!r} is mapped twice ({out[name]!r} and "
                                    f"{column.strip()!r}); map each field to one column.")
        out[name] = column.strip()
    missing = [f for f in REQUIRED_FIELDS if f not in out]
    if missing:
        raise ImportSourceError(f"--map must map case, diagnosis and urgency; missing: {', '.join(missing)}. Add "
                                f"{', '.join(f'{m}=COLUMN' for m in missing)} naming the file's column(s), e.g. "
                                f"{_MAP_EXAMPLE}.")
    return out


def _category(name: str) -> str | None:
    return _CATEGORY_ALIASES.get(" ".join(name.strip().lower().split()))


def parse_urgency_map(spec: str | Mapping[str, str | list[str]] | None) -> dict[str, list[str]]:
    """``--urgency-map`` -> {label (lower case, trimmed): [category, ...] best first}.

    :class:`ImportSourceError` when it is malformed, maps to an unknown category, gives categories that are
    not adjacent, or maps a label twice. ``None``: the labels are the category names themselves.
    """
    cats_help = f"the categories are {', '.join(CATEGORIES)}"
    if spec is None:
        return {label: [cat] for label, cat in _CATEGORY_ALIASES.items()}
    if isinstance(spec, Mapping):
        items = [(str(k), v if isinstance(v, str) else "+".join(v)) for k, v in spec.items()]
    else:
        items = []
        for raw in spec.split(","):
            if not raw.strip():
                continue
            label, sep, value = raw.partition("=")
            if not sep or not label.strip() or not value.strip():
                raise ImportSourceError(f"--urgency-map {spec!r}: {raw.strip()!r} is not LABEL=CATEGORY. Give "
                                        f"comma-separated LABEL=CATEGORY items ({cats_help}; several acceptable "
                                        f"ones joined by +, best first), e.g. {_URGENCY_EXAMPLE}.")
            items.append((label, value))
    out: dict[str, list[str]] = {}
    for label, value in items:
        key = " ".join(label.strip().lower().split())
        cats: list[str] = []
        for part in value.split("+"):
            cat = _category(part)
            if cat is None:
                raise ImportSourceError(f"--urgency-map: {label.strip()}={value.strip()}: {part.strip()!r} is not an "
                                        f"escalation category; {cats_help}. Example: {_URGENCY_EXAMPLE}.")
            if cat in cats:
                raise ImportSourceError(f"--urgency-map: {label.strip()}={value.strip()} names {cat} twice.")
            cats.append(cat)
        ranks = sorted(CATEGORIES.index(c) for c in cats)
        if ranks != list(range(ranks[0], ranks[-1] + 1)):
            raise ImportSourceError(f"--urgency-map: {label.strip()}={value.strip()}: acceptable categories must be "
                                    f"adjacent in the order {', '.join(CATEGORIES)} (e.g. routine+urgent).")
        if key in out:
            raise ImportSourceError(f"--urgency-map: the label {label.strip()!r} is mapped twice; map each label once "
                                    "(labels are compared ignoring case).")
        out[key] = cats
    if not out:
        raise ImportSourceError(f"--urgency-map is empty; give LABEL=CATEGORY items, e.g. {_URGENCY_EXAMPLE}.")
    return out


# --- reading the file ---------------------------------------------------------------------------

def _read_bytes(source: Path) -> bytes:
    raw = read_source(source, ".csv or .jsonl file")
    if not raw.strip():
        raise ImportSourceError(f"{source}: the file is empty. Give a CSV file with a header row or a JSON Lines "
                                "file with one vignette per line.")
    return raw


def _is_jsonl(source: Path, raw: bytes) -> bool:
    suffix = source.suffix.lower()
    if suffix in _JSONL_SUFFIXES:
        return True
    if suffix in _CSV_SUFFIXES:
        return False
    return raw.lstrip().startswith(b"{")


def _read_csv(source: Path, raw: bytes) -> tuple[list[SourceRow], list[str]]:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ImportSourceError(f"{source}: not UTF-8 text (byte {exc.start}). Save the file as UTF-8 (in a "
                                "spreadsheet: 'CSV UTF-8') and import it again.") from None
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=_CSV_SUFFIXES.get(source.suffix.lower(), ","))
    header: list[str] | None = None
    rows: list[SourceRow] = []
    end = 0
    try:
        for record in reader:
            start, end = end + 1, reader.line_num
            if not any(cell.strip() for cell in record):
                continue
            if header is None:
                header = [" ".join(c.split()) for c in record]
                blank = [str(i) for i, c in enumerate(header, 1) if not c]
                dupes = sorted({c for c in header if c and header.count(c) > 1})
                if blank or dupes:
                    what = (f"column(s) {', '.join(blank)} have no name" if blank else
                            f"the column name(s) {', '.join(map(repr, dupes))} appear more than once")
                    raise ImportSourceError(f"{source}: the header row (line {start}) is not usable: {what}. Give "
                                            "every column a unique name in the first row.")
                continue
            if len(record) > len(header) and any(c.strip() for c in record[len(header):]):
                rows.append((start, RowError(f"has {len(record)} cells but the header has {len(header)} columns "
                                             "(a comma inside an unquoted value?); quote values that contain commas")))
                continue
            rows.append((start, {name: (record[i] if i < len(record) else "") for i, name in enumerate(header)}))
    except csv.Error as exc:
        raise ImportSourceError(f"{source}: not readable as CSV at line {reader.line_num} ({exc}). Check the quoting "
                                "there, or give a JSON Lines file.") from None
    if header is None or not rows:
        raise ImportSourceError(f"{source}: has a header row but no vignette rows. Give one row per vignette under "
                                "the header.")
    return rows, header


def read_vignette_file(source: str | Path) -> tuple[list[SourceRow], list[str]]:
    """The rows of a vignette file (JSON Lines or CSV, see the module docstring) and its columns.

    The columns are the CSV header; for JSON Lines every key any row has, in the order first seen.
    """
    src = Path(source)
    raw = _read_bytes(src)
    if not _is_jsonl(src, raw):
        return _read_csv(src, raw)
    rows = read_jsonl(src)
    columns: dict[str, None] = {}
    for _, row in rows:
        if isinstance(row, dict):
            columns.update(dict.fromkeys(str(k) for k in row))
    return rows, list(columns)


def _resolve_columns(mapping: dict[str, str], columns: list[str], source: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for field, column in mapping.items():
        if column in columns:
            out[field] = column
            continue
        loose = [c for c in columns if " ".join(c.split()).lower() == " ".join(column.split()).lower()]
        if len(loose) == 1:
            out[field] = loose[0]
            continue
        shown = ", ".join(repr(c) for c in columns) or "(none)"
        raise ImportSourceError(f"--map {field}={column}: {source.name} has no column {column!r}; its columns are "
                                f"{shown}. Map {field} to one of them.")
    return out


# --- one row ------------------------------------------------------------------------------------

def _text(value: Any) -> str:
    """A cell as one line of text (a JSON list: its items joined by '; ')."""
    if value is None:
        return ""
    if isinstance(value, list):
        return "; ".join(t for t in (_text(v) for v in value) if t)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bool):
        return "yes" if value else "no"
    return " ".join(str(value).split())


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
        return _end(patient_statement(item, by_parent=voice.parent))
    none = bool(_NONE.match(text))
    if field == "medications":
        if none:
            return f"{cap} {'do' if voice.plural else 'does'}n't take any regular medicines."
        return f"{cap} {voice.verb('take')} {lower_first(text)}." if _is_phrase(text) else \
            _end(patient_statement(item, by_parent=voice.parent))
    if field == "allergies":
        if none or re.match(r"^no\s+(?:known\s+)?(?:drug\s+)?allerg", text, re.I):
            return f"{cap} {'do' if voice.plural else 'does'}n't have any allergies that we know of." \
                if voice.parent else "I don't have any allergies that I know of."
        return f"{cap} {'am' if s == 'I' else 'are' if s == 'they' else 'is'} allergic to {lower_first(text)}." \
            if _is_phrase(text) else _end(patient_statement(item, by_parent=voice.parent))
    if field == "past_history":
        if none:
            return f"Nothing, {s} {'have' if voice.plural else 'has'} always been healthy."
        return f"{voice.have} had {lower_first(text)}." if _is_phrase(text) else \
            _end(patient_statement(item, by_parent=voice.parent))
    if field == "family":
        if none:
            return "Nothing runs in the family that I know of."
        return f"In {voice.poss} family: {lower_first(text)}." if _is_phrase(text) else \
            _end(patient_statement(item, by_parent=voice.parent))
    return _end(patient_statement(item, by_parent=voice.parent))  # pragma: no cover - every field is handled


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

    Examination findings and test results among them are facts of those fields, answered as written.
    """
    out: list[_Fact] = []
    for raw, spoken in pairs:
        if _EXAM_SENTENCE.match(raw):
            out.append(_Fact("exam", raw, _end(raw)))
        elif _TEST_SENTENCE.match(raw):
            out.append(_Fact("tests", raw, _end(raw)))
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


def _diagnosis(name: str) -> dict[str, Any]:
    """A diagnosis entry; a parenthesised part gives synonyms ("Asthma (or acute asthma, status asthmaticus)")."""
    name = " ".join(name.split())
    m = re.match(r"^(?P<base>[^()]*?)\s*\((?P<alt>[^()]*)\)\s*(?P<tail>.*)$", name)
    synonyms: list[str] = []
    if m:
        base = " ".join(f"{m.group('base')} {m.group('tail')}".split())
        synonyms.append(base)
        for part in re.split(r",|;|\bor\b", m.group("alt")):
            part = re.sub(r"^\s*(?:or|e\.g\.?|i\.e\.?|aka|also|diagnosis may include|may include)\s+", "", part.strip(),
                          flags=re.I)
            part = re.sub(r"\s+(?:is\s+)?acceptable$", "", part.strip(), flags=re.I).strip(" .")
            if part and len(words(part)) <= 8:
                synonyms.append(part)
    synonyms = [s for s in dict.fromkeys(synonyms) if s and s != name]
    return {"name": name, "synonyms": synonyms} if synonyms else {"name": name}


def _ranked_diagnoses(primary: str, extra: Any) -> list[dict[str, Any]]:
    names = [primary]
    for item in (extra if isinstance(extra, list) else re.split(r"[;|]", _text(extra))):
        text = _text(item).strip()
        if text and text.lower() not in (n.lower() for n in names):
            names.append(text)
    return [_diagnosis(n) for n in names]


def _demographics(age: str, sex: str, who: str | None, case: str) -> tuple[dict[str, Any], list[str], list[str]]:
    sex_word = {"m": "male", "male": "male", "man": "male", "boy": "male", "f": "female", "female": "female",
                "woman": "female", "girl": "female"}.get(sex.strip().lower(), sex)
    age_text = f"{age}-year-old" if re.fullmatch(r"\d+(?:\.\d+)?", age.strip()) else age
    demo = " ".join(p for p in (age_text, sex_word) if p).strip()
    if age and sex:
        return parse_demographics(demo, case)
    opening = who or (sentences(case)[0] if sentences(case) else case)
    return parse_demographics(" ".join(p for p in (demo, opening) if p), case)


def _opening(complaint: str, voice: _Voice, who: str | None) -> str:
    """The encounter's first line from the chief complaint column."""
    text = " ".join(complaint.split()).rstrip(".")
    intro = case_intro(text)
    if intro is not None:
        return _end(intro[0])
    if re.match(r"^(?:I|I'm|I've|My)\b", text):
        return _end(text)
    phrase = lower_first(text) if re.match(r"^(?:a|an|the|my|some|no|\d)\b", text, re.I) else f"my {lower_first(text)}"
    if voice.parent:
        child = re.split(r"\s+(?:with|in|who)\s+", who)[0] if who else "child"
        return f"I'd like some advice about my {child}: {lower_first(text)}."
    return f"I'd like some advice about {phrase}."


class _Converter:
    """Turns one vignette row into one scenario (bound to the flags and the file's columns)."""

    def __init__(self, *, columns: dict[str, str], urgency: dict[str, list[str]], mode: str, file_name: str,
                 urgency_given: bool) -> None:
        self.columns = columns
        self.urgency = urgency
        self.mode = mode
        self.file_name = file_name
        self.urgency_given = urgency_given

    def _get(self, row: dict[str, Any], field: str) -> Any:
        column = self.columns.get(field)
        return row.get(column) if column is not None else None

    def _required(self, row: dict[str, Any], field: str, what: str) -> str:
        text = _text(self._get(row, field))
        if not text:
            raise RowError(f"the {what} (column {self.columns[field]!r}) is empty; every vignette needs one. Fill it "
                           "in or remove the row")
        return text

    def _escalations(self, label: str) -> list[str]:
        cats = self.urgency.get(" ".join(label.lower().split()))
        if cats is None:
            col = self.columns["urgency"]
            if self.urgency_given:
                mapped = ", ".join(sorted(self.urgency))
                raise RowError(f"the urgency label {label!r} (column {col!r}) is not in --urgency-map, which maps "
                               f"{mapped}; add it, e.g. --urgency-map ...,{label}=routine")
            raise RowError(f"the urgency label {label!r} (column {col!r}) is not an escalation category "
                           f"({', '.join(CATEGORIES)}); map the file's labels with --urgency-map, e.g. "
                           f"{_URGENCY_EXAMPLE}")
        return cats

    def __call__(self, row: dict[str, Any], ctx: RowContext) -> Converted:
        case = self._required(row, "case", "case text")
        diagnosis = self._required(row, "diagnosis", "diagnosis")
        label = self._required(row, "urgency", "urgency label")
        cats = self._escalations(label)
        warnings: list[str] = []

        pairs, who, parent = case_sentences(case)
        message = " ".join(spoken for _, spoken in pairs) or " ".join(case.split())
        if who is None:
            warnings.append("the case's opening sentence is not 'A/An <age>-old <who> presents with ...': the case "
                            "is kept as written (third person)")
        profile, demo_warnings, tags = _demographics(_text(self._get(row, "age")), _text(self._get(row, "sex")),
                                                     who, case)
        warnings.extend(demo_warnings)
        if parent or (who is None and profile["age"] < 13):  # a child's case: a parent asks for advice
            profile["speaker"] = "parent"
        voice = _Voice(parent=profile.get("speaker") == "parent", sex=str(profile.get("sex")))

        own_id = _text(self._get(row, "id"))
        if own_id:
            if not slug(own_id, 50):
                raise RowError(f"the id {own_id!r} (column {self.columns['id']!r}) has no letters or digits")
            scenario_id = f"vig_{slug(own_id, 50)}"
        else:
            canonical = json.dumps(row, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
            named = re.sub(r"\s*\([^()]*\)", " ", diagnosis)  # "Sepsis (urosepsis acceptable)" -> "Sepsis"
            scenario_id = f"vig_{slug(named, 30) or slug(diagnosis, 30) or 'case'}_{sha_hex(canonical)}"
        mode = self.mode.replace("-", "_")
        complaint = _text(self._get(row, "complaint"))
        chief = complaint or (pairs[0][0] if pairs else case)
        expected: dict[str, Any] = {"escalation": cats[0]}
        if len(cats) > 1:
            expected["acceptable_escalations"] = list(cats)
        expected["label_rationale"] = (
            f"The source's own label: {self.file_name} row {ctx.line}, column {self.columns['urgency']!r} = {label!r}, "
            f"mapped to {' + '.join(cats)} by --urgency-map"
            + ("" if self.urgency_given else " (the label is the category's name)")
            + "; not re-derived by encounter-sim.")
        expected["diagnoses"] = _ranked_diagnoses(diagnosis, self._get(row, "diagnoses"))
        data: dict[str, Any] = {
            "id": scenario_id,
            "title": f"Vignette: {snippet(chief, 60)}",
            "suite": "triage",
            "tags": list(dict.fromkeys(["source:vignettes", f"vignette:{mode}",
                                        f"urgency:{slug(label, 20) or 'label'}", *tags])),
            "tier": "A",
            "canary": f"encsim-canary-{sha_hex(scenario_id + mode)}-{scenario_id.replace('_', '-')}-{mode}",
            "patient_profile": profile,
            "chief_complaint": snippet(chief, 80),
        }
        if self.mode == "single-turn":
            data["opening_line"] = message
            data["fallback_lines"] = list(FALLBACK_LINES)
            data["replay"] = [{"role": "patient", "content": message}]
        else:
            data.update(self._encounter(row, pairs, complaint, message, who, voice, expected))
        data["expected"] = expected
        data["source"] = f"vignettes:{self.file_name}#{ctx.line}"
        return Converted(data=data, warnings=warnings)

    def _encounter(self, row: dict[str, Any], pairs: list[tuple[str, str]], complaint: str, message: str,
                   who: str | None, voice: _Voice, expected: dict[str, Any]) -> dict[str, Any]:
        if complaint:
            opening = _opening(complaint, voice, who)
            case_part = pairs
        else:
            opening = _end(pairs[0][1]) if pairs else _end(message)
            case_part = pairs[1:]
        facts: list[_Fact] = []
        history = self._get(row, "history")
        if _text(history):
            facts.extend(_Fact("history", s, "") for s in _items(history))
        else:
            facts.extend(_case_facts(case_part))
        for field in _FACT_FIELDS[1:]:
            facts.extend(_Fact(field, s, "") for s in _items(self._get(row, field)))
        names = [d["name"] for d in expected["diagnoses"]] + [s for d in expected["diagnoses"]
                                                               for s in d.get("synonyms", [])]
        tree = _information_tree(facts, names, voice)
        if not tree:
            raise RowError("nothing for the agent to ask about: the case text is one sentence (the opening line) and "
                           "no history, negatives, exam, tests or other column is mapped with a value; import it "
                           "with --as single-turn, or map more columns")
        return {"opening_line": opening, "fallback_lines": list(FALLBACK_LINES), "information_tree": tree}


def import_vignettes(source: str | Path, out_dir: str | Path, *, mapping: str | Mapping[str, str],
                     urgency_map: str | Mapping[str, str | list[str]] | None = None,
                     mode: str = "single-turn") -> ImportReport:
    """Convert a vignette file (CSV or JSON Lines) into scenarios in ``out_dir``; see the module docstring.

    Args:
        source: the vignette file.
        out_dir: the folder for the ``<id>.yaml`` files (created if missing).
        mapping: ``--map``: the file's column for each field (``case``, ``diagnosis``, ``urgency`` required).
        urgency_map: ``--urgency-map``: the file's labels -> escalation categories; None: the labels are
            the category names.
        mode: ``single-turn`` (replay items) or ``encounter`` (information trees).

    Raises:
        ImportSourceError: a flag is malformed, names an unknown field or category or a column the file
            does not have, or the file cannot be read at all (one paragraph, nothing written).
    """
    if mode not in MODES:
        raise ImportSourceError(f"--as {mode}: choose one of {', '.join(MODES)}.")
    fields = parse_field_map(mapping)
    urgency = parse_urgency_map(urgency_map)
    src, out = Path(source), Path(out_dir)
    rows, columns = read_vignette_file(src)
    convert = _Converter(columns=_resolve_columns(fields, columns, src), urgency=urgency, mode=mode,
                         file_name=src.name, urgency_given=urgency_map is not None)
    return import_rows("vignettes", src, out, rows, convert)
