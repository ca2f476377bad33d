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
- ``patient_profile``: age and sex (``_demographics.parse_demographics``), the pediatric / geriatric context;
  a child's case (under 13, or an infant, baby, toddler, child) is told by a parent (``speaker: parent``). They
  come from the ``age`` / ``sex`` columns, else from the case's opening ("64-year-old", "64 yo", "aged 64",
  "64M", "M 64", "18-month-old", "newborn", "in his sixties", "teenage"; "man", "she", "Mr"), else from the
  first age the case states anywhere. An age under two years, or given in months, weeks or days, keeps its
  precision (18 months -> ``age: 1.5``, ``age_detail: 18 months``). An age read from words alone ("in her
  forties") is an estimate: tag ``profile:age_approximate`` and a warning. An age the row does not state is
  not guessed: ``age: 40`` is a placeholder, with ``age_detail: not stated``, the tag ``profile:age_unknown``
  and a warning in the import report.
- The case text is read without what is not the case as a patient would tell it (``_case_notes``): study
  notes ("(in the study 64% of clinicians advised ...)"), answers and labels ("Answer: ..."), questions to
  the reader, bracketed decision notes and citations, and footnote markers ("Mrs. D. 4is a ...") are left out
  of every message and answer; the notes are kept in ``expected.label_rationale``, with the tag
  ``vignette:source_notes`` and a warning. Footnote markers are left out of the diagnosis names too
  ("syndrome1" -> "syndrome"; "type 1 diabetes", "COVID-19", "H1N1", "B12" are names, kept).

``--as single-turn`` (default): a **replay** item with one patient message, the whole case in the
words of the person asking (``_case_text.case_in_first_person``: "A 45-year-old man presents to the emergency
department with chest pain. He ..." -> "I'm a 45-year-old man and I have chest pain. I ..."; a child's
case in a parent's words, "My 4-year-old boy has ..."; the rules, for every sentence and both importers, are in
``_person.py`` and ``_voice.py``: verbs agree with ``I``, "his" / "her" / "him" are the speaker's, "reports X" is
"I've had X", "denies X" is "I haven't had any X"). Only the grammatical person and the place of
presentation change; every clinical word is kept in order, and an opening sentence that is not recognised
is kept as written (with a warning; the other sentences are still rewritten). The agent replies once (the
harness tells it the item is single-turn) and that reply is read as its assessment: escalation and
differential, scored by the deterministic path; information and efficiency are not applicable.

``--as encounter``: an **information tree** the agent must ask for. The opening line is the chief
complaint, saying who asks ("I'm a 58-year-old man. I'd like some advice about my chest pain."; a parent: "I'd
like some advice about my 18-month-old son: ..."), else the case's first sentence in the first person. Each
mapped column is split into statements (sentences; ``;``, ``|`` and line breaks too) and each statement is one
fact:

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
become ``exam`` / ``test`` facts answered as the sentence says them, in the teller's words). ``intents``: the
lexicon intents whose cues occur in the statement (``intents_in``; an examination finding keeps only examination
intents, a test result only test intents, a history statement none of those) plus the column's own intent.
``triggers``: the column's clinical meaning ("medications", "allergies", "family history", "what
happened", ...), never words of the answer. The history is told as a patient tells it: the open
question ("What happened?", "What brings you in?": the first history fact's triggers and
``presenting_complaint``) gets its first statement, "tell me more" the rest (the other history facts'
triggers), and a question about one detail (its intents: onset, radiation, fever ...) that detail.
``critical``: every fact of the history of the presenting complaint and every fact whose text names a
content word of the diagnosis. ``turn_limit``: the adaptive default.

Where the code lives: this module converts one row (``_Converter``: id, expected, profile, the single-turn
message or the encounter's opening line) and runs the import; ``_vignette_flags.py`` parses ``--map`` and
``--urgency-map``; ``_vignette_file.py`` reads the CSV or JSON Lines file and its cells;
``_vignette_tree.py`` turns a column's statements into the encounter's facts and answers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scenarios.importers._case_notes import clean_diagnosis, split_notes, strip_footnotes
from scenarios.importers._case_text import case_intro, case_sentences, child_word, read_intro
from scenarios.importers._common import (
    FALLBACK_LINES,
    Converted,
    ImportReport,
    ImportSourceError,
    RowContext,
    RowError,
    import_rows,
    sha_hex,
    slug,
)
from scenarios.importers._demographics import AGE_NOT_STATED, find_age, parse_demographics
from scenarios.importers._text import lower_first, sentences, snippet, words
from scenarios.importers._vignette_file import _resolve_columns, _text, read_vignette_file
from scenarios.importers._vignette_flags import _URGENCY_EXAMPLE, CATEGORIES, MODES, parse_field_map, parse_urgency_map
from scenarios.importers._vignette_tree import _FACT_FIELDS, _case_facts, _end, _Fact, _information_tree, _items, _Voice

# --- one row ------------------------------------------------------------------------------------

def _diagnosis(name: str) -> dict[str, Any]:
    """A diagnosis entry; a parenthesised part gives synonyms ("Asthma (or acute asthma, status asthmaticus)").

    Footnote markers are left out ("syndrome1" -> "syndrome": ``_case_notes.clean_diagnosis``).
    """
    name = clean_diagnosis(name)
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


def _age_field(age: str) -> str:
    """The age column as an age phrase: "45" -> "45-year-old", "18 months" -> "18 months old"."""
    age = age.strip()
    if re.fullmatch(r"\d+(?:\.\d+)?", age):
        return f"{age}-year-old"
    if re.fullmatch(r"\d+(?:\.\d+)?\s*(?:years?|yrs?|months?|mos?|weeks?|wks?|days?)", age, re.I):
        return f"{age} old"
    return age


def _demographics(age: str, sex: str, who: str | None, case: str) -> tuple[dict[str, Any], list[str], list[str]]:
    """The profile from the age and sex columns, else the case's opening, else the first age the case states.

    The opening: its ``who``, else its first sentence; an age stated anywhere: "... Mr. Y, 64 yo, ...".
    """
    sex_word = {"m": "male", "male": "male", "man": "male", "boy": "male", "f": "female", "female": "female",
                "woman": "female", "girl": "female"}.get(sex.strip().lower(), sex)
    demo = " ".join(p for p in (_age_field(age), sex_word) if p).strip()
    if age and sex:
        return parse_demographics(demo, case)
    opening = who or (sentences(case)[0] if sentences(case) else case)
    text = " ".join(p for p in (demo, opening) if p)
    if not age and (stated := find_age(text)) is None and (stated := find_age(case)) is not None:
        text = f"{stated} {text}"
    return parse_demographics(text, case)


def _age_words(profile: dict[str, Any]) -> str | None:
    """The profile's age as a phrase ("58-year-old", "18-month-old", "newborn"); None when not stated or estimated."""
    detail = profile.get("age_detail")
    if detail == AGE_NOT_STATED:
        return None
    if detail is None:
        return f"{profile['age']:g}-year-old"
    m = re.fullmatch(r"(\S+) (month|week|day|hour)s?", detail)
    return f"{m.group(1)}-{m.group(2)}-old" if m else (detail if detail == "newborn" else None)


def _article(phrase: str) -> str:
    return "an" if re.match(r"8|1[18](?!\d)|eight|eleven|eighteen|[aeio]", phrase, re.I) else "a"


def _who_line(profile: dict[str, Any], who: str | None) -> str:
    """"I'm a 58-year-old man. " before an adult's opening built from the complaint column ("" if unknown)."""
    if who:
        return f"I'm {_article(who)} {who}. "
    age = _age_words(profile)
    noun = {"male": "man", "female": "woman"}.get(profile["sex"])
    if age is None:
        return f"I'm a {noun}. " if noun else ""
    return f"I'm {_article(age)} {age} {noun}. " if noun else f"I'm {age}. "


def _opening(complaint: str, voice: _Voice, who: str | None, profile: dict[str, Any]) -> str:
    """The encounter's first line from the chief complaint column, saying who the patient is (age, sex)."""
    text = " ".join(complaint.split()).rstrip(".")
    intro = case_intro(text)
    if intro is not None:
        return _end(intro[0])
    if re.match(r"^(?:I|I'm|I've|My)\b", text):
        return _end(text)
    phrase = lower_first(text) if re.match(r"^(?:a|an|the|my|some|no|\d)\b", text, re.I) else f"my {lower_first(text)}"
    if voice.parent:
        age = _age_words(profile)
        child = re.split(r"\s+(?:with|in|who)\s+", who)[0] if who else \
            " ".join(p for p in (age, child_word(profile["sex"], None)) if p)
        return f"I'd like some advice about my {child}: {lower_first(text)}."
    return f"{_who_line(profile, who)}I'd like some advice about {phrase}."


@dataclass(frozen=True)
class _Told:
    """A row's case text as imported: without notes, sentence by sentence in the teller's words, and who tells it."""

    case: str
    pairs: list[tuple[str, str]]
    who: str | None
    profile: dict[str, Any]
    tags: list[str]
    notes: list[str]
    voice: _Voice


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

    def _told(self, row: dict[str, Any], warnings: list[str]) -> _Told:
        """The case text without notes and footnote markers, in the teller's words, and who tells it."""
        case, notes = split_notes(strip_footnotes(self._required(row, "case", "case text")))
        if not words(case):
            raise RowError(f"the case text (column {self.columns['case']!r}) has only notes, no case: "
                           f"{snippet('; '.join(notes), 80)!r}")
        parts = sentences(case)
        intro = read_intro(parts[0]) if parts else None
        who = intro.who if intro else None
        profile, demo_warnings, tags = _demographics(_text(self._get(row, "age")), _text(self._get(row, "sex")),
                                                     who, case)
        warnings.extend(demo_warnings)
        parent = intro.parent if intro else profile["age"] < 13  # a child's case: a parent asks for advice
        if parent:
            profile["speaker"] = "parent"
        pairs, who, parent = case_sentences(case, sex=profile["sex"], parent=parent)
        if who is None:
            warnings.append("the case's opening sentence is not 'A/An <age>-old <who> presents with ...': it is kept "
                            "as written; the other sentences are in the teller's words")
        if notes:
            warnings.append(f"left out of the case text as not the patient's words: {snippet('; '.join(notes), 120)!r}")
            tags.append("vignette:source_notes")
        return _Told(case, pairs, who, profile, tags, notes, _Voice(parent=parent, sex=str(profile["sex"])))

    def __call__(self, row: dict[str, Any], ctx: RowContext) -> Converted:
        warnings: list[str] = []
        told = self._told(row, warnings)
        diagnosis = clean_diagnosis(self._required(row, "diagnosis", "diagnosis"))
        label = self._required(row, "urgency", "urgency label")
        cats = self._escalations(label)
        case, pairs, profile, tags = told.case, told.pairs, told.profile, told.tags
        message = " ".join(spoken for _, spoken in pairs) or " ".join(case.split())

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
            + "; not re-derived by encounter-sim."
            + (f" Left out of the case text, as not the patient's words: {'; '.join(repr(n) for n in told.notes)}."
               if told.notes else ""))
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
            data.update(self._encounter(row, pairs, complaint, message, told, expected))
        data["expected"] = expected
        data["source"] = f"vignettes:{self.file_name}#{ctx.line}"
        return Converted(data=data, warnings=warnings)

    def _encounter(self, row: dict[str, Any], pairs: list[tuple[str, str]], complaint: str, message: str,
                   told: _Told, expected: dict[str, Any]) -> dict[str, Any]:
        voice = told.voice
        if complaint:
            opening = _opening(complaint, voice, told.who, told.profile)
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
