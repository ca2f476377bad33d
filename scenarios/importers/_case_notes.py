"""What a vignette file carries besides the case as a patient would tell it: study notes and footnote markers.

Published vignette sets are compiled from papers and teaching material, and their case texts and diagnosis
names keep traces of it: a study's result ("(in study 62% of physicians advised a visit)"), an author's or
reader's note ("Answer: ...", "Teaching point: ...", "What is the most likely diagnosis?"), a clinical decision
note in brackets ("(Wells score = 7 - admit)"), a citation ("[3]"), a footnote marker glued to a word
("Kawasaki disease2", "Mrs. T. 3is a ..."). None of it is the patient's words, and a study's result tells the tool
under test what the answer was.

``split_notes`` takes such notes out of a case text: a bracketed part that is one, or a whole sentence that is
one (a study or survey, a share of physicians or respondents, a label such as "Diagnosis:", a question put to the
reader), and returns them apart so that the importer can keep them in the scenario's metadata
(``expected.label_rationale``), never in what the agent or the simulated patient sees. Clinical numbers stay
("oxygen saturation of 91%", "(38.5°C)", "her Wells score is 6").

``strip_footnotes`` removes footnote markers: superscript digits and reference symbols (¹ ² * † ‡ §), bracketed
reference numbers ("[3]", "[2, 4]"), one or two digits glued to the end of a word of four or more lower-case
letters ("syndrome1", "Malaria2"), and a digit glued before a short function word ("5is", "3who"). Names whose
digits are part of them are kept: "type 1 diabetes", "COVID-19", "H1N1", "B12 deficiency", "HbA1c", "IgG4",
"Trisomy 21", "type2" and the like. ``clean_diagnosis`` is the same for a diagnosis name, and drops a lone
"(1)" at its end.
"""

from __future__ import annotations

import re

from scenarios.importers._text import sentences

_STUDY = re.compile(r"\b(?:in\s+(?:the\s+|this\s+|our\s+|a\s+)?(?:study|survey|trial|audit)|(?:the|this|our)\s+"
                    r"(?:study|survey|trial|audit)|stud(?:y|ies)\s+(?:found|showed|shows|show|suggests?|reported|"
                    r"participants?|results?|data)|survey(?:ed)?|respondents?|panel(?:ists)?|author'?s?'?\s+note|"
                    r"editor'?s?'?\s+note|note\s+to\s+(?:the\s+)?(?:reader|examiner|user|rater)|adapted\s+from|"
                    r"reprinted|et\s+al\b|doi\s*:|https?://|www\.)", re.I)
_SHARE = re.compile(r"\d+(?:\.\d+)?\s*(?:%|percent\b|per\s+cent\b)", re.I)
# Who answered, and how: "62% of GPs chose ...", "50% recommended a visit" (a share alone is clinical: "91% O2").
_WHO_ANSWERED = re.compile(r"\b(?:physicians|doctors|clinicians|GPs|experts|raters|respondents|participants|nurses|"
                           r"apps|checkers|recommend(?:ed|s|ation)?|advised|chose|selected|triaged|answered|rated|"
                           r"correct(?:ly)?|accuracy)\b", re.I)
_DECISION = re.compile(r"\bscore\s*(?:=|:|of)\s*\d.*\b(?:treat|test|refer|admit|antibiotics?|imaging|discharge)\b",
                       re.I)
_LABEL = re.compile(r"^\W*(?:answer|correct\s+(?:answer|diagnosis)|final\s+diagnosis|(?:differential\s+)?"
                    r"diagnos[ie]s|dx|ddx|triage(?:\s+level)?|urgency|disposition|recommendation|teaching\s+point|"
                    r"learning\s+point|key\s+point|n\.?\s?b|note|source|references?|citation)s?\s*[:=]", re.I)
_QUESTION = re.compile(r"\b(?:most\s+likely\s+diagnosis|which\s+of\s+the\s+following|what\s+(?:is|would\s+be)\s+the\s+"
                       r"(?:next|best|most\s+(?:likely|appropriate))|how\s+would\s+you\s+(?:manage|treat|triage))\b",
                       re.I)
_CITATION = re.compile(r"^\s*(?:\d{1,3}(?:\s*[,–-]\s*\d{1,3})*|ref\.?\s*\d+|[a-z])\s*$", re.I)
_BRACKETED = re.compile(r"\s*(?:\((?P<p>[^()]*)\)|\[(?P<b>[^\[\]]*)\])")
_MARKERS = re.compile(r"(?<=[A-Za-z)\].,])[\u00b9\u00b2\u00b3\u2070\u2074-\u2079\u2020\u2021\u00a7*]+")
_GLUED_AFTER = re.compile(r"\b(?P<w>[A-Za-z][a-z]{3,})\d{1,2}\b")
_GLUED_BEFORE = re.compile(r"(?<![\w.])\d{1,2}(?=(?:is|was|has|had|who|and|the|presents|presented|with)\b)")
_DIGIT_WORDS = frozenset("""type stage grade class trisomy covid sars chromosome factor phase level tier gen
group""".split())


def _is_note(text: str, *, bracketed: bool) -> bool:
    if _STUDY.search(text) or _LABEL.search(text) or _QUESTION.search(text):
        return True
    if _SHARE.search(text) and _WHO_ANSWERED.search(text):
        return True
    return bracketed and (bool(_DECISION.search(text)) or bool(_CITATION.match(text)))


def strip_footnotes(text: str) -> str:
    """``text`` without footnote markers (see the module docstring); everything else as it was."""
    text = _MARKERS.sub("", text)
    text = re.sub(r"\s*\[\d{1,3}(?:\s*[,–-]\s*\d{1,3})*\]", "", text)
    text = _GLUED_AFTER.sub(lambda m: m.group(0) if m.group("w").lower() in _DIGIT_WORDS else m.group("w"), text)
    return _GLUED_BEFORE.sub("", text)


def clean_diagnosis(name: str) -> str:
    """A diagnosis name without footnote markers.

    "Kawasaki disease2" -> "Kawasaki disease"; "type 1 diabetes" and "COVID-19" are unchanged.
    """
    return " ".join(re.sub(r"\s*\(\d{1,2}\)\s*$", "", strip_footnotes(name)).split())


def split_notes(text: str) -> tuple[str, list[str]]:
    """(the case text without the notes that are not the patient's words, the notes as written).

    See the module docstring. Line breaks inside the text are kept where no note was taken out.
    """
    notes: list[str] = []

    def bracket(m: re.Match[str]) -> str:
        inner = m.group("p") if m.group("p") is not None else m.group("b")
        if _is_note(inner, bracketed=True):
            notes.append(inner.strip(" ,;"))
            return ""
        return m.group(0)

    text = _BRACKETED.sub(bracket, text)
    kept = []
    for sentence in sentences(text):
        if _is_note(sentence, bracketed=False):
            notes.append(sentence)
        else:
            kept.append(sentence)
    if not notes:
        return text, []
    return " ".join(kept), [n for n in notes if n]
